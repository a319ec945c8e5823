import type { Selectable, Updateable } from 'kysely';
import { Repository } from '../../infra/db/index.js';
import type { SnippetsTable } from '../../infra/db/tables/core.js';
import { memberNamespaceIds, memberProjectIds, personalNamespaceIds, type ListScope } from './scopes.repository.js';

export type SnippetRow = Selectable<SnippetsTable>;

export class SnippetsRepository extends Repository {
  insert(values: {
    projectId: number | null;
    authorId: number;
    title: string;
    description: string;
    fileName: string;
    content: string;
    visibility: string;
    storage: string;
    now: number;
  }): Promise<SnippetRow> {
    return this.db
      .insertInto('snippets')
      .values({
        project_id: values.projectId,
        author_id: values.authorId,
        title: values.title,
        description: values.description,
        file_name: values.fileName,
        content: values.content,
        visibility: values.visibility,
        repository_storage: values.storage,
        created_at: values.now,
        updated_at: values.now,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
  }

  findById(id: number): Promise<SnippetRow | undefined> {
    return this.db.selectFrom('snippets').selectAll().where('id', '=', id).executeTakeFirst();
  }

  /** `scope`: project snippets only where the caller may see them (SnippetsService.canSee, in SQL). */
  async list(
    filter: { projectId?: number | null; authorId?: number; visibilities?: string[]; scope?: ListScope },
    limit: number,
    offset: number,
  ) {
    let query = this.db.selectFrom('snippets');
    const scope = filter.scope;
    if (scope && !scope.unrestricted) {
      const { visibilities, memberId, now } = scope;
      const projects = () => this.db.selectFrom('projects as p').select('p.id');
      query = query.where((eb) =>
        eb.or([
          eb('project_id', 'is', null),
          ...(memberId !== null
            ? [
                eb(
                  'project_id',
                  'in',
                  projects().where((pe) =>
                    pe.or([
                      pe('p.namespace_id', 'in', memberNamespaceIds(this.db, memberId, now)),
                      pe('p.namespace_id', 'in', personalNamespaceIds(this.db, memberId)),
                      pe('p.id', 'in', memberProjectIds(this.db, memberId, now)),
                    ]),
                  ),
                ),
              ]
            : []),
          ...(visibilities.length
            ? [
                eb.and([
                  eb('visibility', 'in', [...visibilities]),
                  eb('project_id', 'in', projects().where('p.visibility', 'in', [...visibilities])),
                ]),
              ]
            : []),
        ]),
      );
    }
    if (filter.projectId === null) query = query.where('project_id', 'is', null);
    else if (filter.projectId !== undefined) query = query.where('project_id', '=', filter.projectId);
    if (filter.authorId !== undefined) query = query.where('author_id', '=', filter.authorId);
    if (filter.visibilities) query = query.where('visibility', 'in', filter.visibilities);
    const [rows, count] = await Promise.all([
      query.selectAll().orderBy('id', 'desc').limit(limit).offset(offset).execute(),
      query.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
    ]);
    return { rows, total: Number(count.n) };
  }

  update(id: number, changes: Updateable<SnippetsTable>): Promise<SnippetRow> {
    return this.db.updateTable('snippets').set(changes).where('id', '=', id).returningAll().executeTakeFirstOrThrow();
  }

  async delete(id: number): Promise<void> {
    await this.db.deleteFrom('snippets').where('id', '=', id).execute();
  }
}
