//! Against the real Secret Service (gnome-keyring over D-Bus): run these under
//! `scripts/with-keyring`, which provides a throwaway, unlocked keychain. Every test
//! uses its own randomly suffixed key name, so they run in parallel and never touch
//! each other's (or anyone's real) keys.

use std::process::Command;

use ed25519_dalek::Signer as _;
use interlock_core::Digest;
use interlock_core::decision::{
    Decision, Expectation, Terms, TrustedKeys, sign_decision, verify_decision,
};
use interlock_keychain::{Keychain, KeychainError, KeychainKey, TransferError};
use interlock_merkle::{Checkpoint, NoteVerifier, open_checkpoint, sign_checkpoint};

const SERVICE: &str = "interlock-keychain-test";

fn keychain() -> Keychain {
    Keychain::open(SERVICE)
        .expect("a Secret Service on the session bus: run these tests under scripts/with-keyring")
}

/// A name no other test (or earlier run) uses.
fn unique(prefix: &str) -> String {
    let n = getrandom::u64().expect("OS random");
    format!("{prefix}-{n:016x}")
}

/// Deletes the key when the test ends, pass or fail, so runs leave nothing behind.
struct Cleanup(String);

impl Drop for Cleanup {
    fn drop(&mut self) {
        if let Ok(k) = Keychain::open(SERVICE) {
            let _ = k.delete_key(&self.0);
        }
    }
}

#[test]
fn created_key_loads_in_a_fresh_handle_and_signs_a_verifiable_decision() {
    let name = unique("approver");
    let _cleanup = Cleanup(name.clone());
    let created = keychain().create_key(&name).unwrap();

    // A separate handle (its own D-Bus connection) finds the same key.
    let loaded = keychain().load_key(&name).unwrap().expect("stored key");
    assert_eq!(loaded.public_key(), created.public_key());
    assert_eq!(loaded.key_id(), created.key_id());
    assert_eq!(loaded.fingerprint(), created.key_id().fingerprint());
    assert_eq!(loaded.name(), name);

    let plan_hash = Digest::of_bytes(b"plan body");
    let policy = Digest::of_bytes(b"policy");
    let (statement, envelope) = sign_decision(
        &loaded,
        &Terms {
            audience: "interlock.test/log",
            subject: "plan-1",
            subject_hash: plan_hash,
            decision: Decision::Approve,
            reason: "looks right",
            issued_at: 1_000,
            not_before: 1_000,
            expires_at: 2_000,
            nonce: [7; 16],
            policy_digest: policy,
        },
    )
    .unwrap();
    assert_eq!(statement.approver_key_id, created.key_id());

    let mut trusted = TrustedKeys::new();
    trusted.add(created.public_key());
    let expect = Expectation {
        audience: "interlock.test/log",
        plan_id: "plan-1",
        plan_hash,
        policy_digest: policy,
        now: 1_500,
    };
    let verified = verify_decision(&envelope, &trusted, &expect).unwrap();
    assert_eq!(verified, statement);
}

#[test]
fn creating_a_key_twice_is_refused_and_keeps_the_first() {
    let name = unique("twice");
    let _cleanup = Cleanup(name.clone());
    let kc = keychain();
    let first = kc.create_key(&name).unwrap();
    let err = kc.create_key(&name).unwrap_err();
    assert_eq!(err, KeychainError::AlreadyExists(name.clone()));
    let again = kc.load_key(&name).unwrap().unwrap();
    assert_eq!(again.public_key(), first.public_key());
}

#[test]
fn deleted_key_is_gone_and_can_no_longer_sign() {
    let name = unique("deleted");
    let _cleanup = Cleanup(name.clone());
    let kc = keychain();
    let key = kc.create_key(&name).unwrap();
    assert!(kc.delete_key(&name).unwrap());
    assert!(kc.load_key(&name).unwrap().is_none());
    assert!(
        !kc.delete_key(&name).unwrap(),
        "second delete finds nothing"
    );
    assert_eq!(
        key.sign_message(b"x").unwrap_err(),
        KeychainError::NotFound(name.clone())
    );
}

