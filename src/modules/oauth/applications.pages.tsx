import type { ComponentChildren } from 'preact';
import { ActionButton, Csrf, EmptyState, FormError, Layout, type Crumb, type FieldErrors, type PageState } from '../../web/index.js';
import { SettingsNav, settingsCrumbs } from '../identity/index.js';
import { SCOPE_DESCRIPTIONS } from './oauth.pages.js';
import type { ApplicationRow, Authorization } from './oauth.storage.js';
import { splitRedirectUris } from './redirect-uri.rules.js';
import { splitScopes } from './scopes.rules.js';

/** The canonical address; `/user_settings/applications` answers the same pages. */
export const APPLICATIONS_PAGE = '/-/user_settings/applications';

/** What the application form holds: as typed after a refusal, from the row on Edit. */
export interface ApplicationInput {
  name: string;
  redirectUri: string;
  confidential: boolean;
  scopes: readonly string[];
}

const str = (value: unknown): string => (typeof value === 'string' ? value : '');
const list = (value: unknown): string[] =>
  Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : typeof value === 'string' ? [value] : [];

/** A submitted body (validated or not) as the form's input; an unchecked box is absent. */
export const inputOfBody = (body: Record<string, unknown>): ApplicationInput => ({
  name: str(body.name),
  redirectUri: str(body.redirect_uri),
  confidential: body.confidential !== undefined,
  scopes: list(body.scopes),
});

export const inputOfRow = (row: ApplicationRow): ApplicationInput => ({
  name: row.name,
  redirectUri: splitRedirectUris(row.redirect_uri).join('\n'),
  confidential: row.confidential === 1,
  scopes: splitScopes(row.scopes),
});

/**
 * Where a set of application pages lives: a user's own (User settings) or the instance-wide
 * ones (the admin area, whose frame the admin module gives).
 */
export interface ApplicationsArea {
  /** Where the pages answer and the forms post. */
  readonly base: string;
  /** The heading of the list of applications and what an empty one says. */
  readonly listTitle: string;
  readonly emptyText: string;
  /** Whether the page lists the applications the user authorized (their own settings only). */
  readonly authorized: boolean;
  /** The page frame: the layout with the area's own navigation and breadcrumbs. */
  frame: (props: { title: string; page: PageState; crumbs: Crumb[]; children: ComponentChildren }) => preact.VNode;
}

/** The signed-in user's own applications, under User settings. */
export const USER_APPLICATIONS: ApplicationsArea = {
  base: APPLICATIONS_PAGE,
  listTitle: 'Your applications',
  emptyText: 'You have not registered an application. Fill in the form above to let one sign people in with Basalt.',
  authorized: true,
  frame: ({ title, page, crumbs, children }) => (
    <Layout title={title} page={page} crumbs={crumbs}>
      <SettingsNav current="applications" />
      {children}
    </Layout>
  ),
};

export const EMPTY_INPUT: ApplicationInput = { name: '', redirectUri: '', confidential: true, scopes: [] };

const date = (ms: number) => new Date(ms).toISOString().slice(0, 10);

function FieldError({ id, error }: { id: string; error?: string | undefined }) {
  return error ? (
    <span class="field-error" id={`${id}-error`}>
      {error}
    </span>
  ) : null;
}

/** Name, redirect URIs, confidential and scopes, each with its message beside it after a refusal. */
function ApplicationFields({ input, errors, scopes }: { input: ApplicationInput; errors: FieldErrors; scopes: readonly string[] }) {
  return (
    <>
      <div class={errors.name ? 'field has-error' : 'field'}>
        <label for="application_name">Name</label>
        <input
          type="text"
          id="application_name"
          name="name"
          value={input.name}
          required
          maxLength={255}
          aria-invalid={errors.name ? 'true' : undefined}
          aria-describedby={errors.name ? 'application_name-error' : undefined}
        />
        <FieldError id="application_name" error={errors.name} />
      </div>
      <div class={errors.redirect_uri ? 'field has-error' : 'field'}>
        <label for="application_redirect_uri">Redirect URI (one per line)</label>
        <textarea
          id="application_redirect_uri"
          name="redirect_uri"
          rows={3}
          required
          aria-invalid={errors.redirect_uri ? 'true' : undefined}
          aria-describedby={errors.redirect_uri ? 'application_redirect_uri-error' : undefined}
        >
          {input.redirectUri}
        </textarea>
        <FieldError id="application_redirect_uri" error={errors.redirect_uri} />
      </div>
      <div class="field checkbox">
        <input type="checkbox" name="confidential" value="1" id="application_confidential" checked={input.confidential} />
        <label for="application_confidential">Confidential (the application can keep its secret on a server)</label>
      </div>
      <fieldset class={errors.scopes ? 'field scopes has-error' : 'field scopes'}>
        <legend>Scopes</legend>
        {scopes.map((scope) => (
          <div class="field checkbox" key={scope}>
            <input type="checkbox" name="scopes" value={scope} id={`scope_${scope}`} checked={input.scopes.includes(scope)} />
            <label for={`scope_${scope}`}>
              <strong>{scope}</strong> <span class="muted">{SCOPE_DESCRIPTIONS[scope] ?? ''}</span>
            </label>
          </div>
        ))}
        <FieldError id="scopes" error={errors.scopes} />
      </fieldset>
    </>
  );
}

