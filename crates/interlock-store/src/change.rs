//! State changes that commit in the same transaction as their log leaf.
//!
//! Why: evidence before effect, and no effect without its evidence. A server that
//! flips to TRUSTED must not be served on a row change whose `server.approved` leaf
//! (with the approver's envelope, stored nowhere else) a crash could lose — nor may
//! the leaf claim a change that did not happen. The log appends the leaf and the
//! store applies the change under one write lock, in one transaction
//! ([`Store::append_batch_locked`]): both are durable, or neither is.

use crate::error::SqlxResultExt as _;
use crate::gateway::update_server_in;
use crate::{ServerUpdate, StoreError};

/// One state change, applied by compare-and-swap.
#[derive(Clone, Debug)]
pub enum StateChange {
    /// Replace a server row if it is still at `expected_version`.
    Server {
        name: String,
        expected_version: i64,
        update: ServerUpdate,
    },
    /// [`StateChange::Server`], and in the same transaction the runs that
    /// become the server's probe baseline (issue 16 item 1): an approval
    /// adopts the probe outcomes the reviewer was shown together with the
    /// surface, so no re-check can see the new state with the old baseline.
    ServerWithProbeBaseline {
        name: String,
        expected_version: i64,
        /// Boxed: the change travels in the log writer's requests, which
        /// stay small.
        update: Box<ServerUpdate>,
        probe_baseline: Vec<u8>,
    },
    /// Store a decision statement about a plan revision.
    InsertApproval(crate::NewApproval),
    /// Start executing an APPROVED plan revision: consume its approvals and take
    /// its lease `(owner, now)`.
    StartExecution {
        plan_id: String,
        revision: i64,
        owner: String,
        now: i64,
    },
    /// Register an approver key: the row names the leaf committed with it.
    AddApproverKey(crate::NewApproverKey),
    /// Fix a tool's learned envelope (issue 16): only if it is still learning.
    FixEnvelope {
        server: String,
        tool: String,
        envelope: Vec<u8>,
        hash: String,
        now: i64,
    },
    /// Widen a tool's fixed envelope still at `expected_hash` (a reviewer's
    /// signed decision names that hash).
    WidenEnvelope {
        server: String,
        tool: String,
        expected_hash: String,
        envelope: Vec<u8>,
        hash: String,
    },
    /// Remove a server (a reviewer's signed removal, issue 20 item 5): its
    /// row — if still at `expected_version`; `None`: it must have none —,
    /// its probe state and its tools' envelopes, so a server added again
    /// under the name starts pending and learns afresh. Approved surfaces
    /// stay (they are kept by hash, as evidence).
    RemoveServer {
        name: String,
        expected_version: Option<i64>,
    },
    /// An admin's change to admin tokens or API keys (issue 20 item 3).
    Admin(crate::AdminChange),
    /// Store a standing approval with its `standing.granted` leaf (boxed:
    /// the change travels in the log writer's requests, which stay small).
    AddStanding(Box<crate::StandingRecord>),
    /// Revoke an active standing approval with its `standing.revoked` leaf
    /// (refused if none is active under `id`).
    RevokeStanding { id: String, now: i64 },
    /// Move one plan revision from `from` to `to`.
    PlanStatus {
        plan_id: String,
        revision: i64,
        from: crate::PlanStatus,
        to: crate::PlanStatus,
    },
}

/// A server row's compare-and-swap inside a decision's transaction; a
/// decision that trusts a baseline also keeps it by its hash (issue 16 item 7).
async fn server_update_in(
    tx: &mut crate::Tx,
    name: &str,
    expected_version: i64,
    update: &crate::ServerUpdate,
) -> Result<bool, StoreError> {
    let applied = update_server_in(&mut **tx, name, expected_version, update).await?;
    if let (true, crate::ServerStatus::Trusted, Some(hash), Some(surface)) = (
        applied,
        update.status,
        &update.baseline_hash,
        &update.baseline,
    ) {
        crate::surfaces::keep_surface_in(&mut **tx, hash, surface, name).await?;
    }
    Ok(applied)
}

