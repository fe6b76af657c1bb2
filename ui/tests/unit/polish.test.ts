// Issue 46 item 5 (a new user's pass over the UI): the pure parts of the fixes.
import { describe, expect, it } from 'vitest';
import { eventLabel, tickParts, untick } from '../../src/lib/text';
import { bucketWidth, chartTheme, endOfLocalDay, legendTime, legendValue, total, xRange } from '../../src/lib/chart';
import { rejectConsequence } from '../../src/lib/effort';
import { serverRisk } from '../../src/lib/serverReview';
import type { ServerSummary } from '../../src/lib/api';

describe('gateway text: backticks as code', () => {
  it('splits `code` spans out of a gateway message, without the backticks', () => {
    expect(tickParts('MCP server `drifty` quarantined: its surface drifted')).toEqual([
      { text: 'MCP server ', code: false },
      { text: 'drifty', code: true },
      { text: ' quarantined: its surface drifted', code: false },
    ]);
    expect(tickParts('role `reader` may not call `calm__odd`').filter((p) => p.code).map((p) => p.text)).toEqual(['reader', 'calm__odd']);
  });
  it('keeps a lone backtick as text and drops none of the words', () => {
    expect(tickParts('a ` alone')).toEqual([{ text: 'a ` alone', code: false }]);
    expect(untick('Added `fresh` (human:alice); pending review')).toBe('Added fresh (human:alice); pending review');
    expect(tickParts('')).toEqual([]);
  });
});

describe('event types as words', () => {
  it('says what happened, not the wire name', () => {
    expect(eventLabel('server.quarantined')).toBe('Server quarantined');
    expect(eventLabel('plan.proposed')).toBe('New plan');
    expect(eventLabel('server.removed')).toBe('Server removed');
    expect(eventLabel('tool.blocked')).toBe('Tool blocked');
  });
  it('spells an unknown type out rather than showing its dots and underscores', () => {
    expect(eventLabel('server.something_new')).toBe('Server something new');
    expect(eventLabel('server.something_new')).not.toMatch(/[._]/);
  });
});

describe('the charts', () => {
  const H = 3_600;
  it('runs the x range past the last bucket, so the bucket now in progress has its width', () => {
    const times = [0, 6 * H, 12 * H, 18 * H];
    expect(bucketWidth(times)).toBe(6 * H);
    expect(xRange(times)).toEqual([0, 24 * H]);
  });
  it('on a span of days, runs to the end of today: today is a whole day wide, not a sliver at the edge', () => {
    // Seven days of 6-hour buckets from 17:50 six days and some ago; now is 17:50 today.
    const day = 86_400;
    const now = 10 * day + 17 * H + 50 * 60;
    const times = Array.from({ length: 28 }, (_, i) => now - 7 * day + i * 6 * H);
    const endOfToday = 11 * day;
    const [min, max] = xRange(times, { endOfToday });
    expect(max).toBe(endOfToday);
    // Today (from its midnight to the range's end) takes a seventh of the width or more.
    expect((max - 10 * day) / (max - min)).toBeGreaterThanOrEqual(1 / 7.5);
    // Before: the range ended at the last bucket's start, so today had under a tenth.
    expect((times[27] - 10 * day) / (times[27] - min)).toBeLessThan(0.1);
  });
  it('knows the end of the local day', () => {
    const now = new Date(2026, 11, 6, 17, 50).getTime();
    expect(endOfLocalDay(now)).toBe(new Date(2026, 11, 7, 0, 0).getTime() / 1000);
  });
  it('says totals in the legend when no bucket is hovered, never "--"', () => {
    expect(legendValue([1, 0, 4], null)).toBe('5 in all');
    expect(legendValue([1, 0, 4], undefined)).toBe('5 in all');
    expect(legendValue([1, 0, 4], 2)).toBe('4');
    expect(total([1, null, 2, NaN])).toBe(3);
    expect(legendTime([100, 200], null, 'last 7 days', String)).toBe('last 7 days');
    expect(legendTime([100, 200], 1, 'last 7 days', String)).toBe('200');
  });
  it('takes its grid and axis colours from the theme', () => {
    const dark: Record<string, string> = { '--border': ' #2a303c', '--muted': '#a1aab9', '--border-strong': '#3a4252' };
    expect(chartTheme((n) => dark[n] ?? '')).toEqual({ grid: '#2a303c', axis: '#a1aab9', ticks: '#3a4252' });
    expect(chartTheme(() => '').grid).toBe('#eef0f3');
  });
});

describe('what a rejection does', () => {
  it('on a trusted server says that it stops serving it now', () => {
    const t = rejectConsequence('server', 'TRUSTED')!;
    expect(t).toMatch(/trusted and served now/);
    expect(t).toMatch(/stops serving it at once/);
    expect(t).toMatch(/all of its tools/);
  });
  it('says something fitting for a pending server, a tool and a plan', () => {
    expect(rejectConsequence('server', 'PENDING')).toMatch(/Nothing of this server is served yet/);
    expect(rejectConsequence('tool')).toMatch(/no longer get this tool/);
    expect(rejectConsequence('plan')).toMatch(/does not run/);
  });
});

describe('the Welcome page shows the inbox risk of a server', () => {
  it('a quarantined server leads with its worst drift, not its (absent) first-contact risk', () => {
    const s = { name: 'drifty', status: 'QUARANTINED', worst_severity: 'critical', risk: null } as unknown as ServerSummary;
    expect(serverRisk(s)).toEqual({ risk: 'critical', label: 'Worst drift' });
  });
});
