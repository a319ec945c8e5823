import assert from 'node:assert/strict';
import { setTimeout as pause } from 'node:timers/promises';

/**
 * Waits until `condition` holds, for something outside the test's control to end (a child
 * process, a write another connection makes): it checks at most `attempts` times, `intervalMs`
 * apart, and fails naming `what`. Work inside the app is awaited, and the app's time moved
 * with its ManualClock, rather than waited for.
 */
export async function waitUntil(
  condition: () => boolean | Promise<boolean>,
  what: string,
  { attempts = 250, intervalMs = 20 }: { attempts?: number; intervalMs?: number } = {},
): Promise<void> {
  for (let i = 0; i < attempts; i += 1) {
    if (await condition()) return;
    await pause(intervalMs);
  }
  assert.fail(`timed out waiting for ${what}`);
}

/** The promise's value, or null when it has not settled within `ms`: for "answers in time". */
export async function within<T>(promise: Promise<T>, ms: number): Promise<T | null> {
  const controller = new AbortController();
  try {
    return await Promise.race([promise, pause(ms, null, { signal: controller.signal })]);
  } finally {
    controller.abort();
  }
}
