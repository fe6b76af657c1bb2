//! The permits: actions whose effect happens elsewhere, once their plan has
//! run.
//!
//! - `hook.permit` (issue 40): a coding agent's held tool use. The tool runs
//!   in the agent's own client, not here.
//! - `llm.permit` (issue 42): a held request to a model. The LLM proxy sends
//!   it when the agent's waiting or retried request finds the plan run.
//!
//! Running the approved plan is what consumes its one approval (the
//! engine's compare-and-swap), and its outcome tells the waiting request to
//! go on, once. So each executor acts on nothing; it checks the stage names
//! what it must and records the binding the approval covered.

use async_trait::async_trait;
use interlock_canon::{Map, Value};
use interlock_core::Stage;

use crate::{ExecError, ExecOutcome, Executor};

/// The executor of `hook.permit` stages.
#[derive(Clone, Copy, Debug, Default)]
pub struct HookPermit;

fn text<'a>(params: &'a Map, key: &str) -> Result<&'a str, ExecError> {
    params
        .get(key)
        .and_then(Value::as_str)
        .ok_or_else(|| ExecError::InvalidParams(format!("`{key}` (a string) is required")))
}

#[async_trait]
impl Executor for HookPermit {
    fn actions(&self) -> Vec<&'static str> {
        vec!["hook.permit"]
    }

    async fn execute(&self, stage: &Stage) -> Result<ExecOutcome, ExecError> {
        let client = text(&stage.params, "client")?;
        let tool = text(&stage.params, "tool")?;
        let binding = text(&stage.params, "binding_hash")?;
        if !binding.starts_with("sha256:") {
            return Err(ExecError::InvalidParams(
                "`binding_hash` must be a `sha256:` digest".into(),
            ));
        }
        let mut detail = Map::new();
        detail.insert("client".into(), client.into());
        detail.insert("tool".into(), tool.into());
        detail.insert("binding_hash".into(), binding.into());
        Ok(ExecOutcome {
            summary: format!("{client} may run its {tool} use once (binding {binding})"),
            detail: Value::Object(detail),
            output: None,
        })
    }
}

/// The executor of `llm.permit` stages.
#[derive(Clone, Copy, Debug, Default)]
pub struct LlmPermit;

#[async_trait]
impl Executor for LlmPermit {
    fn actions(&self) -> Vec<&'static str> {
        vec!["llm.permit"]
    }

    async fn execute(&self, stage: &Stage) -> Result<ExecOutcome, ExecError> {
        let provider = text(&stage.params, "provider")?;
        let model = text(&stage.params, "model")?;
        let binding = text(&stage.params, "binding_hash")?;
        if !binding.starts_with("sha256:") {
            return Err(ExecError::InvalidParams(
                "`binding_hash` must be a `sha256:` digest".into(),
            ));
        }
        let mut detail = Map::new();
        detail.insert("provider".into(), provider.into());
        detail.insert("model".into(), model.into());
        detail.insert("binding_hash".into(), binding.into());
        Ok(ExecOutcome {
            summary: format!(
                "the request (binding {binding}) may be sent to {model} at {provider} once"
            ),
            detail: Value::Object(detail),
            output: None,
        })
    }
}
