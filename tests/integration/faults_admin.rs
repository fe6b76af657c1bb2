//! Issue 44: the owner's key actions from the CLI SIGKILLed at random points
//! — `interlock agents add [--shadow]`, `agents revoke`, `agents shadow` —
//! half with no gateway running (the CLI writes the store and the log
//! itself) and half beside a live one (the CLI asks it over the admin
//! socket). What must hold after every kill: each key's row and its receipt
//! came together or not at all — every key has its `apikey.issued` leaf,
//! every revoked key its `key.revoked` leaf and every `key.revoked` leaf a
//! revoked key, a key's shadow flag is what its last receipt says — and
//! `audit verify` is clean.
//!
//! `INTERLOCK_FAULT_KILLS` and `INTERLOCK_FAULT_SEED` as in `faults.rs`.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use crate::faults::{Campaign, kill_after, log_leaves, timed};
use crate::gateway_util::{Gateway, http};
use crate::util::{stderr, stdout};

/// One key action of the campaign.
#[derive(Clone, Copy, Debug)]
enum Action {
    Revoke,
    ShadowOn,
    AddShadowed,
}

impl Action {
    fn of(i: usize) -> Action {
        [Action::Revoke, Action::ShadowOn, Action::AddShadowed][i % 3]
    }

    /// The command for the agent `name` (added whole before, but for
    /// `AddShadowed`, which adds `name` itself).
    fn args(self, name: &str) -> Vec<String> {
        let v: &[&str] = match self {
            Action::Revoke => &["agents", "revoke", name],
            Action::ShadowOn => &["agents", "shadow", name, "on"],
            Action::AddShadowed => &["agents", "add", name, "--shadow"],
        };
        v.iter().map(|s| (*s).to_owned()).collect()
    }
}

fn run(gw: &Gateway, args: &[&str]) {
    let out = gw.cli(args);
    assert!(
        out.status.success(),
        "{args:?}: {}{}",
        stdout(&out),
        stderr(&out)
    );
}

/// Every key the admin API lists, by hash.
fn keys(gw: &Gateway, owner: &str) -> BTreeMap<String, Value> {
    let (status, _, body) = http(
        &gw.addr,
        "GET",
        "/api/v1/admin/keys",
        &[("Authorization", &format!("Bearer {owner}"))],
        b"",
    );
    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&body));
    let v: Value = serde_json::from_slice(&body).unwrap();
    v["keys"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|k| k["kind"] == "agent")
        .map(|k| (k["id"].as_str().unwrap().to_owned(), k.clone()))
        .collect()
}

fn owner_token(gw: &Gateway) -> String {
    let out = gw.cli(&["admin", "token", "create", "root", "--scope", "owner"]);
    assert!(out.status.success(), "{}", stderr(&out));
    stdout(&out).trim().to_owned()
}

/// Whether `l` is an `admin.action` leaf of `action`.
fn is_action(l: &Value, action: &str) -> bool {
    l["type"] == "admin.action" && l["action"] == action
}

/// The leaves that brought key `hash` into being: its `apikey.issued` (the
/// CLI, connect, the desktop), `key.created` (the admin API) or
/// `key.rotated` naming it as the new key.
fn issue_leaves<'a>(leaves: &'a [Value], hash: &str) -> Vec<&'a Value> {
    leaves
        .iter()
        .filter(|l| {
            (l["type"] == "apikey.issued" || is_action(l, "key.created")) && l["key_hash"] == hash
                || is_action(l, "key.rotated") && l["new_key_hash"] == hash
        })
        .collect()
}

/// The shadow flag key `hash` has by its receipts: its last `key.updated`'s,
/// else what it was issued with (a rotated key's, its predecessor's).
fn shadow_by_receipts(leaves: &[Value], hash: &str) -> bool {
    if let Some(u) = leaves
        .iter()
        .rev()
        .find(|l| is_action(l, "key.updated") && l["key_hash"] == hash)
    {
        return u["shadow"].as_bool().unwrap();
    }
    match issue_leaves(leaves, hash).first() {
        Some(l) if is_action(l, "key.rotated") => {
            shadow_by_receipts(leaves, l["key_hash"].as_str().unwrap())
        }
        Some(l) => l["shadow"].as_bool().unwrap_or(false),
        None => false,
    }
}

