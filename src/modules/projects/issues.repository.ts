import { sql, type Selectable, type Updateable } from 'kysely';
import { Repository, containing } from '../../infra/db/index.js';
import type { IssuesTable, NotesTable } from '../../infra/db/tables/core.js';

export type IssueRow = Selectable<IssuesTable>;
export type NoteRow = Selectable<NotesTable>;

export interface IssueFilter {
  state?: 'opened' | 'closed' | undefined;
  search?: string | undefined;
  issueType?: string | undefined;
  authorId?: number | undefined;
  iids?: number[] | undefined;
  /** A user's id, `none` (no assignee) or `any` (at least one). */
  assignee?: number | 'none' | 'any' | undefined;
  /** Users every returned issue is assigned to (`assignee_username`). */
  assigneeAll?: readonly number[] | undefined;
  /** Due dates: `none`, `any`, or an inclusive range of `YYYY-MM-DD` days (either end open). */
  due?: 'none' | 'any' | { from?: string; to?: string } | undefined;
  orderBy: 'created_at' | 'updated_at';
  sort: 'asc' | 'desc';
  /** Confidential issues are shown only to these callers. */
  includeConfidential: boolean;
  viewerId: number | null;
}

/** Characters of a description that a search looks at. */
export const SEARCHED_DESCRIPTION = 10_000;

