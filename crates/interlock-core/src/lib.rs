//! Interlock's pure core: what a plan is, what the policy allows, which invariants a
//! plan must keep, and what a reviewer's signed decision says.
//!
//! This crate (with `interlock-canon` and `interlock-merkle`, which it re-exports) is
//! the only place that computes a hash that gets signed. It does no I/O and has no
//! async: time, randomness and keys come in as arguments, so every function here is
//! deterministic and can be checked by another implementation from the docs alone.
#![forbid(unsafe_code)]

pub mod decision;
pub mod expect;
pub mod extension;
pub mod invariants;
pub mod one_line;
pub mod plan;
pub mod policy;
pub mod registry;
pub mod risk;
pub mod risk_level;
pub mod rollback;
pub mod schema;
pub mod secrets;
pub mod target;
pub mod time;
pub mod violation;

pub use interlock_canon as canon;
pub use interlock_merkle as merkle;

pub use canon::{Digest, Value};
pub use decision::{
    ApprovalStatement, Decision, DecisionError, Envelope as DsseEnvelope, Expectation, KeyId,
    Signer, Terms, TrustedKeys, sign_decision, verify_decision,
};
pub use expect::{ExpectOp, Expectation as CheckExpectation, ProbeValue, Unevaluable, ValueType};
pub use invariants::{
    CustomInvariant, InvariantId, ValidatedPlan, Violation, Violations, validate,
};
pub use plan::{Check, Plan, PlanBody, PlanSchema, Rollback, RollbackOf, Stage};
pub use policy::{Policy, SchemaExtension};
pub use registry::{
    ActionSpec, McpBinding, ParamSpec, ParamType, ProbeSpec, Registry, UnknownAction,
};
pub use risk::{Risk, RiskLevel};
pub use target::{ObjectTarget, TargetKind};
