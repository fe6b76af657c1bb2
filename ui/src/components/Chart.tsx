// A time-series chart (uPlot: small, canvas, no dependencies), sized to its
// container and rebuilt when its data or the colour scheme changes. Its height
// is fixed, so the page does not move when the data arrives. Its colours are
// the page's (light or dark); its legend shows the span's totals until the
// pointer is on a bucket; its x range ends after today (lib/chart.ts).

import { useEffect, useRef, useState } from 'preact/hooks';
import type uPlot from 'uplot';
import { chartTheme, legendTime, legendValue, xRange } from '../lib/chart';

/** uPlot and its styles, loaded with the first chart (a chunk of its own). */
const loadUPlot = () => Promise.all([import('uplot'), import('uplot/dist/uPlot.min.css')]).then(([m]) => m.default);

export interface Line {
  label: string;
  values: number[];
  color: string;
}

export const PALETTE = ['#2563eb', '#d97706', '#dc2626', '#059669', '#7c3aed', '#db2777', '#0891b2', '#65a30d'];

const DARK = '(prefers-color-scheme: dark)';

/** The colour scheme now, followed as it changes. */
function useScheme(): 'light' | 'dark' {
  const mq = typeof window !== 'undefined' && window.matchMedia ? window.matchMedia(DARK) : null;
  const [dark, setDark] = useState(() => !!mq?.matches);
  useEffect(() => {
    if (!mq) return;
    const f = () => setDark(mq.matches);
    mq.addEventListener('change', f);
    return () => mq.removeEventListener('change', f);
  }, []);
  return dark ? 'dark' : 'light';
}

function bucketTime(unix: number): string {
  try {
    return new Date(unix * 1000).toLocaleString(undefined, { month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit' });
  } catch {
    return new Date(unix * 1000).toISOString().slice(0, 16).replace('T', ' ');
  }
}

export function Chart({
  times,
  lines,
  height = 200,
  testid,
  spanLabel = 'all',
  xEnd,
}: {
  times: number[];
  lines: Line[];
  height?: number;
  testid?: string;
  /** What the time column of the legend says when no bucket is hovered ("7 days"). */
  spanLabel?: string;
  /** The x range ends no earlier than this (the end of today on a span of days). */
  xEnd?: number;
}) {
  const box = useRef<HTMLDivElement>(null);
  const scheme = useScheme();
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    let plot: uPlot | null = null;
    let ro: ResizeObserver | null = null;
    let live = true;
    const css = getComputedStyle(document.documentElement);
    const theme = chartTheme((n) => css.getPropertyValue(n));
    const axis = (size?: number): uPlot.Axis => ({
      stroke: theme.axis,
      grid: { stroke: theme.grid, width: 1 },
      ticks: { stroke: theme.ticks, width: 1 },
      ...(size ? { size } : {}),
    });
    const [xMin, xMax] = xRange(times, { endOfToday: xEnd });
    const opts: uPlot.Options = {
      width: Math.max(200, el.clientWidth),
      height,
      legend: { show: true, live: true },
      cursor: { drag: { x: false, y: false } },
      scales: { x: { time: true, range: () => [xMin, xMax] }, y: { range: (_u, _min, max) => [0, Math.max(1, max)] } },
      axes: [axis(), axis(44)],
      series: [
        { label: 'Time', value: (_u, _v, _s, idx) => legendTime(times, idx, spanLabel, bucketTime) },
        ...lines.map((l) => ({
          label: l.label,
          stroke: l.color,
          width: 2,
          fill: `${l.color}14`,
          points: { show: false },
          value: (_u: uPlot, _v: number, _s: number, idx: number | null) => legendValue(l.values, idx),
        })),
      ],
    };
    void loadUPlot().then(
      (UPlot) => {
        if (!live) return;
        const p = new UPlot(opts, [times, ...lines.map((l) => l.values)] as uPlot.AlignedData, el);
        plot = p;
        ro = new ResizeObserver(() => p.setSize({ width: Math.max(200, el.clientWidth), height }));
        ro.observe(el);
      },
      // Said, not a silent blank box (a browser whose locale `Intl` refuses
      // made the chart library fail to load).
      (e: Error) => {
        if (live) el.textContent = `The chart cannot be drawn here: ${e.message}`;
      },
    );
    return () => {
      live = false;
      ro?.disconnect();
      plot?.destroy();
    };
  }, [times, lines, height, scheme, spanLabel, xEnd]);
  return <div ref={box} class="chart" style={{ minHeight: `${height + 40}px` }} data-testid={testid} data-scheme={scheme} />;
}
