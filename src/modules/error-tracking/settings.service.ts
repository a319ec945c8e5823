import { randomBytes } from 'node:crypto';
import { projectAudit } from '../../infra/audit.js';
import type { Actor } from '../../infra/auth/index.js';
import type { DomainEventBus } from '../../infra/bus.js';
import type { Clock } from '../../infra/clock.js';
import { EpochCache, flag, type Database, type Executor } from '../../infra/db/index.js';
import { NotFoundError, ValidationError } from '../../infra/errors/index.js';
import type { SettingsRepository, ClientKeyRow, IngestionGrant, SettingsRow } from './settings.repository.js';

export interface SettingsInput {
  active: boolean;
  integrated?: boolean | undefined;
  /** Whether new and regressed errors mail the project's maintainers; kept when not given (on for a new setting). */
  email_notifications?: boolean | undefined;
}

/** Why the collector refused a request (reference B3 checks 2 and 4). */
export type GrantRefusal = 'disabled' | 'unknown_key';

/** `<prefix>` + 32 lowercase hex: `\w+` only, so every SDK's DSN parser takes it (reference B2). */
const PUBLIC_KEY_PREFIX = 'bset_';
export const newPublicKey = (): string => PUBLIC_KEY_PREFIX + randomBytes(16).toString('hex');

/** `<scheme>://<public_key>@<host>/errortracking/api/v1/projects/<project_id>` (SPEC "Client key"). */
export function trackerDsn(externalUrl: string, publicKey: string, projectId: number): string {
  const url = new URL(externalUrl);
  const prefix = url.pathname.replace(/\/+$/, '');
  return `${url.protocol}//${publicKey}@${url.host}${prefix}/errortracking/api/v1/projects/${projectId}`;
}

/** Who changes a project's error tracking, and the project, for the audit trail. */
export interface SettingsAudit {
  by: Actor | null | undefined;
  project: { id: number; full_path: string };
}

/** A grant that lets its key send: an active key of an active, integrated setting. */
const admits = (grant: IngestionGrant | undefined): boolean =>
  grant !== undefined && grant.active === 1 && grant.integrated === 1 && grant.key_active === 1;

/**
 * The project setting and its client keys (SPEC "Error tracking management"). Only the
 * integrated backend exists here, so a setting that is active must be integrated.
 */
export class SettingsService {
  /**
   * Grants that admitted a request, by project and key: every envelope of an SDK carries the
   * same key. Kept until a settings or key change (`error-tracking` epoch) or a project
   * change (`projects`), 10 s at most.
   */
  private readonly grants: EpochCache<{ grant: IngestionGrant | undefined; admitted: boolean }>;

  constructor(
    private readonly db: Database,
    private readonly repo: SettingsRepository,
    private readonly clock: Clock,
    /** Whether the project exists and is not scheduled for deletion (the projects module's answer). */
    private readonly projectLive: (projectId: number) => Promise<boolean>,
    private readonly bus: DomainEventBus,
  ) {
    this.grants = new EpochCache({ db, epochs: ['error-tracking', 'projects'], clock, ttlMs: 10_000, maxEntries: 10_000 });
  }

  async get(projectId: number): Promise<SettingsRow> {
    const row = await this.repo.find(projectId);
    if (!row) throw new NotFoundError('Error Tracking Setting');
    return row;
  }

  /** `undefined` when the project never configured error tracking. */
  find(projectId: number): Promise<SettingsRow | undefined> {
    return this.repo.find(projectId);
  }

  /** PATCH: the setting must exist; `integrated` keeps its value when not given. */
  async patch(projectId: number, input: SettingsInput, audit?: SettingsAudit): Promise<SettingsRow> {
    return this.db.transaction().execute(async (trx) => {
      const repo = this.repo.on(trx);
      const current = await repo.find(projectId);
      if (!current) throw new NotFoundError('Error Tracking Setting');
      const integrated = input.integrated ?? current.integrated === 1;
      checkSetting(input.active, integrated);
      const row = await repo.update(
        projectId,
        { active: flag(input.active), integrated: flag(integrated), ...emailFlag(input.email_notifications) },
        this.clock.now(),
      );
      await this.ensureKey(trx, row);
      await this.audited(trx, audit, 'error_tracking_settings_updated', { type: 'ErrorTrackingSetting', id: null, details: null }, row);
      return row;
    });
  }

