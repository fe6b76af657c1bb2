//! This gateway's learned fingerprints ([`interlock_llm::fingerprint`]): the
//! cache, loaded from the store on first use, and what the judge teaches it,
//! kept in the cache and in the store (so a restarted
//! gateway, or another on the same database, starts knowing it).

use std::sync::Mutex;

use interlock_llm::fingerprint::{Known, Learned};
use interlock_llm::judge::JudgeVerdict;
use tokio::sync::OnceCell;

use super::config::JudgeConfig;
use crate::gateway::Gateway;

static LEARNED: OnceCell<Mutex<Learned>> = OnceCell::const_new();

fn now_secs() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}

async fn learned(gw: &Gateway, judge: &JudgeConfig) -> &'static Mutex<Learned> {
    LEARNED
        .get_or_init(|| async {
            let mut cache = Learned::new(judge.learn_max as usize);
            match gw
                .engine()
                .store()
                .learned_fingerprints(now_secs(), judge.learn_max)
                .await
            {
                // Newest first from the store; learned oldest first here.
                Ok(rows) => {
                    for r in rows.into_iter().rev() {
                        cache.learn(
                            r.fingerprint,
                            Known {
                                is_unsafe: r.is_unsafe,
                                category: r.category,
                                reason: r.reason,
                                expires_at: r.expires_at,
                            },
                        );
                    }
                }
                Err(e) => {
                    tracing::warn!(error = %e, "learned fingerprints could not be loaded; starting empty")
                }
            }
            Mutex::new(cache)
        })
        .await
}

/// The verdict known for `fp`, if any and not expired.
pub async fn lookup(gw: &Gateway, judge: &JudgeConfig, fp: &str) -> Option<Known> {
    if judge.learn_secs == 0 {
        return None;
    }
    let cache = learned(gw, judge).await;
    cache
        .lock()
        .expect("fingerprints lock")
        .get(fp, now_secs())
        .cloned()
}

/// Learns the judge's `verdict` on the request `fp` names.
pub async fn learn(gw: &Gateway, judge: &JudgeConfig, fp: String, verdict: &JudgeVerdict) {
    if judge.learn_secs == 0 {
        return;
    }
    let now = now_secs();
    let (is_unsafe, category, reason) = match verdict {
        JudgeVerdict::Safe => (false, "none".to_owned(), String::new()),
        JudgeVerdict::Unsafe { category, reason } => (true, category.clone(), reason.clone()),
    };
    let expires_at = now.saturating_add(i64::try_from(judge.learn_secs).unwrap_or(i64::MAX));
    let row = interlock_store::LearnedVerdict {
        fingerprint: fp.clone(),
        is_unsafe,
        category: category.clone(),
        reason: reason.clone(),
        learned_at: now,
        expires_at,
    };
    learned(gw, judge)
        .await
        .lock()
        .expect("fingerprints lock")
        .learn(
            fp,
            Known {
                is_unsafe,
                category,
                reason,
                expires_at,
            },
        );
    // One small write after the judge's round trip, which dwarfs it; a
    // failure costs only the memory of it after a restart.
    if let Err(e) = gw.engine().store().learn_fingerprint(&row).await {
        tracing::warn!(error = %e, "a learned fingerprint could not be stored");
    }
}
