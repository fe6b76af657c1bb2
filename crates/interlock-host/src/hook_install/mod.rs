//! `interlock hooks install <client>` (issue 40): writes the coding agent's
//! own hook settings so each use of its tools asks the gateway first, and
//! gives the file back byte for byte on `--undo`.
//!
//! - The hook is a command hook, `interlock hook <client>`, for all four
//!   clients: it denies when the gateway cannot answer (fail closed), where
//!   Claude Code's `http` hook type treats a refused connection as "no
//!   objection" and lets the tool run.
//! - The client's file is edited with a concrete-syntax-tree JSON parser, so
//!   everything else in it keeps its bytes; an earlier Interlock entry is
//!   replaced, never doubled.
//! - A [`HookPlan`] is computed first and changes nothing (the CLI shows its
//!   diff); installing mints an agent key for the client, writes the file
//!   atomically and keeps its previous bytes (or its absence) in
//!   `<data dir>/hooks/<client>-<hash of the path>/`; undo restores them
//!   and revokes the key, unless the file changed since (then it refuses).
//!
//! Why in the host: it needs the data directory and the engine (to mint the
//! key); the CLI only chooses a client and shows the plan. The review UI's
//! Settings reaches the same through [`api::HostHookInstaller`].

use std::path::{Path, PathBuf};

use interlock_hooks::Client;
use jsonc_parser::ParseOptions;
use jsonc_parser::cst::{CstInputValue, CstRootNode};
use serde_json::{Value, json};

pub(crate) mod api;

use crate::Host;
use crate::connect::edit::cst_value;
use crate::connect::{ConnectError, write_atomic};

/// Stands for the agent key in a plan's text until install mints it.
pub const KEY_PLACEHOLDER: &str = "ilk_<minted-at-install>";

/// Marks Interlock's entries in a client's hook settings.
const MARK: &str = " hook ";

/// Where the hook settings go.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HookScope {
    /// The user's own settings (`~/.claude/settings.json`, …).
    User,
    /// A project's settings (`<dir>/.claude/settings.json`, …).
    Project(PathBuf),
    /// The machine's managed settings, which users cannot override (an
    /// administrator's; `/etc/claude-code/managed-settings.json`, …).
    Managed,
}

/// What to install.
#[derive(Clone, Debug)]
pub struct HookRequest {
    pub client: Client,
    pub scope: HookScope,
    /// The gateway's base URL (`http://127.0.0.1:8717`).
    pub gateway: String,
    /// The `interlock` program the hook runs (absolute).
    pub program: PathBuf,
    /// The user's home directory.
    pub home: PathBuf,
    /// When the gateway cannot answer: let the client ask its user
    /// (`--on-unreachable ask`, the owner's choice, recorded in the hook's
    /// command) instead of denying.
    pub ask_when_unreachable: bool,
}

/// What installing would do; nothing is written yet.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HookPlan {
    pub file: PathBuf,
    /// The file's bytes now (`None`: it does not exist).
    pub before: Option<Vec<u8>>,
    /// Its bytes after, with [`KEY_PLACEHOLDER`] for the key.
    pub after: String,
}

/// The variable the hook's command hands the agent key in.
const KEY_VARIABLE: &str = "INTERLOCK_API_KEY=";

impl HookPlan {
    /// Whether installing would change the file beyond minting a new key:
    /// hooks installed as planned, with any key, change nothing.
    pub fn changes_anything(&self) -> bool {
        let before = self.before.as_deref().map(String::from_utf8_lossy);
        before.as_deref().map(|b| mask_keys(b, KEY_PLACEHOLDER))
            != Some(mask_keys(&self.after, KEY_PLACEHOLDER))
    }

    /// A unified diff of the file before and after, as the CLI and the
    /// review UI show it (`/dev/null` for a file that does not exist yet).
    pub fn diff(&self) -> String {
        let before = self
            .before
            .as_deref()
            .map(|b| String::from_utf8_lossy(b).into_owned())
            .unwrap_or_default();
        let name = self.file.display().to_string();
        similar::TextDiff::from_lines(&before, &self.after)
            .unified_diff()
            .header(
                if self.before.is_some() {
                    &name
                } else {
                    "/dev/null"
                },
                &name,
            )
            .to_string()
    }
}

/// `text` with every agent key a hook command hands over replaced by `with`.
pub fn mask_keys(text: &str, with: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(KEY_VARIABLE) {
        let (head, tail) = rest.split_at(at + KEY_VARIABLE.len());
        out.push_str(head);
        out.push_str(with);
        let end = tail
            .find(|c: char| c.is_whitespace() || c == '"' || c == '\\' || c == '\'')
            .unwrap_or(tail.len());
        rest = &tail[end..];
    }
    out.push_str(rest);
    out
}