export interface ApplicationsPageProps {
  area: ApplicationsArea;
  page: PageState;
  applications: readonly ApplicationRow[];
  authorizations: readonly Authorization[];
  scopes: readonly string[];
  input: ApplicationInput;
  errors: FieldErrors;
  /** Just created or renewed: its ID and secret, shown once, in this answer only. */
  revealed?: { application: ApplicationRow; secret: string } | undefined;
}

/** `/-/user_settings/applications`: the user's own applications, and the ones they authorized. */
export function ApplicationsPage({ area, page, applications, authorizations, scopes, input, errors, revealed }: ApplicationsPageProps) {
  const { csrf } = page;
  const base = area.base;
  const crumbs = area.authorized ? settingsCrumbs('applications') : [{ label: 'Applications' }];
  return area.frame({
    title: 'Applications',
    page,
    crumbs,
    children: (
      <>
        <h1>Applications</h1>
        {revealed ? (
          <section class="revealed" id="revealed" aria-labelledby="revealed-title">
            <h2 id="revealed-title">{revealed.application.name}</h2>
            <p>
              Application ID: <code id="application-id">{revealed.application.uid}</code>
            </p>
            <p>
              Secret: <code id="application-secret">{revealed.secret}</code>
            </p>
            <p class="muted">Copy the secret now: it is not shown again.</p>
          </section>
        ) : null}
        <section>
          <h2>Add new application</h2>
          <form method="post" action={base} id="new-application">
            <Csrf token={csrf} />
            <FormError errors={errors} />
            <ApplicationFields input={input} errors={errors} scopes={scopes} />
            <p>
              <button type="submit">Save application</button>
            </p>
          </form>
        </section>
        <section>
          <h2>
            {area.listTitle} ({applications.length})
          </h2>
          {applications.length === 0 ? (
            <p class="muted">{area.emptyText}</p>
          ) : (
            <table id="applications">
              <thead>
                <tr>
                  <th>Name</th>
                  <th>Application ID</th>
                  <th>Callback URLs</th>
                  <th>Scopes</th>
                  <th>Confidential</th>
                  <th>Actions</th>
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
                    <td class="actions">
                      <a href={`${base}/${app.id}/edit`}>Edit</a>{' '}
                      <ActionButton action={`${base}/${app.id}/renew`} csrf={csrf} label="Renew secret" kind="secondary" />{' '}
                      <ActionButton action={`${base}/${app.id}/delete`} csrf={csrf} label="Destroy" kind="danger" />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </section>
        {area.authorized ? (
          <section id="authorized-applications">
            <h2>Authorized applications ({authorizations.length})</h2>
            {authorizations.length === 0 ? (
              <EmptyState title="No authorized applications">
                Applications you allow to use your account appear here, and you can revoke their access at any time.
              </EmptyState>
            ) : (
              <table>
                <thead>
                  <tr>
                    <th>Name</th>
                    <th>Authorized</th>
                    <th>Scopes</th>
                    <th>Actions</th>
                  </tr>
                </thead>
                <tbody>
                  {authorizations.map((a) => (
                    <tr key={a.application.id} data-authorized-application-id={a.application.uid}>
                      <td>{a.application.name}</td>
                      <td>
                        <time datetime={new Date(a.authorizedAt).toISOString()}>{date(a.authorizedAt)}</time>
                      </td>
                      <td>{a.scopes.join(' ')}</td>
                      <td class="actions">
                        <ActionButton action={`${base}/authorized/${a.application.id}/revoke`} csrf={csrf} label="Revoke" kind="danger" />
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            )}
          </section>
        ) : null}
      </>
    ),
  });
}

export interface EditApplicationPageProps {
  area: ApplicationsArea;
  page: PageState;
  application: ApplicationRow;
  scopes: readonly string[];
  input: ApplicationInput;
  errors: FieldErrors;
}

/** `/-/user_settings/applications/:id/edit`: the owner changes what the application may ask for. */
export function EditApplicationPage({ area, page, application, scopes, input, errors }: EditApplicationPageProps) {
  const base = area.base;
  return area.frame({
    title: `Edit ${application.name}`,
    page,
    crumbs: [
      ...(area.authorized ? [{ label: 'User settings', href: '/-/user_settings/profile' }] : []),
      { label: 'Applications', href: base },
      { label: `Edit ${application.name}` },
    ],
    children: (
      <>
        <h1>Edit application</h1>
        <p class="break-anywhere">
          Application ID: <code>{application.uid}</code>
        </p>
        <form method="post" action={`${base}/${application.id}`} id="edit-application">
          <Csrf token={page.csrf} />
          <FormError errors={errors} />
          <ApplicationFields input={input} errors={errors} scopes={scopes} />
          <p class="muted">Tokens already issued keep the scopes they were granted.</p>
          <p>
            <button type="submit">Save changes</button> <a href={base}>Cancel</a>
          </p>
        </form>
      </>
    ),
  });
}
