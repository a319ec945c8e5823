import { toIso } from '../../infra/clock.js';
import { Checkbox, CopyButton, Csrf } from '../../web/index.js';
import type { ProjectRow } from '../projects/index.js';
import { errorPagePath, monitorSettingsPath } from './error-tracking.deps.js';
import type { SettingsService } from './settings.service.js';
import { trackerDsn } from './settings.service.js';

/** Keys listed on the page; a project rotates a handful at most (SPEC "Client key"). */
const KEYS_SHOWN = 20;

export interface ErrorTrackingSectionData {
  readonly enabled: boolean;
  /** New and regressed errors mail the Maintainers and Owners (on until a setting says otherwise). */
  readonly emailNotifications: boolean;
  /** Oldest first; inactive keys are listed without a DSN. */
  readonly keys: readonly { id: number; publicKey: string; active: boolean; createdAt: number; dsn: string | null }[];
}

/**
 * The error-tracking part of Settings > Monitor, which the alerts module's page includes:
 * this module owns what it shows and the routes its forms post to (pages.routes.ts).
 */
export interface ErrorTrackingSettingsSection {
  data(project: ProjectRow): Promise<ErrorTrackingSectionData>;
  /** Drawn inside the page's `<main>`, with the page's CSRF token for its forms. */
  render(project: ProjectRow, data: ErrorTrackingSectionData, csrf: string): preact.VNode;
}

export function errorTrackingSettingsSection(settings: SettingsService, externalUrl: string): ErrorTrackingSettingsSection {
  return {
    async data(project) {
      const [row, keys] = await Promise.all([settings.find(project.id), settings.listKeys(project.id, KEYS_SHOWN, 0)]);
      return {
        enabled: row?.active === 1 && row.integrated === 1,
        emailNotifications: row ? row.email_notifications === 1 : true,
        keys: keys.rows.map((key) => ({
          id: key.id,
          publicKey: key.public_key,
          active: key.active === 1,
          createdAt: key.created_at,
          dsn: key.active === 1 ? trackerDsn(externalUrl, key.public_key, project.id) : null,
        })),
      };
    },
    render: (project, data, csrf) => <ErrorTrackingSettings project={project} data={data} csrf={csrf} />,
  };
}

/** The forms' actions, under the settings page. */
export const errorTrackingSettingsAction = (fullPath: string): string => `${monitorSettingsPath(fullPath)}/error_tracking`;
export const clientKeysAction = (fullPath: string): string => `${errorTrackingSettingsAction(fullPath)}/client_keys`;
export const revokeKeyAction = (fullPath: string, keyId: number): string => `${clientKeysAction(fullPath)}/${keyId}/revoke`;

/**
 * Setup snippets for the SDKs of SPEC's table (language, tested version), each the least an
 * application needs: initialise with the DSN. A release set turns on release health in the SDKs
 * that send sessions.
 */
export const SDK_SNIPPETS: readonly { id: string; language: string; version: string; install: string; code: (dsn: string) => string }[] = [
  {
    id: 'go',
    language: 'Go',
    version: '0.20.0',
    install: 'go get github.com/getsentry/sentry-go',
    code: (dsn) => `sentry.Init(sentry.ClientOptions{Dsn: "${dsn}"})\ndefer sentry.Flush(2 * time.Second)`,
  },
  {
    id: 'java',
    language: 'Java',
    version: '6.18.1',
    install: 'implementation "io.sentry:sentry:6.18.1"',
    code: (dsn) => `import io.sentry.Sentry;\n\nSentry.init(options -> options.setDsn("${dsn}"));`,
  },
  {
    id: 'node',
    language: 'Node.js',
    version: '7.38.0',
    install: 'npm install @sentry/node@7',
    code: (dsn) => `const Sentry = require('@sentry/node');\n\nSentry.init({ dsn: '${dsn}', release: 'my-app@1.0.0' });`,
  },
  {
    id: 'php',
    language: 'PHP',
    version: '3.18.0',
    install: 'composer require sentry/sdk',
    code: (dsn) => `\\Sentry\\init(['dsn' => '${dsn}']);`,
  },
  {
    id: 'python',
    language: 'Python',
    version: '1.21.0',
    install: 'pip install sentry-sdk',
    code: (dsn) => `import sentry_sdk\n\nsentry_sdk.init(dsn="${dsn}", release="my-app@1.0.0")`,
  },
  {
    id: 'ruby',
    language: 'Ruby',
    version: '5.9.0',
    install: 'gem install sentry-ruby',
    code: (dsn) => `require 'sentry-ruby'\n\nSentry.init { |config| config.dsn = '${dsn}' }`,
  },
  {
    id: 'rust',
    language: 'Rust',
    version: '0.31.0',
    install: 'cargo add sentry',
    code: (dsn) =>
      `let _guard = sentry::init(("${dsn}", sentry::ClientOptions {\n    release: sentry::release_name!(),\n    ..Default::default()\n}));`,
  },
];

