import { createHash } from 'node:crypto';
import { lstat, mkdir, open, readFile, readdir, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { git } from './git.exec.js';

/** Every ref with its object, and where HEAD points: two copies are equal when these are. */
export async function refListing(repo: string): Promise<string> {
  const [refs, head] = await Promise.all([
    git(['for-each-ref', '--format=%(objectname) %(refname)'], { cwd: repo }),
    readFile(path.join(repo, 'HEAD'), 'utf8').catch(() => ''),
  ]);
  return `HEAD -> ${head.trim()}\n${refs.split('\n').filter(Boolean).sort().join('\n')}`;
}

/**
 * The same listing as refListing, read from the ref files (packed-refs, then loose refs,
 * symbolic refs resolved) without starting git, so verifying a copy costs file reads only.
 * Source and copy are read the same way; test/api/git-moves checks it against git's listing.
 */
export async function refListingFromFiles(repo: string): Promise<string> {
  const refs = new Map<string, string>();
  const packed = await readFile(path.join(repo, 'packed-refs'), 'utf8').catch(() => '');
  for (const line of packed.split('\n')) {
    const match = /^([0-9a-f]{40,64}) (refs\/\S+)$/.exec(line);
    if (match?.[1] && match[2]) refs.set(match[2], match[1]);
  }
  const symbolic = new Map<string, string>();
  const walk = async (dir: string, prefix: string): Promise<void> => {
    for (const entry of await readdir(dir, { withFileTypes: true }).catch(() => [])) {
      const name = `${prefix}/${entry.name}`;
      if (entry.isDirectory()) await walk(path.join(dir, entry.name), name);
      else if (entry.isFile() && !entry.name.endsWith('.lock')) {
        const value = (await readFile(path.join(dir, entry.name), 'utf8')).trim();
        if (value.startsWith('ref: ')) symbolic.set(name, value.slice(5));
        else if (/^[0-9a-f]{40,64}$/.test(value)) refs.set(name, value);
      }
    }
  };
  await walk(path.join(repo, 'refs'), 'refs');
  for (const [name, target] of symbolic) {
    const object = refs.get(target);
    if (object) refs.set(name, object);
  }
  const head = await readFile(path.join(repo, 'HEAD'), 'utf8').catch(() => '');
  const lines = [...refs].map(([name, object]) => `${object} ${name}`);
  return `HEAD -> ${head.trim()}\n${lines.sort().join('\n')}`;
}

/**
 * A digest of the object store: every pack with its size and trailing checksum (the SHA
 * over its content that git writes at its end) and every loose object name. A local
 * mirror clone copies these files one for one, so source and copy must agree.
 */
export async function objectChecksum(repo: string): Promise<string> {
  const lines: string[] = [];
  const objects = path.join(repo, 'objects');
  for (const entry of await readdir(objects, { withFileTypes: true }).catch(() => [])) {
    if (entry.isDirectory() && /^[0-9a-f]{2}$/.test(entry.name)) {
      for (const loose of await readdir(path.join(objects, entry.name))) lines.push(`loose ${entry.name}${loose}`);
    }
  }
  const packDir = path.join(objects, 'pack');
  for (const name of await readdir(packDir).catch(() => [] as string[])) {
    if (!name.endsWith('.pack')) continue;
    const handle = await open(path.join(packDir, name), 'r');
    try {
      const { size } = await handle.stat();
      const trailer = Buffer.alloc(Math.min(32, size));
      await handle.read(trailer, 0, trailer.length, size - trailer.length);
      lines.push(`pack ${name} ${size} ${trailer.toString('hex')}`);
    } finally {
      await handle.close();
    }
  }
  return createHash('sha256').update(lines.sort().join('\n')).digest('hex');
}

export class CopyVerificationError extends Error {}

/** What a copy must match: the source's refs, HEAD and object store. */
export interface RepositoryFingerprint {
  refs: string;
  objects: string;
}

/** Git's own listing of the refs (the source) or a reading of the ref files (a fresh copy). */
export async function fingerprint(repo: string, readRefs: (repo: string) => Promise<string> = refListing): Promise<RepositoryFingerprint> {
  const [refs, objects] = await Promise.all([readRefs(repo), objectChecksum(repo)]);
  return { refs, objects };
}

/** Fails unless the copy has the same refs, HEAD and object store as the source had. */
export async function verifyCopy(source: string | RepositoryFingerprint, copy: string, label: string): Promise<void> {
  const [expected, actual] = await Promise.all([
    typeof source === 'string' ? fingerprint(source) : source,
    fingerprint(copy, refListingFromFiles),
  ]);
  const from = typeof source === 'string' ? source : 'the source';
  if (expected.refs !== actual.refs) throw new CopyVerificationError(`Failed to verify ${label} repository refs from ${from} to ${copy}`);
  if (expected.objects !== actual.objects) {
    throw new CopyVerificationError(`Failed to verify ${label} repository checksum from ${from} to ${copy}`);
  }
}

async function exists(target: string): Promise<boolean> {
  try {
    await lstat(target);
    return true;
  } catch {
    return false;
  }
}

/**
 * Copies a bare repository to `destination` (which must not be live): a local mirror clone
 * into a temporary sibling, verified, then renamed into place, so `destination` only ever
 * holds a complete, verified copy. Safe to run again after a crash at any point.
 */
export async function copyRepository(source: string, destination: string, label = 'project'): Promise<void> {
  const tmp = `${destination}.move-tmp`;
  await rm(tmp, { recursive: true, force: true });
  await mkdir(path.dirname(destination), { recursive: true });
  try {
    // The source is read-only while it moves, so its fingerprint is taken while the clone runs.
    // A local clone links or copies the object files as they are (no repacking).
    const [expected] = await Promise.all([
      fingerprint(source, refListingFromFiles),
      git(['clone', '--mirror', '--quiet', '--', source, tmp], { timeoutMs: 6 * 3600_000 }),
    ]);
    // The mirror's `origin` would point at the old path; drop it (plain file edit, no extra process).
    const configFile = path.join(tmp, 'config');
    const config = await readFile(configFile, 'utf8');
    await writeFile(configFile, config.replace(/^\[remote "origin"\][^[]*/m, ''));
    await verifyCopy(expected, tmp, label);
    if (await exists(destination)) await rm(destination, { recursive: true, force: true });
    await rename(tmp, destination);
  } catch (error) {
    await rm(tmp, { recursive: true, force: true });
    throw error;
  }
}

/**
 * Times the copy-and-verify of a storage move for one repository (bench/moves compares
 * it with `git clone --mirror` of the same repository). The copy is removed afterwards.
 */
export async function timeRepositoryMove(source: string, destinationDir: string): Promise<{ ms: number; destination: string }> {
  const destination = path.join(destinationDir, `${path.basename(source, '.git')}-moved.git`);
  const started = performance.now();
  await copyRepository(source, destination);
  const ms = performance.now() - started;
  await rm(destination, { recursive: true, force: true });
  return { ms, destination };
}