/// Checks every agent key against its receipts; returns how many keys are
/// revoked and how many are in shadow mode.
fn check_keys_against_receipts(gw: &Gateway, seed: u64) -> (usize, usize) {
    let reviewer = gw.reviewer_key();
    let owner = owner_token(gw);
    check_keys_with(gw, &owner, &log_leaves(gw, &reviewer), seed)
}

fn check_keys_with(gw: &Gateway, owner: &str, leaves: &[Value], seed: u64) -> (usize, usize) {
    let keys = keys(gw, owner);
    let (mut revoked, mut shadowed) = (0, 0);
    for (hash, k) in &keys {
        let issued = issue_leaves(leaves, hash);
        assert_eq!(issued.len(), 1, "{k} (seed {seed}): issued {issued:?}");
        let revocations: Vec<&Value> = leaves
            .iter()
            .filter(|l| {
                (is_action(l, "key.revoked") || is_action(l, "key.rotated"))
                    && l["key_hash"] == *hash
            })
            .collect();
        assert_eq!(
            revocations.len(),
            usize::from(!k["revoked_at"].is_null()),
            "{k} (seed {seed}): revoked_at against its receipts {revocations:?}"
        );
        revoked += revocations.len();
        let said = shadow_by_receipts(leaves, hash);
        assert_eq!(
            k["shadow"].as_bool().unwrap(),
            said,
            "{k} (seed {seed}): shadow against its receipts"
        );
        shadowed += usize::from(said);
    }
    // No receipt names a key the store does not have.
    for l in leaves {
        let issued = l["type"] == "apikey.issued" || is_action(l, "key.created");
        let named = if issued && l["kind"] == "agent" {
            l["key_hash"].as_str()
        } else if is_action(l, "key.rotated") {
            l["new_key_hash"].as_str()
        } else {
            None
        };
        if let Some(hash) = named {
            assert!(
                keys.contains_key(hash),
                "(seed {seed}) a receipt without its key: {l}"
            );
        }
    }
    gw.assert_audit_clean();
    (revoked, shadowed)
}

#[test]
fn fault_campaign_cli_key_actions_killed_anywhere() {
    let mut gw = Gateway::start("");
    let env = gw.env_for_thread();
    let env_ref: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let mut campaign = Campaign::new("cli key actions");
    let (mut landed, mut ended) = (0, 0);
    let mut by_action = BTreeMap::<String, usize>::new();
    for beside_gateway in [false, true] {
        if !beside_gateway {
            gw.kill();
        } else if gw.exited() {
            gw.start_serving();
        }
        // Each action's own run time here, from an agent not killed.
        let mut windows = Vec::new();
        for (i, action) in [Action::Revoke, Action::ShadowOn, Action::AddShadowed]
            .into_iter()
            .enumerate()
        {
            let name = format!("timing-{beside_gateway}-{i}");
            if !matches!(action, Action::AddShadowed) {
                run(&gw, &["agents", "add", &name]);
            }
            let args = action.args(&name);
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            windows.push(timed(&args, &env_ref));
        }
        for i in 0..campaign.kills.div_ceil(2) {
            let action = Action::of(i);
            let name = format!("agent-{beside_gateway}-{i}");
            if !matches!(action, Action::AddShadowed) {
                run(&gw, &["agents", "add", &name]);
            }
            let args = action.args(&name);
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let after = campaign.kill_point(i, windows[i % 3]);
            if kill_after(&args, &env, after) {
                landed += 1;
                *by_action.entry(format!("{action:?}")).or_default() += 1;
            } else {
                ended += 1;
            }
        }
    }
    let (revoked, shadowed) = check_keys_against_receipts(&gw, campaign.seed);
    eprintln!(
        "fault campaign cli key actions: {landed} kills landed mid-run ({by_action:?}), {ended} \
         runs ended first; {revoked} keys revoked and {shadowed} in shadow mode, each as its \
         receipts say; keys without receipts 0, receipts without keys 0"
    );
}

