//! Receipts through the binary: export a real demo run, verify it offline, catch
//! tampering with the bundle, and check a signature with independent tools.

use std::path::Path;
use std::process::Command;

use crate::util::{interlock, stderr, stdout};

/// Runs the demo into `dir/data` and exports every receipt to `dir/out`; returns
/// the log key the export printed.
/// `interlock receipts verify PATH --log-key KEY`: what an auditor runs, with
/// only the bundle and the binary.
fn verify_offline(path: &Path, key: &str) -> std::process::Output {
    interlock(
        &[
            "receipts",
            "verify",
            path.to_str().unwrap(),
            "--log-key",
            key,
        ],
        None,
    )
}

fn demo_and_export(dir: &Path) -> String {
    let data = dir.join("data");
    let out = interlock(&["demo", "--data-dir", data.to_str().unwrap()], None);
    assert!(out.status.success(), "{}", stderr(&out));
    let out = interlock(
        &[
            "receipts",
            "export",
            dir.join("out").to_str().unwrap(),
            "--data-dir",
            data.to_str().unwrap(),
        ],
        None,
    );
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("exported 18 receipts"), "{text}");
    text.lines()
        .find_map(|l| l.strip_prefix("log key (pin it when verifying): "))
        .expect("the export prints the log key")
        .to_owned()
}

#[test]
fn a_real_run_round_trips_through_export_and_offline_verification() {
    let dir = tempfile::tempdir().unwrap();
    let key = demo_and_export(dir.path());
    let out_dir = dir.path().join("out");
    for file in ["bundle.json", "report.html", "summary.csv"] {
        assert!(out_dir.join(file).is_file(), "{file}");
    }
    let csv = std::fs::read_to_string(out_dir.join("summary.csv")).unwrap();
    assert_eq!(csv.lines().count(), 19, "{csv}");
    assert!(csv.lines().skip(1).all(|l| l.contains(",true,")), "{csv}");
    // Issue 46: who, what, when (UTC, said so), the verdict in words, and the
    // approver by name rather than key id — the same columns in both files.
    assert!(
        csv.starts_with("index,time_utc,who,what,subject,verdict,why,event,verified,error\n"),
        "{csv}"
    );
    let decision = csv
        .lines()
        .find(|l| l.contains(",plan.decision,"))
        .unwrap_or_else(|| panic!("no plan.decision line: {csv}"));
    assert!(
        decision.contains(" UTC,human:demo-reviewer,decided on plan demo-write-config")
            && decision.contains(",Approved,"),
        "{decision}"
    );
    assert!(!csv.contains("ed25519:"), "key ids, not names: {csv}");
    let html = std::fs::read_to_string(out_dir.join("report.html")).unwrap();
    assert!(html.contains("every receipt verified"));
    assert!(
        html.contains("<th>Who</th>") && html.contains("<td>human:demo-reviewer</td>"),
        "{html}"
    );

    // The auditor's machine: only the bundle and the binary (no data dir at all).
    let out = verify_offline(&out_dir, &key);
    let text = stdout(&out);
    assert!(out.status.success(), "{text}{}", stderr(&out));
    assert!(
        text.contains("plan.decision [plan:demo-write-config, approval]: ok"),
        "{text}"
    );
    assert!(
        text.contains("18 receipts, 0 failed, 0 bundle problems: OK"),
        "{text}"
    );

    // `audit verify` takes the same verifier key as `--log-key` (not only raw
    // hex), and a wrong one says what to pass.
    let data = dir.path().join("data");
    let audit_with = |log_key: &str| {
        interlock(
            &[
                "audit",
                "verify",
                "--data-dir",
                data.to_str().unwrap(),
                "--log-key",
                log_key,
            ],
            None,
        )
    };
    let out = audit_with(&key);
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    let stranger = interlock_merkle::NoteVerifier::new(
        "interlock.local/demo",
        ed25519_dalek::SigningKey::from_bytes(&[5; 32]).verifying_key(),
    )
    .unwrap()
    .to_vkey();
    let out = audit_with(&stranger);
    let text = stdout(&out) + &stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.contains("is not the trusted key") && text.contains("--log-key"),
        "{text}"
    );

    // Pinned to another key: refused, and said why.
    let other = key.replacen('+', "-x+", 1);
    let out = verify_offline(&out_dir, &other);
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn one_tampered_byte_in_the_bundle_fails_verification_and_is_named() {
    let dir = tempfile::tempdir().unwrap();
    demo_and_export(dir.path());
    let path = dir.path().join("out/bundle.json");
    let original = std::fs::read_to_string(&path).unwrap();
    // Change one digit of receipt 3's statement (its `time`): still a
    // well-formed, canonical statement, but not the leaf the log signed.
    let leaf = original.find("\"index\":3,\"leaf\":").unwrap();
    let at = leaf + original[leaf..].find("\"time\":").unwrap() + "\"time\":".len() + 5;
    let mut tampered = original.clone().into_bytes();
    tampered[at] = if tampered[at] == b'1' { b'2' } else { b'1' };
    std::fs::write(&path, tampered).unwrap();
    let out = interlock(&["receipts", "verify", path.to_str().unwrap()], None);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    // An unfiltered export vouches for its receipts as one range: the edit
    // fails every receipt of it, #3 included, and names the range.
    assert!(
        text.lines()
            .any(|l| l.starts_with("#3 ") && !l.ends_with(": ok")),
        "{text}"
    );
    assert!(
        text.contains("the leaves of the range 0..=17 do not recompute the root"),
        "{text}"
    );
    assert!(!text.lines().any(|l| l.ends_with(": ok")), "{text}");
}

