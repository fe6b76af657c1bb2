// The overview charts' pure parts (unit-tested): the x range, what the legend
// says when the pointer is not on a chart, and the theme's colours.

/** One bucket's width: the step between bucket starts (a lone bucket: `fallback`). */
export function bucketWidth(times: number[], fallback = 3_600): number {
  return times.length > 1 ? times[times.length - 1] - times[times.length - 2] : fallback;
}

/**
 * The x range: from the first bucket's start to the end of the last bucket
 * (each point is its bucket's start, so the last bucket — now — has room to
 * its right), and on a span of days to the end of today at least, so today
 * reads as a day like the others instead of a sliver at the right edge.
 */
export function xRange(times: number[], opts: { bucket?: number; endOfToday?: number } = {}): [number, number] {
  if (times.length === 0) return [0, 1];
  const bucket = opts.bucket ?? bucketWidth(times);
  const first = times[0];
  let end = times[times.length - 1] + bucket;
  if (opts.endOfToday !== undefined && opts.endOfToday > end) end = opts.endOfToday;
  return [first, Math.max(end, first + 1)];
}

/** The end of the local day `now` falls in, in Unix seconds. */
export function endOfLocalDay(nowMs = Date.now()): number {
  const d = new Date(nowMs);
  d.setHours(24, 0, 0, 0);
  return Math.floor(d.getTime() / 1000);
}

export function total(values: (number | null | undefined)[]): number {
  return values.reduce<number>((s, v) => s + (typeof v === 'number' && Number.isFinite(v) ? v : 0), 0);
}

/**
 * A series' legend value: the hovered bucket's count, and when the pointer is
 * not on the chart (`idx` null) the span's total, never "--".
 */
export function legendValue(values: (number | null | undefined)[], idx: number | null | undefined): string {
  if (idx === null || idx === undefined) return `${total(values)} in all`;
  const v = values[idx];
  return typeof v === 'number' ? String(v) : '0';
}

/** The time column of the legend: the hovered bucket's start, else the span it covers. */
export function legendTime(times: number[], idx: number | null | undefined, spanLabel: string, fmt: (unix: number) => string): string {
  if (idx === null || idx === undefined || times[idx] === undefined) return spanLabel;
  return fmt(times[idx]);
}

/** The chart's colours from the page's CSS variables (light or dark), with fallbacks. */
export interface ChartTheme {
  axis: string;
  grid: string;
  ticks: string;
}

export function chartTheme(read: (name: string) => string): ChartTheme {
  const v = (name: string, fallback: string) => read(name).trim() || fallback;
  return { axis: v('--muted', '#6b7280'), grid: v('--border', '#eef0f3'), ticks: v('--border-strong', '#c5ccd6') };
}
