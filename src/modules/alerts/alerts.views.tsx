import { ActionButton, Csrf, EmptyState, Select } from '../../web/index.js';
import type { ProjectRow } from '../projects/index.js';
import type { AlertActivityRow } from './activity.repository.js';
import type { mapAlert } from './alerts.presenter.js';
import { ALERT_STATUSES, type AlertRow, type AlertSort } from './alerts.repository.js';
import { SEVERITIES } from './normalize-common.rules.js';

/** The alert pages' addresses: the established product's (`/<full_path>/-/alert_management`, Settings > Monitor). */
export const PAGES = {
  list: (fullPath: string) => `/${fullPath}/-/alert_management`,
  alert: (fullPath: string, iid: number) => `/${fullPath}/-/alert_management/${iid}/details`,
  settings: (fullPath: string) => `/${fullPath}/-/settings/operations`,
  integrations: (fullPath: string) => `/${fullPath}/-/settings/operations/alerts/integrations`,
  integration: (fullPath: string, integrationId: number) => `/${fullPath}/-/settings/operations/alerts/integrations/${integrationId}`,
  testAlert: (fullPath: string, integrationId: number) => `/${fullPath}/-/settings/operations/alerts/integrations/${integrationId}/test`,
  mapping: (fullPath: string, integrationId: number) => `/${fullPath}/-/settings/operations/alerts/integrations/${integrationId}/mapping`,
  alertSettings: (fullPath: string) => `/${fullPath}/-/settings/operations/alerts/settings`,
};

/** The list's tabs: Open (triggered and acknowledged) first, as the established product. */
export const ALERT_TABS = ['open', 'triggered', 'acknowledged', 'resolved', 'all'] as const;
export type AlertTab = (typeof ALERT_TABS)[number];
const TAB_LABELS: Record<AlertTab, string> = {
  open: 'Open',
  triggered: 'Triggered',
  acknowledged: 'Acknowledged',
  resolved: 'Resolved',
  all: 'All',
};
/** The statuses a tab shows (none: every status). */
export const TAB_STATUSES: Record<AlertTab, AlertRow['status'][] | undefined> = {
  open: ['triggered', 'acknowledged'],
  triggered: ['triggered'],
  acknowledged: ['acknowledged'],
  resolved: ['resolved'],
  all: undefined,
};
export function tabCount(tab: AlertTab, counts: Record<string, number>): number {
  const statuses: readonly string[] = TAB_STATUSES[tab] ?? ALERT_STATUSES;
  return statuses.reduce((sum, status) => sum + (counts[status] ?? 0), 0);
}

/** The columns a person sorts by, each with its `sort` key (reference A7). */
const SORTABLE = { severity: 'severity', started: 'started_at', events: 'event_count', status: 'status' } as const;
export const PAGE_SORTS = [
  'started_at_desc',
  'started_at_asc',
  'severity_desc',
  'severity_asc',
  'event_count_desc',
  'event_count_asc',
  'status_desc',
  'status_asc',
] as const satisfies readonly AlertSort[];
export type PageSort = (typeof PAGE_SORTS)[number];
export const DEFAULT_SORT: PageSort = 'started_at_desc';
export const ALERTS_PER_PAGE = 20;
/** Tab counts stop here ("1,000+"): counting 100,000 alerts on every view costs tens of milliseconds. */
export const COUNT_CAP = 1000;
const shownCount = (n: number) => (n > COUNT_CAP ? `${COUNT_CAP.toLocaleString('en')}+` : n.toLocaleString('en'));

const when = (iso: string | null) =>
  iso
    ? iso
        .replace('T', ' ')
        .replace(/\.\d+Z$/, ' UTC')
        .replace(/Z$/, ' UTC')
    : '—';
const whenMs = (ms: number) => when(new Date(ms).toISOString());

