import { randomBytes } from 'node:crypto';
import type { Tier } from '../../config/index.js';
import { projectAudit } from '../../infra/audit.js';
import type { Actor } from '../../infra/auth/index.js';
import type { DomainEventBus } from '../../infra/bus.js';
import type { Clock } from '../../infra/clock.js';
import type { Database, Executor } from '../../infra/db/index.js';
import { TOKEN_PREFIX, constantTimeEqual, digestToken, generateToken } from '../../infra/crypto.js';
import { ForbiddenError, NotFoundError, UnprocessableError, ValidationError } from '../../infra/errors/index.js';
import type { Page } from '../../infra/http/index.js';
import type { ProjectRow } from '../projects/index.js';
import type { CreateIntegrationInput, UpdateIntegrationInput } from './alerts.schemas.js';
import type { IntegrationsRepository, IntegrationRow, IntegrationType } from './integrations.repository.js';
import { checkMappings, parsePayloadExample, readExample } from './mappings.rules.js';
import { canonicalJson } from './normalize-common.rules.js';

/** Free allows one integration per type; Premium and Ultimate several HTTP ones (SPEC "Tier notes"). */
export const multipleIntegrations = (tier: Tier): boolean => tier !== 'free';

/** A created or reset integration: the key is shown this once and never stored. */
export interface WithKey {
  row: IntegrationRow;
  token: string;
}

/** Integrations of a project: who may post alerts, where, and with which key. */
export class IntegrationsService {
  constructor(
    private readonly integrations: IntegrationsRepository,
    private readonly clock: Clock,
    private readonly tier: Tier,
    private readonly db: Database,
    private readonly bus: DomainEventBus,
  ) {}

  /** `work` in a transaction that also publishes the change's audit event (about the project; never the key). */
  private audited<T extends IntegrationRow | undefined>(
    project: ProjectRow,
    by: Actor | null | undefined,
    eventName: string,
    work: (repo: IntegrationsRepository) => Promise<T>,
    target?: IntegrationRow,
  ): Promise<T> {
    return this.db.transaction().execute(async (trx: Executor) => {
      const result = await work(this.integrations.on(trx));
      const row = result ?? target;
      if (row) {
        const at = this.clock.now();
        const subject = { type: 'AlertManagement::HttpIntegration', id: row.id, details: row.name };
        await this.bus.publish(
          projectAudit(by, project, eventName, subject, { integration_type: row.type, active: row.active === 1 }, at),
          trx,
        );
      }
      return result;
    });
  }

  /** Every integration of the project (the settings page shows them all). */
  list(project: ProjectRow): Promise<IntegrationRow[]> {
    return this.integrations.list(project.id);
  }

  /** One page, for the API list (DESIGN.md: lists paginate). */
  listPage(project: ProjectRow, page: Page): Promise<{ rows: IntegrationRow[]; total: number }> {
    return this.integrations.listPage(project.id, page.limit, page.offset);
  }

  async get(project: ProjectRow, id: number): Promise<IntegrationRow> {
    const row = await this.integrations.find(project.id, id);
    if (!row) throw new NotFoundError('Integration');
    return row;
  }

  mapByIds(ids: readonly number[]): Promise<Map<number, IntegrationRow>> {
    return this.integrations.findByIds([...new Set(ids)]).then((rows) => new Map(rows.map((r) => [r.id, r])));
  }

  async create(project: ProjectRow, input: CreateIntegrationInput, by?: Actor | null): Promise<WithKey> {
    const type: IntegrationType = input.type ?? 'http';
    await this.checkTypeLimit(project, type, null);
    const example = input.payload_example ? parsePayloadExample(input.payload_example) : null;
    const mappings = this.mappingsFor(type, input.payload_attribute_mappings, example);
    const token = generateToken(TOKEN_PREFIX.alertKey);
    const row = await this.audited(project, by, 'alert_integration_created', (repo) =>
      repo.insert({
        projectId: project.id,
        name: input.name,
        type,
        active: input.active ?? true,
        // Reference A10: 16 hex characters, fixed for the integration's life.
        endpointIdentifier: randomBytes(8).toString('hex'),
        tokenDigest: digestToken(token),
        payloadExample: example ? JSON.stringify(example) : null,
        payloadAttributeMappings: mappings ? JSON.stringify(mappings) : null,
        now: this.clock.now(),
      }),
    );
    return { row, token };
  }

