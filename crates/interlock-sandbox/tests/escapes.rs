//! Issue 38: a hostile program (tests/peers/hostile-server.py, the standard
//! library only) started through the real bubblewrap with the default
//! profile tries every way out; every attempt must fail, while what its
//! launch names still works.

use std::collections::BTreeMap;
use std::os::linux::net::SocketAddrExt;
use std::path::PathBuf;

use interlock_sandbox::{Confiner, Launch, Profile, Protected, Setting};

fn hostile_script() -> PathBuf {
    std::fs::canonicalize(
        std::env::var_os("CARGO_MANIFEST_DIR")
            .map_or_else(
                || std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")),
                std::path::PathBuf::from,
            )
            .join("../../tests/peers/hostile-server.py"),
    )
    .unwrap()
}

struct Scene {
    _dir: tempfile::TempDir,
    home: PathBuf,
    data: PathBuf,
    work: PathBuf,
    confiner: Confiner,
    _admin: std::os::unix::net::UnixListener,
    _bus: std::os::unix::net::UnixListener,
    _port: std::net::TcpListener,
    targets: serde_json::Value,
}

/// A home with secrets, a gateway data directory with a database and an
/// admin socket, another server's state, a listening port and an abstract
/// socket (a session bus), all of them targets.
fn scene() -> Scene {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let data = home.join(".local/share/interlock");
    std::fs::create_dir_all(home.join(".ssh")).unwrap();
    std::fs::write(home.join(".ssh/id_ed25519"), "PRIVATE KEY").unwrap();
    std::fs::create_dir_all(data.join("run")).unwrap();
    std::fs::write(data.join("interlock.sqlite"), "SQLite format 3").unwrap();
    std::fs::create_dir_all(data.join("servers/other")).unwrap();
    std::fs::write(data.join("servers/other/token"), "other's secret").unwrap();
    let work = home.join("projects/site");
    std::fs::create_dir_all(&work).unwrap();
    let admin = std::os::unix::net::UnixListener::bind(data.join("run/admin.sock")).unwrap();
    let bus_name = format!(
        "interlock-test-bus-{}-{}",
        std::process::id(),
        dir.path().file_name().unwrap().to_string_lossy()
    );
    let bus = std::os::unix::net::UnixListener::bind_addr(
        &std::os::unix::net::SocketAddr::from_abstract_name(bus_name.as_bytes()).unwrap(),
    )
    .unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let protected = Protected::new(Some(&home), None, std::slice::from_ref(&data));
    let confiner = Confiner::with_protected(protected, data.join("servers"));
    let targets = serde_json::json!({
        "gateway_pid": std::process::id(),
        "paths_read": [
            home.join(".ssh/id_ed25519"),
            data.join("interlock.sqlite"),
            data.join("servers/other/token"),
            "/etc/shadow",
        ],
        "paths_write": [
            home.join("hostile-was-here"),
            home.join(".ssh/authorized_keys"),
            data.join("interlock.sqlite"),
            data.join("servers/other/token"),
        ],
        "unix_sockets": [data.join("run/admin.sock")],
        "abstract_sockets": [bus_name],
        "tcp": [port.local_addr().unwrap().to_string()],
    });
    Scene {
        _dir: dir,
        home,
        data,
        work,
        confiner,
        _admin: admin,
        _bus: bus,
        _port: port,
        targets,
    }
}

/// `python3 ARGS` as server `name` under `setting` in `scene`.
fn confine_python(
    scene: &Scene,
    name: &str,
    args: &[String],
    setting: &Setting,
) -> Result<interlock_sandbox::Confined, interlock_sandbox::SandboxError> {
    let env = BTreeMap::new();
    scene.confiner.confine(
        name,
        &Launch {
            command: "/usr/bin/python3",
            args,
            env: &env,
            cwd: None,
        },
        setting,
        Some("/usr/bin:/bin".as_ref()),
    )
}

/// Runs a confined server to its end, as the gateway would start it.
fn output(confined: &interlock_sandbox::Confined) -> std::process::Output {
    std::process::Command::new(&confined.program)
        .args(&confined.args)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("HOME", interlock_sandbox::SANDBOX_HOME)
        .output()
        .unwrap()
}

