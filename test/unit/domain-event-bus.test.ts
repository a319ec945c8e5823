import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { auditEntry } from '../../src/infra/audit.js';
import { DomainEventBus, type DomainEvent } from '../../src/infra/bus.js';
import type { Executor } from '../../src/infra/db/index.js';

const executor = {} as Executor;
const blocked: DomainEvent = { type: 'user_blocked', userId: 7, at: 1 };
const created: DomainEvent = { type: 'user_created', userId: 8, username: 'ada', name: 'Ada', at: 2 };
const audited: DomainEvent = {
  type: 'audited',
  entry: auditEntry(
    { authorId: 1, authorName: 'root', ipAddress: null },
    { entityType: 'User', entityId: 7, entityPath: 'ada', eventName: 'user_blocked', at: 1 },
  ),
  at: 1,
};

describe('the domain event bus', () => {
  it('calls each subscriber for the types it named, and change subscribers for every type but `audited`', async () => {
    const bus = new DomainEventBus();
    const calls: string[] = [];
    bus.subscribe(['user_blocked', 'user_created'], async (event) => void calls.push(`users:${event.type}`));
    bus.subscribeToChanges(async (event) => void calls.push(`changes:${event.type}`));
    bus.subscribe(['audited'], async (event) => void calls.push(`audit:${event.entry.eventName}`));
    for (const event of [blocked, audited, created]) await bus.publish(event, executor);
    assert.deepEqual(calls, [
      'users:user_blocked',
      'changes:user_blocked',
      'audit:user_blocked',
      'users:user_created',
      'changes:user_created',
    ]);
  });

  it('a subscriber added after a publish gets the events published after it', async () => {
    const bus = new DomainEventBus();
    const calls: string[] = [];
    bus.subscribe(['user_blocked'], async () => void calls.push('first'));
    await bus.publish(blocked, executor);
    bus.subscribe(['user_blocked'], async () => void calls.push('second'));
    await bus.publish(blocked, executor);
    assert.deepEqual(calls, ['first', 'first', 'second']);
  });

  it('hands each subscriber the publisher’s executor, and a subscriber that throws fails the publish', async () => {
    const bus = new DomainEventBus();
    let seen: Executor | null = null;
    bus.subscribe(['user_created'], async (_event, given) => {
      seen = given;
    });
    bus.subscribe(['user_created'], () => Promise.reject(new Error('refused')));
    await assert.rejects(bus.publish(created, executor), /refused/);
    assert.equal(seen, executor);
  });
});
