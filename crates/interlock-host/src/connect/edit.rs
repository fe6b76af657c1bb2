//! Reading a client's file and writing it back with only Interlock's changes:
//! the imported entries removed and the gateway's entry added, everything
//! else — other settings, comments, member order, indentation — as it was.
//!
//! JSON and JSONC go through `jsonc-parser`'s concrete syntax tree, TOML
//! through `toml_edit`; both edit in place instead of re-serialising a parsed
//! value, which would drop comments and reorder members the user owns.

use jsonc_parser::ParseOptions;
use jsonc_parser::cst::{CstInputValue, CstRootNode};
use serde_json::Value;

use super::clients::{Client, Syntax};

/// A client's file, parsed, ready to be edited.
pub(crate) enum Doc {
    Json {
        root: CstRootNode,
        container: String,
    },
    Toml(toml_edit::DocumentMut),
}

/// An entry's members, in the order they are written.
pub(crate) type Members = Vec<(String, Value)>;

/// Why a file could not be read as its client's syntax.
#[derive(Debug)]
pub(crate) struct Malformed {
    pub format: &'static str,
    pub message: String,
}

impl Doc {
    /// Parses `text` as `client` writes it, returning the document and its
    /// server entries (name, value as JSON) in file order.
    pub fn parse(client: Client, text: &str) -> Result<(Doc, Vec<(String, Value)>), Malformed> {
        match client.syntax() {
            Syntax::Json | Syntax::Jsonc => {
                let jsonc = client.syntax() == Syntax::Jsonc;
                let format = if jsonc { "JSON with comments" } else { "JSON" };
                let bad = |message: String| Malformed { format, message };
                // Plain-JSON clients refuse comments and trailing commas:
                // so does this, rather than write a file the client rejects.
                let options = ParseOptions {
                    allow_comments: jsonc,
                    allow_trailing_commas: jsonc,
                    allow_loose_object_property_names: false,
                    allow_missing_commas: false,
                    allow_single_quoted_strings: false,
                    allow_hexadecimal_numbers: false,
                    allow_unary_plus_numbers: false,
                    ..ParseOptions::default()
                };
                if !jsonc {
                    // serde_json is the strict reference for plain JSON.
                    serde_json::from_str::<Value>(text).map_err(|e| bad(e.to_string()))?;
                }
                let root = CstRootNode::parse(text, &options).map_err(|e| bad(e.to_string()))?;
                let Some(obj) = root.object_value() else {
                    return Err(bad("the top level is not an object".into()));
                };
                let container = client.container();
                let mut entries = Vec::new();
                if let Some(prop) = obj.get(container) {
                    let Some(servers) = prop.object_value() else {
                        return Err(bad(format!("`{container}` is not an object")));
                    };
                    for p in servers.properties() {
                        let name = p
                            .name()
                            .and_then(|n| n.decoded_value().ok())
                            .ok_or_else(|| bad(format!("a name in `{container}` is unreadable")))?;
                        let value =
                            p.value().and_then(|v| v.to_serde_value()).ok_or_else(|| {
                                bad(format!("`{container}.{name}` has no readable value"))
                            })?;
                        entries.push((name, value));
                    }
                }
                Ok((
                    Doc::Json {
                        root,
                        container: container.to_owned(),
                    },
                    entries,
                ))
            }
            Syntax::Toml => {
                let bad = |message: String| Malformed {
                    format: "TOML",
                    message,
                };
                let doc: toml_edit::DocumentMut = text
                    .parse()
                    .map_err(|e: toml_edit::TomlError| bad(e.to_string().trim_end().to_owned()))?;
                let container = client.container();
                let mut entries = Vec::new();
                if let Some(item) = doc.get(container) {
                    let Some(servers) = item.as_table_like() else {
                        return Err(bad(format!("`{container}` is not a table")));
                    };
                    for (name, item) in servers.iter() {
                        entries.push((name.to_owned(), toml_to_json(item)));
                    }
                }
                Ok((Doc::Toml(doc), entries))
            }
        }
    }

