// Compiles src/ to dist/ with tsc. With --if-stale it does nothing when dist/ is newer
// than every source file, so `npm start` is quick after the first run.
import { spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const marker = path.join(root, 'dist', 'main.js');

function newestSource(dir) {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestSource(full) : statSync(full).mtimeMs);
  }
  return newest;
}

// A release (scripts/release.mjs) ships dist/ without src/ or tsc: there is nothing to build.
if (process.argv.includes('--if-stale') && !existsSync(path.join(root, 'src')) && existsSync(marker)) process.exit(0);

const stale =
  !existsSync(marker) ||
  !existsSync(path.join(root, 'dist', 'cli.js')) ||
  newestSource(path.join(root, 'src')) > statSync(marker).mtimeMs ||
  statSync(path.join(root, 'package.json')).mtimeMs > statSync(marker).mtimeMs;
if (process.argv.includes('--if-stale') && !stale) process.exit(0);

const tsc = path.join(root, 'node_modules', 'typescript', 'bin', 'tsc');
const result = spawnSync(process.execPath, [tsc, '-p', path.join(root, 'tsconfig.build.json')], { stdio: 'inherit' });
if (result.status !== 0) process.exit(result.status ?? 1);
// Files the server reads at run time besides the compiled code.
copyFileSync(path.join(root, 'src', 'web', 'basalt.css'), path.join(root, 'dist', 'web', 'basalt.css'));
copyFileSync(path.join(root, 'src', 'web', 'basalt.js'), path.join(root, 'dist', 'web', 'basalt.js'));
// The SQLite checkpoint thread's code, which tsc does not emit (plain CommonJS, infra/db/checkpointer.ts).
copyFileSync(
  path.join(root, 'src', 'infra', 'db', 'checkpointer.worker.cjs'),
  path.join(root, 'dist', 'infra', 'db', 'checkpointer.worker.cjs'),
);
// The SMTP thread's code, the same kind of file (infra/mail/smtp-worker.ts).
copyFileSync(path.join(root, 'src', 'infra', 'mail', 'smtp.worker.cjs'), path.join(root, 'dist', 'infra', 'mail', 'smtp.worker.cjs'));
// `basalt` (package.json bin) runs as a program: tsc keeps its shebang but not an executable mode.
chmodSync(path.join(root, 'dist', 'cli.js'), 0o755);
