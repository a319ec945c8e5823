// `npm test`: every suite on SQLite, then the API suites about stored state again on PostgreSQL
// when TEST_DATABASE_URL is set (one switch: BASALT_TEST_DB). Suites needing Redis, Chromium or
// Alertmanager skip themselves with a reason when those are missing.
// Usage: npm test [-- <path filter>...]
// BASALT_TEST_COVERAGE=1 measures the line coverage of src/ in the SQLite run of the in-process
// tiers and, for the whole suite, fails under the floor in .ci/coverage-floor (raised by hand,
// never lowered).
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildTests, testBuildDir } from './test-build.mjs';

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const filters = process.argv.slice(2);

function testFiles(dir) {
  const out = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...testFiles(full));
    else if (entry.name.endsWith('.test.ts') || entry.name.endsWith('.test.tsx')) out.push(full);
  }
  return out.sort();
}

const all = testFiles(path.join(root, 'test')).filter((f) => filters.length === 0 || filters.some((x) => f.includes(x)));

// The suites run from their compiled copies (scripts/test-build.mjs), built once here.
process.stdout.write(`compiled ${buildTests()} files for the test run\n`);
/** A test file's compiled copy in .test-build/. */
function compiledTestFile(file) {
  return path.join(testBuildDir, path.relative(root, file)).replace(/\.tsx?$/, '.js');
}

const coverage = process.env.BASALT_TEST_COVERAGE === '1';
const coverageFloorFile = path.join(root, '.ci', 'coverage-floor');
// A row of the runner's coverage table: `ℹ src/a/b.ts | 93.22 | 100.00 | 100.00 | 1-4`.
const COVERAGE_ROW = /^ℹ (src\/\S+)\s*\|\s*([\d.]+)\s*\|/;

/**
 * Runs `files` in one test runner. `held`: its report is kept and written when it ends, so two
 * runs going on at once do not interleave their lines.
 */
function run(label, files, env, { measure = false, held = false } = {}) {
  return new Promise((resolve) => {
    if (files.length === 0) return resolve({ pass: 0, fail: 0, skipped: 0, lines: new Map() });
    const heldOutput = [];
    const write = (text) => (held ? heldOutput.push(text) : process.stdout.write(text));
    write(`\n=== ${label}: ${files.length} files ===\n`);
    const concurrency = Math.max(1, Math.min(4, os.availableParallelism()));
    const child = spawn(
      process.execPath,
      [
        '--enable-source-maps',
        '--test',
        ...(measure ? ['--experimental-test-coverage'] : []),
        '--test-reporter=spec',
        `--test-concurrency=${concurrency}`,
        '--test-timeout=180000',
        ...files.map(compiledTestFile),
      ],
      { cwd: root, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', held ? 'pipe' : 'inherit'] },
    );
    let tail = '';
    let partial = '';
    /** Line % of each file of src/, from the coverage table (not echoed: one row a file). */
    const lines = new Map();
    child.stderr?.on('data', (chunk) => write(chunk.toString()));
    child.stdout.on('data', (chunk) => {
      tail = (tail + chunk.toString()).slice(-200_000);
      if (!measure) return void write(chunk.toString());
      const text = partial + chunk.toString();
      const complete = text.slice(0, text.lastIndexOf('\n') + 1);
      partial = text.slice(complete.length);
      for (const line of complete.split('\n').slice(0, -1)) {
        const row = COVERAGE_ROW.exec(line);
        if (row) lines.set(row[1], Number(row[2]));
        else if (!/^ℹ (file|all files|start of coverage report|end of coverage report|-+\s*$)|^ℹ .*\|\s*[\d.]+\s*\|/.test(line)) {
          write(`${line}\n`);
        }
      }
    });
    child.on('close', (code) => {
      if (partial) write(partial);
      if (held) process.stdout.write(heldOutput.join(''));
      // The summary comes before the list of failures, so take the last summary in the output.
      const count = (name) => Number([...tail.matchAll(new RegExp(`ℹ ${name} (\\d+)`, 'g'))].at(-1)?.[1] ?? 0);
      const result = { pass: count('pass'), fail: count('fail') + count('cancelled'), skipped: count('skipped'), lines };
      if (code !== 0 && result.fail === 0) result.fail = 1;
      resolve(result);
    });
  });
}

function sourceFiles(dir) {
  const out = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...sourceFiles(full));
    else if (/\.tsx?$/.test(entry.name) && !entry.name.endsWith('.d.ts')) out.push(full);
  }
  return out;
}

/**
 * Line coverage of src/: each file's line % weighted by its number of lines; a file no test
 * loaded counts as not covered at all. Returns whether it is at least the floor.
 */
function reportCoverage(lines, enforce) {
  let total = 0;
  let covered = 0;
  for (const file of sourceFiles(path.join(root, 'src'))) {
    const relative = path.relative(root, file).split(path.sep).join('/');
    const count = readFileSync(file, 'utf8').split('\n').length;
    total += count;
    covered += (count * (lines.get(relative) ?? 0)) / 100;
  }
  const percent = total === 0 ? 0 : (100 * covered) / total;
  const floor = Number(readFileSync(coverageFloorFile, 'utf8').trim());
  process.stdout.write(`\nline coverage of src/: ${percent.toFixed(2)}% (${Math.round(covered)} of ${total} lines; floor ${floor}%)\n`);
  if (!enforce) return true;
  if (percent < floor) {
    process.stdout.write(`line coverage is under the floor in .ci/coverage-floor (${floor}%)\n`);
    return false;
  }
  if (percent >= floor + 1) process.stdout.write(`the floor can rise: put ${Math.floor(percent)} in .ci/coverage-floor\n`);
  return true;
}