/// Runs the recipe of docs/RECEIPTS.md, verbatim, on receipt `number` of
/// `bundle`, in `work`; returns what the script printed.
fn run_recipe(work: &Path, bundle: &Path, number: usize) -> String {
    let doc =
        std::fs::read_to_string(crate::util::manifest_dir().join("docs/RECEIPTS.md")).unwrap();
    let start = doc.find("<<'EOF'\n").unwrap() + "<<'EOF'\n".len();
    let script = &doc[start..start + doc[start..].find("\nEOF\n").unwrap()];
    let py = Command::new("python3")
        .args(["-", bundle.to_str().unwrap(), &number.to_string()])
        .current_dir(work)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut child| {
            use std::io::Write;
            child.stdin.take().unwrap().write_all(script.as_bytes())?;
            child.wait_with_output()
        })
        .expect("python3 runs");
    let printed = String::from_utf8_lossy(&py.stdout).into_owned();
    assert!(
        py.status.success(),
        "{printed}{}",
        String::from_utf8_lossy(&py.stderr)
    );
    printed
}

#[test]
fn receipts_verify_with_independent_tools() {
    let dir = tempfile::tempdir().unwrap();
    demo_and_export(dir.path());
    let work = dir.path();
    // An unfiltered export: receipt 0 is vouched for by the range.
    let printed = run_recipe(work, &work.join("out/bundle.json"), 0);
    assert!(
        printed.contains("receipt 0 reaches the root of checkpoint")
            && printed.contains("by its range 0..=17"),
        "{printed}"
    );
    assert!(
        printed.contains("https://in-toto.io/Statement/v1"),
        "{printed}"
    );
    // A filtered export: each receipt by its own proof from the node table.
    let out = interlock(
        &[
            "receipts",
            "export",
            work.join("filtered").to_str().unwrap(),
            "--plan",
            "demo-write-config",
            "--data-dir",
            work.join("data").to_str().unwrap(),
        ],
        None,
    );
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    for number in [0, 3] {
        let printed = run_recipe(work, &work.join("filtered/bundle.json"), number);
        assert!(
            printed.contains("reaches the root of checkpoint")
                && printed.contains("by its inclusion proof"),
            "{printed}"
        );
    }
    let ossl = Command::new("openssl")
        .args([
            "pkeyutl", "-verify", "-pubin", "-inkey", "log.pem", "-rawin", "-in", "note.bin",
            "-sigfile", "sig.bin",
        ])
        .current_dir(work)
        .output()
        .expect("openssl runs");
    assert!(
        String::from_utf8_lossy(&ossl.stdout).contains("Signature Verified Successfully"),
        "{}{}",
        String::from_utf8_lossy(&ossl.stdout),
        String::from_utf8_lossy(&ossl.stderr)
    );
    // And a flipped signature byte is refused by OpenSSL too.
    let mut sig = std::fs::read(work.join("sig.bin")).unwrap();
    sig[0] ^= 1;
    std::fs::write(work.join("sig.bin"), sig).unwrap();
    let ossl = Command::new("openssl")
        .args([
            "pkeyutl", "-verify", "-pubin", "-inkey", "log.pem", "-rawin", "-in", "note.bin",
            "-sigfile", "sig.bin",
        ])
        .current_dir(work)
        .output()
        .unwrap();
    assert!(!ossl.status.success());
}

