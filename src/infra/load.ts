import { performance, type EventLoopUtilization } from 'node:perf_hooks';

/** Above this use of the event loop, or this rate of requests, a process counts as busy. */
export const BUSY_UTILIZATION = 0.5;
export const BUSY_REQUESTS_PER_SECOND = 100;

/**
 * The requests this process has begun (the HTTP layer counts each one): the measure of load that
 * CPU contention cannot hide. A process that shares its core with others waits for the CPU in
 * the poll phase, which the event loop's use counts as idle. Background work (the outbox, the
 * audit queue's writer) reads it to give way to requests. The count lives in shared memory, so
 * the outbox's thread (src/outbox-thread.ts) reads the HTTP thread's count; it wraps at 2^32,
 * which `since` allows for.
 */
export class RequestLoad {
  readonly buffer: SharedArrayBuffer;
  private readonly count: Int32Array;

  constructor(buffer: SharedArrayBuffer = new SharedArrayBuffer(4)) {
    this.buffer = buffer;
    this.count = new Int32Array(buffer);
  }

  note(): void {
    Atomics.add(this.count, 0, 1);
  }

  /** A mark to measure from. */
  get requests(): number {
    return Atomics.load(this.count, 0) >>> 0;
  }

  /** Requests begun since `mark` (a value of `requests`). */
  since(mark: number): number {
    return (this.requests - mark) >>> 0;
  }
}

/**
 * Whether requests kept the process busy since the last time it was asked: requests arriving
 * faster than BUSY_REQUESTS_PER_SECOND, or the event loop more than half used. Each caller keeps
 * its own window.
 */
export class LoadWindow {
  private start: { utilization: EventLoopUtilization; requests: number; at: number };

  constructor(private readonly load: RequestLoad) {
    this.start = { utilization: performance.eventLoopUtilization(), requests: load.requests, at: performance.now() };
  }

  busySinceLastAsked(): boolean {
    const now = performance.now();
    const utilization = performance.eventLoopUtilization();
    const seconds = Math.max((now - this.start.at) / 1000, 0.001);
    const loopUse = performance.eventLoopUtilization(utilization, this.start.utilization).utilization;
    const rate = this.load.since(this.start.requests) / seconds;
    this.start = { utilization, requests: this.load.requests, at: now };
    return loopUse > BUSY_UTILIZATION || rate > BUSY_REQUESTS_PER_SECOND;
  }
}
