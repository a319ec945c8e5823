import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { DomainEvent } from '../../src/infra/bus.js';
import { alertmanagerPayload, createIntegration, notify, prometheusItem, settle, type CreatedIntegration } from '../helpers/alerts.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { testDialect } from '../helpers/database.js';
import { QUEUE_ONLY_MAIL_ENV, queuedMails } from '../helpers/mail.js';
import { createProject, createUser, type TestUser } from '../helpers/factories.js';

// Each suite posts dozens of alerts from one address to one integration within a minute: the
// default ingestion limits (issue 18) would refuse them, so the suites name only the other limits.
const env = { RATE_LIMITS: 'sign_in=10/m,user_code=10/m', ...QUEUE_ONLY_MAIL_ENV };

describe('alert processing: grouping, resolution, concurrency', () => {
  let t: TestApp;
  let owner: TestUser;
  let projectId: number;
  let http: CreatedIntegration;
  let prom: CreatedIntegration;
  before(async () => {
    t = await createTestApp({ env });
    await settle(t);
    owner = await createUser(t.app);
    projectId = (await createProject(t.app, owner)).id;
    http = await createIntegration(t, projectId, { name: 'generic' });
    prom = await createIntegration(t, projectId, { name: 'prom', type: 'prometheus' });
  });
  after(() => t.close());

  const getAlert = async (iid: number, pid = projectId) => (await t.api('GET', `/projects/${pid}/alert_management/alerts/${iid}`)).json();
  const send = async (payload: unknown, integration = http) => {
    const res = await notify(t, integration.url, payload, { key: integration.token });
    assert.equal(res.statusCode, 200, res.body);
    return res.json<{ iid: number; title: string }[]>();
  };

  it('identical payloads group into one open alert; start_time, end_time and hosts do not count', async () => {
    const [a] = await send({ title: 'Disk full', service: 'db', start_time: '2026-01-01T00:00:00Z', hosts: 'a' });
    const [b] = await send({ title: 'Disk full', service: 'db', start_time: '2026-01-01T00:05:00Z', hosts: ['b'] });
    assert.equal(a?.iid, b?.iid);
    const alert = await getAlert(a!.iid);
    assert.equal(alert.event_count, 2);
    assert.deepEqual(alert.hosts, ['a'], 'a repeat changes nothing but the count');
    const [other] = await send({ title: 'Disk full', service: 'web' });
    assert.notEqual(other?.iid, a?.iid);
  });

  it('an explicit fingerprint (string or array) is SHA-1 hashed and groups regardless of other fields', async () => {
    const [a] = await send({ title: 'first', fingerprint: 'fp-1' });
    const [b] = await send({ title: 'second', fingerprint: 'fp-1' });
    assert.equal(a?.iid, b?.iid);
    const alert = await getAlert(a!.iid);
    assert.match(alert.fingerprint, /^[0-9a-f]{40}$/);
    const [c] = await send({ title: 'array', fingerprint: ['fp', ['-', 1]] });
    // The array flattens to "fp-1": the same fingerprint as the string, so it joins that alert.
    assert.equal(c?.iid, a?.iid);
    assert.equal(alert.fingerprint, createHash('sha1').update('fp-1').digest('hex'));
    assert.equal((await getAlert(a!.iid)).event_count, 3);
  });

  it('end_time resolves the open alert; the same payload afterwards opens a new alert', async () => {
    const payload = { title: 'Queue stuck', service: 'jobs' };
    const [opened] = await send(payload);
    const [resolved] = await send({ ...payload, end_time: '2026-01-01T01:00:00Z' });
    assert.equal(resolved?.iid, opened?.iid);
    const alert = await getAlert(opened!.iid);
    assert.equal(alert.status, 'resolved');
    assert.equal(alert.ended_at, '2026-01-01T01:00:00.000Z');
    const [again] = await send(payload);
    assert.notEqual(again?.iid, opened?.iid);
    assert.equal((await getAlert(again!.iid)).status, 'triggered');
  });

  it('a generic recovery alert with nothing open to resolve is a 400', async () => {
    const res = await notify(t, http.url, { title: 'Never opened', end_time: '2026-01-01T00:00:00Z' }, { key: http.token });
    assert.equal(res.statusCode, 400);
    assert.match(res.json().message, /no open alert/);
  });

  it('Prometheus: repeats group; status resolved or a past endsAt resolves', async () => {
    const item = prometheusItem({ startsAt: '2026-02-01T00:00:00Z', annotations: { title: 'CPU' } });
    const [a] = await send(alertmanagerPayload([item]), prom);
    const [b] = await send(alertmanagerPayload([item]), prom);
    assert.equal(a?.iid, b?.iid);
    assert.equal((await getAlert(a!.iid)).event_count, 2);
    const [r] = await send(alertmanagerPayload([{ ...item, status: 'resolved', endsAt: '2026-02-01T00:10:00Z' }], 'resolved'), prom);
    assert.equal(r?.iid, a?.iid);
    assert.equal((await getAlert(a!.iid)).status, 'resolved');
    assert.equal((await getAlert(a!.iid)).ended_at, '2026-02-01T00:10:00.000Z');

    const other = prometheusItem({ startsAt: '2026-02-02T00:00:00Z', annotations: { title: 'Memory' } });
    const [m] = await send(alertmanagerPayload([other]), prom);
    await send(alertmanagerPayload([{ ...other, endsAt: '2026-02-02T00:05:00Z' }]), prom);
    assert.equal((await getAlert(m!.iid)).status, 'resolved');
    // A resolved item with nothing open is skipped; the request still succeeds.
    assert.deepEqual(await send(alertmanagerPayload([{ ...other, status: 'resolved' }], 'resolved'), prom), []);
  });

  it('identical alerts posted at the same moment give one alert with the right count', async () => {
    const payload = { title: 'Burst', service: 'api', severity: 'high' };
    const results = await Promise.all(Array.from({ length: 10 }, () => notify(t, http.url, payload, { key: http.token })));
    assert.deepEqual(
      results.map((r) => r.statusCode),
      Array(10).fill(200),
    );
    const iids = new Set(results.map((r) => r.json()[0].iid));
    assert.equal(iids.size, 1);
    assert.equal((await getAlert([...iids][0] as number)).event_count, 10);
  });

  it(
    'two app processes sharing one PostgreSQL schema still group concurrent alerts',
    { skip: testDialect() !== 'postgres' ? 'needs BASALT_TEST_DB=postgres' : false },
    async () => {
      const second = await createTestApp({ sameDatabaseAs: t, env });
      await settle(second);
      try {
        const payload = { title: 'Two processes', service: 'shared' };
        const results = await Promise.all(
          Array.from({ length: 12 }, (_, i) => notify(i % 2 === 0 ? t : second, http.url, payload, { key: http.token })),
        );
        assert.ok(
          results.every((r) => r.statusCode === 200),
          results.map((r) => r.body).join(),
        );
        const iids = new Set(results.map((r) => r.json()[0].iid));
        assert.equal(iids.size, 1);
        assert.equal((await getAlert([...iids][0] as number)).event_count, 12);
      } finally {
        await second.close();
      }
    },
  );

  it('free tier: identical payloads without a fingerprint are separate alerts; an explicit fingerprint still groups', async () => {
    const free = await createTestApp({ sameDatabaseAs: t, config: { tier: 'free' } });
    await settle(free);
    try {
      const user = await createUser(free.app);
      const project = await createProject(free.app, user);
      const integration = await createIntegration(free, project.id, { name: 'free' });
      const post = async (payload: unknown) => (await notify(free, integration.url, payload, { key: integration.token })).json()[0].iid;
      assert.notEqual(await post({ title: 'same' }), await post({ title: 'same' }));
      assert.equal(await post({ title: 'fp', fingerprint: 'x' }), await post({ title: 'fp', fingerprint: 'x' }));
    } finally {
      await free.close();
    }
  });
});

