// RFC 6962 / RFC 9162 inclusion proofs, verified in the browser with WebCrypto
// SHA-256: a log entry's leaf is in the tree whose root the log key signed.
// Mirrors crates/interlock-merkle (leaf = SHA-256(0x00 ‖ data), node =
// SHA-256(0x01 ‖ left ‖ right)); checked against the same RFC 6962 vectors.

async function sha256(parts: Uint8Array[]): Promise<Uint8Array> {
  const n = parts.reduce((a, p) => a + p.length, 0);
  const buf = new Uint8Array(n);
  let o = 0;
  for (const p of parts) {
    buf.set(p, o);
    o += p.length;
  }
  return new Uint8Array(await crypto.subtle.digest('SHA-256', buf as BufferSource));
}

export function leafHash(data: Uint8Array): Promise<Uint8Array> {
  return sha256([new Uint8Array([0]), data]);
}

function nodeHash(left: Uint8Array, right: Uint8Array): Promise<Uint8Array> {
  return sha256([new Uint8Array([1]), left, right]);
}

function equal(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

/**
 * Whether `leaf` (a leaf hash) is at `index` in the tree of `size` leaves with
 * `root`, by RFC 9162 §2.1.3.2. Sizes are JS numbers: safe up to 2^53.
 */
export async function verifyInclusion(
  index: number,
  size: number,
  leaf: Uint8Array,
  proof: Uint8Array[],
  root: Uint8Array,
): Promise<boolean> {
  if (!Number.isSafeInteger(index) || !Number.isSafeInteger(size) || index < 0 || index >= size) return false;
  if (leaf.length !== 32 || root.length !== 32 || proof.some((p) => p.length !== 32)) return false;
  let fn = index;
  let sn = size - 1;
  let r = leaf;
  for (const p of proof) {
    if (sn === 0) return false;
    if (fn % 2 === 1 || fn === sn) {
      r = await nodeHash(p, r);
      if (fn % 2 === 0) {
        while (fn % 2 === 0 && fn !== 0) {
          fn = Math.floor(fn / 2);
          sn = Math.floor(sn / 2);
        }
      }
    } else {
      r = await nodeHash(r, p);
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  return sn === 0 && equal(r, root);
}
