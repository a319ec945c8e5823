import { ActionButton, Csrf, EmptyState, Field, FormError, Layout, type FieldErrors, type PageState } from '../../web/index.js';
import { SettingsNav, settingsCrumbs } from './settings-nav.views.js';
import type { TokenRow } from './tokens.repository.js';

export const TOKENS_PAGE = '/-/user_settings/personal_access_tokens';

/** What each scope lets a token do, as the form explains it. */
const SCOPE_HINTS: Record<string, string> = {
  api: 'Full read and write access to the API, including all groups and projects.',
  read_api: 'Read access to the API, including all groups and projects.',
  read_user: 'Read your profile through the /user API.',
  read_repository: 'Pull from repositories over Git (HTTP).',
  write_repository: 'Pull from and push to repositories over Git (HTTP).',
  sudo: 'Perform API actions as any user (administrators).',
  admin_mode: 'Perform API actions as an administrator when Admin Mode is on.',
};

/** The form's values: as typed after a refusal, or the defaults. */
export interface TokenInput {
  name: string;
  expiresAt: string;
  scopes: readonly string[];
}

export interface AccessTokensPageProps {
  page: PageState;
  tokens: readonly TokenRow[];
  scopes: readonly string[];
  input: TokenInput;
  errors: FieldErrors;
  /** `YYYY-MM-DD`: no token may expire later (MAX_ACCESS_TOKEN_LIFETIME_DAYS). */
  latestExpiry: string;
  /** Just created or rotated: the secret, in this answer only. */
  created?: { name: string; token: string; rotated: boolean } | undefined;
}

const day = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString().slice(0, 10));

function When({ ms, never }: { ms: number | null; never: string }) {
  return ms === null ? <span class="muted">{never}</span> : <time datetime={new Date(ms).toISOString()}>{day(ms)}</time>;
}

function ScopeBoxes({ scopes, chosen, error }: { scopes: readonly string[]; chosen: readonly string[]; error?: string | undefined }) {
  return (
    <fieldset class={error ? 'field scopes has-error' : 'field scopes'} aria-describedby={error ? 'scopes-error' : undefined}>
      <legend>Scopes</legend>
      {scopes.map((scope) => (
        <div class="field checkbox" key={scope}>
          <input type="checkbox" id={`scope_${scope}`} name="scopes" value={scope} checked={chosen.includes(scope)} />
          <label for={`scope_${scope}`}>
            <strong>{scope}</strong> <span class="muted">{SCOPE_HINTS[scope] ?? ''}</span>
          </label>
        </div>
      ))}
      {error ? (
        <span class="field-error" id="scopes-error">
          {error}
        </span>
      ) : null}
    </fieldset>
  );
}

/** `/-/user_settings/personal_access_tokens`: add a token (shown once), the active ones, revoke and rotate. */
export function AccessTokensPage({ page, tokens, scopes, input, errors, latestExpiry, created }: AccessTokensPageProps) {
  const { csrf } = page;
  return (
    <Layout title="Personal access tokens" page={page} crumbs={settingsCrumbs('tokens')}>
      <SettingsNav current="tokens" />
      <h1>Personal access tokens</h1>
      <p>A personal access token signs in to the API and to Git over HTTP as you, with the scopes you choose.</p>
      {created ? (
        <section class="revealed" id="created-token" aria-labelledby="created-token-title">
          <h2 id="created-token-title">{created.rotated ? `Token ${created.name} was rotated` : `Your new token ${created.name}`}</h2>
          <div class="field">
            <label for="created-personal-access-token">Your new personal access token</label>
            <input type="text" id="created-personal-access-token" value={created.token} readOnly autocomplete="off" spellcheck={false} />
          </div>
          <p class="muted">Copy it now: it is not shown again.{created.rotated ? ' The token it replaces no longer works.' : ''}</p>
        </section>
      ) : null}
      <section>
        <h2>Add a personal access token</h2>
        <form method="post" action={TOKENS_PAGE} id="new-personal-access-token">
          <Csrf token={csrf} />
          <FormError errors={errors} />
          <Field label="Token name" name="name" value={input.name} error={errors.name} required maxLength={255} autocomplete="off" />
          <Field
            label="Expiration date"
            name="expires_at"
            type="date"
            value={input.expiresAt}
            error={errors.expires_at}
            hint={`The token stops working at the start of that day (UTC). At the latest ${latestExpiry}.`}
          />
          <ScopeBoxes scopes={scopes} chosen={input.scopes} error={errors.scopes} />
          <p>
            <button type="submit">Create personal access token</button>
          </p>
        </form>
      </section>
      <section id="active-tokens">
        <h2>Active personal access tokens ({tokens.length})</h2>
        {tokens.length === 0 ? (
          <EmptyState title="No active personal access tokens">Create one with the form above to use the API or Git over HTTP.</EmptyState>
        ) : (
          <table>
            <thead>
              <tr>
                <th>Token name</th>
                <th>Scopes</th>
                <th>Created</th>
                <th>Last used</th>
                <th>Expires</th>
                <th>Actions</th>
              </tr>
            </thead>
            <tbody>
              {tokens.map((token) => (
                <tr key={token.id} data-token-id={token.id}>
                  <td>{token.name}</td>
                  <td>{token.scopes.split(' ').join(', ')}</td>
                  <td>
                    <When ms={token.created_at} never="" />
                  </td>
                  <td>
                    <When ms={token.last_used_at} never="Never" />
                  </td>
                  <td>
                    <When ms={token.expires_at} never="Never" />
                  </td>
                  <td class="actions">
                    <ActionButton action={`${TOKENS_PAGE}/${token.id}/rotate`} csrf={csrf} label="Rotate" kind="secondary" />{' '}
                    <ActionButton action={`${TOKENS_PAGE}/${token.id}/revoke`} csrf={csrf} label="Revoke" kind="danger" />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>
    </Layout>
  );
}
