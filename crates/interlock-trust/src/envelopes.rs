//! Tools' behavioural envelopes as the gateway keeps them (issue 16 item 2):
//! the in-memory table the call path checks against (`calls::envelope`),
//! loaded from the store on first use so it survives a restart, and a
//! reviewer's signed widening ([`decide_widening`]), which the reviewer API
//! and the host's CLI apply. Shared by both faces, like `pins`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use interlock_canon::{self as canon, Digest, Map, Value};
use interlock_core::{Decision, DsseEnvelope};
use interlock_engine::{Engine, EngineError};
use interlock_envelope::{
    Envelope, EnvelopeFinding, FindingKind, OutputSchema, RecentErrors, WidenError,
};
use interlock_store::{EnvelopeState, StateChange, StoreError};
use interlock_surface::Tool;

use crate::events::EventType;

/// Where one tool's envelope stands.
#[derive(Clone, Debug)]
pub enum Phase {
    /// Calls are observed; `since` is when the first was (Unix seconds).
    Learning { since: i64 },
    /// Enforced, at this hash.
    Fixed { hash: Digest },
}

pub struct Entry {
    pub envelope: Envelope,
    pub phase: Phase,
    pub recent: RecentErrors,
}

/// `(server, tool)`: whose envelope.
type ToolKey = (String, String);

/// Every tool's envelope state, and the compiled approved output schemas.
#[derive(Default)]
pub struct Envelopes {
    entries: Mutex<HashMap<ToolKey, Arc<Mutex<Entry>>>>,
    /// By the approved tool definition's hash; `None`: no (usable) schema.
    schemas: Mutex<HashMap<Digest, Option<Arc<OutputSchema>>>>,
}

/// A tool's envelope as the reviewer API shows it.
#[derive(Clone, Debug)]
pub struct EnvelopeView {
    pub tool: String,
    pub state: EnvelopeState,
    pub hash: Digest,
    pub envelope: Envelope,
}

impl Envelopes {
    /// The tool's entry: from memory, else from the store (a new, learning
    /// one when none was stored).
    pub async fn entry(&self, engine: &Engine, server: &str, tool: &str) -> Arc<Mutex<Entry>> {
        let key = (server.to_owned(), tool.to_owned());
        if let Some(e) = self.entries.lock().expect("envelopes lock").get(&key) {
            return Arc::clone(e);
        }
        let stored = match engine.store().envelope(server, tool).await {
            Ok(row) => row,
            Err(e) => {
                tracing::warn!(error = %e, server, tool, "a stored envelope could not be read");
                None
            }
        };
        let entry = stored
            .and_then(|row| {
                let value = canon::parse_json(&row.envelope).ok()?;
                let envelope = Envelope::from_value(&value).ok()?;
                let phase = match row.state {
                    EnvelopeState::Learning => Phase::Learning {
                        since: row.learning_since,
                    },
                    EnvelopeState::Fixed => Phase::Fixed {
                        hash: envelope.hash(),
                    },
                };
                Some(Entry {
                    envelope,
                    phase,
                    recent: RecentErrors::default(),
                })
            })
            .unwrap_or_else(|| Entry {
                envelope: Envelope::default(),
                phase: Phase::Learning {
                    since: engine.now(),
                },
                recent: RecentErrors::default(),
            });
        let mut entries = self.entries.lock().expect("envelopes lock");
        Arc::clone(
            entries
                .entry(key)
                .or_insert_with(|| Arc::new(Mutex::new(entry))),
        )
    }

    pub fn schema(&self, tool: &Tool) -> Option<Arc<OutputSchema>> {
        let hash = tool.hash();
        let mut schemas = self.schemas.lock().expect("schemas lock");
        schemas
            .entry(hash)
            .or_insert_with(|| {
                let schema = tool.field("outputSchema")?;
                match OutputSchema::compile(schema) {
                    Ok(s) => Some(Arc::new(s)),
                    Err(e) => {
                        tracing::warn!(tool = tool.name(), error = %e, "outputSchema not checked");
                        None
                    }
                }
            })
            .clone()
    }

    /// Drops a tool's cached state: the next call reads it from the store.
    pub fn forget(&self, server: &str, tool: &str) {
        self.entries
            .lock()
            .expect("envelopes lock")
            .remove(&(server.to_owned(), tool.to_owned()));
    }

