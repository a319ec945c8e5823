import { Csrf } from '../../web/index.js';
import type { ProjectRow } from '../projects/index.js';
import { monitorSettingsPath } from './error-tracking.deps.js';
import type { SettingsService } from './settings.service.js';
import { trackerDsn } from './settings.service.js';

/** Keys listed on the page; a project rotates a handful at most (SPEC "Client key"). */
const KEYS_SHOWN = 20;

export interface ErrorTrackingSectionData {
  readonly enabled: boolean;
  /** Active keys' DSNs, newest last; inactive keys are listed without one. */
  readonly keys: readonly { id: number; publicKey: string; active: boolean; dsn: string | null }[];
}

/**
 * The error-tracking part of Settings > Monitor, which the alerts module's page includes:
 * this module owns what it shows and the toggle's route (pages.routes.ts).
 */
export interface ErrorTrackingSettingsSection {
  data(project: ProjectRow): Promise<ErrorTrackingSectionData>;
  /** Drawn inside the page's `<main>`, with the page's CSRF token for its form. */
  render(project: ProjectRow, data: ErrorTrackingSectionData, csrf: string): preact.VNode;
}

export function errorTrackingSettingsSection(settings: SettingsService, externalUrl: string): ErrorTrackingSettingsSection {
  return {
    async data(project) {
      const [row, keys] = await Promise.all([settings.find(project.id), settings.listKeys(project.id, KEYS_SHOWN, 0)]);
      return {
        enabled: row?.active === 1 && row.integrated === 1,
        keys: keys.rows.map((key) => ({
          id: key.id,
          publicKey: key.public_key,
          active: key.active === 1,
          dsn: key.active === 1 ? trackerDsn(externalUrl, key.public_key, project.id) : null,
        })),
      };
    },
    render: (project, data, csrf) => <ErrorTrackingSettings project={project} data={data} csrf={csrf} />,
  };
}

/** The toggle's form action, under the settings page. */
export const errorTrackingSettingsAction = (fullPath: string): string => `${monitorSettingsPath(fullPath)}/error_tracking`;

function ErrorTrackingSettings({ project, data, csrf }: { project: ProjectRow; data: ErrorTrackingSectionData; csrf: string }) {
  const active = data.keys.filter((key) => key.dsn !== null);
  return (
    <section id="error-tracking-settings" aria-labelledby="error-tracking-heading">
      <h2 id="error-tracking-heading">Error tracking</h2>
      <p>
        Error tracking is <strong id="error-tracking-state">{data.enabled ? 'enabled' : 'disabled'}</strong>.{' '}
        {data.enabled
          ? 'Sentry SDKs send errors to the DSN below; they are grouped under Monitor > Error tracking.'
          : 'Enable it to receive errors from your application through a Sentry SDK.'}
      </p>
      <form method="post" action={errorTrackingSettingsAction(project.full_path)} class="inline-action">
        <Csrf token={csrf} />
        <input type="hidden" name="active" value={data.enabled ? 'false' : 'true'} />
        <button type="submit" class={data.enabled ? 'secondary' : undefined}>
          {data.enabled ? 'Disable error tracking' : 'Enable error tracking'}
        </button>
      </form>
      {data.enabled && active.length > 0 ? (
        <>
          <h3>Data Source Name (DSN)</h3>
          <p class="muted">Configure your application's Sentry SDK with this DSN.</p>
          {active.map((key) => (
            <p>
              <code class="dsn" data-key-id={String(key.id)}>
                {key.dsn}
              </code>
            </p>
          ))}
        </>
      ) : null}
      {data.keys.length > 0 ? (
        <>
          <h3>Client keys</h3>
          <ul id="client-keys">
            {data.keys.map((key) => (
              <li>
                <code>{key.publicKey}</code> <span class="muted">{key.active ? 'active' : 'inactive'}</span>
              </li>
            ))}
          </ul>
        </>
      ) : null}
    </section>
  );
}