impl StateChange {
    /// Applies the change inside `tx`; `Err(ChangeRefused)` if its
    /// compare-and-swap finds the row moved (nothing is written then).
    pub(crate) async fn apply(&self, tx: &mut crate::Tx) -> Result<(), StoreError> {
        let applied = match self {
            StateChange::Server {
                name,
                expected_version,
                update,
            } => server_update_in(tx, name, *expected_version, update).await?,
            StateChange::ServerWithProbeBaseline {
                name,
                expected_version,
                update,
                probe_baseline,
            } => {
                server_update_in(tx, name, *expected_version, update).await?
                    && crate::probes::adopt_probe_baseline_in(&mut **tx, name, probe_baseline)
                        .await?
            }
            StateChange::Admin(c) => c.apply(tx).await?,
            StateChange::AddStanding(record) => {
                crate::gateway::add_standing_in(tx, record).await?;
                true
            }
            StateChange::RevokeStanding { id, now } => {
                crate::gateway::revoke_standing_in(tx, id, *now).await?
            }
            StateChange::RemoveServer {
                name,
                expected_version,
            } => crate::gateway::remove_server_in(tx, name, *expected_version).await?,
            StateChange::PlanStatus {
                plan_id,
                revision,
                from,
                to,
            } => crate::plans::transition_in(&mut **tx, plan_id, *revision, *from, *to).await?,
            StateChange::InsertApproval(a) => {
                crate::approvals::insert_approval_in(&mut **tx, a).await?;
                true
            }
            StateChange::StartExecution {
                plan_id,
                revision,
                owner,
                now,
            } => {
                crate::approvals::start_execution_in(tx, plan_id, *revision, Some((owner, *now)))
                    .await?
            }
            StateChange::AddApproverKey(key) => {
                crate::keys::add_approver_key_in(tx, key).await?;
                true
            }
            StateChange::FixEnvelope {
                server,
                tool,
                envelope,
                hash,
                now,
            } => {
                crate::envelopes::fix_envelope_in(&mut **tx, server, tool, envelope, hash, *now)
                    .await?
            }
            StateChange::WidenEnvelope {
                server,
                tool,
                expected_hash,
                envelope,
                hash,
            } => {
                crate::envelopes::widen_envelope_in(
                    &mut **tx,
                    server,
                    tool,
                    expected_hash,
                    envelope,
                    hash,
                )
                .await?
            }
        };
        if applied {
            // On Postgres, every gateway on the database hears of the
            // decision when it commits (`Store::subscribe_changes`), instead
            // of at its next poll. A notification is transactional: a change
            // rolled back is never announced.
            if tx.backend_name() == crate::POSTGRES_BACKEND_NAME {
                sqlx::query("SELECT 1::BIGINT FROM pg_notify($1, '')")
                    .bind(crate::CHANGES_CHANNEL)
                    .execute(&mut **tx)
                    .await
                    .ctx("change notification")?;
            }
            Ok(())
        } else {
            Err(StoreError::ChangeRefused {
                what: self.describe(),
            })
        }
    }

    fn describe(&self) -> String {
        match self {
            StateChange::Server {
                name,
                expected_version,
                ..
            }
            | StateChange::ServerWithProbeBaseline {
                name,
                expected_version,
                ..
            } => format!("server {name:?} is no longer at version {expected_version}"),
            StateChange::Admin(c) => c.describe(),
            StateChange::AddStanding(record) => format!("standing approval {}", record.id),
            StateChange::RevokeStanding { id, .. } => {
                format!("standing approval {id} is not active")
            }
            StateChange::RemoveServer {
                name,
                expected_version: Some(v),
            } => format!("server {name:?} is no longer at version {v}"),
            StateChange::RemoveServer {
                name,
                expected_version: None,
            } => format!("server {name:?} has a row now"),
            StateChange::PlanStatus {
                plan_id,
                revision,
                from,
                ..
            } => format!("plan {plan_id:?} revision {revision} is no longer {from}"),
            StateChange::AddApproverKey(key) => format!("approver key {}", key.key_id),
            StateChange::FixEnvelope { server, tool, .. } => {
                format!("the envelope of {server}/{tool} is no longer learning")
            }
            StateChange::WidenEnvelope {
                server,
                tool,
                expected_hash,
                ..
            } => format!("the envelope of {server}/{tool} is no longer {expected_hash}"),
            StateChange::InsertApproval(a) => {
                format!("plan {:?} revision {}", a.plan_id, a.revision)
            }
            StateChange::StartExecution {
                plan_id, revision, ..
            } => format!("plan {plan_id:?} revision {revision} is no longer APPROVED"),
        }
    }
}