const STALE_AFTER_MS = 2 * 60 * 60 * 1000;
const thisHost = createHash('sha1').update(os.hostname()).digest('hex').slice(0, 6);

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error.code === 'EPERM';
  }
}

/**
 * Whether a test schema belongs to a run that is gone. Names are
 * t_<created ms, base 36>_<pid, base 36>_<host hash>_<random> (testSchemaName in
 * test/helpers/database.ts): a schema is stale when its process on this host has ended, or
 * when it is older than two hours. The older t_<12 hex> names carry neither and are stale.
 */
function staleSchema(name, now) {
  if (/^t_[0-9a-f]{12}$/.test(name)) return true;
  const match = /^t_([0-9a-z]+)_([0-9a-z]+)_([0-9a-f]{6})_[0-9a-f]+$/.exec(name);
  if (!match) return false;
  const created = parseInt(match[1], 36);
  if (now - created > STALE_AFTER_MS) return true;
  return match[3] === thisHost && !alive(parseInt(match[2], 36));
}

/**
 * Schemas left by test runs that were killed (each test file drops its own when it ends).
 * Runs going on next to this one keep theirs.
 */
async function dropStaleSchemas(url) {
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: url });
  try {
    await client.connect();
    const { rows } = await client.query("select nspname from pg_namespace where nspname like 't\\_%'");
    const stale = rows.map((r) => r.nspname).filter((name) => staleSchema(name, Date.now()));
    if (stale.length > 0) {
      // Another run may be migrating its schemas, and Kysely's migrator lists the tables of
      // every schema: drops take the migrations' advisory lock (MIGRATION_LOCK_KEY, migrator.ts).
      await client.query('select pg_advisory_lock(7420001)');
      for (const name of stale) await client.query(`drop schema if exists ${name} cascade`);
      await client.query('select pg_advisory_unlock(7420001)');
    }
    if (stale.length > 0) process.stdout.write(`dropped ${stale.length} schemas left by earlier runs\n`);
  } catch (error) {
    process.stdout.write(`could not clean old test schemas: ${error.message}\n`);
  } finally {
    await client.end().catch(() => undefined);
  }
}

const results = [];
// Coverage is measured over the in-process tiers (unit, integration, API): the end-to-end suites
// drive servers in child processes and browsers, which the runner's coverage does not see, and
// its report fails on them. They run after, unmeasured.
const endToEnd = (f) => f.includes(`${path.sep}e2e${path.sep}`);
const measured = coverage ? all.filter((f) => !endToEnd(f)) : all;
/**
 * The end-to-end suites start the built server and `basalt` command (dist/): built once here,
 * before them (beside the measured run when there is one), so that suites going on at once do
 * not each compile into the same folder.
 */
function buildOnce() {
  if (!all.some(endToEnd)) return Promise.resolve(true);
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [path.join(root, 'scripts', 'build.mjs'), '--if-stale'], {
      cwd: root,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    child.on('close', (code) => {
      if (code !== 0) process.stdout.write(`\nbuilding dist/ for the end-to-end suites failed:\n${output}\n`);
      resolve(code === 0);
    });
  });
}
/**
 * API suites whose subject is above the database (HTML pages, rules over every route, git,
 * counters outside the database) start with `// Not in the PostgreSQL tier: <why>.` and run on
 * SQLite only; every other API suite runs on both.
 */
function sqliteOnly(file) {
  return readFileSync(file, 'utf8').startsWith('// Not in the PostgreSQL tier:');
}
// Before any suite makes schemas of its own: suites going on at once must not see theirs dropped.
if (process.env.TEST_DATABASE_URL) await dropStaleSchemas(process.env.TEST_DATABASE_URL);
const built = buildOnce();
if (!coverage && !(await built)) results.push({ pass: 0, fail: 1, skipped: 0 });
const sqlite = await run(coverage ? 'SQLite (measured)' : 'SQLite', measured, { BASALT_TEST_DB: 'sqlite' }, { measure: coverage });
results.push(sqlite);
// Only the whole suite is held to the floor: a filtered run covers less by design.
if (coverage && !reportCoverage(sqlite.lines, filters.length === 0)) results.push({ pass: 0, fail: 1, skipped: 0 });
// The end-to-end suites wait on browsers, git and child servers, the PostgreSQL run on its
// database: in the measured run (CI) the two go on at once, the PostgreSQL report held until it
// ends, which keeps the whole run inside CI's budget.
const endToEndRun = coverage
  ? built.then((ok) =>
      ok ? run('SQLite (end to end)', all.filter(endToEnd), { BASALT_TEST_DB: 'sqlite' }) : { pass: 0, fail: 1, skipped: 0 },
    )
  : null;
if (process.env.TEST_DATABASE_URL) {
  const apiSuite = all.filter((f) => f.includes(`${path.sep}api${path.sep}`) && !sqliteOnly(f));
  const postgresRun = run('PostgreSQL (API suite)', apiSuite, { BASALT_TEST_DB: 'postgres' }, { held: endToEndRun !== null });
  results.push(...(await Promise.all([endToEndRun, postgresRun].filter((r) => r !== null))));
} else {
  if (endToEndRun) results.push(await endToEndRun);
  process.stdout.write('\nPostgreSQL API suite skipped: TEST_DATABASE_URL is not set.\n');
}
const total = results.reduce((a, r) => ({ pass: a.pass + r.pass, fail: a.fail + r.fail, skipped: a.skipped + r.skipped }), {
  pass: 0,
  fail: 0,
  skipped: 0,
});
process.stdout.write(`\ntests: ${total.pass} passed, ${total.fail} failed, ${total.skipped} skipped\n`);
process.exit(total.fail > 0 ? 1 : 0);
