import type { Tier } from '../../config/index.js';
import type { Clock } from '../../infra/clock.js';
import { isUniqueViolation, type Executor } from '../../infra/db/index.js';
import { BadRequestError, ValidationError } from '../../infra/errors/index.js';
import type { UserRow, UsersService } from '../identity/index.js';
import type { GroupsService, MembersService, ProjectsService } from '../projects/index.js';
import {
  DEFAULT_GLOBAL_LEVEL,
  DEFAULT_ON_EVENTS,
  DEFAULT_SOURCE_LEVEL,
  eventsFor,
  isLevel,
  parseBooleanParam,
  tierHasEpics,
  type Level,
  type NotificationEvent,
  type SourceKind,
} from './notifications.levels.js';
import { GLOBAL_SOURCE_ID, NotificationsRepository, type NotificationSettingRow, type SettingChanges } from './notifications.repository.js';
import { decides, reasonOf, type MailReason, type Participation } from './notifications.rules.js';

/** A setting as the API shows it: stored, or the default nobody has saved yet. */
export interface SettingView {
  level: Level;
  events: Partial<Record<NotificationEvent, boolean | null>>;
}

export interface GlobalSettingView extends SettingView {
  notification_email: string;
}

/** Raw request parameters: `level`, `notification_email` (global only) and event booleans. */
export type SettingInput = Record<string, unknown>;

export interface NotificationsDeps {
  users: UsersService;
  projects: ProjectsService;
  groups: GroupsService;
  members: MembersService;
}

const MAX_EMAIL_LENGTH = 255;

/**
 * Notification settings (SPEC "Notification setting", reference §1) and the one place that
 * answers which level applies to a user for a project (reference §1.7). Reads go through the
 * platform connection: call these outside an open SQLite transaction.
 */
export class NotificationsService {
  constructor(
    private readonly settings: NotificationsRepository,
    private readonly clock: Clock,
    private readonly tier: Tier,
    private readonly deps: NotificationsDeps,
  ) {}

  /** The global setting; the first read saves the default `participating` (reference §1.5). */
  async getGlobal(user: UserRow): Promise<GlobalSettingView> {
    const row = await this.globalRow(user.id);
    return { ...this.view(row, 'global'), notification_email: row.notification_email ?? user.email };
  }

  async updateGlobal(user: UserRow, input: SettingInput): Promise<GlobalSettingView> {
    const changes = this.parse(input, 'global');
    if (input.notification_email !== undefined) changes.notification_email = await this.checkEmail(user, input.notification_email);
    const row = await this.globalRow(user.id);
    const saved = Object.keys(changes).length ? await this.settings.update(row.id, changes, this.clock.now()) : row;
    return { ...this.view(saved, 'global'), notification_email: saved.notification_email ?? user.email };
  }

  /** A group (`namespace`) or project setting; a GET never saves the default `global`. */
  async getSource(userId: number, kind: 'namespace' | 'project', sourceId: number): Promise<SettingView> {
    const row = await this.settings.find(userId, kind, sourceId);
    return row ? this.view(row, kind) : { level: DEFAULT_SOURCE_LEVEL, events: this.emptyEvents(kind) };
  }

  async updateSource(userId: number, kind: 'namespace' | 'project', sourceId: number, input: SettingInput): Promise<SettingView> {
    const changes = this.parse(input, kind);
    const now = this.clock.now();
    const existing = await this.settings.find(userId, kind, sourceId);
    if (existing) return this.view(Object.keys(changes).length ? await this.settings.update(existing.id, changes, now) : existing, kind);
    try {
      return this.view(await this.settings.insert(userId, kind, sourceId, DEFAULT_SOURCE_LEVEL, changes, now), kind);
    } catch (error) {
      if (!isUniqueViolation(error)) throw error;
      // A concurrent first PUT created the row; apply ours on top of it.
      const row = await this.settings.find(userId, kind, sourceId);
      if (!row) throw error;
      return this.view(await this.settings.update(row.id, changes, now), kind);
    }
  }

