import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { refListing, refListingFromFiles } from '../../src/modules/git/index.js';

describe('reading refs from files', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'basalt-refs-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('lists what git for-each-ref lists: packed, loose, tags and symbolic refs', async () => {
    const work = path.join(dir, 'work');
    const run = (...args: string[]) =>
      execFileSync('git', args, {
        cwd: work,
        env: { ...process.env, GIT_AUTHOR_NAME: 'a', GIT_AUTHOR_EMAIL: 'a@b', GIT_COMMITTER_NAME: 'a', GIT_COMMITTER_EMAIL: 'a@b' },
      });
    execFileSync('git', ['init', '-q', '-b', 'main', work]);
    run('commit', '-q', '--allow-empty', '-m', 'one');
    run('tag', '-a', 'v1', '-m', 'annotated');
    run('branch', 'feature');
    run('pack-refs', '--all');
    run('commit', '-q', '--allow-empty', '-m', 'two');
    run('branch', 'loose-only');
    run('tag', 'light');
    run('symbolic-ref', 'refs/heads/alias', 'refs/heads/main');
    const bare = path.join(dir, 'bare.git');
    execFileSync('git', ['clone', '-q', '--mirror', work, bare]);
    run('update-ref', 'refs/heads/after-clone', 'HEAD');
    for (const repo of [path.join(work, '.git'), bare]) {
      assert.equal(await refListingFromFiles(repo), await refListing(repo), repo);
    }
  });
});