    /// Removes the entries named `remove` and appends those of `add` (each
    /// with its members in this order); returns the new text.
    pub fn rewrite(self, remove: &[String], add: Vec<(String, Members)>) -> String {
        match self {
            Doc::Json { root, container } => {
                let obj = root.object_value_or_set();
                let servers = obj.object_value_or_set(&container);
                for p in servers.properties() {
                    if p.name()
                        .and_then(|n| n.decoded_value().ok())
                        .is_some_and(|n| remove.contains(&n))
                    {
                        remove_with_its_comments(p);
                    }
                }
                for (name, members) in add {
                    let value = members
                        .into_iter()
                        .map(|(k, v)| (k, cst_value(&v)))
                        .collect::<Vec<_>>();
                    servers.append(&name, CstInputValue::Object(value));
                }
                root.to_string()
            }
            Doc::Toml(mut doc) => {
                let container = Client::Codex.container();
                if doc.get(container).is_none() {
                    let mut t = toml_edit::Table::new();
                    t.set_implicit(true);
                    doc.insert(container, toml_edit::Item::Table(t));
                }
                let servers = doc
                    .get_mut(container)
                    .and_then(|i| i.as_table_like_mut())
                    .expect("checked when parsed");
                for name in remove {
                    servers.remove(name);
                }
                for (name, members) in add {
                    let mut t = toml_edit::Table::new();
                    for (k, v) in &members {
                        t.insert(k, toml_edit::Item::Value(json_to_toml(v)));
                    }
                    servers.insert(&name, toml_edit::Item::Table(t));
                }
                doc.to_string()
            }
        }
    }
}

/// Removes a member with the comments on their own lines right above it
/// (they describe it: TOML's `toml_edit` drops a table's comments with it
/// too), keeping a trailing comment of the line before and anything past a
/// blank line.
fn remove_with_its_comments(p: jsonc_parser::cst::CstObjectProp) {
    let prev: Vec<jsonc_parser::cst::CstNode> = p.previous_siblings().collect();
    let (mut i, mut cut, mut newlines) = (0, 0, 0);
    while let Some(n) = prev.get(i) {
        if n.is_whitespace() {
            i += 1;
        } else if n.is_newline() {
            newlines += 1;
            if newlines > 1 {
                break;
            }
            i += 1;
        } else if n.is_comment() {
            let mut j = i + 1;
            while prev.get(j).is_some_and(|n| n.is_whitespace()) {
                j += 1;
            }
            if !prev.get(j).is_none_or(|n| n.is_newline()) {
                break;
            }
            newlines = 0;
            i += 1;
            cut = i;
        } else {
            break;
        }
    }
    let comments: Vec<_> = prev
        .into_iter()
        .take(cut)
        .filter(|n| n.is_comment())
        .collect();
    p.remove();
    // Each comment's whole line: the newline and indentation before it too.
    for c in comments {
        if let Some(ws) = c.previous_sibling().filter(|n| n.is_whitespace()) {
            ws.remove();
        }
        if let Some(nl) = c.previous_sibling().filter(|n| n.is_newline()) {
            nl.remove();
        }
        c.remove();
    }
}

/// A JSON value as the concrete syntax tree's input (it lays it out in the
/// file's own indentation).
pub(crate) fn cst_value(v: &Value) -> CstInputValue {
    match v {
        Value::Null => CstInputValue::Null,
        Value::Bool(b) => CstInputValue::Bool(*b),
        Value::Number(n) => CstInputValue::Number(n.to_string()),
        Value::String(s) => CstInputValue::String(s.clone()),
        Value::Array(a) => CstInputValue::Array(a.iter().map(cst_value).collect()),
        Value::Object(m) => {
            CstInputValue::Object(m.iter().map(|(k, v)| (k.clone(), cst_value(v))).collect())
        }
    }
}

/// A TOML item read as JSON (for reading entries; dates become strings).
pub(crate) fn toml_to_json(item: &toml_edit::Item) -> Value {
    match item {
        toml_edit::Item::None => Value::Null,
        toml_edit::Item::Value(v) => toml_value_to_json(v),
        toml_edit::Item::Table(t) => Value::Object(
            t.iter()
                .map(|(k, v)| (k.to_owned(), toml_to_json(v)))
                .collect(),
        ),
        toml_edit::Item::ArrayOfTables(a) => Value::Array(
            a.iter()
                .map(|t| toml_to_json(&toml_edit::Item::Table(t.clone())))
                .collect(),
        ),
    }
}

