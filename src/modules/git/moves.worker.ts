import { setTimeout as sleep } from 'node:timers/promises';
import type { JobContext } from '../../infra/jobs/index.js';
import type { Platform } from '../../infra/platform.js';
import type { Container, Containers } from './containers.service.js';
import type { GitRepository, MoveRow } from './git.repository.js';
import type { RepositoryStorages } from './git.storage.js';
import { copyRepository } from './repository-copy.exec.js';

export interface MoveWorkerOptions {
  /** How often, and how many times, to look for pushes still being received (reference §3.4). */
  pushPollMs?: number;
  pushPollAttempts?: number;
}

/**
 * Runs one storage move (reference §3.4). Every step can run again after a crash: the
 * state column says where to resume (`scheduled` -> start, `started` -> copy again,
 * `replicated` -> clean up), a copy lands in its final place only once verified, and the
 * container is switched (storage, `replicated`, writable: one transaction) only after every
 * copy verified. A failure before the switch leaves the source untouched and writable and
 * the move `failed`.
 */
export class MoveWorker {
  constructor(
    private readonly platform: Platform,
    private readonly containers: Containers,
    private readonly storages: RepositoryStorages,
    private readonly git: GitRepository,
    private readonly options: MoveWorkerOptions = {},
  ) {}

  async run(moveId: number, context: JobContext): Promise<void> {
    // The job lease is 60 s; a long copy keeps it, so no second worker starts the same move.
    const beat = setInterval(() => void context.heartbeat().catch(() => undefined), 15_000);
    try {
      await this.advance(moveId, context);
    } finally {
      clearInterval(beat);
    }
  }

  private async advance(moveId: number, context: JobContext): Promise<void> {
    const now = () => this.platform.clock.now();
    let move = await this.git.findMove(moveId);
    if (!move) return;
    const log = context.log.child({ move: move.id, container: `${move.container_kind}:${move.container_id}` });
    if (move.state === 'scheduled') {
      if (!(await this.git.transition(move.id, ['scheduled'], 'started', now()))) return;
      log.info({ from: move.source_storage_name, to: move.destination_storage_name }, 'storage move started');
      move = { ...move, state: 'started' };
    }
    if (move.state === 'started') {
      if (!(await this.replicate(move, log))) return;
      move = { ...move, state: 'replicated' };
    }
    if (move.state === 'replicated') await this.cleanup(move, log);
  }

  /**
   * The switch: storage, state and read-only flag change in one transaction, so a crash leaves
   * either a `started` move on a read-only source (resumed by copying again) or a `replicated`
   * one on a writable destination, never a `replicated` move stuck read-only.
   */
  private async switchTo(move: MoveRow, switched: boolean): Promise<void> {
    const { container_kind: kind, container_id: id, destination_storage_name: destination } = move;
    await this.platform.db.transaction().execute(async (trx) => {
      if (!switched) await this.containers.setStorage(kind, id, destination, trx);
      const moved = await this.git.on(trx).transition(move.id, ['started'], 'replicated', this.platform.clock.now());
      if (!moved) throw new Error('the move is no longer started');
      await this.containers.setReadOnly(kind, id, false, trx);
    });
  }

  /** Copies and verifies every repository, then switches the container; false when the move failed. */
  private async replicate(move: MoveRow, log: JobContext['log']): Promise<boolean> {
    const { container_kind: kind, container_id: id, source_storage_name: source, destination_storage_name: destination } = move;
    const container = await this.containers.find(kind, id);
    if (!container) {
      await this.git.transition(move.id, ['started'], 'failed', this.platform.clock.now(), `${kind} ${id} no longer exists`);
      return false;
    }
    try {
      await this.containers.setReadOnly(kind, id, true);
      if (!this.storages.has(source) || !this.storages.has(destination)) throw new Error('storage is not configured');
      // Resumed after a switch recorded by an older version (storage first, state later):
      // the copies were verified before it happened.
      const switched = container.storage === destination && source !== destination;
      if (!switched) {
        if (container.storage !== source) throw new Error(`${kind} is on storage ${container.storage}, not ${source}`);
        await this.waitForPushes(container);
        if (source !== destination) await this.copyAll(container, source, destination, log);
      }
      await this.switchTo(move, switched);
      log.info('storage move replicated; repository writable on the destination');
      return true;
    } catch (error) {
      await this.failBeforeSwitch(move, container, error, log);
      return false;
    }
  }

