// `npm run release [-- --out DIR] [--if-stale]`: builds dist/ and packs what a production install
// needs into release/basalt-<version>.tgz (or DIR): dist/, package.json, package-lock.json, README.md,
// CHANGELOG.md, docs/ and scripts/build.mjs (which `npm start` calls, and which does nothing
// without src/). It installs with `npm ci --omit=dev` and runs with `npx basalt serve`
// (docs/operations.md "Installing a release").
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const outIndex = process.argv.indexOf('--out');
const outDir = path.resolve(outIndex > 0 ? (process.argv[outIndex + 1] ?? '') : path.join(root, 'release'));
const { version } = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8'));

function run(command, args, options = {}) {
  const result = spawnSync(command, args, { stdio: 'inherit', ...options });
  if (result.status !== 0) {
    process.stderr.write(`release: ${command} ${args.join(' ')} failed\n`);
    process.exit(result.status ?? 1);
  }
}

// A full build, so a release never ships a dist/ older than its sources; --if-stale (tests, which
// have just built) keeps a dist/ newer than every source.
const buildArgs = process.argv.includes('--if-stale') ? ['--if-stale'] : [];
run(process.execPath, [path.join(root, 'scripts', 'build.mjs'), ...buildArgs], { cwd: root });

const name = `basalt-${version}`;
const staging = mkdtempSync(path.join(os.tmpdir(), 'basalt-release-'));
const top = path.join(staging, name);
mkdirSync(path.join(top, 'scripts'), { recursive: true });
for (const entry of ['dist', 'package.json', 'package-lock.json', 'README.md', 'CHANGELOG.md', 'docs']) {
  if (!existsSync(path.join(root, entry))) continue;
  // Source maps and declaration files are not shipped; tests never are (they are not in dist/).
  cpSync(path.join(root, entry), path.join(top, entry), {
    recursive: true,
    filter: (source) => !/\.(d\.ts|map)$/.test(source),
  });
}
cpSync(path.join(root, 'scripts', 'build.mjs'), path.join(top, 'scripts', 'build.mjs'));

mkdirSync(outDir, { recursive: true });
const tarball = path.join(outDir, `${name}.tgz`);
run('tar', ['-czf', tarball, '-C', staging, name]);
rmSync(staging, { recursive: true, force: true });
process.stdout.write(`${tarball}\n`);