#[test]
fn checkpoint_signature_via_the_ed25519_signer_trait_verifies_strictly() {
    let name = unique("gateway");
    let _cleanup = Cleanup(name.clone());
    let key = keychain().create_key(&name).unwrap();

    let message = b"interlock checkpoint body\n";
    let signature = key.try_sign(message).unwrap();
    key.public_key().verify_strict(message, &signature).unwrap();

    // And through interlock_merkle, as the log's checkpoints are signed.
    let cp = Checkpoint {
        origin: "interlock.test/log".into(),
        size: 3,
        root: [9; 32],
        extensions: Vec::new(),
    };
    let note = sign_checkpoint(&cp, "interlock.test/log", &key, &key.public_key()).unwrap();
    let verifier = NoteVerifier::new("interlock.test/log", key.public_key()).unwrap();
    let opened = open_checkpoint(&note.to_string(), &[verifier]).unwrap();
    assert_eq!(opened, cp);
}

#[test]
fn public_key_is_stable_across_handles_and_load_or_create() {
    let name = unique("stable");
    let _cleanup = Cleanup(name.clone());
    let (created, was_created) = keychain().load_or_create(&name).unwrap();
    assert!(was_created);
    for _ in 0..3 {
        let (loaded, was_created) = keychain().load_or_create(&name).unwrap();
        assert!(!was_created);
        assert_eq!(loaded.public_key(), created.public_key());
    }
    // Signatures from a later handle verify under the first handle's public key.
    let later = keychain().load_key(&name).unwrap().unwrap();
    let sig = later.sign_message(b"m").unwrap();
    created.public_key().verify_strict(b"m", &sig).unwrap();
}

#[test]
fn a_key_replaced_behind_a_loaded_handle_is_not_used() {
    let name = unique("replaced");
    let _cleanup = Cleanup(name.clone());
    let kc = keychain();
    let old = kc.create_key(&name).unwrap();
    kc.delete_key(&name).unwrap();
    let new = kc.create_key(&name).unwrap();
    assert_ne!(old.public_key(), new.public_key());
    match old.sign_message(b"m").unwrap_err() {
        KeychainError::KeyChanged {
            expected, found, ..
        } => {
            assert_eq!(expected, old.key_id());
            assert_eq!(found, new.key_id());
        }
        other => panic!("expected KeyChanged, got {other:?}"),
    }
}

/// Reads the item back with `secret-tool` (libsecret, a separate client): proves the
/// secret really is in the Secret Service, is the raw 32-byte key of the public key,
/// and never shows up in what this crate prints.
#[test]
fn the_secret_lives_in_the_keychain_and_never_in_debug_output() {
    let name = unique("debug");
    let _cleanup = Cleanup(name.clone());
    let key: KeychainKey = keychain().create_key(&name).unwrap();

    let out = Command::new("secret-tool")
        .args(["lookup", "service", SERVICE, "username", &name])
        .output()
        .expect("secret-tool (scripts/setup.sh installs it)");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let secret: [u8; 32] = out.stdout.as_slice().try_into().expect("32 raw bytes");
    let public = ed25519_dalek::SigningKey::from_bytes(&secret).verifying_key();
    assert_eq!(public, key.public_key());

    let sig_err = keychain().create_key(&name).unwrap_err();
    let printed = format!("{key:?} {:?} {sig_err:?} {sig_err}", keychain());
    assert!(printed.contains(&name), "{printed}");
    let hex_secret: String = secret.iter().map(|b| format!("{b:02x}")).collect();
    assert!(!printed.contains(&hex_secret), "{printed}");
    assert!(!printed.contains(&format!("{secret:?}")), "{printed}");
}

#[test]
fn invalid_names_are_refused_before_touching_the_keychain() {
    let kc = keychain();
    assert!(matches!(
        kc.create_key("no spaces").unwrap_err(),
        KeychainError::InvalidName { .. }
    ));
    assert!(matches!(
        Keychain::open("").unwrap_err(),
        KeychainError::InvalidName { .. }
    ));
}

