//! One server entry of a client's file, read into what the gateway can run —
//! or the reason it stays where it is.
//!
//! Why so picky: an entry moved behind the gateway is run by the gateway, not
//! by the client, so anything only the client can supply (its variables such as
//! `${workspaceFolder}` or `${input:token}`, an env file, a token read from the
//! client's environment, a path relative to where the client runs) would make
//! the imported server fail or, worse, run differently. Such an entry is left
//! in the client untouched, and the preview says why.

use std::collections::BTreeMap;

use serde_json::Value;

use super::clients::Client;

/// What an entry becomes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Parsed {
    /// A server the gateway can run as an upstream.
    Run(Upstream),
    /// An entry that already reaches this gateway (a connect ran before).
    Gateway,
    /// Left in the client as it is, for this reason.
    Skip(String),
}

/// A server as the gateway will run it.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub(crate) struct Upstream {
    pub command: Option<String>,
    pub args: Vec<String>,
    pub cwd: Option<String>,
    pub env: BTreeMap<String, String>,
    pub url: Option<String>,
    pub headers: BTreeMap<String, String>,
    /// Its sandbox: the default (derived from its launch) for an imported
    /// entry; as asked for a server added at run time.
    pub sandbox: interlock_sandbox::Setting,
    /// The client's own settings for this entry (timeouts, trust, tool
    /// filters) that have no meaning behind the gateway.
    pub dropped: Vec<String>,
}

impl Upstream {
    /// `stdio: npx -y …` / `http: URL`, as `interlock servers` shows it.
    pub fn describe(&self) -> String {
        match (&self.command, &self.url) {
            (Some(c), _) => format!("stdio: {c} {}", self.args.join(" "))
                .trim_end()
                .to_owned(),
            (None, Some(u)) => format!("http: {u}"),
            (None, None) => String::new(),
        }
    }
}

/// Keys that say how to run the server, by client.
const RUN_KEYS: &[&str] = &[
    "command",
    "args",
    "env",
    "cwd",
    "url",
    "httpUrl",
    "serverUrl",
    "headers",
    "http_headers",
    "type",
    "transport",
    "disabled",
    "enabled",
];

/// Keys whose meaning only the client can supply.
const CLIENT_ONLY: &[(&str, &str)] = &[
    (
        "envFile",
        "its environment comes from an env file the client reads",
    ),
    (
        "env_vars",
        "it takes variables from the client's environment",
    ),
    (
        "bearer_token_env_var",
        "its token is read from the client's environment",
    ),
    (
        "env_http_headers",
        "its headers are read from the client's environment",
    ),
    ("oauth", "it signs in with OAuth through the client"),
    ("authProviderType", "it signs in through the client"),
];

