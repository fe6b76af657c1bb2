//! Installing and undoing a coding agent's hooks from the app (issue 40
//! item 1). Installing rewrites the agent's user settings so each use of
//! its own tools — a shell command, a file edit, a web fetch — asks the
//! gateway first; undoing gives the file back and takes that check away.
//! Both are the owner's, which the reviewer API refuses
//! (`interlock_gateway::reviewer::agent_hooks`): here the owner is asked in
//! a native dialog naming the file and the command the hook runs, and the
//! change runs only if the preview is still what the dialog showed.

use interlock_host::{ClientChange, OnUnreachable, OwnerConfirmed};
use serde_json::Value;

use crate::backend::{Backend, DecideError};
use interlock_core::one_line::one_line;

/// What the owner is asked before a hooks change, from the preview the app
/// read just before (`GET /api/v1/hooks`'s answer).
pub struct HooksQuestion {
    change: ClientChange,
    slug: String,
    name: String,
    file: String,
    /// The program the hook runs and the gateway it asks.
    program: String,
    gateway: String,
}

impl HooksQuestion {
    pub fn from_preview(
        preview: &Value,
        slug: &str,
        change: ClientChange,
    ) -> Result<HooksQuestion, String> {
        let client = client_in(preview, slug).ok_or_else(|| format!("no coding agent {slug:?}"))?;
        let text = |v: &Value| v.as_str().unwrap_or_default().to_owned();
        match change {
            ClientChange::InstallHooks(_) if client["plan"]["changes_anything"] != true => {
                return Err(format!(
                    "{} already has Interlock's hooks",
                    text(&client["name"])
                ));
            }
            ClientChange::UndoHooks if client["installed"] != true => {
                return Err(format!(
                    "no Interlock hooks were installed for {}",
                    text(&client["name"])
                ));
            }
            ClientChange::InstallHooks(_) | ClientChange::UndoHooks => {}
            ClientChange::Connect | ClientChange::Undo => {
                return Err("not a hooks change".into());
            }
        }
        Ok(HooksQuestion {
            change,
            slug: slug.to_owned(),
            name: text(&client["name"]),
            file: text(&client["file"]),
            program: text(&preview["program"]),
            gateway: text(&preview["gateway"]),
        })
    }

    pub fn title(&self) -> String {
        let name = one_line(&self.name, 60);
        match self.change {
            ClientChange::UndoHooks => format!("Remove Interlock's hooks from {name}?"),
            _ => format!("Install Interlock's hooks in {name}?"),
        }
    }

    pub fn message(&self) -> String {
        let file = one_line(&self.file, 300);
        let name = one_line(&self.name, 60);
        match self.change {
            ClientChange::InstallHooks(on_unreachable) => {
                let fallback = match on_unreachable {
                    OnUnreachable::Deny => "the use is denied".to_owned(),
                    OnUnreachable::Ask => format!("{name} asks you itself"),
                };
                format!(
                    "This rewrites {file} so {name} runs\n\n{program} hook {slug}\n\nbefore and after \
                 each use of its own tools (shell commands, file edits, reads and web fetches), \
                 asking the gateway at {gateway} with an agent key of its own. Uses it holds wait \
                 for your approval. If the gateway cannot answer, {fallback}.\n\nThe file's \
                 current bytes are kept; Undo gives them back.\n\nInstall only if you asked for \
                 this here.",
                    program = one_line(&self.program, 200),
                    slug = self.slug,
                    gateway = one_line(&self.gateway, 100),
                )
            }
            _ => format!(
                "This gives {file} back as it was before the hooks were installed and revokes \
                 their agent key: {name}'s own tools stop asking Interlock first.\n\nRemove only \
                 if you asked for this here."
            ),
        }
    }

    pub fn ok_label(&self) -> &'static str {
        match self.change {
            ClientChange::UndoHooks => "Remove hooks",
            _ => "Install hooks",
        }
    }
}

/// The coding agent `slug` in a preview.
fn client_in<'a>(preview: &'a Value, slug: &str) -> Option<&'a Value> {
    preview["clients"]
        .as_array()?
        .iter()
        .find(|c| c["client"] == slug)
}

/// Whether `slug`'s preview in `now` is still the one the owner was shown
/// in `shown`: the same diff, the same install state, the same program.
pub fn still_as_shown(shown: &Value, now: &Value, slug: &str) -> bool {
    match (client_in(shown, slug), client_in(now, slug)) {
        (Some(a), Some(b)) => {
            a["plan"] == b["plan"]
                && a["installed"] == b["installed"]
                && shown["program"] == now["program"]
        }
        _ => false,
    }
}