    /// Drops every fixed envelope whose stored hash moved (a widening made
    /// by another process): the gateway's reload loop.
    pub async fn reload_changed(&self, engine: &Engine) -> Result<(), StoreError> {
        let rows = engine.store().envelopes().await?;
        let mut entries = self.entries.lock().expect("envelopes lock");
        for row in rows {
            let key = (row.server.clone(), row.tool.clone());
            let stale =
                entries
                    .get(&key)
                    .is_some_and(|e| match &e.lock().expect("envelope lock").phase {
                        Phase::Fixed { hash } => {
                            row.state == EnvelopeState::Fixed && hash.to_string() != row.hash
                        }
                        Phase::Learning { .. } => row.state == EnvelopeState::Fixed,
                    });
            if stale {
                entries.remove(&key);
            }
        }
        Ok(())
    }

    /// Every tool of `server` with an envelope, as stored.
    pub async fn of_server(
        &self,
        engine: &Engine,
        server: &str,
    ) -> Result<Vec<EnvelopeView>, interlock_store::StoreError> {
        let rows = engine.store().envelopes().await?;
        Ok(rows
            .into_iter()
            .filter(|r| r.server == server)
            .filter_map(|r| {
                let envelope = Envelope::from_value(&canon::parse_json(&r.envelope).ok()?).ok()?;
                Some(EnvelopeView {
                    tool: r.tool,
                    state: r.state,
                    hash: envelope.hash(),
                    envelope,
                })
            })
            .collect())
    }
}

/// Signed statements about a tool's envelope name `envelope:<server>/<tool>`
/// where a plan statement names a plan id (server names hold no `/`).
pub const ENVELOPE_SUBJECT_PREFIX: &str = "envelope:";

pub fn envelope_subject(server: &str, tool: &str) -> String {
    format!("{ENVELOPE_SUBJECT_PREFIX}{server}/{tool}")
}

/// Why a widening was refused.
#[derive(Debug, thiserror::Error)]
pub enum WideningError {
    #[error("{0:?} is not a statement about a tool's envelope (envelope:<server>/<tool>)")]
    NotAnEnvelopeStatement(String),
    #[error(
        "a widening is an approval; to leave {server}/{tool}'s envelope as it is, decide nothing"
    )]
    NotAnApproval { server: String, tool: String },
    #[error("{server}/{tool} has no fixed envelope to widen")]
    NotFixed { server: String, tool: String },
    #[error("log entry {index} is not a tool.call of {server}/{tool} with envelope findings")]
    NotAFinding {
        index: u64,
        server: String,
        tool: String,
    },
    #[error(transparent)]
    Widen(#[from] WidenError),
    #[error(
        "the envelope of {server}/{tool} changed since it was shown: the signed widening is {signed}, widening it now gives {current}; review it again"
    )]
    Changed {
        server: String,
        tool: String,
        signed: String,
        current: String,
    },
    #[error(transparent)]
    Engine(#[from] EngineError),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Log(#[from] interlock_log::LogError),
}

/// What widening a tool's envelope by one logged call's findings gives: what
/// a reviewer is shown, and the hash they sign (`widened_hash`).
#[derive(Clone, Debug)]
pub struct Widening {
    pub server: String,
    pub tool: String,
    pub leaf: u64,
    pub findings: Vec<EnvelopeFinding>,
    pub current: Envelope,
    pub current_hash: Digest,
    pub widened: Envelope,
    pub widened_hash: Digest,
}

impl Widening {
    /// The subject a reviewer's statement names.
    pub fn subject(&self) -> String {
        envelope_subject(&self.server, &self.tool)
    }
}