/// Reads one entry of `client`'s file. `gateway_url` is this gateway's MCP
/// endpoint, so an entry that already reaches it is recognised.
pub(crate) fn parse(client: Client, value: &Value, gateway_url: &str) -> Parsed {
    let Some(obj) = value.as_object() else {
        return Parsed::Skip("not an object".into());
    };
    if obj.get("disabled") == Some(&Value::Bool(true))
        || obj.get("enabled") == Some(&Value::Bool(false))
    {
        return Parsed::Skip(format!("disabled in {client}; left as it is"));
    }
    let text = |k: &str| obj.get(k).and_then(Value::as_str).map(str::to_owned);
    let command = text("command");
    let args: Option<Vec<String>> = match obj.get("args") {
        None => Some(Vec::new()),
        Some(Value::Array(a)) => a.iter().map(|v| v.as_str().map(str::to_owned)).collect(),
        Some(_) => None,
    };
    let Some(args) = args else {
        return Parsed::Skip("`args` is not a list of strings".into());
    };
    // The entry that reaches this gateway, by URL or through the bridge.
    let url_keys = ["url", "httpUrl", "serverUrl"];
    if url_keys
        .iter()
        .any(|k| text(k).is_some_and(|u| same_url(&u, gateway_url)))
        || command.as_deref().is_some_and(|c| {
            std::path::Path::new(c).file_name() == Some("interlock".as_ref())
                && args.first().map(String::as_str) == Some("mcp")
        })
    {
        return Parsed::Gateway;
    }
    if let Some((k, why)) = CLIENT_ONLY.iter().find(|(k, _)| obj.contains_key(*k)) {
        return Parsed::Skip(format!("`{k}`: {why}"));
    }
    let kind = text("type").or_else(|| text("transport"));
    if matches!(kind.as_deref(), Some("sse")) {
        return Parsed::Skip(
            "an SSE server: the gateway reaches Streamable HTTP and stdio servers".into(),
        );
    }
    let url = match client {
        // Gemini CLI's `url` is an SSE endpoint; `httpUrl` is Streamable HTTP.
        Client::Gemini if obj.contains_key("url") && !obj.contains_key("httpUrl") => {
            return Parsed::Skip(
                "`url` is an SSE server in Gemini CLI: the gateway reaches Streamable HTTP \
                 (`httpUrl`) and stdio servers"
                    .into(),
            );
        }
        Client::Gemini => text("httpUrl"),
        Client::Windsurf => text("serverUrl").or_else(|| text("url")),
        _ => text("url"),
    };
    let map = |k: &str| -> Result<BTreeMap<String, String>, String> {
        match obj.get(k) {
            None | Some(Value::Null) => Ok(BTreeMap::new()),
            Some(Value::Object(m)) => m
                .iter()
                .map(|(n, v)| match v {
                    Value::String(s) => Ok((n.clone(), s.clone())),
                    _ => Err(format!("`{k}.{n}` is not a string")),
                })
                .collect(),
            Some(_) => Err(format!("`{k}` is not an object of strings")),
        }
    };
    let env = match map("env") {
        Ok(m) => m,
        Err(e) => return Parsed::Skip(e),
    };
    let headers_key = if client == Client::Codex {
        "http_headers"
    } else {
        "headers"
    };
    let headers = match map(headers_key) {
        Ok(m) => m,
        Err(e) => return Parsed::Skip(e),
    };
    let cwd = text("cwd");
    let up = Upstream {
        command,
        args,
        cwd,
        env,
        url,
        headers,
        // A client entry has no sandbox of its own: the default, derived
        // from its launch (which `connect` shows).
        sandbox: interlock_sandbox::Setting::Default,
        dropped: obj
            .keys()
            .filter(|k| !RUN_KEYS.contains(&k.as_str()))
            .cloned()
            .collect(),
    };
    match (&up.command, &up.url) {
        (Some(c), None) => {
            if c.trim().is_empty() {
                return Parsed::Skip("`command` is empty".into());
            }
            if !up.headers.is_empty() {
                return Parsed::Skip("`headers` on a command server".into());
            }
            if c.contains('/') && !c.starts_with('/') {
                return Parsed::Skip(format!(
                    "`command` {c:?} is relative to where {client} runs; give an absolute path"
                ));
            }
            if let Some(d) = &up.cwd
                && !d.starts_with('/')
            {
                return Parsed::Skip(format!(
                    "`cwd` {d:?} is relative to where {client} runs; give an absolute path"
                ));
            }
        }
        (None, Some(u)) => {
            if !(u.starts_with("http://") || u.starts_with("https://")) {
                return Parsed::Skip(format!("the URL {u:?} is not http:// or https://"));
            }
            if !up.env.is_empty() || !up.args.is_empty() || up.cwd.is_some() {
                return Parsed::Skip("`env`, `args` or `cwd` on a URL server".into());
            }
        }
        (Some(_), Some(_)) => return Parsed::Skip("both a command and a URL".into()),
        (None, None) => return Parsed::Skip("neither a command nor a URL".into()),
    }
    // Client-side variables: only the client can expand them.
    let texts = up
        .command
        .iter()
        .chain(&up.args)
        .chain(&up.cwd)
        .chain(&up.url)
        .chain(up.env.values())
        .chain(up.headers.values());
    for t in texts {
        if let Some(var) = client_variable(t) {
            return Parsed::Skip(format!(
                "it uses the client's variable {var}, which only {client} can expand"
            ));
        }
    }
    // A secret in an argument or the URL (a token flag, a connection string
    // with a password, an API key in a query) would be written to
    // `gateway.toml` in clear: only `env` and headers move into the keychain.
    let mut exposed: Vec<&str> = up.args.iter().map(String::as_str).collect();
    exposed.extend(up.url.as_deref());
    let findings = interlock_inspect::inspect_arguments(
        &interlock_core::Value::Array(
            exposed
                .iter()
                .map(|s| interlock_core::Value::String((*s).to_owned()))
                .collect(),
        ),
        &interlock_inspect::ArgContext::default(),
    );
    if let Some(f) = findings
        .iter()
        .find(|f| f.category == interlock_inspect::Category::Secret)
    {
        let which = f
            .path
            .trim_start_matches("$[")
            .trim_end_matches(']')
            .parse::<usize>()
            .ok()
            .filter(|i| *i < up.args.len())
            .map_or("its URL".to_owned(), |i| format!("argument {}", i + 1));
        return Parsed::Skip(format!(
            "{which} looks like a secret ({}), which would be written to gateway.toml in \
             clear; pass it in `env` (or a header) and connect again, so it moves into the \
             OS keychain",
            f.rule
        ));
    }
    Parsed::Run(up)
}

/// A `${…}` reference in `s` (every client's interpolation syntax), or a
/// whole value that is `$NAME` (Gemini CLI's), if any.
fn client_variable(s: &str) -> Option<String> {
    if let Some(i) = s.find("${") {
        let end = s[i..].find('}').map(|j| i + j + 1).unwrap_or(s.len());
        return Some(s[i..end].to_owned());
    }
    let rest = s.strip_prefix('$')?;
    (!rest.is_empty()
        && rest.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
        && !rest.as_bytes()[0].is_ascii_digit())
    .then(|| s.to_owned())
}

