import type { Actor } from '../../infra/auth/index.js';
import type { Clock } from '../../infra/clock.js';
import type { Database, Executor, Transact } from '../../infra/db/index.js';
import { BadRequestError } from '../../infra/errors/index.js';
import type { ProjectRow, ProjectsService } from '../projects/index.js';
import type { AlertsRepository, AlertRow, AlertSettingsRow } from './alerts.repository.js';
import type { Incidents } from './incidents.service.js';
import { AlertActivityRepository } from './activity.repository.js';
import type { IntegrationRow } from './integrations.repository.js';
import { multipleIntegrations } from './integrations.service.js';
import { ingestMapping } from './mappings.rules.js';
import { jsonDepth } from '../../infra/json-depth.js';
import { isObject, type NormalizedAlert } from './normalize-common.rules.js';
import { PAYLOAD_MAX_DEPTH } from './alerts.schemas.js';
import { normalizeGeneric } from './normalize-generic.rules.js';
import { alertItems, checkTopLevel, isPrometheusPayload, normalizePrometheusItem } from './normalize-prometheus.rules.js';
import type { Tier } from '../../config/index.js';

/** What the receiver answers for each alert a request touched (SPEC "Alert receiver"). */
export interface AlertSummary {
  iid: number;
  title: string;
}

/** Where one alert e-mail goes and why (the reason header: participating, watching, subscribed). */
export interface AlertEmailRecipient {
  to: string;
  reason: string;
}

/** One alert e-mail as the notifications module queues it (it adds the list and unsubscribe headers). */
export interface AlertEmail extends AlertEmailRecipient {
  userId: number;
  projectId: number;
  projectPath: string;
  subject: string;
  text: string;
  url: string;
}

/** Who gets alert emails and how they are queued; the notifications module provides it (port, so alerts work without it). */
export interface AlertRecipients {
  /** Whether mail is configured at all (nothing is queued when it is not). */
  readonly enabled: boolean;
  /** Recipients of `event` in the project, `participants` counting as taking part, with addresses and reasons. */
  alertRecipients(projectId: number, event: string, participants: readonly number[]): Promise<ReadonlyMap<number, AlertEmailRecipient>>;
  /** Queues one e-mail in the caller's transaction (nothing when mail is not configured); a repeated `messageId` is ignored. */
  queueAlertEmail(executor: Executor, mail: AlertEmail, options?: { messageId?: string }): Promise<void>;
}

/** Notification event name used to ask who wants alert emails. */
export const ALERT_EMAIL_EVENT = 'alert_fired';

/**
 * The outbox kind of "alerts fired or were resolved, mail their recipients": each alert is a
 * part of the item its ingest transaction writes (`Outbox.enqueuePart`: one row per shared
 * commit, whatever the number of alerts in it); the outbox job turns each part into the e-mails
 * (alert-mail.service.ts), so a request pays a share of one insert whatever the recipients.
 */
export const ALERT_MAIL_KIND = 'alert_email';

/** What an alert-mail part holds: the alert as it was when it fired or was resolved. */
export interface AlertMailItem {
  projectId: number;
  projectPath: string;
  what: 'triggered' | 'resolved';
  iid: number;
  title: string;
  severity: string;
  startedAt: number;
  description: string | null;
}

/** Queues an item in the caller's transaction (the platform's outbox). */
export type EnqueueAlertMail = (executor: Executor, item: AlertMailItem) => Promise<void>;

export const DEPTH_MESSAGE = `400 Bad request - the alert payload nests deeper than ${PAYLOAD_MAX_DEPTH} levels`;

export const DEFAULT_SETTINGS = { create_issue: 0, auto_close_incident: 1, send_email: 0 } as const;

interface Context {
  project: ProjectRow;
  integration: IntegrationRow;
  settings: Pick<AlertSettingsRow, 'create_issue' | 'auto_close_incident' | 'send_email'>;
  bot: Actor | null;
  /** Whether each alert fired or resolved queues its mail item (send_email on and mail configured). */
  mail: boolean;
  /** The whole payload and, when known, the text it arrived as (stored as is). */
  payload: unknown;
  receivedText: string | undefined;
}

/** What the receiver already knows about a payload it hands over. */
export interface Received {
  /** The project's alert settings (a cached receiver target). */
  settings?: Context['settings'];
  /** The body's text, when storing it is faithful to the parsed payload (notify.routes.ts). */
  text?: string | undefined;
}

/**
 * Processing of reference A6: normalise, then per alert one short transaction step: resolve
 * the open alert, or count one more event on it, or create it (with its incident and emails).
 */
export class IngestService {
  constructor(
    private readonly db: Database,
    private readonly alerts: AlertsRepository,
    private readonly transact: Transact,
    private readonly clock: Clock,
    private readonly tier: Tier,
    private readonly projects: ProjectsService,
    private readonly incidents: Incidents,
    private readonly recipients: () => AlertRecipients | null,
    private readonly enqueueMail: EnqueueAlertMail,
  ) {}

