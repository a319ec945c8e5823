import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream, existsSync, readFileSync, rmSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readdir, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { pipeline } from 'node:stream/promises';
import SQLite from 'better-sqlite3';
import type { Config } from '../config/index.js';
import { constantTimeEqual } from '../infra/crypto.js';
import { ArchiveWriter, hashStream, readArchive, type ArchivedFile } from './archive.exec.js';
import { CliError } from './command.js';
import { checkKnownMigrations, migrateToLevel, type DatabaseTarget } from './database-level.service.js';
import {
  PostgresSource,
  PostgresTarget,
  SqliteSource,
  SqliteTarget,
  connectPostgres,
  copyTables,
  postgresTableNames,
  type Row,
  type RowSource,
  type TableInfo,
} from './table-transfer.repository.js';

export const MANIFEST = 'manifest.json';
const FORMAT = 'basalt-backup';
const FORMAT_VERSION = 1;
/** Files of DATA_DIR that hold secrets (src/config/secrets.ts, identity's bootstrap). */
const SECRET_FILES = ['secrets.json', 'initial_root_password'] as const;
const SQLITE_ENTRY = 'database/basalt.sqlite3';

export interface Manifest {
  readonly format: typeof FORMAT;
  readonly format_version: number;
  readonly basalt_version: string;
  readonly created_at: string;
  readonly database: {
    readonly dialect: 'sqlite' | 'postgres';
    /** Applied migrations by name: the schema's level. */
    readonly migrations: readonly string[];
    readonly tables: Readonly<Record<string, { readonly rows: number; readonly columns: readonly string[] }>>;
    /** The last id handed out per table (PostgreSQL exports; SQLite keeps its own in the file). */
    readonly sequences: Readonly<Record<string, number>>;
  };
  /** Storage names whose repositories the archive holds (under repositories/<name>/). */
  readonly storages: readonly string[];
  /** SECRET_KEY_BASE came from the environment, so the archive does not hold it. */
  readonly secret_key_base_in_environment: boolean;
  readonly files: Readonly<Record<string, ArchivedFile>>;
}

export interface BackupReport {
  readonly file: string;
  readonly manifest: Manifest;
  readonly bytes: number;
}

type Progress = (line: string) => void;

/** A throttled progress line: long work says where it is every few seconds, short work says nothing. */
function throttled(progress: Progress, everyMs = 2000): Progress {
  let last = Date.now();
  return (line) => {
    if (Date.now() - last < everyMs) return;
    last = Date.now();
    progress(line);
  };
}

/**
 * Names left by work in progress inside a storage: git's lock and temporary files, and Basalt's
 * deleted, half-made and half-moved repositories (git.storage.ts, repository-copy.exec.ts).
 */
function transient(name: string): boolean {
  return (
    name.endsWith('.lock') ||
    name.endsWith('.move-tmp') ||
    name.includes('+deleted') ||
    name.includes('.init-') ||
    name.startsWith('tmp_') ||
    name.startsWith('incoming-')
  );
}

/**
 * A storage's files, depth first. Within a directory `objects` comes last: git writes objects
 * before the refs that name them, so refs read first only name objects that are archived after.
 */
async function* storageFiles(root: string, dir = root): AsyncGenerator<string> {
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch (error) {
    // A repository moved or deleted while the backup walks: it is simply not there any more.
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw error;
  }
  entries.sort((a, b) => Number(a.name === 'objects') - Number(b.name === 'objects') || a.name.localeCompare(b.name));
  for (const entry of entries) {
    if (transient(entry.name)) continue;
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) yield* storageFiles(root, full);
    else if (entry.isFile()) yield full;
  }
}

/** Whether SECRET_KEY_BASE is the one DATA_DIR/secrets.json holds (otherwise the environment gave it). */
function secretKeyBaseInDataDir(config: Config): boolean {
  try {
    const parsed = JSON.parse(readFileSync(path.join(config.dataDir, 'secrets.json'), 'utf8')) as { secretKeyBase?: unknown };
    return typeof parsed.secretKeyBase === 'string' && constantTimeEqual(parsed.secretKeyBase, config.secretKeyBase);
  } catch {
    return false;
  }
}