/// One receipt as a C2SP tlog-proof: exported, verified with the pinned log
/// key, and refused with another key or an edited proof.
#[test]
fn one_receipt_as_a_tlog_proof_round_trips() {
    let dir = tempfile::tempdir().unwrap();
    let key = demo_and_export(dir.path());
    let data = dir.path().join("data");
    let file = dir.path().join("r5.tlog-proof");
    let out = interlock(
        &[
            "receipts",
            "export",
            file.to_str().unwrap(),
            "--tlog-proof",
            "5",
            "--data-dir",
            data.to_str().unwrap(),
        ],
        None,
    );
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(text.starts_with("c2sp.org/tlog-proof@v1\nextra "), "{text}");
    assert!(text.contains("\nindex 5\n"), "{text}");
    let verify = |path: &Path, log_key: Option<&str>| {
        let mut args = vec!["receipts", "verify", path.to_str().unwrap()];
        if let Some(k) = log_key {
            args.extend(["--log-key", k]);
        }
        interlock(&args, None)
    };
    let out = verify(&file, Some(&key));
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    assert!(stdout(&out).contains("#5 "), "{}", stdout(&out));
    // No key: the file carries none, so the verifier asks for one.
    let out = verify(&file, None);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("--log-key"), "{}", stderr(&out));
    // Another index on the same proof: refused.
    let moved = dir.path().join("moved.tlog-proof");
    std::fs::write(&moved, text.replacen("\nindex 5\n", "\nindex 6\n", 1)).unwrap();
    let out = verify(&moved, Some(&key));
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    // Into a directory: receipt-N.tlog-proof.
    let out = interlock(
        &[
            "receipts",
            "export",
            dir.path().join("proofs").to_str().unwrap(),
            "--tlog-proof",
            "0",
            "--data-dir",
            data.to_str().unwrap(),
        ],
        None,
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(dir.path().join("proofs/receipt-0.tlog-proof").is_file());
}

/// A bundle written by the exporter before bundle v2 (`interlock.receipts/v1`,
/// a proof inline per receipt: `tests/data/receipts-v1-bundle.json`, a demo
/// run exported by the main branch's binary of 2026-12-05) still verifies,
/// pinned to the key that signed it; and still catches an edit.
#[test]
fn regression_a_bundle_exported_before_v2_still_verifies() {
    const KEY: &str = "interlock.local/demo+1eeff0b5+AY3J+IFv7lwXrBeYZYA0T+cRE+AO3fu13eGDqCQO27rR";
    let path = crate::util::manifest_dir().join("tests/data/receipts-v1-bundle.json");
    let original = std::fs::read_to_string(&path).unwrap();
    assert!(original.starts_with("{\"bundle_version\":\"interlock.receipts/v1\""));
    let out = verify_offline(&path, KEY);
    let text = stdout(&out);
    assert!(out.status.success(), "{text}{}", stderr(&out));
    assert!(
        text.contains("18 receipts, 0 failed, 0 bundle problems: OK"),
        "{text}"
    );
    // One digit of receipt 3's time: named, as v1 names it — by the receipt.
    let dir = tempfile::tempdir().unwrap();
    let leaf = original.find("\"index\":3,\"leaf\":").unwrap();
    let at = leaf + original[leaf..].find("\"time\":").unwrap() + "\"time\":".len() + 5;
    let mut tampered = original.into_bytes();
    tampered[at] = if tampered[at] == b'1' { b'2' } else { b'1' };
    let edited = dir.path().join("bundle.json");
    std::fs::write(&edited, tampered).unwrap();
    let out = verify_offline(&edited, KEY);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.lines()
            .any(|l| l.starts_with("#3 ") && l.contains("inclusion proof")),
        "{text}"
    );
    assert_eq!(
        text.lines().filter(|l| l.ends_with(": ok")).count(),
        17,
        "{text}"
    );
}

