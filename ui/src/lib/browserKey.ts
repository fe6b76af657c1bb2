// The browser's approver key: a WebCrypto Ed25519 key pair whose private half is
// non-extractable, kept in IndexedDB (structured clone of CryptoKey objects). Only
// the public key ever leaves: an admin registers it once with
// `interlock keys register --public-key <hex> --identity human:<name>`.

import { keyIdOf, toHex, fingerprint } from './statement';

const DB = 'interlock';
const STORE = 'keys';
const KEY = 'approver';

export interface BrowserKey {
  privateKey: CryptoKey;
  publicKey: CryptoKey;
  publicKeyHex: string;
  keyId: string;
  fingerprint: string;
  createdAt: number;
}

interface Stored {
  privateKey: CryptoKey;
  publicKey: CryptoKey;
  createdAt: number;
}

/**
 * A new non-extractable Ed25519 key pair. WebKitGTK 2.50 fails a generation
 * now and then with an `OperationError` (4 of 600 in a row, measured in
 * MiniBrowser), so that failure is retried twice before it counts; any other
 * error is final.
 */
async function generateEd25519(): Promise<CryptoKeyPair> {
  for (let attempt = 1; ; attempt++) {
    try {
      return (await crypto.subtle.generateKey({ name: 'Ed25519' }, false, ['sign', 'verify'])) as CryptoKeyPair;
    } catch (e) {
      if (attempt >= 3 || (e as DOMException)?.name !== 'OperationError') throw e;
    }
  }
}

export function ed25519Supported(): Promise<boolean> {
  if (!globalThis.crypto?.subtle) return Promise.resolve(false);
  return generateEd25519().then(
    () => true,
    () => false,
  );
}

function open(): Promise<IDBDatabase> {
  return new Promise((resolve, reject) => {
    const req = indexedDB.open(DB, 1);
    req.onupgradeneeded = () => req.result.createObjectStore(STORE);
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error);
  });
}

async function tx<T>(mode: IDBTransactionMode, f: (s: IDBObjectStore) => IDBRequest<T>): Promise<T> {
  const db = await open();
  try {
    return await new Promise<T>((resolve, reject) => {
      const t = db.transaction(STORE, mode);
      const req = f(t.objectStore(STORE));
      t.oncomplete = () => resolve(req.result);
      t.onerror = () => reject(t.error);
      t.onabort = () => reject(t.error);
    });
  } finally {
    db.close();
  }
}

async function describe(s: Stored): Promise<BrowserKey> {
  const raw = new Uint8Array(await crypto.subtle.exportKey('raw', s.publicKey));
  const keyId = await keyIdOf(raw);
  return { ...s, publicKeyHex: toHex(raw), keyId, fingerprint: fingerprint(keyId) };
}

/** The stored key, if there is one. */
export async function loadKey(): Promise<BrowserKey | null> {
  const s = await tx<Stored | undefined>('readonly', (st) => st.get(KEY) as IDBRequest<Stored | undefined>);
  return s ? describe(s) : null;
}

/** The stored key, made (and stored) on first use. */
export async function ensureKey(): Promise<BrowserKey> {
  const have = await loadKey();
  if (have) return have;
  const pair = await generateEd25519();
  const s: Stored = { privateKey: pair.privateKey, publicKey: pair.publicKey, createdAt: Date.now() };
  // add(), not put(): two tabs racing keep the first key.
  await tx('readwrite', (st) => st.add(s, KEY)).catch(() => undefined);
  return (await loadKey())!;
}

/** Forgets the key (a new one must be registered again). */
export async function deleteKey(): Promise<void> {
  await tx('readwrite', (st) => st.delete(KEY));
}

export async function sign(key: BrowserKey, message: Uint8Array): Promise<Uint8Array> {
  return new Uint8Array(await crypto.subtle.sign({ name: 'Ed25519' }, key.privateKey, message as BufferSource));
}
