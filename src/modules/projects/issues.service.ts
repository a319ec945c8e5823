import type { Actor } from '../../infra/auth/index.js';
import type { DomainEventBus } from '../../infra/bus.js';
import type { Clock } from '../../infra/clock.js';
import type { Database, Executor } from '../../infra/db/index.js';
import { BadRequestError, ForbiddenError, NotFoundError, ValidationError } from '../../infra/errors/index.js';
import { AccessLevel } from './access.policy.js';
import type { IssueFilter, IssueRow, IssuesRepository, NoteRow } from './issues.repository.js';
import type { SpamChecker, SpamContext } from '../spam/index.js';
import type { ProjectRow, ProjectsRepository } from './projects.repository.js';

/** Assignees and the due date: set by Reporter and above; others' values are ignored, as the established product does. */
export interface IssuePlanningInput {
  /** One user (`0` or null: nobody); `assignee_ids` wins when both are given. */
  assignee_id?: number | null | undefined;
  /** Users (`[]` or `[0]`: nobody); on Free only the first counts. */
  assignee_ids?: number[] | undefined;
  /** `YYYY-MM-DD`; empty or null clears it. */
  due_date?: string | null | undefined;
}

export interface CreateIssueInput extends IssuePlanningInput {
  title: string;
  description?: string | undefined;
  issue_type?: 'issue' | 'incident' | undefined;
  confidential?: boolean | undefined;
}

export interface UpdateIssueInput extends IssuePlanningInput {
  title?: string | undefined;
  description?: string | undefined;
  state_event?: 'close' | 'reopen' | undefined;
  issue_type?: 'issue' | 'incident' | undefined;
  confidential?: boolean | undefined;
}

/** Who may be assigned: the users among `userIds` who exist, are active and may see the project. */
export interface IssuePeople {
  readable(project: ProjectRow, userIds: readonly number[]): Promise<number[]>;
  /** Premium and Ultimate keep several assignees; Free keeps the first. */
  multipleAssignees: boolean;
}

const DAY_PATTERN = /^(\d{4})-(\d{2})-(\d{2})$/;

/** `YYYY-MM-DD` of a real calendar day, or undefined. */
export function parseDay(value: string): string | undefined {
  const match = DAY_PATTERN.exec(value);
  if (!match) return undefined;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const date = new Date(Date.UTC(year, month - 1, day));
  if (year < 1 || date.getUTCFullYear() !== year || date.getUTCMonth() !== month - 1 || date.getUTCDate() !== day) return undefined;
  return value;
}

/** The due date an input asks for: undefined (unchanged), null (cleared) or a day; a bad value is a 400. */
function wantedDueDate(input: IssuePlanningInput): string | null | undefined {
  if (input.due_date === undefined) return undefined;
  if (input.due_date === null || input.due_date.trim() === '') return null;
  const day = parseDay(input.due_date.trim());
  if (day === undefined) throw new BadRequestError('due_date is invalid');
  return day;
}

