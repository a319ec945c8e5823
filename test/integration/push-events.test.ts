import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { describePush } from '../../src/modules/git/push-events.rules.js';
import { makeWorkTree, runGit, ZERO_OID } from '../helpers/git.js';

describe('describePush', () => {
  let dir: string;
  let head: string;
  before(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'basalt-push-events-'));
    head = await makeWorkTree(dir, 2, 'work');
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  const created = (names: string[]) => names.map((name) => ({ oldOid: ZERO_OID, newOid: head, ref: `refs/heads/${name}` }));

  // No `trunk` branch: a new branch counts all its commits (reference §2.6).
  it('details each ref of a group up to the configured limit (PUSH_EVENT_ACTIVITIES_LIMIT)', async () => {
    const refs = await describePush(dir, created(['a', 'b', 'c']), 'trunk', 3);
    assert.deepEqual(
      refs.map((r) => [r.ref, r.commitCount, r.commitTitle]),
      [
        ['a', 2, 'work 2'],
        ['b', 2, 'work 2'],
        ['c', 2, 'work 2'],
      ],
    );
  });

  it('spends no git work on a group over the limit: it becomes one bulk event without details', async () => {
    const refs = await describePush(
      dir,
      [...created(['a', 'b', 'c']), { oldOid: ZERO_OID, newOid: head, ref: 'refs/tags/v1' }],
      'trunk',
      2,
    );
    assert.deepEqual(
      refs.map((r) => [r.ref, r.refType, r.commitCount, r.commitTitle]),
      [
        ['a', 'branch', 0, null],
        ['b', 'branch', 0, null],
        ['c', 'branch', 0, null],
        ['v1', 'tag', 1, 'work 2'],
      ],
    );
    assert.equal(await runGit(['rev-parse', 'main'], { cwd: dir }), head);
  });
});
