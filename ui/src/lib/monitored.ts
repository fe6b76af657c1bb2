// Monitor-level drift (issue 18, bulk decisions): a server still TRUSTED and
// served whose listed surface moved from its approved one only in ways the
// drift policy records (nothing held, nothing quarantined). Accepting it signs
// the listed surface as the new baseline, server by server, each at the hash
// shown; a reviewer can do that for several at once.
import type { ServerSummary } from './api';

export function monitoredDrift(servers: ServerSummary[]): ServerSummary[] {
  return servers.filter(
    (s) =>
      s.status === 'TRUSTED' &&
      !!s.observed_hash &&
      !!s.baseline_hash &&
      s.observed_hash !== s.baseline_hash &&
      !(s.blocked_tools?.length ?? 0) &&
      !(s.blocked_content?.length ?? 0),
  );
}
