// Ed25519 public keys the browser refuses before it verifies anything with them.
//
// A public key of small order (the identity, or a point of order 2, 4 or 8) makes
// "valid" signatures over any message easy to forge, and WebCrypto's Ed25519
// verify does not refuse it. The gateway's verifier (ed25519-dalek's
// `verify_strict`) refuses such keys; this is the same refusal in the browser
// (issue 43), by libsodium's rule (`has_small_order`): the encodings of the
// small-order points, canonical or not (y = p, p + 1), compared with the sign
// bit cleared.

const SMALL_ORDER: string[] = [
  // 0 (order 4)
  '0000000000000000000000000000000000000000000000000000000000000000',
  // 1 (order 1: the identity)
  '0100000000000000000000000000000000000000000000000000000000000000',
  // order 8
  '26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05',
  // order 8
  'c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a',
  // p - 1 (order 2)
  'ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f',
  // p, a non-canonical 0 (order 4)
  'edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f',
  // p + 1, a non-canonical 1 (order 1)
  'eeffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f',
];

function hex(b: Uint8Array): string {
  return Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
}

/** Whether a 32-byte Ed25519 public key encodes a point of small order. */
export function hasSmallOrder(publicKey: Uint8Array): boolean {
  if (publicKey.length !== 32) return false;
  const cleared = publicKey.slice();
  cleared[31] &= 0x7f;
  return SMALL_ORDER.includes(hex(cleared));
}