export class IssuesRepository extends Repository {
  insert(values: {
    projectId: number;
    iid: number;
    title: string;
    description: string;
    issueType: string;
    confidential: boolean;
    authorId: number;
    dueDate?: string | null;
    now: number;
  }): Promise<IssueRow> {
    return this.db
      .insertInto('issues')
      .values({
        project_id: values.projectId,
        iid: values.iid,
        title: values.title,
        description: values.description,
        issue_type: values.issueType,
        confidential: values.confidential ? 1 : 0,
        author_id: values.authorId,
        due_date: values.dueDate ?? null,
        created_at: values.now,
        updated_at: values.now,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
  }

  findByIid(projectId: number, iid: number): Promise<IssueRow | undefined> {
    return this.db.selectFrom('issues').selectAll().where('project_id', '=', projectId).where('iid', '=', iid).executeTakeFirst();
  }

  findById(id: number): Promise<IssueRow | undefined> {
    return this.db.selectFrom('issues').selectAll().where('id', '=', id).executeTakeFirst();
  }

  async list(projectId: number, filter: IssueFilter, limit: number, offset: number): Promise<{ rows: IssueRow[]; total: number }> {
    let query = this.db.selectFrom('issues').where('project_id', '=', projectId);
    if (filter.state) query = query.where('state', '=', filter.state);
    if (filter.issueType) query = query.where('issue_type', '=', filter.issueType);
    if (filter.authorId) query = query.where('author_id', '=', filter.authorId);
    if (filter.iids?.length) query = query.where('iid', 'in', filter.iids);
    const assignee = filter.assignee;
    if (assignee !== undefined) {
      query = query.where((eb) => {
        let assigned = eb
          .selectFrom('issue_assignees')
          .select('issue_assignees.issue_id')
          .whereRef('issue_assignees.issue_id', '=', 'issues.id');
        if (typeof assignee === 'number') assigned = assigned.where('issue_assignees.user_id', '=', assignee);
        return assignee === 'none' ? eb.not(eb.exists(assigned)) : eb.exists(assigned);
      });
    }
    for (const userId of filter.assigneeAll ?? []) {
      query = query.where((eb) =>
        eb.exists(
          eb
            .selectFrom('issue_assignees')
            .select('issue_assignees.issue_id')
            .whereRef('issue_assignees.issue_id', '=', 'issues.id')
            .where('issue_assignees.user_id', '=', userId),
        ),
      );
    }
    const due = filter.due;
    if (due === 'none') query = query.where('due_date', 'is', null);
    else if (due === 'any') query = query.where('due_date', 'is not', null);
    else if (due) {
      query = query.where('due_date', 'is not', null);
      if (due.from) query = query.where('due_date', '>=', due.from);
      if (due.to) query = query.where('due_date', '<=', due.to);
    }
    if (filter.search) {
      // Descriptions reach 1 MiB: only their head is searched, so a search (anonymous callers
      // included) costs at most SEARCHED_DESCRIPTION characters per issue (docs/decisions.md).
      const like = containing(filter.search.toLowerCase());
      const head = sql<string>`lower(substr(${sql.ref('description')}, 1, ${sql.lit(SEARCHED_DESCRIPTION)}))`;
      query = query.where((eb) => eb.or([eb(eb.fn('lower', ['title']), 'like', like), eb(head, 'like', like)]));
    }
    if (!filter.includeConfidential) {
      query = query.where((eb) => eb.or([eb('confidential', '=', 0), ...(filter.viewerId ? [eb('author_id', '=', filter.viewerId)] : [])]));
    }
    const [rows, count] = await Promise.all([
      query.selectAll().orderBy(filter.orderBy, filter.sort).orderBy('id', filter.sort).limit(limit).offset(offset).execute(),
      query.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
    ]);
    return { rows, total: Number(count.n) };
  }

  update(id: number, changes: Updateable<IssuesTable>): Promise<IssueRow> {
    return this.db.updateTable('issues').set(changes).where('id', '=', id).returningAll().executeTakeFirstOrThrow();
  }

  /** Each issue's assignees, by issue id, in ascending user id order. */
  async assigneesOf(issueIds: readonly number[]): Promise<Map<number, number[]>> {
    const out = new Map<number, number[]>(issueIds.map((id) => [id, []]));
    if (issueIds.length === 0) return out;
    const rows = await this.db
      .selectFrom('issue_assignees')
      .select(['issue_id', 'user_id'])
      .where('issue_id', 'in', [...new Set(issueIds)])
      .orderBy('issue_id')
      .orderBy('user_id')
      .execute();
    for (const row of rows) out.get(Number(row.issue_id))?.push(Number(row.user_id));
    return out;
  }

  /** Replaces an issue's assignees. */
  async setAssignees(issueId: number, userIds: readonly number[]): Promise<void> {
    await this.db.deleteFrom('issue_assignees').where('issue_id', '=', issueId).execute();
    if (userIds.length > 0)
      await this.db
        .insertInto('issue_assignees')
        .values([...new Set(userIds)].map((userId) => ({ issue_id: issueId, user_id: userId })))
        .execute();
  }

  /** Open issues due on `day` (`YYYY-MM-DD`) in every project, by id after `afterId`. */
  listOpenDueOn(day: string, afterId: number, limit: number): Promise<IssueRow[]> {
    return this.db
      .selectFrom('issues')
      .selectAll()
      .where('due_date', '=', day)
      .where('state', '=', 'opened')
      .where('id', '>', afterId)
      .orderBy('id')
      .limit(limit)
      .execute();
  }

  async delete(id: number): Promise<void> {
    await this.db.deleteFrom('notes').where('noteable_type', '=', 'Issue').where('noteable_id', '=', id).execute();
    await this.db.deleteFrom('issues').where('id', '=', id).execute();
  }

  async countNotes(issueIds: readonly number[]): Promise<Map<number, number>> {
    if (issueIds.length === 0) return new Map();
    const rows = await this.db
      .selectFrom('notes')
      .select(['noteable_id', (eb) => eb.fn.countAll<number>().as('n')])
      .where('noteable_type', '=', 'Issue')
      .where('noteable_id', 'in', issueIds)
      .where('system', '=', 0)
      .groupBy('noteable_id')
      .execute();
    return new Map(rows.map((r) => [r.noteable_id, Number(r.n)]));
  }

  insertNote(values: {
    projectId: number | null;
    noteableType: string;
    noteableId: number;
    authorId: number | null;
    body: string;
    system: boolean;
    now: number;
  }): Promise<NoteRow> {
    return this.db
      .insertInto('notes')
      .values({
        project_id: values.projectId,
        noteable_type: values.noteableType,
        noteable_id: values.noteableId,
        author_id: values.authorId,
        body: values.body,
        system: values.system ? 1 : 0,
        created_at: values.now,
        updated_at: values.now,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
  }

  findNote(id: number): Promise<NoteRow | undefined> {
    return this.db.selectFrom('notes').selectAll().where('id', '=', id).executeTakeFirst();
  }

  async listNotes(
    noteableType: string,
    noteableId: number,
    sort: 'asc' | 'desc',
    limit: number,
    offset: number,
  ): Promise<{ rows: NoteRow[]; total: number }> {
    const query = this.db.selectFrom('notes').where('noteable_type', '=', noteableType).where('noteable_id', '=', noteableId);
    const [rows, count] = await Promise.all([
      query.selectAll().orderBy('created_at', sort).orderBy('id', sort).limit(limit).offset(offset).execute(),
      query.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
    ]);
    return { rows, total: Number(count.n) };
  }

  updateNote(id: number, body: string, now: number): Promise<NoteRow> {
    return this.db.updateTable('notes').set({ body, updated_at: now }).where('id', '=', id).returningAll().executeTakeFirstOrThrow();
  }

  async deleteNote(id: number): Promise<void> {
    await this.db.deleteFrom('notes').where('id', '=', id).execute();
  }
}
