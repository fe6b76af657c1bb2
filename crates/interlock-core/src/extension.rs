//! A deployment's own typed field ([`SchemaExtension`]): in a plan's body (a change
//! ticket) and in an object target's declared kind. Its own module because the plan,
//! the target and the policy all read it, and the policy reads the other two.

use regex::Regex;

use crate::canon::{self, Value};
use crate::registry::ParamType;

/// A deployment's own typed field in the plan body (e.g. a change ticket).
#[derive(Clone, Debug)]
pub struct SchemaExtension {
    pub name: String,
    pub ty: ParamType,
    pub required: bool,
    pub description: String,
    /// For strings: the whole value must match.
    pub pattern: Option<Regex>,
    /// If non-empty, the value must be one of these.
    pub allowed: Vec<Value>,
}

impl SchemaExtension {
    /// Checks one value of this field; the error is a full sentence.
    pub fn check(&self, value: &Value) -> Result<(), String> {
        if !self.ty.accepts(value) {
            return Err(format!(
                "`{}` must be {}, found {}",
                self.name,
                self.ty.name(),
                value.kind()
            ));
        }
        if let (Some(re), Value::String(s)) = (&self.pattern, value)
            && !re.is_match(s)
        {
            return Err(format!(
                "`{}` must match the pattern `{}`",
                self.name,
                re.as_str()
            ));
        }
        if !self.allowed.is_empty() && !self.allowed.contains(value) {
            return Err(format!(
                "`{}` must be one of {}",
                self.name,
                self.allowed
                    .iter()
                    .map(canon::canonical_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        Ok(())
    }
}
