import { describe, expect, it } from 'vitest';
import type { ServerSummary } from '../../src/lib/api';
import { monitoredDrift } from '../../src/lib/monitored';

const s = (name: string, extra: Partial<ServerSummary>): ServerSummary =>
  ({ name, status: 'TRUSTED', configured: true, baseline_hash: 'sha256:a', observed_hash: 'sha256:b', ...extra }) as ServerSummary;

describe('monitor-level drift', () => {
  it('is a trusted server whose listed surface moved with nothing held', () => {
    const list = [
      s('moved', {}),
      s('same', { observed_hash: 'sha256:a' }),
      s('held-tool', { blocked_tools: [{ tool: 'greet' } as never] }),
      s('held-prompt', { blocked_content: [{ key: 'p' } as never] }),
      s('quarantined', { status: 'QUARANTINED' }),
      s('pending', { status: 'PENDING', baseline_hash: null }),
    ];
    expect(monitoredDrift(list).map((x) => x.name)).toEqual(['moved']);
  });
});