  /** The events a setting of this kind carries on this tier (the settings page's Custom checkboxes). */
  eventsOf(kind: SourceKind): NotificationEvent[] {
    return eventsFor(kind, this.tier);
  }

  /** Whether `event` is on in a saved setting (unset pipeline failures and fixes read as on). */
  eventOn(row: NotificationSettingRow | undefined, event: NotificationEvent): boolean {
    const value = row ? row[event] : null;
    return value === null || value === undefined ? DEFAULT_ON_EVENTS.has(event) : value === 1;
  }

  /** A user's saved group and project settings (for the settings page). */
  listSaved(userId: number): Promise<NotificationSettingRow[]> {
    return this.settings.listForUser(userId);
  }

  /** Which level applies: the project's, else the nearest non-global group's, else the global one. */
  async effectiveLevel(userId: number, projectId: number): Promise<Level> {
    const [resolved] = await this.resolve([userId], projectId);
    return resolved?.level ?? DEFAULT_GLOBAL_LEVEL;
  }

  /**
   * Whether `event` notifies the user about this project. Without `participation` the user is
   * taken as not having taken part, so `participating` and `mention` answer false except for
   * the pipeline/move events `participating` always gets (reference §1.7).
   */
  async notifies(userId: number, projectId: number, event: string, participation: Participation = {}): Promise<boolean> {
    const [resolved] = await this.resolve([userId], projectId);
    const level = resolved?.level ?? DEFAULT_GLOBAL_LEVEL;
    return decides(level, resolved?.row ?? null, event, {
      participant: participation.participants?.includes(userId) ?? participation.participant ?? false,
      mentioned: participation.mentioned?.includes(userId) ?? false,
    });
  }

  /**
   * Active members of the project (direct, or through any group above it) whose effective
   * level asks for `event`, in ascending id order.
   */
  async recipients(projectId: number, event: string, participation: Participation = {}): Promise<number[]> {
    return (await this.recipientDetails(projectId, event, participation)).map((r) => r.userId);
  }

  /**
   * Who `event` in this project notifies, with the reason the mail names, in ascending id
   * order: active candidates (members and `extra`: participants, mentioned users, watchers
   * outside the membership) whose effective level asks for it, minus `exclude` (the actor) and
   * minus users `canSee` refuses.
   */
  async recipientDetails(
    projectId: number,
    event: string,
    participation: Participation = {},
    options: { extra?: readonly number[]; exclude?: number | null; canSee?: (user: UserRow) => Promise<boolean> } = {},
  ): Promise<Array<{ userId: number; reason: MailReason }>> {
    const memberIds = await this.memberIds(projectId);
    const candidates = [...new Set([...memberIds, ...(options.extra ?? [])])].filter((id) => id !== options.exclude);
    const users = await this.deps.users.mapByIds(candidates);
    const active = candidates.filter((id) => users.get(id)?.state === 'active');
    const resolved = await this.resolve(active, projectId);
    const out: Array<{ userId: number; reason: MailReason }> = [];
    for (const r of resolved) {
      const who = {
        participant: participation.participants?.includes(r.userId) ?? false,
        mentioned: participation.mentioned?.includes(r.userId) ?? false,
      };
      if (!decides(r.level, r.row, event, who)) continue;
      const user = users.get(r.userId) as UserRow;
      if (options.canSee && !(await options.canSee(user))) continue;
      out.push({ userId: r.userId, reason: reasonOf(r.level, who) });
    }
    return out.sort((a, b) => a.userId - b.userId);
  }

