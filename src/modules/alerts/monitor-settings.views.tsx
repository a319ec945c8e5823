import type { ComponentChildren } from 'preact';
import { Checkbox, CopyButton, Csrf, Field, FormError, Select, TextArea, type FieldErrors } from '../../web/index.js';
import type { ProjectRow } from '../projects/index.js';
import type { AlertSettings } from './targets.service.js';
import type { IntegrationRow } from './integrations.repository.js';
import { PAGES } from './alerts.views.js';
import type { FieldMapping, GenericKey } from './normalize-generic.rules.js';
import { FIELD_LABELS, MAPPABLE_FIELDS, pathKey, pathsForField, type SamplePath } from './sample-paths.rules.js';

/** What a created or re-keyed integration's answer shows once: its URL and key. */
export interface RevealedKey {
  name: string;
  url: string;
  token: string;
  /** `created`: a new integration; `reset`: a new key for an existing one. */
  what: 'created' | 'reset';
}

/** A refused form of one integration (test alert, edit) with what was typed and the messages. */
export interface IntegrationFormInput {
  integrationId: number;
  form: 'test' | 'edit';
  input: Record<string, unknown>;
  errors: FieldErrors;
}

const typeName = (row: IntegrationRow) => (row.type === 'prometheus' ? 'Prometheus' : 'HTTP endpoint');

