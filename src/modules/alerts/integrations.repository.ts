import type { Selectable, Updateable } from 'kysely';
import { CompiledOnce, Repository } from '../../infra/db/index.js';
import type { AlertIntegrationsTable } from '../../infra/db/tables/alerts.js';

export type IntegrationRow = Selectable<AlertIntegrationsTable>;
export type IntegrationType = AlertIntegrationsTable['type'];

export interface NewIntegration {
  projectId: number;
  name: string;
  type: IntegrationType;
  active: boolean;
  endpointIdentifier: string;
  tokenDigest: string;
  payloadExample: string | null;
  payloadAttributeMappings: string | null;
  now: number;
}

// Every incoming alert looks its integration up: compiled once (docs/perf-lab.md).
const BY_ENDPOINT = new CompiledOnce(2, (db, projectId: number, endpointIdentifier: string) =>
  db
    .selectFrom('alert_integrations')
    .selectAll()
    .where('project_id', '=', projectId)
    .where('endpoint_identifier', '=', endpointIdentifier)
    .where('type', '=', 'http'),
);
const PROMETHEUS = new CompiledOnce(1, (db, projectId: number) =>
  db
    .selectFrom('alert_integrations')
    .selectAll()
    .where('project_id', '=', projectId)
    .where('type', '=', 'prometheus')
    .orderBy('id')
    .limit(1),
);

export class IntegrationsRepository extends Repository {
  // Every write below bumps the `alerts` cache epoch (alerts.epochs.ts): receiver targets are
  // cached against it (targets.service.ts).

  async insert(i: NewIntegration): Promise<IntegrationRow> {
    const row = await this.db
      .insertInto('alert_integrations')
      .values({
        project_id: i.projectId,
        name: i.name,
        type: i.type,
        active: i.active ? 1 : 0,
        endpoint_identifier: i.endpointIdentifier,
        token_digest: i.tokenDigest,
        payload_example: i.payloadExample,
        payload_attribute_mappings: i.payloadAttributeMappings,
        created_at: i.now,
        updated_at: i.now,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    return row;
  }

  list(projectId: number): Promise<IntegrationRow[]> {
    return this.db.selectFrom('alert_integrations').selectAll().where('project_id', '=', projectId).orderBy('id').execute();
  }

  /** One page of a project's integrations, oldest first, and how many it has in all. */
  async listPage(projectId: number, limit: number, offset: number): Promise<{ rows: IntegrationRow[]; total: number }> {
    const query = this.db.selectFrom('alert_integrations').where('project_id', '=', projectId);
    const count = await query.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    const rows = await query.selectAll().orderBy('id').limit(limit).offset(offset).execute();
    return { rows, total: Number(count.n) };
  }

  find(projectId: number, id: number): Promise<IntegrationRow | undefined> {
    return this.db.selectFrom('alert_integrations').selectAll().where('project_id', '=', projectId).where('id', '=', id).executeTakeFirst();
  }

  findByIds(ids: readonly number[]): Promise<IntegrationRow[]> {
    if (ids.length === 0) return Promise.resolve([]);
    return this.db.selectFrom('alert_integrations').selectAll().where('id', 'in', ids).execute();
  }

  findByEndpoint(projectId: number, endpointIdentifier: string): Promise<IntegrationRow | undefined> {
    return BY_ENDPOINT.first(this.db, projectId, endpointIdentifier);
  }

  findPrometheus(projectId: number): Promise<IntegrationRow | undefined> {
    return PROMETHEUS.first(this.db, projectId);
  }

  async countOfType(projectId: number, type: IntegrationType, exceptId: number | null): Promise<number> {
    let query = this.db
      .selectFrom('alert_integrations')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('project_id', '=', projectId)
      .where('type', '=', type);
    if (exceptId !== null) query = query.where('id', '<>', exceptId);
    const row = await query.executeTakeFirstOrThrow();
    return Number(row.n);
  }

  async update(id: number, changes: Updateable<AlertIntegrationsTable>): Promise<IntegrationRow | undefined> {
    return this.db.updateTable('alert_integrations').set(changes).where('id', '=', id).returningAll().executeTakeFirst();
  }

  async delete(id: number): Promise<void> {
    await this.db.deleteFrom('alert_integrations').where('id', '=', id).execute();
  }
}