const DAY_MS = 86_400_000;
const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** The `due_date` list filter (the established product's values) as the repository reads it, for the UTC day of `now`. */
export function dueFilterOf(value: string | undefined, now: number): IssueFilter['due'] {
  const today = new Date(dayOf(now) + 'T00:00:00Z');
  const y = today.getUTCFullYear();
  const m = today.getUTCMonth();
  const shift = (days: number) => dayOf(today.getTime() + days * DAY_MS);
  switch (value) {
    case '0':
      return 'none';
    case 'any':
      return 'any';
    case 'today':
      return { from: shift(0), to: shift(0) };
    case 'tomorrow':
      return { from: shift(1), to: shift(1) };
    case 'overdue':
      return { to: shift(-1) };
    case 'week': {
      const sinceMonday = (today.getUTCDay() + 6) % 7;
      return { from: shift(-sinceMonday), to: shift(6 - sinceMonday) };
    }
    case 'month':
      return { from: dayOf(Date.UTC(y, m, 1)), to: dayOf(Date.UTC(y, m + 1, 0)) };
    case 'next_month_and_previous_two_weeks':
      return { from: shift(-14), to: dayOf(Date.UTC(y, m + 2, 0)) };
    case undefined:
    default:
      return undefined;
  }
}

const sameIds = (a: readonly number[], b: readonly number[]) => a.length === b.length && a.every((id, i) => id === b[i]);

const TITLE_MAX = 255;
const DESCRIPTION_MAX = 1_048_576;
const NOTE_MAX = 1_000_000;

function checkIssue(input: { title?: string | undefined; description?: string | undefined }): void {
  const messages: Record<string, string[]> = {};
  if (input.title !== undefined && input.title.trim() === '') messages.title = ["can't be blank"];
  if (input.title !== undefined && input.title.length > TITLE_MAX) messages.title = [`is too long (maximum is ${TITLE_MAX} characters)`];
  if (input.description !== undefined && input.description.length > DESCRIPTION_MAX)
    messages.description = [`is too long (maximum is ${DESCRIPTION_MAX} characters)`];
  if (Object.keys(messages).length > 0) throw new ValidationError(messages);
}

/** Incidents are opened by Reporter and above, and an edit that makes an issue an incident needs the same. */
function checkTypeAllowed(type: 'issue' | 'incident' | undefined, current: string | null, level: number): void {
  if (type === 'incident' && current !== 'incident' && level < AccessLevel.REPORTER) throw new ForbiddenError();
}

function checkNote(body: string): void {
  if (body.trim() === '') throw ValidationError.field('body', "can't be blank");
  if (body.length > NOTE_MAX) throw ValidationError.field('body', `is too long (maximum is ${NOTE_MAX} characters)`);
}

/** The columns an edit changes, with their values before and after (webhooks show them as `changes`). */
function changedColumns(issue: IssueRow, input: UpdateIssueInput): Record<string, { previous: unknown; current: unknown }> {
  const changes: Record<string, { previous: unknown; current: unknown }> = {};
  if (input.title !== undefined && input.title !== issue.title) changes.title = { previous: issue.title, current: input.title };
  if (input.description !== undefined && input.description !== issue.description)
    changes.description = { previous: issue.description, current: input.description };
  if (input.issue_type !== undefined && input.issue_type !== issue.issue_type)
    changes.issue_type = { previous: issue.issue_type, current: input.issue_type };
  if (input.confidential !== undefined && input.confidential !== (issue.confidential === 1))
    changes.confidential = { previous: issue.confidential === 1, current: input.confidential };
  return changes;
}

/** Issues (per-project `iid`, opened/closed, issue or incident) and their notes. */
export class IssuesService {
  constructor(
    private readonly db: Database,
    private readonly issues: IssuesRepository,
    private readonly projects: ProjectsRepository,
    private readonly clock: Clock,
    private readonly bus: DomainEventBus,
    private readonly spam: SpamChecker | null = null,
    private readonly people: IssuePeople | null = null,
  ) {}

  /**
   * The assignees an input asks for, as the established product reads them: undefined leaves
   * them as they are; `0`, `[]` or `[0]` clears them; on Free only the first id counts; ids of
   * users who do not exist or may not see the project are dropped, and when none is left the
   * request leaves the assignees unchanged. Only Reporter and above set them.
   */
  async wantedAssignees(project: ProjectRow, level: number, input: IssuePlanningInput): Promise<number[] | undefined> {
    if (level < AccessLevel.REPORTER) return undefined;
    const asked =
      input.assignee_ids ?? (input.assignee_id === undefined ? undefined : input.assignee_id === null ? [] : [input.assignee_id]);
    if (asked === undefined) return undefined;
    const ids = asked.filter((id) => id !== 0);
    if (ids.length === 0) return [];
    const kept = this.people?.multipleAssignees === false ? ids.slice(0, 1) : [...new Set(ids)].slice(0, 100);
    const readable = this.people ? await this.people.readable(project, kept) : [];
    if (readable.length === 0) return undefined;
    return [...readable].sort((a, b) => a - b);
  }

  /** Each issue's assignees (user ids, ascending); other modules pass their transaction when they read inside one. */
  assigneesOf(issueIds: readonly number[], executor?: Executor): Promise<Map<number, number[]>> {
    return (executor ? this.issues.on(executor) : this.issues).assigneesOf(issueIds);
  }

  /** Open issues due on `day` in every project (the daily `issue_due` mail pages through them by id). */
  listOpenDueOn(day: string, afterId: number, limit: number): Promise<IssueRow[]> {
    return this.issues.listOpenDueOn(day, afterId, limit);
  }

  /** An issue a person submits through the API: spam rules run first (SPEC "Errors" rule 5). */
  async createFromUser(
    project: ProjectRow,
    authorId: number,
    level: number,
    input: CreateIssueInput,
    spam: SpamContext,
  ): Promise<IssueRow> {
    checkTypeAllowed(input.issue_type, null, level);
    checkIssue(input);
    const dueDate = level >= AccessLevel.REPORTER ? wantedDueDate(input) : undefined;
    await this.spam?.check('issue', { title: input.title, description: input.description ?? '' }, spam);
    const assignees = await this.wantedAssignees(project, level, input);
    return this.create(project, authorId, { ...input, due_date: dueDate, assignee_id: undefined, assignee_ids: assignees });
  }

  /**
   * Opens an issue; other modules (alerts, error tracking) pass their transaction. Assignees
   * here are already checked (`assignee_ids` as stored; `createFromUser` checks a person's).
   */
  async create(project: ProjectRow, authorId: number, input: CreateIssueInput, executor?: Executor): Promise<IssueRow> {
    checkIssue(input);
    const dueDate = wantedDueDate(input) ?? null;
    const run = async (trx: Executor) => {
      const now = this.clock.now();
      const iid = await this.projects.on(trx).nextInternalId(project.id, 'issues');
      const issue = await this.issues.on(trx).insert({
        projectId: project.id,
        iid,
        title: input.title,
        description: input.description ?? '',
        issueType: input.issue_type ?? 'issue',
        confidential: input.confidential ?? false,
        authorId,
        dueDate,
        now,
      });
      if (input.assignee_ids?.length) await this.issues.on(trx).setAssignees(issue.id, input.assignee_ids);
      await this.bus.publish({ type: 'issue_opened', projectId: project.id, issueId: issue.id, authorId, at: now }, trx);
      return issue;
    };
    return executor ? run(executor) : this.db.transaction().execute(run);
  }

  async get(project: ProjectRow, iid: number, actor: Actor | null, level: number): Promise<IssueRow> {
    const issue = await this.find(project, iid, actor, level);
    if (!issue) throw new NotFoundError('Issue');
    return issue;
  }

  /** The issue if it exists and the actor may see it; a failure of the database throws. */
  async find(project: ProjectRow, iid: number, actor: Actor | null, level: number): Promise<IssueRow | undefined> {
    const issue = await this.issues.findByIid(project.id, iid);
    return issue && this.canSee(issue, actor, level) ? issue : undefined;
  }

  /** By id; other modules pass their transaction when they read inside one. */
  findById(id: number, executor?: Executor): Promise<IssueRow | undefined> {
    return (executor ? this.issues.on(executor) : this.issues).findById(id);
  }

  canSee(issue: IssueRow, actor: Actor | null, level: number): boolean {
    return issue.confidential === 0 || level >= AccessLevel.REPORTER || (actor !== null && issue.author_id === actor.user.id);
  }

  list(project: ProjectRow, filter: IssueFilter, limit: number, offset: number) {
    return this.issues.list(project.id, filter, limit, offset);
  }

  /** Authors and Reporter+ edit; closing and reopening publish their events. */
  async update(
    project: ProjectRow,
    issue: IssueRow,
    actor: Actor,
    level: number,
    input: UpdateIssueInput,
    executor?: Executor,
  ): Promise<IssueRow> {
    if (level < AccessLevel.REPORTER && issue.author_id !== actor.user.id) throw new ForbiddenError();
    checkTypeAllowed(input.issue_type, issue.issue_type, level);
    checkIssue(input);
    const dueDate = level >= AccessLevel.REPORTER ? wantedDueDate(input) : undefined;
    const wanted = await this.wantedAssignees(project, level, input);
    const run = async (trx: Executor) => {
      const now = this.clock.now();
      const previous = wanted === undefined ? [] : ((await this.issues.on(trx).assigneesOf([issue.id])).get(issue.id) ?? []);
      const reassigned = wanted !== undefined && !sameIds(previous, wanted);
      if (reassigned) await this.issues.on(trx).setAssignees(issue.id, wanted);
      const closing = input.state_event === 'close' && issue.state !== 'closed';
      const reopening = input.state_event === 'reopen' && issue.state === 'closed';
      const updated = await this.issues.on(trx).update(issue.id, {
        updated_at: now,
        ...(input.title !== undefined ? { title: input.title } : {}),
        ...(input.description !== undefined ? { description: input.description } : {}),
        ...(input.issue_type !== undefined ? { issue_type: input.issue_type } : {}),
        ...(input.confidential !== undefined ? { confidential: input.confidential ? 1 : 0 } : {}),
        ...(dueDate !== undefined ? { due_date: dueDate } : {}),
        ...(closing ? { state: 'closed', closed_at: now, closed_by_id: actor.user.id } : {}),
        ...(reopening ? { state: 'opened', closed_at: null, closed_by_id: null } : {}),
      });
      if (closing)
        await this.bus.publish({ type: 'issue_closed', projectId: project.id, issueId: issue.id, authorId: actor.user.id, at: now }, trx);
      if (reopening)
        await this.bus.publish({ type: 'issue_reopened', projectId: project.id, issueId: issue.id, authorId: actor.user.id, at: now }, trx);
      const changes = changedColumns(issue, input);
      if (dueDate !== undefined && dueDate !== issue.due_date) changes.due_date = { previous: issue.due_date, current: dueDate };
      if (reassigned) {
        changes.assignees = { previous, current: wanted };
        await this.bus.publish(
          {
            type: 'issue_reassigned',
            projectId: project.id,
            issueId: issue.id,
            authorId: actor.user.id,
            previousAssigneeIds: previous,
            at: now,
          },
          trx,
        );
      }
      if (!closing && !reopening && Object.keys(changes).length > 0)
        await this.bus.publish(
          { type: 'issue_updated', projectId: project.id, issueId: issue.id, authorId: actor.user.id, changes, at: now },
          trx,
        );
      return updated;
    };
    return executor ? run(executor) : this.db.transaction().execute(run);
  }

  /**
   * An edit a person submits through the API: a changed title or description passes the
   * spam rules as on creation (the whole text, as it would be stored), then `update`.
   */
  async updateFromUser(
    project: ProjectRow,
    issue: IssueRow,
    actor: Actor,
    level: number,
    input: UpdateIssueInput,
    spam: SpamContext,
  ): Promise<IssueRow> {
    if (level < AccessLevel.REPORTER && issue.author_id !== actor.user.id) throw new ForbiddenError();
    checkTypeAllowed(input.issue_type, issue.issue_type, level);
    checkIssue(input);
    if (level >= AccessLevel.REPORTER) wantedDueDate(input);
    const title = input.title ?? issue.title;
    const description = input.description ?? issue.description;
    if (title !== issue.title || description !== issue.description) await this.spam?.check('issue', { title, description }, spam);
    return this.update(project, issue, actor, level, input);
  }

  async remove(issue: IssueRow): Promise<void> {
    await this.issues.delete(issue.id);
  }

  countNotes(issueIds: readonly number[]) {
    return this.issues.countNotes(issueIds);
  }

  async addNote(
    project: ProjectRow,
    issue: IssueRow,
    authorId: number,
    body: string,
    system = false,
    executor?: Executor,
  ): Promise<NoteRow> {
    checkNote(body);
    const run = async (trx: Executor) => {
      const now = this.clock.now();
      const note = await this.issues
        .on(trx)
        .insertNote({ projectId: project.id, noteableType: 'Issue', noteableId: issue.id, authorId, body, system, now });
      if (!system) await this.bus.publish({ type: 'note_created', projectId: project.id, noteId: note.id, authorId, at: now }, trx);
      return note;
    };
    return executor ? run(executor) : this.db.transaction().execute(run);
  }

  /** A comment a person submits through the API: spam rules as for issues (SPEC "Errors" rule 5). */
  async addNoteFromUser(project: ProjectRow, issue: IssueRow, authorId: number, body: string, spam: SpamContext): Promise<NoteRow> {
    checkNote(body);
    await this.spam?.check('note', { title: '', description: body }, spam);
    return this.addNote(project, issue, authorId, body);
  }

  async getNote(issue: IssueRow, noteId: number): Promise<NoteRow> {
    const note = await this.issues.findNote(noteId);
    if (!note || note.noteable_type !== 'Issue' || note.noteable_id !== issue.id) throw new NotFoundError('Note');
    return note;
  }

  findNote(noteId: number, executor?: Executor): Promise<NoteRow | undefined> {
    return (executor ? this.issues.on(executor) : this.issues).findNote(noteId);
  }

  listNotes(issue: IssueRow, sort: 'asc' | 'desc', limit: number, offset: number) {
    return this.issues.listNotes('Issue', issue.id, sort, limit, offset);
  }

  /** An edited comment passes the same rules as a new one. */
  async updateNote(note: NoteRow, actor: Actor, body: string, spam: SpamContext): Promise<NoteRow> {
    if (note.author_id !== actor.user.id && !actor.user.isAdmin) throw new ForbiddenError();
    checkNote(body);
    if (body !== note.body) await this.spam?.check('note', { title: '', description: body }, spam);
    return this.db.transaction().execute(async (trx) => {
      const now = this.clock.now();
      const updated = await this.issues.on(trx).updateNote(note.id, body, now);
      if (body !== note.body && note.system === 0)
        await this.bus.publish(
          { type: 'note_updated', projectId: note.project_id, noteId: note.id, authorId: actor.user.id, at: now },
          trx,
        );
      return updated;
    });
  }

  async removeNote(note: NoteRow, actor: Actor, level: number): Promise<void> {
    if (note.author_id !== actor.user.id && level < AccessLevel.MAINTAINER) throw new ForbiddenError();
    await this.issues.deleteNote(note.id);
  }
}
