//! The filesystem executor and prober against a real filesystem in temp dirs.

mod common;

use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use common::*;
use interlock_adapters::{AdapterConfig, Adapters, ExecError, ProbeOutcome};
use interlock_canon::{Digest, Value};

fn mode_of(p: &Path) -> u32 {
    std::fs::metadata(p).unwrap().permissions().mode() & 0o7777
}

fn setup() -> (tempfile::TempDir, Adapters) {
    let root = tempfile::tempdir().unwrap();
    let a = adapters(&config(root.path(), &[]));
    (root, a)
}

#[tokio::test]
async fn write_file_creates_with_mode_and_reports_the_content_digest() {
    let (root, a) = setup();
    let path = root.path().join("app.toml");
    let out = a
        .execute(&stage(
            "fs.write_file",
            &path,
            r#"{"content": "héllo, wörld €\n", "mode": 416}"#,
        ))
        .await
        .unwrap();
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "héllo, wörld €\n");
    assert_eq!(mode_of(&path), 0o640);
    let expected = Digest::of_bytes("héllo, wörld €\n".as_bytes()).to_string();
    assert_eq!(str_field(&out.detail, "sha256"), expected);
    assert!(str_field(&out.detail, "sha256").starts_with("sha256:"));
    assert_eq!(
        int_field(&out.detail, "bytes"),
        "héllo, wörld €\n".len() as i64
    );
    assert_eq!(int_field(&out.detail, "mode"), 0o640);
    assert_eq!(field(&out.detail, "replaced"), &Value::Bool(false));
    assert!(out.summary.contains("wrote"), "{}", out.summary);
}