/** SQLite's online backup of the server's file, as one self-contained file (no write-ahead log). */
async function snapshotSqlite(config: Config, into: string): Promise<void> {
  if (!existsSync(config.sqliteFile)) throw new CliError(`there is no database at ${config.sqliteFile} (has the server ever started?)`);
  const source = new SQLite(config.sqliteFile, { readonly: true, fileMustExist: true });
  try {
    source.pragma('busy_timeout = 5000');
    // All pages in one step: a step reads one snapshot while the server goes on writing to the
    // log; small steps would start over after each of the server's commits and might never end.
    await source.backup(into, { progress: () => 1_000_000_000 });
  } finally {
    source.close();
  }
  const copy = new SQLite(into);
  try {
    copy.pragma('journal_mode = DELETE');
  } finally {
    copy.close();
  }
}

async function describeSource(source: RowSource): Promise<Manifest['database']['tables']> {
  const tables: Record<string, { rows: number; columns: readonly string[] }> = {};
  for (const table of await source.tables()) tables[table.name] = { rows: await source.count(table.name), columns: table.columns };
  return tables;
}

/** Every table of the PostgreSQL schema as JSON lines (one array of values per row), all as of one snapshot. */
async function exportPostgres(
  config: Config,
  dir: string,
  progress: Progress,
): Promise<{ database: Manifest['database']; files: { name: string; file: string }[] }> {
  const source = await PostgresSource.open(config.databaseUrl as string);
  try {
    const tables: Record<string, { rows: number; columns: readonly string[] }> = {};
    const files: { name: string; file: string }[] = [];
    const tick = throttled(progress);
    for (const table of await source.tables()) {
      const file = path.join(dir, `${table.name}.jsonl`);
      const out = createWriteStream(file, { mode: 0o600 });
      let rows = 0;
      for await (const batch of source.rows(table)) {
        const text = batch.map((row) => JSON.stringify(row)).join('\n') + '\n';
        if (!out.write(text)) await new Promise<void>((resolve) => out.once('drain', () => resolve()));
        rows += batch.length;
        tick(`database: ${table.name}, ${rows} rows`);
      }
      await new Promise<void>((resolve, reject) => out.end((error?: Error | null) => (error ? reject(error) : resolve())));
      tables[table.name] = { rows, columns: table.columns };
      files.push({ name: `database/${table.name}.jsonl`, file });
    }
    const database = { dialect: 'postgres' as const, migrations: await source.migrations(), tables, sequences: await source.sequences() };
    return { database, files };
  } finally {
    await source.close();
  }
}

/**
 * `basalt backup create FILE`: the database as of one moment, the secrets and every storage's
 * repositories in one .tar.gz, with a manifest (version, migration level, row counts, the sha256
 * of every file). Safe while a server runs on the same data.
 */
