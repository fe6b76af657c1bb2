// One decision, signed where the key lives: in the desktop app (Rust, OS keychain)
// or in this browser (WebCrypto Ed25519, non-extractable, IndexedDB).
//
// The hash and policy digest are the ones the reviewer was shown (from the GET of
// the plan or server); if the subject changed since, the gateway refuses the
// statement (it is about bytes no longer there) and the view reloads.

import { api, ApiError } from './api';
import { isDesktop } from './config';
import { desktopDecide, desktopErrorCode, desktopErrorMessage } from './desktop';
import { ensureKey, sign } from './browserKey';
import { buildStatement, envelope, signingInput, subjectId, type DecisionKind, type SubjectKind } from './statement';

export interface DecideRequest {
  kind: SubjectKind;
  /** Plan id, server name, or `<server>/<tool>`. */
  subject: string;
  /** plan_hash (plans), observed_hash (servers) or the tool's observed definition hash, as shown. */
  hash: string;
  policyDigest: string;
  /** The gateway's log origin (the statement's audience), as shown. */
  audience: string;
  decision: DecisionKind;
  reason: string;
}

const acted = new Map<string, number>();

/** Remembers that this reviewer just decided on a subject (its own toast says so). */
export function markActed(kind: SubjectKind, subject: string) {
  acted.set(`${kind}:${subject}`, Date.now());
}

/** Whether an event about this subject is most likely this reviewer's own decision. */
export function actedRecently(kind: string, subject: string, ms = 8000): boolean {
  return Date.now() - (acted.get(`${kind}:${subject}`) ?? 0) < ms;
}

export async function decide(r: DecideRequest): Promise<Record<string, unknown>> {
  if (isDesktop() && r.kind === 'tool')
    // The desktop's signer (src-tauri) knows plans and servers only.
    throw new ApiError(0, 'desktop', 'The desktop app cannot sign a decision about one tool yet: use `interlock servers approve|reject --tool`.');
  if (isDesktop()) {
    try {
      return await desktopDecide({
        subjectKind: r.kind,
        subject: r.subject,
        hash: r.hash,
        decision: r.decision,
        reason: r.reason,
      });
    } catch (e) {
      throw new ApiError(0, desktopErrorCode(e) ?? 'desktop', desktopErrorMessage(e));
    }
  }
  const key = await ensureKey();
  const statement = buildStatement({
    planId: subjectId(r.kind, r.subject),
    planHash: r.hash,
    decision: r.decision,
    reason: r.reason,
    approverKeyId: key.keyId,
    policyDigest: r.policyDigest,
    audience: r.audience,
    now: Date.now() / 1000,
  });
  const sig = await sign(key, signingInput(statement));
  return api.decide(r.kind, r.subject, envelope(statement, sig));
}
