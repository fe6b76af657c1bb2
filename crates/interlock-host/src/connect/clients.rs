//! The AI clients `interlock connect` knows: where each keeps its MCP servers
//! (Linux and macOS), in which syntax, under which member, and how it can reach
//! a Streamable HTTP server with a header — or whether it can only spawn one,
//! in which case it reaches the gateway through the `interlock mcp` bridge.
//!
//! Why a table and not per-client code: every client stores the same three
//! things (a command, a URL, headers) under slightly different names, so the
//! differences are data, and a new client is one row.

use std::path::{Path, PathBuf};

use super::ConnectError;

/// One AI client whose MCP configuration `interlock connect` can rewrite.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Client {
    ClaudeDesktop,
    ClaudeCode,
    Cursor,
    VsCode,
    Windsurf,
    Codex,
    Gemini,
}

/// How a client's file is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Syntax {
    /// Plain JSON: the client refuses comments, so they are refused here too.
    Json,
    /// JSON with comments and trailing commas (VS Code, Gemini CLI).
    Jsonc,
    /// TOML (Codex CLI).
    Toml,
}

/// How a client names a Streamable HTTP server's address.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum HttpStyle {
    /// `{"type": "http", "url": …, "headers": {…}}` (Claude Code, VS Code).
    TypedUrl,
    /// `{"url": …, "headers": {…}}` (Cursor).
    Url,
    /// `{"serverUrl": …, "headers": {…}}` (Windsurf).
    ServerUrl,
    /// `{"httpUrl": …, "headers": {…}}` (Gemini CLI; its `url` is SSE).
    HttpUrl,
    /// `url = …`, `http_headers = {…}` (Codex CLI).
    CodexToml,
}

impl Client {
    /// Every known client, in the order they are listed.
    pub const ALL: [Client; 7] = [
        Client::ClaudeDesktop,
        Client::ClaudeCode,
        Client::Cursor,
        Client::VsCode,
        Client::Windsurf,
        Client::Codex,
        Client::Gemini,
    ];

    /// The name on the command line (`interlock connect claude-code`).
    pub fn slug(self) -> &'static str {
        match self {
            Client::ClaudeDesktop => "claude-desktop",
            Client::ClaudeCode => "claude-code",
            Client::Cursor => "cursor",
            Client::VsCode => "vscode",
            Client::Windsurf => "windsurf",
            Client::Codex => "codex",
            Client::Gemini => "gemini",
        }
    }

    /// The product's name, for people.
    pub fn name(self) -> &'static str {
        match self {
            Client::ClaudeDesktop => "Claude Desktop",
            Client::ClaudeCode => "Claude Code",
            Client::Cursor => "Cursor",
            Client::VsCode => "VS Code",
            Client::Windsurf => "Windsurf",
            Client::Codex => "Codex CLI",
            Client::Gemini => "Gemini CLI",
        }
    }

    /// The client named `s` (its slug, or a common alias).
    pub fn from_slug(s: &str) -> Option<Client> {
        let s = s.to_ascii_lowercase();
        Client::ALL
            .into_iter()
            .find(|c| c.slug() == s)
            .or(match s.as_str() {
                "claude" => Some(Client::ClaudeDesktop),
                "code" | "vs-code" | "visual-studio-code" => Some(Client::VsCode),
                "codex-cli" => Some(Client::Codex),
                "gemini-cli" => Some(Client::Gemini),
                _ => None,
            })
    }

    pub(crate) fn syntax(self) -> Syntax {
        match self {
            Client::VsCode | Client::Gemini => Syntax::Jsonc,
            Client::Codex => Syntax::Toml,
            _ => Syntax::Json,
        }
    }

    /// The member (table) that holds the servers.
    pub(crate) fn container(self) -> &'static str {
        match self {
            Client::VsCode => "servers",
            Client::Codex => "mcp_servers",
            _ => "mcpServers",
        }
    }

    /// How the client reaches a Streamable HTTP server with headers, or
    /// `None` when its config file can only spawn servers (Claude Desktop:
    /// remote servers are added in its UI as connectors, without headers).
    pub(crate) fn http(self) -> Option<HttpStyle> {
        match self {
            Client::ClaudeDesktop => None,
            Client::ClaudeCode | Client::VsCode => Some(HttpStyle::TypedUrl),
            Client::Cursor => Some(HttpStyle::Url),
            Client::Windsurf => Some(HttpStyle::ServerUrl),
            Client::Gemini => Some(HttpStyle::HttpUrl),
            Client::Codex => Some(HttpStyle::CodexToml),
        }
    }

    /// The user-wide file (each client's documented location).
    pub fn user_file(self, paths: &Paths) -> PathBuf {
        let app_support = paths.home.join("Library/Application Support");
        match self {
            Client::ClaudeDesktop if paths.macos => {
                app_support.join("Claude/claude_desktop_config.json")
            }
            Client::ClaudeDesktop => paths.config_home.join("Claude/claude_desktop_config.json"),
            Client::ClaudeCode => paths.home.join(".claude.json"),
            Client::Cursor => paths.home.join(".cursor/mcp.json"),
            Client::VsCode if paths.macos => app_support.join("Code/User/mcp.json"),
            Client::VsCode => paths.config_home.join("Code/User/mcp.json"),
            Client::Windsurf => paths.home.join(".codeium/windsurf/mcp_config.json"),
            Client::Codex => paths.codex_home.join("config.toml"),
            Client::Gemini => paths.home.join(".gemini/settings.json"),
        }
    }

    /// The file a project (`dir`) keeps for this client, if it has one.
    pub fn project_file(self, dir: &Path) -> Option<PathBuf> {
        Some(match self {
            Client::ClaudeDesktop | Client::Windsurf => return None,
            Client::ClaudeCode => dir.join(".mcp.json"),
            Client::Cursor => dir.join(".cursor/mcp.json"),
            Client::VsCode => dir.join(".vscode/mcp.json"),
            Client::Codex => dir.join(".codex/config.toml"),
            Client::Gemini => dir.join(".gemini/settings.json"),
        })
    }
}