export async function createBackup(config: Config, file: string, version: string, progress: Progress): Promise<BackupReport> {
  const target = path.resolve(file);
  if (existsSync(target)) throw new CliError(`${target} already exists: choose a new file name`);
  if (!existsSync(path.dirname(target))) throw new CliError(`the directory ${path.dirname(target)} does not exist`);
  const scratch = await mkdtemp(path.join(path.dirname(target), '.basalt-backup-'));
  const writer = new ArchiveWriter(target);
  // Interrupted (Ctrl-C, a stopping service manager): the partial archive and scratch files go too.
  const onSignal = (signal: NodeJS.Signals): void => {
    rmSync(writer.temp, { force: true });
    rmSync(scratch, { recursive: true, force: true });
    process.stderr.write(`basalt: backup interrupted by ${signal}; nothing was written to ${target}\n`);
    process.exit(130);
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    let database: Manifest['database'];
    const started = Date.now();
    if (config.databaseUrl === null) {
      progress('database: copying the SQLite database (online backup)');
      const copy = path.join(scratch, 'basalt.sqlite3');
      await snapshotSqlite(config, copy);
      const source = new SqliteSource(copy);
      try {
        database = { dialect: 'sqlite', migrations: await source.migrations(), tables: await describeSource(source), sequences: {} };
      } finally {
        await source.close();
      }
      await writer.addFile(SQLITE_ENTRY, copy);
    } else {
      progress('database: exporting the PostgreSQL schema (one REPEATABLE READ snapshot)');
      const exported = await exportPostgres(config, scratch, progress);
      database = exported.database;
      for (const { name, file: exportedFile } of exported.files) await writer.addFile(name, exportedFile);
    }
    const rows = Object.values(database.tables).reduce((sum, t) => sum + t.rows, 0);
    progress(`database: ${Object.keys(database.tables).length} tables, ${rows} rows (${Date.now() - started} ms)`);

    for (const name of SECRET_FILES) await writer.addFile(`secrets/${name}`, path.join(config.dataDir, name));
    const inEnvironment = !secretKeyBaseInDataDir(config);
    if (inEnvironment) progress('secrets: SECRET_KEY_BASE comes from the environment and is not in the archive: keep it with the backup');

    const tick = throttled(progress);
    for (const [storage, dir] of Object.entries(config.storages)) {
      let count = 0;
      for await (const full of storageFiles(dir)) {
        const relative = path.relative(dir, full).split(path.sep).join('/');
        if (await writer.addFile(`repositories/${storage}/${relative}`, full)) count += 1;
        tick(`repositories: ${storage}, ${count} files, ${(writer.bytes / 1e6).toFixed(0)} MB so far`);
      }
      progress(`repositories: ${storage}, ${count} files`);
    }

    const manifest: Manifest = {
      format: FORMAT,
      format_version: FORMAT_VERSION,
      basalt_version: version,
      created_at: new Date().toISOString(),
      database,
      storages: Object.keys(config.storages),
      secret_key_base_in_environment: inEnvironment,
      files: { ...writer.files },
    };
    await writer.addBuffer(MANIFEST, Buffer.from(JSON.stringify(manifest, null, 2) + '\n'));
    await writer.finish();
    return { file: target, manifest, bytes: writer.bytes };
  } catch (error) {
    await writer.abort();
    throw error;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    await rm(scratch, { recursive: true, force: true });
  }
}

// --- restore ------------------------------------------------------------------------------

/** Regular files anywhere below `dir` (empty directories do not count). */
async function firstFileIn(dir: string): Promise<string | null> {
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
  for (const entry of entries) {
    const full = path.join(dir, entry.name);
    if (!entry.isDirectory()) return full;
    const inside = await firstFileIn(full);
    if (inside) return inside;
  }
  return null;
}

/** The archive's checksums against its manifest, reading it to its end; nothing is written. */
export async function verifyArchive(file: string): Promise<Manifest> {
  const seen = new Map<string, ArchivedFile>();
  let manifestText: string | null = null;
  try {
    await readArchive(file, async (entry) => {
      if (entry.path === MANIFEST) {
        if (entry.size > 256 * 1024 * 1024) throw new CliError('the archive manifest is too large');
        const chunks: Buffer[] = [];
        for await (const chunk of entry.stream as AsyncIterable<Buffer>) chunks.push(chunk);
        manifestText = Buffer.concat(chunks).toString('utf8');
        return;
      }
      if (seen.has(entry.path)) throw new CliError(`checksum error: ${entry.path} appears twice in the archive`);
      seen.set(entry.path, await hashStream(entry.stream as unknown as NodeJS.ReadableStream));
    });
  } catch (error) {
    if (error instanceof CliError) throw error;
    throw new CliError(`checksum error: the archive cannot be read to its end, it is corrupted or truncated (${(error as Error).message})`);
  }
  if (manifestText === null) throw new CliError('the archive has no manifest.json: it is not a Basalt backup');
  let manifest: Manifest;
  try {
    manifest = JSON.parse(manifestText) as Manifest;
  } catch {
    throw new CliError('checksum error: the archive manifest is not valid JSON');
  }
  if (manifest.format !== FORMAT || typeof manifest.files !== 'object') throw new CliError('the archive is not a Basalt backup');
  if (manifest.format_version > FORMAT_VERSION) {
    throw new CliError(
      `the archive's format ${manifest.format_version} is newer than this Basalt reads (${FORMAT_VERSION}); install a newer version`,
    );
  }
  for (const [name, expected] of Object.entries(manifest.files)) {
    if (name === MANIFEST) continue;
    const found = seen.get(name);
    if (!found) throw new CliError(`checksum error: ${name} is listed in the manifest but missing from the archive`);
    if (found.sha256 !== expected.sha256 || found.size !== expected.size) {
      throw new CliError(`checksum error: ${name} does not match its checksum in the manifest (the archive is corrupted)`);
    }
  }
  for (const name of seen.keys()) {
    if (!Object.hasOwn(manifest.files, name)) throw new CliError(`checksum error: ${name} is in the archive but not in its manifest`);
  }
  return manifest;
}

