//! The registry of actions a stage may perform and probes a check may run.
//!
//! The registry is what makes "known actions" and "typed preconditions" checkable
//! without touching infrastructure: it names each action, says whether it mutates
//! state (which decides whether rollback and preconditions are mandatory), how risky
//! it is, and the shape of its parameters. Executors and probers (in the engine) must
//! implement exactly what is registered here.

use std::collections::BTreeMap;

use std::borrow::Cow;

use crate::canon::Value;
use crate::expect::ValueType;
use crate::risk_level::RiskLevel;

/// The JSON type a parameter must have.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParamType {
    String,
    /// A number without a fractional part, within ±(2^53−1).
    Integer,
    Number,
    Boolean,
    /// An array whose items are all strings (an argv, a list of hosts).
    StringList,
    Object,
    /// Any JSON value (e.g. the arguments of an MCP tool call).
    Any,
}

impl ParamType {
    /// The name used in policy files and error messages.
    pub fn name(self) -> &'static str {
        match self {
            ParamType::String => "string",
            ParamType::Integer => "integer",
            ParamType::Number => "number",
            ParamType::Boolean => "boolean",
            ParamType::StringList => "string-list",
            ParamType::Object => "object",
            ParamType::Any => "any",
        }
    }

    /// Parses the name used in policy files.
    pub fn from_name(name: &str) -> Option<ParamType> {
        Some(match name {
            "string" => ParamType::String,
            "integer" => ParamType::Integer,
            "number" => ParamType::Number,
            "boolean" => ParamType::Boolean,
            "string-list" => ParamType::StringList,
            "object" => ParamType::Object,
            "any" => ParamType::Any,
            _ => return None,
        })
    }

    /// Whether `value` has this type.
    pub fn accepts(self, value: &Value) -> bool {
        match self {
            ParamType::String => matches!(value, Value::String(_)),
            ParamType::Integer => value.as_number().and_then(|n| n.as_i64()).is_some(),
            ParamType::Number => matches!(value, Value::Number(_)),
            ParamType::Boolean => matches!(value, Value::Bool(_)),
            ParamType::StringList => value
                .as_array()
                .is_some_and(|items| items.iter().all(|i| matches!(i, Value::String(_)))),
            ParamType::Object => matches!(value, Value::Object(_)),
            ParamType::Any => true,
        }
    }
}

/// One named parameter of an action or probe.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParamSpec {
    pub name: String,
    pub ty: ParamType,
    pub required: bool,
}

impl ParamSpec {
    pub fn required(name: &str, ty: ParamType) -> ParamSpec {
        ParamSpec {
            name: name.to_owned(),
            ty,
            required: true,
        }
    }

    pub fn optional(name: &str, ty: ParamType) -> ParamSpec {
        ParamSpec {
            name: name.to_owned(),
            ty,
            required: false,
        }
    }
}

/// A registered action: what a stage may do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ActionSpec {
    pub name: String,
    /// Mutating actions must carry preconditions and a rollback.
    pub mutating: bool,
    pub risk: RiskLevel,
    pub description: String,
    /// `None` leaves the parameters open (a deployment's own action that does not
    /// declare them); `Some` rejects missing required and unknown parameters.
    pub params: Option<Vec<ParamSpec>>,
    /// The upstream MCP tool that performs this action (issue 23 item 5): a
    /// deployment's own action without Rust code. Part of the policy digest, so an
    /// approval names which tool does the work.
    pub mcp: Option<McpBinding>,
}

/// A registered probe: how a precondition or verify check is observed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProbeSpec {
    pub name: String,
    pub description: String,
    pub params: Option<Vec<ParamSpec>>,
    /// What the probe observes, when it returns a typed value: a check of it then
    /// needs an `expect` (issue 23 item 2).
    pub returns: Option<ValueType>,
    /// The upstream MCP tool (read-only) that observes this probe's state.
    pub mcp: Option<McpBinding>,
}

/// An action or probe served by a tool of an approved upstream MCP server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct McpBinding {
    /// The upstream server's name in the gateway's config.
    pub server: String,
    /// The upstream's own tool name.
    pub tool: String,
}

/// What a stage whose action is not registered is (issue 23 item 4).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum UnknownAction {
    /// It is an error (the default): only registered actions can be reviewed.
    #[default]
    Reject,
    /// It is treated as a mutating action of high risk (so it needs a rollback and
    /// preconditions); its parameters are open.
    Mutating,
    /// It is treated as a non-mutating action of medium risk (unknown is never
    /// low); its parameters are open.
    Read,
}