/// What an install did.
#[derive(Clone, Debug)]
pub struct HookInstalled {
    pub file: PathBuf,
    /// The agent key's name (its key is in the file, its hash in the store).
    pub agent: String,
}

/// What an undo did.
#[derive(Clone, Debug)]
pub struct HookUndone {
    pub file: PathBuf,
    /// Whether the file was removed (it did not exist before the install).
    pub removed: bool,
    pub agent_revoked: Option<String>,
}

/// The settings file of `client` in `scope`.
pub fn settings_file(client: Client, scope: &HookScope, home: &Path) -> PathBuf {
    match (client, scope) {
        (Client::ClaudeCode, HookScope::User) => home.join(".claude/settings.json"),
        (Client::ClaudeCode, HookScope::Project(d)) => d.join(".claude/settings.json"),
        (Client::ClaudeCode, HookScope::Managed) => "/etc/claude-code/managed-settings.json".into(),
        (Client::Cursor, HookScope::User) => home.join(".cursor/hooks.json"),
        (Client::Cursor, HookScope::Project(d)) => d.join(".cursor/hooks.json"),
        (Client::Cursor, HookScope::Managed) => "/etc/cursor/hooks.json".into(),
        (Client::Codex, HookScope::User) => home.join(".codex/hooks.json"),
        (Client::Codex, HookScope::Project(d)) => d.join(".codex/hooks.json"),
        // Codex finds hooks beside each config layer; those of the system
        // layer (`/etc/codex`) are managed — trusted by policy, not per user.
        // (An MDM ships the same as `[hooks]` in `requirements.toml`.)
        (Client::Codex, HookScope::Managed) => "/etc/codex/hooks.json".into(),
        (Client::GeminiCli, HookScope::User) => home.join(".gemini/settings.json"),
        (Client::GeminiCli, HookScope::Project(d)) => d.join(".gemini/settings.json"),
        (Client::GeminiCli, HookScope::Managed) => "/etc/gemini-cli/settings.json".into(),
    }
}

/// What the person installing must still do before `client` runs the hook,
/// if anything: Codex runs a new or changed hook outside a managed layer
/// only once its user trusted it (`/hooks`), and skips it silently before.
pub fn still_to_do(client: Client, scope: &HookScope) -> Option<&'static str> {
    match (client, scope) {
        (Client::Codex, HookScope::User | HookScope::Project(_)) => Some(
            "Codex runs a new hook only once you trust it: open `/hooks` in Codex and trust \
             Interlock's two hooks (until then Codex skips them without a word)",
        ),
        _ => None,
    }
}

