//! Fixtures modelled on `@modelcontextprotocol/server-everything`'s tools.
#![allow(dead_code)]

use interlock_canon::{Value, from_serde_json};
use interlock_surface::Surface;
use serde_json::json;

pub const INSTRUCTIONS: &str = "Testing and demonstration server for MCP protocol features.";

pub fn echo() -> serde_json::Value {
    json!({
        "name": "echo",
        "description": "Echoes back the input",
        "inputSchema": {
            "type": "object",
            "properties": { "message": { "type": "string", "description": "Message to echo", "maxLength": 1000 } },
            "required": ["message"],
            "additionalProperties": false,
            "$schema": "http://json-schema.org/draft-07/schema#"
        },
        "annotations": { "title": "Echo", "readOnlyHint": true, "destructiveHint": false, "idempotentHint": true, "openWorldHint": false }
    })
}

pub fn add() -> serde_json::Value {
    json!({
        "name": "add",
        "title": "Add",
        "description": "Adds two numbers",
        "inputSchema": {
            "type": "object",
            "properties": {
                "a": { "type": "number", "description": "First number" },
                "b": { "type": "number", "description": "Second number" }
            },
            "required": ["a", "b"],
            "additionalProperties": false,
            "$schema": "http://json-schema.org/draft-07/schema#"
        },
        "outputSchema": { "type": "object", "properties": { "sum": { "type": "number" } }, "required": ["sum"] },
        "annotations": { "readOnlyHint": true }
    })
}

pub fn long_running() -> serde_json::Value {
    json!({
        "name": "longRunningOperation",
        "description": "Demonstrates a long running operation with progress updates",
        "inputSchema": {
            "type": "object",
            "properties": {
                "duration": { "type": "number", "default": 10, "description": "Duration of the operation in seconds", "maximum": 60 },
                "steps": { "type": "integer", "default": 5, "description": "Number of steps in the operation", "minimum": 1 },
                "mode": { "type": "string", "enum": ["fast", "slow"] }
            },
            "additionalProperties": false,
            "$schema": "http://json-schema.org/draft-07/schema#"
        },
        "_meta": { "example.com/category": "demo" }
    })
}

pub fn tools() -> Vec<serde_json::Value> {
    vec![echo(), add(), long_running()]
}

pub fn value(j: &serde_json::Value) -> Value {
    from_serde_json(j).expect("valid I-JSON")
}

pub fn surface_of(tools: &[serde_json::Value], instructions: Option<&str>) -> Surface {
    Surface::from_tools_list(&value(&json!({ "tools": tools })), instructions)
        .expect("valid surface")
}

pub fn baseline() -> Surface {
    surface_of(&tools(), Some(INSTRUCTIONS))
}

/// The baseline with tool `name` edited by `f`.
pub fn edited(name: &str, f: impl FnOnce(&mut serde_json::Value)) -> Surface {
    let mut ts = tools();
    let t = ts.iter_mut().find(|t| t["name"] == name).expect("tool");
    f(t);
    surface_of(&ts, Some(INSTRUCTIONS))
}
