// Diffs rendered by diff2html (loaded on demand, so the inbox stays light).
import { useEffect, useRef, useState } from 'preact/hooks';
import 'diff2html/bundles/css/diff2html.min.css';
import { isNarrow } from '../lib/narrow';

export type DiffLayout = 'side-by-side' | 'line-by-line';

const LAYOUT_KEY = 'interlock.diffLayout';

/** The reviewer's choice; without one, unified on a narrow window (two columns
 * of 170 px show little of either side), side by side otherwise. */
function initialLayout(): DiffLayout {
  const chosen = localStorage.getItem(LAYOUT_KEY) as DiffLayout | null;
  if (chosen) return chosen;
  return isNarrow() ? 'line-by-line' : 'side-by-side';
}

export function useDiffLayout(): [DiffLayout, (l: DiffLayout) => void] {
  const [l, setL] = useState<DiffLayout>(initialLayout);
  return [
    l,
    (n) => {
      localStorage.setItem(LAYOUT_KEY, n);
      setL(n);
    },
  ];
}

export function LayoutToggle({ layout, set }: { layout: DiffLayout; set: (l: DiffLayout) => void }) {
  return (
    <span class="diff-toggle" role="group" aria-label="Diff layout">
      <button class={layout === 'side-by-side' ? 'on' : ''} onClick={() => set('side-by-side')}>
        Side by side
      </button>
      <button class={layout === 'line-by-line' ? 'on' : ''} onClick={() => set('line-by-line')}>
        Unified
      </button>
    </span>
  );
}

export function DiffView({ diff, layout, minHeight }: { diff: string; layout: DiffLayout; minHeight?: number }) {
  const ref = useRef<HTMLDivElement>(null);
  const [ready, setReady] = useState(false);
  useEffect(() => {
    let live = true;
    void import('diff2html').then(({ html }) => {
      if (!live || !ref.current) return;
      ref.current.innerHTML = html(diff, {
        outputFormat: layout,
        drawFileList: false,
        matching: 'lines',
        diffStyle: 'word',
        colorScheme: 'auto' as never,
      });
      setReady(true);
    });
    return () => {
      live = false;
    };
  }, [diff, layout]);
  return (
    <div class="diff-wrap" style={{ minHeight: ready ? undefined : `${minHeight ?? 120}px` }}>
      <div ref={ref} data-testid="diff" />
    </div>
  );
}
