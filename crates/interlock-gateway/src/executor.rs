//! Plans that act through MCP: the `mcp.call_tool` action and the
//! `mcp.tool_result` probe, performed on the gateway's upstream connections —
//! and every action and probe the policy binds to an upstream tool (`mcp:
//! {server, tool}`, issue 23 item 5), which is how a deployment brings its own
//! executor without Rust: the tool is called with the stage's (or check's)
//! params as its arguments plus `target` (the string, or the object target as
//! written); a bound probe's tool must be read-only, and a probe that declares
//! `returns` reads its value from `structuredContent.value` (else the whole
//! `structuredContent`, else the text).
//!
//! A stage's target is an upstream server's name; `tool` is the upstream's own
//! tool name. The same pinning rules as for agents apply: the server must be
//! trusted and the tool served (an approved plan does not outlive a drift of the
//! tool it calls). A probe may only call a tool that claims `readOnlyHint`:
//! observing live state must not change it.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use interlock_adapters::{ExecError, ExecOutcome, Executor, ProbeOutcome, Prober};
use interlock_canon::{self as canon, Map, Value};
use interlock_core::{Check, McpBinding, ProbeValue, Registry, Stage, ValueType};
use interlock_surface::Hint;
use serde_json::value::RawValue;

use crate::upstream::UpstreamError;
use crate::upstream::table::Upstreams;
use interlock_trust::pins::ServedSurfaces;

/// Why a plan's call of an upstream tool was not made or failed.
#[derive(Debug, thiserror::Error)]
pub enum McpCallError {
    #[error("no upstream server `{0}`")]
    NoServer(String),
    /// Not served now (pending, drift held or quarantined): the pinning message.
    #[error("{0}")]
    NotServed(String),
    #[error(
        "`{server}` tool `{tool}` does not claim readOnlyHint; a probe must not change what it observes"
    )]
    NotReadOnly { server: String, tool: String },
    #[error("upstream `{0}` is not connected")]
    NotConnected(String),
    #[error("`{server}` answered an error: {error}")]
    Rpc { server: String, error: String },
    #[error("`{server}`: {error}")]
    Upstream {
        server: String,
        error: UpstreamError,
    },
    #[error("`{server}` answered non-JSON: {error}")]
    NotJson {
        server: String,
        error: serde_json::Error,
    },
}

/// The adapter: calls tools on the gateway's upstream connections, under
/// the same pinning rules as agents' calls. It holds the upstreams and the
/// served-surface table, not the gateway (which holds the engine, which holds
/// this adapter): made by [`Prepared::mcp_adapter`] before the engine opens.
///
/// [`Prepared::mcp_adapter`]: crate::start::Prepared::mcp_adapter
#[derive(Clone)]
pub struct McpAdapter {
    upstreams: Arc<Upstreams>,
    served: ServedSurfaces,
    timeout: Duration,
    /// The policy's MCP-bound actions, by name.
    actions: Arc<BTreeMap<String, McpBinding>>,
    /// The policy's MCP-bound probes, by name, with what each returns.
    probes: Arc<BTreeMap<String, (McpBinding, Option<ValueType>)>>,
}

impl McpAdapter {
    pub(crate) fn new(
        upstreams: Arc<Upstreams>,
        served: ServedSurfaces,
        timeout: Duration,
    ) -> McpAdapter {
        McpAdapter {
            upstreams,
            served,
            timeout,
            actions: Arc::default(),
            probes: Arc::default(),
        }
    }

    /// This adapter, also serving every action and probe `registry` binds to an
    /// upstream tool. Register it for [`McpAdapter::bound_actions`] and
    /// [`McpAdapter::bound_probes`] as well as its built-in names.
    pub fn bound_to(mut self, registry: &Registry) -> McpAdapter {
        self.actions = Arc::new(
            registry
                .actions()
                .filter_map(|a| a.mcp.clone().map(|b| (a.name.clone(), b)))
                .collect(),
        );
        self.probes = Arc::new(
            registry
                .probes()
                .filter_map(|p| p.mcp.clone().map(|b| (p.name.clone(), (b, p.returns))))
                .collect(),
        );
        self
    }

    /// The names of the policy's MCP-bound actions.
    pub fn bound_actions(&self) -> Vec<String> {
        self.actions.keys().cloned().collect()
    }

    /// The names of the policy's MCP-bound probes.
    pub fn bound_probes(&self) -> Vec<String> {
        self.probes.keys().cloned().collect()
    }

