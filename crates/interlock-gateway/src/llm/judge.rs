//! Asking the judge ([`interlock_llm::judge`]): its request to the provider
//! serving `[llm.judge] model`, within `timeout_ms`, behind the circuit
//! breaker. The breaker is this process's (one gateway a process), and its
//! state is shown in `/metrics`.

use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use interlock_llm::ChatRequest;
use interlock_llm::judge::{Breaker, BreakerState, JudgeError, JudgeVerdict};

use super::config::{JudgeConfig, LlmConfig};

/// What asking the judge came to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Judged {
    Verdict(JudgeVerdict),
    Failed(JudgeError),
    /// Not asked: the breaker is open.
    BreakerOpen,
}

impl Judged {
    /// A stable name for the leaf.
    pub fn name(&self) -> &'static str {
        match self {
            Judged::Verdict(JudgeVerdict::Safe) => "safe",
            Judged::Verdict(JudgeVerdict::Unsafe { .. }) => "unsafe",
            Judged::Failed(e) => e.kind(),
            Judged::BreakerOpen => "breaker_open",
        }
    }
}

/// The breaker and the clock it reads (milliseconds since it was made).
struct Guard {
    breaker: Breaker,
    epoch: Instant,
}

fn guard(judge: &JudgeConfig) -> &'static Mutex<Guard> {
    static GUARD: OnceLock<Mutex<Guard>> = OnceLock::new();
    GUARD.get_or_init(|| {
        Mutex::new(Guard {
            breaker: Breaker::new(
                judge.breaker_failures,
                judge.breaker_open_secs.saturating_mul(1000),
            ),
            epoch: Instant::now(),
        })
    })
}

fn now_ms(g: &Guard) -> u64 {
    u64::try_from(g.epoch.elapsed().as_millis()).unwrap_or(u64::MAX)
}

/// The breaker's state and its consecutive failures, if a judge is set.
pub fn breaker(config: &LlmConfig) -> Option<(BreakerState, u32)> {
    let judge = config.judge.as_ref()?;
    let g = guard(judge).lock().expect("breaker lock");
    Some((g.breaker.state(now_ms(&g)), g.breaker.failures()))
}

/// Asks the judge about `req`, unless the breaker is open.
pub async fn ask(config: &LlmConfig, judge: &JudgeConfig, req: &ChatRequest) -> Judged {
    {
        let mut g = guard(judge).lock().expect("breaker lock");
        let now = now_ms(&g);
        if !g.breaker.try_acquire(now) {
            return Judged::BreakerOpen;
        }
    }
    let outcome = call(config, judge, req).await;
    let mut g = guard(judge).lock().expect("breaker lock");
    let now = now_ms(&g);
    match &outcome {
        Ok(_) => g.breaker.record_success(),
        Err(_) => g.breaker.record_failure(now),
    }
    match outcome {
        Ok(v) => Judged::Verdict(v),
        Err(e) => Judged::Failed(e),
    }
}

async fn call(
    config: &LlmConfig,
    judge: &JudgeConfig,
    req: &ChatRequest,
) -> Result<JudgeVerdict, JudgeError> {
    let (name, provider) = config
        .provider_for(&judge.model)
        .ok_or_else(|| JudgeError::Provider(format!("no provider serves {}", judge.model)))?;
    let body = interlock_llm::judge::judge_request(&judge.model, req).to_string();
    let timeout = Duration::from_millis(judge.timeout_ms);
    let answered = async {
        let response =
            super::provider::send(name, provider, (&judge.model, false), body.into(), timeout)
                .await?;
        let status = response.status();
        let bytes = response
            .bytes()
            .await
            .map_err(|e| super::provider::ProviderError {
                provider: name.to_owned(),
                message: e.to_string(),
                timed_out: e.is_timeout(),
            })?;
        Ok::<_, super::provider::ProviderError>((status, bytes))
    };
    // The whole answer within the time, whatever the client's own timer does.
    let (status, bytes) = match tokio::time::timeout(timeout, answered).await {
        Err(_) => return Err(JudgeError::Timeout(judge.timeout_ms)),
        Ok(Err(e)) if e.timed_out => return Err(JudgeError::Timeout(judge.timeout_ms)),
        Ok(Err(e)) => return Err(JudgeError::Provider(e.to_string())),
        Ok(Ok(answer)) => answer,
    };
    if !status.is_success() {
        return Err(JudgeError::Provider(format!(
            "the provider {name} answered HTTP {}",
            status.as_u16()
        )));
    }
    interlock_llm::judge::parse_verdict(&bytes)
}
