import { INSTANCE_SCOPE, SYSTEM_AUTHOR, auditAuthor, auditEntry, withSudo, type AuditEntry } from '../../infra/audit.js';
import type { Actor } from '../../infra/auth/index.js';
import { isUniqueViolation } from '../../infra/db/index.js';
import { NotFoundError, NotFoundMessageError, ValidationError } from '../../infra/errors/index.js';
import type { Platform } from '../../infra/platform.js';
import type { ProjectsService, SnippetsService } from '../projects/index.js';
import type { Containers } from './containers.service.js';
import type { GitRepository, MoveContainerKind, MoveRow } from './git.repository.js';
import type { RepositoryStorages } from './git.storage.js';

export const MOVE_JOB = 'git.move_repository_storage';
export const BULK_MOVE_JOB = 'git.schedule_bulk_moves';

const THING: Record<MoveContainerKind, 'Project' | 'Snippet' | 'Group'> = { project: 'Project', snippet: 'Snippet', group: 'Group' };
/** States in which the container is read-only and the move not yet settled. */
const PAST_READ_ONLY = ['replicated', 'finished', 'failed', 'cleanup_failed'];

/**
 * Scheduling repository storage moves (SPEC "Repository storage moves", reference §3):
 * self-managed only, group moves only on Premium and Ultimate. The worker does the moving.
 */
export class MovesService {
  constructor(
    private readonly platform: Platform,
    private readonly containers: Containers,
    private readonly storages: RepositoryStorages,
    private readonly git: GitRepository,
    private readonly projects: ProjectsService,
    private readonly snippets: SnippetsService,
  ) {}

  /** These APIs do not exist on the hosted offering, nor group moves below Premium: 404. */
  ensureAvailable(kind: MoveContainerKind): void {
    const { offering, tier } = this.platform.config;
    if (offering === 'hosted' || (kind === 'group' && tier === 'free')) throw new NotFoundError();
  }

  async get(kind: MoveContainerKind, id: number, containerId?: number): Promise<MoveRow> {
    const move = await this.git.findMove(id);
    if (!move || move.container_kind !== kind || (containerId !== undefined && move.container_id !== containerId)) {
      throw new NotFoundMessageError('404 Not found');
    }
    return move;
  }

  list(kind: MoveContainerKind, containerId: number | null, limit: number, offset: number) {
    return this.git.listMoves(kind, containerId, limit, offset);
  }

  /** Without a destination, the first other configured storage (the source when it is the only one). */
  defaultDestination(source: string): string {
    return this.storages.names().find((name) => name !== source) ?? source;
  }

  /** A single move: 201 with state `scheduled`, or 400 with the model's errors. */
  async schedule(kind: MoveContainerKind, containerId: number, destination: string | undefined, by?: Actor | null): Promise<MoveRow> {
    const container = await this.containers.find(kind, containerId);
    if (!container) throw new NotFoundError(THING[kind]);
    const target = destination ?? this.defaultDestination(container.storage);
    const messages: Record<string, string[]> = {};
    if (!this.storages.has(container.storage)) messages.source_storage_name = ['is not included in the list'];
    if (!this.storages.has(target)) messages.destination_storage_name = ['is not included in the list'];
    if (container.readOnly) messages[kind] = ['is read-only'];
    if (Object.keys(messages).length > 0) throw new ValidationError(messages);

    const { db, jobs, clock } = this.platform;
    let move: MoveRow;
    try {
      move = await db.transaction().execute(async (trx) => {
        const row = await this.git
          .on(trx)
          .insertMove({ kind, containerId, state: 'scheduled', source: container.storage, destination: target, now: clock.now() });
        await jobs.enqueue(trx, MOVE_JOB, { moveId: row.id });
        await this.platform.bus.publish(moveAudit(by, row, clock.now()), trx);
        return row;
      });
    } catch (error) {
      // The partial unique index allows one unsettled move per container.
      if (isUniqueViolation(error)) throw new ValidationError({ [kind]: ['is read-only'] });
      throw error;
    }
    // Read-only from now on (reference §3.3: initial -> scheduled). Should the worker have
    // finished already and cleared the flag, clear it again rather than leave it stuck.
    await this.containers.setReadOnly(kind, containerId, true);
    const now = await this.git.findMove(move.id);
    if (now && PAST_READ_ONLY.includes(now.state)) await this.containers.setReadOnly(kind, containerId, false);
    return now ?? move;
  }

