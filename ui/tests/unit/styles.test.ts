// The stylesheet is plain CSS: a rule never sits inside another rule. A
// missing `}` (a merge that dropped one) does not break the build — CSS
// nesting makes the following rules descendants of the unclosed one, and the
// views they style (Receipts, Overview, Connect a client) silently lost their
// layout. Regression test for that: every rule's parent is the sheet or an
// at-rule (@media, @supports, …).

import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import postcss from 'postcss';
import { describe, expect, it } from 'vitest';

const css = readFileSync(fileURLToPath(new URL('../../src/styles.css', import.meta.url)), 'utf8');

describe('styles.css', () => {
  it('regression_a_missing_brace_nests_the_following_views_styles', () => {
    const root = postcss.parse(css);
    const nested: string[] = [];
    root.walkRules((rule) => {
      if (rule.parent?.type === 'rule') nested.push(`${rule.selector} (line ${rule.source?.start?.line}) inside ${(rule.parent as postcss.Rule).selector}`);
    });
    expect(nested).toEqual([]);
    expect(root.nodes.length).toBeGreaterThan(100);
  });
});
