import { Flash, Layout } from '../../web/layout.js';
import type { ApplicationRow } from './oauth.storage.js';
import { splitRedirectUris } from './redirect-uri.js';
import { splitScopes } from './scopes.js';

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
  username: string;
  csrf: string;
  application: ApplicationRow;
  scopes: readonly string[];
  redirectHost: string;
  /** Hidden fields: the authorization request and the consent ticket. */
  fields: Readonly<Record<string, string>>;
}

/** `GET /oauth/authorize`: names the application and every scope, with Authorize and Deny. */
export function ConsentPage({ username, csrf, application, scopes, redirectHost, fields }: ConsentProps) {
  return (
    <Layout title="Authorize application" username={username} csrf={csrf}>
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
  username: string;
  csrf: string;
  userCode: string;
  error?: string | undefined;
  notice?: string | undefined;
}

/** `GET /oauth/device`: the user types (or finds prefilled) the code shown on the device. */
export function DeviceEntryPage({ username, csrf, userCode, error, notice }: DeviceEntryProps) {
  return (
    <Layout title="Connect a device" username={username} csrf={csrf}>
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
  username: string;
  csrf: string;
  userCode: string;
  application: ApplicationRow;
  scopes: readonly string[];
}

/** The second step: which application, which scopes, Authorize or Deny. */
export function DeviceConfirmPage({ username, csrf, userCode, application, scopes }: DeviceConfirmProps) {
  return (
    <Layout title="Authorize device" username={username} csrf={csrf}>
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

export function DeviceDonePage({ username, csrf, approved }: { username: string; csrf: string; approved: boolean }) {
  return (
    <Layout title="Device" username={username} csrf={csrf}>
      <h1 id="device-result">{approved ? 'Device connected' : 'Device access denied'}</h1>
      <p>{approved ? 'You can return to your device now.' : 'The device was not given access to your account.'}</p>
    </Layout>
  );
}

export interface ApplicationsPageProps {
  username: string;
  csrf: string;
  applications: readonly ApplicationRow[];
  scopes: readonly string[];
  /** Just created or renewed: its ID and secret, shown once. */
  revealed?: { application: ApplicationRow; secret: string } | undefined;
  errors?: Readonly<Record<string, readonly string[]>> | undefined;
  form?: { name: string; redirectUri: string; confidential: boolean; scopes: readonly string[] } | undefined;
  notice?: string | undefined;
}

/** `/user_settings/applications`: the signed-in user's applications. */
export function ApplicationsPage(props: ApplicationsPageProps) {
  const { username, csrf, applications, scopes, revealed, errors, notice } = props;
  const form = props.form ?? { name: '', redirectUri: '', confidential: true, scopes: [] };
  return (
    <Layout title="Applications" username={username} csrf={csrf}>
      <h1>Applications</h1>
      {notice ? <Flash kind="notice">{notice}</Flash> : null}
      {revealed ? (
        <section class="revealed" id="revealed">
          <h2>{revealed.application.name}</h2>
          <p>
            Application ID: <code id="application-id">{revealed.application.uid}</code>
          </p>
          <p>
            Secret: <code id="application-secret">{revealed.secret}</code>
          </p>
          <p class="muted">Copy the secret now: it is not shown again.</p>
        </section>
      ) : null}
      <h2>Add new application</h2>
      {errors && Object.keys(errors).length > 0 ? (
        <Flash kind="error">
          {Object.entries(errors).map(([field, list]) => (
            <span key={field}>
              {field.replace('_', ' ')} {list.join(', ')}.{' '}
            </span>
          ))}
        </Flash>
      ) : null}
      <form method="post" action="/user_settings/applications" class="stacked" id="new-application">
        <input type="hidden" name="authenticity_token" value={csrf} />
        <label for="application_name">Name</label>
        <input type="text" id="application_name" name="name" value={form.name} required maxLength={255} />
        <label for="application_redirect_uri">Redirect URI (one per line)</label>
        <textarea id="application_redirect_uri" name="redirect_uri" rows={3} required>
          {form.redirectUri}
        </textarea>
        <label>
          <input type="checkbox" name="confidential" value="1" id="application_confidential" checked={form.confidential} /> Confidential
          (the application can keep its secret on a server)
        </label>
        <fieldset>
          <legend>Scopes</legend>
          {scopes.map((scope) => (
            <label key={scope}>
              <input type="checkbox" name="scopes" value={scope} id={`scope_${scope}`} checked={form.scopes.includes(scope)} />{' '}
              <strong>{scope}</strong> <span class="muted">{SCOPE_DESCRIPTIONS[scope] ?? ''}</span>
            </label>
          ))}
        </fieldset>
        <p>
          <button type="submit">Save application</button>
        </p>
      </form>
      <h2>Your applications ({applications.length})</h2>
      <table id="applications">
        <thead>
          <tr>
            <th>Name</th>
            <th>Application ID</th>
            <th>Callback URLs</th>
            <th>Scopes</th>
            <th>Confidential</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {applications.map((app) => (
            <tr key={app.id} data-application-id={app.uid}>
              <td>{app.name}</td>
              <td>
                <code>{app.uid}</code>
              </td>
              <td>{splitRedirectUris(app.redirect_uri).join(' ')}</td>
              <td>{splitScopes(app.scopes).join(' ')}</td>
              <td>{app.confidential === 1 ? 'Yes' : 'No'}</td>
              <td>
                <form method="post" action={`/user_settings/applications/${app.id}/renew`} class="inline">
                  <input type="hidden" name="authenticity_token" value={csrf} />
                  <button type="submit" class="secondary">
                    Renew secret
                  </button>
                </form>{' '}
                <form method="post" action={`/user_settings/applications/${app.id}/delete`} class="inline">
                  <input type="hidden" name="authenticity_token" value={csrf} />
                  <button type="submit" class="danger">
                    Destroy
                  </button>
                </form>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </Layout>
  );
}
