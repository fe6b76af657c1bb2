//! Canonical hashes of tools and surfaces.
//!
//! A tool is hashed over all of its fields as listed (unknown ones included),
//! as RFC 8785 canonical JSON, so reordered object keys never change a hash.
//! Normalizations applied first, each for a difference that changes nothing a
//! tool can do (so it is no drift at all, and never asks for re-approval):
//! - inside `inputSchema` and `outputSchema`, every JSON Schema `required`
//!   array of strings is sorted and deduplicated, at any depth (servers
//!   re-emit it in varying order); so are `enum` values and `type` lists, and
//!   `anyOf` / `oneOf` / `allOf` branches are sorted (their order carries no
//!   meaning to a validator);
//! - white space in prose (the tool's `description` and `title`, the
//!   annotations' `title`, schema `description` / `title` strings, and the
//!   server's instructions) is collapsed: runs of white space become one
//!   space, ends are trimmed.
//!
//! Schema *data* keywords (`const`, `default`, `enum`, `examples`) are not
//! descended into: a `required` key or a string there is data.

use interlock_canon::{Digest, Map, Value};

use crate::surface::{Surface, Tool};
use crate::text::collapse_whitespace;

/// The tool's hash: the digest of its normalized object.
pub fn tool_hash(tool: &Tool) -> Digest {
    tool.hash()
}

/// The server's hash: the digest of
/// `{"instructions": string|null, "tools": {name: "sha256:…", …}}`, plus
/// `"prompts"`, `"resources"` and `"resourceTemplates"` maps (key → entry
/// hash) for the kinds with pinned entries, and `"launch"` (how a `command`
/// server is started) when pinned. A kind without entries adds no
/// member, so a server that lists no prompts (or does not pin them) keeps
/// the hash it had before prompts were pinned, and its approval stands.
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
            .map_or(Value::Null, |s| Value::from(collapse_whitespace(s))),
    );
    m.insert("tools".into(), Value::Object(tools));
    for kind in crate::content::ContentKind::ALL {
        let entries: Map = surface
            .contents_of(kind)
            .map(|c| (c.key().to_owned(), Value::String(c.hash().to_string())))
            .collect();
        if !entries.is_empty() {
            m.insert(kind.list_key().into(), Value::Object(entries));
        }
    }
    // A `command` server's launch (issue 38): absent for HTTP servers, so
    // their hashes are as before.
    if let Some(launch) = surface.launch() {
        m.insert("launch".into(), launch.clone());
    }
    interlock_canon::digest(&Value::Object(m))
}

/// What a reviewer's signed removal of a server binds (issue 20 item 5):
/// the digest of `{"server": NAME, "transport": ...}` — the server's name
/// and how it is reached (`{"kind": "stdio", "command", "args"}` or
/// `{"kind": "http", "url"}`, never its env values or headers, which may be
/// secrets). So a removal signed for one server cannot remove a server of
/// the same name that runs something else.
pub fn removal_hash(name: &str, transport: &Value) -> Digest {
    let mut m = Map::new();
    m.insert("server".into(), name.into());
    m.insert("transport".into(), transport.clone());
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
    for key in ["description", "title"] {
        collapse_in(m.get_mut(key));
    }
    if let Some(Value::Object(a)) = m.get_mut("annotations") {
        collapse_in(a.get_mut("title"));
    }
    m
}

fn collapse_in(v: Option<&mut Value>) {
    if let Some(Value::String(s)) = v {
        let c = collapse_whitespace(s);
        if c != *s {
            *s = c;
        }
    }
}

fn sort_canonically(items: &mut [Value]) {
    items.sort_by_cached_key(interlock_canon::canonical_string);
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
                if k == "enum"
                    && let Value::Array(items) = child
                {
                    // The values are data, but the set's order is not.
                    sort_canonically(items);
                    continue;
                }
                if DATA_KEYWORDS.contains(&k.as_str()) {
                    continue;
                }
                if matches!(k.as_str(), "description" | "title") && child.as_str().is_some() {
                    collapse_in(Some(child));
                    continue;
                }
                if k == "type"
                    && let Value::Array(items) = child
                {
                    sort_canonically(items);
                    continue;
                }
                if matches!(k.as_str(), "anyOf" | "oneOf" | "allOf")
                    && let Value::Array(items) = child
                {
                    items.iter_mut().for_each(normalize_schema);
                    sort_canonically(items);
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