/// Runs the test `name` of this binary through `child` (this binary, or a
/// wrapper given it as its first argument); asserts it ran and passed, and
/// returns its stdout and stderr.
fn run_child_test(mut child: Command, name: &str) -> (String, String) {
    let output = child
        .args(["--exact", name, "--nocapture", "--test-threads=1"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(output.status.success(), "child failed:\n{stdout}\n{stderr}");
    assert!(
        stdout.contains("1 passed"),
        "child test did not run:\n{stdout}"
    );
    (stdout, stderr)
}

/// Set in the child process of [`open_fails_clearly_without_a_secret_service`].
const CHILD_MARKER: &str = "INTERLOCK_KEYCHAIN_TEST_NO_BUS_CHILD";

/// Runs this test binary again with the session bus address pointing at a socket that
/// does not exist, so `Keychain::open` meets a real connection failure (no mock).
#[test]
fn open_fails_clearly_without_a_secret_service() {
    let dir = std::env::temp_dir().join(unique("interlock-no-bus"));
    let mut child = Command::new(std::env::current_exe().unwrap());
    child.env(CHILD_MARKER, "1").env(
        "DBUS_SESSION_BUS_ADDRESS",
        format!("unix:path={}", dir.join("bus").display()),
    );
    let (stdout, _) = run_child_test(child, "no_bus_child");
    assert!(
        stdout.contains(
            "no Secret Service on the session bus; start gnome-keyring (see scripts/with-keyring)"
        ),
        "{stdout}"
    );
}

/// The child half of [`open_fails_clearly_without_a_secret_service`]; a no-op when run
/// directly.
#[test]
fn no_bus_child() {
    if std::env::var_os(CHILD_MARKER).is_none() {
        return;
    }
    let err = Keychain::open(SERVICE).unwrap_err();
    println!("error: {err}");
    assert!(matches!(err, KeychainError::NoSecretService(_)), "{err:?}");
}

#[test]
fn tokens_are_kept_apart_from_keys_and_replaced_in_place() {
    let name = unique("team");
    let kc = keychain();
    struct TokenCleanup(String);
    impl Drop for TokenCleanup {
        fn drop(&mut self) {
            if let Ok(k) = Keychain::open(SERVICE) {
                let _ = k.delete_token(&self.0);
            }
        }
    }
    let _cleanup = TokenCleanup(name.clone());
    assert!(kc.load_token(&name).unwrap().is_none());
    kc.store_token(&name, "ilk_first").unwrap();
    kc.store_token(&name, "ilk_second").unwrap();
    // A fresh handle reads the latest, and the token is not a key of that name.
    let again = keychain();
    assert_eq!(
        again.load_token(&name).unwrap().unwrap().as_str(),
        "ilk_second"
    );
    assert!(again.load_key(&name).unwrap().is_none());
    assert!(again.store_token(&name, "").is_err());
    assert!(again.delete_token(&name).unwrap());
    assert!(again.load_token(&name).unwrap().is_none());
}

/// Two keychains, as on two machines: the receiver's service differs from the
/// sender's. Deletes both sides' keys and the receiver's pending request.
struct TransferCleanup(String);

const RECEIVER: &str = "interlock-keychain-test-receiver";

impl Drop for TransferCleanup {
    fn drop(&mut self) {
        for service in [SERVICE, RECEIVER] {
            if let Ok(k) = Keychain::open(service) {
                let _ = k.delete_key(&self.0);
                let _ = k.delete_token(&format!("transfer.{}", self.0));
            }
        }
    }
}

fn receiver() -> Keychain {
    Keychain::open(RECEIVER).unwrap()
}

/// Issue 20: a team's gateways sign one log, so the log key must reach a
/// second machine. Sealed to the receiver's one-time recipient, it arrives
/// whole (the same public key, signatures that verify with it) and the
/// request is spent: the same sealed text cannot be opened twice.
#[test]
fn a_key_sealed_for_a_request_arrives_whole_and_the_request_is_spent() {
    let name = unique("log");
    let _cleanup = TransferCleanup(name.clone());
    let sender = keychain().create_key(&name).unwrap();
    let recipient = receiver().request_transfer(&name).unwrap();
    assert!(recipient.starts_with("age1"), "{recipient}");
    let sealed = keychain().seal_key_for(&name, &recipient).unwrap();
    assert!(
        sealed.starts_with("-----BEGIN AGE ENCRYPTED FILE-----"),
        "{sealed}"
    );
    let offered = receiver().open_transfer(&name, &sealed).unwrap();
    assert_eq!(offered.public_key(), sender.public_key());
    let received = receiver().accept_transfer(offered, false).unwrap();
    assert_eq!(received.public_key(), sender.public_key());
    let sig = received.sign_message(b"checkpoint").unwrap();
    sender
        .public_key()
        .verify_strict(b"checkpoint", &sig)
        .unwrap();
    receiver().finish_transfer(&name).unwrap();
    let again = receiver().open_transfer(&name, &sealed).unwrap_err();
    assert!(
        matches!(
            again,
            KeychainError::Transfer(TransferError::NotRequested(_))
        ),
        "{again:?}"
    );
}

/// Issue 44: `accept_transfer` spent the request as it stored the key, before
/// the caller could record the acceptance (with that key: it can sign nothing
/// before), so an `interlock keys log-key accept` stopped in between left the
/// key kept with no leaf, and the same sealed file could never be opened to
/// finish. The request stays pending until `finish_transfer`: the same file
/// opens again and is accepted again (the same key kept), then is spent.
#[test]
fn regression_issue_44_a_sealed_key_opens_again_until_its_acceptance_is_finished() {
    let name = unique("log");
    let _cleanup = TransferCleanup(name.clone());
    let sender = keychain().create_key(&name).unwrap();
    let recipient = receiver().request_transfer(&name).unwrap();
    let sealed = keychain().seal_key_for(&name, &recipient).unwrap();
    let offered = receiver().open_transfer(&name, &sealed).unwrap();
    receiver().accept_transfer(offered, false).unwrap();
    // Stopped here; run again.
    let offered = receiver().open_transfer(&name, &sealed).unwrap();
    let kept = receiver().accept_transfer(offered, false).unwrap();
    assert_eq!(kept.public_key(), sender.public_key());
    receiver().finish_transfer(&name).unwrap();
    assert!(matches!(
        receiver().open_transfer(&name, &sealed).unwrap_err(),
        KeychainError::Transfer(TransferError::NotRequested(_))
    ));
    // Finishing twice is not an error.
    receiver().finish_transfer(&name).unwrap();
}

/// A sealed key made for an earlier request (or someone else's) does not
/// open with a later one; damaged or oversized text is refused; a recipient
/// that is not one is refused before the key is read.
#[test]
fn regression_a_sealed_key_opens_only_with_the_request_it_was_made_for() {
    let name = unique("log");
    let _cleanup = TransferCleanup(name.clone());
    keychain().create_key(&name).unwrap();
    let first = receiver().request_transfer(&name).unwrap();
    let sealed = keychain().seal_key_for(&name, &first).unwrap();
    receiver().request_transfer(&name).unwrap();
    let err = receiver().open_transfer(&name, &sealed).unwrap_err();
    assert!(
        matches!(err, KeychainError::Transfer(TransferError::CannotOpen(_))),
        "{err:?}"
    );
    let damaged = sealed.replacen('A', "B", 3);
    assert!(receiver().open_transfer(&name, &damaged).is_err());
    let huge = "A".repeat(64 * 1024);
    assert!(matches!(
        receiver().open_transfer(&name, &huge).unwrap_err(),
        KeychainError::Transfer(TransferError::TooLarge(_))
    ));
    for bad in ["", "age1notarecipient", "AGE-SECRET-KEY-1XYZ"] {
        assert!(matches!(
            keychain().seal_key_for(&name, bad).unwrap_err(),
            KeychainError::Transfer(TransferError::BadRecipient(_))
        ));
    }
    // Asked under another name, the sealed key is refused as that name.
    let other = format!("{name}-other");
    let _other_cleanup = TransferCleanup(other.clone());
    let recipient = receiver().request_transfer(&other).unwrap();
    let sealed = keychain().seal_key_for(&name, &recipient).unwrap();
    assert!(matches!(
        receiver().open_transfer(&other, &sealed).unwrap_err(),
        KeychainError::Transfer(TransferError::NotAKey { .. })
    ));
}

/// The receiver already holds a different key of that name (a log key made
/// before it joined the team): kept unless replacing is asked for.
#[test]
fn a_different_key_already_held_is_replaced_only_when_asked() {
    let name = unique("log");
    let _cleanup = TransferCleanup(name.clone());
    let team = keychain().create_key(&name).unwrap();
    let own = receiver().create_key(&name).unwrap();
    let recipient = receiver().request_transfer(&name).unwrap();
    let sealed = keychain().seal_key_for(&name, &recipient).unwrap();
    let offered = receiver().open_transfer(&name, &sealed).unwrap();
    let err = receiver().accept_transfer(offered, false).unwrap_err();
    assert!(
        matches!(
            err,
            KeychainError::Transfer(TransferError::Different { .. })
        ),
        "{err:?}"
    );
    assert_eq!(
        receiver().load_key(&name).unwrap().unwrap().public_key(),
        own.public_key()
    );
    let offered = receiver().open_transfer(&name, &sealed).unwrap();
    let kept = receiver().accept_transfer(offered, true).unwrap();
    assert_eq!(kept.public_key(), team.public_key());
}

/// Set in the child process of
/// [`regression_a_handle_survives_the_secret_service_daemon_dying`].
const DAEMON_DEATH_MARKER: &str = "INTERLOCK_KEYCHAIN_TEST_DAEMON_DEATH_CHILD";

/// Regression (CI, 2026-12-05): gnome-keyring-daemon 42 aborts on a GLib
/// assertion when clients open sessions at once (gnome-keyring#190), and every
/// later call through a handle opened before the crash failed with `NoReply`
/// or an unknown session. A handle now opens the service again and repeats the
/// call. The daemon is killed for real, so the child runs on a private bus
/// and keychain of its own (`scripts/with-keyring` again), never the one the
/// other tests share.
#[test]
fn regression_a_handle_survives_the_secret_service_daemon_dying() {
    let manifest = std::env::var_os("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR");
    let with_keyring = std::path::Path::new(&manifest).join("../../scripts/with-keyring");
    let mut child = Command::new(with_keyring);
    child
        .arg(std::env::current_exe().unwrap())
        .env(DAEMON_DEATH_MARKER, "1");
    let (_, stderr) = run_child_test(child, "daemon_death_child");
    // with-keyring reports a restarted daemon: the kill really happened.
    assert!(
        stderr.contains("gnome-keyring-daemon died and was restarted"),
        "{stderr}"
    );
}

/// The process that owns the Secret Service name on this session bus.
fn secret_service_pid() -> u32 {
    let out = Command::new("dbus-send")
        .args([
            "--session",
            "--print-reply",
            "--dest=org.freedesktop.DBus",
            "/org/freedesktop/DBus",
            "org.freedesktop.DBus.GetConnectionUnixProcessID",
            "string:org.freedesktop.secrets",
        ])
        .output()
        .expect("dbus-send");
    let text = String::from_utf8_lossy(&out.stdout);
    text.split_whitespace()
        .last()
        .and_then(|pid| pid.parse().ok())
        .unwrap_or_else(|| panic!("no Secret Service owner: {text}"))
}

/// The child half of [`regression_a_handle_survives_the_secret_service_daemon_dying`];
/// a no-op when run directly (it would kill the shared daemon).
#[test]
fn daemon_death_child() {
    if std::env::var_os(DAEMON_DEATH_MARKER).is_none() {
        return;
    }
    let kc = keychain();
    let name = unique("survivor");
    let created = kc.create_key(&name).unwrap();
    kc.store_token(&name, "ilk_before").unwrap();

    for round in 0..2 {
        let pid = secret_service_pid();
        let killed = Command::new("kill")
            .args(["-KILL", &pid.to_string()])
            .status()
            .unwrap();
        assert!(killed.success(), "kill {pid}");
        let proc_dir = std::path::PathBuf::from(format!("/proc/{pid}"));
        for _ in 0..100 {
            if !proc_dir.exists()
                || std::fs::read_to_string(proc_dir.join("stat")).is_ok_and(|s| s.contains(") Z "))
            {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        // The same handle, opened before the daemon died: its key is still
        // there and signs, its token reads back, and it writes and deletes.
        let loaded = kc.load_key(&name).unwrap().expect("the key survives");
        assert_eq!(loaded.public_key(), created.public_key(), "round {round}");
        let signature = loaded.sign_message(b"after").unwrap();
        created
            .public_key()
            .verify_strict(b"after", &signature)
            .unwrap();
        assert_eq!(
            kc.load_token(&name).unwrap().as_deref().map(String::as_str),
            Some(if round == 0 {
                "ilk_before"
            } else {
                "ilk_round_0"
            })
        );
        kc.store_token(&name, &format!("ilk_round_{round}"))
            .unwrap();
        assert_ne!(secret_service_pid(), pid, "a new daemon serves");
    }
    assert!(kc.delete_token(&name).unwrap());
    assert!(kc.delete_key(&name).unwrap());
    assert!(kc.load_key(&name).unwrap().is_none());
    println!("the handle outlived two daemons");
}