/** A relative path that stays inside its directory, or an error. */
function safeRelative(relative: string): string {
  const normal = path.posix.normalize(relative);
  if (
    normal === '' ||
    normal === '.' ||
    normal.startsWith('../') ||
    normal === '..' ||
    path.posix.isAbsolute(normal) ||
    normal.includes('\0')
  ) {
    throw new CliError(`the archive holds an unsafe path: ${relative}`);
  }
  return normal;
}

/** Rows of a PostgreSQL export (database/<table>.jsonl), described by the manifest. */
class JsonlSource implements RowSource {
  constructor(
    private readonly dir: string,
    private readonly database: Manifest['database'],
  ) {}

  async tables(): Promise<TableInfo[]> {
    return Object.entries(this.database.tables).map(([name, t]) => ({ name, columns: t.columns, primaryKey: [], parents: [] }));
  }

  async *rows(table: TableInfo): AsyncIterable<Row[]> {
    const file = path.join(this.dir, `${table.name}.jsonl`);
    if (!existsSync(file)) return;
    const lines = createInterface({ input: createReadStream(file), crlfDelay: Infinity });
    let batch: Row[] = [];
    for await (const line of lines) {
      if (line === '') continue;
      batch.push(JSON.parse(line) as Row);
      if (batch.length >= 1000) {
        yield batch;
        batch = [];
      }
    }
    if (batch.length > 0) yield batch;
  }

  async count(table: string): Promise<number> {
    return this.database.tables[table]?.rows ?? 0;
  }

  async sequences(): Promise<Record<string, number>> {
    return { ...this.database.sequences };
  }

  async migrations(): Promise<string[]> {
    return [...this.database.migrations];
  }

  async close(): Promise<void> {}
}

export interface RestoreEnvironment {
  readonly env: Readonly<Record<string, string | undefined>>;
  /** The server's configuration, loaded only once DATA_DIR was found empty (loading it writes there). */
  config(): Config;
}

/**
 * `basalt backup restore FILE`: into an empty DATA_DIR, empty storages and an empty database
 * only. Every checksum is verified before anything is written; then the secrets, repositories
 * and the database (the SQLite file as archived, or the migrations to the archived level and
 * every table's rows) are put in place.
 */
