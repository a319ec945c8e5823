// Not in the PostgreSQL tier: rate-limit counters and the CAPTCHA service live in memory or Redis, not the database.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createProject, createUser, type TestUser } from '../helpers/factories.js';
import { appWithUsers } from '../helpers/suite.js';

const SPAM_ENV = { SPAM_BLOCKED_PATTERNS: 'cheap pills, Casino Bonus', SPAM_MAX_LINKS: '2' };
const links = (n: number) => Array.from({ length: n }, (_, i) => `https://example.com/${i}`).join(' ');

describe('spam checks without a CAPTCHA service', () => {
  let t: TestApp;
  let user: TestUser;
  let projectId: number;
  before(async () => {
    ({ t, user } = await appWithUsers(['user'], { env: SPAM_ENV }));
    projectId = (await createProject(t.app, user)).id;
  });
  after(() => t.close());

  const openIssue = (body: Record<string, string>) => t.api('POST', `/projects/${projectId}/issues`, { token: user.token, body });

  it('a blocked phrase in the title discards the issue with the spec body and logs it', async () => {
    const res = await openIssue({ title: 'Buy CHEAP Pills now' });
    assert.equal(res.statusCode, 400);
    assert.deepEqual(res.json(), { message: { error: 'Your issue has been recognized as spam and has been discarded.' } });
    const issues = await t.api('GET', `/projects/${projectId}/issues`, { token: user.token });
    assert.equal(issues.json().length, 0);
    const logs = await t.database.handle.db.selectFrom('spam_logs').selectAll().execute();
    assert.equal(logs.length, 1);
    assert.equal(logs[0]?.user_id, user.user.id);
    assert.equal(logs[0]?.noteable_type, 'Issue');
    assert.equal(logs[0]?.title, 'Buy CHEAP Pills now');
    assert.match(logs[0]?.reason ?? '', /cheap pills/);
  });

  it('more links than SPAM_MAX_LINKS is spam; up to the limit is fine', async () => {
    const many = await openIssue({ title: 'links', description: links(3) });
    assert.equal(many.statusCode, 400);
    const few = await openIssue({ title: 'links', description: links(2) });
    assert.equal(few.statusCode, 201);
  });

  it('clean content passes; a validation problem is reported before spam', async () => {
    assert.equal((await openIssue({ title: 'An honest bug report' })).statusCode, 201);
    const blank = await openIssue({ title: ' ', description: 'casino bonus' });
    assert.equal(blank.statusCode, 400);
    assert.deepEqual(blank.json(), { message: { title: ["can't be blank"] } });
  });

  it('snippets (personal and project) are checked on title, description and content', async () => {
    const personal = await t.api('POST', '/snippets', {
      token: user.token,
      body: { title: 'notes', file_name: 'a.txt', content: 'win a CASINO BONUS' },
    });
    assert.equal(personal.statusCode, 400);
    assert.deepEqual(personal.json(), { message: { error: 'Your snippet has been recognized as spam and has been discarded.' } });
    const project = await t.api('POST', `/projects/${projectId}/snippets`, {
      token: user.token,
      body: { title: 'cheap pills', file_name: 'a.txt', content: 'x' },
    });
    assert.equal(project.statusCode, 400);
    const clean = await t.api('POST', `/projects/${projectId}/snippets`, {
      token: user.token,
      body: { title: 'fine', file_name: 'a.txt', content: 'x' },
    });
    assert.equal(clean.statusCode, 201);
  });
});

