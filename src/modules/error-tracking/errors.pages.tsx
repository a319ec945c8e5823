import { ERROR_STATUSES, type ErrorStatus } from '../../infra/db/tables/error-tracking.js';
import { EmptyState, Layout, type Crumb, type PageState, type ProjectNavProps } from '../../web/index.js';
import type { ProjectRow } from '../projects/index.js';
import { BarChart, Sparkline } from './error-charts.views.js';
import { EventSection, when } from './error-event.views.js';
import type { StackTrace } from './errors.presenter.js';
import { COUNT_CAP, type ErrorSort } from './errors.repository.js';
import { dailyOf } from './charts.rules.js';
import type { ErrorDetails, ErrorListPage, EventView } from './errors.service.js';
import { errorPagePath, monitorSettingsPath } from './error-tracking.deps.js';

/** The list's tabs: one per error status, then every error. */
export const STATUS_TABS = [...ERROR_STATUSES, 'all'] as const;
export type StatusTab = (typeof STATUS_TABS)[number];

const TAB_LABEL: Record<StatusTab, string> = { unresolved: 'Unresolved', resolved: 'Resolved', ignored: 'Ignored', all: 'All' };
const SORTS: readonly [ErrorSort, string][] = [
  ['last_seen', 'Last seen'],
  ['first_seen', 'First seen'],
  ['frequency', 'Frequency'],
];

/** Where the DSN and the setup snippets are (Settings > Monitor's error tracking section). */
export const setupPath = (fullPath: string) => `${monitorSettingsPath(fullPath)}#error-tracking-settings`;
export const releasesPath = (fullPath: string) => `${errorPagePath(fullPath)}/releases`;

/** A count the pages capped: "1,000+" past COUNT_CAP. */
const counted = (n: number) => (n > COUNT_CAP ? `${COUNT_CAP.toLocaleString('en')}+` : n.toLocaleString('en'));

/** What every error page is drawn in: the layout's page state, breadcrumbs and project navigation. */
export interface ErrorsFrame {
  page: PageState;
  crumbs: readonly Crumb[];
  nav: ProjectNavProps;
}

/** The list's query: tab, sort, search, environment, release, page. */
export interface ListQueryState {
  status: StatusTab;
  sort: ErrorSort;
  search: string;
  environment: string;
  release: string;
  page: number;
}

export interface ListPageProps {
  frame: ErrorsFrame;
  project: ProjectRow;
  /** Whether the caller may set error tracking up (Maintainer): the empty list links to the DSN. */
  canSetUp: boolean;
  /** The project has no error at all (whatever the tab and filters). */
  empty: boolean;
  list: ErrorListPage;
  counts: Map<ErrorStatus, number>;
  query: ListQueryState;
}

function listUrl(fullPath: string, q: ListQueryState): string {
  const params = new URLSearchParams({ status: q.status, sort: q.sort });
  if (q.search) params.set('search', q.search);
  if (q.environment) params.set('environment', q.environment);
  if (q.release) params.set('release', q.release);
  if (q.page > 1) params.set('page', String(q.page));
  return `${errorPagePath(fullPath)}?${params.toString()}`;
}

/** Errors | Release health, above both pages. */
function SubNav({ fullPath, current }: { fullPath: string; current: 'errors' | 'releases' }) {
  return (
    <nav class="tabs" aria-label="Error tracking">
      <a href={errorPagePath(fullPath)} aria-current={current === 'errors' ? 'page' : undefined}>
        Errors
      </a>
      <a href={releasesPath(fullPath)} aria-current={current === 'releases' ? 'page' : undefined}>
        Release health
      </a>
    </nav>
  );
}

