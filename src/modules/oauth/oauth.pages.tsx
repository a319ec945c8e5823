import type { Actor } from '../../infra/auth/index.js';
import { Flash, Layout } from '../../web/layout.js';
import type { PageState } from '../../web/index.js';
import type { ApplicationRow } from './oauth.storage.js';

/** What each scope lets an application do, in the words the consent page shows. */
export const SCOPE_DESCRIPTIONS: Record<string, string> = {
  api: 'Full read and write access to the API, including all groups and projects.',
  read_api: 'Read access to the API, including all groups and projects.',
  read_user: 'Read your personal information (username, email, profile).',
  read_repository: 'Read (pull) your repositories over Git.',
  write_repository: 'Read and write (pull and push) your repositories over Git.',
  sudo: 'Perform API actions as any user in the system (administrators).',
  admin_mode: 'Perform API actions as an administrator when Admin Mode is on.',
  openid: 'Authenticate using OpenID Connect.',
  profile: 'Read your profile through OpenID Connect.',
  email: 'Read your primary email address through OpenID Connect.',
};

/**
 * What the layout needs of a request. The authorize and device pages keep the OAuth error
 * format outside the page layer, so they build it from the session they read themselves.
 */
export type PageLike = Pick<PageState, 'actor' | 'csrf' | 'flash'>;
export const pageLike = (actor: Actor, csrf: string): PageLike => ({ actor, csrf, flash: null });

function ScopeList({ scopes }: { scopes: readonly string[] }) {
  return (
    <ul class="scopes" id="scopes">
      {scopes.map((scope) => (
        <li key={scope}>
          <strong>{scope}</strong>: {SCOPE_DESCRIPTIONS[scope] ?? scope}
        </li>
      ))}
    </ul>
  );
}

export interface ConsentProps {
  page: PageLike;
  application: ApplicationRow;
  scopes: readonly string[];
  redirectHost: string;
  /** Hidden fields: the authorization request and the consent ticket. */
  fields: Readonly<Record<string, string>>;
}

/** `GET /oauth/authorize`: names the application and every scope, with Authorize and Deny. */
export function ConsentPage({ page, application, scopes, redirectHost, fields }: ConsentProps) {
  const { csrf } = page;
  const username = page.actor?.user.username ?? '';
  return (
    <Layout title="Authorize application" page={page}>
      <h1>
        Authorize <span id="application-name">{application.name}</span> to use your account?
      </h1>
      <p>
        An application called <strong>{application.name}</strong> is asking for access to your account <strong>{username}</strong>. It will
        be able to:
      </p>
      <ScopeList scopes={scopes} />
      <p class="muted">
        You will be sent back to <strong>{redirectHost}</strong>. Authorize only applications you trust.
      </p>
      <form method="post" action="/oauth/authorize" id="consent">
        <input type="hidden" name="authenticity_token" value={csrf} />
        {Object.entries(fields).map(([name, value]) => (
          <input key={name} type="hidden" name={name} value={value} />
        ))}
        <button type="submit" name="decision" value="approve" id="authorize">
          Authorize
        </button>{' '}
        <button type="submit" name="decision" value="deny" class="secondary" id="deny">
          Deny
        </button>
      </form>
    </Layout>
  );
}

/** Shown instead of redirecting when the client or its redirect URI cannot be trusted. */
export function OAuthErrorPage({ title, error, description }: { title: string; error: string; description: string }) {
  return (
    <Layout title={title}>
      <h1>{title}</h1>
      <Flash kind="error">
        <code id="oauth-error">{error}</code>: {description}
      </Flash>
    </Layout>
  );
}

export interface DeviceEntryProps {
  page: PageLike;
  userCode: string;
  error?: string | undefined;
  notice?: string | undefined;
}

/** `GET /oauth/device`: the user types (or finds prefilled) the code shown on the device. */
export function DeviceEntryPage({ page, userCode, error, notice }: DeviceEntryProps) {
  const { csrf } = page;
  return (
    <Layout title="Connect a device" page={page}>
      <h1>Connect a device</h1>
      {error ? <Flash kind="error">{error}</Flash> : null}
      {notice ? <Flash kind="notice">{notice}</Flash> : null}
      <form method="post" action="/oauth/device" class="stacked" id="device-entry">
        <input type="hidden" name="authenticity_token" value={csrf} />
        <label for="user_code">Code shown on your device</label>
        <input type="text" id="user_code" name="user_code" value={userCode} autocomplete="off" required maxLength={32} autofocus />
        <p>
          <button type="submit">Continue</button>
        </p>
      </form>
    </Layout>
  );
}

export interface DeviceConfirmProps {
  page: PageLike;
  userCode: string;
  application: ApplicationRow;
  scopes: readonly string[];
}

/** The second step: which application, which scopes, Authorize or Deny. */
export function DeviceConfirmPage({ page, userCode, application, scopes }: DeviceConfirmProps) {
  const { csrf } = page;
  return (
    <Layout title="Authorize device" page={page}>
      <h1>
        Authorize <span id="application-name">{application.name}</span> on your device?
      </h1>
      <p>
        The device showing code <strong id="confirm-user-code">{userCode}</strong> will be able to:
      </p>
      <ScopeList scopes={scopes} />
      <form method="post" action="/oauth/device/confirm" id="device-confirm">
        <input type="hidden" name="authenticity_token" value={csrf} />
        <input type="hidden" name="user_code" value={userCode} />
        <button type="submit" name="decision" value="approve" id="authorize">
          Authorize
        </button>{' '}
        <button type="submit" name="decision" value="deny" class="secondary" id="deny">
          Deny
        </button>
      </form>
    </Layout>
  );
}

export function DeviceDonePage({ page, approved }: { page: PageLike; approved: boolean }) {
  return (
    <Layout title="Device" page={page}>
      <h1 id="device-result">{approved ? 'Device connected' : 'Device access denied'}</h1>
      <p>{approved ? 'You can return to your device now.' : 'The device was not given access to your account.'}</p>
    </Layout>
  );
}
