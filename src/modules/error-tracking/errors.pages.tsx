import { toIso } from '../../infra/clock.js';
import { ERROR_STATUSES } from '../../infra/db/tables/error-tracking.js';
import { EmptyState, Layout, type Crumb, type PageState, type ProjectNavProps } from '../../web/index.js';
import type { ProjectRow } from '../projects/index.js';
import type { StackTrace } from './errors.presenter.js';
import type { ErrorRow, ErrorSort } from './errors.repository.js';
import type { Bucket, ErrorDetails } from './errors.service.js';
import { errorPagePath, monitorSettingsPath } from './error-tracking.deps.js';

/** The list's tabs: one per error status, then every error. */
export const STATUS_TABS = [...ERROR_STATUSES, 'all'] as const;

const when = (ms: number) =>
  toIso(ms)
    .replace('T', ' ')
    .replace(/\.\d+Z$/, ' UTC');

/** What every error page is drawn in: the layout's page state, breadcrumbs and project navigation. */
export interface ErrorsFrame {
  page: PageState;
  crumbs: readonly Crumb[];
  nav: ProjectNavProps;
}

export interface ListPageProps {
  frame: ErrorsFrame;
  project: ProjectRow;
  /** Whether the caller may set error tracking up (Maintainer): the empty list links to Settings > Monitor. */
  canSetUp: boolean;
  /** The project has no error at all (whatever the tab and search). */
  empty: boolean;
  rows: ErrorRow[];
  users: Map<number, number>;
  status: (typeof STATUS_TABS)[number];
  sort: ErrorSort;
  search: string;
  page: number;
  totalPages: number;
  total: number;
}

function listUrl(fullPath: string, q: { status: string; sort: string; search: string; page?: number }): string {
  const params = new URLSearchParams({ status: q.status, sort: q.sort });
  if (q.search) params.set('search', q.search);
  if (q.page && q.page > 1) params.set('page', String(q.page));
  return `${errorPagePath(fullPath)}?${params.toString()}`;
}

