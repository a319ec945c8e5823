import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql, type Kysely } from 'kysely';
import { CompiledOnce, readEpoch, type DatabaseHandle, type EpochName, type Executor } from '../../src/infra/db/index.js';
import { createIntegration } from '../helpers/alerts.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createProject, createUser, type TestUser } from '../helpers/factories.js';
import { issueTokens, registerApp, sessionCookie } from '../helpers/oauth.js';
import { enableTracking } from '../helpers/sentry.js';

/** Any table, any column: the test walks the declared tables by name. */
type Loose = Record<string, Record<string, unknown>>;

const ROLLBACK = new Error('rolled back on purpose');
const turn = () => new Promise((resolve) => setImmediate(resolve));

/**
 * Cache epochs move with writes to the tables their modules declare (infra/db/epoch-bumps.ts,
 * docs/decisions.md "Cache epochs"): every declared table is written each way through the
 * app's database, and the counter must move for the kinds of write declared and stay for the
 * rest and for updates of the declared stamp columns (hot paths' writes).
 */
describe('cache epochs follow writes to their declared tables', () => {
  let t: TestApp;
  let handle: DatabaseHandle;
  let owner: TestUser;
  let projectId: number;

  before(async () => {
    t = await createTestApp();
    handle = t.app.platform.database;
    owner = await createUser(t.app);
    const project = await createProject(t.app, owner);
    projectId = project.id;
    await enableTracking(t, projectId, owner.token);
    await createIntegration(t, projectId, { name: 'Monitoring' }, owner.token);
    const settings = await t.api('PUT', `/projects/${projectId}/alert_management/settings`, {
      token: owner.token,
      body: { send_email: true },
    });
    assert.equal(settings.statusCode, 200, settings.body);
    const client = await registerApp(t);
    await issueTokens(t, await sessionCookie(t, owner), client, { scope: 'api' });
    // The newest user: the row a delete below takes (inside a transaction rolled back).
    await createUser(t.app);
  });
  after(() => t?.close());

  /** How far `epoch` moved over `write`, inside the transaction (whose read makes the next write bump again). */
  async function moved(trx: Executor, epoch: EpochName, write: () => Promise<unknown>): Promise<number> {
    const start = await readEpoch(trx, epoch);
    await write();
    return (await readEpoch(trx, epoch)) - start;
  }

  /** `work` in a transaction that is rolled back: the rows stay as the app left them. */
  async function rolledBack(work: (trx: Kysely<Loose>) => Promise<void>): Promise<void> {
    await assert.rejects(
      handle.db.transaction().execute(async (trx) => {
        await work(trx as unknown as Kysely<Loose>);
        throw ROLLBACK;
      }),
      (error) => error === ROLLBACK,
    );
  }

  it('declares the tables of every epoch', () => {
    const declared = handle.epochs.declared();
    assert.deepEqual([...declared.keys()].sort(), ['alerts', 'credentials', 'error-tracking', 'projects']);
    assert.ok(Object.keys(declared.get('credentials') ?? {}).includes('oauth_access_tokens'));
  });

  it('moves each epoch on the declared writes of each of its tables, and only on those', async () => {
    const checked: string[] = [];
    for (const [epoch, tables] of handle.epochs.declared()) {
      for (const [table, spec] of Object.entries(tables)) {
        const on = new Set<string>(spec.on ?? ['insert', 'update', 'delete']);
        const ignore: readonly string[] = spec.ignore ?? [];
        const db = handle.db as unknown as Kysely<Loose>;
        const probe = await db.selectFrom(table).selectAll().limit(1).executeTakeFirst();
        assert.ok(probe, `${table} has a row to write`);
        const key = 'id' in probe ? 'id' : 'project_id';
        const row = await db.selectFrom(table).selectAll().orderBy(key, 'desc').limit(1).executeTakeFirstOrThrow();
        const bumping = Object.keys(row).find((column) => column !== key && !ignore.includes(column));
        assert.ok(bumping, `${table} has a column whose update bumps`);
        const at = (trx: Kysely<Loose>) => trx.updateTable(table).where(key, '=', row[key]);
        await rolledBack(async (trx) => {
          const label = `${epoch}: ${table}`;
          const expect = (kind: string) => (on.has(kind) ? 1 : 0);
          assert.equal(
            await moved(trx, epoch, () =>
              at(trx)
                .set({ [bumping]: row[bumping] })
                .execute(),
            ),
            expect('update'),
            `${label} update`,
          );
          for (const column of ignore) {
            assert.equal(
              await moved(trx, epoch, () =>
                at(trx)
                  .set({ [column]: row[column] })
                  .execute(),
              ),
              0,
              `${label} update of ${column}`,
            );
          }
          if (ignore.length > 0) {
            const stamps = Object.fromEntries(ignore.map((column) => [column, row[column]]));
            assert.equal(await moved(trx, epoch, () => at(trx).set(stamps).execute()), 0, `${label} update of stamps only`);
          }
          // A write that changes no row moves nothing.
          assert.equal(
            await moved(trx, epoch, () =>
              trx
                .updateTable(table)
                .set({ [bumping]: row[bumping] })
                .where(key, '=', -1)
                .execute(),
            ),
            0,
            `${label} update of no row`,
          );
          assert.equal(
            await moved(trx, epoch, () => trx.deleteFrom(table).where(key, '=', row[key]).execute()),
            expect('delete'),
            `${label} delete`,
          );
          assert.equal(await moved(trx, epoch, () => trx.insertInto(table).values(row).execute()), expect('insert'), `${label} insert`);
        });
        checked.push(table);
      }
    }
    assert.ok(checked.length >= 8, checked.join(', '));
  });

  it('moves the counter once for several writes of one transaction (a shared commit)', async () => {
    const start = await readEpoch(handle.db, 'credentials');
    await handle.transact(async (trx) => {
      for (let i = 0; i < 3; i += 1)
        await trx.updateTable('personal_access_tokens').set({ revoked: 0 }).where('user_id', '=', owner.user.id).execute();
    });
    await turn();
    assert.equal(await readEpoch(handle.db, 'credentials'), start + 1);
  });

  it('moves it again after a read inside the transaction, so the read value ends too', async () => {
    const start = await readEpoch(handle.db, 'credentials');
    let seenInside = -1;
    await handle.transact(async (trx) => {
      await trx.updateTable('personal_access_tokens').set({ revoked: 0 }).where('user_id', '=', owner.user.id).execute();
      seenInside = await readEpoch(trx, 'credentials');
      await trx.updateTable('personal_access_tokens').set({ revoked: 0 }).where('user_id', '=', owner.user.id).execute();
    });
    await turn();
    assert.equal(seenInside, start + 1);
    assert.equal(await readEpoch(handle.db, 'credentials'), start + 2);
  });

  it('counts each transaction: two transactions, two moves', async () => {
    const start = await readEpoch(handle.db, 'projects');
    for (let i = 0; i < 2; i += 1) {
      await handle.transact((trx) => trx.updateTable('projects').set({ visibility: 'private' }).where('id', '=', projectId).execute());
    }
    await turn();
    assert.equal(await readEpoch(handle.db, 'projects'), start + 2);
  });

  it('bumps on compiled-once statements and raw SQL as on the query builder, outside transactions too', async () => {
    const revokeNone = new CompiledOnce(1, (db, id: number) =>
      db.updateTable('oauth_access_tokens').set({ revoked: 0 }).where('id', '=', id).where('revoked', '=', 0),
    );
    const stamp = new CompiledOnce(1, (db, at: number) =>
      db.updateTable('personal_access_tokens').set({ last_used_at: at }).where('user_id', '=', owner.user.id),
    );
    const token = await handle.db.selectFrom('oauth_access_tokens').select('id').where('revoked', '=', 0).executeTakeFirstOrThrow();
    const after = async (write: () => Promise<unknown>): Promise<number> => {
      await turn();
      const start = await readEpoch(handle.db, 'credentials');
      await write();
      await turn();
      return (await readEpoch(handle.db, 'credentials')) - start;
    };
    assert.equal(await after(() => revokeNone.rows(handle.db, token.id)), 1, 'compiled once, outside a transaction');
    assert.equal(await after(() => handle.transact((trx) => revokeNone.rows(trx, token.id))), 1, 'compiled once, in a transaction');
    assert.equal(await after(() => stamp.rows(handle.db, Date.now())), 0, 'a stamp of last use');
    assert.equal(
      await after(() => sql`update personal_access_tokens set revoked = 0 where user_id = ${owner.user.id}`.execute(handle.db)),
      1,
      'raw SQL',
    );
  });
});