/// Single-quotes `s` for a POSIX shell.
fn quote(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-:+=@%".contains(c))
    {
        return s.to_owned();
    }
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// The command the client runs.
fn command(req: &HookRequest, key: &str) -> String {
    let mut cmd = format!(
        "{KEY_VARIABLE}{key} INTERLOCK_GATEWAY={} {}{MARK}{}",
        quote(&req.gateway),
        quote(&req.program.to_string_lossy()),
        req.client.slug()
    );
    if req.ask_when_unreachable {
        cmd.push_str(" --on-unreachable ask");
    }
    cmd
}

/// Interlock's entries: each event and what it holds.
fn entries(req: &HookRequest, key: &str) -> Vec<(&'static str, Value)> {
    let cmd = command(req, key);
    let timeout = req.client.default_timeout_secs();
    match req.client {
        Client::ClaudeCode => vec![
            (
                "PreToolUse",
                json!({"matcher": "*", "hooks": [{"type": "command", "command": cmd, "timeout": timeout}]}),
            ),
            (
                "PostToolUse",
                json!({"matcher": "*", "hooks": [{"type": "command", "command": cmd, "timeout": 30}]}),
            ),
        ],
        Client::Codex => vec![
            (
                "PreToolUse",
                json!({"matcher": "Bash|apply_patch|mcp__.*", "hooks": [{"type": "command", "command": cmd, "timeout": timeout, "statusMessage": "Checking with Interlock"}]}),
            ),
            (
                "PostToolUse",
                json!({"matcher": "Bash|apply_patch|mcp__.*", "hooks": [{"type": "command", "command": cmd, "timeout": 30}]}),
            ),
        ],
        Client::Cursor => {
            let before = json!({"command": cmd, "timeout": timeout, "failClosed": true});
            let after = json!({"command": cmd, "timeout": 30});
            vec![
                ("beforeShellExecution", before.clone()),
                ("beforeMCPExecution", before.clone()),
                ("beforeReadFile", before),
                ("afterShellExecution", after.clone()),
                ("afterFileEdit", after),
            ]
        }
        Client::GeminiCli => {
            let matcher = "run_shell_command|write_file|replace|read_file|web_fetch|mcp_.*";
            vec![
                (
                    "BeforeTool",
                    json!({"matcher": matcher, "hooks": [{"name": "interlock", "type": "command", "command": cmd, "timeout": timeout * 1000}]}),
                ),
                (
                    "AfterTool",
                    json!({"matcher": matcher, "hooks": [{"name": "interlock", "type": "command", "command": cmd, "timeout": 30_000}]}),
                ),
            ]
        }
    }
}

/// Whether an entry is Interlock's (its command runs `interlock … hook <client>`).
fn ours(entry: &Value, client: Client) -> bool {
    let needle = format!("{MARK}{}", client.slug());
    let is = |c: &Value| {
        c.as_str().is_some_and(|c| {
            c.starts_with(KEY_VARIABLE)
                && (c.ends_with(&needle) || c.contains(&format!("{needle} --")))
        })
    };
    is(&entry["command"])
        || entry["hooks"]
            .as_array()
            .is_some_and(|hooks| hooks.iter().any(|h| is(&h["command"])))
}

/// `text` (a client's settings, or `None` for a new file) with Interlock's
/// entries, earlier ones replaced.
pub fn edit(req: &HookRequest, text: Option<&str>, key: &str) -> Result<String, String> {
    let source = text.unwrap_or("{}\n");
    serde_json::from_str::<Value>(source).map_err(|e| format!("it is not JSON: {e}"))?;
    let root = CstRootNode::parse(source, &ParseOptions::default()).map_err(|e| e.to_string())?;
    let obj = root
        .object_value()
        .ok_or("the top level is not an object")?;
    if req.client == Client::Cursor && obj.get("version").is_none() {
        obj.append("version", CstInputValue::Number("1".into()));
    }
    if obj.get("hooks").is_some() && obj.object_value("hooks").is_none() {
        return Err("`hooks` is not an object".into());
    }
    let hooks = obj.object_value_or_set("hooks");
    for (event, entry) in entries(req, key) {
        if hooks.get(event).is_some() && hooks.array_value(event).is_none() {
            return Err(format!("`hooks.{event}` is not an array"));
        }
        let list = hooks.array_value_or_set(event);
        let mine: Vec<_> = list
            .elements()
            .into_iter()
            .filter(|e| e.to_serde_value().is_some_and(|v| ours(&v, req.client)))
            .collect();
        // The same entry again: its bytes stay as they are.
        if mine.len() == 1 && mine[0].to_serde_value().as_ref() == Some(&entry) {
            continue;
        }
        for old in mine {
            old.remove();
        }
        list.append(cst_value(&entry));
    }
    let mut out = root.to_string();
    if text.is_none() && !out.ends_with('\n') {
        out.push('\n');
    }
    Ok(out)
}

/// Why installing or undoing failed; nothing was changed unless it says so.
#[derive(Debug, thiserror::Error)]
pub enum HookInstallError {
    #[error("{path}: {message}")]
    File { path: PathBuf, message: String },
    #[error("{path} is not settings Interlock can edit: {message}")]
    Malformed { path: PathBuf, message: String },
    #[error(
        "{path} changed since the hooks were installed; restore it by hand (the previous bytes are in {backup})"
    )]
    ChangedSince { path: PathBuf, backup: PathBuf },
    #[error("no Interlock hooks were installed in {path}")]
    NothingToUndo { path: PathBuf },
    /// Writing a file or minting the key failed (connect's machinery).
    #[error(transparent)]
    Write(#[from] ConnectError),
}

fn file_err(path: &Path, e: impl std::fmt::Display) -> HookInstallError {
    HookInstallError::File {
        path: path.to_owned(),
        message: e.to_string(),
    }
}

/// The backup directory of one settings file.
fn backup_dir(data_dir: &Path, client: Client, file: &Path) -> PathBuf {
    let h = crate::connect::sha256_hex(file.to_string_lossy().as_bytes());
    data_dir
        .join("hooks")
        .join(format!("{}-{}", client.slug(), &h[..12]))
}

