import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { describe, it } from 'node:test';
import { startServer } from '../helpers/server-process.js';
import { envelope, envelopePath, hex32, sentryAuth } from '../helpers/sentry.js';
import { LIVE_ROOT_PASSWORD, LIVE_ROOT_TOKEN, codeFlow, liveApi, registerLiveApp, signIn } from '../helpers/live.js';

/**
 * Secrets never reach the log (issue 10, deliverable 3): the real server at LOG_LEVEL=debug
 * receives every kind of secret in headers, query strings and form bodies, right and wrong;
 * then the captured output is searched for each of them.
 */
describe('secrets are never logged', () => {
  it('with LOG_LEVEL=debug, no secret sent in a header, query string or form body appears in the output', { timeout: 90_000 }, async () => {
    const server = await startServer({
      BASALT_ROOT_TOKEN: LIVE_ROOT_TOKEN,
      BASALT_ROOT_PASSWORD: LIVE_ROOT_PASSWORD,
      LOG_LEVEL: 'debug',
      LOAD_SHED_EVENT_LOOP_DELAY_MS: '0',
      RUN_JOBS: 'false',
    });
    const base = server.url;
    const secrets: Record<string, string> = { root_token: LIVE_ROOT_TOKEN, password: LIVE_ROOT_PASSWORD };
    const send = (url: string, init: RequestInit = {}) => fetch(`${base}${url}`, { redirect: 'manual', ...init }).then((r) => r.text());
    const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
    try {
      const project = (await liveApi(base, 'POST', '/projects', LIVE_ROOT_TOKEN, { name: 'logs', path: 'logs' })).json() as {
        id: number;
        path_with_namespace: string;
      };
      const integration = (
        await liveApi(base, 'POST', `/projects/${project.id}/alert_management/integrations`, LIVE_ROOT_TOKEN, { name: 'l', type: 'http' })
      ).json() as { url: string; token: string };
      secrets.alert_key = integration.token;
      await liveApi(base, 'PUT', `/projects/${project.id}/error_tracking/settings`, LIVE_ROOT_TOKEN, { active: true, integrated: true });
      const keys = (await liveApi(base, 'GET', `/projects/${project.id}/error_tracking/client_keys`, LIVE_ROOT_TOKEN)).json() as {
        public_key: string;
      }[];
      secrets.sentry_key = keys[0]?.public_key ?? '';
      secrets.job_token = (
        (await liveApi(base, 'POST', `/projects/${project.id}/jobs`, LIVE_ROOT_TOKEN, { name: 'j' })).json() as { token: string }
      ).token;
      const client = await registerLiveApp(base, LIVE_ROOT_TOKEN);
      secrets.client_secret = client.secret;

      // Personal token: header, Bearer, query string.
      await send('/api/v4/user', { headers: { 'private-token': LIVE_ROOT_TOKEN } });
      await send('/api/v4/user', { headers: { authorization: `Bearer ${LIVE_ROOT_TOKEN}` } });
      await send(`/api/v4/user?private_token=${LIVE_ROOT_TOKEN}`);
      // Sign-in password in a form body, then the session cookie and the CSRF token.
      const jar = await signIn(base, 'root', LIVE_ROOT_PASSWORD);
      secrets.session = jar.get('_service_session') ?? '';
      await send('/profile', { headers: { cookie: jar.header() } });
      secrets.wrong_password = 'wrong-password-do-not-log-7431';
      await send('/users/sign_in', {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ 'user[login]': 'root', 'user[password]': secrets.wrong_password }),
      });
      // OAuth: code and client_secret in the form body, refresh token, Basic client auth, access token.
      const tokens = await codeFlow(base, jar, client);
      secrets.access_token = tokens.access_token;
      secrets.refresh_token = tokens.refresh_token;
      const refreshed = JSON.parse(
        await send('/oauth/token', {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(client.clientId, client.secret) },
          body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token }),
        }),
      ) as { access_token: string; refresh_token: string };
      secrets.rotated_access_token = refreshed.access_token;
      secrets.rotated_refresh_token = refreshed.refresh_token;
      await send('/oauth/token/info', { headers: { authorization: `Bearer ${refreshed.access_token}` } });
      await send(`/oauth/token/info?access_token=${refreshed.access_token}`);
      await send(`/api/v4/user?access_token=${refreshed.access_token}`);
      await send('/oauth/revoke', {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ token: refreshed.refresh_token, client_id: client.clientId, client_secret: client.secret }),
      });
      // Job token: header and query string.
      await send('/api/v4/job', { headers: { 'job-token': secrets.job_token } });
      await send(`/api/v4/job?job_token=${secrets.job_token}`);
      // Git over HTTP with Basic auth: password and token.
      const refs = `/${project.path_with_namespace}.git/info/refs?service=git-upload-pack`;
      await send(refs, { headers: { authorization: basic('root', LIVE_ROOT_PASSWORD) } });
      await send(refs, { headers: { authorization: basic('oauth2', LIVE_ROOT_TOKEN) } });
      // Alert notify: Bearer and Basic.
      const notify = new URL(integration.url).pathname;
      for (const authorization of [`Bearer ${integration.token}`, basic('any', integration.token)]) {
        await send(notify, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization },
          body: '{"title":"log test"}',
        });
      }
      // Collector: sentry_key in the query and in X-Sentry-Auth.
      const id = hex32(7);
      const body = envelope({ event_id: id }, [{ type: 'event', payload: { event_id: id, message: 'log test' } }]);
      await send(`${envelopePath(project.id)}?sentry_key=${secrets.sentry_key}`, { method: 'POST', body });
      await send(envelopePath(project.id), { method: 'POST', headers: { 'x-sentry-auth': sentryAuth(secrets.sentry_key) }, body });
    } finally {
      await server.stop();
      rmSync(server.dataDir, { recursive: true, force: true });
    }
    const log = server.output();
    // The log did record these requests (with the secrets filtered out).
    assert.match(log, /"url":"\/api\/v4\/user\?private_token=\[FILTERED\]"/);
    assert.match(log, /"url":"\/oauth\/token"/);
    assert.ok(log.split('\n').length > 30, 'the debug log has content');
    for (const [kind, value] of Object.entries(secrets)) {
      assert.ok(value.length >= 8, `${kind} was obtained`);
      for (const variant of [value, value.replace(/^bs[a-z]_/, '')]) {
        assert.ok(!log.includes(variant), `${kind} appears in the log`);
        assert.ok(!log.includes(encodeURIComponent(variant)), `${kind} (URL-encoded) appears in the log`);
      }
    }
  });
});
