// RFC 8785 JSON Canonicalization Scheme (JCS).
//
// Object keys are sorted by their UTF-16 code units (JavaScript's default string
// order), there is no whitespace, and strings and numbers are written exactly as
// ECMAScript's JSON.stringify writes them (which is what RFC 8785 prescribes).
// The result is UTF-8 encoded by the caller (`canonicalBytes`).

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

export class JcsError extends Error {}

export function canonicalize(value: unknown): string {
  if (value === null) return 'null';
  switch (typeof value) {
    case 'boolean':
      return value ? 'true' : 'false';
    case 'number':
      if (!Number.isFinite(value)) throw new JcsError(`not representable in JSON: ${value}`);
      // -0 is written 0; every other double exactly as ES2015 Number.toString.
      return JSON.stringify(value);
    case 'string':
      assertWellFormed(value);
      return JSON.stringify(value);
    case 'object': {
      if (Array.isArray(value)) return '[' + value.map(canonicalize).join(',') + ']';
      const obj = value as Record<string, unknown>;
      const keys = Object.keys(obj).filter((k) => obj[k] !== undefined);
      keys.sort(compareUtf16);
      return (
        '{' +
        keys.map((k) => (assertWellFormed(k), JSON.stringify(k) + ':' + canonicalize(obj[k]))).join(',') +
        '}'
      );
    }
    default:
      throw new JcsError(`cannot canonicalize a ${typeof value}`);
  }
}

/** The canonical UTF-8 bytes. */
export function canonicalBytes(value: unknown): Uint8Array<ArrayBuffer> {
  return new TextEncoder().encode(canonicalize(value));
}

function compareUtf16(a: string, b: string): number {
  // `<` on strings compares UTF-16 code units, as RFC 8785 §3.2.3 requires.
  return a < b ? -1 : a > b ? 1 : 0;
}

function assertWellFormed(s: string): void {
  // A lone surrogate is not Unicode text (the Rust side refuses it too).
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      const d = s.charCodeAt(i + 1);
      if (!(d >= 0xdc00 && d <= 0xdfff)) throw new JcsError('lone surrogate in string');
      i++;
    } else if (c >= 0xdc00 && c <= 0xdfff) {
      throw new JcsError('lone surrogate in string');
    }
  }
}