/// Whether Interlock's hooks were installed in `file` (its previous bytes
/// are kept for an undo).
pub(crate) fn installed(data_dir: &Path, client: Client, file: &Path) -> bool {
    let dir = backup_dir(data_dir, client, file);
    dir.join("previous").exists() || dir.join("absent").exists()
}

impl Host {
    /// What installing `req` would write; changes nothing.
    pub fn hooks_preview(&self, req: &HookRequest) -> Result<HookPlan, HookInstallError> {
        let file = settings_file(req.client, &req.scope, &req.home);
        let before = match std::fs::read(&file) {
            Ok(b) => Some(b),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(file_err(&file, e)),
        };
        let text = before
            .as_deref()
            .map(|b| String::from_utf8(b.to_vec()).map_err(|_| "it is not UTF-8".to_owned()))
            .transpose()
            .and_then(|t| edit(req, t.as_deref(), KEY_PLACEHOLDER))
            .map_err(|message| HookInstallError::Malformed {
                path: file.clone(),
                message,
            })?;
        Ok(HookPlan {
            file,
            before,
            after: text,
        })
    }

    /// Installs `plan` (from [`Host::hooks_preview`] of `req`): mints the
    /// client's agent key, keeps the file's previous bytes, writes the new
    /// ones atomically.
    pub async fn hooks_install(
        &self,
        req: &HookRequest,
        plan: &HookPlan,
    ) -> Result<HookInstalled, HookInstallError> {
        let dir = backup_dir(&self.data_dir()?, req.client, &plan.file);
        std::fs::create_dir_all(&dir).map_err(|e| file_err(&dir, e))?;
        set_private(&dir)?;
        // The first install's bytes are the ones undo gives back; a later
        // install over our own entries keeps them.
        let previous = dir.join("previous");
        let absent = dir.join("absent");
        if !previous.exists() && !absent.exists() {
            match &plan.before {
                Some(bytes) => write_atomic(&previous, bytes, 0o600)?,
                None => write_atomic(&absent, b"", 0o600)?,
            }
        }
        let (key, agent) = self
            .mint_agent_key(&format!("hooks-{}", req.client.slug()))
            .await?;
        let text = plan.after.replace(KEY_PLACEHOLDER, &key);
        write_atomic(
            &dir.join("written.sha256"),
            crate::connect::sha256_hex(text.as_bytes()).as_bytes(),
            0o600,
        )?;
        write_atomic(&dir.join("agent"), agent.as_bytes(), 0o600)?;
        // The file holds a key: only its owner reads it.
        write_atomic(&plan.file, text.as_bytes(), 0o600)?;
        Ok(HookInstalled {
            file: plan.file.clone(),
            agent,
        })
    }

    /// Gives the settings file its bytes from before the first install
    /// back (or removes it, if there was none) and revokes the client's key.
    pub async fn hooks_undo(&self, req: &HookRequest) -> Result<HookUndone, HookInstallError> {
        let file = settings_file(req.client, &req.scope, &req.home);
        let data_dir = self.data_dir()?;
        let dir = backup_dir(&data_dir, req.client, &file);
        if !installed(&data_dir, req.client, &file) {
            // An install killed before it kept the previous bytes left at
            // most its directory and a half-written temporary file, and an
            // undo killed while deleting its backup the renamed remains:
            // nothing of value, and nothing a later install should find.
            for left in [dir.clone(), dir.with_extension("undone")] {
                if left.is_dir() {
                    std::fs::remove_dir_all(&left).map_err(|e| file_err(&left, e))?;
                }
            }
            return Err(HookInstallError::NothingToUndo { path: file });
        }
        let previous = dir.join("previous");
        let before = if dir.join("absent").exists() {
            None
        } else {
            Some(std::fs::read(&previous).map_err(|e| file_err(&previous, e))?)
        };
        let now = match std::fs::read(&file) {
            Ok(bytes) => Some(bytes),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(file_err(&file, e)),
        };
        // An install killed before it wrote the file, or an undo killed
        // after it gave the bytes back, leaves the file as it was before:
        // nothing to restore, only the key to revoke and the backup to drop.
        if now != before {
            let written = std::fs::read_to_string(dir.join("written.sha256")).unwrap_or_default();
            let now_hash = now.as_deref().map(crate::connect::sha256_hex);
            if now_hash.as_deref() != Some(written.trim()) {
                return Err(HookInstallError::ChangedSince {
                    path: file,
                    backup: dir,
                });
            }
            match &before {
                None => std::fs::remove_file(&file).map_err(|e| file_err(&file, e))?,
                Some(bytes) => {
                    let mode = std::fs::metadata(&file)
                        .map(|m| std::os::unix::fs::PermissionsExt::mode(&m.permissions()) & 0o7777)
                        .unwrap_or(0o644);
                    write_atomic(&file, bytes, mode)?;
                }
            }
        }
        let agent = std::fs::read_to_string(dir.join("agent")).ok();
        if let Some(name) = &agent {
            self.revoke_agent(name.trim()).await?;
        }
        drop_backup(&dir)?;
        Ok(HookUndone {
            file,
            removed: before.is_none(),
            agent_revoked: agent.map(|a| a.trim().to_owned()),
        })
    }
}

