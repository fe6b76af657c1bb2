//! Team mode: a reviewer's machine deciding on a gateway that runs elsewhere
//! (the desktop app connected to a team's `interlock serve`), through
//! `interlock_gateway::client` and `interlock_host::decide_remote` — the same
//! calls the desktop app makes — against a real gateway, a real upstream and a
//! real keychain.

use std::time::Duration;

use futures_util::StreamExt;
use interlock_core::Decision;
use interlock_gateway::client::{ClientError, ReviewerClient, Subject};
use interlock_host::{Countersign, HostError, decide_remote};
use interlock_keychain::Keychain;
use serde_json::Value;

use crate::gateway_util::{Gateway, peers_dir, write_file_plan};

/// The reviewer's own keychain (a service of its own, so the gateway's keys and
/// this machine's are apart, as on two machines); removed when the test ends.
struct ReviewerKeychain(Keychain);

impl Drop for ReviewerKeychain {
    fn drop(&mut self) {
        let _ = self.0.delete_key("approver");
        let _ = self.0.delete_token("team");
    }
}

#[test]
fn a_reviewer_decides_on_a_team_gateway_with_a_key_that_stays_in_its_keychain() {
    let dir = tempfile::tempdir().unwrap();
    let drift_file = dir.path().join("greet-description.txt");
    let gw = Gateway::start(&format!(
        "[servers.drifty]\ncommand = \"node\"\nargs = [{:?}]\nenv = {{ DRIFT_FILE = {:?} }}\n",
        peers_dir().join("drifting-server.mjs").to_str().unwrap(),
        drift_file.to_str().unwrap(),
    ));
    gw.wait_for_server("drifty", "PENDING");

    let service = format!("interlock-team-test-{}", std::process::id());
    let kc = ReviewerKeychain(
        Keychain::open(&service).expect("a Secret Service (scripts/with-keyring)"),
    );
    let key = kc.0.create_key("approver").unwrap();
    // The reviewer API key is kept in the keychain too, as the desktop app does.
    kc.0.store_token("team", &gw.reviewer_key()).unwrap();
    let token = kc.0.load_token("team").unwrap().unwrap();
    let client = ReviewerClient::new(&format!("http://{}", gw.addr), &token).unwrap();
    assert_eq!(client.origin(), format!("http://{}", gw.addr));

    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    // What the desktop app does on Approve: sign exactly `hash` and submit it.
    let approve = async |kind, id: &str, hash: &str, reason: &str| {
        decide_remote(
            &client,
            kind,
            id,
            hash,
            &Countersign {
                key: &key,
                decision: Decision::Approve,
                reason,
                valid_for_secs: 600,
            },
        )
        .await
    };
    rt.block_on(async {
        // A wrong key is refused with the API's own error.
        let stranger = ReviewerClient::new(&format!("http://{}", gw.addr), "ilk_nope").unwrap();
        let err = stranger.inbox().await.unwrap_err();
        assert!(matches!(err, ClientError::Api { status: 401, .. }), "{err}");

        let mut events = Box::pin(client.events().await.unwrap());
        let inbox = client.inbox().await.unwrap();
        assert_eq!(inbox.len(), 1, "{inbox:?}");
        assert_eq!(inbox[0]["name"], "drifty");
        let shown = client.subject(Subject::Server, "drifty").await.unwrap();
        let hash = shown["server"]["observed_hash"]
            .as_str()
            .unwrap()
            .to_owned();

        // A key the gateway does not trust yet: signed, sent, refused.
        let err = approve(Subject::Server, "drifty", &hash, "ok")
            .await
            .unwrap_err();
        assert!(
            matches!(&err, HostError::Remote(e) if e.code() == Some("decision_refused")),
            "{err}"
        );

        // Registered by its public half (as an admin would on the team's machine).
        let out = gw.cli(&[
            "keys",
            "register",
            "--public-key",
            &hex::encode(key.public_key().as_bytes()),
            "--identity",
            "human:remote-reviewer",
        ]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(
            client
                .approver_identity(&key.key_id().to_string())
                .await
                .unwrap()
                .as_deref(),
            Some("human:remote-reviewer")
        );
        assert_eq!(client.approver_identity("ed25519:00").await.unwrap(), None);
        // This gateway serves no review UI (`--ui` not given).
        assert!(!client.serves_ui().await);

        // Not what was shown: nothing is signed.
        let other = format!("sha256:{}", "0".repeat(64));
        let err = approve(Subject::Server, "drifty", &other, "ok")
            .await
            .unwrap_err();
        assert!(matches!(err, HostError::Changed(_)), "{err}");

        // Exactly what was shown: the surface is pinned.
        let done = approve(Subject::Server, "drifty", &hash, "checked every tool")
            .await
            .unwrap();
        assert_eq!(done["status"], "TRUSTED", "{done}");

        // The event stream told this reviewer about it, with the hash decided.
        let approved = tokio::time::timeout(Duration::from_secs(20), async {
            while let Some(e) = events.next().await {
                let e = e.unwrap();
                if e.kind == interlock_trust::EventType::ServerApproved {
                    return e;
                }
            }
            panic!("the event stream ended");
        })
        .await
        .expect("a server.approved event");
        assert_eq!(approved.subject, "drifty");
        assert_eq!(approved.observed_hash.as_deref(), Some(hash.as_str()));
    });
    gw.wait_for_tool("drifty__greet", true);

    // An agent proposes through the gateway; the remote reviewer approves
    // exactly the proposed revision.
    let plan = write_file_plan(&gw, "team-1", "Team review", "team.txt");
    let r = gw.client("py", &["call", "propose_plan", &plan.to_string()]);
    assert_eq!(r["result"]["isError"], false, "{r}");
    rt.block_on(async {
        let inbox = client.inbox().await.unwrap();
        let item = inbox
            .iter()
            .find(|i| i["kind"] == "plan")
            .expect("the plan waits");
        let hash = item["plan_hash"].as_str().unwrap().to_owned();
        let done: Value = approve(Subject::Plan, "team-1", &hash, "fine")
            .await
            .unwrap();
        assert_eq!(done["status"], "APPROVED", "{done}");
        assert!(client.inbox().await.unwrap().is_empty());
    });
}
