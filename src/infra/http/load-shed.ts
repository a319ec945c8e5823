import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';

const RESOLUTION_MS = 10;
const SAMPLE_INTERVAL_MS = 1000;

/**
 * Says whether the event loop has fallen behind: the mean delay over the last sampling
 * window above the threshold. Requests read a boolean; the measuring happens on a timer,
 * so the check costs nothing per request. A threshold of 0 turns shedding off.
 */
export class LoadShedder {
  overloaded = false;
  private readonly histogram: IntervalHistogram | null;
  private readonly timer: NodeJS.Timeout | null;

  constructor(private readonly thresholdMs: number) {
    if (thresholdMs <= 0) {
      this.histogram = null;
      this.timer = null;
      return;
    }
    this.histogram = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
    this.histogram.enable();
    this.timer = setInterval(() => this.sample(), SAMPLE_INTERVAL_MS);
    this.timer.unref();
  }

  private sample(): void {
    const histogram = this.histogram;
    if (!histogram) return;
    const delayMs = histogram.mean / 1e6 - RESOLUTION_MS;
    histogram.reset();
    // A window with no loop turn at all (synchronous start-up work such as schema
    // compilation) has no mean; it says nothing about load now.
    this.overloaded = Number.isFinite(delayMs) && delayMs > this.thresholdMs;
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.histogram?.disable();
  }
}
