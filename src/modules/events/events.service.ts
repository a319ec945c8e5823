import type { Actor } from '../../infra/auth/index.js';
import { BadRequestError } from '../../infra/errors/index.js';
import type { UserRow } from '../identity/index.js';
import { AccessLevel, type AccessPolicy, type ProjectRow, type ProjectsService } from '../projects/index.js';
import { ACTIONS, TARGET_TYPES, type ActionName } from './events.actions.js';
import type { EventsRepository, EventFilter, EventSource, VisibleProjects } from './events.repository.js';

/** Raw query parameters of the three list routes (reference §2.2). */
export interface EventsQuery {
  action?: string | undefined;
  target_type?: string | undefined;
  before?: string | undefined;
  after?: string | undefined;
  sort?: string | undefined;
  scope?: string | undefined;
}

export type EventDetail = Awaited<ReturnType<EventsRepository['details']>>[number];

const DAY = 86_400_000;

/** `YYYY-MM-DD` (a full ISO 8601 timestamp is read by its date) -> UTC midnight, or 400. */
function parseDay(value: string, name: string): number {
  const match = /^(\d{4})-(\d{2})-(\d{2})(?:[T ][\d:.]+(?:Z|[+-]\d{2}:?\d{2})?)?$/.exec(value.trim());
  const ms = match ? Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3])) : Number.NaN;
  const valid = match && new Date(ms).getUTCDate() === Number(match[3]);
  if (!valid) throw new BadRequestError(`${name} is invalid`);
  return ms;
}

/** Validates the filters: unknown values are 400 naming the parameter (reference §2.2). */
export function parseFilter(query: EventsQuery): EventFilter {
  const filter: EventFilter = { sort: 'desc' };
  if (query.action !== undefined) {
    if (!Object.hasOwn(ACTIONS, query.action)) throw new BadRequestError('action does not have a valid value');
    filter.action = ACTIONS[query.action as ActionName];
  }
  if (query.target_type !== undefined) {
    const type = Object.hasOwn(TARGET_TYPES, query.target_type) ? TARGET_TYPES[query.target_type] : undefined;
    if (!type) throw new BadRequestError('target_type does not have a valid value');
    filter.targetType = type;
  }
  // Both bounds are whole days and exclusive (reference §2.2): before=D keeps what happened
  // before D began; after=D keeps what happened after D ended.
  if (query.before !== undefined) filter.createdBefore = parseDay(query.before, 'before');
  if (query.after !== undefined) filter.createdFrom = parseDay(query.after, 'after') + DAY;
  if (query.sort !== undefined) {
    if (query.sort !== 'asc' && query.sort !== 'desc') throw new BadRequestError('sort does not have a valid value');
    filter.sort = query.sort;
  }
  return filter;
}

/** Reading activity events with the visibility rules of reference §2.3. */
export class EventsService {
  constructor(
    private readonly events: EventsRepository,
    private readonly access: AccessPolicy,
    private readonly projects: ProjectsService,
  ) {}

  /** A project's events; the caller has already passed the project lookup. */
  listForProject(actor: Actor | null, project: ProjectRow, level: number, filter: EventFilter, limit: number, offset: number) {
    return this.list(actor, { kind: 'project', projectId: project.id }, filter, limit, offset, new Map([[project.id, level]]));
  }

  /** Events authored by `user` in projects the caller may see; a private profile shows none. */
  async listForUser(actor: Actor | null, user: UserRow, filter: EventFilter, limit: number, offset: number) {
    const self = actor !== null && (actor.user.id === user.id || actor.user.isAdmin);
    if (user.private_profile === 1 && !self) return { rows: [], total: 0 };
    const scope: VisibleProjects = await this.access.projectScope(actor);
    return this.list(actor, { kind: 'author', authorId: user.id, scope }, filter, limit, offset);
  }

  /** `scope=all`: every event in the projects the caller is a member of (reference §2.2). */
  async listForMember(actor: Actor, filter: EventFilter, limit: number, offset: number) {
    const scope: VisibleProjects = await this.access.projectScope(actor);
    return this.list(actor, { kind: 'projects', scope }, filter, limit, offset);
  }

  /**
   * The newest events in the caller's projects, uncounted (the dashboard shows no total):
   * the count reads up to COUNT_LIMIT events of a member of many busy projects.
   */
  async recentForMember(actor: Actor, limit: number): Promise<EventDetail[]> {
    const scope: VisibleProjects = await this.access.projectScope(actor);
    return this.details(actor, await this.events.newest({ kind: 'projects', scope }, limit), new Map());
  }

  private async list(
    actor: Actor | null,
    source: EventSource,
    filter: EventFilter,
    limit: number,
    offset: number,
    levels = new Map<number, number>(),
  ): Promise<{ rows: EventDetail[]; total: number }> {
    const { ids, total } = await this.events.page(source, filter, limit, offset);
    return { rows: await this.details(actor, ids, levels), total };
  }

  private async details(actor: Actor | null, ids: number[], levels: Map<number, number>): Promise<EventDetail[]> {
    const byId = new Map((await this.events.details(ids)).map((d) => [d.id, d]));
    const ordered = ids.map((id) => byId.get(id)).filter((d): d is EventDetail => d !== undefined);
    // Like the established product, the page is filtered after it is loaded, so it may hold
    // fewer than per_page events while X-Total counts them all (reference §2.3 step 5).
    const visible: EventDetail[] = [];
    for (const event of ordered) if (await this.visible(actor, event, levels)) visible.push(event);
    return visible;
  }

  /** Per-event abilities (reference §2.3 "capabilities") beyond seeing the project. */
  private async visible(actor: Actor | null, e: EventDetail, levels: Map<number, number>): Promise<boolean> {
    if (actor?.user.isAdmin) return true;
    const level = async () => {
      if (e.project_id === null) return AccessLevel.NONE;
      const known = levels.get(e.project_id);
      if (known !== undefined) return known;
      const project = await this.projects.findById(e.project_id);
      const value = project ? await this.access.projectLevel(actor, project) : AccessLevel.NONE;
      levels.set(e.project_id, value);
      return value;
    };
    const me = actor?.user.id ?? null;
    const confidentialIssue = (confidential: number | null, authorId: number | null) =>
      confidential === 1 && authorId !== me ? level().then((l) => l >= AccessLevel.REPORTER) : Promise.resolve(true);
    const snippet = (visibility: string | null, authorId: number | null) => {
      if (visibility === null || authorId === me || visibility === 'public') return Promise.resolve(true);
      return level().then((l) => l >= AccessLevel.GUEST || (visibility === 'internal' && actor !== null));
    };
    if (e.target_type === 'Issue') return confidentialIssue(e.issue_confidential, e.issue_author_id);
    if (e.target_type === 'Snippet') return snippet(e.snippet_visibility, e.snippet_author_id);
    if (e.target_type === 'Note') {
      if (e.note_id === null) return false;
      if (e.noteable_type === 'Issue') return confidentialIssue(e.noteable_confidential, e.noteable_author_id);
      if (e.noteable_type === 'Snippet') return snippet(e.noteable_snippet_visibility, e.noteable_snippet_author_id);
      return true;
    }
    // Pushes need the right to download code: Reporter+ on a private project (reference §2.3).
    if (e.action === ACTIONS.pushed) {
      const project = e.project_id === null ? undefined : await this.projects.findById(e.project_id);
      return project !== undefined && (project.visibility !== 'private' || (await level()) >= AccessLevel.REPORTER);
    }
    return true;
  }
}
