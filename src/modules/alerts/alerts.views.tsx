import type { ComponentChildren } from 'preact';
import { Csrf, EmptyState, Field, FormError, Select, TextArea, type FieldErrors } from '../../web/index.js';
import type { ProjectRow } from '../projects/index.js';
import type { mapAlert } from './alerts.presenter.js';
import { ALERT_STATUSES, type AlertRow, type AlertStatus } from './alerts.repository.js';
import type { IntegrationRow } from './integrations.repository.js';

/** The alert pages' addresses: the established product's (`/<full_path>/-/alert_management`, Settings > Monitor). */
export const PAGES = {
  list: (fullPath: string) => `/${fullPath}/-/alert_management`,
  alert: (fullPath: string, iid: number) => `/${fullPath}/-/alert_management/${iid}/details`,
  settings: (fullPath: string) => `/${fullPath}/-/settings/operations`,
  integrations: (fullPath: string) => `/${fullPath}/-/settings/operations/alerts/integrations`,
  testAlert: (fullPath: string, integrationId: number) => `/${fullPath}/-/settings/operations/alerts/integrations/${integrationId}/test`,
};

/** What a new integration's page shows once: its URL and key. */
export interface CreatedIntegration {
  name: string;
  url: string;
  token: string;
}

/** A test alert's form after a refusal: which integration, what was typed, the messages. */
export interface TestAlertInput {
  integrationId: number;
  payload: string;
  errors: FieldErrors;
}

const when = (iso: string | null) => (iso ? iso.replace('T', ' ').replace(/\.\d+Z$/, ' UTC') : '—');

export function AlertList(props: {
  project: ProjectRow;
  rows: AlertRow[];
  total: number;
  page: number;
  status: AlertStatus | undefined;
  search: string;
  counts: Record<string, number>;
  /** Whether the caller may add an integration (Maintainer): the empty list leads there. */
  canConfigure: boolean;
}) {
  const { project, rows } = props;
  const list = PAGES.list(project.full_path);
  const pages = Math.max(1, Math.ceil(props.total / 20));
  const link = (page: number) =>
    `${list}?page=${page}${props.status ? `&status=${props.status}` : ''}${props.search ? `&search=${encodeURIComponent(props.search)}` : ''}`;
  const anyAlert = Object.values(props.counts).some((n) => n > 0);
  return (
    <section>
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
          <form method="get" action={list} class="filters">
            <div class="field">
              <label for="alert-status">Status</label>
              <select id="alert-status" name="status">
                <option value="">All statuses</option>
                {ALERT_STATUSES.map((s) => (
                  <option value={s} selected={s === props.status}>
                    {`${s} (${props.counts[s] ?? 0})`}
                  </option>
                ))}
              </select>
            </div>
            <Field label="Search" name="search" value={props.search} maxLength={255} />
            <button type="submit">Filter</button>
          </form>
          {rows.length === 0 ? (
            <p class="muted">No alerts match.</p>
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
                      <a href={PAGES.alert(project.full_path, a.iid)}>{a.title}</a>
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
        </>
      )}
    </section>
  );
}

export function AlertDetail(props: { project: ProjectRow; alert: ReturnType<typeof mapAlert>; csrf: string }) {
  const { project, alert } = props;
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
  ];
  return (
    <section>
      <h1>{`Alert #${alert.iid}: ${alert.title}`}</h1>
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
          {alert.issue_iid !== null ? (
            <tr>
              <th>Incident</th>
              <td data-field="Incident">
                <a href={`/${project.full_path}/-/issues/${alert.issue_iid}`}>#{alert.issue_iid}</a>
              </td>
            </tr>
          ) : null}
          {alert.runbook ? (
            <tr>
              <th>Runbook</th>
              <td>{/^https?:\/\//.test(alert.runbook) ? <a href={alert.runbook}>{alert.runbook}</a> : alert.runbook}</td>
            </tr>
          ) : null}
        </tbody>
      </table>
      <form method="post" action={`${PAGES.alert(project.full_path, alert.iid)}/status`} class="filters">
        <Csrf token={props.csrf} />
        <Select label="Status" name="status" value={alert.status} options={ALERT_STATUSES.map((s) => ({ value: s, label: s }))} />
        <button type="submit">Change status</button>
      </form>
      <h2>Custom fields</h2>
      <pre id="custom-fields">{JSON.stringify(alert.custom_fields, null, 2)}</pre>
      <h2>Payload</h2>
      <pre id="payload">{JSON.stringify(alert.payload, null, 2)}</pre>
    </section>
  );
}

/** Settings > Monitor: the alert integrations, then what other modules add (error tracking). */
export function MonitorSettings(props: {
  project: ProjectRow;
  integrations: { row: IntegrationRow; url: string }[];
  csrf: string;
  created: CreatedIntegration | null;
  test: TestAlertInput | null;
  create: { input: Record<string, unknown>; errors: FieldErrors } | null;
  children?: ComponentChildren;
}) {
  const { project, created, csrf, test } = props;
  const input = props.create?.input ?? {};
  return (
    <section>
      <h1>Monitor settings</h1>
      <section id="alert-integrations" aria-labelledby="alerts-heading">
        <h2 id="alerts-heading">Alerts</h2>
        <p class="muted">
          Integrations receive alerts from monitoring tools; they appear under{' '}
          <a href={PAGES.list(project.full_path)}>Monitor &gt; Alerts</a>.
        </p>
        {created ? (
          <div class="revealed" role="status" id="created-integration">
            <h2>Integration {created.name} created</h2>
            <p>Copy the key now: it is not shown again.</p>
            <p>
              URL: <code id="integration-url">{created.url}</code>
            </p>
            <p>
              Authorization key: <code id="integration-key">{created.token}</code>
            </p>
          </div>
        ) : null}
        {props.integrations.length === 0 ? <p class="muted">No integration yet: add one below.</p> : null}
        {props.integrations.map(({ row, url }) => {
          const mine = test?.integrationId === row.id ? test : null;
          return (
            <article class="integration" aria-labelledby={`integration-${row.id}`}>
              <h3 id={`integration-${row.id}`}>{row.name}</h3>
              <p class="muted">
                {row.type === 'prometheus' ? 'Prometheus' : 'HTTP endpoint'} · {row.active === 1 ? 'active' : 'inactive'}
              </p>
              <p>Webhook URL:</p>
              <pre>{url}</pre>
              <form method="post" action={PAGES.testAlert(project.full_path, row.id)} class="stacked">
                <Csrf token={csrf} />
                <FormError errors={mine?.errors} />
                <TextArea
                  label={`Test payload for ${row.name}`}
                  name="payload"
                  rows={4}
                  value={mine?.payload ?? ''}
                  error={mine?.errors.payload}
                  hint="Alert JSON; empty sends a sample."
                  maxLength={1_000_000}
                />
                <button type="submit">Send test alert</button>
              </form>
            </article>
          );
        })}
        <form method="post" action={PAGES.integrations(project.full_path)} class="stacked">
          <h3>Add an integration</h3>
          <Csrf token={csrf} />
          <FormError errors={props.create?.errors} />
          <Field label="Name" name="name" value={input.name} error={props.create?.errors.name} required maxLength={255} />
          <Select
            label="Type"
            name="type"
            value={typeof input.type === 'string' ? input.type : 'http'}
            error={props.create?.errors.type}
            options={[
              { value: 'http', label: 'HTTP endpoint' },
              { value: 'prometheus', label: 'Prometheus' },
            ]}
          />
          <button type="submit">Create integration</button>
        </form>
      </section>
      {props.children}
    </section>
  );
}
