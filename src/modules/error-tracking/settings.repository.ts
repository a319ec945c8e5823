import type { Selectable } from 'kysely';
import { CompiledOnce, Repository } from '../../infra/db/index.js';
import type { ErrorTrackingClientKeysTable, ErrorTrackingSettingsTable } from '../../infra/db/tables/error-tracking.js';

export type SettingsRow = Selectable<ErrorTrackingSettingsTable>;
export type ClientKeyRow = Selectable<ErrorTrackingClientKeysTable>;

/** What the collector needs to accept a key, read in one query. */
export interface IngestionGrant {
  project_id: number;
  key_active: number;
  active: number | null;
  integrated: number | null;
}

// Every ingested envelope checks its key: compiled once (docs/perf-lab.md).
const GRANT = new CompiledOnce(2, (db, projectId: number, publicKey: string) =>
  db
    .selectFrom('error_tracking_client_keys as k')
    .leftJoin('error_tracking_settings as s', 's.project_id', 'k.project_id')
    .select(['k.project_id', 'k.active as key_active', 's.active', 's.integrated'])
    .where('k.project_id', '=', projectId)
    .where('k.public_key', '=', publicKey),
);

/** Settings and client keys (Kysely only). */
export class SettingsRepository extends Repository {
  find(projectId: number): Promise<SettingsRow | undefined> {
    return this.db.selectFrom('error_tracking_settings').selectAll().where('project_id', '=', projectId).executeTakeFirst();
  }

  // Every write below bumps the `error-tracking` cache epoch (error-tracking.epochs.ts):
  // collector grants are cached against it (settings.service.ts).

  async insert(row: SettingsRow): Promise<SettingsRow> {
    return this.db.insertInto('error_tracking_settings').values(row).returningAll().executeTakeFirstOrThrow();
  }

  async update(
    projectId: number,
    changes: Partial<Pick<SettingsRow, 'active' | 'integrated' | 'email_notifications'>>,
    now: number,
  ): Promise<SettingsRow> {
    const updated = await this.db
      .updateTable('error_tracking_settings')
      .set({ ...changes, updated_at: now })
      .where('project_id', '=', projectId)
      .returningAll()
      .executeTakeFirstOrThrow();
    return updated;
  }

  listKeys(projectId: number, limit: number, offset: number): Promise<ClientKeyRow[]> {
    return this.db
      .selectFrom('error_tracking_client_keys')
      .selectAll()
      .where('project_id', '=', projectId)
      .orderBy('id')
      .limit(limit)
      .offset(offset)
      .execute();
  }

  async countKeys(projectId: number, activeOnly = false): Promise<number> {
    let query = this.db
      .selectFrom('error_tracking_client_keys')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('project_id', '=', projectId);
    if (activeOnly) query = query.where('active', '=', 1);
    const row = await query.executeTakeFirstOrThrow();
    return Number(row.n);
  }

  async insertKey(projectId: number, publicKey: string, now: number): Promise<ClientKeyRow> {
    const key = await this.db
      .insertInto('error_tracking_client_keys')
      .values({ project_id: projectId, public_key: publicKey, active: 1, created_at: now, updated_at: now })
      .returningAll()
      .executeTakeFirstOrThrow();
    return key;
  }

  findKey(projectId: number, keyId: number): Promise<ClientKeyRow | undefined> {
    return this.db
      .selectFrom('error_tracking_client_keys')
      .selectAll()
      .where('project_id', '=', projectId)
      .where('id', '=', keyId)
      .executeTakeFirst();
  }

  async deleteKey(keyId: number): Promise<void> {
    await this.db.deleteFrom('error_tracking_client_keys').where('id', '=', keyId).execute();
  }

  /** Whether the project's new and regressed errors send mail (read only when an error is new or reopened). */
  async emailNotifications(projectId: number): Promise<boolean> {
    const row = await this.db
      .selectFrom('error_tracking_settings')
      .select('email_notifications')
      .where('project_id', '=', projectId)
      .executeTakeFirst();
    return row?.email_notifications === 1;
  }

  /** The key with its project's settings; `undefined` when no such key exists for the project. */
  grant(projectId: number, publicKey: string): Promise<IngestionGrant | undefined> {
    return GRANT.first(this.db, projectId, publicKey);
  }
}