  private async copyAll(container: Container, source: string, destination: string, log: JobContext['log']): Promise<void> {
    for (const repository of container.repositories) {
      const from = await this.storages.resolve(source, repository.kind, repository.id);
      if (!from) {
        log.info({ repository: repository.label }, 'no repository to copy');
        continue;
      }
      log.info({ repository: repository.label }, 'copying repository');
      await copyRepository(from, this.storages.path(destination, repository.kind, repository.id), repository.label);
      log.info({ repository: repository.label }, 'repository copied and verified');
    }
  }

  /**
   * Source stays the truth: the container goes back to it, copies on the destination go. Only
   * a move still `started` is undone; once `replicated` the destination is the truth.
   */
  private async failBeforeSwitch(move: MoveRow, container: Container, error: unknown, log: JobContext['log']): Promise<void> {
    const { container_kind: kind, container_id: id, source_storage_name: source, destination_storage_name: destination } = move;
    const message = error instanceof Error ? error.message : String(error);
    log.error({ err: error }, 'storage move failed');
    if ((await this.git.findMove(move.id))?.state !== 'started') return;
    try {
      let current = await this.containers.find(kind, id);
      if (current && current.storage === destination && source !== destination) {
        await this.containers.setStorage(kind, id, source);
        current = await this.containers.find(kind, id);
      }
      // Never delete what the container points at.
      if (current && current.storage !== destination && this.storages.has(destination)) {
        for (const repository of container.repositories) await this.storages.remove(destination, repository.kind, repository.id);
      }
    } catch (cleanupError) {
      log.error({ err: cleanupError }, 'could not remove the partial copy');
    }
    // Together, so a crash here never leaves a `failed` move with its container read-only.
    await this.platform.db.transaction().execute(async (trx) => {
      await this.git.on(trx).transition(move.id, ['started'], 'failed', this.platform.clock.now(), message);
      await this.containers.setReadOnly(kind, id, false, trx);
    });
  }

  private async cleanup(move: MoveRow, log: JobContext['log']): Promise<void> {
    const { container_kind: kind, container_id: id, source_storage_name: source, destination_storage_name: destination } = move;
    try {
      const container = await this.containers.find(kind, id);
      // A `replicated` move is writable on the destination. One switched by an older version
      // (state, then flag, in two writes) may have stopped in between: clear the flag here,
      // as nothing else sets it while a move is unsettled.
      if (container?.readOnly) await this.containers.setReadOnly(kind, id, false);
      if (container && source !== destination) {
        for (const repository of container.repositories) await this.storages.remove(source, repository.kind, repository.id);
      }
      await this.git.transition(move.id, ['replicated'], 'finished', this.platform.clock.now());
      log.info('storage move finished; source copy removed');
    } catch (error) {
      log.error({ err: error }, 'storage move cleanup failed');
      const message = error instanceof Error ? error.message : String(error);
      // replicated -> cleanup_failed leaves the container writable (reference §3.3).
      const exists = (await this.containers.find(kind, id)) !== null;
      await this.platform.db.transaction().execute(async (trx) => {
        const failed = await this.git.on(trx).transition(move.id, ['replicated'], 'cleanup_failed', this.platform.clock.now(), message);
        if (failed && exists) await this.containers.setReadOnly(kind, id, false, trx);
      });
    }
  }

  /** Pushes that passed the read-only check before the flag was set must land first. */
  private async waitForPushes(container: Container): Promise<void> {
    const attempts = this.options.pushPollAttempts ?? 30;
    for (let i = 0; i < attempts; i += 1) {
      if ((await this.git.activePushes(container.kind, container.id, this.platform.clock.now())) === 0) return;
      await sleep(this.options.pushPollMs ?? 1000);
    }
    const label = container.kind === 'group' ? 'group wiki' : container.kind;
    throw new Error(`Timeout waiting for ${label} repository pushes`);
  }
}