#[tokio::test]
async fn write_file_replaces_keeping_the_mode_and_leaves_no_temp_files() {
    let (root, a) = setup();
    let path = root.path().join("f.txt");
    std::fs::write(&path, "old").unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    let out = a
        .execute(&stage("fs.write_file", &path, r#"{"content": "new"}"#))
        .await
        .unwrap();
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "new");
    assert_eq!(mode_of(&path), 0o600, "a replaced file keeps its mode");
    assert_eq!(field(&out.detail, "replaced"), &Value::Bool(true));
    let names: Vec<_> = std::fs::read_dir(root.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, vec![std::ffi::OsString::from("f.txt")]);
    // An explicit mode wins over the old one.
    a.execute(&stage(
        "fs.write_file",
        &path,
        r#"{"content": "x", "mode": 420}"#,
    ))
    .await
    .unwrap();
    assert_eq!(mode_of(&path), 0o644);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn write_file_replacement_is_atomic_for_concurrent_readers() {
    let (root, a) = setup();
    let path = root.path().join("big.txt");
    let size = 512 * 1024;
    let contents = ["a".repeat(size), "b".repeat(size)];
    a.execute(&stage(
        "fs.write_file",
        &path,
        &format!(r#"{{"content": "{}"}}"#, contents[0]),
    ))
    .await
    .unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let reader = {
        let (path, stop) = (path.clone(), stop.clone());
        std::thread::spawn(move || {
            let mut reads = 0;
            while !stop.load(Ordering::Relaxed) {
                let bytes = std::fs::read(&path).expect("the file always exists");
                assert_eq!(bytes.len(), size, "a reader saw a partial file");
                assert!(
                    bytes.iter().all(|&b| b == bytes[0]),
                    "a reader saw a mix of old and new content"
                );
                reads += 1;
            }
            reads
        })
    };
    for i in 0..20 {
        let content = &contents[(i + 1) % 2];
        a.execute(&stage(
            "fs.write_file",
            &path,
            &format!(r#"{{"content": "{content}"}}"#),
        ))
        .await
        .unwrap();
    }
    stop.store(true, Ordering::Relaxed);
    let reads = reader.join().expect("reader saw only whole files");
    assert!(reads > 0);
}

#[tokio::test]
async fn write_file_outside_the_roots_is_forbidden_and_writes_nothing() {
    let (_root, a) = setup();
    let elsewhere = tempfile::tempdir().unwrap();
    let path = elsewhere.path().join("x.txt");
    let err = a
        .execute(&stage("fs.write_file", &path, r#"{"content": "x"}"#))
        .await
        .unwrap_err();
    assert!(matches!(err, ExecError::Forbidden(_)), "{err:?}");
    assert!(!path.exists());
    assert_eq!(std::fs::read_dir(elsewhere.path()).unwrap().count(), 0);
}

#[tokio::test]
async fn write_file_dotdot_escape_is_forbidden() {
    let (root, a) = setup();
    let elsewhere = tempfile::tempdir().unwrap();
    let name = elsewhere.path().file_name().unwrap().to_str().unwrap();
    std::fs::create_dir(root.path().join("sub")).unwrap();
    // root/sub/../../<elsewhere>/x.txt — lexically inside until the `..`s apply.
    let sneaky = format!("{}/sub/../../{name}/x.txt", root.path().display());
    assert!(Path::new(&sneaky).starts_with(root.path()));
    let err = a
        .execute(&stage("fs.write_file", &sneaky, r#"{"content": "x"}"#))
        .await
        .unwrap_err();
    assert!(matches!(err, ExecError::Forbidden(_)), "{err:?}");
    assert!(!elsewhere.path().join("x.txt").exists());
}

#[tokio::test]
async fn write_file_through_a_symlink_leaving_the_roots_is_forbidden() {
    let (root, a) = setup();
    let elsewhere = tempfile::tempdir().unwrap();
    // A directory symlink on the way.
    symlink(elsewhere.path(), root.path().join("out")).unwrap();
    let err = a
        .execute(&stage(
            "fs.write_file",
            root.path().join("out/x.txt"),
            r#"{"content": "x"}"#,
        ))
        .await
        .unwrap_err();
    assert!(matches!(err, ExecError::Forbidden(_)), "{err:?}");
    assert!(!elsewhere.path().join("x.txt").exists());
    // A symlink as the final component, to an existing file outside.
    let victim = elsewhere.path().join("victim.txt");
    std::fs::write(&victim, "precious").unwrap();
    symlink(&victim, root.path().join("link.txt")).unwrap();
    let err = a
        .execute(&stage(
            "fs.write_file",
            root.path().join("link.txt"),
            r#"{"content": "x"}"#,
        ))
        .await
        .unwrap_err();
    assert!(matches!(err, ExecError::Forbidden(_)), "{err:?}");
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
    // A relative symlink that climbs out with `..`.
    symlink(
        "../../../../../../../../../../tmp",
        root.path().join("climb"),
    )
    .unwrap();
    let err = a
        .execute(&stage(
            "fs.write_file",
            root.path().join("climb/interlock-escape.txt"),
            r#"{"content": "x"}"#,
        ))
        .await
        .unwrap_err();
    assert!(matches!(err, ExecError::Forbidden(_)), "{err:?}");
}

#[tokio::test]
async fn write_file_through_a_symlink_inside_the_roots_is_allowed() {
    let (root, a) = setup();
    std::fs::create_dir(root.path().join("real")).unwrap();
    symlink("real", root.path().join("alias")).unwrap();
    a.execute(&stage(
        "fs.write_file",
        root.path().join("alias/x.txt"),
        r#"{"content": "ok"}"#,
    ))
    .await
    .unwrap();
    assert_eq!(
        std::fs::read_to_string(root.path().join("real/x.txt")).unwrap(),
        "ok"
    );
}

#[tokio::test]
async fn write_file_rejects_bad_params_and_targets() {
    let (root, a) = setup();
    let path = root.path().join("f");
    for (target, params) in [
        ("relative/path".to_string(), r#"{"content": "x"}"#),
        (path.display().to_string(), r#"{}"#),
        (path.display().to_string(), r#"{"content": 1}"#),
        (
            path.display().to_string(),
            r#"{"content": "x", "bogus": 1}"#,
        ),
        (
            path.display().to_string(),
            r#"{"content": "x", "mode": 2541}"#,
        ),
        (
            path.display().to_string(),
            r#"{"content": "x", "mode": -1}"#,
        ),
    ] {
        let err = a
            .execute(&stage("fs.write_file", &target, params))
            .await
            .unwrap_err();
        assert!(
            matches!(err, ExecError::InvalidParams(_)),
            "{target} {params}: {err:?}"
        );
    }
    assert!(!path.exists());
    // A missing parent directory is an I/O failure, not a silent mkdir.
    let err = a
        .execute(&stage(
            "fs.write_file",
            root.path().join("no/such/dir/f"),
            r#"{"content": "x"}"#,
        ))
        .await
        .unwrap_err();
    assert!(matches!(err, ExecError::Io(_)), "{err:?}");
    // Writing over a directory is refused.
    std::fs::create_dir(root.path().join("d")).unwrap();
    let err = a
        .execute(&stage(
            "fs.write_file",
            root.path().join("d"),
            r#"{"content": "x"}"#,
        ))
        .await
        .unwrap_err();
    assert!(matches!(err, ExecError::Io(_)), "{err:?}");
}

#[tokio::test]
async fn ensure_absent_removes_files_empty_dirs_and_links_only() {
    let (root, a) = setup();
    let file = root.path().join("f");
    std::fs::write(&file, "x").unwrap();
    let out = a
        .execute(&stage("fs.ensure_absent", &file, "{}"))
        .await
        .unwrap();
    assert!(!file.exists());
    assert_eq!(field(&out.detail, "removed"), &Value::Bool(true));
    assert_eq!(str_field(&out.detail, "kind"), "file");

    let out = a
        .execute(&stage("fs.ensure_absent", &file, "{}"))
        .await
        .unwrap();
    assert!(out.summary.contains("already absent"), "{}", out.summary);
    assert_eq!(field(&out.detail, "removed"), &Value::Bool(false));

    let dir = root.path().join("d");
    std::fs::create_dir(&dir).unwrap();
    a.execute(&stage("fs.ensure_absent", &dir, "{}"))
        .await
        .unwrap();
    assert!(!dir.exists());

    // A non-empty directory is not removed (that would be a recursive delete no
    // reviewer saw spelled out).
    std::fs::create_dir(&dir).unwrap();
    std::fs::write(dir.join("keep"), "x").unwrap();
    let err = a
        .execute(&stage("fs.ensure_absent", &dir, "{}"))
        .await
        .unwrap_err();
    assert!(matches!(err, ExecError::Io(_)), "{err:?}");
    assert!(dir.join("keep").exists());

    // A symlink (even to outside the roots) is removed itself; its target stays.
    let elsewhere = tempfile::tempdir().unwrap();
    let victim = elsewhere.path().join("victim");
    std::fs::write(&victim, "precious").unwrap();
    let link = root.path().join("link");
    symlink(&victim, &link).unwrap();
    let out = a
        .execute(&stage("fs.ensure_absent", &link, "{}"))
        .await
        .unwrap();
    assert_eq!(str_field(&out.detail, "kind"), "symlink");
    assert!(std::fs::symlink_metadata(&link).is_err());
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
}

#[tokio::test]
async fn ensure_absent_refuses_outside_the_roots_and_the_root_itself() {
    let (root, a) = setup();
    let elsewhere = tempfile::tempdir().unwrap();
    let victim = elsewhere.path().join("victim");
    std::fs::write(&victim, "x").unwrap();
    let err = a
        .execute(&stage("fs.ensure_absent", &victim, "{}"))
        .await
        .unwrap_err();
    assert!(matches!(err, ExecError::Forbidden(_)), "{err:?}");
    assert!(victim.exists());
    // Through a directory symlink.
    symlink(elsewhere.path(), root.path().join("out")).unwrap();
    let err = a
        .execute(&stage(
            "fs.ensure_absent",
            root.path().join("out/victim"),
            "{}",
        ))
        .await
        .unwrap_err();
    assert!(matches!(err, ExecError::Forbidden(_)), "{err:?}");
    assert!(victim.exists());
    std::fs::remove_file(root.path().join("out")).unwrap();
    // The (empty) root itself.
    let err = a
        .execute(&stage("fs.ensure_absent", root.path(), "{}"))
        .await
        .unwrap_err();
    assert!(matches!(err, ExecError::Forbidden(_)), "{err:?}");
    assert!(root.path().is_dir());
}

#[tokio::test]
async fn make_dir_creates_parents_sets_the_mode_and_is_idempotent() {
    let (root, a) = setup();
    let dir = root.path().join("a/b/c");
    let out = a
        .execute(&stage("fs.make_dir", &dir, r#"{"mode": 488}"#))
        .await
        .unwrap();
    assert!(dir.is_dir());
    assert_eq!(mode_of(&dir), 0o750);
    assert_eq!(field(&out.detail, "created"), &Value::Bool(true));
    let out = a.execute(&stage("fs.make_dir", &dir, "{}")).await.unwrap();
    assert_eq!(field(&out.detail, "created"), &Value::Bool(false));
    assert!(out.summary.contains("already exists"));

    let file = root.path().join("file");
    std::fs::write(&file, "x").unwrap();
    let err = a
        .execute(&stage("fs.make_dir", &file, "{}"))
        .await
        .unwrap_err();
    assert!(matches!(err, ExecError::Io(_)), "{err:?}");

    let elsewhere = tempfile::tempdir().unwrap();
    let err = a
        .execute(&stage("fs.make_dir", elsewhere.path().join("x"), "{}"))
        .await
        .unwrap_err();
    assert!(matches!(err, ExecError::Forbidden(_)), "{err:?}");
    assert!(!elsewhere.path().join("x").exists());
}

#[tokio::test]
async fn read_file_returns_content_digest_and_truncates_at_max_bytes() {
    let (root, a) = setup();
    let path = root.path().join("r.txt");
    std::fs::write(&path, "0123456789").unwrap();
    let out = a
        .execute(&stage("fs.read_file", &path, "{}"))
        .await
        .unwrap();
    assert_eq!(str_field(&out.detail, "content"), "0123456789");
    assert_eq!(
        str_field(&out.detail, "sha256"),
        Digest::of_bytes(b"0123456789").to_string()
    );
    assert_eq!(field(&out.detail, "truncated"), &Value::Bool(false));

    let out = a
        .execute(&stage("fs.read_file", &path, r#"{"max_bytes": 4}"#))
        .await
        .unwrap();
    assert_eq!(str_field(&out.detail, "content"), "0123");
    assert_eq!(field(&out.detail, "truncated"), &Value::Bool(true));
    assert_eq!(int_field(&out.detail, "size"), 10);
    assert!(
        out.detail.get("sha256").is_none(),
        "no digest of a partial read"
    );

    // Exactly max_bytes is not truncated.
    let out = a
        .execute(&stage("fs.read_file", &path, r#"{"max_bytes": 10}"#))
        .await
        .unwrap();
    assert_eq!(field(&out.detail, "truncated"), &Value::Bool(false));

    let bin = root.path().join("bin");
    std::fs::write(&bin, [0xff, 0xfe, 0x00]).unwrap();
    let out = a.execute(&stage("fs.read_file", &bin, "{}")).await.unwrap();
    assert_eq!(str_field(&out.detail, "content_base64"), "//4A");

    for bad in [r#"{"max_bytes": 0}"#, r#"{"max_bytes": 1e15}"#] {
        let err = a
            .execute(&stage("fs.read_file", &path, bad))
            .await
            .unwrap_err();
        assert!(matches!(err, ExecError::InvalidParams(_)), "{bad}: {err:?}");
    }
    let err = a
        .execute(&stage("fs.read_file", root.path(), "{}"))
        .await
        .unwrap_err();
    assert!(matches!(err, ExecError::Io(_)), "{err:?}");
    let err = a
        .execute(&stage("fs.read_file", root.path().join("missing"), "{}"))
        .await
        .unwrap_err();
    assert!(matches!(err, ExecError::Io(_)), "{err:?}");
}

fn is_met(o: &ProbeOutcome) -> bool {
    matches!(o, ProbeOutcome::Met { .. })
}
fn is_unmet(o: &ProbeOutcome) -> bool {
    matches!(o, ProbeOutcome::Unmet { .. })
}
fn is_unprobeable(o: &ProbeOutcome) -> bool {
    matches!(o, ProbeOutcome::Unprobeable { .. })
}

#[tokio::test]
async fn existence_probes_are_met_unmet_or_unprobeable() {
    let (root, a) = setup();
    let file = root.path().join("f");
    let dir = root.path().join("d");
    let missing = root.path().join("missing/deeper");
    std::fs::write(&file, "x").unwrap();
    std::fs::create_dir(&dir).unwrap();
    let exists = check("fs.path_exists", "{}");
    let absent = check("fs.path_absent", "{}");
    let is_dir = check("fs.is_dir", "{}");

    assert!(is_met(&probe(&a, &exists, &file).await));
    assert!(is_met(&probe(&a, &exists, &dir).await));
    assert!(is_unmet(&probe(&a, &exists, &missing).await));

    assert!(is_unmet(&probe(&a, &absent, &file).await));
    assert!(is_met(&probe(&a, &absent, &missing).await));
    // A path below a regular file cannot exist either.
    assert!(is_met(&probe(&a, &absent, file.join("below")).await));

    assert!(is_met(&probe(&a, &is_dir, &dir).await));
    assert!(is_unmet(&probe(&a, &is_dir, &file).await));
    assert!(is_unmet(&probe(&a, &is_dir, &missing).await));

    // Outside the roots nothing is observed — in particular `path_absent` is not
    // "met" just because the adapter may not look.
    let elsewhere = tempfile::tempdir().unwrap();
    for c in [&exists, &absent, &is_dir] {
        let o = probe(&a, c, elsewhere.path().join("nothing")).await;
        assert!(is_unprobeable(&o), "{}: {o:?}", c.probe);
        let o = probe(&a, c, "relative").await;
        assert!(is_unprobeable(&o), "{}: {o:?}", c.probe);
    }
    // Unknown params are refused.
    let o = probe(&a, &check("fs.path_exists", r#"{"x": 1}"#), &file).await;
    assert!(is_unprobeable(&o), "{o:?}");
}

#[tokio::test]
async fn probes_through_symlinks_leaving_the_roots_are_unprobeable() {
    let (root, a) = setup();
    let elsewhere = tempfile::tempdir().unwrap();
    std::fs::write(elsewhere.path().join("secret"), "s3cret").unwrap();
    symlink(elsewhere.path().join("secret"), root.path().join("link")).unwrap();
    for c in [
        check("fs.path_exists", "{}"),
        check("fs.path_absent", "{}"),
        check("fs.file_contains", r#"{"text": "s3cret"}"#),
    ] {
        let o = probe(&a, &c, root.path().join("link")).await;
        assert!(is_unprobeable(&o), "{}: {o:?}", c.probe);
    }
}

#[tokio::test]
async fn file_sha256_probe() {
    let (root, a) = setup();
    let path = root.path().join("f");
    std::fs::write(&path, "content").unwrap();
    let right = Digest::of_bytes(b"content").to_string();
    let wrong = Digest::of_bytes(b"other").to_string();
    let o = probe(
        &a,
        &check("fs.file_sha256", &format!(r#"{{"sha256": "{right}"}}"#)),
        &path,
    )
    .await;
    assert!(is_met(&o), "{o:?}");
    let o = probe(
        &a,
        &check("fs.file_sha256", &format!(r#"{{"sha256": "{wrong}"}}"#)),
        &path,
    )
    .await;
    assert!(is_unmet(&o), "{o:?}");
    if let ProbeOutcome::Unmet { observed } = &o {
        assert!(
            observed.contains(&right),
            "observed names the actual digest"
        );
    }
    let o = probe(
        &a,
        &check("fs.file_sha256", &format!(r#"{{"sha256": "{right}"}}"#)),
        root.path().join("missing"),
    )
    .await;
    assert!(is_unmet(&o), "{o:?}");
    let o = probe(
        &a,
        &check("fs.file_sha256", &format!(r#"{{"sha256": "{right}"}}"#)),
        root.path(),
    )
    .await;
    assert!(is_unmet(&o), "a directory has no content digest: {o:?}");
    for bad in [
        r#"{"sha256": "sha256:XYZ"}"#,
        r#"{"sha256": 12}"#,
        "{}",
        &format!(r#"{{"sha256": "{}"}}"#, right.to_uppercase()),
    ] {
        let o = probe(&a, &check("fs.file_sha256", bad), &path).await;
        assert!(is_unprobeable(&o), "{bad}: {o:?}");
    }
}

#[tokio::test]
async fn file_contains_probe_with_a_read_cap() {
    let root = tempfile::tempdir().unwrap();
    let a = adapters(&AdapterConfig {
        read_cap: 32,
        ..config(root.path(), &[])
    });
    let path = root.path().join("f");
    std::fs::write(&path, "héllo, wörld").unwrap();
    let o = probe(
        &a,
        &check("fs.file_contains", r#"{"text": "wörld"}"#),
        &path,
    )
    .await;
    assert!(is_met(&o), "{o:?}");
    let o = probe(
        &a,
        &check("fs.file_contains", r#"{"text": "world"}"#),
        &path,
    )
    .await;
    assert!(is_unmet(&o), "{o:?}");
    let o = probe(
        &a,
        &check("fs.file_contains", r#"{"text": "x"}"#),
        root.path().join("missing"),
    )
    .await;
    assert!(is_unmet(&o), "{o:?}");
    // Non-UTF-8 content is searched as bytes.
    let bin = root.path().join("bin");
    std::fs::write(&bin, b"\xff\xfeneedle\x00").unwrap();
    let o = probe(
        &a,
        &check("fs.file_contains", r#"{"text": "needle"}"#),
        &bin,
    )
    .await;
    assert!(is_met(&o), "{o:?}");
    // Beyond the cap: not "absent", but not observed.
    let big = root.path().join("big");
    std::fs::write(&big, "x".repeat(33)).unwrap();
    let o = probe(&a, &check("fs.file_contains", r#"{"text": "x"}"#), &big).await;
    assert!(is_unprobeable(&o), "{o:?}");
    let o = probe(&a, &check("fs.file_contains", "{}"), &path).await;
    assert!(is_unprobeable(&o), "{o:?}");
}

#[tokio::test]
async fn no_roots_means_nothing_is_reachable() {
    let dir = tempfile::tempdir().unwrap();
    let a = Adapters::builtin(&AdapterConfig::default()).unwrap();
    let err = a
        .execute(&stage(
            "fs.write_file",
            dir.path().join("f"),
            r#"{"content": "x"}"#,
        ))
        .await
        .unwrap_err();
    assert!(matches!(err, ExecError::Forbidden(_)), "{err:?}");
    let o = probe(&a, &check("fs.path_absent", "{}"), dir.path().join("f")).await;
    assert!(is_unprobeable(&o), "{o:?}");
}
