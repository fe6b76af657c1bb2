//! Issue 20 item 3: the admin API and CLI — admin tokens of their own scopes
//! manage API keys and their settings through a real `interlock serve`; every
//! action is a log leaf. The regression tests are named after the holes an
//! attacker would try: a scope raising itself, an auditor writing, a revoked
//! or rotated token reused, an agent key on the admin API.

use serde_json::{Value, json};

use crate::gateway_util::{Gateway, http};
use crate::util::{interlock_with, stderr, stdout};

fn call(gw: &Gateway, token: &str, method: &str, path: &str, body: Option<Value>) -> (u16, Value) {
    let bytes = body
        .map(|b| serde_json::to_vec(&b).unwrap())
        .unwrap_or_default();
    let auth = format!("Bearer {token}");
    let mut headers = vec![("Authorization", auth.as_str())];
    if !bytes.is_empty() {
        headers.push(("Content-Type", "application/json"));
    }
    let (s, _, b) = http(&gw.addr, method, path, &headers, &bytes);
    (s, serde_json::from_slice(&b).unwrap_or(Value::Null))
}

/// `interlock admin token create NAME --scope S` beside the running gateway
/// (through its admin socket).
fn mint(gw: &Gateway, name: &str, scope: &str) -> String {
    let out = gw.cli(&["admin", "token", "create", name, "--scope", scope]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("by the running gateway"),
        "{}",
        stderr(&out)
    );
    let token = stdout(&out).trim().to_owned();
    assert!(token.starts_with("ila_"), "{token}");
    token
}

/// `tools/list` with an agent key: its HTTP status.
fn mcp_status(gw: &Gateway, key: &str) -> u16 {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}});
    crate::gateway_util::post_mcp(
        &gw.addr,
        key,
        &[("MCP-Protocol-Version", "2026-07-28")],
        &serde_json::to_vec(&body).unwrap(),
    )
    .0
}

