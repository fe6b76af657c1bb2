// One decision, signed where the key lives: in the desktop app (Rust, OS keychain)
// or in this browser (WebCrypto Ed25519, non-extractable, IndexedDB).
//
// The hash and policy digest are the ones the reviewer was shown (from the GET of
// the plan or server); if the subject changed since, the gateway refuses the
// statement (it is about bytes no longer there) and the view reloads.

import { api, ApiError, type ScopeOffer } from './api';
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
  /** A held call approved for more than once: the offer whose grant is signed too. */
  scope?: ScopeOffer;
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
  const scoped = r.decision === 'approve' && r.kind === 'plan' && r.scope && r.scope.scope !== 'once' ? r.scope : null;
  if (isDesktop()) {
    try {
      return await desktopDecide({
        subjectKind: r.kind,
        subject: r.subject,
        hash: r.hash,
        decision: r.decision,
        reason: r.reason,
        // The desktop signs the plan and the gateway's offer for this scope itself.
        ...(scoped ? { scope: scoped.scope } : {}),
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
  const decided = await api.decide(r.kind, r.subject, envelope(statement, sig));
  if (!scoped?.grant) return decided;
  // The plan is approved first (a changed plan signs nothing more); then the
  // standing approval the gateway offered for this scope, its exact document.
  const grant = scoped.grant;
  const grantStatement = buildStatement({
    planId: grant.subject,
    planHash: grant.document_hash,
    decision: 'approve',
    reason: r.reason,
    approverKeyId: key.keyId,
    policyDigest: r.policyDigest,
    audience: r.audience,
    now: Date.now() / 1000,
  });
  const grantSig = await sign(key, signingInput(grantStatement));
  const standing = await api.grantStanding(grant.document, envelope(grantStatement, grantSig));
  return { ...decided, scope: scoped.scope, standing };
}