/// Each known client with its user file and whether that file exists: what
/// a face offers to connect (the CLI's list; the desktop's first run).
pub fn detect(paths: &Paths) -> Vec<(Client, PathBuf, bool)> {
    Client::ALL
        .into_iter()
        .map(|c| {
            let f = c.user_file(paths);
            let found = f.is_file();
            (c, f, found)
        })
        .collect()
}

impl std::fmt::Display for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Where the user's files are: the home directory, the XDG config directory
/// (Linux), Codex's home and whether the macOS layout applies. Explicit so a
/// test (or the desktop app) can point at a fixture home.
#[derive(Clone, Debug)]
pub struct Paths {
    pub home: PathBuf,
    /// `$XDG_CONFIG_HOME`, else `~/.config`.
    pub config_home: PathBuf,
    /// `$CODEX_HOME`, else `~/.codex`.
    pub codex_home: PathBuf,
    /// `~/Library/Application Support/…` instead of `~/.config/…`.
    pub macos: bool,
}

impl Paths {
    /// From `$HOME`, `$XDG_CONFIG_HOME` and `$CODEX_HOME`, as the clients
    /// themselves resolve them.
    pub fn from_env() -> Result<Paths, ConnectError> {
        let var = |k: &str| {
            std::env::var_os(k)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        };
        let home = var("HOME").ok_or_else(|| {
            ConnectError::Usage("$HOME is not set: cannot find the clients' files".into())
        })?;
        Ok(Paths {
            config_home: var("XDG_CONFIG_HOME")
                .filter(|p| p.is_absolute())
                .unwrap_or_else(|| home.join(".config")),
            codex_home: var("CODEX_HOME").unwrap_or_else(|| home.join(".codex")),
            macos: cfg!(target_os = "macos"),
            home,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The documented locations, on both layouts.
    #[test]
    fn each_client_has_its_documented_file() {
        let linux = Paths {
            home: "/h".into(),
            config_home: "/h/.config".into(),
            codex_home: "/h/.codex".into(),
            macos: false,
        };
        let mac = Paths {
            macos: true,
            ..linux.clone()
        };
        let f = |c: Client, p: &Paths| c.user_file(p).to_string_lossy().into_owned();
        assert_eq!(
            f(Client::ClaudeDesktop, &linux),
            "/h/.config/Claude/claude_desktop_config.json"
        );
        assert_eq!(
            f(Client::ClaudeDesktop, &mac),
            "/h/Library/Application Support/Claude/claude_desktop_config.json"
        );
        assert_eq!(f(Client::ClaudeCode, &linux), "/h/.claude.json");
        assert_eq!(f(Client::Cursor, &mac), "/h/.cursor/mcp.json");
        assert_eq!(f(Client::VsCode, &linux), "/h/.config/Code/User/mcp.json");
        assert_eq!(
            f(Client::VsCode, &mac),
            "/h/Library/Application Support/Code/User/mcp.json"
        );
        assert_eq!(
            f(Client::Windsurf, &linux),
            "/h/.codeium/windsurf/mcp_config.json"
        );
        assert_eq!(f(Client::Codex, &linux), "/h/.codex/config.toml");
        assert_eq!(f(Client::Gemini, &linux), "/h/.gemini/settings.json");
        for c in Client::ALL {
            assert_eq!(Client::from_slug(c.slug()), Some(c));
        }
        assert_eq!(Client::from_slug("nope"), None);
    }
}
