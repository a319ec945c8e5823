import type { Actor } from '../../infra/auth/index.js';
import type { DomainEventBus } from '../../infra/bus.js';
import type { Clock } from '../../infra/clock.js';
import type { Database, Executor } from '../../infra/db/index.js';
import { ForbiddenError, NotFoundError, ValidationError } from '../../infra/errors/index.js';
import { AccessLevel } from './access.policy.js';
import type { IssueFilter, IssueRow, IssuesRepository, NoteRow } from './issues.repository.js';
import type { SpamChecker, SpamContext } from '../spam/index.js';
import type { ProjectRow, ProjectsRepository } from './projects.repository.js';

export interface CreateIssueInput {
  title: string;
  description?: string | undefined;
  issue_type?: 'issue' | 'incident' | undefined;
  confidential?: boolean | undefined;
}

export interface UpdateIssueInput {
  title?: string | undefined;
  description?: string | undefined;
  state_event?: 'close' | 'reopen' | undefined;
  issue_type?: 'issue' | 'incident' | undefined;
  confidential?: boolean | undefined;
}

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
  ) {}

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
    await this.spam?.check('issue', { title: input.title, description: input.description ?? '' }, spam);
    return this.create(project, authorId, input);
  }

  /** Opens an issue; other modules (alerts, error tracking) pass their transaction. */
  async create(project: ProjectRow, authorId: number, input: CreateIssueInput, executor?: Executor): Promise<IssueRow> {
    checkIssue(input);
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
        now,
      });
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
    const run = async (trx: Executor) => {
      const now = this.clock.now();
      const closing = input.state_event === 'close' && issue.state !== 'closed';
      const reopening = input.state_event === 'reopen' && issue.state === 'closed';
      const updated = await this.issues.on(trx).update(issue.id, {
        updated_at: now,
        ...(input.title !== undefined ? { title: input.title } : {}),
        ...(input.description !== undefined ? { description: input.description } : {}),
        ...(input.issue_type !== undefined ? { issue_type: input.issue_type } : {}),
        ...(input.confidential !== undefined ? { confidential: input.confidential ? 1 : 0 } : {}),
        ...(closing ? { state: 'closed', closed_at: now, closed_by_id: actor.user.id } : {}),
        ...(reopening ? { state: 'opened', closed_at: null, closed_by_id: null } : {}),
      });
      if (closing)
        await this.bus.publish({ type: 'issue_closed', projectId: project.id, issueId: issue.id, authorId: actor.user.id, at: now }, trx);
      if (reopening)
        await this.bus.publish({ type: 'issue_reopened', projectId: project.id, issueId: issue.id, authorId: actor.user.id, at: now }, trx);
      const changes = changedColumns(issue, input);
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
