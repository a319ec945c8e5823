import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { addMember, createGroup, createUser } from '../helpers/factories.js';

const GROUPS = 40_000;

let t: TestApp;
before(async () => {
  t = await createTestApp();
});
after(() => t.close());

// More public groups than SQLite's 32,766 bound variables: visibility must be a condition in
// the statement, never a list of ids.
describe('GET /groups with many groups', () => {
  it('answers 200 with pagination headers over 40,000 public groups', async () => {
    const now = Date.now();
    await t.app.platform.db.transaction().execute(async (trx) => {
      for (let start = 0; start < GROUPS; start += 1000) {
        const rows = Array.from({ length: 1000 }, (_, i) => {
          const path = `bulk${String(start + i).padStart(5, '0')}`;
          return {
            kind: 'group' as const,
            name: path,
            path,
            full_path: path,
            full_path_lower: path,
            parent_id: null,
            owner_id: null,
            visibility: 'public',
            description: '',
            created_at: now,
            updated_at: now,
          };
        });
        await trx.insertInto('namespaces').values(rows).execute();
      }
    });
    const owner = await createUser(t.app);
    const member = await createUser(t.app);
    const hidden = await createGroup(t.app, owner, { path: 'aaa-private' });
    await addMember(t.app, 'namespace', hidden.id, member, 10);

    const anonymous = await t.api('GET', '/groups?per_page=50&page=2', { token: null });
    assert.equal(anonymous.statusCode, 200);
    assert.equal(anonymous.headers['x-total'], String(GROUPS));
    assert.equal(anonymous.headers['x-total-pages'], String(GROUPS / 50));
    assert.equal(anonymous.headers['x-next-page'], '3');
    assert.deepEqual(
      anonymous.json().map((g: { path: string }) => g.path),
      Array.from({ length: 50 }, (_, i) => `bulk${String(50 + i).padStart(5, '0')}`),
    );

    // A member also sees the private group it belongs to, first by name.
    const signedIn = await t.api('GET', '/groups?per_page=1', { token: member.token });
    assert.equal(signedIn.statusCode, 200);
    assert.equal(signedIn.headers['x-total'], String(GROUPS + 1));
    assert.equal(signedIn.json()[0].id, hidden.id);

    const asOwner = await t.api('GET', '/groups?per_page=1', { token: owner.token });
    assert.equal(asOwner.statusCode, 200);
    assert.equal(asOwner.headers['x-total'], String(GROUPS + 1), 'the owner is a member too');
    assert.equal((await t.api('GET', '/projects?per_page=1', { token: null })).statusCode, 200);
  });
});