/// Issue 44: `interlock agents revoke` and `agents shadow` wrote the key's
/// row alone, so who took an agent's key away, or made its calls never
/// block, was nowhere on the log; with or without a gateway running, each
/// now commits with an `admin.action` receipt, and `agents add --shadow` is
/// one transaction.
#[test]
fn regression_issue_44_a_key_revoked_from_the_cli_has_its_receipt() {
    let mut gw = Gateway::start("");
    for beside_gateway in [true, false] {
        if !beside_gateway {
            gw.kill();
        } else if gw.exited() {
            gw.start_serving();
        }
        let a = format!("revoked-{beside_gateway}");
        let b = format!("shadowed-{beside_gateway}");
        let c = format!("born-shadowed-{beside_gateway}");
        run(&gw, &["agents", "add", &a]);
        run(&gw, &["agents", "revoke", &a]);
        run(&gw, &["agents", "add", &b]);
        run(&gw, &["agents", "shadow", &b, "on"]);
        run(&gw, &["agents", "add", &c, "--shadow"]);
        // Nothing left to revoke: refused, and no receipt.
        let again = gw.cli(&["agents", "revoke", &a]);
        assert!(!again.status.success(), "{}", stdout(&again));
    }
    gw.start_serving();
    let (revoked, shadowed) = check_keys_against_receipts(&gw, 0);
    assert_eq!((revoked, shadowed), (2, 4));
    let reviewer = gw.reviewer_key();
    let by: Vec<Value> = log_leaves(&gw, &reviewer)
        .into_iter()
        .filter(|l| l["type"] == "admin.action" && l["action"] == "key.revoked")
        .map(|l| json!([l["name"], l["by"]["name"]]))
        .collect();
    assert_eq!(
        by,
        [
            json!(["revoked-true", "owner (admin socket)"]),
            json!(["revoked-false", "owner (keychain)"])
        ]
    );
}