describe('alert incidents, emails and views', () => {
  let t: TestApp;
  let owner: TestUser;
  let projectId: number;
  let http: CreatedIntegration;
  const events: DomainEvent[] = [];
  before(async () => {
    t = await createTestApp({ env });
    await settle(t);
    t.app.platform.bus.subscribeToChanges(async (event) => {
      events.push(event);
    });
    owner = await createUser(t.app);
    projectId = (await createProject(t.app, owner)).id;
    http = await createIntegration(t, projectId, { name: 'generic' });
  });
  after(() => t.close());

  const settings = `/projects/${0}/alert_management/settings`;
  const send = async (payload: unknown) =>
    (await notify(t, http.url, payload, { key: http.token })).json()[0] as { iid: number; title: string };

  it('settings default to create_issue false, auto_close_incident true, send_email false; PUT changes them (Maintainer)', async () => {
    const url = settings.replace('/0/', `/${projectId}/`);
    assert.deepEqual((await t.api('GET', url)).json(), { create_issue: false, auto_close_incident: true, send_email: false });
    const put = await t.api('PUT', url, { body: { create_issue: true, send_email: true } });
    assert.deepEqual(put.json(), { create_issue: true, auto_close_incident: true, send_email: true });
    const dev = await createUser(t.app);
    assert.equal((await t.api('PUT', url, { token: dev.token, body: { create_issue: false } })).statusCode, 404);
  });

  it('create_issue opens an incident with the alert metadata and markdown; auto_close closes it on resolution', async () => {
    events.length = 0;
    const alert = await send({
      title: 'Checkout failing',
      description: 'errors',
      service: 'shop',
      hosts: ['w1', 'w2'],
      start_time: '2019-09-12T06:00:00Z',
    });
    const shown = (await t.api('GET', `/projects/${projectId}/alert_management/alerts/${alert.iid}`)).json();
    assert.equal(typeof shown.issue_iid, 'number');
    const issue = (await t.api('GET', `/projects/${projectId}/issues/${shown.issue_iid}`)).json();
    assert.equal(issue.title, 'Checkout failing');
    assert.equal(issue.issue_type, 'incident');
    assert.match(issue.description, /\*\*Start time:\*\* 12 September 2019, 6:00AM \(UTC\)/);
    assert.match(issue.description, /\*\*Hosts:\*\* w1 w2/);
    const fullPath = (await t.api('GET', `/projects/${projectId}`)).json().path_with_namespace;
    assert.ok(issue.description.includes(`**Alert:** http://basalt.test/${fullPath}/-/alert_management/${alert.iid}/details`));
    assert.ok(events.some((e) => e.type === 'issue_opened'));
    await send({ title: 'Checkout failing', description: 'errors', service: 'shop', end_time: '2019-09-12T07:00:00Z' });
    assert.equal((await t.api('GET', `/projects/${projectId}/issues/${shown.issue_iid}`)).json().state, 'closed');
    assert.ok(events.some((e) => e.type === 'issue_closed'));
  });

  it('an alert titled New: Alert gets an incident named New: Incident <iid>', async () => {
    const alert = await send({ custom: 'only' });
    const shown = (await t.api('GET', `/projects/${projectId}/alert_management/alerts/${alert.iid}`)).json();
    const issue = (await t.api('GET', `/projects/${projectId}/issues/${shown.issue_iid}`)).json();
    assert.equal(issue.title, `New: Incident ${issue.iid}`);
  });

  it('send_email queues one item per alert; the outbox job turns it into one email per maintainer', async () => {
    const alert = await send({ title: 'Mail me' });
    const items = await t.app.platform.db.selectFrom('outbox').select(['kind', 'payload']).where('kind', '=', 'alert_email').execute();
    assert.equal(items.filter((i) => i.payload.includes('Mail me')).length, 1, 'one small item in the ingest transaction');
    assert.equal((await queuedMails(t.app)).filter((r) => r.subject.includes('Mail me')).length, 0, 'no e-mail on the request path');
    // The job finds the recipients (sending to the closed port then fails and is retried later).
    await t.app.platform.outbox.drain();
    const mine = (await queuedMails(t.app)).filter((r) => r.subject.includes('Mail me'));
    assert.equal(mine.length, 1);
    assert.equal(mine[0]?.to, owner.user.email);
    assert.match(mine[0]?.text ?? '', new RegExp(`/-/alert_management/${alert.iid}/details\\n`));
    assert.equal(mine[0]?.headers?.['X-GitLab-NotificationReason'], 'participating');
  });

  it('alerts sharing a commit make one item of several parts; each part becomes its own e-mail, once', async () => {
    const before = await t.app.platform.db.selectFrom('outbox').select('id').where('kind', '=', 'alert_email').execute();
    const seen = new Set(before.map((r) => r.id));
    // Three alerts posted together: on SQLite they share one commit, on PostgreSQL each has its own.
    const fired = await Promise.all(['Shared A', 'Shared B', 'Shared C'].map((title) => send({ title })));
    const items = (await t.app.platform.db.selectFrom('outbox').select(['id', 'payload']).where('kind', '=', 'alert_email').execute())
      .filter((r) => !seen.has(r.id))
      .map((r) => JSON.parse(r.payload) as { parts: { title: string; iid: number }[] });
    const parts = items.flatMap((i) => i.parts);
    assert.deepEqual(parts.map((p) => p.title).sort(), ['Shared A', 'Shared B', 'Shared C']);
    if (t.app.platform.database.dialect === 'sqlite') assert.equal(items.length, 1, 'one row for the shared commit');
    // A part queued by itself in a shared transaction is gathered the same way.
    await t.app.platform.database.transact(async (trx) => {
      for (const title of ['Direct 1', 'Direct 2']) {
        await t.app.platform.outbox.enqueuePart(trx, 'alert_email', {
          projectId,
          projectPath: 'x/y',
          what: 'resolved',
          iid: fired[0]?.iid ?? 1,
          title,
          severity: 'low',
          startedAt: 0,
          description: null,
        });
      }
    });
    await t.app.platform.outbox.drain();
    await t.app.platform.outbox.drain();
    const mails = await queuedMails(t.app);
    for (const title of ['Shared A', 'Shared B', 'Shared C', 'Direct 1', 'Direct 2']) {
      const mine = mails.filter((m) => m.subject.endsWith(`: ${title}`));
      assert.equal(mine.length, 1, `one e-mail for ${title}`);
      assert.equal(mine[0]?.to, owner.user.email);
    }
    assert.match(mails.find((m) => m.subject.endsWith(': Direct 2'))?.subject ?? '', /^x\/y \| Resolved alert: /);
    assert.equal(new Set(mails.map((m) => m.messageId)).size, mails.length, 'every e-mail has its own Message-ID');
  });

  it('an alert-mail item of the single-alert shape (queued before parts) is still mailed', async () => {
    await t.app.platform.outbox.enqueue(t.app.platform.db, 'alert_email', {
      projectId,
      projectPath: 'old/shape',
      what: 'triggered',
      iid: 1,
      title: 'Old shape',
      severity: 'high',
      startedAt: 0,
      description: 'queued by an earlier release',
    });
    await t.app.platform.outbox.drain();
    const mine = (await queuedMails(t.app)).filter((m) => m.subject === 'old/shape | Alert: Old shape');
    assert.equal(mine.length, 1);
    assert.match(mine[0]?.text ?? '', /Description: queued by an earlier release/);
  });

  it('lists alerts with status, severity and search filters, sort and pagination headers', async () => {
    const project = await createProject(t.app, owner);
    const integration = await createIntegration(t, project.id, { name: 'list' });
    for (const [title, severity] of [
      ['alpha db', 'low'],
      ['beta web', 'critical'],
      ['gamma db', 'medium'],
    ]) {
      await notify(t, integration.url, { title, severity }, { key: integration.token });
    }
    const url = `/projects/${project.id}/alert_management/alerts`;
    await t.api('PUT', `${url}/1`, { body: { status: 'acknowledged' } });
    const all = await t.api('GET', url, { query: { per_page: '2' } });
    assert.equal(all.headers['x-total'], '3');
    assert.equal(all.json().length, 2);
    assert.equal(all.json()[0].title, 'gamma db', 'newest first by default');
    const db = await t.api('GET', url, { query: { search: 'DB' } });
    assert.deepEqual(
      db
        .json()
        .map((a: { title: string }) => a.title)
        .sort(),
      ['alpha db', 'gamma db'],
    );
    const acked = await t.api('GET', url, { query: { status: 'acknowledged' } });
    assert.deepEqual(
      acked.json().map((a: { iid: number }) => a.iid),
      [1],
    );
    const severe = await t.api('GET', url, { query: { sort: 'severity_desc' } });
    assert.deepEqual(
      severe.json().map((a: { severity: string }) => a.severity),
      ['critical', 'medium', 'low'],
    );
    const bySeverity = await t.api('GET', `${url}?severity[]=low&severity[]=medium`);
    assert.equal(bySeverity.json().length, 2);
    assert.equal((await t.api('GET', url, { query: { sort: 'nope' } })).statusCode, 400);
  });

  it('PUT status: resolved sets ended_at; reopening while another alert with that fingerprint is open is 409', async () => {
    const project = await createProject(t.app, owner);
    const integration = await createIntegration(t, project.id, { name: 'status' });
    const post = async () => (await notify(t, integration.url, { title: 'flappy' }, { key: integration.token })).json()[0].iid as number;
    const first = await post();
    const url = `/projects/${project.id}/alert_management/alerts`;
    const resolved = await t.api('PUT', `${url}/${first}`, { body: { status: 'resolved' } });
    assert.equal(resolved.json().status, 'resolved');
    assert.ok(resolved.json().ended_at);
    const second = await post();
    assert.notEqual(second, first);
    const reopen = await t.api('PUT', `${url}/${first}`, { body: { status: 'triggered' } });
    assert.equal(reopen.statusCode, 409);
    const ignored = await t.api('PUT', `${url}/${second}`, { body: { status: 'ignored' } });
    assert.equal(ignored.json().status, 'ignored');
    assert.equal(ignored.json().ended_at, null);
    assert.equal((await t.api('PUT', `${url}/${second}`, { body: { status: 'bogus' } })).statusCode, 400);
    assert.equal((await t.api('GET', `${url}/999`)).statusCode, 404);
  });
});
