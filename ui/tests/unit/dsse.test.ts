// Envelopes shown decoded: a nested approver envelope inside a signed leaf's
// payload comes out as JSON, and what is not an envelope is left alone.
import { describe, expect, it } from 'vitest';
import { decodeEnvelopes } from '../../src/lib/dsse';
import { toBase64, utf8 } from '../../src/lib/statement';

const b64 = (v: unknown) => toBase64(utf8(JSON.stringify(v)));

describe('decodeEnvelopes', () => {
  it('decodes nested payloads and keeps the signatures', () => {
    const inner = { payloadType: 'application/vnd.interlock.approval+json', payload: b64({ decision: 'approve' }), signatures: [{ keyid: 'k', sig: 's' }] };
    const leaf = { payloadType: 'application/vnd.in-toto+json', payload: b64({ predicate: { statement: inner } }), signatures: [{ keyid: 'log', sig: 'x' }] };
    expect(decodeEnvelopes({ entry: leaf })).toEqual({
      entry: {
        payloadType: 'application/vnd.in-toto+json',
        payload_decoded: { predicate: { statement: { payloadType: inner.payloadType, payload_decoded: { decision: 'approve' }, signatures: inner.signatures } } },
        signatures: leaf.signatures,
      },
    });
  });

  it('leaves other objects and a payload that is not JSON as they are', () => {
    expect(decodeEnvelopes({ payload: 'x', other: [1, 'a'] })).toEqual({ payload: 'x', other: [1, 'a'] });
    const notJson = { payloadType: 't', payload: toBase64(utf8('not json')), signatures: [] };
    expect(decodeEnvelopes(notJson)).toEqual({ payloadType: 't', payload_decoded: notJson.payload, signatures: [] });
  });
});
