import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pino from 'pino';
import { ManualClock } from '../../src/infra/clock.js';
import { Mailer } from '../../src/infra/mail/index.js';
import { SmtpWorker } from '../../src/infra/mail/smtp-worker.js';
import { RequestLoad } from '../../src/infra/load.js';
import { Outbox, type OutboxItem, type SendResult } from '../../src/infra/outbox/index.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { startTestSmtp } from '../helpers/smtp.js';

const log = pino({ level: 'silent' });

/**
 * The durable outbox (src/infra/outbox): transactional enqueue, retries with backoff, the
 * dead-letter state, leases taken over from a crashed process, idempotent message ids, bounded
 * concurrency; and mail through it to a real SMTP server over smtps.
 */
describe('outbox', () => {
  let database: TestDatabase;
  const clock = new ManualClock(Date.UTC(2026, 0, 1));
  before(async () => {
    database = await createTestDatabase();
  });
  after(() => database.drop());

  /** The requests the outboxes give way to, as the HTTP layer counts them. */
  const load = new RequestLoad();
  const make = (options: ConstructorParameters<typeof Outbox>[4] = {}) =>
    new Outbox(database.handle.db, database.handle.dialect, clock, log, { host: 'basalt.test', load, ...options });
  const state = async (messageId: string) =>
    database.handle.db.selectFrom('outbox').selectAll().where('message_id', '=', messageId).executeTakeFirstOrThrow();

  /**
   * Starts `outbox`'s loop while "requests" arrive, a thousand a second or so, each costing nothing
   * here, and returns once they have come for a second and a half.
   */
  const startWhileRequestsCome = async (outbox: Outbox) => {
    const requests = setInterval(() => {
      for (let i = 0; i < 5; i += 1) load.note();
    }, 5);
    await new Promise((r) => setTimeout(r, 50));
    outbox.start();
    await new Promise((r) => setTimeout(r, 1_500));
    clearInterval(requests);
  };

  it('enqueues only with a committed transaction, once per message id, and delivers', async () => {
    const outbox = make();
    const sent: string[] = [];
    outbox.register('t1', { send: async (item) => (sent.push(item.messageId), { ok: true }) });
    await database.handle.db
      .transaction()
      .execute(async (trx) => {
        await outbox.enqueue(trx, 't1', { n: 0 }, { messageId: 'rolled-back@basalt.test' });
        throw new Error('roll back');
      })
      .catch(() => undefined);
    await database.handle.db.transaction().execute(async (trx) => {
      await outbox.enqueue(trx, 't1', { n: 1 }, { messageId: 'a@basalt.test' });
      await outbox.enqueue(trx, 't1', { n: 2 }, { messageId: 'a@basalt.test' });
      await outbox.enqueue(trx, 't1', { n: 3 }, { messageId: 'later@basalt.test', runAt: clock.now() + 60_000 });
    });
    assert.equal(await outbox.drain(), 1);
    assert.deepEqual(sent, ['a@basalt.test']);
    assert.equal((await state('a@basalt.test')).state, 'sent');
    clock.advance(60_000);
    assert.equal(await outbox.drain(), 1);
    assert.deepEqual(sent, ['a@basalt.test', 'later@basalt.test']);
    assert.deepEqual(
      (await outbox.counts()).filter((c) => c.kind === 't1'),
      [{ kind: 't1', state: 'sent', n: 2 }],
    );
  });

  it('retries with exponential backoff, then goes dead after maxAttempts and tells the kind once', async () => {
    const outbox = make();
    const attempts: number[] = [];
    const settled: Array<[string, string]> = [];
    outbox.register('t2', {
      maxAttempts: 3,
      send: async (item): Promise<SendResult> => (attempts.push(item.attempts), { ok: false, error: `refused ${item.attempts}` }),
      onSettled: async (item, outcome) => void settled.push([item.messageId, outcome]),
    });
    await outbox.enqueue(database.handle.db, 't2', {}, { messageId: 'retry@basalt.test' });
    await outbox.drain();
    let row = await state('retry@basalt.test');
    assert.equal(row.state, 'failed');
    assert.equal(row.last_error, 'refused 1');
    const wait = row.next_attempt_at - clock.now();
    assert.ok(wait >= 30_000 && wait <= 33_000, `first retry after ~30 s, not ${wait}`);
    assert.equal(await outbox.drain(), 0, 'not before its time');
    clock.advance(wait);
    await outbox.drain();
    row = await state('retry@basalt.test');
    const second = row.next_attempt_at - clock.now();
    assert.ok(second >= 60_000 && second <= 66_000, `then ~60 s, not ${second}`);
    clock.advance(second);
    await outbox.drain();
    row = await state('retry@basalt.test');
    assert.equal(row.state, 'dead');
    assert.deepEqual(attempts, [1, 2, 3]);
    assert.deepEqual(settled, [['retry@basalt.test', 'dead']]);
    clock.advance(86_400_000);
    assert.equal(await outbox.drain(), 0, 'a dead item stays dead');
  });

  it('a permanent failure goes dead at once; retryAfterMs overrides the backoff', async () => {
    const outbox = make();
    outbox.register('t3', {
      send: async (item): Promise<SendResult> =>
        (item.payload as { kind: string }).kind === 'bad'
          ? { ok: false, error: '550 no such user', permanent: true }
          : { ok: false, error: 'busy', retryAfterMs: 5_000 },
    });
    await outbox.enqueue(database.handle.db, 't3', { kind: 'bad' }, { messageId: 'bad@basalt.test' });
    await outbox.enqueue(database.handle.db, 't3', { kind: 'busy' }, { messageId: 'busy@basalt.test' });
    await outbox.drain();
    assert.equal((await state('bad@basalt.test')).state, 'dead');
    const busy = await state('busy@basalt.test');
    assert.equal(busy.state, 'failed');
    assert.equal(busy.next_attempt_at, clock.now() + 5_000);
  });

  it("a crashed process's item is taken over when its lease runs out, and the late outcome of the first is ignored", async () => {
    const first = make({ leaseMs: 10_000 });
    const second = make({ leaseMs: 10_000 });
    let release: (result: SendResult) => void = () => undefined;
    first.register('t4', { send: () => new Promise<SendResult>((resolve) => (release = resolve)) });
    const delivered: OutboxItem[] = [];
    second.register('t4', { send: async (item) => (delivered.push(item), { ok: true }) });
    await first.enqueue(database.handle.db, 't4', {}, { messageId: 'lease@basalt.test' });
    const stuck = first.drain();
    // Let the first process claim it.
    for (let i = 0; i < 50 && (await state('lease@basalt.test')).state !== 'sending'; i += 1) await new Promise((r) => setImmediate(r));
    assert.equal(await second.drain(), 0, 'held under the lease');
    clock.advance(10_001);
    await second.drain();
    assert.equal(delivered.length, 1);
    assert.equal(delivered[0]?.attempts, 2);
    assert.equal((await state('lease@basalt.test')).state, 'sent');
    release({ ok: false, error: 'late' });
    await stuck;
    assert.equal((await state('lease@basalt.test')).state, 'sent', 'the lost lease records nothing');
  });

  it('sends several items at once, never more than its concurrency', async () => {
    const outbox = make({ concurrency: 4 });
    let inFlight = 0;
    let most = 0;
    let sent = 0;
    outbox.register('t5', {
      send: async () => {
        inFlight += 1;
        most = Math.max(most, inFlight);
        await new Promise((r) => setTimeout(r, 5));
        inFlight -= 1;
        sent += 1;
        return { ok: true };
      },
    });
    await database.handle.db.transaction().execute(async (trx) => {
      for (let i = 0; i < 20; i += 1) await outbox.enqueue(trx, 't5', { i });
    });
    await outbox.drain();
    assert.equal(sent, 20);
    assert.equal(most, 4);
  });

  it('claims the earliest due items of every state first, however many are queued; new message ids sort by time', async () => {
    const outbox = make({ concurrency: 3 });
    const order: number[] = [];
    outbox.register('t6', { send: async (item) => (order.push((item.payload as { i: number }).i), { ok: true }) });
    const now = clock.now();
    await database.handle.db.transaction().execute(async (trx) => {
      for (let i = 0; i < 300; i += 1) await outbox.enqueue(trx, 't6', { i: 1000 + i }, { runAt: now - 1_000 + i });
    });
    // A failed item due before any pending one, and an item whose holder's lease ran out.
    await outbox.enqueue(database.handle.db, 't6', { i: 1 }, { messageId: 'failed@basalt.test', runAt: now - 5_000 });
    await outbox.enqueue(database.handle.db, 't6', { i: 2 }, { messageId: 'stale@basalt.test', runAt: now - 4_000 });
    await database.handle.db
      .updateTable('outbox')
      .set({ state: 'failed', attempts: 1 })
      .where('message_id', '=', 'failed@basalt.test')
      .execute();
    await database.handle.db
      .updateTable('outbox')
      .set({ state: 'sending', lease_owner: 'gone', lease_until: now - 1 })
      .where('message_id', '=', 'stale@basalt.test')
      .execute();
    assert.equal(await outbox.drain(3), 3);
    assert.deepEqual(
      order.sort((a, b) => a - b),
      [1, 2, 1000],
    );
    assert.equal(await outbox.drain(), 299);
    const ids = Array.from({ length: 50 }, () => outbox.newMessageId());
    assert.deepEqual([...ids].sort(), ids, 'in the order they were made');
    assert.equal(new Set(ids).size, 50);
    assert.match(ids[0]!, /^[0-9a-z.]+@basalt\.test$/);
  });

  it('the loop sends one batch per poll while requests keep the event loop busy, and the rest once they stop', async () => {
    const outbox = make({ busyBatch: 5, pollMs: 300 });
    let sent = 0;
    outbox.register('t7', { send: async () => ((sent += 1), { ok: true }) });
    await database.handle.db.transaction().execute(async (trx) => {
      for (let i = 0; i < 200; i += 1) await outbox.enqueue(trx, 't7', { i });
    });
    // "Requests": the loop busy nine tenths of the time for a second and a half.
    let spinning = true;
    const spin = () => {
      const until = performance.now() + 9;
      while (performance.now() < until);
      if (spinning) setTimeout(spin, 1);
    };
    spin();
    await new Promise((r) => setTimeout(r, 50));
    outbox.start();
    await new Promise((r) => setTimeout(r, 1_500));
    spinning = false;
    const whileBusy = sent;
    assert.ok(whileBusy >= 5 && whileBusy <= 30, `${whileBusy} sent while busy (a batch of 5 per 300 ms poll)`);
    for (let i = 0; i < 200 && sent < 200; i += 1) await new Promise((r) => setTimeout(r, 25));
    await outbox.stop();
    assert.equal(sent, 200, 'the rest went out once the loop was free');
  });

  it('requests arriving fast hold the loop to one batch per poll even where the event loop looks idle (a shared core)', async () => {
    const outbox = make({ busyBatch: 5, pollMs: 300 });
    let sent = 0;
    outbox.register('t8', { send: async () => ((sent += 1), { ok: true }) });
    await database.handle.db.transaction().execute(async (trx) => {
      for (let i = 0; i < 200; i += 1) await outbox.enqueue(trx, 't8', { i });
    });
    await startWhileRequestsCome(outbox);
    const whileBusy = sent;
    assert.ok(whileBusy >= 5 && whileBusy <= 35, `${whileBusy} sent while requests came (a batch of 5 per 300 ms poll)`);
    for (let i = 0; i < 200 && sent < 200; i += 1) await new Promise((r) => setTimeout(r, 25));
    await outbox.stop();
    assert.equal(sent, 200);
  });

  it('a busy poll counts an item of parts as its parts: the item of a shared commit does not overshoot the batch', async () => {
    const outbox = make({ busyBatch: 5, pollMs: 300 });
    const parts: number[] = [];
    outbox.register('t9', { send: async (item) => (parts.push(...(item.payload as { parts: number[] }).parts), { ok: true }) });
    // Twenty commits of ten parts each: twenty items.
    for (let c = 0; c < 20; c += 1) {
      await database.handle.transact(async (trx) => {
        for (let i = 0; i < 10; i += 1) await outbox.enqueuePart(trx, 't9', c * 10 + i);
      });
    }
    const items = await database.handle.db.selectFrom('outbox').select('id').where('kind', '=', 't9').execute();
    assert.equal(items.length, 20, 'one item per commit');
    await startWhileRequestsCome(outbox);
    const whileBusy = parts.length;
    // Five polls at most, each one item of ten parts (a batch of 5 parts is reached by the first).
    assert.ok(whileBusy >= 10 && whileBusy <= 60, `${whileBusy} parts sent while requests came`);
    for (let i = 0; i < 200 && parts.length < 200; i += 1) await new Promise((r) => setTimeout(r, 25));
    await outbox.stop();
    assert.deepEqual(
      [...parts].sort((a, b) => a - b),
      Array.from({ length: 200 }, (_, i) => i),
    );
  });

  it('the SMTP thread: a message in flight when it stops fails (to be retried), a stopped thread sends nothing', async () => {
    const smtp = await startTestSmtp({});
    try {
      const thread = new SmtpWorker(smtp.url());
      const mail = { from: 'basalt@basalt.test', to: 'ann@example.com', subject: 's', text: 't', headers: {}, messageId: '<m@x>', date: 0 };
      assert.deepEqual(await thread.send(mail), { ok: true });
      const inFlight = thread.send({ ...mail, messageId: '<m2@x>' });
      await thread.close();
      assert.equal(thread.stopped, true);
      const outcome = await inFlight;
      // Sent before the thread closed its pool, or failed with the thread: never left hanging.
      assert.ok(outcome.ok || /SMTP thread/.test(outcome.message), JSON.stringify(outcome));
      const after = await thread.send({ ...mail, messageId: '<m3@x>' });
      assert.equal(after.ok, false);
    } finally {
      await smtp.close();
    }
  });

  it('mail over smtps (TLS from the first byte) with credentials; refused credentials are retried, not dropped', async () => {
    const smtp = await startTestSmtp({ secure: true, auth: { user: 'u@basalt.test', pass: 'pw:1/2' } });
    try {
      const outbox = make();
      const good = new Mailer({ smtpUrl: smtp.url(), from: 'Basalt <basalt@basalt.test>', replyTo: null }, outbox, log);
      await good.enqueue(database.handle.db, { to: 'ann@example.com', subject: 'Hello', text: 'plain', html: '<p>html</p>' });
      await outbox.drain();
      await good.close();
      assert.equal(smtp.received.length, 1);
      const [mail] = smtp.received;
      assert.equal(mail?.secure, true);
      assert.equal(mail?.user, 'u@basalt.test');
      assert.deepEqual(mail?.to, ['ann@example.com']);
      assert.equal(mail?.text.trim(), 'plain');
      assert.equal(mail?.html, '<p>html</p>');
      // The SMTP thread ended with close: the next message starts another.
      await good.enqueue(database.handle.db, { to: 'bob@example.com', subject: 'Again', text: 'again' });
      await outbox.drain();
      await good.close();
      assert.deepEqual(
        smtp.received.map((m) => m.to),
        [['ann@example.com'], ['bob@example.com']],
      );

      const wrong = make();
      const bad = new Mailer(
        { smtpUrl: smtp.url({ user: 'u@basalt.test', pass: 'nope' }), from: 'basalt@basalt.test', replyTo: null },
        wrong,
        log,
      );
      const id = 'wrong-password@basalt.test';
      await bad.enqueue(database.handle.db, { to: 'ann@example.com', subject: 'x', text: 'x' }, { messageId: id });
      await wrong.drain();
      await bad.close();
      const row = await state(id);
      assert.equal(row.state, 'failed');
      assert.match(row.last_error ?? '', /Invalid username or password/);
    } finally {
      await smtp.close();
    }
  });
});
