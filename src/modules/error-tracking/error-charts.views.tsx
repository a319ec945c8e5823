import { toIso } from '../../infra/clock.js';
import { niceMax, type Bucket } from './charts.rules.js';

/**
 * Server-drawn SVG charts of the error pages (drawn by the server, no script): bar charts with axes and
 * a tooltip per bar (each bar's `<title>`), and the list's 24-hour sparkline.
 */

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const hourOf = (ms: number) => `${toIso(ms).slice(11, 13)}:00`;
const dayOf = (ms: number) => {
  const d = new Date(ms);
  return `${MONTHS[d.getUTCMonth()]} ${d.getUTCDate()}`;
};
const plural = (n: number) => `${n} ${n === 1 ? 'event' : 'events'}`;

const LEFT = 36;
const BOTTOM = 20;
const TOP = 8;
const PLOT_HEIGHT = 100;

/**
 * Bars per hour (`unit: 'hour'`) or per day: a y axis with 0 and the top value, an x axis with
 * a label every `labelEvery` bars, and every bar (an empty one too) a `<title>` saying its time
 * and count, so hovering any slot of the chart tells what it holds.
 */
export function BarChart({
  buckets,
  id,
  label,
  unit,
  labelEvery,
}: {
  buckets: readonly Bucket[];
  id: string;
  label: string;
  unit: 'hour' | 'day';
  labelEvery: number;
}) {
  const slot = unit === 'hour' ? 24 : 18;
  const width = LEFT + buckets.length * slot + 4;
  const height = TOP + PLOT_HEIGHT + BOTTOM;
  const top = niceMax(Math.max(0, ...buckets.map((b) => b.count)));
  const total = buckets.reduce((sum, b) => sum + b.count, 0);
  const base = TOP + PLOT_HEIGHT;
  const name =
    unit === 'hour' ? (at: number) => `${toIso(at).slice(0, 10)} ${hourOf(at)} UTC` : (at: number) => `${toIso(at).slice(0, 10)}`;
  return (
    <svg
      id={id}
      class="et-chart"
      role="img"
      aria-label={`${label}: ${plural(total)}`}
      viewBox={`0 0 ${width} ${height}`}
      width={width}
      height={height}
      data-total={String(total)}
    >
      <line class="et-axis" x1={LEFT} y1={TOP} x2={LEFT} y2={base} />
      <line class="et-axis" x1={LEFT} y1={base + 0.5} x2={width} y2={base + 0.5} />
      <line class="et-grid" x1={LEFT} y1={TOP + 0.5} x2={width} y2={TOP + 0.5} />
      <text class="et-tick" x={LEFT - 4} y={TOP + 4} text-anchor="end">
        {String(top)}
      </text>
      <text class="et-tick" x={LEFT - 4} y={base} text-anchor="end">
        0
      </text>
      {buckets.map((b, i) => {
        const x = LEFT + i * slot;
        const h = b.count === 0 ? 0 : Math.max(2, Math.round((b.count / top) * PLOT_HEIGHT));
        return (
          <g class="et-bar" data-count={String(b.count)}>
            <title>{`${name(b.at)}: ${plural(b.count)}`}</title>
            <rect class="et-slot" x={x} y={TOP} width={slot} height={PLOT_HEIGHT} />
            {h > 0 ? <rect class="et-fill" x={x + 2} y={base - h} width={slot - 4} height={h} /> : null}
            {i % labelEvery === 0 ? (
              <text class="et-tick" x={x + slot / 2} y={height - 5} text-anchor="middle">
                {unit === 'hour' ? hourOf(b.at) : dayOf(b.at)}
              </text>
            ) : null}
          </g>
        );
      })}
    </svg>
  );
}

/** A row's last 24 hours in 24 thin bars; its title says the total. */
export function Sparkline({ buckets }: { buckets: readonly Bucket[] }) {
  const width = buckets.length * 4;
  const height = 24;
  const max = Math.max(1, ...buckets.map((b) => b.count));
  const total = buckets.reduce((sum, b) => sum + b.count, 0);
  return (
    <svg
      class="et-spark"
      role="img"
      aria-label={`${plural(total)} in the last 24 hours`}
      viewBox={`0 0 ${width} ${height}`}
      width={width}
      height={height}
    >
      <title>{`${plural(total)} in the last 24 hours`}</title>
      <line class="et-axis" x1="0" y1={height - 0.5} x2={width} y2={height - 0.5} />
      {buckets.map((b, i) =>
        b.count === 0 ? null : (
          <rect
            x={i * 4}
            y={height - Math.max(2, Math.round((b.count / max) * height))}
            width="3"
            height={Math.max(2, Math.round((b.count / max) * height))}
          />
        ),
      )}
    </svg>
  );
}