/** Settings > Monitor: the alert integrations and settings, then what other modules add (error tracking). */
export function MonitorSettings(props: {
  project: ProjectRow;
  integrations: { row: IntegrationRow; url: string }[];
  settings: AlertSettings;
  csrf: string;
  revealed: RevealedKey | null;
  refused: IntegrationFormInput | null;
  create: { input: Record<string, unknown>; errors: FieldErrors } | null;
  /** Whether custom field mapping is available (Premium and Ultimate, as the API decides). */
  mappingAvailable: boolean;
  children?: ComponentChildren;
}) {
  const { project, revealed, csrf, refused } = props;
  const input = props.create?.input ?? {};
  return (
    <section class="monitor-settings">
      <h1>Monitor settings</h1>
      <section id="alert-integrations" aria-labelledby="alerts-heading">
        <h2 id="alerts-heading">Alerts</h2>
        <p class="muted">
          Integrations receive alerts from monitoring tools; they appear under{' '}
          <a href={PAGES.list(project.full_path)}>Monitor &gt; Alerts</a>.
        </p>
        {revealed ? (
          <div class="revealed" role="status" id="created-integration">
            <h2>{revealed.what === 'created' ? `Integration ${revealed.name} created` : `New key for ${revealed.name}`}</h2>
            <p>Copy the key now: it is not shown again.{revealed.what === 'reset' ? ' The old key no longer works.' : ''}</p>
            <p class="copy-row">
              <span>URL:</span> <code id="integration-url">{revealed.url}</code>
              <CopyButton target="integration-url" what="URL" />
            </p>
            <p class="copy-row">
              <span>Authorization key:</span> <code id="integration-key">{revealed.token}</code>
              <CopyButton target="integration-key" what="authorization key" />
            </p>
          </div>
        ) : null}
        <h3>Integrations</h3>
        {props.integrations.length === 0 ? <p class="muted">No integration yet: add one below.</p> : null}
        {props.integrations.map(({ row, url }) => {
          const mine = refused?.integrationId === row.id ? refused : null;
          const test = mine?.form === 'test' ? mine : null;
          const edit = mine?.form === 'edit' ? mine : null;
          const base = PAGES.integration(project.full_path, row.id);
          const label = `${row.name}`;
          return (
            <article class="integration" aria-labelledby={`integration-${row.id}`} data-integration={row.id}>
              <div class="page-head">
                <h4 id={`integration-${row.id}`}>{row.name}</h4>
                <span class={row.active === 1 ? 'badge state-active' : 'badge state-inactive'}>
                  {row.active === 1 ? 'Active' : 'Inactive'}
                </span>
              </div>
              <p class="muted">{typeName(row)}</p>
              <p class="copy-row">
                <span>Webhook URL:</span> <code class="webhook-url">{url}</code>
                <CopyButton value={url} what={`webhook URL of ${row.name}`} />
              </p>
              <p class="actions">
                {row.type === 'http' ? <a href={PAGES.mapping(project.full_path, row.id)}>Custom field mapping</a> : null}
                <a href={`${base}/reset_token`}>Reset key</a>
                <a href={`${base}/delete`} class="danger-link">
                  Delete
                </a>
              </p>
              <details open={edit !== null}>
                <summary>Edit {label}</summary>
                <form method="post" action={base} class="stacked">
                  <Csrf token={csrf} />
                  <FormError errors={edit?.errors} />
                  <Field
                    label={`Name of ${label}`}
                    name="name"
                    value={edit ? edit.input.name : row.name}
                    error={edit?.errors.name}
                    required
                    maxLength={255}
                  />
                  <Checkbox label={`${label} is active`} name="active" checked={edit ? edit.input.active === '1' : row.active === 1} />
                  <button type="submit">Save {label}</button>
                </form>
              </details>
              <form method="post" action={PAGES.testAlert(project.full_path, row.id)} class="stacked">
                <Csrf token={csrf} />
                <FormError errors={test?.errors} />
                <TextArea
                  label={`Test payload for ${label}`}
                  name="payload"
                  rows={4}
                  value={typeof test?.input.payload === 'string' ? test.input.payload : ''}
                  error={test?.errors.payload}
                  hint="Alert JSON; empty sends the integration's sample, else a default alert."
                  maxLength={1_000_000}
                />
                <button type="submit" class="secondary">
                  Send test alert
                </button>
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
        <form method="post" action={PAGES.alertSettings(project.full_path)} class="stacked" id="alert-settings">
          <h3>Alert settings</h3>
          <Csrf token={csrf} />
          <Checkbox label="Create an incident for each new alert" name="create_issue" checked={props.settings.create_issue === 1} />
          <Checkbox
            label="Close the incident when its alert is resolved"
            name="auto_close_incident"
            checked={props.settings.auto_close_incident === 1}
          />
          <Checkbox label="Send an email for each new alert" name="send_email" checked={props.settings.send_email === 1} />
          <button type="submit">Save alert settings</button>
        </form>
        {!props.mappingAvailable ? <p class="muted">Custom field mapping needs Premium or Ultimate.</p> : null}
      </section>
      {props.children}
    </section>
  );
}

/** A page that asks before a change that cannot be undone (a new key, a deletion). */
export function ConfirmPage(props: {
  title: string;
  children: ComponentChildren;
  action: string;
  button: string;
  cancel: string;
  csrf: string;
  danger?: boolean;
}) {
  return (
    <section class="confirm">
      <h1>{props.title}</h1>
      <p>{props.children}</p>
      <form method="post" action={props.action} class="inline-action">
        <Csrf token={props.csrf} />
        <button type="submit" class={props.danger ? 'danger' : undefined}>
          {props.button}
        </button>
      </form>{' '}
      <a href={props.cancel} class="button secondary">
        Cancel
      </a>
    </section>
  );
}

/** The custom field mapping of one HTTP integration: its sample, then a path per field. */
export function MappingPage(props: {
  project: ProjectRow;
  integration: IntegrationRow;
  csrf: string;
  available: boolean;
  /** The sample's text as typed (a refused one) or as stored. */
  sampleText: string;
  sampleError: string | null;
  /** Paths of the stored sample (its first `alerts` item when it has one); null: no sample. */
  paths: SamplePath[] | null;
  /** The first item of `alerts` stands for the sample. */
  perItem: boolean;
  mapping: FieldMapping[];
  mappingErrors: FieldErrors | null;
}) {
  const { project, integration, csrf } = props;
  const base = PAGES.mapping(project.full_path, integration.id);
  const mapped = new Map(props.mapping.map((m) => [m.field_name, pathKey(m.path)]));
  if (!props.available) {
    return (
      <section class="mapping">
        <h1>Custom field mapping: {integration.name}</h1>
        <p class="flash flash-error" role="alert">
          Custom field mapping needs Premium or Ultimate.
        </p>
        <p>
          <a href={PAGES.settings(project.full_path)}>Back to Settings &gt; Monitor</a>
        </p>
      </section>
    );
  }
  return (
    <section class="mapping">
      <h1>Custom field mapping: {integration.name}</h1>
      <p class="muted">
        Paste a sample of what your monitoring tool sends, then pick which of its values feeds each alert field. Changing the sample clears
        the mapping.
      </p>
      <form method="post" action={`${base}/sample`} class="stacked">
        <Csrf token={csrf} />
        <TextArea
          label="Sample payload"
          name="payload_example"
          rows={10}
          value={props.sampleText}
          error={props.sampleError ?? undefined}
          hint="A JSON object; with an alerts list, its first item is mapped."
          maxLength={1_000_000}
        />
        <button type="submit" class="secondary">
          Save sample
        </button>
      </form>
      {props.paths === null ? (
        <p class="muted">Save a sample payload to map its fields.</p>
      ) : (
        <form method="post" action={base} class="stacked" id="field-mapping">
          <h2>Fields</h2>
          {props.perItem ? <p class="muted">Paths are read in each item of the payload's alerts list.</p> : null}
          <Csrf token={csrf} />
          <FormError errors={props.mappingErrors ?? undefined} />
          {MAPPABLE_FIELDS.map((field: GenericKey) => (
            <Select
              label={FIELD_LABELS[field]}
              name={`map_${field}`}
              value={mapped.get(field) ?? ''}
              options={[
                { value: '', label: 'Not mapped (the default)' },
                ...pathsForField(field, props.paths ?? []).map((p) => ({ value: pathKey(p.path), label: `${p.label} = ${p.example}` })),
              ]}
            />
          ))}
          <button type="submit">Save mapping</button>
        </form>
      )}
      <p>
        <a href={PAGES.settings(project.full_path)}>Back to Settings &gt; Monitor</a>
      </p>
    </section>
  );
}
