// Storage move of a repository with 10,000 commits against `git clone --mirror` of the
// same repository on the same machine (issue 8): the move's copy and verification must
// take at most 1.5 times the clone. Storages are normally separate volumes, so both copies
// go to another filesystem (/dev/shm when it exists) where git cannot hard-link objects.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { timeRepositoryMove } from '../src/modules/git/index.js';

/** A bare repository of `commits` commits written in one `git fast-import` stream. */
function makeRepository(dir: string, commits: number): string {
  const repo = path.join(dir, 'source.git');
  execFileSync('git', ['init', '--bare', '-q', '-b', 'main', repo]);
  const lines: string[] = [];
  for (let i = 1; i <= commits; i += 1) {
    // About 2 KB of incompressible text per commit, so the pack is tens of megabytes.
    const content = `${randomBytes(1500).toString('base64')}\n`;
    const message = `commit ${i}`;
    lines.push(
      'commit refs/heads/main',
      `mark :${i}`,
      `committer Bench <bench@example.com> ${1_700_000_000 + i} +0000`,
      `data ${Buffer.byteLength(message)}`,
      message,
      ...(i > 1 ? [`from :${i - 1}`] : []),
      `M 100644 inline file-${i % 50}.txt`,
      `data ${Buffer.byteLength(content)}`,
      content.slice(0, -1),
      '',
    );
  }
  execFileSync('git', ['-C', repo, 'fast-import', '--quiet'], { input: `${lines.join('\n')}\n`, maxBuffer: 1 << 28 });
  execFileSync('git', ['-C', repo, 'gc', '--quiet']);
  return repo;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;

export async function benchMoves(commits = 10_000, rounds = 3): Promise<{ moveMs: number; cloneMs: number; ratio: number }> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'basalt-bench-moves-'));
  const other = mkdtempSync(path.join(existsSync('/dev/shm') ? '/dev/shm' : os.tmpdir(), 'basalt-bench-moves-'));
  try {
    const source = makeRepository(dir, commits);
    const clones: number[] = [];
    const moves: number[] = [];
    for (let i = 0; i < rounds; i += 1) {
      const target = path.join(other, `clone-${i}.git`);
      const started = performance.now();
      execFileSync('git', ['clone', '--mirror', '--quiet', source, target]);
      clones.push(performance.now() - started);
      rmSync(target, { recursive: true, force: true });
      moves.push((await timeRepositoryMove(source, other)).ms);
    }
    const moveMs = Math.round(median(moves));
    const cloneMs = Math.round(median(clones));
    return { moveMs, cloneMs, ratio: Math.round((moveMs / cloneMs) * 100) / 100 };
  } finally {
    rmSync(dir, { recursive: true, force: true });
    rmSync(other, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1] ?? ''}`) {
  process.stdout.write(`${JSON.stringify(await benchMoves())}\n`);
}