/// Removes a backup directory as one step: renamed away first (a rename is
/// atomic), so an undo killed while deleting leaves no half a backup that
/// reads as an install.
fn drop_backup(dir: &Path) -> Result<(), HookInstallError> {
    let gone = dir.with_extension("undone");
    if gone.exists() {
        std::fs::remove_dir_all(&gone).map_err(|e| file_err(&gone, e))?;
    }
    std::fs::rename(dir, &gone).map_err(|e| file_err(dir, e))?;
    std::fs::remove_dir_all(&gone).map_err(|e| file_err(&gone, e))
}

fn set_private(dir: &Path) -> Result<(), HookInstallError> {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
        .map_err(|e| file_err(dir, e))
}

impl From<crate::HostError> for HookInstallError {
    fn from(e: crate::HostError) -> Self {
        HookInstallError::Write(ConnectError::from(e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(client: Client) -> HookRequest {
        HookRequest {
            client,
            scope: HookScope::User,
            gateway: "http://127.0.0.1:8717".into(),
            program: "/usr/bin/interlock".into(),
            home: "/home/u".into(),
            ask_when_unreachable: false,
        }
    }

    #[test]
    fn an_edit_keeps_the_rest_and_replaces_its_own_entry() {
        let text = "{\n  // a comment\n  \"model\": \"opus\",\n  \"hooks\": {\"PreToolUse\": [{\"matcher\": \"Bash\", \"hooks\": [{\"type\": \"command\", \"command\": \"./mine.sh\"}]}]}\n}\n";
        // Comments are not JSON: a Claude Code settings file is plain JSON.
        assert!(edit(&req(Client::ClaudeCode), Some(text), "ilk_k").is_err());
        let text = text.replace("  // a comment\n", "");
        let once = edit(&req(Client::ClaudeCode), Some(&text), "ilk_k").unwrap();
        let twice = edit(&req(Client::ClaudeCode), Some(&once), "ilk_k").unwrap();
        assert_eq!(once, twice, "the same install again changes no byte");
        let rekeyed = edit(&req(Client::ClaudeCode), Some(&once), "ilk_other").unwrap();
        let v: Value = serde_json::from_str(&rekeyed).unwrap();
        assert_eq!(
            v["hooks"]["PreToolUse"].as_array().unwrap().len(),
            2,
            "replaced, not doubled"
        );
        assert!(rekeyed.contains("ilk_other") && !rekeyed.contains("ilk_k "));
        let v: Value = serde_json::from_str(&once).unwrap();
        assert_eq!(v["model"], "opus");
        assert_eq!(v["hooks"]["PreToolUse"].as_array().unwrap().len(), 2);
        assert_eq!(
            v["hooks"]["PreToolUse"][0]["hooks"][0]["command"],
            "./mine.sh"
        );
        assert!(
            v["hooks"]["PreToolUse"][1]["hooks"][0]["command"]
                .as_str()
                .unwrap()
                .ends_with("/usr/bin/interlock hook claude-code")
        );
        let cursor: Value =
            serde_json::from_str(&edit(&req(Client::Cursor), None, "ilk_k").unwrap()).unwrap();
        assert_eq!(cursor["version"], 1);
        assert_eq!(
            cursor["hooks"]["beforeShellExecution"][0]["failClosed"],
            true
        );
        assert!(edit(&req(Client::GeminiCli), Some("{\"hooks\": []}"), "k").is_err());
        // The owner's choice to ask when the gateway is down replaces the
        // entry that denied (it is the same hook), never sits beside it.
        let asking = HookRequest {
            ask_when_unreachable: true,
            ..req(Client::ClaudeCode)
        };
        let asked = edit(&asking, Some(&once), "ilk_k").unwrap();
        let v: Value = serde_json::from_str(&asked).unwrap();
        assert_eq!(
            v["hooks"]["PreToolUse"].as_array().unwrap().len(),
            2,
            "{asked}"
        );
        assert!(asked.contains("hook claude-code --on-unreachable ask"));
    }
}
