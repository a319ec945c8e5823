/** Counts of events per hour or per day, as the error pages chart them. */

const HOUR = 3_600_000;

export interface Bucket {
  /** The start of the hour or day (epoch ms, UTC). */
  at: number;
  count: number;
}

/** Hourly buckets summed per UTC day, in order (the error page's 30-day chart). */
export function dailyOf(hourly: readonly Bucket[]): Bucket[] {
  const byDay = new Map<number, number>();
  for (const b of hourly) {
    const day = b.at - (b.at % (24 * HOUR));
    byDay.set(day, (byDay.get(day) ?? 0) + b.count);
  }
  return [...byDay].map(([at, count]) => ({ at, count }));
}

/** The y axis's top: the largest count rounded up to a number that reads well (1, 2, 5 × 10ⁿ). */
export function niceMax(max: number): number {
  if (max <= 1) return 1;
  const power = 10 ** Math.floor(Math.log10(max));
  for (const step of [1, 2, 5, 10]) if (step * power >= max) return step * power;
  return 10 * power;
}