  /** PUT: creates the setting when missing (reference B1). */
  async put(
    projectId: number,
    input: Required<Omit<SettingsInput, 'email_notifications'>> & SettingsInput,
    audit?: SettingsAudit,
  ): Promise<SettingsRow> {
    checkSetting(input.active, input.integrated);
    return this.db.transaction().execute(async (trx) => {
      const repo = this.repo.on(trx);
      const now = this.clock.now();
      const values = { active: flag(input.active), integrated: flag(input.integrated), ...emailFlag(input.email_notifications) };
      const current = await repo.find(projectId);
      const row = current
        ? await repo.update(projectId, values, now)
        : await repo.insert({ project_id: projectId, email_notifications: 1, ...values, created_at: now, updated_at: now });
      await this.ensureKey(trx, row);
      await this.audited(trx, audit, 'error_tracking_settings_updated', { type: 'ErrorTrackingSetting', id: null, details: null }, row);
      return row;
    });
  }

  async listKeys(projectId: number, limit: number, offset: number): Promise<{ rows: ClientKeyRow[]; total: number }> {
    return { rows: await this.repo.listKeys(projectId, limit, offset), total: await this.repo.countKeys(projectId) };
  }

  createKey(projectId: number, audit?: SettingsAudit): Promise<ClientKeyRow> {
    return this.db.transaction().execute(async (trx) => {
      const key = await this.repo.on(trx).insertKey(projectId, newPublicKey(), this.clock.now());
      await this.audited(trx, audit, 'error_tracking_client_key_created', { type: 'ErrorTrackingClientKey', id: key.id, details: null });
      return key;
    });
  }

  async deleteKey(projectId: number, keyId: number, audit?: SettingsAudit): Promise<ClientKeyRow> {
    const key = await this.repo.findKey(projectId, keyId);
    if (!key) throw new NotFoundError('Client Key');
    await this.db.transaction().execute(async (trx) => {
      await this.repo.on(trx).deleteKey(key.id);
      await this.audited(trx, audit, 'error_tracking_client_key_deleted', { type: 'ErrorTrackingClientKey', id: key.id, details: null });
    });
    return key;
  }

  /** Publishes a change for the audit trail (the setting's flags; a key's id, never the key). */
  private async audited(
    trx: Executor,
    audit: SettingsAudit | undefined,
    eventName: string,
    target: { type: string; id: number | null; details: string | null },
    setting?: SettingsRow,
  ): Promise<void> {
    if (!audit) return;
    const details: Record<string, boolean> = setting
      ? { active: setting.active === 1, integrated: setting.integrated === 1, email_notifications: setting.email_notifications === 1 }
      : {};
    await this.bus.publish(projectAudit(audit.by, audit.project, eventName, target, details, this.clock.now()), trx);
  }

  /** Whether `publicKey` may send events to the project now; the refusal reason otherwise. */
  async authorize(projectId: number, publicKey: string): Promise<GrantRefusal | null> {
    const { grant, admitted } = await this.grants.through(
      `${String(projectId)} ${publicKey}`,
      async () => {
        const found = await this.repo.grant(projectId, publicKey);
        // A project scheduled for deletion takes no more events (the collector answers as for a missing project).
        return { grant: found, admitted: admits(found) && (await this.projectLive(projectId)) };
      },
      (answer) => answer.admitted,
    );
    if (admitted) return null;
    // A live grant of a project being deleted is refused as unknown; the collector then
    // finds no project and answers as for a wrong key.
    if (admits(grant)) return 'unknown_key';
    if (grant && grant.key_active === 1) return 'disabled';
    const setting = grant ? grant : await this.repo.find(projectId);
    if (!setting || setting.active !== 1 || setting.integrated !== 1) return 'disabled';
    return 'unknown_key';
  }

  /** Enabling integrated tracking gives the project a key if it has no active one (reference B1). */
  private async ensureKey(trx: Executor, row: SettingsRow): Promise<void> {
    if (row.active !== 1 || row.integrated !== 1) return;
    const repo = this.repo.on(trx);
    if ((await repo.countKeys(row.project_id, true)) === 0) await repo.insertKey(row.project_id, newPublicKey(), this.clock.now());
  }
}

/** The mail setting's column when the request gives it. */
const emailFlag = (value: boolean | undefined): { email_notifications?: number } =>
  value === undefined ? {} : { email_notifications: flag(value) };

function checkSetting(active: boolean, integrated: boolean): void {
  if (active && !integrated) {
    throw new ValidationError({ integrated: ['must be true while error tracking is active (only the integrated backend is available)'] });
  }
}
