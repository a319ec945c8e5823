import { Flash, Layout } from '../../web/layout.js';
import { LEVELS, type Level } from './notifications.levels.js';

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
}

export interface NotificationsPageProps {
  username: string;
  csrf: string;
  level: Level;
  email: string;
  primaryEmail: string;
  verifiedEmails: string[];
  groups: SourceEntry[];
  projects: SourceEntry[];
  notice?: string | undefined;
  error?: string | undefined;
}

function LevelSelect({ id, value, withGlobal }: { id: string; value: Level; withGlobal: boolean }) {
  return (
    <select id={id} name="level">
      {LEVELS.filter((l) => withGlobal || l !== 'global').map((l) => (
        <option value={l} selected={l === value}>
          {LEVEL_LABELS[l]}
        </option>
      ))}
    </select>
  );
}

function SourceTable({ title, rows, csrf }: { title: string; rows: SourceEntry[]; csrf: string }) {
  return (
    <section>
      <h2>{title}</h2>
      {rows.length === 0 ? (
        <p class="muted">None.</p>
      ) : (
        <table>
          <tbody>
            {rows.map((row) => (
              <tr id={`${row.kind}-${row.id}`}>
                <td>{row.name}</td>
                <td class="actions">
                  <form method="post" action={`/-/profile/notifications/${row.kind}/${row.id}`}>
                    <input type="hidden" name="authenticity_token" value={csrf} />
                    <label class="muted" for={`level-${row.kind}-${row.id}`}>
                      Level{' '}
                    </label>
                    <LevelSelect id={`level-${row.kind}-${row.id}`} value={row.level} withGlobal={true} />{' '}
                    <button type="submit">Save</button>
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
  const { csrf } = props;
  const emails = [...new Set([props.primaryEmail, ...props.verifiedEmails])];
  return (
    <Layout title="Notifications" username={props.username} csrf={csrf}>
      <h1>Notifications</h1>
      {props.error ? <Flash kind="error">{props.error}</Flash> : null}
      {props.notice ? <Flash kind="notice">{props.notice}</Flash> : null}
      <section>
        <h2>Global notification settings</h2>
        <form method="post" action="/-/profile/notifications" class="stacked" id="global-notifications">
          <input type="hidden" name="authenticity_token" value={csrf} />
          <label for="global-level">Global notification level</label>
          <LevelSelect id="global-level" value={props.level} withGlobal={false} />
          <label for="notification-email">Notification email</label>
          <select id="notification-email" name="notification_email">
            {emails.map((e) => (
              <option value={e === props.primaryEmail ? '' : e} selected={e === props.email}>
                {e === props.primaryEmail ? `${e} (primary)` : e}
              </option>
            ))}
          </select>
          <p>
            <button type="submit">Save</button>
          </p>
        </form>
      </section>
      <SourceTable title="Groups" rows={props.groups} csrf={csrf} />
      <SourceTable title="Projects" rows={props.projects} csrf={csrf} />
    </Layout>
  );
}

export const notificationsPage = (props: NotificationsPageProps) => <NotificationsPage {...props} />;
