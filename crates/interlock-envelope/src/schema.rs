//! `structuredContent` against the approved `outputSchema` (MCP: a tool that
//! declares one must return structured content that conforms). Validation is
//! the `jsonschema` crate's, built without any way to fetch a remote `$ref`:
//! a schema that needs one does not compile, and the caller reports that.

use interlock_canon::Value;

use crate::finding::{EnvelopeFinding, FindingKind};

/// An approved `outputSchema`, compiled once per approved tool definition.
pub struct OutputSchema {
    validator: jsonschema::Validator,
}

/// An approved `outputSchema` that cannot be used to validate.
#[derive(Debug, thiserror::Error)]
#[error("the approved outputSchema does not compile: {0}")]
pub struct SchemaError(pub String);

/// The most validation errors a finding names.
const MAX_ERRORS: usize = 3;

impl OutputSchema {
    pub fn compile(schema: &Value) -> Result<OutputSchema, SchemaError> {
        let schema = interlock_canon::to_serde_json(schema);
        jsonschema::validator_for(&schema)
            .map(|validator| OutputSchema { validator })
            .map_err(|e| SchemaError(e.to_string()))
    }

    /// A finding when `result` (a tool result that is not an error) has no
    /// `structuredContent` or one that does not validate.
    pub fn check(&self, result: &serde_json::Value) -> Option<EnvelopeFinding> {
        if result.get("isError").and_then(serde_json::Value::as_bool) == Some(true) {
            return None;
        }
        let Some(structured) = result.get("structuredContent") else {
            return Some(EnvelopeFinding::new(
                FindingKind::OutputSchemaViolation,
                "the result has no structuredContent",
            ));
        };
        let errors: Vec<String> = self
            .validator
            .iter_errors(structured)
            .take(MAX_ERRORS)
            .map(|e| format!("{} at {}", e, e.instance_path()))
            .collect();
        (!errors.is_empty())
            .then(|| EnvelopeFinding::new(FindingKind::OutputSchemaViolation, &errors.join("; ")))
    }
}
