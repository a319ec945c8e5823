// Compiles src/, test/ and scripts/ once into .test-build/ for `npm test`, so that each test process
// loads plain JavaScript instead of compiling TypeScript through tsx's loader hooks (about
// 1.4 s of CPU a process, where a run starts a few hundred of them).
//
// The folder mirrors the checkout: every file of those folders is there as a link (sources that
// tests read, fixtures, static files, worker code; a script run as a program runs from the
// checkout, since Node follows the link of its main module), each .ts/.tsx gets its compiled .js
// beside it with an inline source map (stack traces and the coverage table name the .ts files),
// and the other top-level entries are links to the checkout's own, so paths a test computes from
// its own location (`../../dist`, `../../package.json`) lead where they do in the checkout.
import { existsSync, mkdirSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildSync } from 'esbuild';

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
export const testBuildDir = path.join(root, '.test-build');
const compiled = ['src', 'test', 'scripts'];
/** Top-level folders the build, the tests and the benches write (.gitignore's). */
const GENERATED = ['dist', 'dist-bench', 'data', 'coverage', 'release', 'test-output'];

function filesOf(dir) {
  const out = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...filesOf(full));
    else out.push(full);
  }
  return out;
}

export function buildTests() {
  rmSync(testBuildDir, { recursive: true, force: true });
  mkdirSync(testBuildDir);
  const sources = [];
  for (const top of compiled) {
    for (const file of filesOf(path.join(root, top))) {
      const target = path.join(testBuildDir, path.relative(root, file));
      mkdirSync(path.dirname(target), { recursive: true });
      symlinkSync(file, target);
      if (/\.tsx?$/.test(file) && !file.endsWith('.d.ts')) sources.push(file);
    }
  }
  buildSync({
    entryPoints: sources,
    outdir: testBuildDir,
    outbase: root,
    format: 'esm',
    platform: 'node',
    jsx: 'automatic',
    jsxImportSource: 'preact',
    sourcemap: 'inline',
    logLevel: 'error',
    // What tsx gives esbuild (`npm run dev`): the same code runs in the tests, with the same names,
    // and the coverage table maps it back to the same lines.
    target: `node${process.versions.node}`,
    minifyWhitespace: true,
    keepNames: true,
  });
  // Folders made after this build (dist/ by the end-to-end tiers' build, release/ by the
  // release test) are linked whether or not they exist yet.
  for (const entry of new Set([...readdirSync(root), ...GENERATED])) {
    if (compiled.includes(entry) || entry === '.test-build' || entry === '.git') continue;
    const link = path.join(testBuildDir, entry);
    if (!existsSync(link)) symlinkSync(path.join(root, entry), link);
  }
  return sources.length;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const count = buildTests();
  process.stdout.write(`compiled ${count} files into ${path.relative(root, testBuildDir)}/\n`);
}