  /**
   * Turns a payload into normalised alerts: Prometheus shape by integration or by content.
   * A custom mapping whose sample had an `alerts` array reads each item of a payload's
   * `alerts`, each one an alert; a payload without that array is the one item (what a test
   * alert of such a sample sends). Prometheus-shaped payloads apply it per item too, over
   * the Prometheus rules; a mapping of a whole document does not apply to them
   * (docs/decisions.md, "Custom mappings on live alerts").
   */
  normalize(integration: IntegrationRow, payload: unknown, now: number): { items: NormalizedAlert[]; prometheus: boolean } {
    if (!isObject(payload)) throw new BadRequestError('400 Bad request - the alert payload must be a JSON object');
    if (jsonDepth(payload, PAYLOAD_MAX_DEPTH) > PAYLOAD_MAX_DEPTH) throw new BadRequestError(DEPTH_MESSAGE);
    const mapping = multipleIntegrations(this.tier) ? ingestMapping(integration) : { fields: [], perItem: false };
    // Reference A2 step 4: a payload in Alertmanager's shape is read as one on any endpoint.
    if (integration.type === 'prometheus' || isPrometheusPayload(payload)) {
      const fields = mapping.perItem ? mapping.fields : [];
      const items = checkTopLevel(payload)
        .map((item) => normalizePrometheusItem(item, now, fields))
        .filter((a): a is NormalizedAlert => a !== null);
      return { items, prometheus: true };
    }
    const options = { now, generateFingerprint: multipleIntegrations(this.tier), mappings: mapping.fields };
    const documents = mapping.perItem && Array.isArray(payload.alerts) ? alertItems(payload.alerts) : [payload];
    return { items: documents.map((document) => normalizeGeneric(document, options)), prometheus: false };
  }

  async ingest(project: ProjectRow, integration: IntegrationRow, payload: unknown, received: Received = {}): Promise<AlertSummary[]> {
    const now = this.clock.now();
    const { items, prometheus } = this.normalize(integration, payload, now);
    if (items.length === 0) return [];
    const settings = received.settings ?? (await this.alerts.findSettings(project.id)) ?? DEFAULT_SETTINGS;
    const bot = settings.create_issue || settings.auto_close_incident ? await this.incidents.botActor() : null;
    // The recipients are found by the outbox job when it sends (alert-mail.service.ts), not here.
    const mail = settings.send_email === 1 && this.recipients()?.enabled === true;
    const ctx: Context = { project, integration, settings, bot, mail, payload, receivedText: received.text };

    const touched = await this.transact(async (trx) => {
      const out: Pick<AlertRow, 'iid' | 'title'>[] = [];
      for (const item of items) {
        const row = item.resolving ? await this.resolve(ctx, item, now, trx) : await this.fire(ctx, item, now, trx);
        if (row) out.push(row);
      }
      return out;
    });
    // Reference A3: a generic recovery alert with no open alert to resolve is a 400.
    if (touched.length === 0 && !prometheus) {
      throw new BadRequestError('400 Bad request - no open alert matches this recovery alert');
    }
    return touched.map((a) => ({ iid: a.iid, title: a.title }));
  }

  private async resolve(ctx: Context, item: NormalizedAlert, now: number, trx: Executor): Promise<AlertRow | null> {
    if (item.fingerprint === null) return null;
    const resolved = await this.alerts.on(trx).resolveOpen(ctx.project.id, item.fingerprint, item.endedAt ?? now, now);
    if (!resolved) return null;
    // The alert's page lists who resolved it: here its monitoring tool (no author).
    await new AlertActivityRepository(trx).add({
      project_id: ctx.project.id,
      alert_id: resolved.id,
      kind: 'status',
      detail: 'resolved',
      author_id: null,
      created_at: now,
    });
    if (ctx.settings.auto_close_incident && ctx.bot) await this.incidents.close(ctx.project, resolved, ctx.bot, trx);
    await this.queueEmails(ctx, resolved, 'resolved', trx);
    return resolved;
  }

  private async fire(ctx: Context, item: NormalizedAlert, now: number, trx: Executor): Promise<Pick<AlertRow, 'iid' | 'title'>> {
    const alerts = this.alerts.on(trx);
    if (item.fingerprint !== null) {
      const grouped = await alerts.incrementOpen(ctx.project.id, item.fingerprint, now);
      if (grouped) return grouped;
    }
    const iid = await this.projects.nextInternalId(ctx.project.id, 'alerts', trx);
    const values = {
      project_id: ctx.project.id,
      iid,
      integration_id: ctx.integration.id,
      title: item.title,
      description: item.description,
      service: item.service,
      monitoring_tool: item.monitoringTool,
      hosts: JSON.stringify(item.hosts),
      severity: item.severity,
      status: 'triggered' as const,
      started_at: item.startedAt,
      ended_at: null,
      events: 1,
      fingerprint: item.fingerprint,
      environment_name: item.environmentName,
      runbook: item.runbook,
      full_query: item.fullQuery,
      y_label: item.yLabel,
      incident_markdown: item.incidentMarkdown,
      // A generic alert's payload is the whole body: stored as the text it came in.
      payload: item.payload === ctx.payload && ctx.receivedText !== undefined ? ctx.receivedText : JSON.stringify(item.payload),
      custom_fields: JSON.stringify(item.customFieldPaths),
      issue_id: null,
      created_at: now,
      updated_at: now,
      assignee_id: null,
    };
    let row: AlertRow;
    if (item.fingerprint !== null) {
      const head = await alerts.insertOrIncrement(values);
      // Another request created this fingerprint between our increment and insert: it was grouped.
      if (head.iid !== iid) return head;
      row = { id: head.id, ...values };
    } else {
      row = await alerts.insert(values);
    }
    const created = ctx.settings.create_issue && ctx.bot ? await this.incidents.open(ctx.project, row, ctx.bot, trx) : row;
    await this.queueEmails(ctx, created, 'triggered', trx);
    return created;
  }

  private async queueEmails(ctx: Context, alert: AlertRow, what: 'triggered' | 'resolved', trx: Executor): Promise<void> {
    if (!ctx.mail) return;
    await this.enqueueMail(trx, {
      projectId: ctx.project.id,
      projectPath: ctx.project.full_path,
      what,
      iid: alert.iid,
      title: alert.title,
      severity: alert.severity,
      startedAt: alert.started_at,
      description: alert.description,
    });
  }
}
