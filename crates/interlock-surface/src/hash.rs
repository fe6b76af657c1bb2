//! Canonical hashes of tools and surfaces.
//!
//! A tool is hashed over all of its fields as listed (unknown ones included),
//! as RFC 8785 canonical JSON, so reordered object keys never change a hash.
//! One normalization is applied first: inside `inputSchema` and `outputSchema`,
//! every JSON Schema `required` array of strings is sorted and deduplicated, at
//! any depth, because its order and repetitions carry no meaning and servers
//! re-emit it in varying order. Schema *data* keywords (`const`, `default`,
//! `enum`, `examples`) are not descended into: a `required` key there is data.

use interlock_canon::{Digest, Map, Value};

use crate::surface::{Surface, Tool};

/// The tool's hash: the digest of its normalized object.
pub fn tool_hash(tool: &Tool) -> Digest {
    tool.hash()
}

/// The server's hash: the digest of
/// `{"instructions": string|null, "tools": {name: "sha256:…", …}}`.
pub fn surface_hash(surface: &Surface) -> Digest {
    let tools: Map = surface
        .tools()
        .iter()
        .map(|(name, t)| (name.clone(), Value::String(t.hash().to_string())))
        .collect();
    let mut m = Map::new();
    m.insert(
        "instructions".into(),
        surface
            .instructions
            .as_deref()
            .map_or(Value::Null, Value::from),
    );
    m.insert("tools".into(), Value::Object(tools));
    interlock_canon::digest(&Value::Object(m))
}

/// The tool object as hashed and compared: `required` arrays in its schemas
/// sorted and deduplicated (see the module docs).
pub fn normalize_tool(raw: &Map) -> Map {
    let mut m = raw.clone();
    for key in ["inputSchema", "outputSchema"] {
        if let Some(s) = m.get_mut(key) {
            normalize_schema(s);
        }
    }
    m
}

const DATA_KEYWORDS: [&str; 4] = ["const", "default", "enum", "examples"];
const MAP_KEYWORDS: [&str; 5] = [
    "properties",
    "patternProperties",
    "$defs",
    "definitions",
    "dependentSchemas",
];

fn normalize_schema(v: &mut Value) {
    match v {
        Value::Object(m) => {
            for (k, child) in m.iter_mut() {
                if DATA_KEYWORDS.contains(&k.as_str()) {
                    continue;
                }
                if k == "required"
                    && let Value::Array(items) = child
                    && items.iter().all(|i| matches!(i, Value::String(_)))
                {
                    items.sort_by(|a, b| a.as_str().cmp(&b.as_str()));
                    items.dedup();
                    continue;
                }
                if MAP_KEYWORDS.contains(&k.as_str()) {
                    // name → schema: the names are not keywords.
                    if let Value::Object(named) = child {
                        named.values_mut().for_each(normalize_schema);
                        continue;
                    }
                }
                normalize_schema(child);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(normalize_schema),
        _ => {}
    }
}
