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

/** Fails unless both repositories have the same refs, HEAD and object store. */
export async function verifyCopy(source: string, copy: string, label: string): Promise<void> {
  const [sourceRefs, copyRefs] = await Promise.all([refListing(source), refListing(copy)]);
  if (sourceRefs !== copyRefs) throw new CopyVerificationError(`Failed to verify ${label} repository refs from ${source} to ${copy}`);
  const [sourceObjects, copyObjects] = await Promise.all([objectChecksum(source), objectChecksum(copy)]);
  if (sourceObjects !== copyObjects) {
    throw new CopyVerificationError(`Failed to verify ${label} repository checksum from ${source} to ${copy}`);
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
    // A local clone links or copies the object files as they are (no repacking).
    await git(['clone', '--mirror', '--quiet', '--', source, tmp], { timeoutMs: 6 * 3600_000 });
    // The mirror's `origin` would point at the old path; drop it (plain file edit, no extra process).
    const configFile = path.join(tmp, 'config');
    const config = await readFile(configFile, 'utf8');
    await writeFile(configFile, config.replace(/^\[remote "origin"\][^[]*/m, ''));
    await verifyCopy(source, tmp, label);
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
