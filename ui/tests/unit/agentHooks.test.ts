// Settings' "Guard a coding agent's own tools" (issue 40): the diff's size as the
// row shows it, and the command a browser tells the machine's owner to run.
import { describe, expect, it } from 'vitest';
import { diffStat, hooksCommand, isHookPlan } from '../../src/lib/agentHooks';

describe('agent hooks', () => {
  it('counts added and removed lines, not the file headers', () => {
    const diff = [
      '--- /home/u/.claude/settings.json',
      '+++ /home/u/.claude/settings.json',
      '@@ -1,3 +1,12 @@',
      ' {',
      '-  "model": "opus"',
      '+  "model": "opus",',
      '+  "hooks": {',
      '+    "PreToolUse": []',
      '+  }',
      ' }',
      '',
    ].join('\n');
    expect(diffStat(diff)).toEqual({ added: 4, removed: 1 });
    expect(diffStat('')).toEqual({ added: 0, removed: 0 });
  });

  it('names the exact command the owner runs instead', () => {
    expect(hooksCommand('claude-code', 'install')).toBe('interlock hooks install claude-code --yes');
    expect(hooksCommand('cursor', 'install', 'ask')).toBe('interlock hooks install cursor --yes --on-unreachable ask');
    expect(hooksCommand('codex', 'undo', 'ask')).toBe('interlock hooks install codex --undo');
  });

  it('tells a plan from a settings file it could not read', () => {
    expect(isHookPlan({ changes_anything: true, diff: '' })).toBe(true);
    expect(isHookPlan({ error: '/h/.gemini/settings.json is not settings Interlock can edit' })).toBe(false);
  });
});