impl UnknownAction {
    pub fn name(self) -> &'static str {
        match self {
            UnknownAction::Reject => "reject",
            UnknownAction::Mutating => "mutating",
            UnknownAction::Read => "read",
        }
    }

    pub fn from_name(name: &str) -> Option<UnknownAction> {
        Some(match name {
            "reject" => UnknownAction::Reject,
            "mutating" => UnknownAction::Mutating,
            "read" => UnknownAction::Read,
            _ => return None,
        })
    }
}

/// The actions and probes a deployment knows about.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Registry {
    actions: BTreeMap<String, ActionSpec>,
    probes: BTreeMap<String, ProbeSpec>,
    /// What an unregistered action is.
    pub unknown_action: UnknownAction,
}

impl Default for Registry {
    fn default() -> Self {
        Registry::builtin()
    }
}

impl Registry {
    /// An empty registry: nothing is known.
    pub fn empty() -> Registry {
        Registry {
            actions: BTreeMap::new(),
            probes: BTreeMap::new(),
            unknown_action: UnknownAction::Reject,
        }
    }

    /// The actions and probes that ship with Interlock's built-in adapters
    /// (filesystem, argv commands, HTTP, MCP tool calls).
    pub fn builtin() -> Registry {
        use ParamType::*;
        let mut r = Registry::empty();
        let action =
            |name: &str, mutating, risk, description: &str, params: Vec<ParamSpec>| ActionSpec {
                name: name.to_owned(),
                mutating,
                risk,
                description: description.to_owned(),
                params: Some(params),
                mcp: None,
            };
        for spec in [
            action(
                "fs.write_file",
                true,
                RiskLevel::Medium,
                "Write `content` to the file at the target path, creating or replacing it.",
                vec![
                    ParamSpec::required("content", String),
                    ParamSpec::optional("mode", Integer),
                ],
            ),
            action(
                "fs.ensure_absent",
                true,
                RiskLevel::High,
                "Remove the file or empty directory at the target path if it exists.",
                vec![],
            ),
            action(
                "fs.make_dir",
                true,
                RiskLevel::Low,
                "Create the directory at the target path (and missing parents).",
                vec![ParamSpec::optional("mode", Integer)],
            ),
            action(
                "fs.read_file",
                false,
                RiskLevel::Low,
                "Read the file at the target path.",
                vec![ParamSpec::optional("max_bytes", Integer)],
            ),
            action(
                "cmd.run",
                true,
                RiskLevel::High,
                "Run an allow-listed program (the target) with `argv`, without a shell.",
                vec![
                    ParamSpec::required("argv", StringList),
                    ParamSpec::optional("cwd", String),
                    ParamSpec::optional("timeout_ms", Integer),
                ],
            ),
            action(
                "http.get",
                false,
                RiskLevel::Low,
                "GET the target URL.",
                vec![ParamSpec::optional("headers", Object)],
            ),
            action(
                "http.request",
                true,
                RiskLevel::High,
                "Send an HTTP request with `method` to the target URL.",
                vec![
                    ParamSpec::required("method", String),
                    ParamSpec::optional("headers", Object),
                    ParamSpec::optional("body", Any),
                ],
            ),
            action(
                "mcp.call_tool",
                true,
                RiskLevel::High,
                "Call `tool` on the upstream MCP server named by the target, with `arguments`.",
                vec![
                    ParamSpec::required("tool", String),
                    ParamSpec::optional("arguments", Object),
                ],
            ),
            action(
                "hook.permit",
                false,
                RiskLevel::Medium,
                "Let a coding agent's client run its own tool use once: the one whose `client`, \
                 `tool`, exact input and `cwd` hash to `binding_hash` (issue 40). The gateway \
                 changes nothing itself; the client runs the tool when its retried hook is \
                 answered allow.",
                vec![
                    ParamSpec::required("client", String),
                    ParamSpec::required("tool", String),
                    ParamSpec::required("binding_hash", String),
                    ParamSpec::required("cwd", String),
                    ParamSpec::optional("input", Any),
                    // What the gateway assessed the use at: it raises the
                    // plan's risk (a notification approves only low and
                    // medium), never lowers it below this action's.
                    ParamSpec::optional("risk", String),
                ],
            ),
            action(
                "llm.permit",
                false,
                RiskLevel::Medium,
                "Let the LLM proxy send one held request to its model once: the one whose exact \
                 bytes hash to `binding_hash`, from the agent that proposed it (issue 42). The \
                 gateway relays it when the agent's waiting or retried request finds the plan \
                 run; `request` is the request a reviewer reads.",
                vec![
                    ParamSpec::required("provider", String),
                    ParamSpec::required("model", String),
                    ParamSpec::required("binding_hash", String),
                    ParamSpec::optional("request", Any),
                    // Which layer stopped it and why (never a rule's match).
                    ParamSpec::optional("layer", String),
                    ParamSpec::optional("reason", String),
                    // As `hook.permit`'s: raises the plan's risk, never
                    // lowers it below the action's.
                    ParamSpec::optional("risk", String),
                ],
            ),
        ] {
            r.add_action(spec);
        }
        let probe = |name: &str, description: &str, params: Vec<ParamSpec>| ProbeSpec {
            name: name.to_owned(),
            description: description.to_owned(),
            params: Some(params),
            returns: None,
            mcp: None,
        };
        for spec in [
            probe("fs.path_exists", "The target path exists.", vec![]),
            probe(
                "fs.path_absent",
                "Nothing exists at the target path.",
                vec![],
            ),
            probe("fs.is_dir", "The target path is a directory.", vec![]),
            probe(
                "fs.file_sha256",
                "The file at the target path has this SHA-256 (`sha256:<hex>`).",
                vec![ParamSpec::required("sha256", String)],
            ),
            probe(
                "fs.file_contains",
                "The file at the target path contains `text`.",
                vec![ParamSpec::required("text", String)],
            ),
            probe(
                "cmd.exit_code",
                "Running the allow-listed program (the target) with `argv` exits with `code`.",
                vec![
                    ParamSpec::required("argv", StringList),
                    ParamSpec::required("code", Integer),
                ],
            ),
            probe(
                "http.status",
                "A GET of the target URL answers with `status`.",
                vec![ParamSpec::required("status", Integer)],
            ),
            probe(
                "mcp.tool_result",
                "A read-only call of `tool` on the MCP server named by the target succeeds \
                 (and, with `contains`, its text result contains it).",
                vec![
                    ParamSpec::required("tool", String),
                    ParamSpec::optional("arguments", Object),
                    ParamSpec::optional("contains", String),
                ],
            ),
            probe(
                "mcp.tool_pinned",
                "The MCP server named by the target still serves `tool` exactly as it was \
                 (its definition hashes to `tool_hash`).",
                vec![
                    ParamSpec::required("tool", String),
                    ParamSpec::required("tool_hash", String),
                ],
            ),
        ] {
            r.add_probe(spec);
        }
        r
    }

