//! The admin socket's signer (issue 46): a decision the owner typed in a
//! terminal beside this gateway, signed with the approver key in this host's
//! keychain and decided exactly as the same command would decide it with the
//! keychain at hand ([`crate::decide_plan`], [`crate::decide_server_surface`],
//! [`crate::decide_tool_definition`]) — then announced on the running
//! gateway's bus, so the inbox, the tray and the served tools change at once.
//!
//! The client side is [`Host::decide_beside_running_gateway`]: `None` when no
//! gateway runs on the data directory, so the command decides by itself.

use std::future::Future;
use std::pin::Pin;

use interlock_core::decision::Decision;
use interlock_gateway::Gateway;
use interlock_gateway::admin::decisions::{DecisionSubject, OwnerDecision, OwnerDecisions};
use interlock_keychain::Keychain;

use crate::{APPROVER_KEY, Countersign, Host, HostError};

/// Signs with `keychain`'s approver key, on `gateway`.
pub(crate) struct KeychainDecisions {
    pub keychain: Keychain,
    pub gateway: Gateway,
}

impl OwnerDecisions for KeychainDecisions {
    fn decide(
        &self,
        d: OwnerDecision,
    ) -> Pin<Box<dyn Future<Output = Result<String, String>> + Send + '_>> {
        Box::pin(async move { self.sign_and_decide(d).await.map_err(|e| e.to_string()) })
    }
}

impl KeychainDecisions {
    async fn sign_and_decide(&self, d: OwnerDecision) -> Result<String, HostError> {
        // A keychain read is a blocking D-Bus round trip.
        let keychain = self.keychain.clone();
        let key = tokio::task::spawn_blocking(move || keychain.load_key(APPROVER_KEY))
            .await
            .map_err(|e| HostError::Unexpected(e.to_string()))??
            .ok_or(HostError::NoApproverKey)?;
        let said = Countersign {
            key: &key,
            decision: d.decision,
            reason: &d.reason,
            valid_for_secs: d.valid_for_secs,
        };
        let engine = self.gateway.engine();
        let events = self.gateway.events();
        let shown = d.shown_hash.as_deref();
        let verb = |approved: &'static str, rejected: &'static str| match d.decision {
            Decision::Approve => approved,
            Decision::Reject => rejected,
        };
        Ok(match &d.subject {
            DecisionSubject::Plan { id } => {
                let plan = engine.plan(id).await?;
                let o =
                    crate::decide_plan(engine, id, Some(shown.unwrap_or(&plan.plan_hash)), &said)
                        .await?;
                format!(
                    "{} plan `{}` revision {} ({}) — now {} ({}/{} approvals)",
                    verb("approved", "rejected"),
                    o.plan_id,
                    o.revision,
                    plan.plan_hash,
                    o.status.as_str(),
                    o.approvals,
                    o.approvals_required
                )
            }
            DecisionSubject::Server { name } => {
                let r = crate::decide_server_surface(engine, events, name, shown, &said).await?;
                format!(
                    "{} server `{}` at {} — now {}",
                    verb("approved", "rejected"),
                    r.name,
                    r.observed_hash.as_deref().unwrap_or("?"),
                    r.status.as_str()
                )
            }
            DecisionSubject::Tool { server, tool } => {
                let r = crate::decide_tool_definition(
                    engine,
                    events,
                    self.gateway.config(),
                    server,
                    tool,
                    shown,
                    &said,
                )
                .await?;
                format!(
                    "{} tool `{tool}` of server `{}` — server now {}",
                    verb("approved", "blocked"),
                    r.name,
                    r.status.as_str()
                )
            }
        })
    }
}

impl Host {
    /// Asks the gateway running on this data directory to sign and apply
    /// `d` with the approver key in its keychain (a second terminal may not
    /// reach that keychain). `Ok(None)`: no gateway runs here, decide
    /// locally. A refusal (the hash changed, no approver key, a bad
    /// signature) is `Err(HostError::Admin(Refused))`, nothing signed.
    pub async fn decide_beside_running_gateway(
        &self,
        d: OwnerDecision,
    ) -> Result<Option<String>, HostError> {
        use interlock_gateway::admin::{Answer, Request, request};
        let data_dir = self.data_dir()?;
        match request(&data_dir, &Request::Decide(d)).await? {
            None => Ok(None),
            Some(Answer::Decided(done)) => Ok(Some(done)),
            Some(other) => Err(HostError::Unexpected(format!(
                "the admin socket answered {other:?}"
            ))),
        }
    }
}
