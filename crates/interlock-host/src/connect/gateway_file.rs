//! `[servers.NAME]` tables added to (and removed from) `gateway.toml`, in
//! place, so the operator's own comments and settings stay as written. Every
//! value the client kept in its entry's `env` or `headers` is referenced from
//! the OS keychain (`env_keychain`, `headers_keychain`), never written here.

use std::collections::BTreeMap;

use super::entries::Upstream;

/// One upstream to add: its name, the server, and the keychain token that
/// holds each of its env values and headers.
pub(crate) struct NewServer<'a> {
    pub name: &'a str,
    pub server: &'a Upstream,
    pub env_tokens: &'a BTreeMap<String, String>,
    pub header_tokens: &'a BTreeMap<String, String>,
    /// A comment naming where it came from.
    pub origin: String,
}

/// A `sandbox` setting as written in `gateway.toml`: nothing for the
/// default, `"off"`, or an inline table.
fn sandbox_item(setting: &interlock_sandbox::Setting) -> Result<Option<toml_edit::Item>, String> {
    use interlock_sandbox::Setting;
    match setting {
        Setting::Default => Ok(None),
        Setting::Off => Ok(Some(toml_edit::value("off"))),
        Setting::Profile(p) => {
            let text =
                toml::to_string(&serde_json::json!({ "sandbox": p })).map_err(|e| e.to_string())?;
            let doc: toml_edit::DocumentMut = text
                .parse()
                .map_err(|e: toml_edit::TomlError| e.to_string())?;
            let table = doc["sandbox"]
                .as_table()
                .ok_or("a sandbox profile is a table")?
                .clone()
                .into_inline_table();
            Ok(Some(toml_edit::value(table)))
        }
    }
}