/** The error list: status tabs, sort, search and pagination (DESIGN.md §4 "errors"). */
export function ErrorListPage(props: ListPageProps) {
  const { project, rows, users, status, sort, search, page, totalPages } = props;
  const q = { status, sort, search };
  const { frame } = props;
  return (
    <Layout title={`Error tracking · ${project.name}`} page={frame.page} crumbs={frame.crumbs} project={frame.nav}>
      <h1>Errors</h1>
      <nav class="et-tabs" aria-label="Status">
        {STATUS_TABS.map((s) => (
          <a
            href={listUrl(project.full_path, { ...q, status: s })}
            class={s === status ? 'current' : ''}
            aria-current={s === status ? 'page' : undefined}
          >
            {s[0]?.toUpperCase() + s.slice(1)}
          </a>
        ))}
      </nav>
      <form method="get" action={errorPagePath(project.full_path)} class="et-search" role="search">
        <input type="hidden" name="status" value={status} />
        <label>
          Search <input type="text" name="search" value={search} maxLength={255} />
        </label>{' '}
        <label>
          Sort{' '}
          <select name="sort">
            {(
              [
                ['last_seen', 'Last seen'],
                ['first_seen', 'First seen'],
                ['frequency', 'Frequency'],
              ] as const
            ).map(([value, label]) => (
              <option value={value} selected={value === sort}>
                {label}
              </option>
            ))}
          </select>
        </label>{' '}
        <button type="submit">Apply</button>
      </form>
      <p class="muted" id="error-total">
        {props.total} {props.total === 1 ? 'error' : 'errors'}
      </p>
      {props.empty ? (
        <NoErrors project={project} canSetUp={props.canSetUp} />
      ) : rows.length === 0 ? (
        <p id="no-errors">No errors match.</p>
      ) : (
        <table id="errors">
          <thead>
            <tr>
              <th>Error</th>
              <th>Events</th>
              <th>Users</th>
              <th>First seen</th>
              <th>Last seen</th>
              <th>Status</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((row) => (
              <tr data-error-id={String(row.id)}>
                <td>
                  <a href={errorPagePath(project.full_path, row.id)}>{row.title}</a>
                  <div class="muted">{row.culprit}</div>
                </td>
                <td class="events">{row.events_count}</td>
                <td class="users">{users.get(row.id) ?? 0}</td>
                <td>{when(row.first_seen_at)}</td>
                <td>{when(row.last_seen_at)}</td>
                <td class={`et-status-${row.status}`}>{row.status}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <nav aria-label="Pages">
        {page > 1 ? (
          <a rel="prev" href={listUrl(project.full_path, { ...q, page: page - 1 })}>
            ← Previous
          </a>
        ) : null}{' '}
        <span class="muted">
          Page {page} of {totalPages}
        </span>{' '}
        {page < totalPages ? (
          <a rel="next" href={listUrl(project.full_path, { ...q, page: page + 1 })}>
            Next →
          </a>
        ) : null}
      </nav>
    </Layout>
  );
}

/** Hourly bars; `label` names the chart for screen readers and tests. */
export function FrequencyChart({ buckets, label, id }: { buckets: Bucket[]; label: string; id: string }) {
  const height = 60;
  const barWidth = buckets.length > 100 ? 1 : 20;
  const width = buckets.length * barWidth;
  const max = Math.max(1, ...buckets.map((b) => b.count));
  const total = buckets.reduce((sum, b) => sum + b.count, 0);
  return (
    <svg
      id={id}
      class="et-chart"
      role="img"
      aria-label={`${label}: ${total} events`}
      viewBox={`0 0 ${width} ${height}`}
      width={width}
      height={height}
      data-total={String(total)}
    >
      <line class="et-axis" x1="0" y1={height - 0.5} x2={width} y2={height - 0.5} />
      {buckets.map((b, i) => {
        if (b.count === 0) return null;
        const h = Math.max(2, Math.round((b.count / max) * (height - 2)));
        return (
          <rect x={i * barWidth} y={height - h} width={Math.max(1, barWidth - 2)} height={h} data-count={String(b.count)}>
            {barWidth > 1 ? <title>{`${when(b.at)}: ${b.count}`}</title> : null}
          </rect>
        );
      })}
    </svg>
  );
}

function StackTraceView({ trace }: { trace: StackTrace | null }) {
  if (!trace || trace.frames.length === 0) return <p class="muted">No stack trace was sent with this error.</p>;
  return (
    <ol class="et-frames" id="stack-trace">
      {trace.frames.map((f) => (
        <li class={f.in_app ? 'et-frame in-app' : 'et-frame'} data-in-app={f.in_app ? 'true' : 'false'}>
          <code>{f.function ?? '?'}</code> <span class="muted">in</span> <code>{f.filename ?? f.module ?? '?'}</code>
          {f.lineno !== null ? <span class="muted"> line {f.lineno}</span> : null}
          {f.in_app ? <span class="badge">in app</span> : null}
          {f.context.length > 0 ? <pre>{f.context.map(([n, text]) => `${String(n).padStart(5)}  ${text}`).join('\n')}</pre> : null}
        </li>
      ))}
    </ol>
  );
}

export interface ErrorPageProps {
  frame: ErrorsFrame;
  project: ProjectRow;
  details: ErrorDetails;
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

/** One error: occurrences, users, first and last seen, hourly charts, stack trace, actions. */
export function ErrorPage(props: ErrorPageProps) {
  const { project, details, trace, frame } = props;
  const csrf = frame.page.csrf;
  const { error, latest } = details;
  const base = errorPagePath(project.full_path, error.id);
  return (
    <Layout title={error.title} page={frame.page} crumbs={frame.crumbs} project={frame.nav}>
      <h1 id="error-title">{error.title}</h1>
      <p>
        <span class={`badge et-status-${error.status}`} id="error-status">
          {error.status}
        </span>{' '}
        <span class="muted">{error.culprit}</span> <span class="muted">· {error.platform}</span>
      </p>
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
      {props.canWrite ? (
        <p class="actions">
          {error.status !== 'resolved' ? <ActionForm action={`${base}/status`} csrf={csrf} status="resolved" label="Resolve" /> : null}{' '}
          {error.status !== 'ignored' ? (
            <ActionForm action={`${base}/status`} csrf={csrf} status="ignored" label="Ignore" secondary />
          ) : null}{' '}
          {error.status !== 'unresolved' ? (
            <ActionForm action={`${base}/status`} csrf={csrf} status="unresolved" label="Reopen" secondary />
          ) : null}{' '}
          {error.issue_iid === null ? <ActionForm action={`${base}/issue`} csrf={csrf} label="Create issue" secondary /> : null}
        </p>
      ) : null}
      {error.issue_iid !== null ? (
        <p id="linked-issue">
          Issue <a href={`/${project.full_path}/-/issues/${error.issue_iid}`}>#{error.issue_iid}</a> was created from this error.
        </p>
      ) : null}
      <h2>Last 24 hours</h2>
      <FrequencyChart id="chart-24h" buckets={details.last24h} label="Events per hour, last 24 hours" />
      <h2>Last 30 days</h2>
      <FrequencyChart id="chart-30d" buckets={details.last30d} label="Events per hour, last 30 days" />
      <h2>Stack trace</h2>
      {trace?.type || trace?.value ? (
        <p>
          <code>{[trace.type, trace.value].filter(Boolean).join(': ')}</code>
        </p>
      ) : null}
      <StackTraceView trace={trace} />
      {latest ? (
        <p class="muted" id="latest-event">
          Latest event {latest.event_id} · {latest.level}
          {latest.environment ? ` · ${latest.environment}` : ''}
          {latest.release ? ` · release ${latest.release}` : ''} · {when(latest.occurred_at)}
        </p>
      ) : null}
    </Layout>
  );
}

export const errorListPage = (props: ListPageProps) => <ErrorListPage {...props} />;
export const errorPage = (props: ErrorPageProps) => <ErrorPage {...props} />;

/** An empty list says how errors get here: the DSN on Settings > Monitor, for those who may open it. */
function NoErrors({ project, canSetUp }: { project: ProjectRow; canSetUp: boolean }) {
  return (
    <div id="no-errors">
      <EmptyState
        title="No errors yet"
        {...(canSetUp ? { action: { href: monitorSettingsPath(project.full_path), label: 'Set up error tracking' } } : {})}
      >
        {canSetUp
          ? 'Enable error tracking on Settings > Monitor and give its DSN to a Sentry SDK in your application: errors it sends are grouped here.'
          : 'Errors appear here once a Maintainer enables error tracking and your application sends them with a Sentry SDK.'}
      </EmptyState>
    </div>
  );
}