/// `receipts export --from/--to`: an index range of a real run, tied to the
/// checkpoint by its range proof (the frontier left of it, the right edge),
/// with the key registration beside it on its own proof.
#[test]
fn an_index_range_exports_and_verifies_offline() {
    let dir = tempfile::tempdir().unwrap();
    let key = demo_and_export(dir.path());
    let out_dir = dir.path().join("range");
    let out = interlock(
        &[
            "receipts",
            "export",
            out_dir.to_str().unwrap(),
            "--from",
            "5",
            "--to",
            "12",
            "--data-dir",
            dir.path().join("data").to_str().unwrap(),
        ],
        None,
    );
    let text = stdout(&out);
    assert!(out.status.success(), "{text}{}", stderr(&out));
    assert!(text.contains("exported 9 receipts"), "{text}");
    let bundle: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out_dir.join("bundle.json")).unwrap()).unwrap();
    assert_eq!(bundle["bundle_version"], "interlock.receipts/v2");
    assert_eq!(
        (&bundle["range"]["from"], &bundle["range"]["to"]),
        (&5.into(), &12.into())
    );
    assert!(!bundle["range"]["proof"].as_array().unwrap().is_empty());
    let out = verify_offline(&out_dir, &key);
    let text = stdout(&out);
    assert!(out.status.success(), "{text}{}", stderr(&out));
    assert!(
        text.contains("9 receipts, 0 failed, 0 bundle problems: OK"),
        "{text}"
    );
    assert!(text.contains("#0 approver.registered"), "{text}");
    // The independent recipe reaches the signed root for both: receipt 5 by
    // the range and its proof, the registration by its own proof.
    let printed = run_recipe(dir.path(), &out_dir.join("bundle.json"), 1);
    assert!(
        printed.contains("receipt 5 reaches the root of checkpoint")
            && printed.contains("by its range 5..=12"),
        "{printed}"
    );
    let printed = run_recipe(dir.path(), &out_dir.join("bundle.json"), 0);
    assert!(printed.contains("by its inclusion proof"), "{printed}");
}

/// `receipts claims --bundle` reads a v2 bundle (its range vouched for as a
/// whole) once it verifies, and refuses to answer from one that does not.
#[test]
fn claims_read_a_verified_v2_bundle_and_refuse_a_broken_one() {
    let dir = tempfile::tempdir().unwrap();
    let key = demo_and_export(dir.path());
    let bundle = dir.path().join("out/bundle.json");
    let out = interlock(
        &[
            "receipts",
            "claims",
            "--bundle",
            bundle.to_str().unwrap(),
            "--log-key",
            &key,
        ],
        None,
    );
    let text = stdout(&out);
    assert!(out.status.success(), "{text}{}", stderr(&out));
    assert!(
        text.contains("\nNo. ") && text.contains("18 receipts"),
        "{text}"
    );
    // One digit of one leaf: the range no longer recomputes, nothing answers.
    let original = std::fs::read_to_string(&bundle).unwrap();
    let leaf = original.find("\"index\":9,\"leaf\":").unwrap();
    let at = leaf + original[leaf..].find("\"time\":").unwrap() + "\"time\":".len() + 5;
    let mut tampered = original.into_bytes();
    tampered[at] = if tampered[at] == b'1' { b'2' } else { b'1' };
    std::fs::write(&bundle, tampered).unwrap();
    let out = interlock(
        &[
            "receipts",
            "claims",
            "--bundle",
            bundle.to_str().unwrap(),
            "--log-key",
            &key,
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    assert!(
        stderr(&out).contains("the bundle does not verify"),
        "{}",
        stderr(&out)
    );
}