/// `text` with `servers` appended as `[servers.NAME]` tables.
pub(crate) fn add_servers(text: &str, servers: &[NewServer<'_>]) -> Result<String, String> {
    let mut doc: toml_edit::DocumentMut = text
        .parse()
        .map_err(|e: toml_edit::TomlError| e.to_string())?;
    let mut first_in_file = doc.iter().all(|(_, item)| {
        item.as_table()
            .is_some_and(|t| t.is_implicit() && t.is_empty())
    });
    if doc.get("servers").is_none() {
        let mut t = toml_edit::Table::new();
        t.set_implicit(true);
        doc.insert("servers", toml_edit::Item::Table(t));
    }
    let table = doc
        .get_mut("servers")
        .and_then(|i| i.as_table_mut())
        .ok_or("`servers` in the gateway config is not a table")?;
    for s in servers {
        let mut t = toml_edit::Table::new();
        let gap = if std::mem::take(&mut first_in_file) {
            ""
        } else {
            "\n"
        };
        t.decor_mut()
            .set_prefix(format!("{gap}# {}\n", s.origin.replace('\n', " ")));
        let up = s.server;
        if let Some(c) = &up.command {
            t.insert("command", toml_edit::value(c.as_str()));
            if !up.args.is_empty() {
                let args: toml_edit::Array = up.args.iter().map(String::as_str).collect();
                t.insert("args", toml_edit::value(args));
            }
            if let Some(d) = &up.cwd {
                t.insert("cwd", toml_edit::value(d.as_str()));
            }
            if !s.env_tokens.is_empty() {
                t.insert("env_keychain", toml_edit::value(inline(s.env_tokens)));
            }
            if let Some(sandbox) = sandbox_item(&up.sandbox)? {
                t.insert("sandbox", sandbox);
            }
        } else if let Some(u) = &up.url {
            t.insert("url", toml_edit::value(u.as_str()));
            if !s.header_tokens.is_empty() {
                t.insert(
                    "headers_keychain",
                    toml_edit::value(inline(s.header_tokens)),
                );
            }
        }
        table.insert(s.name, toml_edit::Item::Table(t));
    }
    Ok(doc.to_string())
}

/// `text` without the `[servers.NAME]` tables named in `names` (those that
/// are there).
pub(crate) fn remove_servers(text: &str, names: &[String]) -> Result<String, String> {
    let mut doc: toml_edit::DocumentMut = text
        .parse()
        .map_err(|e: toml_edit::TomlError| e.to_string())?;
    if let Some(t) = doc.get_mut("servers").and_then(|i| i.as_table_like_mut()) {
        for n in names {
            t.remove(n);
        }
    }
    Ok(doc.to_string())
}

/// The gateway's `gateway.toml` as the running gateway edits it when a
/// server is added or removed at run time (`interlock_gateway::server_changes`):
/// in place, written atomically, the rest of the file as it was.
pub(crate) struct HostServerFile {
    pub host: crate::Host,
    pub path: std::path::PathBuf,
}

impl HostServerFile {
    fn edit(&self, f: impl FnOnce(&str) -> Result<String, String>) -> Result<(), String> {
        let exists = self.path.exists();
        let text = if exists {
            std::fs::read_to_string(&self.path)
                .map_err(|e| format!("{}: {e}", self.path.display()))?
        } else {
            String::new()
        };
        let out = f(&text)?;
        if out == text {
            return Ok(());
        }
        let mode = if exists {
            super::mode_of(&self.path).map_err(|e| e.to_string())?
        } else {
            0o600
        };
        super::write_atomic(&self.path, out.as_bytes(), mode).map_err(|e| e.to_string())
    }
}

impl interlock_gateway::server_file::ServerFile for HostServerFile {
    fn add(
        &self,
        name: &str,
        server: &interlock_gateway::server_file::NewServer,
    ) -> Result<(), String> {
        let up = Upstream {
            command: server.command.clone(),
            args: server.args.clone(),
            url: server.url.clone(),
            sandbox: server.sandbox.clone(),
            ..Upstream::default()
        };
        let none = BTreeMap::new();
        self.edit(|text| {
            add_servers(
                text,
                &[NewServer {
                    name,
                    server: &up,
                    env_tokens: &none,
                    header_tokens: &none,
                    origin: "added at run time (`interlock servers add` or the reviewer API)"
                        .into(),
                }],
            )
        })
    }

    fn remove(&self, name: &str) -> Result<(), String> {
        self.edit(|text| remove_servers(text, &[name.to_owned()]))
    }

    fn begin_removal(&self, name: &str) -> Result<(), String> {
        let data_dir = self.host.data_dir().map_err(|e| e.to_string())?;
        crate::server_removals::begin(&data_dir, name).map_err(|e| {
            format!(
                "{}: {e}",
                crate::server_removals::note_path(&data_dir, name).display()
            )
        })
    }

    fn end_removal(&self, name: &str) -> Result<(), String> {
        let data_dir = self.host.data_dir().map_err(|e| e.to_string())?;
        crate::server_removals::end(&data_dir, name).map_err(|e| {
            format!(
                "{}: {e}",
                crate::server_removals::note_path(&data_dir, name).display()
            )
        })
    }

    fn load(&self) -> Result<BTreeMap<String, interlock_gateway::config::UpstreamConfig>, String> {
        if !self.path.exists() {
            return Ok(BTreeMap::new());
        }
        self.host
            .gateway_config_with_secrets(Some(&self.path))
            .map(|c| c.servers)
            .map_err(|e| e.to_string())
    }
}

fn inline(m: &BTreeMap<String, String>) -> toml_edit::InlineTable {
    let mut t = toml_edit::InlineTable::new();
    for (k, v) in m {
        t.insert(k, v.as_str().into());
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The operator's file keeps its comments; the new table parses as a
    /// gateway config with the secret referenced, not written.
    #[test]
    fn servers_are_added_with_secrets_referenced_and_removed_again() {
        let text = "# my gateway\nlisten = \"127.0.0.1:8717\"\n\n[servers.files] # mine\ncommand = \"npx\"\n";
        let up = Upstream {
            command: Some("npx".into()),
            args: vec!["-y".into(), "gh".into()],
            env: [("GITHUB_TOKEN".into(), "ghp_secret".into())].into(),
            ..Upstream::default()
        };
        let env_tokens = [(
            "GITHUB_TOKEN".to_owned(),
            "upstream.gh.GITHUB_TOKEN".to_owned(),
        )]
        .into();
        let out = add_servers(
            text,
            &[NewServer {
                name: "gh",
                server: &up,
                env_tokens: &env_tokens,
                header_tokens: &BTreeMap::new(),
                origin: "imported by `interlock connect cursor`".into(),
            }],
        )
        .unwrap();
        assert!(out.starts_with("# my gateway\n") && out.contains("[servers.files] # mine\n"));
        assert!(!out.contains("ghp_secret"), "{out}");
        let c = interlock_gateway::GatewayConfig::parse(&out).unwrap();
        assert_eq!(
            c.servers["gh"].env_keychain["GITHUB_TOKEN"],
            "upstream.gh.GITHUB_TOKEN"
        );
        assert_eq!(c.servers["gh"].args, ["-y", "gh"]);
        assert!(
            out.contains("# imported by `interlock connect cursor`\n[servers.gh]"),
            "{out}"
        );
        assert_eq!(remove_servers(&out, &["gh".into()]).unwrap(), text);
        // A new file starts with the comment, not a blank line.
        let fresh = add_servers(
            "",
            &[NewServer {
                name: "gh",
                server: &up,
                env_tokens: &env_tokens,
                header_tokens: &BTreeMap::new(),
                origin: "o".into(),
            }],
        )
        .unwrap();
        assert!(fresh.starts_with("# o\n[servers.gh]\n"), "{fresh:?}");
    }
}