    async fn call(
        &self,
        server: &str,
        tool: &str,
        arguments: Option<&Value>,
        read_only: bool,
    ) -> Result<(Box<RawValue>, serde_json::Value), McpCallError> {
        let view = self
            .served
            .view(server)
            .ok_or_else(|| McpCallError::NoServer(server.to_owned()))?;
        view.check(tool)
            .map_err(|why| McpCallError::NotServed(why.message(server, tool)))?;
        if read_only {
            let annotations = view
                .observed
                .as_ref()
                .and_then(|s| s.tool(tool))
                .and_then(|t| t.field("annotations"));
            if !Hint::ReadOnly.effective(annotations) {
                return Err(McpCallError::NotReadOnly {
                    server: server.to_owned(),
                    tool: tool.to_owned(),
                });
            }
        }
        let conn = self
            .upstreams
            .get(server)
            .and_then(|u| u.connection())
            .ok_or_else(|| McpCallError::NotConnected(server.to_owned()))?;
        let mut params = Map::new();
        params.insert("name".into(), tool.into());
        params.insert(
            "arguments".into(),
            arguments.cloned().unwrap_or(Value::Object(Map::new())),
        );
        let raw = RawValue::from_string(canon::canonical_string(&Value::Object(params)))
            .expect("canonical JSON is JSON");
        let result = conn
            .request("tools/call", Some(&raw), self.timeout)
            .await
            .map_err(|e| match e {
                UpstreamError::Rpc(err) => McpCallError::Rpc {
                    server: server.to_owned(),
                    error: err.get().to_owned(),
                },
                error => McpCallError::Upstream {
                    server: server.to_owned(),
                    error,
                },
            })?;
        let parsed = serde_json::from_str(result.get()).map_err(|error| McpCallError::NotJson {
            server: server.to_owned(),
            error,
        })?;
        Ok((result, parsed))
    }

    fn pinned(&self, server: &str, tool: &str, tool_hash: &str) -> ProbeOutcome {
        let Some(view) = self.served.view(server) else {
            return ProbeOutcome::Unprobeable {
                reason: McpCallError::NoServer(server.to_owned()).to_string(),
            };
        };
        if let Err(why) = view.check(tool) {
            return ProbeOutcome::Unmet {
                observed: why.message(server, tool),
            };
        }
        let now = view
            .observed
            .as_ref()
            .and_then(|s| s.tool(tool))
            .map(|t| t.hash().to_string())
            .unwrap_or_default();
        ProbeOutcome::from_bool(now == tool_hash, format!("`{tool}` is served at {now}"))
    }
}

/// The text content of a tool result, joined.
fn text_of(result: &serde_json::Value) -> String {
    result["content"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c["text"].as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

/// A bound tool's arguments: the params, plus `target` as written in the plan.
fn bound_arguments(params: &Map, target: Value) -> Value {
    let mut args = params.clone();
    args.insert("target".into(), target);
    Value::Object(args)
}

/// The target a bound tool is given: the object target as written, or the string.
fn target_value(target: &str, object: Option<&interlock_core::ObjectTarget>) -> Value {
    match object {
        None => target.into(),
        Some(o) => {
            let mut m = o.fields.clone();
            m.insert("kind".into(), o.kind.as_str().into());
            m.insert("id".into(), o.id.as_str().into());
            Value::Object(m)
        }
    }
}

/// A bound probe's typed value, from its tool's result.
fn probe_value(ty: ValueType, result: &serde_json::Value) -> Result<ProbeValue, String> {
    let structured = &result["structuredContent"];
    let picked = match structured.get("value") {
        Some(v) => Some(v),
        None if !structured.is_null() => Some(structured),
        None => None,
    };
    match picked {
        Some(v) => canon::from_serde_json(v)
            .map_err(|e| e.to_string())
            .and_then(|v| ProbeValue::from_value(ty, &v).map_err(|e| e.to_string())),
        None => ProbeValue::from_text(ty, &text_of(result)).map_err(|e| e.to_string()),
    }
}

fn param_str<'a>(params: &'a Map, key: &str) -> Option<&'a str> {
    params.get(key).and_then(Value::as_str)
}