  /** Changing the sample clears the mapping unless a new mapping comes with it (SPEC "Alert receiver"). */
  async update(project: ProjectRow, id: number, input: UpdateIntegrationInput, by?: Actor | null): Promise<IntegrationRow> {
    const row = await this.get(project, id);
    const changes: Partial<IntegrationRow> = { updated_at: this.clock.now() };
    if (input.name !== undefined) changes.name = input.name;
    if (input.active !== undefined) changes.active = input.active ? 1 : 0;
    let example = readExample(row.payload_example);
    if (input.payload_example !== undefined) {
      const next = input.payload_example ? parsePayloadExample(input.payload_example) : null;
      const changed = canonicalJson(next) !== canonicalJson(example);
      example = next;
      changes.payload_example = next ? JSON.stringify(next) : null;
      if (changed && input.payload_attribute_mappings === undefined) changes.payload_attribute_mappings = null;
    }
    if (input.payload_attribute_mappings !== undefined) {
      const mappings = this.mappingsFor(row.type, input.payload_attribute_mappings, example);
      changes.payload_attribute_mappings = mappings ? JSON.stringify(mappings) : null;
    }
    const updated = await this.audited(project, by, 'alert_integration_updated', (repo) => repo.update(row.id, changes));
    if (!updated) throw new NotFoundError('Integration');
    return updated;
  }

  async resetToken(project: ProjectRow, id: number, by?: Actor | null): Promise<WithKey> {
    const row = await this.get(project, id);
    const token = generateToken(TOKEN_PREFIX.alertKey);
    const updated = await this.audited(project, by, 'alert_integration_token_reset', (repo) =>
      repo.update(row.id, { token_digest: digestToken(token), updated_at: this.clock.now() }),
    );
    if (!updated) throw new NotFoundError('Integration');
    return { row: updated, token };
  }

  async remove(project: ProjectRow, id: number, by?: Actor | null): Promise<void> {
    const row = await this.get(project, id);
    await this.audited(
      project,
      by,
      'alert_integration_deleted',
      async (repo) => {
        await repo.delete(row.id);
        return undefined;
      },
      row,
    );
  }

  /** The integration a notify URL names, whether or not it is active; undefined when none. */
  findForEndpoint(project: ProjectRow, kind: IntegrationType, endpointIdentifier: string | null): Promise<IntegrationRow | undefined> {
    if (kind === 'prometheus') return this.integrations.findPrometheus(project.id);
    if (!endpointIdentifier || !/^[A-Za-z0-9]{1,255}$/.test(endpointIdentifier)) return Promise.resolve(undefined);
    return this.integrations.findByEndpoint(project.id, endpointIdentifier);
  }

  /** Compares digests in constant time; the key itself is never stored. */
  keyMatches(row: IntegrationRow, key: string | null): boolean {
    const presented = digestToken(key ?? '');
    // Both sides are always compared so a missing key takes as long as a wrong one.
    return constantTimeEqual(presented, row.token_digest) && key !== null && key !== '';
  }

  private async checkTypeLimit(project: ProjectRow, type: IntegrationType, exceptId: number | null): Promise<void> {
    // The Prometheus URL names no endpoint, so a project has one on every tier.
    const limitOne = type === 'prometheus' || !multipleIntegrations(this.tier);
    if (limitOne && (await this.integrations.countOfType(project.id, type, exceptId)) > 0) {
      throw new UnprocessableError('Multiple integrations of a single type are not supported for this project');
    }
  }

  private mappingsFor(
    type: IntegrationType,
    mappings: CreateIntegrationInput['payload_attribute_mappings'],
    example: ReturnType<typeof readExample>,
  ): ReturnType<typeof checkMappings> | null {
    if (mappings === undefined || mappings.length === 0) return null;
    if (!multipleIntegrations(this.tier)) throw new ForbiddenError('Custom field mapping needs Premium or Ultimate');
    if (type !== 'http') throw ValidationError.field('payload_attribute_mappings', 'are only for HTTP integrations');
    return checkMappings(mappings, example);
  }
}
