import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { bumpEpoch, readEpoch } from '../../src/infra/db/index.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';

// A shared commit holds many writes that each bump the credentials epoch: the counter needs to
// move once per transaction, and again after anything inside the transaction read it
// (docs/decisions.md "Cache epochs").
describe('cache epoch bumps inside one transaction', () => {
  let database: TestDatabase;
  const value = () => readEpoch(database.handle.db, 'credentials');

  before(async () => {
    database = await createTestDatabase();
  });
  after(() => database.drop());

  it('moves the counter once for several bumps of one transaction', async () => {
    const start = await value();
    await database.handle.transact(async (trx) => {
      await bumpEpoch(trx, 'credentials');
      await bumpEpoch(trx, 'credentials');
      await bumpEpoch(trx, 'credentials');
    });
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(await value(), start + 1);
  });

  it('moves it again after a read inside the transaction, so the read value ends too', async () => {
    const start = await value();
    let seenInside = -1;
    await database.handle.transact(async (trx) => {
      await bumpEpoch(trx, 'credentials');
      seenInside = await readEpoch(trx, 'credentials');
      await bumpEpoch(trx, 'credentials');
    });
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(seenInside, start + 1);
    assert.equal(await value(), start + 2);
  });

  it('counts each transaction: two transactions, two moves', async () => {
    const start = await value();
    for (let i = 0; i < 2; i += 1) await database.handle.transact((trx) => bumpEpoch(trx, 'credentials'));
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(await value(), start + 2);
  });
});
