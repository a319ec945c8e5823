import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { addMember, createGroup, createProject, createUser } from '../helpers/factories.js';

let t: TestApp;
before(async () => {
  t = await createTestApp();
});
after(() => t.close());

describe('issue search is bounded', () => {
  it('a search over 100 characters is 400 with the validation body', async () => {
    const owner = await createUser(t.app);
    const project = await createProject(t.app, owner, { visibility: 'public' });
    const res = await t.api('GET', `/projects/${project.id}/issues?search=${'a'.repeat(101)}`, { token: null });
    assert.equal(res.statusCode, 400);
    assert.ok(Array.isArray(res.json().message.search), JSON.stringify(res.json()));
    const atLimit = await t.api('GET', `/projects/${project.id}/issues?search=${'a'.repeat(100)}`, { token: null });
    assert.equal(atLimit.statusCode, 200);
  });

  it('matches the title and the first 10,000 characters of the description only', async () => {
    const owner = await createUser(t.app);
    const project = await createProject(t.app, owner, { visibility: 'public' });
    const create = (title: string, description: string) =>
      t.api('POST', `/projects/${project.id}/issues`, { token: owner.token, body: { title, description } });
    await create('Needle in the title', '');
    await create('early', `${'x'.repeat(9_990)} needle`);
    // Documented limitation (docs/decisions.md): text past 10,000 characters is not searched.
    await create('late', `${'x'.repeat(10_000)} needle`);
    const res = await t.api('GET', `/projects/${project.id}/issues?search=NEEDLE`, { token: null });
    assert.equal(res.statusCode, 200);
    assert.deepEqual(
      res
        .json()
        .map((i: { title: string }) => i.title)
        .sort(),
      ['Needle in the title', 'early'],
    );
    assert.equal(res.headers['x-total'], '2');
  });
});

describe('GET /:source/:id/members/all', () => {
  it('pages in SQL: headers, page 2, highest level per user', async () => {
    const owner = await createUser(t.app);
    const group = await createGroup(t.app, owner);
    const project = await createProject(t.app, owner, { namespaceId: group.id });
    const users = [];
    for (let i = 0; i < 4; i += 1) users.push(await createUser(t.app));
    const [a, b, c, d] = users as [(typeof users)[0], (typeof users)[0], (typeof users)[0], (typeof users)[0]];
    await addMember(t.app, 'namespace', group.id, a, 10);
    await addMember(t.app, 'project', project.id, a, 30); // direct and inherited: the higher level wins
    await addMember(t.app, 'namespace', group.id, b, 40);
    await addMember(t.app, 'project', project.id, b, 20);
    await addMember(t.app, 'project', project.id, c, 20);
    await addMember(t.app, 'namespace', group.id, d, 10);
    // owner (group owner, 50), a 30, b 40, c 20, d 10: five users ordered by id.
    const expected = [
      [owner.user.id, 50],
      [a.user.id, 30],
      [b.user.id, 40],
      [c.user.id, 20],
      [d.user.id, 10],
    ].sort((x, y) => (x[0] ?? 0) - (y[0] ?? 0));

    const page1 = await t.api('GET', `/projects/${project.id}/members/all?per_page=2`, { token: owner.token });
    assert.equal(page1.statusCode, 200);
    assert.equal(page1.headers['x-total'], '5');
    assert.equal(page1.headers['x-total-pages'], '3');
    assert.equal(page1.headers['x-next-page'], '2');
    const page2 = await t.api('GET', `/projects/${project.id}/members/all?per_page=2&page=2`, { token: owner.token });
    assert.equal(page2.statusCode, 200);
    assert.equal(page2.headers['x-page'], '2');
    assert.equal(page2.headers['x-prev-page'], '1');
    assert.equal(page2.headers['x-next-page'], '3');
    const seen = [...page1.json(), ...page2.json()].map((m: { id: number; access_level: number }) => [m.id, m.access_level]);
    assert.deepEqual(seen, expected.slice(0, 4));
    const page3 = await t.api('GET', `/projects/${project.id}/members/all?per_page=2&page=3`, { token: owner.token });
    assert.deepEqual(
      page3.json().map((m: { id: number; access_level: number }) => [m.id, m.access_level]),
      expected.slice(4),
    );
    assert.equal(page3.headers['x-next-page'], '');

    const ofGroup = await t.api('GET', `/groups/${group.id}/members/all?per_page=1&page=2`, { token: owner.token });
    assert.equal(ofGroup.headers['x-total'], '4');
    assert.equal(ofGroup.json().length, 1);
  });
});