    /// Registers (or replaces) an action.
    pub fn add_action(&mut self, spec: ActionSpec) {
        self.actions.insert(spec.name.clone(), spec);
    }

    /// Registers (or replaces) a probe.
    pub fn add_probe(&mut self, spec: ProbeSpec) {
        self.probes.insert(spec.name.clone(), spec);
    }

    pub fn action(&self, name: &str) -> Option<&ActionSpec> {
        self.actions.get(name)
    }

    /// The action as plans are checked against it: registered, or what the
    /// `unknown_action` policy makes of an unregistered name (`None` under
    /// `reject`).
    pub fn resolve(&self, name: &str) -> Option<Cow<'_, ActionSpec>> {
        if let Some(spec) = self.actions.get(name) {
            return Some(Cow::Borrowed(spec));
        }
        let (mutating, risk) = match self.unknown_action {
            UnknownAction::Reject => return None,
            UnknownAction::Mutating => (true, RiskLevel::High),
            UnknownAction::Read => (false, RiskLevel::Medium),
        };
        Some(Cow::Owned(ActionSpec {
            name: name.to_owned(),
            mutating,
            risk,
            description: format!(
                "unregistered; treated as {} by the policy's `unknown_action`",
                self.unknown_action.name()
            ),
            params: None,
            mcp: None,
        }))
    }

    pub fn probe(&self, name: &str) -> Option<&ProbeSpec> {
        self.probes.get(name)
    }

    pub fn actions(&self) -> impl Iterator<Item = &ActionSpec> {
        self.actions.values()
    }

    pub fn probes(&self) -> impl Iterator<Item = &ProbeSpec> {
        self.probes.values()
    }
}

/// Checks `params` against `specs`, returning one message per problem
/// (`(param name, message)`), in a stable order.
pub fn check_params(specs: &[ParamSpec], params: &crate::canon::Map) -> Vec<(String, String)> {
    let mut problems = Vec::new();
    for spec in specs {
        match params.get(&spec.name) {
            None if spec.required => problems.push((
                spec.name.clone(),
                format!("missing required parameter `{}`", spec.name),
            )),
            Some(v) if !spec.ty.accepts(v) => problems.push((
                spec.name.clone(),
                format!(
                    "parameter `{}` must be {}, found {}",
                    spec.name,
                    spec.ty.name(),
                    v.kind()
                ),
            )),
            _ => {}
        }
    }
    for name in params.keys() {
        if !specs.iter().any(|s| &s.name == name) {
            problems.push((name.clone(), format!("unknown parameter `{name}`")));
        }
    }
    problems
}