/// Two URLs that name the same endpoint (a trailing slash aside).
fn same_url(a: &str, b: &str) -> bool {
    a.trim_end_matches('/') == b.trim_end_matches('/')
}

/// A gateway server name for a client's server name: lower-case ASCII
/// letters, digits, `-` and single `_` (what `gateway.toml` accepts), at
/// most 48 bytes so a suffix still fits.
pub(crate) fn upstream_name(client_name: &str) -> String {
    let mut out = String::new();
    for ch in client_name.chars() {
        let c = ch.to_ascii_lowercase();
        let c = if c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' {
            c
        } else {
            '-'
        };
        let last = out.chars().last();
        if (c == '-' && last == Some('-')) || (c == '_' && last == Some('_')) {
            continue;
        }
        out.push(c);
    }
    let trimmed: String = out
        .trim_matches(|c| c == '-' || c == '_')
        .chars()
        .take(48)
        .collect();
    let trimmed = trimmed.trim_end_matches(['-', '_']).to_owned();
    if trimmed.is_empty() {
        "server".to_owned()
    } else {
        trimmed
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const GW: &str = "http://127.0.0.1:8717/mcp";

    #[test]
    fn entries_become_upstreams_or_say_why_not() {
        let p = |c, v: Value| parse(c, &v, GW);
        match p(
            Client::ClaudeCode,
            json!({"type": "stdio", "command": "npx", "args": ["-y", "x"], "env": {"T": "s"}, "timeout": 5}),
        ) {
            Parsed::Run(u) => {
                assert_eq!(u.describe(), "stdio: npx -y x");
                assert_eq!(u.env["T"], "s");
                assert_eq!(u.dropped, ["timeout"]);
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(
            p(
                Client::Gemini,
                json!({"httpUrl": "http://127.0.0.1:8717/mcp/", "headers": {}})
            ),
            Parsed::Gateway
        );
        assert_eq!(
            p(
                Client::ClaudeDesktop,
                json!({"command": "/usr/bin/interlock", "args": ["mcp"]})
            ),
            Parsed::Gateway
        );
        for (c, v, why) in [
            (
                Client::VsCode,
                json!({"command": "node", "args": ["${workspaceFolder}/s.js"]}),
                "${workspaceFolder}",
            ),
            (
                Client::VsCode,
                json!({"type": "http", "url": "https://x/mcp", "headers": {"A": "${input:tok}"}}),
                "${input:tok}",
            ),
            (
                Client::Gemini,
                json!({"command": "x", "env": {"K": "$MY_TOKEN"}}),
                "$MY_TOKEN",
            ),
            (Client::Gemini, json!({"url": "https://x/sse"}), "SSE"),
            (
                Client::ClaudeCode,
                json!({"type": "sse", "url": "https://x/sse"}),
                "SSE",
            ),
            (
                Client::Codex,
                json!({"url": "https://x/mcp", "bearer_token_env_var": "T"}),
                "bearer_token_env_var",
            ),
            (
                Client::Windsurf,
                json!({"command": "x", "disabled": true}),
                "disabled",
            ),
            (Client::Cursor, json!({"command": "./bin/s"}), "relative"),
            (
                Client::ClaudeCode,
                json!({"command": "npx", "args": ["-y", "pg", "postgresql://admin:Sup3rS3cretPw@db.internal:5432/app"]}),
                "argument 3 looks like a secret",
            ),
            (
                Client::Cursor,
                json!({"command": "x", "args": ["--token", "ghp_16C7e42F292c6912E7710c838347Ae178B4a"]}),
                "argument 2 looks like a secret",
            ),
            (Client::Cursor, json!({"command": 3}), "neither"),
        ] {
            match p(c, v.clone()) {
                Parsed::Skip(reason) => assert!(reason.contains(why), "{v}: {reason}"),
                other => panic!("{v} was {other:?}"),
            }
        }
        // A token that merely contains a dollar is a value, not a variable.
        assert!(matches!(
            p(
                Client::Gemini,
                json!({"command": "x", "env": {"K": "pa$$word"}})
            ),
            Parsed::Run(_)
        ));
    }

    #[test]
    fn server_names_become_gateway_names() {
        assert_eq!(upstream_name("GitHub Server"), "github-server");
        assert_eq!(upstream_name("my__tools"), "my_tools");
        assert_eq!(upstream_name("@scope/pkg"), "scope-pkg");
        assert_eq!(upstream_name("---"), "server");
        assert!(interlock_gateway::config::valid_server_name(
            &upstream_name("Ünïcode ✓ name_")
        ));
    }
}
