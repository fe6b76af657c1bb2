//! Issue 43: witnesses. Three `interlock witness serve` processes cosign a
//! running gateway's checkpoints; an exported bundle verifies offline with
//! `--min-witnesses 2` and fails after a one-byte edit to any cosignature;
//! a second history signed with the same log key is cosigned by no witness
//! that saw the first, and its bundle fails with `--min-witnesses 1`.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::gateway_util::Gateway;
use crate::util::{interlock_with, stderr, stdout};

/// A running `interlock witness serve`, killed when dropped.
struct WitnessProcess {
    child: Child,
    url: String,
    vkey: String,
    _dir: tempfile::TempDir,
}

impl Drop for WitnessProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl WitnessProcess {
    /// A witness named `name`, with a data directory (and so a database) of
    /// its own, its key in `gw`'s keychain service, cosigning for `log_vkey`.
    /// With `store`, its state is in that database instead.
    fn start(gw: &Gateway, name: &str, log_vkey: &str, store: Option<&str>) -> WitnessProcess {
        let dir = tempfile::tempdir().unwrap();
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_interlock"));
        cmd.args(["--data-dir", dir.path().to_str().unwrap()])
            .args([
                "witness",
                "serve",
                "--name",
                name,
                "--listen",
                "127.0.0.1:0",
            ])
            .args(["--log", log_vkey])
            .env_remove("INTERLOCK_DATA_DIR")
            .env_remove("INTERLOCK_DATABASE_URL")
            .env(
                "INTERLOCK_KEYCHAIN_SERVICE",
                gw.env_var("INTERLOCK_KEYCHAIN_SERVICE").unwrap(),
            )
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::from(
                std::fs::File::create(dir.path().join("witness.log")).unwrap(),
            ));
        if let Some(store) = store {
            cmd.args(["--store", store]);
        }
        let mut child = cmd.spawn().expect("interlock witness serve starts");
        let mut out = BufReader::new(child.stdout.take().unwrap());
        let (mut first, mut second) = (String::new(), String::new());
        out.read_line(&mut first).unwrap();
        out.read_line(&mut second).unwrap();
        let log = || std::fs::read_to_string(dir.path().join("witness.log")).unwrap_or_default();
        let url = first
            .trim()
            .strip_prefix("interlock witness listening on ")
            .unwrap_or_else(|| panic!("unexpected first line {first:?}: {}", log()))
            .to_owned();
        let vkey = second
            .trim()
            .strip_prefix("witness key: ")
            .unwrap_or_else(|| panic!("unexpected second line {second:?}"))
            .to_owned();
        assert!(vkey.starts_with(&format!("{name}+")), "{vkey}");
        WitnessProcess {
            child,
            url,
            vkey,
            _dir: dir,
        }
    }
}

/// Exports a bundle of `gw`'s log into `out` and returns bundle.json.
fn export(gw: &Gateway, out: &Path) -> Value {
    let _ = std::fs::remove_dir_all(out);
    let done = gw.cli(&["receipts", "export", out.to_str().unwrap()]);
    assert!(done.status.success(), "{}{}", stdout(&done), stderr(&done));
    serde_json::from_slice(&std::fs::read(out.join("bundle.json")).unwrap()).unwrap()
}

/// The cosignature lines (by the `names` given) of a bundle's checkpoint.
fn cosigned_by(bundle: &Value, names: &[&str]) -> usize {
    let cp = bundle["checkpoint"].as_str().unwrap();
    names
        .iter()
        .filter(|n| cp.lines().any(|l| l.starts_with(&format!("\u{2014} {n} "))))
        .count()
}