describe('spam checks with a CAPTCHA service (reCAPTCHA v2 protocol)', () => {
  let t: TestApp;
  let server: Server;
  let user: TestUser;
  let other: TestUser;
  let projectId: number;
  const received: { contentType: string | undefined; form: URLSearchParams }[] = [];

  before(async () => {
    // A stand-in for the verify endpoint: `solved-token` with the right secret is a success.
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        const form = new URLSearchParams(body);
        received.push({ contentType: req.headers['content-type'], form });
        const success = req.method === 'POST' && form.get('secret') === 'captcha-secret' && form.get('response') === 'solved-token';
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify(
            success ? { success: true, hostname: 'basalt.test' } : { success: false, 'error-codes': ['invalid-input-response'] },
          ),
        );
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    t = await createTestApp({
      env: {
        ...SPAM_ENV,
        CAPTCHA_SITE_KEY: 'site-key-123',
        CAPTCHA_SECRET: 'captcha-secret',
        CAPTCHA_VERIFY_URL: `http://127.0.0.1:${port}/recaptcha/api/siteverify`,
      },
    });
    user = await createUser(t.app);
    other = await createUser(t.app);
    projectId = (await createProject(t.app, user, { visibility: 'public' })).id;
  });
  after(async () => {
    await t.close();
    // fetch keeps its connection alive; close it so the server can stop at once.
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  const spamIssue = (token: string, headers: Record<string, string> = {}) =>
    t.api('POST', `/projects/${projectId}/issues`, { token, headers, body: { title: 'cheap pills', description: 'really' } });

  const needsCaptcha = (res: Awaited<ReturnType<typeof spamIssue>>, kind = 'issue'): number => {
    assert.equal(res.statusCode, 409);
    const body = res.json();
    assert.deepEqual(Object.keys(body).sort(), ['captcha_site_key', 'message', 'needs_captcha_response', 'spam_log_id']);
    assert.equal(body.needs_captcha_response, true);
    assert.equal(body.captcha_site_key, 'site-key-123');
    assert.ok(Number.isInteger(body.spam_log_id));
    assert.deepEqual(body.message, {
      error: `Your ${kind} has been recognized as spam. Please, change the content or solve the reCAPTCHA to proceed.`,
    });
    return body.spam_log_id as number;
  };

  it('spam asks for a CAPTCHA; the resubmission with a solved one is verified and accepted', async () => {
    const logId = needsCaptcha(await spamIssue(user.token));
    const before = received.length;
    const res = await spamIssue(user.token, { 'X-Service-Captcha-Response': 'solved-token', 'X-Service-Spam-Log-Id': String(logId) });
    assert.equal(res.statusCode, 201);
    assert.equal(res.json().title, 'cheap pills');
    const call = received[before];
    assert.ok(call, 'the verify URL was called');
    assert.equal(call.contentType, 'application/x-www-form-urlencoded');
    assert.equal(call.form.get('secret'), 'captcha-secret');
    assert.equal(call.form.get('response'), 'solved-token');
    const log = await t.database.handle.db.selectFrom('spam_logs').selectAll().where('id', '=', logId).executeTakeFirst();
    assert.equal(log?.recaptcha_verified, 1);
  });

  it('a spam log id passes once', async () => {
    const logId = needsCaptcha(await spamIssue(user.token));
    const headers = { 'X-Service-Captcha-Response': 'solved-token', 'X-Service-Spam-Log-Id': String(logId) };
    assert.equal((await spamIssue(user.token, headers)).statusCode, 201);
    const replay = needsCaptcha(await spamIssue(user.token, headers));
    assert.notEqual(replay, logId);
  });

  it('a wrong CAPTCHA answer, another user’s log or a log of another kind is not accepted', async () => {
    const logId = needsCaptcha(await spamIssue(user.token));
    needsCaptcha(await spamIssue(user.token, { 'X-Service-Captcha-Response': 'wrong', 'X-Service-Spam-Log-Id': String(logId) }));
    needsCaptcha(await spamIssue(other.token, { 'X-Service-Captcha-Response': 'solved-token', 'X-Service-Spam-Log-Id': String(logId) }));
    const snippet = await t.api('POST', `/projects/${projectId}/snippets`, {
      token: user.token,
      headers: { 'X-Service-Captcha-Response': 'solved-token', 'X-Service-Spam-Log-Id': String(logId) },
      body: { title: 'cheap pills', file_name: 'a.txt', content: 'x' },
    });
    needsCaptcha(snippet, 'snippet');
    // The log was not used up by those attempts.
    assert.equal(
      (await spamIssue(user.token, { 'X-Service-Captcha-Response': 'solved-token', 'X-Service-Spam-Log-Id': String(logId) })).statusCode,
      201,
    );
  });

  it('snippets take the same round trip', async () => {
    const create = (headers: Record<string, string> = {}) =>
      t.api('POST', '/snippets', { token: user.token, headers, body: { title: 'snip', file_name: 'a.txt', content: 'casino bonus' } });
    const logId = needsCaptcha(await create(), 'snippet');
    const res = await create({ 'X-Service-Captcha-Response': 'solved-token', 'X-Service-Spam-Log-Id': String(logId) });
    assert.equal(res.statusCode, 201);
  });

  it('issue edits and comments take the same round trip', async () => {
    const opened = await t.api('POST', `/projects/${projectId}/issues`, { token: user.token, body: { title: 'clean' } });
    const issueUrl = `/projects/${projectId}/issues/${opened.json().iid}`;
    const edit = (headers: Record<string, string> = {}) =>
      t.api('PUT', issueUrl, { token: user.token, headers, body: { description: 'cheap pills' } });
    const editLog = needsCaptcha(await edit());
    const edited = await edit({ 'X-Service-Captcha-Response': 'solved-token', 'X-Service-Spam-Log-Id': String(editLog) });
    assert.equal(edited.statusCode, 200);
    assert.equal(edited.json().description, 'cheap pills');

    const comment = (headers: Record<string, string> = {}) =>
      t.api('POST', `${issueUrl}/notes`, { token: user.token, headers, body: { body: 'casino bonus' } });
    const noteLog = needsCaptcha(await comment(), 'note');
    const commented = await comment({ 'X-Service-Captcha-Response': 'solved-token', 'X-Service-Spam-Log-Id': String(noteLog) });
    assert.equal(commented.statusCode, 201);
  });
});

describe('spam checks with an unreachable CAPTCHA service', () => {
  let t: TestApp;
  before(async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const { port } = closed.address() as AddressInfo;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    t = await createTestApp({
      env: { ...SPAM_ENV, CAPTCHA_SITE_KEY: 'k', CAPTCHA_SECRET: 's', CAPTCHA_VERIFY_URL: `http://127.0.0.1:${port}/verify` },
    });
  });
  after(() => t.close());

  it('counts as unsolved: the answer is the CAPTCHA body again, not a 500', async () => {
    const user = await createUser(t.app);
    const project = await createProject(t.app, user);
    const first = await t.api('POST', `/projects/${project.id}/issues`, { token: user.token, body: { title: 'cheap pills' } });
    assert.equal(first.statusCode, 409);
    const again = await t.api('POST', `/projects/${project.id}/issues`, {
      token: user.token,
      headers: { 'X-Service-Captcha-Response': 'solved-token', 'X-Service-Spam-Log-Id': String(first.json().spam_log_id) },
      body: { title: 'cheap pills' },
    });
    assert.equal(again.statusCode, 409);
  });
});
