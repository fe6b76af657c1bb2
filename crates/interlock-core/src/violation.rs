//! What a broken rule is: which invariant, which stage, where, and why. Its own
//! module because the universal invariants ([`crate::invariants`]) and a
//! deployment's own ([`crate::policy::CustomInvariant`]) both report them.

use std::fmt;

/// The seven universal invariants of DESIGN.md §1, plus the deployment's own.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum InvariantId {
    /// The document matches the plan schema (and the policy's schema extensions).
    SchemaValid,
    /// A `plan_hash` the proposer states is the hash of the body.
    HashRecomputes,
    /// Stage ids are unique; every action and probe is registered, with the right
    /// parameters.
    StagesKnown,
    /// Every mutating stage describes its rollback.
    MutatingHasRollback,
    /// Every mutating stage has at least one precondition.
    MutatingHasPreconditions,
    /// No stage uses a forbidden action or touches a forbidden target.
    NothingForbidden,
    /// No secret appears anywhere in the body.
    NoSecrets,
    /// A [`crate::policy::CustomInvariant`] of the deployment, by name.
    Custom(String),
}

impl InvariantId {
    /// The stable name used in errors, logs and the API.
    pub fn name(&self) -> &str {
        match self {
            InvariantId::SchemaValid => "schema-valid",
            InvariantId::HashRecomputes => "hash-recomputes",
            InvariantId::StagesKnown => "unique-ids-known-actions",
            InvariantId::MutatingHasRollback => "mutating-has-rollback",
            InvariantId::MutatingHasPreconditions => "mutating-has-preconditions",
            InvariantId::NothingForbidden => "nothing-forbidden",
            InvariantId::NoSecrets => "no-secrets",
            InvariantId::Custom(name) => name,
        }
    }

    /// The universal invariants, in the order they are checked.
    pub const UNIVERSAL: [InvariantId; 7] = [
        InvariantId::SchemaValid,
        InvariantId::HashRecomputes,
        InvariantId::StagesKnown,
        InvariantId::MutatingHasRollback,
        InvariantId::MutatingHasPreconditions,
        InvariantId::NothingForbidden,
        InvariantId::NoSecrets,
    ];
}

impl fmt::Display for InvariantId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One broken rule: which invariant, which stage (if any), where, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation {
    pub invariant: InvariantId,
    pub stage: Option<String>,
    /// JSON path in the plan document.
    pub path: String,
    pub message: String,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "[{}]", self.invariant)?;
        if let Some(stage) = &self.stage {
            write!(f, " stage `{stage}`")?;
        }
        write!(f, " at {}: {}", self.path, self.message)
    }
}

/// Every violation of a rejected plan, in a stable order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violations(pub Vec<Violation>);

impl fmt::Display for Violations {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, v) in self.0.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{v}")?;
        }
        Ok(())
    }
}

impl std::error::Error for Violations {}

impl Violations {
    /// Whether any violation is of this invariant.
    pub fn has(&self, invariant: &InvariantId) -> bool {
        self.0.iter().any(|v| &v.invariant == invariant)
    }
}

impl Violation {
    /// A violation of a custom invariant named `name`.
    pub fn custom(name: &str, stage: Option<&str>, path: &str, message: &str) -> Violation {
        Violation {
            invariant: InvariantId::Custom(name.to_owned()),
            stage: stage.map(str::to_owned),
            path: path.to_owned(),
            message: message.to_owned(),
        }
    }
}