export async function restoreBackup(setup: RestoreEnvironment, file: string, progress: Progress): Promise<Manifest> {
  const archive = path.resolve(file);
  if (!existsSync(archive)) throw new CliError(`${archive} does not exist`);
  // Checked before the configuration is loaded: loading it creates DATA_DIR/secrets.json.
  const dataDir = path.resolve(setup.env.DATA_DIR || './data');
  const present = await firstFileIn(dataDir);
  if (present)
    throw new CliError(`DATA_DIR ${dataDir} is not empty (${path.relative(dataDir, present)}): restore only into an empty data directory`);

  progress('verifying checksums');
  const manifest = await verifyArchive(archive);
  checkKnownMigrations(manifest.database.migrations);

  const config = setup.config();
  // A storage the archive holds no file of (an unused one) need not be configured here.
  const used = new Set(Object.keys(manifest.files).flatMap((name) => (name.startsWith('repositories/') ? [name.split('/')[1] ?? ''] : [])));
  for (const storage of manifest.storages.filter((name) => used.has(name))) {
    const dir = config.storages[storage];
    if (!dir) throw new CliError(`the archive holds repositories of storage "${storage}", which STORAGES does not configure`);
  }
  for (const [storage, dir] of Object.entries(config.storages)) {
    const inside = await firstFileIn(dir);
    if (inside) throw new CliError(`storage "${storage}" (${dir}) is not empty: restore only into empty storages`);
  }
  const target: DatabaseTarget =
    config.databaseUrl === null ? { dialect: 'sqlite', file: config.sqliteFile } : { dialect: 'postgres', url: config.databaseUrl };
  if (target.dialect === 'sqlite' && existsSync(config.sqliteFile))
    throw new CliError(`the database ${config.sqliteFile} exists: restore only into an empty database`);
  if (target.dialect === 'postgres') await refuseNonEmptyPostgres(target.url);

  const scratch = await mkdtemp(path.join(config.dataDir, '.restore-'));
  try {
    progress('writing secrets and repositories');
    await extract(archive, manifest, config, scratch, progress);
    progress(`database: restoring ${manifest.database.dialect} data into ${target.dialect}`);
    await restoreDatabase(manifest, target, scratch, progress);
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
  return manifest;
}

export async function refuseNonEmptyPostgres(url: string): Promise<void> {
  const client = await connectPostgres(url).catch((error: unknown) => {
    throw new CliError(`cannot connect to PostgreSQL (${(error as Error).message})`);
  });
  try {
    const tables = await postgresTableNames(client);
    if (tables.length > 0) {
      const schema = (await client.query<{ s: string }>('select current_schema() as s')).rows[0]?.s ?? '?';
      throw new CliError(
        `the PostgreSQL schema "${schema}" is not empty (${tables.length} tables, e.g. ${tables[0]}): use an empty database or schema`,
      );
    }
  } finally {
    await client.end();
  }
}

/** Writes every entry to its place, checking each file's checksum again as it is written. */
async function extract(archive: string, manifest: Manifest, config: Config, scratch: string, progress: Progress): Promise<void> {
  const tick = throttled(progress);
  let written = 0;
  await readArchive(archive, async (entry) => {
    if (entry.path === MANIFEST) return void entry.stream.resume();
    const name = safeRelative(entry.path);
    let destination: string;
    const [top, second, ...rest] = name.split('/');
    if (top === 'database' && second && rest.length === 0) destination = path.join(scratch, second);
    else if (top === 'secrets' && (SECRET_FILES as readonly string[]).includes(second ?? '') && rest.length === 0) {
      destination = path.join(config.dataDir, second as string);
    } else if (top === 'repositories' && second && config.storages[second] && rest.length > 0) {
      destination = path.join(config.storages[second], ...rest);
    } else throw new CliError(`the archive holds ${name}, which has no place in a Basalt installation`);
    await mkdir(path.dirname(destination), { recursive: true, mode: 0o700 });
    const hash = createHash('sha256');
    await pipeline(
      entry.stream,
      async function* (chunks: AsyncIterable<Buffer>) {
        for await (const chunk of chunks) {
          hash.update(chunk);
          yield chunk;
        }
      },
      createWriteStream(destination, { mode: entry.mode & 0o777 || 0o600 }),
    );
    await chmod(destination, entry.mode & 0o777 || 0o600);
    if (hash.digest('hex') !== manifest.files[name]?.sha256) throw new CliError(`checksum error: ${name} changed while it was restored`);
    written += 1;
    tick(`${written} files written`);
  });
  progress(`${written} files written`);
}

async function restoreDatabase(manifest: Manifest, target: DatabaseTarget, scratch: string, progress: Progress): Promise<void> {
  const archivedSqlite = path.join(scratch, path.basename(SQLITE_ENTRY));
  if (manifest.database.dialect === 'sqlite' && target.dialect === 'sqlite') {
    // The archived file is the database: moved into place whole (same filesystem: DATA_DIR).
    const temp = `${target.file}.restoring`;
    await rename(archivedSqlite, temp);
    await chmod(temp, 0o600);
    await rename(temp, target.file);
    return;
  }
  const source: RowSource =
    manifest.database.dialect === 'sqlite' ? new SqliteSource(archivedSqlite) : new JsonlSource(scratch, manifest.database);
  try {
    await migrateToLevel(target, manifest.database.migrations);
    const into = target.dialect === 'sqlite' ? new SqliteTarget(target.file) : await PostgresTarget.open(target.url);
    try {
      const report = await copyTables(source, into, progress);
      const rows = Object.values(report.counts).reduce((a, b) => a + b, 0);
      progress(`database: ${Object.keys(report.counts).length} tables, ${rows} rows restored and counted`);
    } finally {
      await into.close();
    }
  } finally {
    await source.close();
  }
  if (target.dialect === 'sqlite') await chmod(target.file, 0o600);
}
