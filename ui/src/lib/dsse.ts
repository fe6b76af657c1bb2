// DSSE envelopes shown to a reader: each payload decoded from base64 and
// parsed, nested envelopes too — the receipts and log views show what was
// signed, not a wall of base64.

import { fromBase64 } from './statement';

/** Every DSSE envelope inside `v` with its payload decoded (not a wall of base64). */
export function decodeEnvelopes(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(decodeEnvelopes);
  if (typeof v !== 'object' || v === null) return v;
  const o = v as Record<string, unknown>;
  if (typeof o.payload === 'string' && typeof o.payloadType === 'string' && Array.isArray(o.signatures)) return envelopeView(o);
  return Object.fromEntries(Object.entries(o).map(([k, x]) => [k, decodeEnvelopes(x)]));
}

/** An approver's DSSE envelope, with its payload decoded (not a wall of base64). */
export function envelopeView(env: unknown): unknown {
  const e = env as { payload?: string; payloadType?: string; signatures?: unknown[] };
  if (!e || typeof e.payload !== 'string') return env;
  let payload: unknown = e.payload;
  try {
    payload = decodeEnvelopes(JSON.parse(new TextDecoder().decode(fromBase64(e.payload))));
  } catch {
    /* keep the base64 */
  }
  return { payloadType: e.payloadType, payload_decoded: payload, signatures: e.signatures };
}
