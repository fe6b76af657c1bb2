//! What a reviewer sees of how a `command` server is started (issue 38): the
//! launch pinned now and at approval, which of its members changed, its
//! sandbox setting (`"off"` flagged), and what the sandbox grants it.

use interlock_surface::Surface;
use serde_json::{Value, json};

use crate::config::Transport;

/// `launch` of a server's summary on the reviewer API; `null` for an HTTP
/// server.
pub fn launch_json(
    transport: Option<&Transport>,
    observed: Option<&Surface>,
    baseline: Option<&Surface>,
) -> Value {
    let Some((launch, sandbox)) = transport.and_then(Transport::launch) else {
        return Value::Null;
    };
    let grants = if sandbox.is_off() {
        Value::Null
    } else {
        match interlock_sandbox::defaults::derive(&launch, std::env::var_os("PATH").as_deref()) {
            Ok(d) => {
                let profile = interlock_sandbox::confine::profile_of(sandbox);
                let paths = |v: &[std::path::PathBuf]| {
                    v.iter()
                        .map(|p| p.display().to_string())
                        .collect::<Vec<_>>()
                };
                let mut read = paths(&d.read);
                read.extend(paths(&profile.read));
                let mut write = paths(&d.write);
                write.extend(paths(&profile.write));
                json!({
                    "program": d.program.display().to_string(),
                    "read": read,
                    "write": write,
                    "net": profile.net,
                    "limits": profile.limits,
                })
            }
            Err(e) => json!({ "error": e }),
        }
    };
    let (now, approved) = (
        observed.and_then(Surface::launch),
        baseline.and_then(Surface::launch),
    );
    json!({
        "pinned": now.map(interlock_canon::to_serde_json),
        "approved": approved.map(interlock_canon::to_serde_json),
        "changed": if baseline.is_some() {
            interlock_surface::launch_fields_changed(approved, now)
        } else {
            Vec::new()
        },
        "sandbox_off": sandbox.is_off(),
        "grants": grants,
    })
}