/// `v` as the `&str`s a command takes.
fn strs(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

fn strs_env(env: &[(String, String)]) -> Vec<(&str, &str)> {
    env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect()
}

fn send_args(to: &str, file: &std::path::Path) -> Vec<String> {
    [
        "keys",
        "log-key",
        "send",
        "--to",
        to,
        "--out",
        file.to_str().unwrap(),
    ]
    .map(str::to_owned)
    .to_vec()
}

fn accept_args(file: &std::path::Path) -> Vec<String> {
    ["keys", "log-key", "accept", file.to_str().unwrap()]
        .map(str::to_owned)
        .to_vec()
}

/// A sealed key file as `send` writes it whole.
fn assert_whole(file: &std::path::Path) {
    let text = std::fs::read_to_string(file).unwrap();
    assert!(
        text.starts_with("-----BEGIN AGE ENCRYPTED FILE-----")
            && text
                .trim_end()
                .ends_with("-----END AGE ENCRYPTED FILE-----"),
        "{} is not a whole sealed key: {text:?}",
        file.display()
    );
}

/// Issue 44: the log key's hand-over to a joining machine SIGKILLed anywhere
/// — `interlock keys log-key send` on the machine that holds it, `accept` on
/// the one that joins. After every kill: a sealed file is absent or whole
/// (never a truncated one under its name); `accept` run again with the same
/// file finishes, or says the request is spent — which it is only once the
/// acceptance is on the log; the joining keychain holds the team's key; every
/// hand-over's acceptance and every written file's sealing are on the log;
/// `audit verify` clean from both machines.
#[test]
fn fault_campaign_log_key_transfer_killed_anywhere() {
    let dir = tempfile::tempdir().unwrap();
    let a = Gateway::start("");
    let mut b = Gateway::joining(&a, "");
    let (env_a, env_b) = (a.env_for_thread(), b.env_for_thread());
    let request = |b: &Gateway| {
        let out = b.cli(&["keys", "log-key", "request"]);
        assert!(out.status.success(), "{}", stderr(&out));
        stdout(&out).trim().to_owned()
    };
    let pinned = |gw: &Gateway| {
        let out = gw.cli(&["keys", "log-key", "show", "--json"]);
        serde_json::from_str::<Value>(&stdout(&out)).unwrap()["public_key"].clone()
    };
    // Each step's own run time, from a hand-over not killed.
    let first = dir.path().join("first.age");
    let to = request(&b);
    let send_window = timed(&strs(&send_args(&to, &first)), &strs_env(&env_a));
    let accept_window = timed(&strs(&accept_args(&first)), &strs_env(&env_b));

    let mut campaign = Campaign::new("log-key transfer");
    let (mut landed, mut ended, mut spent_reruns) = (0, 0, 0);
    for i in 0..campaign.kills {
        let to = request(&b);
        let file = dir.path().join(format!("round-{i}.age"));
        let (send, accept) = (send_args(&to, &file), accept_args(&file));
        let killed = if i % 2 == 0 {
            kill_after(
                &strs(&send),
                &env_a,
                campaign.kill_point(i / 2, send_window),
            )
        } else {
            run(&a, &strs(&send));
            let after = campaign.kill_point(i / 2, accept_window);
            kill_after(&strs(&accept), &env_b, after)
        };
        if killed {
            landed += 1;
        } else {
            ended += 1;
        }
        if !file.exists() {
            // The send was stopped before it wrote the file: sent again.
            run(&a, &strs(&send));
        }
        assert_whole(&file);
        // Run to its end: it finishes, or the killed run had finished.
        let out = b.cli(&strs(&accept));
        if !out.status.success() {
            let seed = campaign.seed;
            assert!(
                i % 2 == 1 && stderr(&out).contains("no transfer"),
                "round {i} (seed {seed}): accept again: {}",
                stderr(&out)
            );
            spent_reruns += 1;
        }
        assert_eq!(pinned(&a), pinned(&b), "round {i}");
    }
    b.start_serving();
    let reviewer = a.reviewer_key();
    let leaves = log_leaves(&a, &reviewer);
    let count = |action: &str| {
        leaves
            .iter()
            .filter(|l| l["type"] == "admin.action" && l["action"] == action)
            .count()
    };
    let rounds = campaign.kills + 1;
    let (accepted, sealed) = (count("log_key.accepted"), count("log_key.sealed"));
    let seed = campaign.seed;
    assert!(
        (rounds..=2 * rounds).contains(&accepted),
        "(seed {seed}) {accepted} acceptances logged for {rounds} hand-overs"
    );
    assert!(
        sealed >= rounds,
        "(seed {seed}) {sealed} sealings logged for {rounds} files"
    );
    a.assert_audit_clean();
    b.assert_audit_clean();
    eprintln!(
        "fault campaign log-key transfer: {landed} kills landed mid-run, {ended} runs ended \
         first; {rounds} hand-overs, {accepted} acceptances and {sealed} sealings logged \
         ({spent_reruns} reruns found the request spent by the killed run); truncated files 0, \
         unlogged acceptances 0, wrong keys 0"
    );
}

/// One admin API request of an owner's script: method, path, body, and the
/// `admin.action` its answer's leaf must be.
struct ApiAction {
    method: &'static str,
    path: String,
    body: Value,
    action: &'static str,
}

/// The `i`th action of the script over `live` (agent keys it created and
/// has not seen revoked).
fn api_action(i: usize, live: &[String]) -> ApiAction {
    let pick = |k: usize| live[k % live.len()].clone();
    match (i % 4, live.is_empty()) {
        (0, _) | (_, true) => ApiAction {
            method: "POST",
            path: "/api/v1/admin/keys".into(),
            body: json!({"kind": "agent", "name": format!("api-{i}"), "monthly_quota": 1000}),
            action: "key.created",
        },
        (1, _) => ApiAction {
            method: "PATCH",
            path: format!("/api/v1/admin/keys/{}", pick(i)),
            body: json!({"shadow": i % 8 == 1, "reason": "fault campaign"}),
            action: "key.updated",
        },
        (2, _) => ApiAction {
            method: "POST",
            path: format!("/api/v1/admin/keys/{}/rotate", pick(i)),
            body: json!({}),
            action: "key.rotated",
        },
        _ => ApiAction {
            method: "POST",
            path: format!("/api/v1/admin/keys/{}/revoke", pick(i)),
            body: json!({}),
            action: "key.revoked",
        },
    }
}

/// Issue 44: `interlock serve` SIGKILLed while an owner's script drives the
/// admin API — keys created, updated (shadow mode), rotated and revoked one
/// after another. After the restarts: every action the API acknowledged is
/// on the log at the index its answer gave; every key is as its receipts say
/// (issued once, revoked exactly when a revocation or rotation names it,
/// shadow as its last receipt says), whatever the kill cut; `audit verify`
/// clean.
#[test]
fn fault_campaign_admin_api_with_serve_killed_anywhere() {
    let mut gw = Gateway::start("");
    let owner = owner_token(&gw);
    let mut campaign = Campaign::new("admin API under serve kills");
    let mut acked: Vec<(u64, &'static str)> = Vec::new();
    let mut live: Vec<String> = Vec::new();
    let mut next = 0;
    let (mut refused, mut cut) = (0, 0);
    for _ in 0..campaign.kills {
        let kill_at = campaign.point(std::time::Duration::from_millis(400));
        let addr = gw.addr.clone();
        let (tx, rx) = std::sync::mpsc::channel::<()>();
        let script = {
            let owner = owner.clone();
            let mut live = live.clone();
            let mut i = next;
            std::thread::spawn(move || {
                let mut acked = Vec::new();
                let (mut refused, mut cut) = (0, 0);
                while rx.try_recv().is_err() {
                    let a = api_action(i, &live);
                    i += 1;
                    let body = serde_json::to_vec(&a.body).unwrap();
                    let auth = format!("Bearer {owner}");
                    let headers = [
                        ("Authorization", auth.as_str()),
                        ("Content-Type", "application/json"),
                    ];
                    match crate::gateway_util::try_http(&addr, a.method, &a.path, &headers, &body) {
                        Ok((200, _, b)) => {
                            let v: Value = serde_json::from_slice(&b).unwrap();
                            acked.push((v["leaf"].as_u64().unwrap(), a.action));
                            match a.action {
                                "key.created" => live.push(v["id"].as_str().unwrap().into()),
                                "key.rotated" => {
                                    live.retain(|k| *k != v["revoked"]);
                                    live.push(v["id"].as_str().unwrap().into());
                                }
                                "key.revoked" => live.retain(|k| *k != v["id"]),
                                _ => {}
                            }
                        }
                        // A key an unacknowledged action revoked, say.
                        Ok(_) => refused += 1,
                        Err(_) => {
                            cut += 1;
                            break;
                        }
                    }
                }
                (acked, live, i, refused, cut)
            })
        };
        std::thread::sleep(kill_at);
        gw.kill();
        let _ = tx.send(());
        let (a, l, i, r, c) = script.join().unwrap();
        acked.extend(a);
        (live, next, refused, cut) = (l, i, refused + r, cut + c);
        gw.restart();
    }
    let seed = campaign.seed;
    let reviewer = gw.reviewer_key();
    let leaves = log_leaves(&gw, &reviewer);
    for (index, action) in &acked {
        assert!(
            is_action(&leaves[*index as usize], action),
            "(seed {seed}) acknowledged {action} at {index}: {}",
            leaves[*index as usize]
        );
    }
    let (revoked, shadowed) = check_keys_with(&gw, &owner, &leaves, seed);
    eprintln!(
        "fault campaign admin API under serve kills: {} kills; {} actions acknowledged, each on \
         the log; {refused} refused (their key gone), {cut} cut by a kill; {revoked} keys revoked \
         and {shadowed} in shadow mode, each as its receipts say; lost 0, half-applied 0",
        campaign.kills,
        acked.len(),
    );
}

/// Issue 44: `interlock standing add` and `standing revoke` SIGKILLed at
/// random points beside a live gateway. A grant was stored, then its
/// `standing.granted` leaf appended: a kill between the two left a standing
/// approval in force — calls of its class passing without review — with no
/// receipt of who granted it; a revocation likewise. Each now commits with
/// its leaf. After every kill: each standing approval has exactly one
/// `standing.granted` leaf and no such leaf lacks its approval; one is
/// revoked exactly when a `standing.revoked` leaf names it; `audit verify`
/// clean.
#[test]
fn fault_campaign_standing_grants_and_revocations_killed_anywhere() {
    let script = crate::gateway_util::peers_dir().join("drifting-server.mjs");
    let gw = Gateway::start(&format!(
        "[servers.drifty]\ncommand = \"node\"\nargs = [{:?}]\n",
        script.to_str().unwrap()
    ));
    gw.wait_for_server("drifty", "PENDING");
    gw.approve_server("drifty");
    gw.wait_for_tool("drifty__add", true);
    let config = gw.dir.path().join("gateway.toml");
    let grant: Vec<String> = [
        "standing",
        "add",
        "--role",
        "default",
        "--tool",
        "drifty__add",
        "--shape",
        r#"{"a": "*", "b": "*"}"#,
        "--for",
        "1h",
        "--reason",
        "sums are harmless",
        "--config",
        config.to_str().unwrap(),
    ]
    .map(str::to_owned)
    .to_vec();
    let env = gw.env_for_thread();
    let reviewer = gw.reviewer_key();
    let standing = || -> BTreeMap<String, Value> {
        gw.api_get(&reviewer, "/api/v1/standing")["standing"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| (s["id"].as_str().unwrap().to_owned(), s.clone()))
            .collect()
    };
    let active = || -> Vec<String> {
        standing()
            .into_iter()
            .filter(|(_, s)| s["active"] == true)
            .map(|(id, _)| id)
            .collect()
    };
    let grant_window = timed(&strs(&grant), &strs_env(&env));
    let some = active().pop().unwrap();
    let revoke_window = timed(&["standing", "revoke", &some], &strs_env(&env));

    let mut campaign = Campaign::new("standing grants/revocations");
    let (mut landed, mut ended) = (0, 0);
    for i in 0..campaign.kills {
        let killed = if i % 2 == 0 {
            kill_after(
                &strs(&grant),
                &env,
                campaign.kill_point(i / 2, grant_window),
            )
        } else {
            match active().pop() {
                Some(id) => kill_after(
                    &["standing", "revoke", &id],
                    &env,
                    campaign.kill_point(i / 2, revoke_window),
                ),
                None => {
                    run(&gw, &strs(&grant));
                    false
                }
            }
        };
        if killed {
            landed += 1;
        } else {
            ended += 1;
        }
        // A second apart: the next grant's document (its end) differs.
        std::thread::sleep(std::time::Duration::from_millis(1000));
    }
    let seed = campaign.seed;
    let leaves = log_leaves(&gw, &reviewer);
    let named = |kind: &str, id: &str| {
        leaves
            .iter()
            .filter(|l| l["type"] == kind && l["id"] == id)
            .count()
    };
    let all = standing();
    for (id, s) in &all {
        assert_eq!(
            named("standing.granted", id),
            1,
            "{id} (seed {seed}): a standing approval without its one receipt: {s}"
        );
        assert_eq!(
            named("standing.revoked", id),
            usize::from(!s["revoked_at"].is_null()),
            "{id} (seed {seed}): revoked against its receipts: {s}"
        );
    }
    for l in &leaves {
        if l["type"] == "standing.granted" {
            let id = l["id"].as_str().unwrap();
            assert!(
                all.contains_key(id),
                "(seed {seed}) a grant's receipt without its grant: {id}"
            );
        }
    }
    gw.assert_audit_clean();
    let revoked = all.values().filter(|s| !s["revoked_at"].is_null()).count();
    eprintln!(
        "fault campaign standing grants/revocations: {landed} kills landed mid-run, {ended} runs \
         ended first; {} standing approvals, {revoked} revoked, each with its receipts; grants \
         without a receipt 0, receipts without a grant 0",
        all.len()
    );
}