fn admin_actions(gw: &Gateway) -> Vec<Value> {
    let reviewer = gw.reviewer_key();
    gw.api_get(&reviewer, "/api/v1/log?from=0&limit=1000")["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["entry"].clone())
        .filter(|e| e["type"] == "admin.action")
        .collect()
}

#[test]
fn admin_tokens_manage_keys_and_their_settings_and_every_action_is_a_leaf() {
    let gw = Gateway::start("[roles.readonly]\ntools = [\"*__get_*\"]\n");
    let owner = mint(&gw, "root", "owner");
    let (s, me) = call(&gw, &owner, "GET", "/api/v1/admin/whoami", None);
    assert_eq!((s, me["scope"].as_str()), (200, Some("owner")), "{me}");

    // Created with its settings; the key is shown once and works on /mcp.
    let (s, created) = call(
        &gw,
        &owner,
        "POST",
        "/api/v1/admin/keys",
        Some(
            json!({"kind": "agent", "name": "ci-bot", "role": "readonly", "rate_per_minute": 30,
                    "monthly_quota": 1000, "max_response_bytes": 65536, "max_array_items": 100,
                    "response_policy": {"pii": "redact", "secrets": "block"}}),
        ),
    );
    assert_eq!(s, 200, "{created}");
    let key = created["key"].as_str().unwrap().to_owned();
    let id = created["id"].as_str().unwrap().to_owned();
    assert_eq!(mcp_status(&gw, &key), 200);
    let (_, list) = call(&gw, &owner, "GET", "/api/v1/admin/keys", None);
    let listed = list["keys"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["id"] == id.as_str())
        .unwrap()
        .clone();
    assert_eq!(listed["role"], "readonly");
    assert_eq!(listed["settings"]["rate_per_minute"], 30);
    assert_eq!(listed["settings"]["response_policy"]["secrets"], "block");
    assert!(!list.to_string().contains(&key), "the key is never listed");

    // Updated: absent fields kept, null clears.
    let (s, updated) = call(
        &gw,
        &owner,
        "PATCH",
        &format!("/api/v1/admin/keys/{id}"),
        Some(
            json!({"shadow": true, "monthly_quota": null, "role": "default",
                    "reason": "a dry run of the new policy"}),
        ),
    );
    assert_eq!(s, 200, "{updated}");
    assert_eq!(updated["shadow"], true);
    assert_eq!(updated["role"], "default");
    assert_eq!(updated["settings"]["monthly_quota"], Value::Null);
    assert_eq!(updated["settings"]["rate_per_minute"], 30);
    // Bad input: a clear reason.
    for body in [
        json!({"role": "no-such-role"}),
        json!({"rate_per_minute": -1}),
        json!({"response_policy": {"pii": "shred"}}),
        json!({"colour": "blue"}),
        json!({"name": "renamed"}),
    ] {
        let (s, b) = call(
            &gw,
            &owner,
            "PATCH",
            &format!("/api/v1/admin/keys/{id}"),
            Some(body.clone()),
        );
        assert_eq!(s, 400, "{body}: {b}");
        assert!(b["error"]["message"].as_str().is_some(), "{b}");
    }

    // Rotated: the new key works, the old one is refused at once.
    let (s, rotated) = call(
        &gw,
        &owner,
        "POST",
        &format!("/api/v1/admin/keys/{id}/rotate"),
        Some(json!({})),
    );
    assert_eq!(s, 200, "{rotated}");
    let new_key = rotated["key"].as_str().unwrap().to_owned();
    let new_id = rotated["id"].as_str().unwrap().to_owned();
    assert_eq!(
        mcp_status(&gw, &key),
        401,
        "the rotated-away key is refused"
    );
    assert_eq!(mcp_status(&gw, &new_key), 200);
    let (_, list) = call(&gw, &owner, "GET", "/api/v1/admin/keys", None);
    let new = list["keys"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["id"] == new_id.as_str())
        .unwrap()
        .clone();
    assert_eq!(
        (new["name"].as_str(), new["shadow"].as_bool()),
        (Some("ci-bot"), Some(true))
    );
    assert_eq!(
        new["settings"]["rate_per_minute"], 30,
        "settings follow the rotation"
    );
    // A rotated-away key cannot be rotated again.
    let (s, _) = call(
        &gw,
        &owner,
        "POST",
        &format!("/api/v1/admin/keys/{id}/rotate"),
        Some(json!({})),
    );
    assert_eq!(s, 409);

    // Revoked: refused at once.
    let (s, b) = call(
        &gw,
        &owner,
        "POST",
        &format!("/api/v1/admin/keys/{new_id}/revoke"),
        Some(json!({})),
    );
    assert_eq!(s, 200, "{b}");
    assert_eq!(mcp_status(&gw, &new_key), 401);

    // The CLI is a client of the same API.
    let mut env: Vec<(String, String)> = gw.env_for_thread();
    env.push(("INTERLOCK_ADMIN_TOKEN".into(), owner.clone()));
    env.push((
        "INTERLOCK_GATEWAY_URL".into(),
        format!("http://{}", gw.addr),
    ));
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let out = interlock_with(
        &[
            "admin", "keys", "create", "nightly", "--rate", "5", "--quota", "none",
        ],
        None,
        &env,
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let made: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(mcp_status(&gw, made["key"].as_str().unwrap()), 200);
    let out = interlock_with(
        &[
            "admin",
            "keys",
            "update",
            made["id"].as_str().unwrap(),
            "--role",
            "nope",
        ],
        None,
        &env,
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("unknown role"), "{}", stderr(&out));

    // Every action is a leaf naming the token (never a key or token value).
    let actions = admin_actions(&gw);
    let kinds: Vec<&str> = actions
        .iter()
        .filter_map(|a| a["action"].as_str())
        .collect();
    for k in [
        "token.created",
        "key.created",
        "key.updated",
        "key.rotated",
        "key.revoked",
    ] {
        assert!(kinds.contains(&k), "{k} missing: {kinds:?}");
    }
    let text = serde_json::to_string(&actions).unwrap();
    for secret in [&owner, &key, &new_key] {
        assert!(!text.contains(secret.as_str()), "a secret is on the log");
    }
    assert!(
        actions
            .iter()
            .filter(|a| a["action"] != "token.created")
            .all(|a| a["by"]["name"] == "root")
    );
    gw.assert_audit_clean();
}

#[test]
fn regression_a_scope_cannot_escalate_itself() {
    let gw = Gateway::start("");
    let operator = mint(&gw, "ops", "operator");
    let security = mint(&gw, "sec", "security_reviewer");
    // No scope but owner mints tokens: not an owner token, not its own scope.
    for scope in ["owner", "operator"] {
        let (s, b) = call(
            &gw,
            &operator,
            "POST",
            "/api/v1/admin/tokens",
            Some(json!({"name": "me2", "scope": scope})),
        );
        assert_eq!(s, 403, "{scope}: {b}");
    }
    // Nor a reviewer key (it reads everything and submits decisions).
    let (s, b) = call(
        &gw,
        &operator,
        "POST",
        "/api/v1/admin/keys",
        Some(json!({"kind": "reviewer", "name": "r"})),
    );
    assert_eq!(s, 403, "{b}");
    // An operator's agent key may not be born without the safety settings a
    // security reviewer owns, nor have them changed.
    let (s, b) = call(
        &gw,
        &operator,
        "POST",
        "/api/v1/admin/keys",
        Some(json!({"name": "a", "shadow": false, "max_response_bytes": 1})),
    );
    assert_eq!(s, 403, "{b}");
    let (s, made) = call(
        &gw,
        &operator,
        "POST",
        "/api/v1/admin/keys",
        Some(json!({"name": "a", "rate_per_minute": 10})),
    );
    assert_eq!(s, 200, "{made}");
    let id = made["id"].as_str().unwrap();
    let (s, b) = call(
        &gw,
        &operator,
        "PATCH",
        &format!("/api/v1/admin/keys/{id}"),
        Some(json!({"response_policy": {"secrets": "allow"}})),
    );
    assert_eq!(s, 403, "{b}");
    // A security reviewer may not raise limits.
    let (s, b) = call(
        &gw,
        &security,
        "PATCH",
        &format!("/api/v1/admin/keys/{id}"),
        Some(json!({"rate_per_minute": 100000})),
    );
    assert_eq!(s, 403, "{b}");
    let (s, b) = call(
        &gw,
        &security,
        "PATCH",
        &format!("/api/v1/admin/keys/{id}"),
        Some(json!({"max_array_items": 50})),
    );
    assert_eq!(s, 200, "{b}");
    // Nor can a token read or revoke tokens without the scope for it.
    let (s, _) = call(&gw, &operator, "GET", "/api/v1/admin/tokens", None);
    assert_eq!(s, 403);
    let reviewer_id = {
        let reviewer = gw.reviewer_key();
        interlock_gateway::keys::key_hash(&reviewer)
    };
    let (s, b) = call(
        &gw,
        &operator,
        "POST",
        &format!("/api/v1/admin/keys/{reviewer_id}/rotate"),
        Some(json!({})),
    );
    assert_eq!(
        s, 403,
        "an operator must not mint a reviewer key by rotation: {b}"
    );
}

#[test]
fn regression_an_auditor_token_cannot_write() {
    let gw = Gateway::start("");
    let owner = mint(&gw, "root", "owner");
    let auditor = mint(&gw, "audit", "auditor");
    let (_, made) = call(
        &gw,
        &owner,
        "POST",
        "/api/v1/admin/keys",
        Some(json!({"name": "x"})),
    );
    let id = made["id"].as_str().unwrap().to_owned();
    let (s, list) = call(&gw, &auditor, "GET", "/api/v1/admin/keys", None);
    assert_eq!(s, 200, "{list}");
    let (s, _) = call(&gw, &auditor, "GET", "/api/v1/admin/tokens", None);
    assert_eq!(s, 200);
    let before = admin_actions(&gw).len();
    for (method, path, body) in [
        (
            "POST",
            "/api/v1/admin/keys".to_owned(),
            json!({"name": "y"}),
        ),
        (
            "PATCH",
            format!("/api/v1/admin/keys/{id}"),
            json!({"shadow": true}),
        ),
        (
            "PATCH",
            format!("/api/v1/admin/keys/{id}"),
            json!({"rate_per_minute": 1}),
        ),
        ("POST", format!("/api/v1/admin/keys/{id}/rotate"), json!({})),
        ("POST", format!("/api/v1/admin/keys/{id}/revoke"), json!({})),
        (
            "POST",
            "/api/v1/admin/tokens".to_owned(),
            json!({"name": "z", "scope": "auditor"}),
        ),
    ] {
        let (s, b) = call(&gw, &auditor, method, &path, Some(body));
        assert_eq!(s, 403, "{method} {path}: {b}");
    }
    assert_eq!(admin_actions(&gw).len(), before, "nothing was written");
}

#[test]
fn regression_a_revoked_or_rotated_token_is_refused() {
    let gw = Gateway::start("");
    let owner = mint(&gw, "root", "owner");
    let (s, t) = call(
        &gw,
        &owner,
        "POST",
        "/api/v1/admin/tokens",
        Some(json!({"name": "ops", "scope": "operator"})),
    );
    assert_eq!(s, 200, "{t}");
    let operator = t["token"].as_str().unwrap().to_owned();
    let (s, _) = call(&gw, &operator, "GET", "/api/v1/admin/keys", None);
    assert_eq!(s, 200);
    let (s, b) = call(
        &gw,
        &owner,
        "POST",
        &format!("/api/v1/admin/tokens/{}/revoke", t["id"].as_str().unwrap()),
        Some(json!({})),
    );
    assert_eq!(s, 200, "{b}");
    // At once: no cache keeps it alive.
    let (s, _) = call(&gw, &operator, "GET", "/api/v1/admin/keys", None);
    assert_eq!(s, 401);
    // Revoking twice is refused, not silently repeated.
    let (s, _) = call(
        &gw,
        &owner,
        "POST",
        &format!("/api/v1/admin/tokens/{}/revoke", t["id"].as_str().unwrap()),
        Some(json!({})),
    );
    assert_eq!(s, 409);
}

#[test]
fn regression_an_agent_key_cannot_reach_the_admin_api() {
    let gw = Gateway::start("");
    let reviewer = gw.reviewer_key();
    for key in [gw.agent_key.as_str(), reviewer.as_str(), "ila_forged", ""] {
        let (s, _) = call(&gw, key, "GET", "/api/v1/admin/keys", None);
        assert_eq!(s, 401, "{key:?}");
        let (s, _) = call(
            &gw,
            key,
            "POST",
            "/api/v1/admin/keys",
            Some(json!({"name": "evil"})),
        );
        assert_eq!(s, 401, "{key:?}");
    }
    // And an admin token is no API key: refused on /mcp and the reviewer API.
    let owner = mint(&gw, "root", "owner");
    assert_eq!(mcp_status(&gw, &owner), 401);
    let (s, _) = call(&gw, &owner, "GET", "/api/v1/inbox", None);
    assert_eq!(s, 401);
}

/// Issue 39 item 3: a `role` change needed only `EditLimits`, for any key
/// kind, and any agent role on a reviewer key made it a full reviewer key —
/// so an operator turned a metrics-only (or CI review-only) key into one that
/// reads the inbox and submits decisions. A reviewer key's role is now the
/// owner's to change, and only among the reviewer roles; an agent key's
/// role changes only among the agent roles.
#[test]
fn regression_issue_39_an_operator_cannot_turn_a_metrics_key_into_a_reviewer_key() {
    let gw = Gateway::start("");
    let operator = mint(&gw, "ops", "operator");
    let owner = mint(&gw, "root", "owner");
    let out = gw.cli(&["reviewers", "add", "prometheus", "--scope", "metrics"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let metrics_key = stdout(&out).trim().to_owned();
    let id = interlock_gateway::keys::key_hash(&metrics_key);
    let patch = format!("/api/v1/admin/keys/{id}");
    // An agent role is no reviewer key's role; the full reviewer role is
    // the owner's to give.
    for (role, refused) in [("default", 400), ("reviewer", 403)] {
        let (s, b) = call(&gw, &operator, "PATCH", &patch, Some(json!({"role": role})));
        assert_eq!(s, refused, "{role}: {b}");
    }
    // Still metrics-only: the inbox stays closed to it.
    let (s, _, _) = http(
        &gw.addr,
        "GET",
        "/api/v1/inbox",
        &[("Authorization", &format!("Bearer {metrics_key}"))],
        b"",
    );
    assert_eq!(s, 403);
    // The owner may change it, but only to a reviewer role.
    let (s, b) = call(
        &gw,
        &owner,
        "PATCH",
        &patch,
        Some(json!({"role": "default"})),
    );
    assert_eq!(s, 400, "an agent role on a reviewer key: {b}");
    let (s, b) = call(
        &gw,
        &owner,
        "PATCH",
        &patch,
        Some(json!({"role": "review"})),
    );
    assert_eq!(s, 200, "{b}");
    // An agent key's role changes among the agent roles only.
    let (s, made) = call(
        &gw,
        &operator,
        "POST",
        "/api/v1/admin/keys",
        Some(json!({"name": "worker"})),
    );
    assert_eq!(s, 200, "{made}");
    let agent = format!("/api/v1/admin/keys/{}", made["id"].as_str().unwrap());
    let (s, b) = call(
        &gw,
        &operator,
        "PATCH",
        &agent,
        Some(json!({"role": "reviewer"})),
    );
    assert_eq!(s, 400, "{b}");
    let (s, b) = call(
        &gw,
        &operator,
        "PATCH",
        &agent,
        Some(json!({"role": "default"})),
    );
    assert_eq!(s, 200, "{b}");
}

/// Issue 39 item 4: shadow mode (forward what would be held or stopped) was
/// a security reviewer's `EditSafety`: it switched enforcement off for a key
/// without any approver's signature, and said nothing of why. It is now the
/// owner's alone, with a reason that the leaf keeps beside who changed it.
#[test]
fn regression_issue_39_shadow_mode_is_the_owners_with_a_logged_reason() {
    let gw = Gateway::start("");
    let security = mint(&gw, "sec", "security_reviewer");
    let owner = mint(&gw, "root", "owner");
    let (s, made) = call(
        &gw,
        &owner,
        "POST",
        "/api/v1/admin/keys",
        Some(json!({"name": "shadowed"})),
    );
    assert_eq!(s, 200, "{made}");
    let key = format!("/api/v1/admin/keys/{}", made["id"].as_str().unwrap());
    let (s, b) = call(
        &gw,
        &security,
        "PATCH",
        &key,
        Some(json!({"shadow": true, "reason": "testing"})),
    );
    assert_eq!(s, 403, "{b}");
    let (s, b) = call(&gw, &owner, "PATCH", &key, Some(json!({"shadow": true})));
    assert_eq!(s, 400, "no reason: {b}");
    assert!(b.to_string().contains("reason"), "{b}");
    let (s, b) = call(
        &gw,
        &owner,
        "PATCH",
        &key,
        Some(json!({"shadow": true, "reason": "dry run of the new roles"})),
    );
    assert_eq!(s, 200, "{b}");
    assert_eq!(b["shadow"], true, "{b}");
    let leaf = admin_actions(&gw)
        .into_iter()
        .rev()
        .find(|a| a["action"] == "key.updated")
        .unwrap();
    assert_eq!(leaf["by"]["name"], "root", "{leaf}");
    assert_eq!(leaf["by"]["scope"], "owner", "{leaf}");
    assert!(
        leaf.to_string().contains("dry run of the new roles"),
        "{leaf}"
    );
    // The security reviewer keeps what is theirs: response caps.
    let (s, b) = call(
        &gw,
        &security,
        "PATCH",
        &key,
        Some(json!({"max_array_items": 50})),
    );
    assert_eq!(s, 200, "{b}");
}

/// Issue 39 item 5: key names were not unique, so an operator could create a
/// second agent key named like an existing agent, become `agent:<name>`, run
/// that agent's approved plans and consume its approved held calls. The
/// admin API refuses a name an active key of the same kind has (409
/// `name_taken`), and an agent name a revoked key had (409 `name_retired`):
/// the revoked agent's plans and held calls are still `agent:<name>`'s, so a
/// new key under it would inherit them. Only a rotation (logged with both
/// hashes) carries an agent's identity to a new key.
#[test]
fn regression_issue_39_an_operator_cannot_take_an_agents_name() {
    let gw = Gateway::start("");
    let operator = mint(&gw, "ops", "operator");
    let out = gw.cli(&["agents", "add", "deployer"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let (s, b) = call(
        &gw,
        &operator,
        "POST",
        "/api/v1/admin/keys",
        Some(json!({"name": "deployer"})),
    );
    assert_eq!(s, 409, "{b}");
    assert_eq!(b["error"]["code"], "name_taken", "{b}");
    let (s, made) = call(
        &gw,
        &operator,
        "POST",
        "/api/v1/admin/keys",
        Some(json!({"name": "deployer-2"})),
    );
    assert_eq!(s, 200, "{made}");
    let id = made["id"].as_str().unwrap();
    let (s, b) = call(
        &gw,
        &operator,
        "POST",
        &format!("/api/v1/admin/keys/{id}/revoke"),
        Some(json!({})),
    );
    assert_eq!(s, 200, "{b}");
    let (s, b) = call(
        &gw,
        &operator,
        "POST",
        "/api/v1/admin/keys",
        Some(json!({"name": "deployer-2"})),
    );
    assert_eq!(s, 409, "a revoked agent's name was given again: {b}");
    assert_eq!(b["error"]["code"], "name_retired", "{b}");
    assert!(
        b["error"]["message"].as_str().unwrap().contains("rotate"),
        "{b}"
    );
    // A reviewer key's name is a label: a revoked one's may be used again.
    let reviewer = json!({"name": "night-shift", "kind": "reviewer", "role": "reviewer"});
    let owner = mint(&gw, "root", "owner");
    let (s, made) = call(
        &gw,
        &owner,
        "POST",
        "/api/v1/admin/keys",
        Some(reviewer.clone()),
    );
    assert_eq!(s, 200, "{made}");
    let id = made["id"].as_str().unwrap();
    let (s, b) = call(
        &gw,
        &owner,
        "POST",
        &format!("/api/v1/admin/keys/{id}/revoke"),
        Some(json!({})),
    );
    assert_eq!(s, 200, "{b}");
    let (s, b) = call(&gw, &owner, "POST", "/api/v1/admin/keys", Some(reviewer));
    assert_eq!(s, 200, "a revoked reviewer key's name stays usable: {b}");
    // Rotating keeps the identity: the new key has the name, the old is revoked.
    let (s, list) = call(&gw, &operator, "GET", "/api/v1/admin/keys", None);
    assert_eq!(s, 200, "{list}");
    let deployer = list["keys"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["name"] == "deployer" && k["revoked_at"].is_null())
        .unwrap_or_else(|| panic!("{list}"))["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let (s, b) = call(
        &gw,
        &operator,
        "POST",
        &format!("/api/v1/admin/keys/{deployer}/rotate"),
        Some(json!({})),
    );
    assert_eq!(s, 200, "rotating a live agent key keeps its name: {b}");
}

/// Issue 39 item 5, the owner's side: `interlock agents add` issued a second
/// key under an existing agent's name (through the running gateway's socket,
/// or straight into the data directory), which became `agent:<name>` and ran
/// that agent's approved plans. The name is one active key's there too.
#[test]
fn regression_issue_39_the_cli_cannot_issue_a_second_key_under_a_name() {
    let mut gw = Gateway::start("");
    let out = gw.cli(&["agents", "add", "deployer"]);
    assert!(out.status.success(), "{}", stderr(&out));
    // Beside the running gateway (its admin socket issues keys) ...
    let again = gw.cli(&["agents", "add", "deployer"]);
    assert!(!again.status.success());
    assert!(
        stderr(&again).contains("named \"deployer\" already"),
        "{}",
        stderr(&again)
    );
    // ... and with none running (the CLI opens the data directory itself).
    gw.kill();
    let again = gw.cli(&["agents", "add", "deployer"]);
    assert_eq!(again.status.code(), Some(1), "{}", stderr(&again));
    assert!(
        stderr(&again).contains("named \"deployer\" already"),
        "{}",
        stderr(&again)
    );
    // A reviewer key may carry the name (an agent's name is its identity, a
    // reviewer key's is not); a revoked agent's name is never given again,
    // with or without a gateway running.
    let reviewer = gw.cli(&["reviewers", "add", "deployer"]);
    assert!(reviewer.status.success(), "{}", stderr(&reviewer));
    let revoked = gw.cli(&["agents", "revoke", "deployer"]);
    assert!(revoked.status.success(), "{}", stderr(&revoked));
    let again = gw.cli(&["agents", "add", "deployer"]);
    assert_eq!(again.status.code(), Some(1), "{}", stderr(&again));
    assert!(
        stderr(&again).contains("a revoked agent key was named \"deployer\""),
        "{}",
        stderr(&again)
    );
    gw.restart();
    let again = gw.cli(&["agents", "add", "deployer"]);
    assert!(!again.status.success());
    assert!(
        stderr(&again).contains("a revoked agent key was named \"deployer\""),
        "{}",
        stderr(&again)
    );
}