/// Exports until the latest checkpoint carries all of `names`' cosignatures.
fn export_when_cosigned(gw: &Gateway, out: &Path, names: &[&str]) -> Value {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let bundle = export(gw, out);
        if cosigned_by(&bundle, names) == names.len() {
            return bundle;
        }
        assert!(
            Instant::now() < deadline,
            "not cosigned by all of {names:?}: {}\n{}",
            bundle["checkpoint"],
            gw.log()
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

fn verify(
    gw: &Gateway,
    bundle: &Path,
    witnesses: &[&WitnessProcess],
    k: usize,
) -> std::process::Output {
    let mut args = vec![
        "receipts".to_owned(),
        "verify".to_owned(),
        bundle.display().to_string(),
    ];
    for w in witnesses {
        args.push("--witness".into());
        args.push(w.vkey.clone());
    }
    args.push("--min-witnesses".into());
    args.push(k.to_string());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    gw.cli(&args)
}

/// Appends `gateway.toml`'s `[log] witnesses` for `witnesses`.
fn configure(gw: &Gateway, witnesses: &[&WitnessProcess]) -> PathBuf {
    let config = gw.dir.path().join("gateway.toml");
    let mut text = std::fs::read_to_string(&config).unwrap();
    text.push_str("\n[log]\nwitnesses = [\n");
    for w in witnesses {
        text.push_str(&format!("  {{ url = {:?}, key = {:?} }},\n", w.url, w.vkey));
    }
    text.push_str("]\n");
    std::fs::write(&config, text).unwrap();
    config
}

fn log_vkey(gw: &Gateway) -> String {
    let bundle = export(gw, &gw.dir.path().join("first-export"));
    bundle["trust"]["log_key"].as_str().unwrap().to_owned()
}

#[test]
fn three_witnesses_cosign_and_a_bundle_needs_two_of_them() {
    let mut gw = Gateway::start("");
    let vkey = log_vkey(&gw);
    // On a Postgres run one witness keeps its state beside the team's database.
    let pg = interlock_store::testing::test_postgres().map(|_| {
        match interlock_store::testing::fresh_location_blocking(&gw.dir.path().join("unused")) {
            interlock_store::StoreLocation::Postgres(url) => url,
            other => panic!("{other:?}"),
        }
    });
    let names = ["w1.test/witness", "w2.test/witness", "w3.test/witness"];
    let w1 = WitnessProcess::start(&gw, names[0], &vkey, pg.as_deref());
    let w2 = WitnessProcess::start(&gw, names[1], &vkey, None);
    let w3 = WitnessProcess::start(&gw, names[2], &vkey, None);
    configure(&gw, &[&w1, &w2, &w3]);
    gw.restart();
    let out = gw.cli(&["agents", "add", "witnessed"]);
    assert!(out.status.success(), "{}", stderr(&out));

    let dir = gw.dir.path().join("bundle");
    export_when_cosigned(&gw, &dir, &names);
    // The reviewer API names each witness with its newest cosignature.
    let key = gw.reviewer_key();
    let seen = gw.api_get(&key, "/api/v1/log/witnesses");
    let listed = seen["witnesses"].as_array().unwrap();
    assert_eq!(listed.len(), 3, "{seen}");
    for (w, process) in listed.iter().zip([&w1, &w2, &w3]) {
        assert_eq!(w["key"], process.vkey.as_str());
        let line = w["cosigned"]["line"].as_str().unwrap();
        assert!(
            line.starts_with(&format!("\u{2014} {} ", w["name"].as_str().unwrap())),
            "{line}"
        );
        assert!(
            w["cosigned"]["checkpoint"]
                .as_str()
                .unwrap()
                .starts_with(&seen["origin"].as_str().unwrap().to_owned())
        );
    }
    let out = verify(&gw, &dir, &[&w1, &w2, &w3], 2);
    let said = stdout(&out);
    assert!(out.status.success(), "{said}{}", stderr(&out));
    for n in names {
        assert!(
            said.contains(&format!("witness {n}: cosigned at ")),
            "{said}"
        );
    }
    // Three cosigned; four are not there to be had.
    let out = verify(&gw, &dir, &[&w1, &w2, &w3], 4);
    assert!(!out.status.success());
    assert!(
        stdout(&out).contains("cosigned by 3 of the witnesses given; at least 4"),
        "{}",
        stdout(&out)
    );
    // Without keys the lines are named but not counted.
    let out = gw.cli(&["receipts", "verify", dir.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stdout(&out));
    assert!(stdout(&out).contains("(its key was not given: not checked)"));

    // A one-byte edit anywhere in a cosignature line (name, key ID, time,
    // signature) fails the bundle.
    let bundle: Value =
        serde_json::from_slice(&std::fs::read(dir.join("bundle.json")).unwrap()).unwrap();
    let cp = bundle["checkpoint"].as_str().unwrap().to_owned();
    let line_start = cp.find(&format!("\u{2014} {} ", names[1])).unwrap();
    let b64_start = line_start + "\u{2014} ".len() + names[1].len() + 1;
    let line_end = line_start + cp[line_start..].find('\n').unwrap();
    let positions = [
        line_start + "\u{2014} ".len() + 1, // the name
        b64_start + 2,                      // the key ID
        b64_start + 10,                     // the timestamp
        b64_start + 40,                     // the signature
        line_end - 4,                       // the signature's end
    ];
    for (i, at) in positions.into_iter().enumerate() {
        let mut edited = cp.clone().into_bytes();
        edited[at] = if edited[at] == b'A' { b'B' } else { b'A' };
        let mut b = bundle.clone();
        b["checkpoint"] = Value::String(String::from_utf8(edited).unwrap());
        let forged = gw.dir.path().join(format!("forged-{i}.json"));
        std::fs::write(&forged, serde_json::to_vec(&b).unwrap()).unwrap();
        let out = verify(&gw, &forged, &[&w1, &w2, &w3], 2);
        assert!(
            !out.status.success(),
            "an edit at byte {at} of the checkpoint verified: {}",
            stdout(&out)
        );
    }
}

#[test]
fn regression_issue_43_a_second_history_under_the_same_key_gets_no_cosignature() {
    // The fork is made by copying the log's SQLite file: an operator holding
    // the log key who keeps two databases.
    let mut gw = Gateway::start_wrapped_on_sqlite("", &[]);
    let vkey = log_vkey(&gw);
    let names = ["w1.test/witness", "w2.test/witness"];
    let w1 = WitnessProcess::start(&gw, names[0], &vkey, None);
    let w2 = WitnessProcess::start(&gw, names[1], &vkey, None);
    let config = configure(&gw, &[&w1, &w2]);
    gw.restart();
    export_when_cosigned(&gw, &gw.dir.path().join("before"), &names);

    // The operator's copy, taken now, and the honest log going on.
    gw.kill();
    let fork_data = gw.dir.path().join("fork-data");
    copy_dir(&gw.data(), &fork_data);
    gw.restart();
    let out = gw.cli(&["agents", "add", "honest"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let honest = export_when_cosigned(&gw, &gw.dir.path().join("honest"), &names);

    // The second history: other entries at the same indices, the same key.
    let env = [
        ("INTERLOCK_DATA_DIR", fork_data.to_str().unwrap()),
        (
            "INTERLOCK_KEYCHAIN_SERVICE",
            gw.env_var("INTERLOCK_KEYCHAIN_SERVICE").unwrap(),
        ),
    ];
    let mut fork = Command::new(env!("CARGO_BIN_EXE_interlock"))
        .args(["serve", "--config", config.to_str().unwrap()])
        .envs(env)
        .env_remove("INTERLOCK_DATABASE_URL")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::from(
            std::fs::File::create(gw.dir.path().join("fork.log")).unwrap(),
        ))
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(fork.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    let fork_log = || std::fs::read_to_string(gw.dir.path().join("fork.log")).unwrap_or_default();
    assert!(
        first.starts_with("interlock gateway listening on"),
        "{first:?}: {}",
        fork_log()
    );
    let out = interlock_with(&["agents", "add", "forged"], None, &env);
    assert!(out.status.success(), "{}", stderr(&out));

    // Each witness refuses it, and the forked log records that (critical).
    let deadline = Instant::now() + Duration::from_secs(60);
    while fork_log().matches("refused this log's checkpoint").count() < names.len() {
        assert!(Instant::now() < deadline, "no refusal: {}", fork_log());
        std::thread::sleep(Duration::from_millis(200));
    }
    // The refusals' leaves, once a checkpoint signs them (within 100 ms).
    let fork_bundle = gw.dir.path().join("fork-bundle");
    let b = loop {
        let _ = std::fs::remove_dir_all(&fork_bundle);
        let out = interlock_with(
            &["receipts", "export", fork_bundle.to_str().unwrap()],
            None,
            &env,
        );
        assert!(out.status.success(), "{}", stderr(&out));
        let b: Value =
            serde_json::from_slice(&std::fs::read(fork_bundle.join("bundle.json")).unwrap())
                .unwrap();
        let listed = interlock_with(
            &["receipts", "verify", fork_bundle.to_str().unwrap()],
            None,
            &env,
        );
        if stdout(&listed).matches("log.witness_refused").count() >= names.len() {
            break b;
        }
        assert!(
            Instant::now() < deadline,
            "no refusal leaves: {}",
            fork_log()
        );
        std::thread::sleep(Duration::from_millis(200));
    };
    let _ = fork.kill();
    let _ = fork.wait();
    assert_eq!(cosigned_by(&b, &names), 0, "{}", b["checkpoint"]);
    assert_ne!(b["checkpoint"], honest["checkpoint"]);
    // The fork's own bundle verifies with the log key alone (same key)...
    let out = interlock_with(
        &["receipts", "verify", fork_bundle.to_str().unwrap()],
        None,
        &env,
    );
    assert!(out.status.success(), "{}", stdout(&out));
    assert!(
        stdout(&out).contains("log.witness_refused"),
        "{}",
        stdout(&out)
    );
    // ...but not once an auditor requires one witness.
    let out = verify(&gw, &fork_bundle, &[&w1, &w2], 1);
    assert!(!out.status.success(), "{}", stdout(&out));
    assert!(
        stdout(&out).contains("cosigned by 0 of the witnesses given"),
        "{}",
        stdout(&out)
    );
    // The honest log is still cosigned as it grows.
    let out = gw.cli(&["agents", "add", "still-honest"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let again = export_when_cosigned(&gw, &gw.dir.path().join("honest-2"), &names);
    assert_ne!(again["checkpoint"], honest["checkpoint"]);
    let out = verify(&gw, &gw.dir.path().join("honest-2"), &[&w1, &w2], 2);
    assert!(out.status.success(), "{}", stdout(&out));
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let ty = entry.file_type().unwrap();
        let dest = to.join(entry.file_name());
        if ty.is_dir() {
            copy_dir(&entry.path(), &dest);
        } else if ty.is_file() {
            std::fs::copy(entry.path(), dest).unwrap();
        }
    }
}
