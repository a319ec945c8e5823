import { Csrf, FormError, Layout, type FieldErrors, type PageState } from '../../web/index.js';
import { SettingsNav, settingsCrumbs } from '../identity/index.js';
import { LEVELS, type Level, type NotificationEvent } from './notifications.levels.js';

const LEVEL_LABELS: Record<Level, string> = {
  global: 'Global (use your global setting)',
  watch: 'Watch (most activity)',
  participating: 'Participate (threads you take part in)',
  mention: 'On mention',
  custom: 'Custom (selected events)',
  disabled: 'Disabled',
};

export interface SourceEntry {
  kind: 'groups' | 'projects';
  id: number;
  name: string;
  level: Level;
  /** The Custom level's events this kind of setting has (the API decides), and which are on. */
  events: readonly EventChoice[];
}

export interface EventChoice {
  name: NotificationEvent;
  on: boolean;
}

const EVENT_LABELS: Partial<Record<NotificationEvent, string>> = {
  success_pipeline: 'Successful pipeline',
  merge_when_pipeline_succeeds: 'Merge when pipeline succeeds',
  change_reviewer_merge_request: 'Change reviewer of a merge request',
  approver: 'Approver (merge requests awaiting your approval)',
};
const eventLabel = (event: NotificationEvent) =>
  EVENT_LABELS[event] ?? `${event.charAt(0).toUpperCase()}${event.slice(1).replace(/_/g, ' ')}`;

/**
 * The Custom level's events, saved with the level by the same form (no script: the list is
 * always in the form, opened when the level is Custom). The hidden field says the list was
 * shown, so an unticked box is saved as off.
 */
function CustomEvents({ id, events, open }: { id: string; events: readonly EventChoice[]; open: boolean }) {
  return (
    <details class="custom-events" open={open}>
      <summary>Custom events</summary>
      <input type="hidden" name="custom_events" value="1" />
      <fieldset class="field">
        <legend>Notify me of these events when the level is Custom</legend>
        {events.map((event) => (
          <div class="field checkbox">
            <input id={`${id}-${event.name}`} type="checkbox" name={event.name} value="true" checked={event.on} />
            <label for={`${id}-${event.name}`}>{eventLabel(event.name)}</label>
          </div>
        ))}
      </fieldset>
    </details>
  );
}

export interface NotificationsPageProps {
  page: PageState;
  level: Level;
  /** The global setting's Custom events. */
  events: readonly EventChoice[];
  /** Whether SMTP is configured: without it the page says no e-mail is sent. */
  mailEnabled: boolean;
  email: string;
  primaryEmail: string;
  verifiedEmails: string[];
  groups: SourceEntry[];
  projects: SourceEntry[];
  /** A refusal: `level` or `notification_email` beside the global form's field, `_` above the forms. */
  errors: FieldErrors;
}

function LevelSelect({ id, value, withGlobal, error }: { id: string; value: Level; withGlobal: boolean; error?: string | undefined }) {
  return (
    <select id={id} name="level" aria-invalid={error ? 'true' : undefined} aria-describedby={error ? `${id}-error` : undefined}>
      {LEVELS.filter((l) => withGlobal || l !== 'global').map((l) => (
        <option value={l} selected={l === value}>
          {LEVEL_LABELS[l]}
        </option>
      ))}
    </select>
  );
}

function SourceTable({ title, rows, csrf, empty }: { title: string; rows: SourceEntry[]; csrf: string; empty: string }) {
  return (
    <section>
      <h2>{title}</h2>
      {rows.length === 0 ? (
        <p class="muted">{empty}</p>
      ) : (
        <table class="notification-sources">
          <tbody>
            {rows.map((row) => (
              <tr id={`${row.kind}-${row.id}`}>
                <td class="source-name">{row.name}</td>
                <td class="actions">
                  <form method="post" action={`/-/profile/notifications/${row.kind}/${row.id}`}>
                    <Csrf token={csrf} />
                    <label class="muted" for={`level-${row.kind}-${row.id}`}>
                      Level{' '}
                    </label>
                    <LevelSelect id={`level-${row.kind}-${row.id}`} value={row.level} withGlobal={true} />{' '}
                    <button type="submit">Save</button>
                    <CustomEvents id={`events-${row.kind}-${row.id}`} events={row.events} open={row.level === 'custom'} />
                  </form>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

/** `GET /-/profile/notifications`: the signed-in user's global, group and project settings. */
export function NotificationsPage(props: NotificationsPageProps) {
  const { page, errors } = props;
  const { csrf } = page;
  const emails = [...new Set([props.primaryEmail, ...props.verifiedEmails])];
  return (
    <Layout title="Notifications" page={page} crumbs={settingsCrumbs('notifications')}>
      <SettingsNav current="notifications" />
      <h1>Notifications</h1>
      <FormError errors={errors} />
      {props.mailEnabled ? null : (
        <p class="flash flash-error" id="mail-disabled">
          E-mail is not configured on this server (SMTP_URL is unset): these settings are kept, but no notification e-mail is sent.
        </p>
      )}
      <section>
        <h2>Global notification settings</h2>
        <form method="post" action="/-/profile/notifications" id="global-notifications">
          <Csrf token={csrf} />
          <div class={errors.level ? 'field has-error' : 'field'}>
            <label for="global-level">Global notification level</label>
            <LevelSelect id="global-level" value={props.level} withGlobal={false} error={errors.level} />
            <FieldMessage id="global-level" error={errors.level} />
          </div>
          <CustomEvents id="events-global" events={props.events} open={props.level === 'custom'} />
          <div class={errors.notification_email ? 'field has-error' : 'field'}>
            <label for="notification-email">Notification email</label>
            <select
              id="notification-email"
              name="notification_email"
              aria-invalid={errors.notification_email ? 'true' : undefined}
              aria-describedby={errors.notification_email ? 'notification-email-error' : undefined}
            >
              {emails.map((e) => (
                <option value={e === props.primaryEmail ? '' : e} selected={e === props.email}>
                  {e === props.primaryEmail ? `${e} (primary)` : e}
                </option>
              ))}
            </select>
            <FieldMessage id="notification-email" error={errors.notification_email} />
          </div>
          <p>
            <button type="submit">Save</button>
          </p>
        </form>
      </section>
      <SourceTable
        title="Groups"
        rows={props.groups}
        csrf={csrf}
        empty="You are not a member of a group. Each group you join appears here with its own level."
      />
      <SourceTable
        title="Projects"
        rows={props.projects}
        csrf={csrf}
        empty="You are not a member of a project. Each project you join or create appears here with its own level."
      />
    </Layout>
  );
}

function FieldMessage({ id, error }: { id: string; error?: string | undefined }) {
  return error ? (
    <span class="field-error" id={`${id}-error`}>
      {error}
    </span>
  ) : null;
}

export const notificationsPage = (props: NotificationsPageProps) => <NotificationsPage {...props} />;
