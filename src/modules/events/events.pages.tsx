import { Flash, Layout } from '../../web/layout.js';

/** One line of the activity list, already put into words by the route. */
export interface ActivityItem {
  id: number;
  author: string;
  authorName: string;
  action: string;
  target: string;
  detail: string | null;
  at: string;
}

export interface ActivityPageProps {
  projectName: string;
  projectPath: string;
  basePath: string;
  username: string | null;
  csrf: string | undefined;
  filter: string;
  items: ActivityItem[];
  page: number;
  hasNext: boolean;
  error?: string | undefined;
}

const FILTERS: [string, string][] = [
  ['all', 'All'],
  ['push', 'Push events'],
  ['issue', 'Issue events'],
  ['comments', 'Comments'],
  ['team', 'Team'],
];

/** `GET /-/projects/:id/activity`: a project's activity events, newest first. */
export function ActivityPage(props: ActivityPageProps) {
  const link = (filter: string, page = 1) => `${props.basePath}?filter=${filter}${page > 1 ? `&page=${page}` : ''}`;
  return (
    <Layout title={`Activity · ${props.projectName}`} username={props.username} csrf={props.csrf}>
      <h1>Activity</h1>
      <p class="muted">{props.projectPath}</p>
      <nav class="actions" aria-label="Filter">
        {FILTERS.map(([key, label]) => (
          <>{key === props.filter ? <strong>{label}</strong> : <a href={link(key)}>{label}</a>} </>
        ))}
      </nav>
      {props.error ? <Flash kind="error">{props.error}</Flash> : null}
      {props.items.length === 0 ? (
        <p class="muted" id="no-activity">
          No activity yet.
        </p>
      ) : (
        <table id="activity">
          <tbody>
            {props.items.map((item) => (
              <tr id={`event-${item.id}`}>
                <td>
                  <strong title={item.authorName}>{item.author}</strong> {item.action} {item.target}
                  {item.detail ? <div class="muted">{item.detail}</div> : null}
                </td>
                <td class="muted">
                  <time datetime={item.at}>{item.at.slice(0, 16).replace('T', ' ')}</time>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <p>
        {props.page > 1 ? <a href={link(props.filter, props.page - 1)}>Newer</a> : null}{' '}
        {props.hasNext ? <a href={link(props.filter, props.page + 1)}>Older</a> : null}
      </p>
    </Layout>
  );
}

export const activityPage = (props: ActivityPageProps) => <ActivityPage {...props} />;
