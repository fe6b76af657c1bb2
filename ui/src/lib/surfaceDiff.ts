// A reviewer-readable diff of two MCP tool surfaces: each changed tool rendered as
// text (description wrapped, schemas pretty-printed with sorted keys, every line
// hard-wrapped to the column width the view has) so that diff2html's side-by-side
// rows line up and no text (a poisoned parameter description, say) hides beyond
// the right edge.

import { createTwoFilesPatch } from 'diff';
import { canonicalize } from './jcs';
import type { Surface, Tool } from './api';

function sortKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (v && typeof v === 'object') {
    const o = v as Record<string, unknown>;
    return Object.fromEntries(
      Object.keys(o)
        .sort()
        .map((k) => [k, sortKeys(o[k])]),
    );
  }
  return v;
}

/** Word-wraps text at `width` columns, keeping the author's own line breaks;
 * words longer than a line are cut. */
export function wrap(text: string, width = 56): string[] {
  const out: string[] = [];
  for (const para of text.split('\n')) {
    let line = '';
    for (let word of para.split(/ +/)) {
      while (word.length > width) {
        if (line) out.push(line);
        line = '';
        out.push(word.slice(0, width));
        word = word.slice(width);
      }
      if (line && line.length + 1 + word.length > width) {
        out.push(line);
        line = word;
      } else {
        line = line ? `${line} ${word}` : word;
      }
    }
    out.push(line);
  }
  return out;
}

/** Hard-wraps one line of pretty JSON, continuing at its indentation + 4. */
function wrapLine(line: string, width: number): string[] {
  if (line.length <= width) return [line];
  const lead = line.length - line.trimStart().length;
  const cont = ' '.repeat(Math.min(lead + 4, Math.floor(width / 2)));
  const [first, ...rest] = wrap(line.trimStart(), width - cont.length);
  return [' '.repeat(lead) + first, ...rest.map((r) => cont + r)];
}

const ORDER = ['title', 'description', 'inputSchema', 'annotations', 'outputSchema'];

export function toolText(t: Tool | undefined, width = 56): string {
  if (!t) return '';
  const lines: string[] = [];
  const keys = Object.keys(t).filter((k) => k !== 'name');
  keys.sort((a, b) => {
    const ia = ORDER.indexOf(a);
    const ib = ORDER.indexOf(b);
    return (ia < 0 ? 99 : ia) - (ib < 0 ? 99 : ib) || (a < b ? -1 : a > b ? 1 : 0);
  });
  for (const k of keys) {
    const v = t[k];
    lines.push(`${k}:`);
    if (typeof v === 'string') lines.push(...wrap(v, width - 2).map((l) => `  ${l}`));
    else
      lines.push(
        ...JSON.stringify(sortKeys(v), null, 2)
          .split('\n')
          .flatMap((l) => wrapLine(`  ${l}`, width)),
      );
  }
  return lines.join('\n') + '\n';
}

function same(a: unknown, b: unknown): boolean {
  return canonicalize(a ?? null) === canonicalize(b ?? null);
}

export interface SurfaceDiff {
  /** A unified diff of every changed tool (and the instructions), for diff2html. */
  patch: string;
  changed: string[];
  unchanged: string[];
}

export function surfaceDiff(baseline: Surface | null, observed: Surface | null, width = 56): SurfaceDiff {
  const b = new Map((baseline?.tools ?? []).map((t) => [t.name, t]));
  const o = new Map((observed?.tools ?? []).map((t) => [t.name, t]));
  const names = [...new Set([...o.keys(), ...b.keys()])].sort();
  const changed: string[] = [];
  const unchanged: string[] = [];
  let patch = '';
  const add = (name: string, before: string, after: string) => {
    patch += createTwoFilesPatch(name, name, before, after, undefined, undefined, { context: 1000 }).replace(
      /^Index: .*\n=+\n/,
      '',
    );
  };
  if (!same(baseline?.instructions, observed?.instructions)) {
    changed.push('(instructions)');
    add(
      'server instructions',
      baseline?.instructions ? wrap(baseline.instructions, width).join('\n') + '\n' : '',
      observed?.instructions ? wrap(observed.instructions, width).join('\n') + '\n' : '',
    );
  }
  for (const n of names) {
    if (same(b.get(n), o.get(n))) {
      unchanged.push(n);
      continue;
    }
    changed.push(n);
    add(`tool ${n}`, toolText(b.get(n), width), toolText(o.get(n), width));
  }
  return { patch, changed, unchanged };
}
