import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream, type WriteStream } from 'node:fs';
import { open, rename, rm } from 'node:fs/promises';
import { once } from 'node:events';
import { createGzip, type Gzip } from 'node:zlib';
import { Header, Parser, Pax, type ReadEntry } from 'tar';

/** What the manifest says of one file of the archive. */
export interface ArchivedFile {
  readonly sha256: string;
  readonly size: number;
}

const BLOCK = 512;
const CHUNK = 1024 * 1024;

/**
 * A .tar.gz written as a stream (POSIX ustar with pax headers for long names), hashing each
 * file's bytes as they go in: the checksum is of exactly what was archived, even when a file is
 * replaced meanwhile (git replaces refs by rename; an open file keeps its content). It is written
 * under a temporary name and renamed into place by `finish`, so a failed or interrupted backup
 * never leaves a half-written archive under the final name.
 */
export class ArchiveWriter {
  private readonly gzip: Gzip;
  private readonly output: WriteStream;
  private readonly done: Promise<void>;
  /** The name written until `finish` renames it. */
  readonly temp: string;
  readonly files: Record<string, ArchivedFile> = {};
  bytes = 0;

  constructor(private readonly file: string) {
    this.temp = `${file}.partial-${process.pid}`;
    this.gzip = createGzip({ level: 6 });
    this.output = createWriteStream(this.temp, { mode: 0o600 });
    this.done = new Promise<void>((resolve, reject) => {
      this.gzip.on('error', reject);
      this.output.on('error', reject);
      this.output.on('close', () => resolve());
      this.gzip.pipe(this.output);
    });
    // A failure surfaces where the writer is awaited; this keeps it from being unhandled meanwhile.
    this.done.catch(() => undefined);
  }

  private async write(chunk: Buffer): Promise<void> {
    if (!this.gzip.write(chunk)) await Promise.race([once(this.gzip, 'drain'), this.done]);
  }

  private async header(name: string, size: number, mode: number, mtime: Date): Promise<void> {
    const header = new Header({ path: name, mode, size, mtime, type: 'File', uid: 0, gid: 0 });
    const block = Buffer.alloc(BLOCK);
    header.encode(block, 0);
    if (header.needPax) await this.write(new Pax({ path: name, size, mtime }).encode());
    await this.write(block);
  }

  private async pad(size: number): Promise<void> {
    const rest = size % BLOCK;
    if (rest !== 0) await this.write(Buffer.alloc(BLOCK - rest));
  }

  /** An in-memory file (the manifest, small exports). */
  async addBuffer(name: string, content: Buffer, mode = 0o600): Promise<void> {
    await this.header(name, content.length, mode, new Date());
    await this.write(content);
    await this.pad(content.length);
    this.files[name] = { sha256: createHash('sha256').update(content).digest('hex'), size: content.length };
    this.bytes += content.length;
  }

  /**
   * A file of the host, as its size was when opened. `false` when it vanished before it could be
   * opened (a git lock or temporary object file, say).
   */
  async addFile(name: string, source: string): Promise<boolean> {
    let handle;
    try {
      handle = await open(source, 'r');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
      throw error;
    }
    try {
      const stat = await handle.stat();
      const size = stat.size;
      await this.header(name, size, stat.mode & 0o777, stat.mtime);
      const hash = createHash('sha256');
      let remaining = size;
      while (remaining > 0) {
        const buffer = Buffer.allocUnsafe(Math.min(CHUNK, remaining));
        const { bytesRead } = await handle.read(buffer, 0, buffer.length, size - remaining);
        // A file cut short while read (not something git does) is refused rather than archived wrong.
        if (bytesRead === 0) throw new Error(`${source} shrank while it was archived`);
        const chunk = buffer.subarray(0, bytesRead);
        hash.update(chunk);
        await this.write(chunk);
        remaining -= bytesRead;
      }
      await this.pad(size);
      this.files[name] = { sha256: hash.digest('hex'), size };
      this.bytes += size;
      return true;
    } finally {
      await handle.close();
    }
  }

  /** Ends the archive (two zero blocks), waits for the disk, and gives it its final name. */
  async finish(): Promise<void> {
    await this.write(Buffer.alloc(BLOCK * 2));
    this.gzip.end();
    await this.done;
    const handle = await open(this.temp, 'r+');
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(this.temp, this.file);
  }

  /** Gives up: the partial file goes. */
  async abort(): Promise<void> {
    this.gzip.destroy();
    this.output.destroy();
    await this.done.catch(() => undefined);
    await rm(this.temp, { force: true });
  }
}

/** One file entry of an archive as it is read: its name, mode and content stream. */
export interface ArchiveEntry {
  readonly path: string;
  readonly mode: number;
  readonly size: number;
  readonly stream: ReadEntry;
}

/**
 * Reads a .tar.gz from start to end, calling `onFile` for each regular file (its content must be
 * consumed) and awaiting what it returns before the archive is declared read. Any other kind of
 * entry (links, devices) is refused: Basalt's archives hold files only.
 */
export async function readArchive(file: string, onFile: (entry: ArchiveEntry) => Promise<void>): Promise<void> {
  const pending: Promise<void>[] = [];
  let refused: Error | null = null;
  const parser = new Parser({
    strict: true,
    // Every file entry is consumed by `onFile`; nothing may flow before it listens.
    noResume: true,
    // The archive is the operator's own; its database exports compress very well.
    maxDecompressionRatio: Infinity,
    onReadEntry: (entry: ReadEntry) => {
      if (entry.type === 'Directory') return void entry.resume();
      if (entry.type !== 'File' && entry.type !== 'OldFile') {
        refused ??= new Error(`the archive holds ${entry.path}, which is not a regular file`);
        return void entry.resume();
      }
      const work = onFile({ path: entry.path, mode: entry.mode ?? 0o600, size: entry.size, stream: entry });
      work.catch((error: unknown) => {
        refused ??= error instanceof Error ? error : new Error(String(error));
        entry.resume();
      });
      pending.push(work);
    },
  });
  await new Promise<void>((resolve, reject) => {
    const input = createReadStream(file);
    input.on('error', reject);
    parser.on('error', (error: Error) => {
      input.destroy();
      reject(error);
    });
    parser.on('end', () => resolve());
    input.pipe(parser);
  });
  await Promise.allSettled(pending);
  if (refused) throw refused;
  for (const work of pending) await work;
}

/** The sha256 of a stream's bytes (and how many there were). */
export async function hashStream(stream: NodeJS.ReadableStream): Promise<ArchivedFile> {
  const hash = createHash('sha256');
  let size = 0;
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    hash.update(chunk);
    size += chunk.length;
  }
  return { sha256: hash.digest('hex'), size };
}