/** A severity as colour and text (the colour alone says nothing to some readers). */
export function SeverityBadge({ severity }: { severity: string }) {
  const known = (SEVERITIES as readonly string[]).includes(severity) ? severity : 'unknown';
  return <span class={`badge severity severity-${known}`}>{severity}</span>;
}

export function StatusBadge({ status }: { status: string }) {
  return <span class={`badge alert-status alert-status-${status}`}>{status}</span>;
}

/** Only http and https addresses become links: a payload's `javascript:` stays text. */
export function SafeLink({ href }: { href: string }) {
  let safe = false;
  try {
    const url = new URL(href);
    safe = url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    safe = false;
  }
  return safe ? (
    <a href={href} rel="noopener noreferrer nofollow">
      {href}
    </a>
  ) : (
    <code>{href}</code>
  );
}

export interface AlertListState {
  tab: AlertTab;
  severity: string;
  search: string;
  sort: PageSort;
  page: number;
}

export function AlertList(props: {
  project: ProjectRow;
  rows: AlertRow[];
  /** How many the tab holds; null when not known (a search or filter narrows it, or past COUNT_CAP). */
  total: number | null;
  hasNext: boolean;
  state: AlertListState;
  counts: Record<string, number>;
  /** Whether the caller may add an integration (Maintainer): the empty list leads there. */
  canConfigure: boolean;
}) {
  const { project, rows, state } = props;
  const list = PAGES.list(project.full_path);
  const pages = props.total === null ? null : Math.max(1, Math.ceil(props.total / ALERTS_PER_PAGE));
  const href = (change: Partial<AlertListState>) => {
    const next = { ...state, page: 1, ...change };
    const query = new URLSearchParams();
    if (next.tab !== 'open') query.set('tab', next.tab);
    if (next.severity) query.set('severity', next.severity);
    if (next.search) query.set('search', next.search);
    if (next.sort !== DEFAULT_SORT) query.set('sort', next.sort);
    if (next.page > 1) query.set('page', String(next.page));
    const text = query.toString();
    return text ? `${list}?${text}` : list;
  };
  const anyAlert = tabCount('all', props.counts) > 0;
  const header = (label: string, column: keyof typeof SORTABLE) => {
    const key = SORTABLE[column];
    const current = state.sort.startsWith(`${key}_`) ? (state.sort.endsWith('_asc') ? 'ascending' : 'descending') : null;
    const next: PageSort = current === 'descending' ? `${key}_asc` : `${key}_desc`;
    return (
      <th aria-sort={current ?? undefined}>
        <a href={href({ sort: next })} class="sort-link">
          {label}
          {current ? <span aria-hidden="true">{current === 'descending' ? ' ↓' : ' ↑'}</span> : null}
        </a>
      </th>
    );
  };
  return (
    <section class="alert-list">
      <h1>Alerts</h1>
      {!anyAlert ? (
        <EmptyState
          title="No alerts yet"
          {...(props.canConfigure ? { action: { href: PAGES.settings(project.full_path), label: 'Add an integration' } } : {})}
        >
          {props.canConfigure
            ? 'Alerts arrive from a monitoring tool through an integration: add one on Settings > Monitor and point the tool at its URL.'
            : 'Alerts arrive from a monitoring tool once a Maintainer adds an integration on Settings > Monitor.'}
        </EmptyState>
      ) : (
        <>
          <nav class="tabs" aria-label="Alert status">
            {ALERT_TABS.map((tab) => (
              <a href={href({ tab })} aria-current={tab === state.tab ? 'page' : undefined} data-tab={tab}>
                {TAB_LABELS[tab]} <span class="badge count">{shownCount(tabCount(tab, props.counts))}</span>
              </a>
            ))}
          </nav>
          <form method="get" action={list} class="search-form alert-filters">
            {state.tab !== 'open' ? <input type="hidden" name="tab" value={state.tab} /> : null}
            {state.sort !== DEFAULT_SORT ? <input type="hidden" name="sort" value={state.sort} /> : null}
            <label for="alert-severity">Severity</label>
            <select id="alert-severity" name="severity">
              <option value="">Any severity</option>
              {SEVERITIES.map((s) => (
                <option value={s} selected={s === state.severity}>
                  {s}
                </option>
              ))}
            </select>
            <label for="alert-search">Search</label>
            <input
              id="alert-search"
              type="search"
              name="search"
              value={state.search}
              maxLength={255}
              placeholder="Title, description, service, tool"
            />
            <button type="submit">Filter</button>
          </form>
          {rows.length === 0 ? (
            <p class="muted">No alerts match.</p>
          ) : (
            <table class="alerts-table">
              <thead>
                <tr>
                  {header('Severity', 'severity')}
                  <th>Alert</th>
                  {header('Start time', 'started')}
                  {header('Events', 'events')}
                  {header('Status', 'status')}
                </tr>
              </thead>
              <tbody>
                {rows.map((a) => (
                  <tr>
                    <td>
                      <SeverityBadge severity={a.severity} />
                    </td>
                    <td class="alert-title">
                      <a href={PAGES.alert(project.full_path, a.iid)}>{a.title}</a>
                      <span class="muted small"> #{a.iid}</span>
                    </td>
                    <td>{whenMs(a.started_at)}</td>
                    <td>{a.events}</td>
                    <td>
                      <StatusBadge status={a.status} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
          <nav class="pager" aria-label="Pages">
            {state.page > 1 ? (
              <a href={href({ page: state.page - 1 })} rel="prev">
                Previous page
              </a>
            ) : null}
            <span class="muted">
              {pages === null || props.total === null
                ? `Page ${state.page}`
                : `Page ${state.page} of ${pages} · ${props.total} ${props.total === 1 ? 'alert' : 'alerts'}`}
            </span>
            {props.hasNext ? (
              <a href={href({ page: state.page + 1 })} rel="next">
                Next page
              </a>
            ) : null}
          </nav>
        </>
      )}
    </section>
  );
}

/** A person named on the alert's page. */
export interface Person {
  id: number;
  username: string;
  name: string;
}

function ActivityEntry({ entry, people, project }: { entry: AlertActivityRow; people: Map<number, Person>; project: ProjectRow }) {
  const author = entry.author_id !== null ? people.get(entry.author_id) : undefined;
  const who = author ? `${author.name} (@${author.username})` : entry.author_id === null ? 'The monitoring tool' : 'A deleted user';
  let what: preact.ComponentChildren;
  if (entry.kind === 'status')
    what = (
      <>
        changed the status to <StatusBadge status={entry.detail ?? ''} />
      </>
    );
  else if (entry.kind === 'assignee') what = entry.detail ? `assigned @${entry.detail}` : 'removed the assignee';
  else
    what = (
      <>
        created incident <a href={`/${project.full_path}/-/issues/${entry.detail ?? ''}`}>#{entry.detail}</a>
      </>
    );
  return (
    <li>
      <span>
        {who} {what}
      </span>{' '}
      <time class="muted small">{whenMs(entry.created_at)}</time>
    </li>
  );
}

export function AlertDetail(props: {
  project: ProjectRow;
  alert: ReturnType<typeof mapAlert>;
  row: AlertRow;
  csrf: string;
  activity: AlertActivityRow[];
  people: Map<number, Person>;
  /** Who the alert may be assigned to: the project's members who may see alerts. */
  assignable: Person[];
}) {
  const { project, alert, row } = props;
  const payload = alert.payload as Record<string, unknown> | null;
  const generator = payload && typeof payload.generatorURL === 'string' ? payload.generatorURL : null;
  const assignee = row.assignee_id !== null ? props.people.get(row.assignee_id) : undefined;
  const page = PAGES.alert(project.full_path, alert.iid);
  const facts: [string, preact.ComponentChildren][] = [
    ['Status', <StatusBadge status={alert.status} />],
    ['Severity', <SeverityBadge severity={alert.severity} />],
    ['Events', alert.event_count],
    ['Start time', when(alert.started_at)],
    ['End time', alert.ended_at ? when(alert.ended_at) : null],
    ['Service', alert.service],
    ['Monitoring tool', alert.monitoring_tool],
    ['Hosts', alert.hosts.join(', ') || null],
    ['Environment', alert.environment_name],
    ['Query', alert.full_query ? <code>{alert.full_query}</code> : null],
    ['Y-axis label', alert.y_label],
    ['Fingerprint', alert.fingerprint ? <code>{alert.fingerprint}</code> : null],
    ['Integration', alert.integration?.name ?? null],
    ['Assignee', assignee ? `${assignee.name} (@${assignee.username})` : 'None'],
    ['Runbook', alert.runbook ? <SafeLink href={alert.runbook} /> : null],
    ['Generator', generator ? <SafeLink href={generator} /> : null],
    ['Created', when(alert.created_at)],
  ];
  const customFields = Object.entries(alert.custom_fields);
  return (
    <section class="alert-detail">
      <div class="page-head">
        <h1>{`Alert #${alert.iid}: ${alert.title}`}</h1>
        {alert.issue_iid !== null ? (
          <a class="button secondary" id="incident-link" href={`/${project.full_path}/-/issues/${alert.issue_iid}`}>
            Incident #{alert.issue_iid}
          </a>
        ) : (
          <ActionButton action={`${page}/incident`} csrf={props.csrf} label="Create incident" />
        )}
      </div>
      {alert.description ? <p class="alert-description">{alert.description}</p> : null}
      <dl class="facts">
        {facts
          .filter(([, v]) => v !== null && v !== '')
          .map(([k, v]) => (
            <>
              <dt>{k}</dt>
              <dd data-field={k}>{v}</dd>
            </>
          ))}
        {alert.issue_iid !== null ? (
          <>
            <dt>Incident</dt>
            <dd data-field="Incident">
              <a href={`/${project.full_path}/-/issues/${alert.issue_iid}`}>#{alert.issue_iid}</a>
            </dd>
          </>
        ) : null}
      </dl>
      <div class="alert-actions">
        <form method="post" action={`${page}/status`} class="inline-form">
          <Csrf token={props.csrf} />
          <Select label="Status" name="status" value={alert.status} options={ALERT_STATUSES.map((s) => ({ value: s, label: s }))} />
          <button type="submit">Change status</button>
        </form>
        <form method="post" action={`${page}/assignee`} class="inline-form">
          <Csrf token={props.csrf} />
          <Select
            label="Assignee"
            name="assignee_id"
            value={row.assignee_id === null ? '' : String(row.assignee_id)}
            options={[
              { value: '', label: 'Unassigned' },
              ...props.assignable.map((p) => ({ value: String(p.id), label: `${p.name} (@${p.username})` })),
            ]}
          />
          <button type="submit">Assign</button>
        </form>
      </div>
      <h2>Activity</h2>
      <ol class="alert-activity">
        <li>
          <span>Alert received</span> <time class="muted small">{when(alert.created_at)}</time>
        </li>
        {props.activity.map((entry) => (
          <ActivityEntry entry={entry} people={props.people} project={project} />
        ))}
        {alert.event_count > 1 ? (
          <li>
            <span>
              {alert.event_count - 1} more {alert.event_count === 2 ? 'event' : 'events'} received (grouped into this alert)
            </span>
          </li>
        ) : null}
      </ol>
      <h2>Custom fields</h2>
      {customFields.length === 0 ? (
        <p class="muted">None: every field of the payload is a known one.</p>
      ) : (
        <dl class="facts" id="custom-fields">
          {customFields.map(([k, v]) => (
            <>
              <dt>{k}</dt>
              <dd>{typeof v === 'string' ? v : JSON.stringify(v)}</dd>
            </>
          ))}
        </dl>
      )}
      <h2>Payload</h2>
      <pre id="payload">{JSON.stringify(alert.payload, null, 2)}</pre>
    </section>
  );
}