  /**
   * Active human members of the project with at least `minAccess` (direct, through a group above
   * it, or owning its personal namespace) whose effective level is not `disabled`, in ascending id
   * order, with the reason their mail names (they take part: `participating`). The recipients
   * of new and regressed error mails (docs/decisions.md).
   */
  async membersNotDisabled(projectId: number, minAccess: number): Promise<Array<{ userId: number; reason: MailReason }>> {
    const candidates = await this.memberIds(projectId, minAccess);
    const users = await this.deps.users.mapByIds(candidates);
    const humans = candidates.filter((id) => users.get(id)?.state === 'active' && users.get(id)?.bot !== 1);
    const resolved = await this.resolve(humans, projectId);
    return resolved
      .filter((r) => r.level !== 'disabled')
      .map((r) => ({ userId: r.userId, reason: reasonOf(r.level, { participant: true, mentioned: false }) }))
      .sort((a, b) => a.userId - b.userId);
  }

  /** Users who saved `watch` or `custom` for the project or a group above it (watchers outside the membership). */
  async watcherIds(projectId: number): Promise<number[]> {
    const project = await this.deps.projects.findById(projectId);
    if (!project) return [];
    return this.settings.watchers(projectId, await this.ancestryIds(project.namespace_id));
  }

  /** Turns notifications of this project off for the user (the one-click unsubscribe). */
  async disableProject(userId: number, projectId: number): Promise<void> {
    await this.updateSource(userId, 'project', projectId, { level: 'disabled' });
  }

  /** The address notifications go to: the chosen notification email, else the primary email. */
  async notificationEmails(userIds: readonly number[]): Promise<Map<number, string>> {
    const unique = [...new Set(userIds)];
    const [users, rows] = await Promise.all([this.deps.users.mapByIds(unique), this.settings.globalEmails(unique)]);
    const chosen = new Map(rows.map((r) => [r.user_id, r.notification_email]));
    const out = new Map<number, string>();
    for (const id of unique) {
      const user = users.get(id);
      if (user) out.set(id, chosen.get(id) ?? user.email);
    }
    return out;
  }

  /** One user's notification address, read with the caller's executor (a bus subscriber inside the publisher's transaction). */
  async notificationEmailOf(user: UserRow, executor: Executor): Promise<string> {
    const [row] = await this.settings.on(executor).globalEmails([user.id]);
    return row?.notification_email ?? user.email;
  }

  /** The primary email once confirmed, plus confirmed secondary emails (reference §1.3). */
  async verifiedEmails(user: UserRow): Promise<string[]> {
    const secondary = await this.settings.listEmails(user.id);
    return [...(user.confirmed_at !== null ? [user.email] : []), ...secondary.filter((e) => e.confirmed_at !== null).map((e) => e.email)];
  }

  /** Records a secondary email (confirmed or not); there is no REST endpoint for it yet. */
  addEmail(userId: number, email: string, confirmed: boolean) {
    const now = this.clock.now();
    return this.settings.insertEmail(userId, email, confirmed ? now : null, now);
  }

  private async globalRow(userId: number): Promise<NotificationSettingRow> {
    const found = await this.settings.find(userId, 'global', GLOBAL_SOURCE_ID);
    if (found) return found;
    try {
      return await this.settings.insert(userId, 'global', GLOBAL_SOURCE_ID, DEFAULT_GLOBAL_LEVEL, {}, this.clock.now());
    } catch (error) {
      const row = isUniqueViolation(error) ? await this.settings.find(userId, 'global', GLOBAL_SOURCE_ID) : undefined;
      if (!row) throw error;
      return row;
    }
  }

  private async checkEmail(user: UserRow, value: unknown): Promise<string | null> {
    if (value === null || (typeof value === 'string' && value.trim() === '')) return null;
    if (typeof value !== 'string' || value.length > MAX_EMAIL_LENGTH) throw new BadRequestError('notification_email is invalid');
    const wanted = value.trim().toLowerCase();
    const match = (await this.verifiedEmails(user)).find((e) => e.toLowerCase() === wanted);
    if (!match) throw ValidationError.field('notification_email', 'must be an email you have verified');
    return match;
  }