function ErrorTrackingSettings({ project, data, csrf }: { project: ProjectRow; data: ErrorTrackingSectionData; csrf: string }) {
  const active = data.keys.filter((key) => key.dsn !== null);
  // The newest active key's DSN is the one to give SDKs: after a rotation it is the new key's.
  const dsn = active[active.length - 1]?.dsn ?? null;
  return (
    <section id="error-tracking-settings" aria-labelledby="error-tracking-heading">
      <h2 id="error-tracking-heading">Error tracking</h2>
      <p>
        Error tracking is <strong id="error-tracking-state">{data.enabled ? 'enabled' : 'disabled'}</strong>.{' '}
        {data.enabled ? (
          <>
            Sentry SDKs send errors to the DSN below; they are grouped under{' '}
            <a href={errorPagePath(project.full_path)}>Monitor &gt; Error tracking</a>.
          </>
        ) : (
          'Enable it to receive errors from your application through a Sentry SDK.'
        )}
      </p>
      <form method="post" action={errorTrackingSettingsAction(project.full_path)} class="et-toggle">
        <Csrf token={csrf} />
        <Checkbox name="active" value="true" label="Active (integrated error tracking)" checked={data.enabled} />
        <Checkbox
          name="email_notifications"
          value="true"
          label="Email new and regressed errors to Maintainers and Owners"
          checked={data.emailNotifications}
        />
        <button type="submit">Save changes</button>
      </form>
      {data.enabled ? (
        <>
          <h3 id="dsn-heading">Data Source Name (DSN)</h3>
          {dsn ? (
            <div class="field">
              <label for="dsn">DSN</label>
              <div class="copy-row">
                <input id="dsn" type="text" readonly value={dsn} class="et-dsn" aria-describedby="dsn-hint" />
                <CopyButton target="dsn" what="DSN" />
              </div>
              <small class="hint" id="dsn-hint">
                Give it to your application's Sentry SDK; the field can also be selected and copied with Ctrl+C (⌘C on a Mac).
              </small>
            </div>
          ) : (
            <p class="flash flash-error" role="alert" id="no-active-key">
              No client key is active, so no SDK can send errors: create a key below.
            </p>
          )}
          <h3>Set up an SDK</h3>
          <div class="et-snippets" id="setup-snippets">
            {SDK_SNIPPETS.map((sdk, i) => (
              <details id={`snippet-${sdk.id}`} open={i === 2 ? true : undefined}>
                <summary>
                  {sdk.language} <span class="muted small">(tested with {sdk.version})</span>
                </summary>
                <pre>
                  <code>{`${sdk.install}\n\n${sdk.code(dsn ?? '<DSN>')}`}</code>
                </pre>
              </details>
            ))}
          </div>
        </>
      ) : null}
      <h3>Client keys</h3>
      <p class="muted">
        To rotate a key: create a new key, give its DSN to your SDKs, then revoke the old key. SDKs using a revoked key's DSN are refused.
      </p>
      {data.keys.length === 0 ? (
        <p class="muted">No client key yet: enabling error tracking creates one.</p>
      ) : (
        <ul class="item-list" id="client-keys">
          {data.keys.map((key) => (
            <li data-key-id={String(key.id)}>
              <div class="page-head">
                <div>
                  <code class="et-public-key">{key.publicKey}</code>{' '}
                  <span class={key.active ? 'badge et-status-resolved' : 'badge'}>{key.active ? 'active' : 'inactive'}</span>{' '}
                  <span class="muted small">created {toIso(key.createdAt).slice(0, 10)}</span>
                  {key.dsn ? (
                    <div class="copy-row">
                      <span class="muted small et-key-dsn" id={`key-dsn-${key.id}`}>
                        {key.dsn}
                      </span>
                      <CopyButton target={`key-dsn-${key.id}`} what={`DSN of key ${key.publicKey.slice(0, 13)}…`} />
                    </div>
                  ) : null}
                </div>
                <details class="et-confirm">
                  <summary class="button danger">Revoke</summary>
                  <form method="post" action={revokeKeyAction(project.full_path, key.id)}>
                    <Csrf token={csrf} />
                    <p>SDKs using this key's DSN will be refused. This cannot be undone.</p>
                    <button type="submit" class="danger">
                      Revoke key {key.publicKey.slice(0, 13)}…
                    </button>
                  </form>
                </details>
              </div>
            </li>
          ))}
        </ul>
      )}
      <form method="post" action={clientKeysAction(project.full_path)} class="inline-action">
        <Csrf token={csrf} />
        <button type="submit" class="secondary">
          Create key
        </button>
      </form>
    </section>
  );
}
