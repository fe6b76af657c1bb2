import { describe, expect, it } from 'vitest';
import { ago } from '../../src/lib/hooks';

describe('relative times', () => {
  const now = 1_800_000_000;
  it('reads the past as "… ago"', () => {
    expect(ago(now - 10, now)).toBe('just now');
    expect(ago(now - 300, now)).toBe('5m ago');
    expect(ago(now - 7200, now)).toBe('2h ago');
    expect(ago(now - 3 * 86400, now)).toBe('3d ago');
  });
  it('reads the future (an expiry) as "in …"', () => {
    expect(ago(now + 20, now)).toBe('just now');
    expect(ago(now + 1800, now)).toBe('in 30m');
    expect(ago(now + 2 * 3600, now)).toBe('in 2h');
    expect(ago(now + 5 * 86400, now)).toBe('in 5d');
    // Rounding never shows "60m" or "24h".
    expect(ago(now + 3599, now)).toBe('in 1h');
    expect(ago(now - 86399, now)).toBe('1d ago');
  });
  it('shows a date beyond two weeks, and nothing for no time', () => {
    expect(ago(now - 30 * 86400, now)).toMatch(/\d/);
    expect(ago(null, now)).toBe('');
  });
});
