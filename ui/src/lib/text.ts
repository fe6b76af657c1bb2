// Words the gateway sends, made readable: `code` spans (its messages quote
// names in backticks) and event types as a person would say them.

/** A text with `code` spans as parts: odd indexes are code. An unpaired backtick stays text. */
export function tickParts(text: string): { text: string; code: boolean }[] {
  const parts: { text: string; code: boolean }[] = [];
  const re = /`([^`\n]+)`/g;
  let at = 0;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    if (m.index > at) parts.push({ text: text.slice(at, m.index), code: false });
    parts.push({ text: m[1], code: true });
    at = m.index + m[0].length;
  }
  if (at < text.length) parts.push({ text: text.slice(at), code: false });
  return parts;
}

/** A text with its backticks dropped (for a title attribute or a document title). */
export function untick(text: string): string {
  return tickParts(text)
    .map((p) => p.text)
    .join('');
}

const EVENT_LABEL: Record<string, string> = {
  'plan.proposed': 'New plan',
  'plan.approved': 'Plan approved',
  'plan.rejected': 'Plan rejected',
  'plan.expired': 'Plan expired',
  'plan.executing': 'Plan running',
  'plan.succeeded': 'Plan succeeded',
  'plan.halted': 'Plan halted',
  'server.pending': 'New server',
  'server.quarantined': 'Server quarantined',
  'server.drift_held': 'Tool held',
  'server.drift': 'Server drifted',
  'server.probe_drift': 'Probe outcome changed',
  'server.probe_call': 'Probe run',
  'server.approved': 'Server approved',
  'server.rejected': 'Server rejected',
  'server.requested': 'Server requested',
  'server.added': 'Server added',
  'server.removed': 'Server removed',
  'admin.action': 'Admin action',
  'tool.approved': 'Tool approved',
  'tool.blocked': 'Tool blocked',
  'standing.granted': 'Standing approval granted',
  'standing.revoked': 'Standing approval revoked',
  'tool.call': 'Tool call',
};

/** An event type as words: `server.quarantined` → "Server quarantined"; an unknown one spelled out the same way. */
export function eventLabel(type: string): string {
  if (EVENT_LABEL[type]) return EVENT_LABEL[type];
  const words = type.replace(/[._]+/g, ' ').trim();
  return words ? words[0].toUpperCase() + words.slice(1) : 'Event';
}