  /** Validates `level` and the event booleans; unknown keys are ignored (reference §1.1). */
  private parse(input: SettingInput, kind: SourceKind): SettingChanges {
    const changes: SettingChanges = {};
    if (input.level !== undefined) {
      // Only scalars are written back into the message: an object or array of any depth is named
      // by its type (serialising a hostile one could overflow the stack).
      const value: unknown = input.level;
      const level =
        typeof value === 'string'
          ? value
          : typeof value === 'number' || typeof value === 'boolean'
            ? String(value)
            : Array.isArray(value)
              ? 'array'
              : typeof value;
      if (!isLevel(level)) throw new BadRequestError(`'${level.slice(0, 100)}' is not a valid level`);
      changes.level = level;
    }
    if (input.new_epic !== undefined && !tierHasEpics(this.tier) && kind !== 'project') {
      throw new BadRequestError('new_epic is not available on the free tier');
    }
    for (const event of eventsFor(kind, this.tier)) {
      if (input[event] === undefined) continue;
      const value = parseBooleanParam(input[event]);
      if (value === undefined) throw new BadRequestError(`${event} is invalid`);
      changes[event] = value === null ? null : value ? 1 : 0;
    }
    return changes;
  }

  private view(row: NotificationSettingRow, kind: SourceKind): SettingView {
    const events: SettingView['events'] = {};
    for (const event of eventsFor(kind, this.tier)) events[event] = row[event] === null ? null : row[event] === 1;
    return { level: isLevel(row.level) ? row.level : DEFAULT_SOURCE_LEVEL, events };
  }

  private emptyEvents(kind: SourceKind): SettingView['events'] {
    return Object.fromEntries(eventsFor(kind, this.tier).map((e) => [e, null]));
  }

  /** Users who are members of the project directly or through a group above it (unexpired), at `minAccess` or more. */
  private async memberIds(projectId: number, minAccess = 0): Promise<number[]> {
    const project = await this.deps.projects.findById(projectId);
    if (!project) return [];
    const ancestry = await this.ancestryIds(project.namespace_id);
    const now = this.clock.now();
    const rows = [
      ...(await this.deps.members.listAll('project', [projectId])),
      ...(await this.deps.members.listAll('namespace', ancestry)),
    ];
    const ids = new Set(
      rows.filter((m) => (m.expires_at === null || m.expires_at > now) && m.access_level >= minAccess).map((m) => m.user_id),
    );
    // The owner of a personal namespace is its implicit member.
    const namespace = await this.deps.groups.findByIdIncludingDeleted(project.namespace_id);
    if (namespace?.kind === 'user' && namespace.owner_id !== null) ids.add(namespace.owner_id);
    return [...ids];
  }

  /** Group ids above the project, nearest first (empty for personal namespaces). */
  private async ancestryIds(namespaceId: number): Promise<number[]> {
    const namespace = await this.deps.groups.findByIdIncludingDeleted(namespaceId);
    if (namespace?.kind !== 'group') return [];
    return (await this.deps.groups.ancestry(namespace)).reverse().map((n) => n.id);
  }

  private async resolve(userIds: readonly number[], projectId: number) {
    const project = await this.deps.projects.findById(projectId);
    const nearestFirst = project ? await this.ancestryIds(project.namespace_id) : [];
    const rows = await this.settings.forResolution(userIds, projectId, nearestFirst);
    return userIds.map((userId) => {
      const mine = rows.filter((r) => r.user_id === userId);
      const projectRow = mine.find((r) => r.source_kind === 'project' && r.level !== 'global');
      const groupRow = nearestFirst
        .map((id) => mine.find((r) => r.source_kind === 'namespace' && r.source_id === id && r.level !== 'global'))
        .find((r) => r !== undefined);
      const globalRow = mine.find((r) => r.source_kind === 'global');
      const row = projectRow ?? groupRow ?? globalRow ?? null;
      const level: Level = row && isLevel(row.level) ? row.level : DEFAULT_GLOBAL_LEVEL;
      return { userId, level, row };
    });
  }
}
