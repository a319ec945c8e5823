// Not in the PostgreSQL tier: HTML pages; the queries behind them are those of the API suites that run there.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { alertmanagerPayload, createIntegration, notify, prometheusItem, settle } from '../helpers/alerts.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { TestBrowser } from '../helpers/auth-browser.js';
import { addMember, createProject, createUser, type TestUser } from '../helpers/factories.js';

const unescape = (html: string) =>
  html
    .replace(/&quot;/g, '"')
    .replace(/&amp;/g, '&')
    .replace(/&lt;/g, '<');

describe('alert pages: tabs, filters, assignee, incident, integrations and mapping', () => {
  let t: TestApp;
  let owner: TestUser;
  let developer: TestUser;
  let projectId: number;
  let fullPath: string;
  let browser: TestBrowser;
  let settings: string;
  before(async () => {
    t = await createTestApp();
    await settle(t);
    owner = await createUser(t.app);
    developer = await createUser(t.app);
    const project = await createProject(t.app, owner);
    projectId = project.id;
    fullPath = project.full_path;
    settings = `/${fullPath}/-/settings/operations`;
    await addMember(t.app, 'project', projectId, developer, 30);
    browser = new TestBrowser(t.app);
    await browser.signIn(owner.user.username, 'password-123');
  });
  after(() => t.close());

  it('lists alerts in status tabs with counts, filters by severity and search, sorts by column', async () => {
    const integration = await createIntegration(t, projectId, { name: 'tabs' });
    const send = async (body: Record<string, unknown>) =>
      (await notify(t, integration.url, body, { key: integration.token })).json<[{ iid: number }]>()[0].iid;
    const a = await send({ title: 'Alpha disk', severity: 'critical', start_time: '2026-01-01T00:00:00Z' });
    const b = await send({ title: 'Beta cpu', severity: 'low', start_time: '2026-01-02T00:00:00Z' });
    const c = await send({ title: 'Gamma net', severity: 'medium', start_time: '2026-01-03T00:00:00Z' });
    await send({ title: 'Gamma net', severity: 'medium' }); // a repeat: one more event
    await t.api('PUT', `/projects/${projectId}/alert_management/alerts/${b}`, { token: owner.token, body: { status: 'acknowledged' } });
    await t.api('PUT', `/projects/${projectId}/alert_management/alerts/${a}`, { token: owner.token, body: { status: 'resolved' } });
    const list = `/${fullPath}/-/alert_management`;
    const titles = (html: string) => [...html.matchAll(/class="alert-title"><a [^>]*>([^<]+)</g)].map((m) => m[1]);
    const open = await browser.request('GET', list);
    assert.equal(open.statusCode, 200);
    const tab = (name: string, html: string) => new RegExp(`data-tab="${name}">[^<]*<span class="badge count">(\\d+)<`).exec(html)?.[1];
    assert.deepEqual(
      ['open', 'triggered', 'acknowledged', 'resolved', 'all'].map((n) => tab(n, open.body)),
      ['2', '1', '1', '1', '3'],
    );
    assert.match(open.body, /aria-current="page" data-tab="open"|data-tab="open"[^>]*aria-current/);
    assert.deepEqual(titles(open.body), ['Gamma net', 'Beta cpu'], 'newest start first, resolved not under Open');
    assert.match(open.body, /<span class="badge severity severity-medium">medium<\/span>/);
    assert.deepEqual(titles((await browser.request('GET', `${list}?tab=resolved`)).body), ['Alpha disk']);
    // A change through the API is the caller's in the alert's activity, not the monitoring tool's.
    const viaApi = await browser.request('GET', `/${fullPath}/-/alert_management/${a}/details`);
    assert.match(viaApi.body, new RegExp(`@${owner.user.username}\\) changed the status to <span[^>]*>resolved`));
    assert.deepEqual(titles((await browser.request('GET', `${list}?tab=all&severity=low`)).body), ['Beta cpu']);
    assert.deepEqual(titles((await browser.request('GET', `${list}?tab=all&search=gamma`)).body), ['Gamma net']);
    assert.deepEqual(titles((await browser.request('GET', `${list}?tab=all&sort=severity_desc`)).body), [
      'Alpha disk',
      'Gamma net',
      'Beta cpu',
    ]);
    assert.deepEqual(titles((await browser.request('GET', `${list}?tab=all&sort=event_count_desc`)).body)[0], 'Gamma net');
    assert.deepEqual(titles((await browser.request('GET', `${list}?tab=all&sort=started_at_asc`)).body), [
      'Alpha disk',
      'Beta cpu',
      'Gamma net',
    ]);
    const sorted = await browser.request('GET', `${list}?tab=all&sort=severity_desc`);
    assert.match(sorted.body, /<th aria-sort="descending"><a href="[^"]*sort=severity_asc/);
    assert.equal((await browser.request('GET', `${list}?sort=nope`)).statusCode, 400);
    assert.ok(c > b);
  });

  it('the detail page assigns a member, creates an incident linked both ways, and lists what happened', async () => {
    const integration = await createIntegration(t, projectId, { name: 'detail', type: 'prometheus' });
    const item = prometheusItem({
      annotations: { title: 'Detail alert', runbook: 'javascript:alert(1)' },
      generatorURL: 'http://prometheus.test:9090/graph?g0.expr=up',
    });
    const [{ iid }] = (await notify(t, integration.url, alertmanagerPayload([item]), { key: integration.token })).json<[{ iid: number }]>();
    const page = `/${fullPath}/-/alert_management/${iid}/details`;
    const shown = await browser.request('GET', page);
    assert.match(shown.body, /data-field="Runbook"><code>javascript:alert\(1\)<\/code>/, 'only http(s) links');
    assert.ok(!shown.body.includes('href="javascript:'));
    assert.match(shown.body, /data-field="Generator"><a href="http:\/\/prometheus.test:9090\/graph\?g0.expr=up"/);
    assert.match(shown.body, new RegExp(`<option value="${developer.user.id}">[^<]*@${developer.user.username}`));
    const csrf = TestBrowser.csrfOf(shown.body);
    const stranger = await createUser(t.app);
    const bad = await browser.request('POST', `${page}/assignee`, {
      form: { authenticity_token: csrf, assignee_id: String(stranger.user.id) },
    });
    assert.equal(bad.statusCode, 303);
    assert.match((await browser.request('GET', page)).body, /must be a member of the project/);
    const assigned = await browser.request('POST', `${page}/assignee`, {
      form: { authenticity_token: csrf, assignee_id: String(developer.user.id) },
    });
    assert.equal(assigned.statusCode, 303);
    await browser.request('POST', `${page}/status`, { form: { authenticity_token: csrf, status: 'acknowledged' } });
    const incident = await browser.request('POST', `${page}/incident`, { form: { authenticity_token: csrf } });
    assert.equal(incident.statusCode, 303);
    const after = await browser.request('GET', page);
    assert.match(after.body, /Incident #\d+ created/);
    const issueIid = /id="incident-link" href="[^"]*\/-\/issues\/(\d+)"/.exec(after.body)?.[1];
    assert.ok(issueIid, after.body);
    assert.ok(!after.body.includes('>Create incident<'), 'shown as a link once made');
    assert.match(after.body, new RegExp(`data-field="Assignee">[^<]*@${developer.user.username}`));
    const activity = /<ol class="alert-activity">([^]*?)<\/ol>/.exec(after.body)?.[1] ?? '';
    assert.match(activity, new RegExp(`assigned @${developer.user.username}`));
    assert.match(activity, /changed the status to <span[^>]*>acknowledged/);
    assert.match(activity, new RegExp(`created incident <a href="/${fullPath}/-/issues/${issueIid}">`));
    const issue = await browser.request('GET', `/${fullPath}/-/issues/${issueIid}`);
    assert.equal(issue.statusCode, 200);
    assert.ok(issue.body.includes(`href="${page}"`), 'the incident links back to the alert');
    const again = await browser.request('POST', `${page}/incident`, { form: { authenticity_token: csrf } });
    assert.equal(again.statusCode, 303);
    assert.match((await browser.request('GET', page)).body, /already has an incident/);
  });

  it('integrations are edited, re-keyed and deleted after a confirmation page; alert settings are saved', async () => {
    const integration = await createIntegration(t, projectId, { name: 'Editable' });
    const base = `${settings}/alerts/integrations/${integration.id}`;
    const csrf = await browser.csrf();
    const edited = await browser.request('POST', base, { form: { authenticity_token: csrf, name: 'Edited' } });
    assert.equal(edited.statusCode, 303);
    assert.match((await browser.request('GET', settings)).body, /Integration Edited saved \(inactive\)/);
    assert.notEqual(
      (await notify(t, integration.url, { title: 'refused' }, { key: integration.token })).statusCode,
      200,
      'inactive: refused',
    );
    const blank = await browser.request('POST', base, { form: { authenticity_token: csrf, name: ' ', active: '1' } });
    assert.equal(blank.statusCode, 400);
    assert.match(blank.body, /<details open[^]*Name must not be blank/);
    await browser.request('POST', base, { form: { authenticity_token: csrf, name: 'Edited', active: '1' } });

    const confirm = await browser.request('GET', `${base}/reset_token`);
    assert.equal(confirm.statusCode, 200);
    assert.match(confirm.body, /Reset the key of Edited\?/);
    const reset = await browser.request('POST', `${base}/reset_token`, { form: { authenticity_token: csrf } });
    assert.equal(reset.statusCode, 200);
    const key = /id="integration-key">([^<]+)</.exec(reset.body)?.[1] ?? '';
    assert.match(key, /^bsa_/);
    assert.equal((await notify(t, integration.url, { title: 'old key' }, { key: integration.token })).statusCode, 401);
    assert.equal((await notify(t, integration.url, { title: 'new key' }, { key })).statusCode, 200);

    // A refusal of the receiver (a recovery alert with nothing to resolve) is shown beside the kept payload.
    const recovery = '{"title":"Nothing open","end_time":"2026-01-01T00:00:00Z"}';
    const refused = await browser.request('POST', `${base}/test`, { form: { authenticity_token: csrf, payload: recovery } });
    assert.equal(refused.statusCode, 400);
    assert.match(refused.body, /class="field-error"[^>]*>[^<]*no open alert matches this recovery alert/);
    assert.ok(unescape(refused.body).includes(`${recovery}</textarea>`));

    assert.match((await browser.request('GET', `${base}/delete`)).body, /Delete Edited\?/);
    const deleted = await browser.request('POST', `${base}/delete`, { form: { authenticity_token: csrf } });
    assert.equal(deleted.statusCode, 303);
    assert.match((await browser.request('GET', settings)).body, /Integration Edited deleted/);
    assert.equal((await browser.request('GET', `${base}/delete`)).statusCode, 404);

    const saved = await browser.request('POST', `${settings}/alerts/settings`, { form: { authenticity_token: csrf, create_issue: '1' } });
    assert.equal(saved.statusCode, 303);
    const api = (await t.api('GET', `/projects/${projectId}/alert_management/settings`, { token: owner.token })).json();
    assert.deepEqual(api, { create_issue: true, auto_close_incident: false, send_email: false });
    await browser.request('POST', `${settings}/alerts/settings`, { form: { authenticity_token: csrf, auto_close_incident: '1' } });
  });

  it('custom mapping: a sample must be valid JSON, its paths are offered, a saved mapping maps test alerts, a new sample clears it', async () => {
    const integration = await createIntegration(t, projectId, { name: 'Mapped' });
    const page = `${settings}/alerts/integrations/${integration.id}/mapping`;
    const csrf = await browser.csrf();
    const empty = await browser.request('GET', page);
    assert.equal(empty.statusCode, 200);
    assert.match(empty.body, /Save a sample payload/);
    const invalid = await browser.request('POST', `${page}/sample`, {
      form: { authenticity_token: csrf, payload_example: '{"alerts": [' },
    });
    assert.equal(invalid.statusCode, 400);
    assert.match(invalid.body, /class="field-error"[^>]*>The sample is not valid JSON/);
    assert.ok(unescape(invalid.body).includes('{"alerts": [</textarea>'), 'what was typed is kept');
    const sample = { alerts: [{ summary: { text: 'Disk full' }, level: 'high', hosts: ['a', 'b'] }], receiver: 'x' };
    const saved = await browser.request('POST', `${page}/sample`, {
      form: { authenticity_token: csrf, payload_example: JSON.stringify(sample) },
    });
    assert.equal(saved.statusCode, 303);
    const withSample = await browser.request('GET', page);
    assert.ok(
      unescape(withSample.body).includes(
        `<option value="[&quot;summary&quot;,&quot;text&quot;]">summary.text = Disk full</option>`.replace(/&quot;/g, '"'),
      ),
    );
    assert.ok(!/<option value="\[&quot;receiver/.test(withSample.body), 'paths come from the first alerts item');
    const mapped = await browser.request('POST', page, {
      form: { authenticity_token: csrf, map_title: '["summary","text"]', map_severity: '["level"]', map_hosts: '["hosts"]' },
    });
    assert.equal(mapped.statusCode, 303);
    const api = (
      await t.api('GET', `/projects/${projectId}/alert_management/integrations/${integration.id}`, { token: owner.token })
    ).json();
    assert.deepEqual(
      api.payload_attribute_mappings.map((m: { field_name: string; type: string }) => `${m.field_name}:${m.type}`),
      ['title:string', 'hosts:array', 'severity:string'],
    );
    const outside = await browser.request('POST', page, { form: { authenticity_token: csrf, map_title: '["receiver"]' } });
    assert.equal(outside.statusCode, 400);
    assert.match(outside.body, /not in the sample/);

    const test = await browser.request('POST', `${settings}/alerts/integrations/${integration.id}/test`, {
      form: {
        authenticity_token: csrf,
        payload: JSON.stringify({ alerts: [{ summary: { text: 'Mapped title' }, level: 'low', hosts: ['h'] }] }),
      },
    });
    assert.equal(test.statusCode, 303);
    const alerts = (
      await t.api('GET', `/projects/${projectId}/alert_management/alerts`, { token: owner.token, query: { search: 'Mapped title' } })
    ).json();
    assert.equal(alerts[0].severity, 'low');

    await browser.request('POST', `${page}/sample`, { form: { authenticity_token: csrf, payload_example: '{"other": "x"}' } });
    const cleared = (
      await t.api('GET', `/projects/${projectId}/alert_management/integrations/${integration.id}`, { token: owner.token })
    ).json();
    assert.deepEqual(cleared.payload_attribute_mappings, []);
  });

  it('custom mapping needs Premium or Ultimate, as the API decides', async () => {
    const free = await createTestApp({ sameDatabaseAs: t, config: { tier: 'free' } });
    try {
      const b = new TestBrowser(free.app);
      await b.signIn(owner.user.username, 'password-123');
      const project = await createProject(free.app, owner);
      const integration = await createIntegration(free, project.id, { name: 'Free' });
      const page = `/${project.full_path}/-/settings/operations/alerts/integrations/${integration.id}/mapping`;
      const shown = await b.request('GET', page);
      assert.match(shown.body, /needs Premium or Ultimate/);
      const posted = await b.request('POST', `${page}/sample`, {
        form: { authenticity_token: await b.csrf(), payload_example: '{"a":"b"}' },
      });
      assert.equal(posted.statusCode, 403);
    } finally {
      await free.close();
    }
  });

  it('tab counts stop at 1,000 ("1,000+") and the pages then go by Next alone', async () => {
    const project = await createProject(t.app, owner);
    const now = t.clock.now();
    const rows = Array.from({ length: 1001 }, (_, i) => ({
      project_id: project.id,
      iid: i + 1,
      title: `Many ${i}`,
      status: 'triggered' as const,
      severity: 'high',
      hosts: '[]',
      events: 1,
      payload: '{}',
      custom_fields: '[]',
      started_at: now - i * 1000,
      fingerprint: `many-${i}`,
      created_at: now,
      updated_at: now,
    }));
    for (let i = 0; i < rows.length; i += 250)
      await t.app.platform.db
        .insertInto('alerts')
        .values(rows.slice(i, i + 250))
        .execute();
    const list = `/${project.full_path}/-/alert_management`;
    const first = await browser.request('GET', list);
    assert.match(first.body, /data-tab="open">Open <span class="badge count">1,000\+</);
    assert.match(first.body, /data-tab="resolved">Resolved <span class="badge count">0</);
    assert.match(first.body, /<span class="muted">Page 1<\/span>/);
    assert.match(first.body, /rel="next"/);
    const last = await browser.request('GET', `${list}?page=51`);
    assert.equal([...last.body.matchAll(/class="alert-title"/g)].length, 1);
    assert.ok(!last.body.includes('rel="next"'));
  });

  it('a Developer sees alerts but no settings; their actions on an alert work', async () => {
    const d = new TestBrowser(t.app);
    await d.signIn(developer.user.username, 'password-123');
    assert.equal((await d.request('GET', `${settings}/alerts/integrations/1/mapping`)).statusCode, 403);
    assert.equal((await d.request('GET', `/${fullPath}/-/alert_management?tab=all`)).statusCode, 200);
  });
});
