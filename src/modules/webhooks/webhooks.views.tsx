import { ActionButton, Checkbox, Csrf, EmptyState, Field, FormError, Select, type FieldErrors } from '../../web/index.js';
import { BRANCH_FILTER_STRATEGIES } from '../../infra/db/tables/webhooks.js';
import type { AlertStatus } from './failure.rules.js';
import type { HookLogRow, HookRow } from './hooks.repository.js';
import { TRIGGERS, type Trigger } from './payloads.rules.js';

/**
 * Settings > Webhooks' addresses, from the list's own: a project's `/<full_path>/-/hooks` and a
 * group's `/groups/<full_path>/-/hooks` (the established product's).
 */
export const HOOK_PAGES = {
  project: (fullPath: string) => `/${fullPath}/-/hooks`,
  group: (fullPath: string) => `/groups/${fullPath}/-/hooks`,
  list: (base: string) => base,
  edit: (base: string, id: number) => `${base}/${id}/edit`,
  update: (base: string, id: number) => `${base}/${id}`,
  destroy: (base: string, id: number) => `${base}/${id}/destroy`,
  test: (base: string, id: number, trigger: Trigger) => `${base}/${id}/test/${trigger}`,
  log: (base: string, id: number, logId: number) => `${base}/${id}/hook_logs/${logId}`,
};

/** Whose hooks a page shows: the words it uses for them. */
export type HookOwnerWord = 'project' | 'group';

export const TRIGGER_LABELS: Record<Trigger, string> = {
  push_events: 'Push events',
  tag_push_events: 'Tag push events',
  issues_events: 'Issues events',
  confidential_issues_events: 'Confidential issues events',
  note_events: 'Comments',
  confidential_note_events: 'Confidential comments',
};

const STRATEGY_LABELS: Record<(typeof BRANCH_FILTER_STRATEGIES)[number], string> = {
  all_branches: 'All branches',
  wildcard: 'Wildcard pattern',
  regex: 'Regular expression',
};

const STATUS_LABELS: Record<AlertStatus, string> = {
  executable: 'Active',
  temporarily_disabled: 'Temporarily disabled',
  permanently_disabled: 'Disabled',
};

const when = (ms: number) =>
  new Date(ms)
    .toISOString()
    .replace('T', ' ')
    .replace(/\.\d+Z$/, ' UTC');
export const enabledTriggers = (hook: HookRow): Trigger[] => TRIGGERS.filter((t) => hook[t] === 1);

/** The form of a new hook or an edit; `values` is the row or what was typed before a refusal. */
export function HookForm(props: {
  action: string;
  csrf: string;
  values: Record<string, unknown>;
  errors: FieldErrors | null;
  submit: string;
}) {
  const v = props.values;
  const errors = props.errors ?? {};
  const on = (name: string) => v[name] === true || v[name] === 1 || v[name] === '1';
  const strategy = typeof v.branch_filter_strategy === 'string' ? v.branch_filter_strategy : 'wildcard';
  return (
    <form method="post" action={props.action} class="stacked hook-form">
      <Csrf token={props.csrf} />
      <FormError errors={props.errors ?? undefined} />
      <Field
        label="URL"
        name="url"
        type="url"
        value={v.url}
        error={errors.url}
        required
        maxLength={2048}
        hint="http:// or https:// address that receives a POST for each event."
      />
      <Field label="Name (optional)" name="name" value={v.name} error={errors.name} maxLength={255} />
      <Field label="Description (optional)" name="description" value={v.description} error={errors.description} maxLength={2048} />
      <Field
        label="Secret token"
        name="token"
        type="password"
        autocomplete="off"
        error={errors.token}
        maxLength={255}
        hint="Sent in the X-Gitlab-Token header. Stored and never shown again; leave empty to keep the current one."
      />
      <fieldset class="hook-triggers">
        <legend>Trigger</legend>
        {TRIGGERS.map((t) => (
          <Checkbox label={TRIGGER_LABELS[t]} name={t} checked={on(t)} />
        ))}
      </fieldset>
      <Select
        label="Push events branch filter"
        name="branch_filter_strategy"
        value={strategy}
        options={BRANCH_FILTER_STRATEGIES.map((s) => ({ value: s, label: STRATEGY_LABELS[s] }))}
        error={errors.branch_filter_strategy}
      />
      <Field
        label="Branch filter"
        name="push_events_branch_filter"
        value={v.push_events_branch_filter}
        error={errors.push_events_branch_filter}
        maxLength={4096}
        hint="Wildcard: main, release/* (comma-separated). Regular expression: ^(main|release/.*)$"
      />
      <Checkbox label="Enable SSL verification" name="enable_ssl_verification" checked={on('enable_ssl_verification')} />
      <button type="submit">{props.submit}</button>
    </form>
  );
}

function StatusBadge({ status }: { status: AlertStatus }) {
  return <span class={`badge hook-status-${status}`}>{STATUS_LABELS[status]}</span>;
}

