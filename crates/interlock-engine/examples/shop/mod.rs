//! A deployment's own executor and prober, in process: a toy "shop" of services
//! with replica counts and versions. Shared by the `embedded_executor` example and
//! the engine's seed-style test, so the example is what the test runs.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use interlock_adapters::{ExecError, ExecOutcome, Executor, ProbeOutcome, Prober};
use interlock_core::canon::{Map, Value};
use interlock_core::{
    ActionSpec, Check, ParamSpec, ParamType, ProbeSpec, ProbeValue, RiskLevel, Stage, ValueType,
};

#[derive(Clone, Debug)]
pub struct Service {
    pub replicas: i64,
    pub version: String,
}

/// The live state the adapters act on and observe.
#[derive(Clone, Default)]
pub struct Shop(pub Arc<Mutex<BTreeMap<String, Service>>>);

impl Shop {
    /// checkout runs 1.4.2 with 2 replicas; payments runs 1.9.0 with 1.
    pub fn seeded() -> Shop {
        let shop = Shop::default();
        for (id, replicas, version) in [("checkout", 2, "1.4.2"), ("payments", 1, "1.9.0")] {
            shop.0.lock().unwrap().insert(
                id.into(),
                Service {
                    replicas,
                    version: version.into(),
                },
            );
        }
        shop
    }

    pub fn get(&self, id: &str) -> Option<Service> {
        self.0.lock().unwrap().get(id).cloned()
    }

    /// The registry entries of what this shop serves (the seed-style policy
    /// declares the same, bound to an MCP server instead).
    pub fn actions() -> [ActionSpec; 2] {
        [
            ActionSpec {
                name: "svc.scale".into(),
                mutating: true,
                risk: RiskLevel::Medium,
                description: "Set a service's replica count.".into(),
                params: Some(vec![ParamSpec::required("replicas", ParamType::Integer)]),
                mcp: None,
            },
            ActionSpec {
                name: "svc.migrate".into(),
                mutating: true,
                risk: RiskLevel::High,
                description: "Migrate a service's schema to version `to`.".into(),
                params: Some(vec![ParamSpec::required("to", ParamType::String)]),
                mcp: None,
            },
        ]
    }

    pub fn probes() -> [ProbeSpec; 2] {
        [
            ProbeSpec {
                name: "svc.healthy_replicas".into(),
                description: "How many of the service's replicas are healthy.".into(),
                params: Some(vec![]),
                returns: Some(ValueType::Number),
                mcp: None,
            },
            ProbeSpec {
                name: "svc.version".into(),
                description: "The version the service runs.".into(),
                params: Some(vec![]),
                returns: Some(ValueType::Version),
                mcp: None,
            },
        ]
    }
}

fn detail(service: &str, what: &str, value: Value) -> Value {
    let mut m = Map::new();
    m.insert("service".into(), service.into());
    m.insert(what.into(), value);
    Value::Object(m)
}

#[async_trait]
impl Executor for Shop {
    fn actions(&self) -> Vec<&'static str> {
        vec!["svc.scale", "svc.migrate"]
    }

    async fn execute(&self, stage: &Stage) -> Result<ExecOutcome, ExecError> {
        // An object target's id names the service; its kind was checked against the
        // policy's declared schema before anyone approved the plan.
        let id = stage.target.as_str();
        let mut services = self.0.lock().unwrap();
        let service = services
            .get_mut(id)
            .ok_or_else(|| ExecError::InvalidParams(format!("no service `{id}`")))?;
        match stage.action.as_str() {
            "svc.scale" => {
                let n = stage.params.get("replicas").and_then(Value::as_number);
                let n = n.and_then(|n| n.as_i64()).ok_or_else(|| {
                    ExecError::InvalidParams("`replicas` (an integer) is required".into())
                })?;
                service.replicas = n;
                Ok(ExecOutcome {
                    summary: format!("scaled `{id}` to {n} replicas"),
                    detail: detail(id, "replicas", stage.params["replicas"].clone()),
                    output: None,
                })
            }
            "svc.migrate" => {
                let to = stage
                    .params
                    .get("to")
                    .and_then(Value::as_str)
                    .ok_or_else(|| {
                        ExecError::InvalidParams("`to` (a string) is required".into())
                    })?;
                service.version = to.to_owned();
                Ok(ExecOutcome {
                    summary: format!("migrated `{id}` to {to}"),
                    detail: detail(id, "version", to.into()),
                    output: None,
                })
            }
            other => Err(ExecError::Unsupported(other.to_owned())),
        }
    }
}

#[async_trait]
impl Prober for Shop {
    fn probes(&self) -> Vec<&'static str> {
        vec!["svc.healthy_replicas", "svc.version"]
    }

    async fn probe(&self, check: &Check, target: &str) -> ProbeOutcome {
        let Some(service) = self.get(target) else {
            return ProbeOutcome::Unprobeable {
                reason: format!("no service `{target}`"),
            };
        };
        let value = match check.probe.as_str() {
            "svc.healthy_replicas" => ProbeValue::Number(service.replicas as f64),
            "svc.version" => match ProbeValue::from_text(ValueType::Version, &service.version) {
                Ok(v) => v,
                Err(e) => {
                    return ProbeOutcome::Unprobeable {
                        reason: e.to_string(),
                    };
                }
            },
            other => {
                return ProbeOutcome::Unprobeable {
                    reason: format!("unknown probe `{other}`"),
                };
            }
        };
        ProbeOutcome::Value {
            value,
            observed: format!("service `{target}`"),
        }
    }
}
