//! Team mode: a reviewer's machine deciding on a gateway that runs elsewhere
//! (the desktop app connected to a team's `interlock serve`), through
//! `interlock_gateway::client` and `interlock_host::decide_remote` — the same
//! calls the desktop app makes — against a real gateway, a real upstream and a
//! real keychain.

use std::time::Duration;

use futures_util::StreamExt;
use interlock_core::Decision;
use interlock_gateway::client::{ClientError, ReviewerClient, Subject};
use interlock_host::team_audience::{AudiencePin, PinSource, TEAM_AUDIENCE_FILE};
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
    // No audience configured: the first one the gateway reports is pinned.
    let desktop_dir = tempfile::tempdir().unwrap();
    let pin = AudiencePin::load(desktop_dir.path(), &client.origin(), None).unwrap();
    assert_eq!(pin.pinned(), None);

    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    // What the desktop app does on Approve: sign exactly `hash` and submit it.
    let approve = async |kind, id: &str, hash: &str, reason: &str| {
        decide_remote(
            &client,
            &pin,
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
        // The audience signed for is pinned, and remembered for this address.
        let (audience, how) = pin.pinned().unwrap();
        assert_eq!(how, PinSource::FirstUse);
        assert_eq!(audience, client.audience().await.unwrap());
        assert!(audience.starts_with("interlock.local/log/"), "{audience}");
        let again = AudiencePin::load(desktop_dir.path(), &client.origin(), None).unwrap();
        assert_eq!(again.pinned(), Some((audience, PinSource::Remembered)));

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

/// Issue 39 item 7: a team-mode desktop signed whatever audience the team
/// gateway reported, so a lying gateway could have it sign a decision valid at
/// another gateway where the same approver key is registered — and every
/// gateway's audience was the same `interlock.local/log` anyway. Each log now
/// has its own origin, and the app signs only for the audience it pinned for
/// the address: told another, it signs nothing and the subject stays pending.
#[test]
fn regression_issue_39_the_desktop_signs_only_for_the_audience_it_pinned() {
    let config = format!(
        "[servers.drifty]\ncommand = \"node\"\nargs = [{:?}]\n",
        peers_dir().join("drifting-server.mjs").to_str().unwrap(),
    );
    let home = Gateway::start(&config);
    let team = Gateway::start(&config);
    team.wait_for_server("drifty", "PENDING");
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let home_client =
        ReviewerClient::new(&format!("http://{}", home.addr), &home.reviewer_key()).unwrap();
    let team_client =
        ReviewerClient::new(&format!("http://{}", team.addr), &team.reviewer_key()).unwrap();
    let (home_audience, team_audience) = rt.block_on(async {
        (
            home_client.audience().await.unwrap(),
            team_client.audience().await.unwrap(),
        )
    });
    assert_ne!(home_audience, team_audience, "two logs share an audience");

    let service = format!("interlock-team-pin-test-{}", std::process::id());
    let kc = ReviewerKeychain(
        Keychain::open(&service).expect("a Secret Service (scripts/with-keyring)"),
    );
    let key = kc.0.create_key("approver").unwrap();
    let out = team.cli(&[
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

    // The app was told the home gateway's audience for this address (as a
    // lying gateway would make it think): it signs nothing.
    let desktop_dir = tempfile::tempdir().unwrap();
    let pin = AudiencePin::load(
        desktop_dir.path(),
        &team_client.origin(),
        Some(&home_audience),
    )
    .unwrap();
    rt.block_on(async {
        let shown = team_client
            .subject(Subject::Server, "drifty")
            .await
            .unwrap();
        let hash = shown["server"]["observed_hash"]
            .as_str()
            .unwrap()
            .to_owned();
        let said = Countersign {
            key: &key,
            decision: Decision::Approve,
            reason: "looks fine",
            valid_for_secs: 600,
        };
        let err = decide_remote(&team_client, &pin, Subject::Server, "drifty", &hash, &said)
            .await
            .unwrap_err();
        match &err {
            HostError::WrongAudience {
                pinned, reported, ..
            } => {
                assert_eq!(pinned, &home_audience);
                assert_eq!(reported, &team_audience);
            }
            other => panic!("{other}"),
        }
        assert!(err.to_string().contains("nothing was signed"), "{err}");
        let still = team_client
            .subject(Subject::Server, "drifty")
            .await
            .unwrap();
        assert_eq!(still["server"]["status"], "PENDING", "{still}");
        assert!(!desktop_dir.path().join(TEAM_AUDIENCE_FILE).exists());

        // Pinned to the team gateway's own audience, the same decision lands.
        let pin = AudiencePin::load(
            desktop_dir.path(),
            &team_client.origin(),
            Some(&team_audience),
        )
        .unwrap();
        let done = decide_remote(&team_client, &pin, Subject::Server, "drifty", &hash, &said)
            .await
            .unwrap();
        assert_eq!(done["status"], "TRUSTED", "{done}");
    });
}
