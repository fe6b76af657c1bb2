//! Submitting the log's checkpoints to its witnesses (issue 43), off the call
//! path: one task per witness in `[log] witnesses`, woken when a checkpoint is
//! signed, sending the newest with a consistency proof from the size that
//! witness last cosigned (C2SP tlog-witness `add-checkpoint`), keeping the
//! cosignature it returns with the checkpoint (`Store::add_cosignature`), so
//! exported bundles carry it.
//!
//! A witness that refuses a checkpoint as inconsistent with what it saw (409
//! with no size: another root at the same size; 422: the proof does not
//! verify) has seen another history under this log's key: a critical
//! `log.witness_refused` leaf is appended, which alert sinks deliver, and
//! that witness is asked nothing more until a restart. Network
//! failures and 5xx answers are retried with backoff (0.5 s doubling to 30 s).

use std::time::Duration;

use interlock_canon::{Map, Number, Value};
use interlock_merkle::{
    AddCheckpoint, Checkpoint, CosignatureVerifier, SignedNote, WitnessVerdict,
    parse_cosignature_lines, witness_report,
};

use crate::gateway::Gateway;

/// The kind of the leaf that records a witness's refusal (a critical alert).
pub const WITNESS_REFUSED: &str = "log.witness_refused";

const FIRST_BACKOFF: Duration = Duration::from_millis(500);
const MAX_BACKOFF: Duration = Duration::from_secs(30);

/// Starts one submitting task per configured witness.
pub fn spawn(gw: &Gateway) {
    for witness in &gw.config().log.witnesses {
        let Ok(key) = CosignatureVerifier::from_vkey(&witness.key) else {
            // `GatewayConfig::check` refused such a key before start.
            continue;
        };
        let task = Submitter {
            gw: gw.clone(),
            url: witness.add_checkpoint_url(),
            key,
            known_size: 0,
            client: reqwest::Client::builder()
                .timeout(Duration::from_secs(10))
                .build()
                .unwrap_or_default(),
        };
        tokio::spawn(task.run());
    }
}

struct Submitter {
    gw: Gateway,
    url: String,
    key: CosignatureVerifier,
    /// The size this witness last cosigned, as far as we know (0: ask it).
    known_size: u64,
    client: reqwest::Client,
}

/// What one submission came to.
enum Outcome {
    /// Cosigned (and kept) at this size.
    Cosigned(u64),
    /// The witness knows another size: try again from it.
    Resync(u64),
    /// The witness already cosigned a larger size (another gateway on the
    /// same log submitted it).
    Ahead(u64),
    /// Refused for a reason worth an alert; do not retry this checkpoint.
    Refused,
    /// A network failure or an answer to retry later.
    Retry(String),
}

impl Submitter {
    async fn run(mut self) {
        let mut shutdown = self.gw.0.shutdown.subscribe();
        let mut sealed = self.gw.engine().log().sealed_watch();
        let mut backoff = FIRST_BACKOFF;
        let mut done_size = None;
        loop {
            let Some((note, size)) = self.latest() else {
                tokio::select! {
                    _ = sealed.changed() => continue,
                    _ = shutdown.changed() => return,
                }
            };
            if done_size != Some(size) {
                let started = std::time::Instant::now();
                let mut resyncs = 0;
                let outcome = loop {
                    match self.submit(&note, size).await {
                        Outcome::Resync(known) if resyncs < 3 => {
                            resyncs += 1;
                            self.known_size = known;
                        }
                        other => break other,
                    }
                };
                match outcome {
                    Outcome::Cosigned(s) => {
                        // What `[log] witnesses` costs: how long after its
                        // checkpoint was picked up a cosignature was kept
                        // (RUST_LOG=interlock_gateway::witnessing=debug).
                        tracing::debug!(
                            witness = %self.key.name,
                            size = s,
                            micros = started.elapsed().as_micros() as u64,
                            "cosigned"
                        );
                        backoff = FIRST_BACKOFF;
                        self.known_size = s;
                        done_size = Some(s);
                    }
                    Outcome::Refused => {
                        // Nothing this log signs from now on can be
                        // consistent with what that witness saw; asking again
                        // would only add refusals (and leaves). The owner
                        // investigates; a restart tries again.
                        tracing::error!(
                            witness = %self.key.name,
                            "no further checkpoints are submitted to this witness until the gateway restarts"
                        );
                        return;
                    }
                    Outcome::Resync(known) => self.known_size = known,
                    Outcome::Ahead(known) => {
                        self.known_size = known;
                        done_size = Some(size);
                    }
                    Outcome::Retry(why) => {
                        tracing::warn!(witness = %self.key.name, "witness: {why}; retrying in {backoff:?}");
                        tokio::select! {
                            () = tokio::time::sleep(backoff) => {}
                            _ = shutdown.changed() => return,
                        }
                        backoff = (backoff * 2).min(MAX_BACKOFF);
                        continue;
                    }
                }
            }
            tokio::select! {
                _ = sealed.changed() => {}
                _ = shutdown.changed() => return,
            }
        }
    }