/** The error list: status tabs with counts, search, filters, sort, a sparkline per row, pages. */
export function ErrorListBody(props: Omit<ListPageProps, 'frame'>) {
  const { project, list, query } = props;
  const all = [...props.counts.values()].reduce((a, b) => a + b, 0);
  const tabCount = (s: StatusTab) => (s === 'all' ? all : (props.counts.get(s) ?? 0));
  return (
    <>
      <h1>Errors</h1>
      <SubNav fullPath={project.full_path} current="errors" />
      <nav class="tabs et-status-tabs" aria-label="Status">
        {STATUS_TABS.map((s) => (
          <a href={listUrl(project.full_path, { ...query, status: s, page: 1 })} aria-current={s === query.status ? 'page' : undefined}>
            {TAB_LABEL[s]} <span class="badge">{counted(tabCount(s))}</span>
          </a>
        ))}
      </nav>
      <form method="get" action={errorPagePath(project.full_path)} class="et-filters" role="search" aria-label="Filter errors">
        <input type="hidden" name="status" value={query.status} />
        <div class="field">
          <label for="errors-search">Search</label>
          <input
            type="search"
            id="errors-search"
            name="search"
            value={query.search}
            maxLength={255}
            placeholder="Title, message or culprit"
          />
        </div>
        <div class="field">
          <label for="errors-environment">Environment</label>
          <input type="text" id="errors-environment" name="environment" value={query.environment} maxLength={255} placeholder="Any" />
        </div>
        <div class="field">
          <label for="errors-release">Release</label>
          <input type="text" id="errors-release" name="release" value={query.release} maxLength={255} placeholder="Any" />
        </div>
        <div class="field">
          <label for="errors-sort">Sort by</label>
          <select id="errors-sort" name="sort">
            {SORTS.map(([value, label]) => (
              <option value={value} selected={value === query.sort}>
                {label}
              </option>
            ))}
          </select>
        </div>
        <button type="submit">Apply</button>
      </form>
      {list.count !== null ? (
        <p class="muted" id="error-total">
          {counted(list.count)} {list.count === 1 ? 'error' : 'errors'}
        </p>
      ) : null}
      {props.empty ? (
        <NoErrors project={project} canSetUp={props.canSetUp} />
      ) : list.rows.length === 0 ? (
        <p id="no-errors">No errors match.</p>
      ) : (
        <table id="errors" class="et-list">
          <thead>
            <tr>
              <th>Error</th>
              <th>Last 24 hours</th>
              <th>Events</th>
              <th>Users</th>
              <th>First seen</th>
              <th>Last seen</th>
              <th>Status</th>
            </tr>
          </thead>
          <tbody>
            {list.rows.map((row) => (
              <tr data-error-id={String(row.id)}>
                <td class="et-wrap">
                  <a href={errorPagePath(project.full_path, row.id)}>{row.title}</a>
                  <div class="muted small">{row.culprit}</div>
                </td>
                <td class="spark">
                  <Sparkline buckets={list.sparklines.get(row.id) ?? []} />
                </td>
                <td class="events">{row.events_count}</td>
                <td class="users">{list.users.get(row.id) ?? 0}</td>
                <td>{when(row.first_seen_at)}</td>
                <td>{when(row.last_seen_at)}</td>
                <td class={`et-status-${row.status}`}>{row.status}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <nav class="pager" aria-label="Pages">
        {query.page > 1 ? (
          <a rel="prev" href={listUrl(project.full_path, { ...query, page: query.page - 1 })}>
            ← Previous
          </a>
        ) : null}
        <span class="muted">Page {query.page}</span>
        {list.more ? (
          <a rel="next" href={listUrl(project.full_path, { ...query, page: query.page + 1 })}>
            Next →
          </a>
        ) : null}
      </nav>
    </>
  );
}

/**
 * The list page around a list drawn by ErrorListBody (from escaped values) and kept as HTML
 * (pages.routes.ts): only the layout is drawn per view.
 */
export function ErrorListPageView({ frame, project, html }: { frame: ErrorsFrame; project: ProjectRow; html: string }) {
  return (
    <Layout title={`Error tracking · ${project.name}`} page={frame.page} crumbs={frame.crumbs} project={frame.nav}>
      <div class="error-list" dangerouslySetInnerHTML={{ __html: html }} />
    </Layout>
  );
}

/** An empty list says how errors get here: the DSN and setup snippets, for those who may see them. */
function NoErrors({ project, canSetUp }: { project: ProjectRow; canSetUp: boolean }) {
  return (
    <div id="no-errors">
      <EmptyState
        title="No errors yet"
        {...(canSetUp ? { action: { href: setupPath(project.full_path), label: 'Get the DSN and setup snippets' } } : {})}
      >
        {canSetUp
          ? 'Enable error tracking on Settings > Monitor and give its DSN to a Sentry SDK in your application (snippets for Go, Java, Node.js, PHP, Python, Ruby and Rust are there): errors it sends are grouped here.'
          : 'Errors appear here once a Maintainer enables error tracking and your application sends them with a Sentry SDK.'}
      </EmptyState>
    </div>
  );
}

export interface ErrorPageProps {
  frame: ErrorsFrame;
  project: ProjectRow;
  details: ErrorDetails;
  /** The event shown, or undefined when the error has none (or the one asked for is not its). */
  view: EventView | undefined;
  /** The event id asked for that the error does not have. */
  missingEvent: string | null;
  trace: StackTrace | null;
  canWrite: boolean;
}

function ActionForm({
  action,
  csrf,
  status,
  label,
  secondary,
}: {
  action: string;
  csrf: string;
  status?: string;
  label: string;
  secondary?: boolean;
}) {
  return (
    <form method="post" action={action}>
      <input type="hidden" name="authenticity_token" value={csrf} />
      {status ? <input type="hidden" name="status" value={status} /> : null}
      <button type="submit" class={secondary ? 'secondary' : undefined}>
        {label}
      </button>
    </form>
  );
}

/** One error: its numbers, charts, actions, and one of its events with navigation. */
export function ErrorPageView(props: ErrorPageProps) {
  const { project, details, frame, view } = props;
  const csrf = frame.page.csrf;
  const { error } = details;
  const base = errorPagePath(project.full_path, error.id);
  return (
    <Layout title={error.title} page={frame.page} crumbs={frame.crumbs} project={frame.nav}>
      <h1 id="error-title" class="et-wrap">
        {error.title}
      </h1>
      <p>
        <span class={`badge et-status-${error.status}`} id="error-status">
          {error.status}
        </span>{' '}
        <span class="muted et-wrap">{error.culprit}</span> <span class="muted">· {error.platform}</span>
      </p>
      {props.canWrite ? (
        <div class="actions et-actions" id="error-actions">
          {error.status !== 'resolved' ? <ActionForm action={`${base}/status`} csrf={csrf} status="resolved" label="Resolve" /> : null}
          {error.status !== 'ignored' ? (
            <ActionForm action={`${base}/status`} csrf={csrf} status="ignored" label="Ignore" secondary />
          ) : null}
          {error.status !== 'unresolved' ? (
            <ActionForm action={`${base}/status`} csrf={csrf} status="unresolved" label="Reopen" secondary />
          ) : null}
          {error.issue_iid === null ? <ActionForm action={`${base}/issue`} csrf={csrf} label="Create issue" secondary /> : null}
        </div>
      ) : null}
      {error.issue_iid !== null ? (
        <p id="linked-issue">
          Issue <a href={`/${project.full_path}/-/issues/${error.issue_iid}`}>#{error.issue_iid}</a> was created from this error.
        </p>
      ) : null}
      <div class="et-stats">
        <div>
          Occurrences <strong id="occurrences">{error.events_count}</strong>
        </div>
        <div>
          Users affected <strong id="users-affected">{details.userCount}</strong>
        </div>
        <div>
          First seen <strong id="first-seen">{when(error.first_seen_at)}</strong>
        </div>
        <div>
          Last seen <strong id="last-seen">{when(error.last_seen_at)}</strong>
        </div>
      </div>
      <div class="et-charts">
        <figure>
          <figcaption>Last 24 hours, events per hour</figcaption>
          <BarChart id="chart-24h" buckets={details.last24h} label="Events per hour, last 24 hours" unit="hour" labelEvery={6} />
        </figure>
        <figure>
          <figcaption>Last 30 days, events per day</figcaption>
          <BarChart
            id="chart-30d"
            buckets={dailyOf(details.last30d).slice(-30)}
            label="Events per day, last 30 days"
            unit="day"
            labelEvery={7}
          />
        </figure>
      </div>
      {props.missingEvent !== null ? (
        <p class="flash flash-error" role="alert" id="missing-event">
          This error has no event {props.missingEvent}; its latest event is shown.
        </p>
      ) : null}
      {view ? (
        <EventSection view={view} base={base} trace={props.trace} eventId={props.missingEvent ?? ''} />
      ) : (
        <p class="muted">This error has no stored event (events older than the retention period are deleted).</p>
      )}
    </Layout>
  );
}

export interface ReleaseHealthRow {
  release: string;
  environment: string;
  sessions: number;
  exited: number;
  errored: number;
  crashed: number;
  abnormal: number;
  crash_free_rate: number | null;
}

export interface ReleasesPageProps {
  frame: ErrorsFrame;
  project: ProjectRow;
  days: number;
  rows: ReleaseHealthRow[];
  page: number;
  more: boolean;
  canSetUp: boolean;
}

const percent = (rate: number | null) => (rate === null ? '—' : `${(Math.floor(rate * 10000) / 100).toFixed(2)} %`);

/** Release health: sessions and crash-free rate per release and environment over the last `days` days. */
export function ReleasesPageView(props: ReleasesPageProps) {
  const { project, frame, rows } = props;
  const url = (page: number) => `${releasesPath(project.full_path)}${page > 1 ? `?page=${page}` : ''}`;
  return (
    <Layout title={`Release health · ${project.name}`} page={frame.page} crumbs={frame.crumbs} project={frame.nav}>
      <h1>Release health</h1>
      <SubNav fullPath={project.full_path} current="releases" />
      <p class="muted">
        Sessions reported by Sentry SDKs over the last {props.days} days, per release and environment. A session is crash-free unless it
        crashed.
      </p>
      {rows.length === 0 ? (
        <EmptyState
          title="No sessions yet"
          {...(props.canSetUp ? { action: { href: setupPath(project.full_path), label: 'Get the DSN and setup snippets' } } : {})}
        >
          SDKs that track sessions (Python and Rust among the tested ones, with a release set) report them here.
        </EmptyState>
      ) : (
        <table id="releases">
          <thead>
            <tr>
              <th>Release</th>
              <th>Environment</th>
              <th>Sessions</th>
              <th>Crash-free</th>
              <th>Errored</th>
              <th>Crashed</th>
              <th>Abnormal</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((r) => (
              <tr>
                <td class="et-wrap">
                  <code>{r.release}</code>
                </td>
                <td>{r.environment}</td>
                <td class="sessions">{r.sessions}</td>
                <td class="crash-free">
                  <span class={r.crash_free_rate !== null && r.crash_free_rate < 0.99 ? 'et-status-unresolved' : 'et-status-resolved'}>
                    {percent(r.crash_free_rate)}
                  </span>
                  {r.crash_free_rate !== null ? (
                    <svg
                      class="et-meter"
                      viewBox="0 0 100 6"
                      width="100"
                      height="6"
                      role="img"
                      aria-label={`${percent(r.crash_free_rate)} crash-free`}
                    >
                      <rect class="et-meter-bg" x="0" y="0" width="100" height="6" />
                      <rect class="et-meter-fill" x="0" y="0" width={Math.round(r.crash_free_rate * 100)} height="6" />
                    </svg>
                  ) : null}
                </td>
                <td>{r.errored}</td>
                <td>{r.crashed}</td>
                <td>{r.abnormal}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <nav class="pager" aria-label="Pages">
        {props.page > 1 ? (
          <a rel="prev" href={url(props.page - 1)}>
            ← Previous
          </a>
        ) : null}
        <span class="muted">Page {props.page}</span>
        {props.more ? (
          <a rel="next" href={url(props.page + 1)}>
            Next →
          </a>
        ) : null}
      </nav>
    </Layout>
  );
}

export const errorListPage = (props: { frame: ErrorsFrame; project: ProjectRow; html: string }) => <ErrorListPageView {...props} />;
export const errorListBody = (props: Omit<ListPageProps, 'frame'>) => <ErrorListBody {...props} />;
export const errorPage = (props: ErrorPageProps) => <ErrorPageView {...props} />;
export const releasesPage = (props: ReleasesPageProps) => <ReleasesPageView {...props} />;