/// `change_hooks({client, change, onUnreachable})`: installs (`change` =
/// `install`) or removes (`undo`) a coding agent's hooks after the owner
/// confirms the native dialog (module doc). `onUnreachable` is `deny` (the
/// default) or `ask`. Errors are `{code, message}` as `change_client`'s.
#[tauri::command]
pub async fn change_hooks(
    app: tauri::AppHandle,
    webview: tauri::Webview,
    backend: tauri::State<'_, std::sync::Arc<Backend>>,
    client: String,
    change: String,
    on_unreachable: Option<String>,
) -> Result<Value, DecideError> {
    let invalid = |message: String| DecideError {
        code: "invalid",
        message,
    };
    let on_unreachable = match on_unreachable.as_deref() {
        None => OnUnreachable::Deny,
        Some(s) => OnUnreachable::parse(s)
            .ok_or_else(|| invalid(format!("onUnreachable must be `deny` or `ask`, not {s:?}")))?,
    };
    let change = match change.as_str() {
        "install" => ClientChange::InstallHooks(on_unreachable),
        "undo" => ClientChange::UndoHooks,
        other => {
            return Err(invalid(format!(
                "change must be `install` or `undo`, not {other:?}"
            )));
        }
    };
    let shown = backend.hooks(on_unreachable).await?;
    let question =
        HooksQuestion::from_preview(&shown, &client, change).map_err(|message| DecideError {
            code: "refused",
            message,
        })?;
    let asked = crate::Question {
        title: question.title(),
        message: question.message(),
        ok_label: question.ok_label(),
    };
    crate::owner_confirms(&app, &webview, &asked, &client).await?;
    if !still_as_shown(&shown, &backend.hooks(on_unreachable).await?, &client) {
        return Err(DecideError {
            code: "changed",
            message: format!(
                "{client}'s settings changed while the dialog was open: nothing was changed; look again"
            ),
        });
    }
    backend
        .change_client(
            &client,
            change,
            &OwnerConfirmed::in_("the desktop app's native confirmation"),
        )
        .await
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn preview() -> Value {
        json!({
            "program": "/usr/bin/interlock",
            "gateway": "http://127.0.0.1:8717",
            "clients": [
                {"client": "claude-code", "name": "Claude Code", "file": "/h/.claude/settings.json",
                 "exists": true, "installed": false,
                 "plan": {"changes_anything": true, "diff": "--- a\n+++ b\n"}},
                {"client": "cursor", "name": "Cursor", "file": "/h/.cursor/hooks.json",
                 "exists": true, "installed": true,
                 "plan": {"changes_anything": false, "diff": ""}},
            ]
        })
    }

    #[test]
    fn regression_issue_40_the_hooks_dialog_names_the_file_and_the_command() {
        let q = HooksQuestion::from_preview(
            &preview(),
            "claude-code",
            ClientChange::InstallHooks(OnUnreachable::Deny),
        )
        .unwrap();
        let m = q.message();
        assert!(m.contains("/h/.claude/settings.json"), "{m}");
        assert!(m.contains("/usr/bin/interlock hook claude-code"), "{m}");
        assert!(m.contains("http://127.0.0.1:8717"), "{m}");
        assert!(m.contains("the use is denied"), "{m}");
        assert_eq!(q.title(), "Install Interlock's hooks in Claude Code?");
        let ask = HooksQuestion::from_preview(
            &preview(),
            "claude-code",
            ClientChange::InstallHooks(OnUnreachable::Ask),
        )
        .unwrap();
        assert!(ask.message().contains("Claude Code asks you itself"));
        // Nothing to install, nothing to undo, a connect, an unknown slug:
        // nothing is asked.
        let install = ClientChange::InstallHooks(OnUnreachable::Deny);
        assert!(HooksQuestion::from_preview(&preview(), "cursor", install).is_err());
        assert!(
            HooksQuestion::from_preview(&preview(), "claude-code", ClientChange::UndoHooks)
                .is_err()
        );
        assert!(HooksQuestion::from_preview(&preview(), "cursor", ClientChange::UndoHooks).is_ok());
        assert!(HooksQuestion::from_preview(&preview(), "cursor", ClientChange::Undo).is_err());
        assert!(HooksQuestion::from_preview(&preview(), "../x", install).is_err());
    }

    #[test]
    fn regression_issue_40_settings_changed_under_the_dialog_are_not_written() {
        let shown = preview();
        assert!(still_as_shown(&shown, &preview(), "claude-code"));
        let mut now = preview();
        now["clients"][0]["plan"]["diff"] = json!("--- a\n+++ b\n+evil\n");
        assert!(!still_as_shown(&shown, &now, "claude-code"));
        let mut moved = preview();
        moved["program"] = json!("/tmp/interlock");
        assert!(!still_as_shown(&shown, &moved, "claude-code"));
    }
}