fn run(scene: &Scene, setting: &Setting, extra_args: &[String]) -> serde_json::Value {
    let mut args = vec![
        hostile_script().to_string_lossy().into_owned(),
        format!("targets={}", scene.targets),
        "--once".to_owned(),
    ];
    args.extend(extra_args.iter().cloned());
    let out = output(&confine_python(scene, "hostile", &args, setting).unwrap());
    assert!(
        out.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn regression_issue_38_a_hostile_server_reaches_nothing_that_judges_it() {
    let scene = scene();
    let report = run(&scene, &Setting::Default, &[]);
    assert_eq!(report["escaped"], serde_json::json!([]), "{report:#}");
    assert!(!scene.home.join("hostile-was-here").exists());
    let denied = report["denied"].as_object().unwrap();
    // Every attempt was made, none skipped.
    assert_eq!(denied.len(), 16, "{report:#}");
}

#[test]
fn regression_issue_38_a_granted_home_still_hides_the_secrets_in_it() {
    // The filesystem server given the whole home: it may work there, but
    // the keys, the data directory and other servers' state stay masked,
    // and a key it plants in ~/.ssh never reaches the real ~/.ssh.
    let scene = scene();
    let home = scene.home.to_string_lossy().into_owned();
    let report = run(&scene, &Setting::Default, &[home]);
    // Only a plain file in the granted home: the keys, the data directory
    // and other servers' state are masked read-only.
    assert_eq!(
        report["escaped"],
        serde_json::json!([format!(
            "write {}",
            scene.home.join("hostile-was-here").display()
        )]),
        "{report:#}"
    );
    assert!(scene.home.join("hostile-was-here").exists());
    assert!(!scene.home.join(".ssh/authorized_keys").exists());
    assert_eq!(
        std::fs::read(scene.data.join("servers/other/token")).unwrap(),
        b"other's secret"
    );
    assert_eq!(
        std::fs::read(scene.data.join("interlock.sqlite")).unwrap(),
        b"SQLite format 3"
    );
}

#[test]
fn regression_issue_38_a_path_inside_a_secret_is_refused_before_anything_starts() {
    let scene = scene();
    let args = vec![scene.home.join(".ssh").to_string_lossy().into_owned()];
    let err = confine_python(&scene, "hostile", &args, &Setting::Default).unwrap_err();
    assert!(err.to_string().contains(".ssh"), "{err}");
    // So is a profile's own grant of the data directory.
    let profile = Setting::Profile(Box::new(Profile {
        read: vec![scene.data.clone()],
        ..Profile::default()
    }));
    let err = confine_python(&scene, "hostile", &[], &profile).unwrap_err();
    assert!(err.to_string().contains("no server may reach"), "{err}");
}

#[test]
fn a_profile_grant_is_usable_and_the_state_dir_is_private_and_kept() {
    let scene = scene();
    std::fs::write(scene.work.join("index.html"), "<h1>hi</h1>").unwrap();
    let script = format!(
        "import os; open(os.path.join(os.environ['HOME'], 'kept'), 'w').write('1'); print(open('{}').read())",
        scene.work.join("index.html").display()
    );
    let args = vec!["-c".to_owned(), script];
    let profile = Setting::Profile(Box::new(Profile {
        read: vec![scene.work.clone()],
        ..Profile::default()
    }));
    let out = output(&confine_python(&scene, "site", &args, &profile).unwrap());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "<h1>hi</h1>");
    assert!(scene.data.join("servers/site/kept").exists());
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(scene.data.join("servers/site"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o700);
}

#[test]
fn a_server_over_its_memory_limit_is_stopped_by_the_kernel() {
    let scene = scene();
    let args = vec!["-c".to_owned(), "x = bytearray(256 << 20)".to_owned()];
    let profile = Setting::Profile(Box::new(Profile {
        limits: interlock_sandbox::Limits {
            memory_mb: 64,
            ..Default::default()
        },
        ..Profile::default()
    }));
    let out = output(&confine_python(&scene, "greedy", &args, &profile).unwrap());
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("MemoryError"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn regression_issue_38_a_grant_of_the_whole_file_system_shows_neither_the_machines_proc_nor_a_secret()
 {
    // `mcp-server-filesystem /`, read-only: the machine's /proc, /sys and
    // /dev stay the sandbox's own, and every protected path under / is
    // masked (here the scene's home, data directory and sockets, which are
    // in the host's /tmp, now visible).
    let scene = scene();
    let profile = Setting::Profile(Box::new(Profile {
        read: vec!["/".into()],
        ..Profile::default()
    }));
    let report = run(&scene, &profile, &[]);
    assert_eq!(report["escaped"], serde_json::json!([]), "{report:#}");
    assert_eq!(
        report["denied"].as_object().unwrap().len(),
        16,
        "{report:#}"
    );
}
