import type { Insertable, Selectable, Updateable } from 'kysely';
import { CompiledOnce, Repository } from '../../infra/db/index.js';
import type { WebHookLogsTable, WebHooksTable } from '../../infra/db/tables/webhooks.js';

export type HookRow = Selectable<WebHooksTable>;
export type HookLogRow = Selectable<WebHookLogsTable>;
export type HookOwner = { kind: 'project'; id: number } | { kind: 'group'; id: number };

/** Deliveries kept per hook: the settings page shows the newest, older ones are deleted as new ones come. */
export const LOGS_KEPT = 50;

// Every issue, comment and push asks whether its project has hooks: compiled once.
const PROJECT_HOOKS = new CompiledOnce(1, (db, projectId: number) =>
  db.selectFrom('web_hooks').selectAll().where('project_id', '=', projectId).orderBy('id'),
);
const ANY_GROUP_HOOK = new CompiledOnce(0, (db) => db.selectFrom('web_hooks').select('id').where('group_id', 'is not', null).limit(1));

export class HooksRepository extends Repository {
  async insert(values: Insertable<WebHooksTable>): Promise<HookRow> {
    return this.db.insertInto('web_hooks').values(values).returningAll().executeTakeFirstOrThrow();
  }

  private owned(owner: HookOwner) {
    const query = this.db.selectFrom('web_hooks');
    return owner.kind === 'project' ? query.where('project_id', '=', owner.id) : query.where('group_id', '=', owner.id);
  }

  list(owner: HookOwner): Promise<HookRow[]> {
    return this.owned(owner).selectAll().orderBy('id').execute();
  }

  async listPage(owner: HookOwner, limit: number, offset: number): Promise<{ rows: HookRow[]; total: number }> {
    const count = await this.owned(owner)
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    const rows = await this.owned(owner).selectAll().orderBy('id').limit(limit).offset(offset).execute();
    return { rows, total: Number(count.n) };
  }

  find(owner: HookOwner, id: number): Promise<HookRow | undefined> {
    return this.owned(owner).selectAll().where('id', '=', id).executeTakeFirst();
  }

  findById(id: number): Promise<HookRow | undefined> {
    return this.db.selectFrom('web_hooks').selectAll().where('id', '=', id).executeTakeFirst();
  }

  forProject(projectId: number): Promise<HookRow[]> {
    return PROJECT_HOOKS.rows(this.db, projectId);
  }

  async anyGroupHook(): Promise<boolean> {
    return (await ANY_GROUP_HOOK.first(this.db)) !== undefined;
  }

  forGroups(groupIds: readonly number[]): Promise<HookRow[]> {
    if (groupIds.length === 0) return Promise.resolve([]);
    return this.db.selectFrom('web_hooks').selectAll().where('group_id', 'in', groupIds).orderBy('id').execute();
  }

  update(id: number, changes: Updateable<WebHooksTable>): Promise<HookRow | undefined> {
    return this.db.updateTable('web_hooks').set(changes).where('id', '=', id).returningAll().executeTakeFirst();
  }

  /** Counts one more failure in the statement itself, so deliveries failing at once all count. */
  incrementFailures(id: number): Promise<HookRow | undefined> {
    return this.db
      .updateTable('web_hooks')
      .set((eb) => ({ recent_failures: eb('recent_failures', '+', 1) }))
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirst();
  }

  async delete(id: number): Promise<void> {
    await this.db.deleteFrom('web_hooks').where('id', '=', id).execute();
  }

  /** Records a delivery and drops the hook's deliveries older than the newest LOGS_KEPT. */
  async log(values: Insertable<WebHookLogsTable>): Promise<void> {
    await this.db.insertInto('web_hook_logs').values(values).execute();
    const cutoff = await this.db
      .selectFrom('web_hook_logs')
      .select('id')
      .where('web_hook_id', '=', values.web_hook_id)
      .orderBy('id', 'desc')
      .offset(LOGS_KEPT)
      .limit(1)
      .executeTakeFirst();
    if (cutoff)
      await this.db.deleteFrom('web_hook_logs').where('web_hook_id', '=', values.web_hook_id).where('id', '<=', cutoff.id).execute();
  }

  logs(hookId: number, limit: number): Promise<HookLogRow[]> {
    return this.db.selectFrom('web_hook_logs').selectAll().where('web_hook_id', '=', hookId).orderBy('id', 'desc').limit(limit).execute();
  }
}
