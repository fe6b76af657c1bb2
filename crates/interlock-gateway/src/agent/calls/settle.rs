//! Settling a call: the one place a `tool.call` leaf is appended, for every
//! verdict — the intent of a call about to be forwarded (before it is sent),
//! then its outcome, or a verdict that ends it here — and the answer replaced
//! by a refusal when its leaf cannot be written (a call whose verdict is not in
//! the log is never answered as if it were).

use std::time::Instant;

use serde_json::value::RawValue;

use super::call::Call;
use super::leaf::{CallLeaf, Outcome, ResponseScan, Verdict};
use crate::gateway::Gateway;
use crate::jsonrpc::{self, code};

impl Call<'_> {
    pub(crate) fn leaf(&self) -> CallLeaf<'_> {
        CallLeaf {
            agent: self.agent,
            server: self.server,
            tool: self.tool,
            arguments_hash: self.args_digest,
            call_id: &self.call_id,
            bound: self.bound.clone(),
            assessment: Some(self.assessment),
            intent: self.intent.get().copied(),
            envelope: &self.before.findings,
        }
    }

    /// Writes the intent leaf of a call about to be forwarded, before it is
    /// sent: a call whose intent cannot be logged is refused and never reaches
    /// the upstream (evidence before effect).
    pub(crate) async fn log_intent(&self, verdict: &Verdict) -> Result<(), Vec<u8>> {
        self.gw.metrics().decided(self.arrived.elapsed());
        let appending = Instant::now();
        let appended = self.leaf().append_intent(self.gw.engine(), verdict).await;
        self.gw.metrics().appended(appending.elapsed());
        match appended {
            Ok(index) => {
                let _ = self.intent.set(index);
                Ok(())
            }
            Err(e) => Err(jsonrpc::error(
                Some(self.id),
                code::INTERNAL_ERROR,
                &format!("the gateway refused the call: the log append failed: {e}"),
            )),
        }
    }

    /// Writes the leaf of `verdict`: its log index, or (if it cannot be
    /// written) the answer that refuses the call instead.
    pub(crate) async fn record(
        &self,
        verdict: &Verdict,
        outcome: &Outcome,
        response: Option<&ResponseScan>,
    ) -> Result<u64, Vec<u8>> {
        // A verdict not forwarded is decided now; a held one waited for a human.
        if self.intent.get().is_none() && !matches!(verdict, Verdict::Held { .. }) {
            self.gw.metrics().decided(self.arrived.elapsed());
        }
        let appending = Instant::now();
        let appended =
            append_or_refuse(self.gw, self.id, &self.leaf(), verdict, outcome, response).await;
        self.gw.metrics().appended(appending.elapsed());
        appended
    }

    /// Writes the leaf of `verdict` and answers `answer` — or, if the leaf
    /// cannot be written, an error saying so instead (a call whose verdict is
    /// not in the log is refused, never answered as if it were).
    pub(crate) async fn settle(
        &self,
        verdict: &Verdict,
        outcome: Outcome,
        response: Option<&ResponseScan>,
        answer: Vec<u8>,
    ) -> Vec<u8> {
        self.record(verdict, &outcome, response)
            .await
            .map_or_else(|refusal| refusal, |_| answer)
    }
}

/// The one place a `tool.call` leaf is appended: its index, or the answer
/// that replaces the call's when the append failed.
pub(crate) async fn append_or_refuse(
    gw: &Gateway,
    id: &RawValue,
    leaf: &CallLeaf<'_>,
    verdict: &Verdict,
    outcome: &Outcome,
    response: Option<&ResponseScan>,
) -> Result<u64, Vec<u8>> {
    leaf.append(gw.engine(), verdict, outcome, response)
        .await
        .map_err(|e| {
            if ran_upstream(outcome) {
                jsonrpc::unlogged(id, "call", &e)
            } else {
                jsonrpc::error(
                    Some(id),
                    code::INTERNAL_ERROR,
                    &format!("the gateway refused the call: the log append failed: {e}"),
                )
            }
        })
}

/// Whether the outcome means the tool ran (or may have) upstream.
fn ran_upstream(outcome: &Outcome) -> bool {
    matches!(
        outcome,
        Outcome::Answered { .. }
            | Outcome::Ran { .. }
            | Outcome::Halted { .. }
            | Outcome::UpstreamError { .. }
    )
}
