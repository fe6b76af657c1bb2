//! [`Surface`] and [`Tool`]: what one MCP server exposes.

use std::collections::BTreeMap;

use interlock_canon::{Digest, Map, Value};

use crate::content::{Content, ContentKind, ContentRef};
use crate::hash;

pub use crate::error::SurfaceError;

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

/// The surface of one MCP server: its instructions, its tools by name, and
/// the prompts, resources and resource templates pinned with them (empty
/// when the server lists none or they are not pinned: see [`crate::content`]).
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Surface {
    /// The `instructions` of the server's `initialize` result.
    pub instructions: Option<String>,
    tools: BTreeMap<String, Tool>,
    content: BTreeMap<ContentRef, Content>,
    /// How a `command` server is started — command, arguments, environment
    /// names, working directory, sandbox — pinned with what it lists
    /// (issue 38): the same name running something else is not the server
    /// that was approved. `None` for an HTTP server.
    launch: Option<Value>,
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
            content: BTreeMap::new(),
            launch: None,
        })
    }

    /// This surface with the entries of one listing pinned (a
    /// `prompts/list`, `resources/list` or `resources/templates/list`
    /// result's array, pages concatenated), replacing any of that kind.
    pub fn with_listing(
        mut self,
        kind: ContentKind,
        items: &[Value],
    ) -> Result<Surface, SurfaceError> {
        self.content.retain(|r, _| r.kind != kind);
        for (index, v) in items.iter().enumerate() {
            let c = Content::from_value(kind, v, index)?;
            let r = c.reference().clone();
            if self.content.contains_key(&r) {
                return Err(SurfaceError::DuplicateContent { kind, key: r.key });
            }
            self.content.insert(r, c);
        }
        Ok(self)
    }

    /// A surface as [`Surface::to_value`] stored it.
    pub fn from_stored(v: &Value) -> Result<Surface, SurfaceError> {
        let m = v
            .as_object()
            .ok_or(SurfaceError::NotAToolsList { found: v.kind() })?;
        let instructions = m.get("instructions").and_then(Value::as_str);
        let tools = m.get("tools").cloned().unwrap_or(Value::Array(Vec::new()));
        let mut s = Surface::from_tools_list(&tools, instructions)?;
        s.launch = m.get("launch").cloned();
        for kind in ContentKind::ALL {
            match m.get(kind.list_key()) {
                None => {}
                Some(Value::Array(items)) => s = s.with_listing(kind, items)?,
                Some(other) => {
                    return Err(SurfaceError::ContentNotAList {
                        kind,
                        found: other.kind(),
                    });
                }
            }
        }
        Ok(s)
    }

    /// A surface from tools already built (a later one wins on a name clash).
    pub fn from_tools(
        instructions: Option<String>,
        tools: impl IntoIterator<Item = Tool>,
    ) -> Surface {
        Surface {
            instructions,
            tools: tools.into_iter().map(|t| (t.name.clone(), t)).collect(),
            content: BTreeMap::new(),
            launch: None,
        }
    }

    /// The pinned prompts, resources and templates, by kind then key.
    pub fn contents(&self) -> &BTreeMap<ContentRef, Content> {
        &self.content
    }
    /// One pinned entry.
    pub fn content(&self, kind: ContentKind, key: &str) -> Option<&Content> {
        self.content.get(&ContentRef::new(kind, key))
    }
    /// The pinned entries of one kind.
    pub fn contents_of(&self, kind: ContentKind) -> impl Iterator<Item = &Content> {
        self.content.values().filter(move |c| c.kind() == kind)
    }

    /// How the server is started, as pinned (`None`: an HTTP server, or a
    /// surface pinned before launches were).
    pub fn launch(&self) -> Option<&Value> {
        self.launch.as_ref()
    }
    /// This surface with `launch` pinned in it.
    pub fn with_launch(mut self, launch: Option<Value>) -> Surface {
        self.launch = launch;
        self
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
    /// name), plus `"prompts"`, `"resources"` and `"resourceTemplates"`
    /// arrays when any is pinned (absent when empty, so a surface without
    /// them stores as it always did), for storing a baseline;
    /// [`Surface::from_stored`] rebuilds the same surface.
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
        for kind in ContentKind::ALL {
            let items: Vec<Value> = self
                .contents_of(kind)
                .map(|c| Value::Object(c.raw().clone()))
                .collect();
            if !items.is_empty() {
                m.insert(kind.list_key().into(), Value::Array(items));
            }
        }
        if let Some(launch) = &self.launch {
            m.insert("launch".into(), launch.clone());
        }
        Value::Object(m)
    }
}
