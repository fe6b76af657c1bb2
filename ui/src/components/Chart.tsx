// A time-series chart (uPlot: small, canvas, no dependencies), sized to its
// container and rebuilt when its data changes. Its height is fixed, so the
// page does not move when the data arrives.

import { useEffect, useRef } from 'preact/hooks';
import type uPlot from 'uplot';

/** uPlot and its styles, loaded with the first chart (a chunk of its own). */
const loadUPlot = () => Promise.all([import('uplot'), import('uplot/dist/uPlot.min.css')]).then(([m]) => m.default);

export interface Line {
  label: string;
  values: number[];
  color: string;
}

export const PALETTE = ['#2563eb', '#d97706', '#dc2626', '#059669', '#7c3aed', '#db2777', '#0891b2', '#65a30d'];

export function Chart({ times, lines, height = 200, testid }: { times: number[]; lines: Line[]; height?: number; testid?: string }) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    let plot: uPlot | null = null;
    let ro: ResizeObserver | null = null;
    let live = true;
    const opts: uPlot.Options = {
      width: Math.max(200, el.clientWidth),
      height,
      legend: { show: true },
      cursor: { drag: { x: false, y: false } },
      scales: { x: { time: true }, y: { range: (_u, _min, max) => [0, Math.max(1, max)] } },
      axes: [{ stroke: '#6b7280', grid: { stroke: '#eef0f3' } }, { stroke: '#6b7280', grid: { stroke: '#eef0f3' }, size: 44 }],
      series: [{}, ...lines.map((l) => ({ label: l.label, stroke: l.color, width: 2, fill: `${l.color}14`, points: { show: false } }))],
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
  }, [times, lines, height]);
  return <div ref={box} class="chart" style={{ minHeight: `${height + 40}px` }} data-testid={testid} />;
}
