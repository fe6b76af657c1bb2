// The one-time sign-in link (`#/signin/<token>`, printed by `interlock serve` on
// its first start and by `interlock signin-link`): the token is traded once for a
// reviewer API key, and this browser's approver public key is registered with it.
// The only reviewer-API call made without an API key.

import { ApiError } from './api';
import { apiBase } from './config';

export interface SigninAnswer {
  key: string;
  name: string;
  identity: string;
  key_id: string;
}

/** Which names the gateway accepts (`human:NAME`). */
export const NAME_PATTERN = '[A-Za-z0-9._@\\-]{1,64}';

export async function redeemSignin(token: string, publicKeyHex: string, name: string): Promise<SigninAnswer> {
  let r: Response;
  try {
    r = await fetch(apiBase() + '/api/v1/signin', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
      body: JSON.stringify({ token, public_key: publicKeyHex, name }),
      cache: 'no-store',
    });
  } catch (e) {
    throw new ApiError(0, 'network', `The gateway is unreachable (${(e as Error).message}).`);
  }
  const body = (await r.json().catch(() => null)) as
    | (SigninAnswer & { error?: { code?: string; message?: string } })
    | null;
  if (!r.ok) {
    throw new ApiError(r.status, body?.error?.code ?? 'http', body?.error?.message ?? `HTTP ${r.status}`);
  }
  return body as SigninAnswer;
}