    /// The log's newest signed checkpoint and its size.
    fn latest(&self) -> Option<(String, u64)> {
        let note = self.gw.engine().log().latest_checkpoint()?;
        let parsed = SignedNote::parse(&note).ok()?;
        let size = Checkpoint::parse(&parsed.text).ok()?.size;
        Some((note.to_string(), size))
    }

    async fn submit(&self, note: &str, size: u64) -> Outcome {
        let old = if self.known_size > size {
            0
        } else {
            self.known_size
        };
        let proof = if old == 0 {
            Vec::new()
        } else {
            match self.gw.engine().log().consistency_proof(old, size).await {
                Ok(p) => p,
                Err(e) => return Outcome::Retry(format!("no proof from {old} to {size}: {e}")),
            }
        };
        let body = AddCheckpoint {
            old_size: old,
            proof,
            checkpoint: note.to_owned(),
        }
        .to_body();
        let answer = match self.client.post(&self.url).body(body).send().await {
            Ok(a) => a,
            Err(e) => return Outcome::Retry(format!("{}: {e}", self.url)),
        };
        let status = answer.status().as_u16();
        let size_body = answer
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .is_some_and(|t| {
                t.as_bytes()
                    .starts_with(interlock_witness::TLOG_SIZE_CONTENT_TYPE.as_bytes())
            });
        let text = answer.text().await.unwrap_or_default();
        match status {
            200 => self.keep(note, size, &text).await,
            409 if size_body => match text.trim_end_matches('\n').parse::<u64>() {
                // Another gateway of the team (one log, one database) got
                // a newer checkpoint there first: nothing to do until this
                // one signs a newer one.
                Ok(known) if known > size => Outcome::Ahead(known),
                Ok(known) => Outcome::Resync(known),
                Err(_) => Outcome::Retry(format!("409 with an unreadable size {text:?}")),
            },
            409 | 422 => {
                self.refused(size, status, &text).await;
                Outcome::Refused
            }
            400 | 403 | 404 => {
                tracing::error!(witness = %self.key.name, status, "witness refused the checkpoint: {}", text.trim());
                Outcome::Retry(format!("answered {status}: {}", text.trim()))
            }
            _ => Outcome::Retry(format!("answered {status}: {}", text.trim())),
        }
    }

    /// Checks the witness's answer against its key and keeps the cosignature.
    async fn keep(&self, note: &str, size: u64, answer: &str) -> Outcome {
        let Ok(lines) = parse_cosignature_lines(answer) else {
            return Outcome::Retry(format!(
                "an answer that is not cosignature lines: {answer:?}"
            ));
        };
        let Ok(mut parsed) = SignedNote::parse(note) else {
            return Outcome::Retry("the log's own checkpoint does not parse".into());
        };
        let Some(mine) = lines.into_iter().find(|c| self.key.claims(c)) else {
            return Outcome::Retry("no cosignature by the configured key".into());
        };
        parsed.foreign.push(mine.to_foreign());
        let (verdicts, _) = witness_report(&parsed, std::slice::from_ref(&self.key));
        if !matches!(verdicts[0].1, WitnessVerdict::Cosigned { .. }) {
            return Outcome::Retry(format!(
                "its cosignature does not verify: {:?}",
                verdicts[0].1
            ));
        }
        match self
            .gw
            .engine()
            .store()
            .add_cosignature(size, &self.key.name, &mine.to_line())
            .await
        {
            Ok(()) => Outcome::Cosigned(size),
            Err(e) => Outcome::Retry(format!("keeping the cosignature: {e}")),
        }
    }

    /// Records the refusal on the log (a critical alert).
    async fn refused(&self, size: u64, status: u16, text: &str) {
        tracing::error!(
            witness = %self.key.name, size, status,
            "a witness refused this log's checkpoint as inconsistent with what it saw: {}",
            text.trim()
        );
        let mut fields = Map::new();
        fields.insert("witness".into(), self.key.name.clone().into());
        fields.insert("size".into(), number(size));
        fields.insert("status".into(), number(u64::from(status)));
        fields.insert(
            "reason".into(),
            interlock_core::one_line::one_line(text.trim(), 300).into(),
        );
        if let Err(e) = self.gw.engine().record(WITNESS_REFUSED, fields).await {
            tracing::error!("could not record the witness's refusal: {e}");
        }
    }
}

fn number(n: u64) -> Value {
    i64::try_from(n)
        .ok()
        .and_then(Number::from_i64)
        .map_or(Value::Null, Value::Number)
}