  /** Every container on `source` gets a move, in a job (reference §3.5); answered 202 at once. */
  async scheduleBulk(kind: MoveContainerKind, source: string, destination: string | undefined): Promise<void> {
    const messages: Record<string, string[]> = {};
    if (!this.storages.has(source)) messages.source_storage_name = ['does not have a valid value'];
    if (destination !== undefined && !this.storages.has(destination)) messages.destination_storage_name = ['does not have a valid value'];
    if (Object.keys(messages).length > 0) throw new ValidationError(messages);
    await this.platform.db.transaction().execute(async (trx) => {
      await this.platform.jobs.enqueue(trx, BULK_MOVE_JOB, { kind, source, destination: destination ?? null });
    });
  }

  /** The bulk job: containers on `source` are listed first, then each is scheduled; failures are logged. */
  async runBulk(kind: MoveContainerKind, source: string, destination: string | null, log: (message: string) => void): Promise<number> {
    let scheduled = 0;
    for (const id of await this.containerIdsOn(kind, source)) {
      try {
        await this.schedule(kind, id, destination ?? undefined);
        scheduled += 1;
      } catch (error) {
        const detail = error instanceof ValidationError ? JSON.stringify(error.messages) : String(error);
        log(`${THING[kind]} ${id} was skipped: ${detail}`);
      }
    }
    return scheduled;
  }

  private async containerIdsOn(kind: MoveContainerKind, source: string): Promise<number[]> {
    const ids: number[] = [];
    const batch = 500;
    if (kind === 'project') {
      // Every project, pending deletion included: those are moved too (reference §3.1).
      for (let after = 0; ;) {
        const rows = await this.projects.idsOnStorage(source, after, batch);
        ids.push(...rows);
        const last = rows.at(-1);
        if (last === undefined || rows.length < batch) return ids;
        after = last;
      }
    }
    if (kind === 'snippet') {
      for (let offset = 0; ; offset += batch) {
        const { rows } = await this.snippets.list({}, batch, offset);
        ids.push(...rows.filter((r) => r.repository_storage === source).map((r) => r.id));
        if (rows.length < batch) return ids;
      }
    }
    for (let after = 0; ;) {
      const rows = await this.git.listGroupWikisOn(source, after, batch);
      ids.push(...rows.map((r) => r.group_id));
      const last = rows.at(-1);
      if (!last || rows.length < batch) return ids;
      after = last.group_id;
    }
  }
}

const MOVED_TYPE: Record<MoveContainerKind, string> = { project: 'Project', snippet: 'Snippet', group: 'Group' };

/**
 * A scheduled move in the audit trail: an instance event (moves are the administrators'),
 * naming the container moved and the two storages. A bulk move's are authored by `system`.
 */
function moveAudit(by: Actor | null | undefined, move: MoveRow, at: number): { type: 'audited'; entry: AuditEntry; at: number } {
  const entry = auditEntry(by ? auditAuthor(by) : SYSTEM_AUTHOR, {
    entityType: INSTANCE_SCOPE,
    entityId: 1,
    entityPath: null,
    targetType: MOVED_TYPE[move.container_kind],
    targetId: move.container_id,
    targetDetails: `${move.container_kind} ${move.container_id}`,
    eventName: 'repository_storage_move_scheduled',
    details: withSudo(
      {
        move_id: move.id,
        source_storage_name: move.source_storage_name,
        destination_storage_name: move.destination_storage_name,
      },
      by,
    ),
    at,
  });
  return { type: 'audited', entry, at };
}
