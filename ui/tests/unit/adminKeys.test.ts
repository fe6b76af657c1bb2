// A key's settings on the LLM proxy (issue 42) as the admin form sends and the key's row
// says them: empty fields are no setting, the topics and length the form does not show are
// kept, and a row says in words what the key's settings do.
import { describe, expect, it } from 'vitest';
import { llmLimitsValue, llmPolicyValue, llmSummary } from '../../src/lib/adminKeys';

describe('LLM key settings', () => {
  it('makes limits from the form, and none from empty fields', () => {
    expect(llmLimitsValue('', null, null)).toBeNull();
    expect(llmLimitsValue(' gpt-4o-mini, claude-haiku ,gpt-4o-mini', 30, null)).toEqual({
      models: ['gpt-4o-mini', 'claude-haiku'],
      rate_per_minute: 30,
      monthly_quota: null,
    });
  });

  it('keeps what the form does not show and clears what says nothing', () => {
    const was = {
      blocked_keywords: ['osprey'],
      blocked_topics: { payroll: ['salary band'] },
      max_chars: 5000,
      fail_mode: null,
      on_hit: null,
      keep_prompt_text: false,
    };
    expect(llmPolicyValue(was, { keywords: 'osprey, falcon', failMode: 'fail_open_safe', onHit: 'hold', keepText: false })).toEqual({
      blocked_keywords: ['osprey', 'falcon'],
      blocked_topics: { payroll: ['salary band'] },
      max_chars: 5000,
      fail_mode: 'fail_open_safe',
      on_hit: 'hold',
      keep_prompt_text: false,
    });
    expect(llmPolicyValue(null, { keywords: ' ', failMode: '', onHit: '', keepText: false })).toBeNull();
  });

  it('says what a key does in one line', () => {
    expect(
      llmSummary({
        rate_per_minute: null,
        monthly_quota: null,
        max_response_bytes: null,
        max_array_items: null,
        response_policy: null,
        llm_limits: { models: ['gpt-4o-mini'], rate_per_minute: 30, monthly_quota: null },
        llm_policy: { blocked_keywords: ['a'], blocked_topics: {}, max_chars: null, fail_mode: 'fail_open', on_hit: 'hold', keep_prompt_text: false },
      }),
    ).toBe('gpt-4o-mini only · 30/min · holds what the scan stops · fail open · 1 blocked word');
    expect(llmSummary({ rate_per_minute: null, monthly_quota: null, max_response_bytes: null, max_array_items: null, response_policy: null })).toBe('');
  });
});
