//! [`Surface`] and [`Tool`]: what one MCP server exposes.

use std::collections::BTreeMap;

use interlock_canon::{Digest, Map, Value};

use crate::hash;

/// Why a `tools/list` result is not a surface.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SurfaceError {
    /// The result is neither `{"tools": [...]}` nor an array of tools.
    #[error("tools/list result must be an object with a \"tools\" array (found {found})")]
    NotAToolsList {
        /// JSON type found.
        found: &'static str,
    },
    /// `tools[index]` is not an object.
    #[error("tools[{index}] is not an object (found {found})")]
    ToolNotObject {
        /// Position in the `tools` array.
        index: usize,
        /// JSON type found.
        found: &'static str,
    },
    /// `tools[index]` has no `name`, or a non-string one.
    #[error("tools[{index}] has no string \"name\"")]
    MissingName {
        /// Position in the `tools` array.
        index: usize,
    },
    /// `tools[index].name` is the empty string.
    #[error("tools[{index}] has an empty \"name\"")]
    EmptyName {
        /// Position in the `tools` array.
        index: usize,
    },
    /// Two tools share a name.
    #[error("duplicate tool name {name:?} (tools[{first}] and tools[{second}])")]
    DuplicateName {
        /// The name.
        name: String,
        /// Position of the first tool with it.
        first: usize,
        /// Position of the second.
        second: usize,
    },
}

/// One tool, exactly as the server listed it (all fields, unknown ones too),
/// with its normalized form and hash computed once at construction.
#[derive(Clone, Debug, PartialEq)]
pub struct Tool {
    name: String,
    /// `None` when normalization changed nothing (the common case).
    raw: Option<Map>,
    /// Always a `Value::Object`.
    normalized: Value,
    hash: Digest,
}

impl Tool {
    /// A tool from its JSON object. `index` is only used in errors.
    pub fn from_value(v: &Value, index: usize) -> Result<Tool, SurfaceError> {
        let raw = v.as_object().ok_or(SurfaceError::ToolNotObject {
            index,
            found: v.kind(),
        })?;
        let name = raw
            .get("name")
            .and_then(Value::as_str)
            .ok_or(SurfaceError::MissingName { index })?;
        if name.is_empty() {
            return Err(SurfaceError::EmptyName { index });
        }
        let normalized = hash::normalize_tool(raw);
        let raw = (normalized != *raw).then(|| raw.clone());
        let normalized = Value::Object(normalized);
        let hash = interlock_canon::digest(&normalized);
        Ok(Tool {
            name: name.to_owned(),
            raw,
            normalized,
            hash,
        })
    }

    /// The tool's `name`.
    pub fn name(&self) -> &str {
        &self.name
    }
    /// The object as listed.
    pub fn raw(&self) -> &Map {
        self.raw.as_ref().unwrap_or_else(|| self.normalized())
    }
    /// The object as hashed and compared (see [`hash::normalize_tool`]).
    pub fn normalized(&self) -> &Map {
        self.normalized
            .as_object()
            .expect("a tool is an object by construction")
    }
    /// A field of the normalized object (`description`, `inputSchema`, …).
    pub fn field(&self, key: &str) -> Option<&Value> {
        self.normalized().get(key)
    }
    /// `description`, if a string.
    pub fn description(&self) -> Option<&str> {
        self.field("description").and_then(Value::as_str)
    }
    /// [`crate::tool_hash`] of this tool.
    pub fn hash(&self) -> Digest {
        self.hash
    }
}

/// The surface of one MCP server: its instructions and its tools by name.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Surface {
    /// The `instructions` of the server's `initialize` result.
    pub instructions: Option<String>,
    tools: BTreeMap<String, Tool>,
}

impl Surface {
    /// A surface from a `tools/list` result (`{"tools": [...], "nextCursor"?: …}`;
    /// a bare array of tools is accepted too, for pages already concatenated)
    /// and the server's instructions.
    pub fn from_tools_list(
        result: &Value,
        instructions: Option<&str>,
    ) -> Result<Surface, SurfaceError> {
        let tools = match result {
            Value::Array(a) => a.as_slice(),
            Value::Object(m) => match m.get("tools") {
                Some(Value::Array(a)) => a.as_slice(),
                Some(other) => {
                    return Err(SurfaceError::NotAToolsList {
                        found: other.kind(),
                    });
                }
                None => {
                    return Err(SurfaceError::NotAToolsList {
                        found: "object without \"tools\"",
                    });
                }
            },
            other => {
                return Err(SurfaceError::NotAToolsList {
                    found: other.kind(),
                });
            }
        };
        let mut by_name: BTreeMap<String, (usize, Tool)> = BTreeMap::new();
        for (index, v) in tools.iter().enumerate() {
            let tool = Tool::from_value(v, index)?;
            if let Some((first, _)) = by_name.get(tool.name()) {
                return Err(SurfaceError::DuplicateName {
                    name: tool.name().to_owned(),
                    first: *first,
                    second: index,
                });
            }
            by_name.insert(tool.name().to_owned(), (index, tool));
        }
        Ok(Surface {
            instructions: instructions.map(str::to_owned),
            tools: by_name.into_iter().map(|(k, (_, t))| (k, t)).collect(),
        })
    }

    /// A surface from tools already built (a later one wins on a name clash).
    pub fn from_tools(
        instructions: Option<String>,
        tools: impl IntoIterator<Item = Tool>,
    ) -> Surface {
        Surface {
            instructions,
            tools: tools.into_iter().map(|t| (t.name.clone(), t)).collect(),
        }
    }

    /// The tools, by name.
    pub fn tools(&self) -> &BTreeMap<String, Tool> {
        &self.tools
    }
    /// One tool.
    pub fn tool(&self, name: &str) -> Option<&Tool> {
        self.tools.get(name)
    }
    /// This surface with `tool` in it (replacing a tool of the same name): a
    /// reviewer's approval of one tool's definition.
    pub fn with_tool(mut self, tool: Tool) -> Surface {
        self.tools.insert(tool.name.clone(), tool);
        self
    }
    /// `{"instructions": …|null, "tools": [raw tool, …]}` (tools sorted by
    /// name), for storing a baseline; [`Surface::from_tools_list`] with its
    /// `instructions` rebuilds the same surface.
    pub fn to_value(&self) -> Value {
        let mut m = Map::new();
        m.insert(
            "instructions".into(),
            self.instructions
                .as_deref()
                .map_or(Value::Null, Value::from),
        );
        m.insert(
            "tools".into(),
            Value::Array(
                self.tools
                    .values()
                    .map(|t| Value::Object(t.raw().clone()))
                    .collect(),
            ),
        );
        Value::Object(m)
    }
}
