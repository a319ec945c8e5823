import type { TestApp } from './app.js';
import { createIntegration, notify } from './alerts.js';
import { TestBrowser } from './auth-browser.js';
import { authorizeQuery, registerApp } from './oauth.js';
import { enableTracking, envelope, envelopePath, hex32, sentryAuth } from './sentry.js';

export interface PageFixtures {
  projectId: number;
  /** The project's full path, as in its pages' addresses (`/<full_path>/-/...`). */
  fullPath: string;
  integrationId: number;
  alertIid: number;
  errorId: number;
}

/**
 * A project with something on each of its pages: an active HTTP alert integration with one
 * alert (`<name> alert`), and error tracking with one error (message `name`).
 */
export async function projectWithAlertAndError(t: TestApp, projectId: number, name: string, eventSeed: number): Promise<PageFixtures> {
  const integration = await createIntegration(t, projectId, { name, type: 'http', active: true });
  const alertIid = (await notify(t, integration.url, { title: `${name} alert` }, { key: integration.token })).json()[0].iid;
  const tracked = await enableTracking(t, projectId);
  const id = hex32(eventSeed);
  await t.app.inject({
    method: 'POST',
    url: envelopePath(projectId),
    headers: { 'x-sentry-auth': sentryAuth(tracked.key) },
    payload: envelope({ event_id: id }, [{ type: 'event', payload: { event_id: id, message: name, level: 'error' } }]),
  });
  const errorId = (await t.api('GET', `/projects/${projectId}/error_tracking/errors`)).json()[0].id;
  const fullPath = (await t.api('GET', `/projects/${projectId}`)).json().path_with_namespace as string;
  return { projectId, fullPath, integrationId: integration.id, alertIid, errorId };
}

/**
 * Every HTML page, with the browser that sees it: root (signed in) for the project's pages
 * and the forms, an anonymous one for the sign-in page; pages of a project that does not
 * exist too, for the error page.
 */
export async function everyPage(
  t: TestApp,
  fixtures: PageFixtures,
): Promise<{ root: TestBrowser; anonymous: TestBrowser; pages: [TestBrowser, string][] }> {
  const { fullPath, alertIid, errorId } = fixtures;
  const root = new TestBrowser(t.app);
  await root.signIn('root', 'root-password-123');
  const client = await registerApp(t);
  const anonymous = new TestBrowser(t.app);
  const pages: [TestBrowser, string][] = [
    [anonymous, '/users/sign_in'],
    [root, '/profile'],
    [root, '/-/profile/notifications'],
    [root, `/oauth/authorize?${authorizeQuery(client, { scope: 'api' })}`],
    [root, '/oauth/authorize?client_id=unknown'],
    [root, '/oauth/device'],
    [root, '/user_settings/applications'],
    [root, '/-/user_settings/applications'],
    [root, '/-/user_settings/personal_access_tokens'],
    [root, '/-/user_settings/password/edit'],
    [root, '/-/user_settings/profile'],
    [root, `/${fullPath}/-/alert_management`],
    [root, `/${fullPath}/-/alert_management/${alertIid}/details`],
    [root, `/${fullPath}/-/settings/operations`],
    [root, `/${fullPath}/-/error_tracking`],
    [root, `/${fullPath}/-/error_tracking/${errorId}/details`],
    [root, `/${fullPath}/-/activity`],
    [root, '/no-such-group/no-such-project/-/error_tracking'],
    [root, '/no-such-group/no-such-project/-/alert_management'],
  ];
  return { root, anonymous, pages };
}
