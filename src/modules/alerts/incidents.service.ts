import type { Actor } from '../../infra/auth/index.js';
import type { Executor } from '../../infra/db/index.js';
import { INTERNAL_USERNAMES } from '../../infra/reserved-names.js';
import type { InternalUsers } from '../identity/index.js';
import { AccessLevel, type IssuesService, type ProjectRow } from '../projects/index.js';
import type { AlertRow, AlertsRepository } from './alerts.repository.js';
import { DEFAULT_TITLE } from './normalize-generic.rules.js';

/** The Alert Bot, an internal user created at start-up under its reserved name (identity's InternalUsers). */
export const ALERT_BOT = { key: 'alert_bot', username: INTERNAL_USERNAMES.alertBot, name: 'Alert Bot' } as const;

/** The page of one alert, at the established product's address (documented in docs/api.md). */
export const alertPagePath = (fullPath: string, iid: number): string => `/${fullPath}/-/alert_management/${iid}/details`;

const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];

/** `12 September 2019, 6:00AM (UTC)`, the established incident description's time format (reference A9). */
export function incidentTime(ms: number): string {
  const d = new Date(ms);
  const hour = d.getUTCHours() % 12 === 0 ? 12 : d.getUTCHours() % 12;
  const minute = String(d.getUTCMinutes()).padStart(2, '0');
  return `${d.getUTCDate()} ${MONTHS[d.getUTCMonth()]} ${d.getUTCFullYear()}, ${hour}:${minute}${d.getUTCHours() < 12 ? 'AM' : 'PM'} (UTC)`;
}

/** Reference A9: metadata lines with markdown hard breaks, then the alert's own markdown. */
export function incidentDescription(alert: AlertRow, project: ProjectRow, externalUrl: string): string {
  const hosts = JSON.parse(alert.hosts) as string[];
  const lines = [
    `**Start time:** ${incidentTime(alert.started_at)}`,
    `**Severity:** ${alert.severity}`,
    ...(alert.full_query ? [`**full_query:** \`${alert.full_query.replace(/`/g, "'")}\``] : []),
    ...(alert.service ? [`**Service:** ${alert.service}`] : []),
    ...(alert.monitoring_tool ? [`**Monitoring tool:** ${alert.monitoring_tool}`] : []),
    ...(hosts.length > 0 ? [`**Hosts:** ${hosts.join(' ')}`] : []),
    ...(alert.description ? [`**Description:** ${alert.description}`] : []),
    `**Alert:** ${externalUrl}${alertPagePath(project.full_path, alert.iid)}`,
  ];
  return [lines.join('  \n'), ...(alert.incident_markdown ? [alert.incident_markdown] : [])].join('\n\n---\n\n');
}

/**
 * Opens and closes incident issues for alerts as the Alert Bot, through the projects
 * module's IssuesService inside the ingestion transaction, so the issue, its activity
 * event and the alert commit together.
 */
export class Incidents {
  private bot: Actor | null = null;

  constructor(
    private readonly internalUsers: InternalUsers,
    private readonly issues: IssuesService,
    private readonly alerts: AlertsRepository,
    private readonly externalUrl: string,
  ) {
    internalUsers.register(ALERT_BOT);
  }

  /** The bot user that authors incidents: found by its role, never by a name someone else could hold. */
  async botActor(): Promise<Actor> {
    if (this.bot) return this.bot;
    const user = await this.internalUsers.get(ALERT_BOT.key);
    this.bot = {
      user: { id: user.id, username: user.username, isAdmin: false, state: 'active', bot: true },
      credential: { kind: 'session', id: 0, scopes: null },
    };
    return this.bot;
  }

  /** Opens the incident for a new alert and links it (reference A9). */
  async open(project: ProjectRow, alert: AlertRow, bot: Actor, trx: Executor): Promise<AlertRow> {
    const issue = await this.issues.create(
      project,
      bot.user.id,
      { title: alert.title, description: incidentDescription(alert, project, this.externalUrl), issue_type: 'incident' },
      trx,
    );
    if (alert.title === DEFAULT_TITLE) {
      await this.issues.update(project, issue, bot, AccessLevel.OWNER, { title: `New: Incident ${issue.iid}` }, trx);
    }
    const linked = await this.alerts.on(trx).update(alert.id, { issue_id: issue.id });
    return linked ?? alert;
  }

  /**
   * Opens the incident a person asked for on the alert's page: authored by them, described as
   * the automatic one (reference A9), linked to the alert. Answers the issue's iid.
   */
  async openBy(project: ProjectRow, alert: AlertRow, authorId: number, trx: Executor): Promise<number> {
    const issue = await this.issues.create(
      project,
      authorId,
      { title: alert.title, description: incidentDescription(alert, project, this.externalUrl), issue_type: 'incident' },
      trx,
    );
    await this.alerts.on(trx).update(alert.id, { issue_id: issue.id });
    return issue.iid;
  }

  /** Closes the alert's incident when it is still open (`auto_close_incident`). */
  async close(project: ProjectRow, alert: AlertRow, bot: Actor, trx: Executor): Promise<void> {
    if (alert.issue_id === null) return;
    const issue = await this.issues.findById(alert.issue_id, trx);
    if (!issue || issue.state === 'closed') return;
    await this.issues.update(project, issue, bot, AccessLevel.OWNER, { state_event: 'close' }, trx);
  }
}
