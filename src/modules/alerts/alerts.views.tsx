import { Flash } from '../../web/layout.js';
import type { ProjectRow } from '../projects/index.js';
import type { mapAlert } from './alerts.presenter.js';
import { ALERT_STATUSES, type AlertRow, type AlertStatus } from './alerts.repository.js';
import type { IntegrationRow } from './integrations.repository.js';

export type Notice =
  | { kind: 'notice'; text: string; links?: { href: string; text: string }[] }
  | { kind: 'created'; text: string; url: string; token: string };

interface Paths {
  list(id: number): string;
  alert(id: number, iid: number): string;
  settings(id: number): string;
}

const when = (iso: string | null) => (iso ? iso.replace('T', ' ').replace(/\.\d+Z$/, ' UTC') : '—');

function ProjectNav({ project, paths }: { project: ProjectRow; paths: Paths }) {
  return (
    <p class="muted">
      {project.full_path} · <a href={paths.list(project.id)}>Alerts</a> · <a href={paths.settings(project.id)}>Alert integrations</a>
    </p>
  );
}

export function AlertList(props: {
  project: ProjectRow;
  rows: AlertRow[];
  total: number;
  page: number;
  status: AlertStatus | undefined;
  search: string;
  counts: Record<string, number>;
  paths: Paths;
}) {
  const { project, rows, paths } = props;
  const pages = Math.max(1, Math.ceil(props.total / 20));
  const link = (page: number) =>
    `${paths.list(project.id)}?page=${page}${props.status ? `&status=${props.status}` : ''}${props.search ? `&search=${encodeURIComponent(props.search)}` : ''}`;
  return (
    <section>
      <h1>Alerts</h1>
      <ProjectNav project={project} paths={paths} />
      <form method="get" action={paths.list(project.id)} class="filters">
        <select name="status" aria-label="Status">
          <option value="">All statuses</option>
          {ALERT_STATUSES.map((s) => (
            <option value={s} selected={s === props.status}>
              {`${s} (${props.counts[s] ?? 0})`}
            </option>
          ))}
        </select>
        <input type="text" name="search" value={props.search} placeholder="Search" aria-label="Search" maxLength={255} />
        <button type="submit">Filter</button>
      </form>
      {rows.length === 0 ? (
        <p class="muted">No alerts.</p>
      ) : (
        <table>
          <thead>
            <tr>
              <th>#</th>
              <th>Severity</th>
              <th>Title</th>
              <th>Started</th>
              <th>Events</th>
              <th>Status</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((a) => (
              <tr>
                <td>{a.iid}</td>
                <td>{a.severity}</td>
                <td>
                  <a href={paths.alert(project.id, a.iid)}>{a.title}</a>
                </td>
                <td>{when(new Date(a.started_at).toISOString())}</td>
                <td>{a.events}</td>
                <td>{a.status}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <p class="muted">
        {props.page > 1 ? <a href={link(props.page - 1)}>Previous</a> : null} Page {props.page} of {pages}{' '}
        {props.page < pages ? <a href={link(props.page + 1)}>Next</a> : null}
      </p>
    </section>
  );
}

export function AlertDetail(props: {
  project: ProjectRow;
  alert: ReturnType<typeof mapAlert>;
  csrf: string;
  notice: Notice | null;
  paths: Paths;
}) {
  const { project, alert, paths } = props;
  const fields: [string, string | number | null][] = [
    ['Status', alert.status],
    ['Severity', alert.severity],
    ['Events', alert.event_count],
    ['Started', when(alert.started_at)],
    ['Ended', when(alert.ended_at)],
    ['Service', alert.service],
    ['Monitoring tool', alert.monitoring_tool],
    ['Hosts', alert.hosts.join(', ') || null],
    ['Environment', alert.environment_name],
    ['Query', alert.full_query],
    ['Y-axis label', alert.y_label],
    ['Integration', alert.integration?.name ?? null],
    ['Incident', alert.issue_iid === null ? null : `#${alert.issue_iid}`],
  ];
  return (
    <section>
      <h1>{`Alert #${alert.iid}: ${alert.title}`}</h1>
      <ProjectNav project={project} paths={paths} />
      {props.notice ? <Flash kind="notice">{props.notice.text}</Flash> : null}
      {alert.description ? <p>{alert.description}</p> : null}
      <table class="fields">
        <tbody>
          {fields
            .filter(([, v]) => v !== null && v !== '')
            .map(([k, v]) => (
              <tr>
                <th>{k}</th>
                <td data-field={k}>{String(v)}</td>
              </tr>
            ))}
          {alert.runbook ? (
            <tr>
              <th>Runbook</th>
              <td>{/^https?:\/\//.test(alert.runbook) ? <a href={alert.runbook}>{alert.runbook}</a> : alert.runbook}</td>
            </tr>
          ) : null}
        </tbody>
      </table>
      <form method="post" action={`${paths.alert(project.id, alert.iid)}/status`} class="inline">
        <input type="hidden" name="authenticity_token" value={props.csrf} />
        <label>
          Status{' '}
          <select name="status">
            {ALERT_STATUSES.map((s) => (
              <option value={s} selected={s === alert.status}>
                {s}
              </option>
            ))}
          </select>
        </label>{' '}
        <button type="submit">Change status</button>
      </form>
      <h2>Custom fields</h2>
      <pre id="custom-fields">{JSON.stringify(alert.custom_fields, null, 2)}</pre>
      <h2>Payload</h2>
      <pre id="payload">{JSON.stringify(alert.payload, null, 2)}</pre>
    </section>
  );
}

export function IntegrationsView(props: {
  project: ProjectRow;
  integrations: { row: IntegrationRow; url: string }[];
  csrf: string;
  canConfigure: boolean;
  notice: Notice | null;
  paths: Paths;
}) {
  const { project, notice, csrf } = props;
  const base = props.paths.settings(project.id);
  return (
    <section>
      <h1>Alert integrations</h1>
      <ProjectNav project={project} paths={props.paths} />
      {notice?.kind === 'created' ? (
        <div class="flash flash-notice" role="status" id="created-integration">
          <p>{notice.text} Copy the key now: it is not shown again.</p>
          <p>
            URL: <code id="integration-url">{notice.url}</code>
          </p>
          <p>
            Authorization key: <code id="integration-key">{notice.token}</code>
          </p>
        </div>
      ) : notice ? (
        <Flash kind="notice">
          {notice.text}{' '}
          {notice.links?.map((l) => (
            <a href={l.href}>{l.text} </a>
          ))}
        </Flash>
      ) : null}
      {props.canConfigure ? (
        <table>
          <thead>
            <tr>
              <th>Name</th>
              <th>Type</th>
              <th>Active</th>
              <th>URL</th>
              <th>Test alert</th>
            </tr>
          </thead>
          <tbody>
            {props.integrations.map(({ row, url }) => (
              <tr>
                <td>{row.name}</td>
                <td>{row.type}</td>
                <td>{row.active === 1 ? 'yes' : 'no'}</td>
                <td>
                  <code>{url}</code>
                </td>
                <td>
                  <form method="post" action={`${base}/integrations/${row.id}/test`} class="stacked">
                    <input type="hidden" name="authenticity_token" value={csrf} />
                    <textarea
                      name="payload"
                      rows={4}
                      cols={40}
                      aria-label={`Test payload for ${row.name}`}
                      placeholder="Alert JSON (empty: the sample)"
                    />
                    <button type="submit">Send test alert</button>
                  </form>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : (
        <p class="muted">Maintainers and owners configure integrations.</p>
      )}
      {props.canConfigure ? (
        <form method="post" action={`${base}/integrations`} class="stacked">
          <h2>Add an integration</h2>
          <input type="hidden" name="authenticity_token" value={csrf} />
          <label>
            Name <input type="text" name="name" required maxLength={255} />
          </label>
          <label>
            Type{' '}
            <select name="type">
              <option value="http">HTTP endpoint</option>
              <option value="prometheus">Prometheus</option>
            </select>
          </label>
          <button type="submit">Create integration</button>
        </form>
      ) : null}
    </section>
  );
}