#[async_trait]
impl Executor for McpAdapter {
    fn actions(&self) -> Vec<&'static str> {
        vec!["mcp.call_tool"]
    }

    async fn execute(&self, stage: &Stage) -> Result<ExecOutcome, ExecError> {
        let bound = self.actions.get(&stage.action);
        let (server, tool, arguments) = match bound {
            Some(b) => (
                b.server.as_str(),
                b.tool.as_str(),
                Some(bound_arguments(
                    &stage.params,
                    target_value(&stage.target, stage.target_object.as_ref()),
                )),
            ),
            None => (
                stage.target.as_str(),
                param_str(&stage.params, "tool").ok_or_else(|| {
                    ExecError::InvalidParams("`tool` (a string) is required".into())
                })?,
                stage.params.get("arguments").cloned(),
            ),
        };
        let (raw, result) = self
            .call(server, tool, arguments.as_ref(), false)
            .await
            .map_err(|e| ExecError::Forbidden(e.to_string()))?;
        let text = text_of(&result);
        let digest = canon::from_serde_json(&result)
            .map(|v| canon::digest(&v).to_string())
            .unwrap_or_default();
        if result["isError"] == serde_json::Value::Bool(true) {
            return Err(ExecError::Io(format!(
                "`{server}` tool `{tool}` reported an error: {}",
                text.chars().take(300).collect::<String>()
            )));
        }
        let mut detail = Map::new();
        detail.insert("server".into(), server.into());
        detail.insert("tool".into(), tool.into());
        detail.insert("result_sha256".into(), digest.into());
        detail.insert(
            "text".into(),
            text.chars().take(1024).collect::<String>().into(),
        );
        Ok(ExecOutcome {
            summary: format!(
                "called `{tool}` on `{server}`: {}",
                text.lines()
                    .next()
                    .unwrap_or("")
                    .chars()
                    .take(120)
                    .collect::<String>()
            ),
            detail: Value::Object(detail),
            // The tool's own result, as the upstream sent it, for the agent
            // whose held call this plan is.
            output: Some(raw.get().to_owned()),
        })
    }
}

#[async_trait]
impl Prober for McpAdapter {
    fn probes(&self) -> Vec<&'static str> {
        vec!["mcp.tool_result", "mcp.tool_pinned"]
    }

    async fn probe(&self, check: &Check, target: &str) -> ProbeOutcome {
        if let Some((binding, returns)) = self.probes.get(&check.probe) {
            let args = bound_arguments(
                &check.params,
                target_value(target, check.target_object.as_ref()),
            );
            // Always read-only: observing live state must not change it.
            return match self
                .call(&binding.server, &binding.tool, Some(&args), true)
                .await
            {
                Err(e) => ProbeOutcome::Unprobeable {
                    reason: e.to_string(),
                },
                Ok((_, result)) if result["isError"] == serde_json::Value::Bool(true) => {
                    ProbeOutcome::Unprobeable {
                        reason: format!(
                            "`{}` tool `{}` reported an error: {}",
                            binding.server,
                            binding.tool,
                            text_of(&result).chars().take(200).collect::<String>()
                        ),
                    }
                }
                Ok((_, result)) => {
                    let observed = format!("`{}` tool `{}`", binding.server, binding.tool);
                    match returns {
                        None => ProbeOutcome::Met { observed },
                        Some(ty) => match probe_value(*ty, &result) {
                            Ok(value) => ProbeOutcome::Value { value, observed },
                            // Fail closed: a value that cannot be read is unmet.
                            Err(why) => ProbeOutcome::Unmet {
                                observed: format!("{observed} answered no {ty}: {why}"),
                            },
                        },
                    }
                }
            };
        }
        let Some(tool) = param_str(&check.params, "tool") else {
            return ProbeOutcome::Unprobeable {
                reason: "`tool` (a string) is required".into(),
            };
        };
        if check.probe == "mcp.tool_pinned" {
            let Some(hash) = param_str(&check.params, "tool_hash") else {
                return ProbeOutcome::Unprobeable {
                    reason: "`tool_hash` (a string) is required".into(),
                };
            };
            return self.pinned(target, tool, hash);
        }
        match self
            .call(target, tool, check.params.get("arguments"), true)
            .await
        {
            Err(e) => ProbeOutcome::Unprobeable {
                reason: e.to_string(),
            },
            Ok((_, result)) => {
                let text = text_of(&result);
                let ok = result["isError"] != serde_json::Value::Bool(true)
                    && param_str(&check.params, "contains").is_none_or(|c| text.contains(c));
                ProbeOutcome::from_bool(ok, text.chars().take(200).collect::<String>())
            }
        }
    }
}