fn toml_value_to_json(v: &toml_edit::Value) -> Value {
    match v {
        toml_edit::Value::String(s) => Value::String(s.value().clone()),
        toml_edit::Value::Integer(i) => Value::from(*i.value()),
        toml_edit::Value::Float(f) => {
            serde_json::Number::from_f64(*f.value()).map_or(Value::Null, Value::Number)
        }
        toml_edit::Value::Boolean(b) => Value::Bool(*b.value()),
        toml_edit::Value::Datetime(d) => Value::String(d.value().to_string()),
        toml_edit::Value::Array(a) => Value::Array(a.iter().map(toml_value_to_json).collect()),
        toml_edit::Value::InlineTable(t) => Value::Object(
            t.iter()
                .map(|(k, v)| (k.to_owned(), toml_value_to_json(v)))
                .collect(),
        ),
    }
}

/// A JSON value as a TOML value (strings, booleans, numbers, arrays and
/// objects as inline tables: all the gateway's entry holds).
pub(crate) fn json_to_toml(v: &Value) -> toml_edit::Value {
    match v {
        Value::Null => toml_edit::Value::from(""),
        Value::Bool(b) => toml_edit::Value::from(*b),
        Value::Number(n) => match n.as_i64() {
            Some(i) => toml_edit::Value::from(i),
            None => toml_edit::Value::from(n.as_f64().unwrap_or_default()),
        },
        Value::String(s) => toml_edit::Value::from(s.as_str()),
        Value::Array(a) => {
            toml_edit::Value::Array(a.iter().map(json_to_toml).collect::<toml_edit::Array>())
        }
        Value::Object(m) => {
            let mut t = toml_edit::InlineTable::new();
            for (k, v) in m {
                t.insert(k, json_to_toml(v));
            }
            toml_edit::Value::InlineTable(t)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// What Interlock does not own stays byte for byte: comments, other
    /// members, their order.
    #[test]
    fn jsonc_edits_keep_comments_and_other_members() {
        let text = "{\n  // my editor settings\n  \"inputs\": [],\n  \"servers\": {\n    // the one I use\n    \"a\": { \"command\": \"x\" },\n    \"keep\": { \"command\": \"${workspaceFolder}/y\" }, // trailing\n  },\n}\n";
        let (doc, entries) = Doc::parse(Client::VsCode, text).unwrap();
        assert_eq!(entries.len(), 2);
        let out = doc.rewrite(
            &["a".to_owned()],
            vec![(
                "interlock".to_owned(),
                vec![
                    ("type".to_owned(), json!("http")),
                    ("url".to_owned(), json!("u")),
                ],
            )],
        );
        assert!(out.contains("// my editor settings") && out.contains("\"inputs\": []"));
        assert!(out.contains("\"keep\": { \"command\": \"${workspaceFolder}/y\" }, // trailing"));
        assert!(!out.contains("\"a\":"), "{out}");
        assert!(
            !out.contains("the one I use"),
            "the removed entry's comment stayed: {out}"
        );
        assert!(
            out.contains("  \"servers\": {\n    \"keep\": { \"command\""),
            "{out}"
        );
        let (_, after) = Doc::parse(Client::VsCode, &out).unwrap();
        let names: Vec<_> = after.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["keep", "interlock"], "{out}");
    }

    #[test]
    fn plain_json_clients_refuse_comments_and_toml_keeps_them() {
        assert!(Doc::parse(Client::Cursor, "{ // no\n}").is_err());
        assert!(Doc::parse(Client::Cursor, "{\"mcpServers\": []}").is_err());
        let text = "model = \"o3\" # mine\n\n# servers\n[mcp_servers.a]\ncommand = \"x\"\n\n[mcp_servers.b] # keep me\nurl = \"https://b/mcp\"\n";
        let (doc, entries) = Doc::parse(Client::Codex, text).unwrap();
        assert_eq!(entries[1].1, json!({"url": "https://b/mcp"}));
        let out = doc.rewrite(
            &["a".to_owned()],
            vec![(
                "interlock".to_owned(),
                vec![
                    ("url".to_owned(), json!("u")),
                    (
                        "http_headers".to_owned(),
                        json!({"Authorization": "Bearer k"}),
                    ),
                ],
            )],
        );
        assert!(out.starts_with("model = \"o3\" # mine\n"), "{out}");
        // A comment above a removed table goes with it (it is that table's).
        assert!(out.contains("[mcp_servers.b] # keep me\n"), "{out}");
        assert!(
            out.contains("[mcp_servers.interlock]\nurl = \"u\"\nhttp_headers = { Authorization = \"Bearer k\" }"),
            "{out}"
        );
        assert!(!out.contains("[mcp_servers.a]"), "{out}");
    }
}