/// The widening of `server`/`tool`'s fixed envelope by the findings that
/// log entry `leaf` (a `tool.call` of that tool) recorded: old ∪ them.
pub async fn widening(
    engine: &Engine,
    server: &str,
    tool: &str,
    leaf: u64,
) -> Result<Widening, WideningError> {
    let not_fixed = || WideningError::NotFixed {
        server: server.to_owned(),
        tool: tool.to_owned(),
    };
    let row = engine
        .store()
        .envelope(server, tool)
        .await?
        .filter(|r| r.state == EnvelopeState::Fixed)
        .ok_or_else(not_fixed)?;
    let current = canon::parse_json(&row.envelope)
        .ok()
        .and_then(|v| Envelope::from_value(&v).ok())
        .ok_or_else(|| StoreError::Malformed(format!("the envelope of {server}/{tool}")))?;
    engine.log().refresh().await?;
    let entry = engine.log().entry(leaf).await?;
    let not_a_finding = || WideningError::NotAFinding {
        index: leaf,
        server: server.to_owned(),
        tool: tool.to_owned(),
    };
    let ours = entry.get("type").and_then(Value::as_str) == Some(EventType::ToolCall.as_str())
        && entry.get("server").and_then(Value::as_str) == Some(server)
        && entry.get("tool").and_then(Value::as_str) == Some(tool);
    let records = entry
        .get("verdict")
        .and_then(|v| v.get("envelope"))
        .and_then(Value::as_array)
        .filter(|_| ours)
        .ok_or_else(not_a_finding)?;
    let findings = records
        .iter()
        .map(|r| {
            let kind = r
                .get("kind")
                .and_then(Value::as_str)
                .and_then(FindingKind::parse)?;
            let subject = r.get("subject").and_then(Value::as_str)?;
            Some(EnvelopeFinding::new(kind, subject))
        })
        .collect::<Option<Vec<_>>>()
        .ok_or_else(not_a_finding)?;
    let widened = current.widened_by(&findings)?;
    Ok(Widening {
        server: server.to_owned(),
        tool: tool.to_owned(),
        leaf,
        findings,
        current_hash: current.hash(),
        widened_hash: widened.hash(),
        current,
        widened,
    })
}

/// Applies a reviewer's signed widening: the statement names
/// `envelope:<server>/<tool>` and the *widened* envelope's hash, which must be
/// what widening the stored envelope by entry `leaf`'s findings gives now;
/// then the row is swapped (compare-and-swap on the current hash) in the same
/// transaction as the `tool.envelope_widened` leaf that embeds the statement.
/// Used by the reviewer API and by `interlock servers widen`.
pub async fn decide_widening(
    engine: &Engine,
    statement: &DsseEnvelope,
    leaf: u64,
) -> Result<Widening, WideningError> {
    let claimed = interlock_core::decision::ApprovalStatement::claimed_by(statement)
        .map_err(EngineError::Decision)?;
    let (server, tool) = claimed
        .plan_id
        .strip_prefix(ENVELOPE_SUBJECT_PREFIX)
        .and_then(|rest| rest.split_once('/'))
        .ok_or_else(|| WideningError::NotAnEnvelopeStatement(claimed.plan_id.clone()))?;
    let w = widening(engine, server, tool, leaf).await?;
    if claimed.plan_hash != w.widened_hash {
        return Err(WideningError::Changed {
            server: w.server,
            tool: w.tool,
            signed: claimed.plan_hash.to_string(),
            current: w.widened_hash.to_string(),
        });
    }
    let verified = engine
        .accept_subject_decision(statement, &w.subject(), w.widened_hash)
        .await?;
    if verified.statement.decision != Decision::Approve {
        return Err(WideningError::NotAnApproval {
            server: w.server,
            tool: w.tool,
        });
    }
    let value = w.widened.to_value();
    let mut m = Map::new();
    m.insert("server".into(), w.server.as_str().into());
    m.insert("tool".into(), w.tool.as_str().into());
    m.insert("previous_hash".into(), w.current_hash.to_string().into());
    m.insert("envelope_hash".into(), w.widened_hash.to_string().into());
    m.insert("envelope".into(), value.clone());
    m.insert(
        "from_leaf".into(),
        Value::Number(canon::Number::from_i64(leaf as i64).expect("a log index")),
    );
    m.insert("approver".into(), verified.identity.as_str().into());
    m.insert(
        "approver_key_id".into(),
        verified.statement.approver_key_id.to_string().into(),
    );
    m.insert("reason".into(), verified.statement.reason.as_str().into());
    m.insert(
        "statement".into(),
        crate::pins::to_canon(&statement.to_json()),
    );
    let change = StateChange::WidenEnvelope {
        server: w.server.clone(),
        tool: w.tool.clone(),
        expected_hash: w.current_hash.to_string(),
        envelope: canon::canonical_bytes(&value),
        hash: w.widened_hash.to_string(),
    };
    match engine
        .record_with_change(EventType::ToolEnvelopeWidened.as_str(), m, change)
        .await
    {
        Ok(_) => Ok(w),
        Err(EngineError::Log(interlock_log::LogError::ChangeRefused(_))) => {
            Err(WideningError::Changed {
                signed: w.widened_hash.to_string(),
                current: "(changed while deciding)".into(),
                server: w.server,
                tool: w.tool,
            })
        }
        Err(e) => Err(e.into()),
    }
}