/** Settings > Webhooks: the hooks, each with its tests, and the form to add one. */
export function HooksList(props: {
  base: string;
  word: HookOwnerWord;
  hooks: { row: HookRow; status: AlertStatus; disabledUntil: number | null }[];
  csrf: string;
  create: { values: Record<string, unknown>; errors: FieldErrors } | null;
}) {
  const { base, csrf, word } = props;
  return (
    <section>
      <h1>Webhooks</h1>
      <p class="muted">
        {word === 'group'
          ? 'Group hooks send a POST request with the event to a URL when something happens in any project of this group or its subgroups: a push, an issue, a comment.'
          : 'Webhooks send a POST request with the event to a URL when something happens in this project: a push, an issue, a comment.'}
      </p>
      <h2>
        {word === 'group' ? 'Group' : 'Project'} hooks ({props.hooks.length})
      </h2>
      {props.hooks.length === 0 ? (
        <EmptyState title="No webhooks enabled">Add one below to have events sent to your service.</EmptyState>
      ) : (
        <ul class="hook-list">
          {props.hooks.map(({ row, status, disabledUntil }) => (
            <li class="hook" aria-labelledby={`hook-${row.id}`}>
              <div class="hook-head">
                <strong id={`hook-${row.id}`} class="hook-url">
                  {row.name || row.url}
                </strong>{' '}
                <StatusBadge status={status} />
              </div>
              {row.name ? <p class="hook-url muted">{row.url}</p> : null}
              <p class="small muted">
                {enabledTriggers(row)
                  .map((t) => TRIGGER_LABELS[t])
                  .join(' · ') || 'No trigger'}{' '}
                · SSL verification: {row.enable_ssl_verification === 1 ? 'enabled' : 'disabled'}
                {status === 'temporarily_disabled' && disabledUntil !== null ? ` · retried after ${when(disabledUntil)}` : ''}
              </p>
              <div class="actions hook-actions">
                <a class="button secondary" href={HOOK_PAGES.edit(base, row.id)}>
                  Edit
                </a>
                {enabledTriggers(row).map((t) => (
                  <ActionButton
                    action={HOOK_PAGES.test(base, row.id, t)}
                    csrf={csrf}
                    label={`Test ${TRIGGER_LABELS[t].toLowerCase()}`}
                    kind="secondary"
                  />
                ))}
                <ActionButton action={HOOK_PAGES.destroy(base, row.id)} csrf={csrf} label="Delete" kind="danger" />
              </div>
            </li>
          ))}
        </ul>
      )}
      <h2>Add new webhook</h2>
      <HookForm
        action={HOOK_PAGES.list(base)}
        csrf={csrf}
        values={props.create?.values ?? { push_events: true, enable_ssl_verification: true }}
        errors={props.create?.errors ?? null}
        submit="Add webhook"
      />
    </section>
  );
}

/** One hook's edit page: the form, then its recent deliveries. */
export function HookEdit(props: {
  base: string;
  row: HookRow;
  status: AlertStatus;
  logs: HookLogRow[];
  csrf: string;
  values: Record<string, unknown>;
  errors: FieldErrors | null;
}) {
  const { base, row } = props;
  return (
    <section>
      <h1>
        Edit webhook <StatusBadge status={props.status} />
      </h1>
      <HookForm
        action={HOOK_PAGES.update(base, row.id)}
        csrf={props.csrf}
        values={props.values}
        errors={props.errors}
        submit="Save changes"
      />
      <h2>Recent events</h2>
      {props.logs.length === 0 ? (
        <p class="muted">No deliveries yet. Use a test button on the webhooks list to send one.</p>
      ) : (
        <table class="hook-logs">
          <thead>
            <tr>
              <th scope="col">Status</th>
              <th scope="col">Trigger</th>
              <th scope="col">Elapsed time</th>
              <th scope="col">Request time</th>
              <th scope="col">Details</th>
            </tr>
          </thead>
          <tbody>
            {props.logs.map((log) => (
              <tr>
                <td>
                  <span
                    class={`badge ${/^2\d\d$/.test(log.response_status) ? 'hook-status-executable' : 'hook-status-temporarily_disabled'}`}
                  >
                    {log.response_status}
                  </span>
                </td>
                <td>{TRIGGER_LABELS[log.trigger as Trigger] ?? log.trigger}</td>
                <td>{(log.execution_duration_ms / 1000).toFixed(2)} sec</td>
                <td>{when(log.created_at)}</td>
                <td>
                  <a href={HOOK_PAGES.log(base, row.id, log.id)}>View details</a>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

function pretty(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

/** One delivery: what was sent and what came back. */
export function HookLogDetail({ log }: { log: HookLogRow }) {
  return (
    <section>
      <h1>Request details</h1>
      <dl class="facts">
        <dt>Response status</dt>
        <dd>{log.response_status}</dd>
        <dt>Trigger</dt>
        <dd>{TRIGGER_LABELS[log.trigger as Trigger] ?? log.trigger}</dd>
        <dt>URL</dt>
        <dd>{log.url}</dd>
        <dt>Elapsed time</dt>
        <dd>{(log.execution_duration_ms / 1000).toFixed(2)} sec</dd>
        <dt>Request time</dt>
        <dd>{when(log.created_at)}</dd>
        {log.internal_error_message ? (
          <>
            <dt>Error</dt>
            <dd>{log.internal_error_message}</dd>
          </>
        ) : null}
      </dl>
      <h2>Request headers</h2>
      <pre id="request-headers">{pretty(log.request_headers)}</pre>
      <h2>Request body</h2>
      <pre id="request-body">{pretty(log.request_data)}</pre>
      <h2>Response headers</h2>
      <pre id="response-headers">{pretty(log.response_headers)}</pre>
      <h2>Response body</h2>
      <pre id="response-body">{log.response_body === '' ? '(empty)' : log.response_body}</pre>
    </section>
  );
}
