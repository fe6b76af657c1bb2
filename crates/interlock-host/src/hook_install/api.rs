//! [`interlock_gateway::connector::HookInstaller`] over this module: the
//! review UI's "Guard a coding agent's own tools" (Settings). Previews go
//! over the reviewer API; installing and undoing are the owner's, through the
//! desktop app's native confirmation (`interlock_gateway::client_changes`).
//! Only the user-level settings of the four known coding agents are touched:
//! a request names a client by slug, never a path, a project or the managed
//! settings (an administrator's, with `interlock hooks install --managed`).

use std::path::PathBuf;

use interlock_gateway::connector::{ConnectorError, HookInstaller, OnUnreachable};
use interlock_hooks::Client;
use interlock_inspect::{Action, ResponsePolicy, scan_response};
use serde_json::{Value, json};

use super::{HookInstallError, HookRequest, HookScope, mask_keys, settings_file, still_to_do};
use crate::Host;

/// How the review UI shows an agent key in a settings file: never the key.
const KEY_SHOWN: &str = "<agent key>";

/// The host's hook installer for one running gateway.
pub(crate) struct HostHookInstaller {
    pub host: Host,
    /// How hooks reach this gateway (`http://127.0.0.1:PORT`).
    pub gateway: String,
}

impl HostHookInstaller {
    fn request(
        &self,
        client: Client,
        on_unreachable: OnUnreachable,
    ) -> Result<HookRequest, ConnectorError> {
        let home = std::env::var_os("HOME")
            .map(PathBuf::from)
            .ok_or_else(|| ConnectorError::Refused("HOME is not set".into()))?;
        Ok(HookRequest {
            client,
            scope: HookScope::User,
            gateway: self.gateway.clone(),
            program: crate::connect::interlock_bin(),
            home,
            ask_when_unreachable: on_unreachable == OnUnreachable::Ask,
        })
    }

    /// A hook whose program cannot start is an error to the client, and most
    /// clients (Claude Code among them) then run the tool: never write one
    /// that names a program not found here.
    fn program_found(req: &HookRequest) -> Result<(), ConnectorError> {
        if req.program.is_absolute() {
            return Ok(());
        }
        Err(ConnectorError::Refused(
            "the hook runs the `interlock` program, and none was found on PATH or beside this \
             app: install the `interlock` CLI first (a hook that cannot start lets the agent's \
             tools run unchecked)"
                .into(),
        ))
    }

    fn client(slug: &str) -> Result<Client, ConnectorError> {
        slug.parse()
            .map_err(|_| ConnectorError::UnknownClient(slug.to_owned()))
    }

    /// Whether `req`'s settings have an install to undo.
    fn undoable(&self, req: &HookRequest) -> bool {
        self.host.data_dir().is_ok_and(|d| {
            super::installed(
                &d,
                req.client,
                &settings_file(req.client, &req.scope, &req.home),
            )
        })
    }
}

/// `diff` as the review UI may show it: agent keys and anything that reads
/// as a secret (a token in the client's `env`, say) masked — the settings
/// are the owner's, the page a browser's.
pub(crate) fn shown_diff(diff: &str) -> String {
    let policy = ResponsePolicy {
        pii: Action::Allow,
        secrets: Action::Redact,
        injection: Action::Allow,
        scanner: None,
    };
    scan_response(&mask_keys(diff, KEY_SHOWN), &policy).redacted
}

fn refused(e: HookInstallError) -> ConnectorError {
    match e {
        HookInstallError::File { .. } | HookInstallError::Write(_) => {
            ConnectorError::Failed(e.to_string())
        }
        _ => ConnectorError::Refused(e.to_string()),
    }
}

#[async_trait::async_trait]
impl HookInstaller for HostHookInstaller {
    async fn hooks(&self, on_unreachable: OnUnreachable) -> Result<Value, ConnectorError> {
        let mut out = Vec::new();
        for client in Client::ALL {
            let req = self.request(client, on_unreachable)?;
            let file = settings_file(client, &req.scope, &req.home);
            let plan = match Self::program_found(&req)
                .and_then(|()| self.host.hooks_preview(&req).map_err(refused))
            {
                Ok(p) => json!({
                    "changes_anything": p.changes_anything(),
                    "diff": shown_diff(&p.diff()),
                }),
                Err(e) => json!({"error": e.to_string()}),
            };
            let installed = self.undoable(&req);
            out.push(json!({
                "client": client.slug(),
                "name": client.display_name(),
                "file": file,
                "exists": file.exists(),
                "installed": installed,
                "plan": plan,
                "still_to_do": still_to_do(client, &req.scope),
            }));
        }
        Ok(json!({
            "clients": out,
            "gateway": self.gateway,
            "program": crate::connect::interlock_bin(),
            "on_unreachable": on_unreachable.as_str(),
        }))
    }

    fn knows(&self, slug: &str) -> bool {
        Self::client(slug).is_ok()
    }

    async fn install(
        &self,
        slug: &str,
        on_unreachable: OnUnreachable,
    ) -> Result<Value, ConnectorError> {
        let req = self.request(Self::client(slug)?, on_unreachable)?;
        Self::program_found(&req)?;
        let plan = self.host.hooks_preview(&req).map_err(refused)?;
        if !plan.changes_anything() {
            return Ok(json!({"file": plan.file, "changed": false, "agent": null}));
        }
        let done = self
            .host
            .hooks_install(&req, &plan)
            .await
            .map_err(refused)?;
        Ok(json!({"file": done.file, "changed": true, "agent": done.agent}))
    }

    async fn undo(&self, slug: &str) -> Result<Value, ConnectorError> {
        let req = self.request(Self::client(slug)?, OnUnreachable::Deny)?;
        let u = self.host.hooks_undo(&req).await.map_err(refused)?;
        Ok(json!({
            "file": u.file,
            "removed": u.removed,
            "agent_revoked": u.agent_revoked,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regression_issue_40_the_review_ui_never_sees_a_key_or_a_secret_in_a_settings_diff() {
        let diff = "--- a\n+++ b\n@@ -1,3 +1,3 @@\n {\n-  \"env\": {\"GITHUB_TOKEN\": \"ghp_0123456789abcdefghijABCDEFGHIJ012345\"},\n+  \"command\": \"INTERLOCK_API_KEY=ilk_s3cr3tK3yMaterial INTERLOCK_GATEWAY=http://127.0.0.1:8717 /usr/bin/interlock hook claude-code\"\n }\n";
        let shown = shown_diff(diff);
        assert!(!shown.contains("ilk_s3cr3tK3yMaterial"), "{shown}");
        assert!(!shown.contains("ghp_0123456789"), "{shown}");
        assert!(
            shown.contains("INTERLOCK_API_KEY=<agent key> INTERLOCK_GATEWAY="),
            "{shown}"
        );
        assert!(
            shown.contains("/usr/bin/interlock hook claude-code"),
            "{shown}"
        );
        assert!(
            shown.starts_with("--- a\n+++ b\n@@ -1,3 +1,3 @@\n"),
            "{shown}"
        );
    }
}
