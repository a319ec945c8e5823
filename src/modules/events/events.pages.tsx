import { EmptyState, Layout, type Crumb, type PageState, type ProjectNavProps } from '../../web/index.js';

/** One line of an activity list, already put into words (events.page-routes.ts). */
export interface ActivityItem {
  id: number;
  author: string;
  authorName: string;
  action: string;
  target: string;
  /** The page of what the event is about (an issue), when there is one. */
  targetHref: string | null;
  detail: string | null;
  at: string;
  /** The project, on lists that span projects (the dashboard). */
  project: { name: string; fullPath: string } | null;
}

export const ACTIVITY_FILTERS: [string, string][] = [
  ['all', 'All'],
  ['push', 'Push events'],
  ['issue', 'Issue events'],
  ['comments', 'Comments'],
  ['team', 'Team'],
];

/** Events, newest first: who did what, to what, when. */
export function ActivityList({ items, empty }: { items: readonly ActivityItem[]; empty: preact.VNode }) {
  if (items.length === 0) return empty;
  return (
    <ul class="item-list activity" id="activity">
      {items.map((item) => (
        <li key={item.id} id={`event-${item.id}`}>
          <a href={`/${item.author}`} title={item.authorName}>
            <strong>{item.author}</strong>
          </a>{' '}
          {item.action} {item.targetHref ? <a href={item.targetHref}>{item.target}</a> : item.target}
          {item.project ? (
            <>
              {' '}
              in <a href={`/${item.project.fullPath}`}>{item.project.fullPath}</a>
            </>
          ) : null}
          {item.detail ? <div class="muted">{item.detail}</div> : null}
          <div class="muted small">
            <time datetime={item.at}>{item.at.slice(0, 16).replace('T', ' ')}</time>
          </div>
        </li>
      ))}
    </ul>
  );
}

export interface ActivityPageProps {
  basePath: string;
  filter: string;
  items: ActivityItem[];
  pageNumber: number;
  hasNext: boolean;
}

/** The body of a project's activity page (`/<full_path>/-/activity`), in the layout the route gives. */
export function ActivityPage(props: ActivityPageProps) {
  const link = (filter: string, page = 1) => `${props.basePath}?filter=${filter}${page > 1 ? `&page=${page}` : ''}`;
  return (
    <>
      <h1>Activity</h1>
      <nav class="tabs" aria-label="Filter">
        {ACTIVITY_FILTERS.map(([key, label]) => (
          <a key={key} href={link(key)} aria-current={key === props.filter ? 'page' : undefined}>
            {label}
          </a>
        ))}
      </nav>
      <ActivityList
        items={props.items}
        empty={
          <p class="muted" id="no-activity">
            No activity yet.
          </p>
        }
      />
      {props.pageNumber > 1 || props.hasNext ? (
        <nav class="pager" aria-label="Pages">
          {props.pageNumber > 1 ? <a href={link(props.filter, props.pageNumber - 1)}>Newer</a> : null}
          {props.hasNext ? <a href={link(props.filter, props.pageNumber + 1)}>Older</a> : null}
        </nav>
      ) : null}
    </>
  );
}

/** The dashboard's empty activity: what to do to have some. */
export const NoActivity = () => (
  <EmptyState title="No activity yet" action={{ href: '/projects/new', label: 'Create a project' }}>
    What happens in your projects (issues, comments, pushes) shows here.
  </EmptyState>
);

/** The whole page: the activity in the layout, with the project's navigation. */
export function projectActivityPage(
  props: ActivityPageProps & { page: PageState; title: string; crumbs: Crumb[]; project: ProjectNavProps },
) {
  const { page, title, crumbs, project, ...body } = props;
  return (
    <Layout title={title} page={page} crumbs={crumbs} project={project}>
      <ActivityPage {...body} />
    </Layout>
  );
}
