import type { ChildProcess } from 'node:child_process';

/**
 * The first JSON line a bench child prints on stdout: a server's `{"port": …}` when it listens,
 * or the load generator's result. Rejects when the child exits first or stays silent too long.
 */
export function firstLine(child: ChildProcess, timeoutMs = 120_000): Promise<string> {
  return new Promise((resolve, reject) => {
    let buffer = '';
    const timer = setTimeout(() => reject(new Error('no answer from child in time')), timeoutMs);
    child.stdout?.on('data', (chunk: Buffer) => {
      buffer += chunk.toString();
      const line = buffer.split('\n').find((l) => l.startsWith('{'));
      if (line && buffer.includes('\n')) {
        clearTimeout(timer);
        resolve(line);
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`child exited with ${code}`));
    });
  });
}

/** Calls `onLine` once, when the child prints `line` on a line of its own on stdout. */
export function onceLine(child: ChildProcess, line: string, onLine: () => void): void {
  let buffer = '';
  const listen = (chunk: Buffer) => {
    buffer += chunk.toString();
    if (!buffer.split('\n').includes(line)) return;
    child.stdout?.off('data', listen);
    onLine();
  };
  child.stdout?.on('data', listen);
}
