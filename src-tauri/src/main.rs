//! Interlock's desktop app: the gateway engine in-process on the embedded SQLite
//! file, a tray icon with the number of held items, notifications with
//! *Approve* / *Reject* / *Review*, and the review UI (served by the gateway) in
//! a window.
//!
//! A shell only: opening the engine, signing and serving are the interlock
//! crates' (`interlock-host`, `interlock-gateway`). Approver keys stay in the OS
//! keychain and sign in this process; the web view gets a reviewer API key (read
//! and submit) and four commands, `decide`, `approver_info` and the owner's
//! `change_client` and `change_hooks` (each change confirmed natively), and
//! nothing else.
#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

mod backend;
mod clients;
mod downloads;
mod hooks;
mod notify;
mod team;
mod tray;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use backend::{Backend, DecideError};
use interlock_host::Decision;
use interlock_trust::SubjectKind;
use serde_json::Value;
use tauri::ipc::CapabilityBuilder;
use tauri::{AppHandle, Manager, RunEvent, WebviewUrl, WebviewWindowBuilder};

const WINDOW: &str = "main";
const APP_ICON: &[u8] = include_bytes!("../../icons/128x128.png");

/// `decide({subjectKind, subject, hash, decision, reason, scope?})`: signs exactly
/// `hash` with the approver key in the OS keychain. Errors are `{code, message}`
/// with `code` = `changed` when the item is no longer what was shown, and
/// `cancelled` when the reviewer declined the native confirmation.
///
/// Only the app's own review UI (the in-process gateway's origin) signs
/// without asking: a page of any other origin — in team mode, the team
/// gateway's, whose code the team gateway serves — first gets a native dialog
/// naming the subject and the exact hash ([`team::needs_confirmation`]), so a
/// remote page cannot make the app sign silently (issue 15, item 7).
#[tauri::command]
#[allow(clippy::too_many_arguments)] // the command's JSON arguments, one each
async fn decide(
    app: AppHandle,
    webview: tauri::Webview,
    backend: tauri::State<'_, Arc<Backend>>,
    subject_kind: String,
    subject: String,
    hash: String,
    decision: String,
    reason: Option<String>,
    scope: Option<String>,
) -> Result<Value, DecideError> {
    // A held call approved for more than once (issue 18): its plan and a
    // standing approval, both signed below.
    let scope = match scope.as_deref() {
        None => None,
        Some(s) => Some(interlock_host::Scope::parse(s).ok_or_else(|| DecideError {
            code: "invalid",
            message: format!("scope must be once, session, hour or arguments, not {s:?}"),
        })?),
    };
    let decision = match decision.as_str() {
        "approve" => Decision::Approve,
        "reject" => Decision::Reject,
        other => {
            return Err(DecideError {
                code: "invalid",
                message: format!("decision must be `approve` or `reject`, not {other:?}"),
            });
        }
    };
    let Some(target) = Target::parse(&subject_kind, &subject) else {
        return Err(DecideError {
            code: "invalid",
            message: format!(
                "subjectKind must be `plan`, `server`, `tool` (subject `<server>/<tool>`) or `removal`, not {subject_kind:?} about {subject:?}"
            ),
        });
    };
    let page = webview.url().map_err(|e| DecideError {
        code: "internal",
        message: format!("cannot tell which page asked: {e}"),
    })?;
    if team::needs_confirmation(backend.own_ui_origin(), &page) {
        let page_origin = page.origin().ascii_serialization();
        let fingerprint = backend.key.fingerprint();
        let audience = backend.audience().await?;
        let confirmation = team::Confirmation {
            page_origin: &page_origin,
            decision: decision.name(),
            subject_kind: target.name(),
            subject: &subject,
            hash: &hash,
            key_fingerprint: &fingerprint,
            audience: &audience,
        };
        let asked = Question {
            title: confirmation.title(),
            message: confirmation.message(),
            ok_label: confirmation.ok_label(),
        };
        if !confirm(&app, &webview, &asked).await {
            eprintln!(
                "interlock-desktop: {} {subject_kind} {subject} at {hash} asked by {page_origin}: \
                 not confirmed, nothing signed",
                decision.name()
            );
            return Err(DecideError {
                code: "cancelled",
                message: format!(
                    "not confirmed in the app's dialog: nothing was signed for {subject:?}"
                ),
            });
        }
    }
    let reason = reason
        .map(|r| r.trim().to_owned())
        .filter(|r| !r.is_empty())
        .unwrap_or_else(|| format!("{}d in the desktop app", decision.name()));
    match (target, scope) {
        (Target::Subject(SubjectKind::Plan), Some(scope)) if decision == Decision::Approve => {
            backend.approve_held(&subject, &hash, scope, &reason).await
        }
        (_, Some(_)) => Err(DecideError {
            code: "invalid",
            message: "a scope is given only when approving a held call".into(),
        }),
        (Target::Subject(kind), None) => {
            backend
                .decide(kind, &subject, &hash, decision, &reason)
                .await
        }
        (Target::Tool { split }, None) => {
            let (server, tool) = subject.split_at(split);
            backend
                .decide_tool(server, &tool[1..], &hash, decision, &reason)
                .await
        }
        (Target::Removal, None) if decision == Decision::Approve => {
            backend.remove_server(&subject, &hash, &reason).await
        }
        (Target::Removal, None) => Err(DecideError {
            code: "invalid",
            message: "a removal is only approved (leave the server to keep it)".into(),
        }),
    }
}

/// What a decision the window asks for is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Target {
    /// A plan or a server's surface.
    Subject(SubjectKind),
    /// One tool: the subject is `<server>/<tool>`, split at byte `split`.
    Tool { split: usize },
    /// A server's removal (issue 20 item 5).
    Removal,
}

impl Target {
    fn parse(kind: &str, subject: &str) -> Option<Target> {
        match kind {
            "plan" => Some(Target::Subject(SubjectKind::Plan)),
            "server" => Some(Target::Subject(SubjectKind::Server)),
            "tool" => subject
                .find('/')
                .filter(|&at| at > 0 && at + 1 < subject.len())
                .map(|split| Target::Tool { split }),
            "removal" => Some(Target::Removal),
            _ => None,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Target::Subject(kind) => kind.as_str(),
            Target::Tool { .. } => "tool",
            Target::Removal => "removal",
        }
    }
}

/// What a native confirmation asks.
pub(crate) struct Question {
    pub title: String,
    pub message: String,
    pub ok_label: &'static str,
}

/// Shows the native confirmation (modal to the asking window) and waits for
/// the reviewer's answer: `true` only for the confirming button; closing the
/// dialog, *Cancel*, or a dialog that could not be shown is `false`.
pub(crate) async fn confirm(app: &AppHandle, webview: &tauri::Webview, what: &Question) -> bool {
    use tauri_plugin_dialog::{DialogExt as _, MessageDialogButtons, MessageDialogKind};
    let (tx, rx) = tokio::sync::oneshot::channel();
    let mut dialog = app
        .dialog()
        .message(what.message.clone())
        .title(what.title.clone())
        .kind(MessageDialogKind::Warning)
        .buttons(MessageDialogButtons::OkCancelCustom(
            what.ok_label.to_owned(),
            "Cancel".to_owned(),
        ));
    if let Some(window) = app.get_webview_window(webview.label()) {
        dialog = dialog.parent(&window);
    }
    dialog.show(move |ok| {
        let _ = tx.send(ok);
    });
    rx.await.unwrap_or(false)
}

/// Asks the owner `asked` natively before a change to `what` (an AI
/// client's file): `cancelled` unless they confirm.
pub(crate) async fn owner_confirms(
    app: &AppHandle,
    webview: &tauri::Webview,
    asked: &Question,
    what: &str,
) -> Result<(), DecideError> {
    if confirm(app, webview, asked).await {
        return Ok(());
    }
    Err(DecideError {
        code: "cancelled",
        message: format!("not confirmed in the app's dialog: {what} was not changed"),
    })
}

/// `approver_info()`: the approver key's id, fingerprint and public key (hex),
/// its registered identity, and where the app keeps things. Never the secret.
#[tauri::command]
async fn approver_info(backend: tauri::State<'_, Arc<Backend>>) -> Result<Value, String> {
    Ok(backend.approver_info().await)
}

/// What the review UI reads at start (`window.__INTERLOCK__`), set only on the
/// gateway's own origin so no other page ever sees the reviewer key.
fn init_script(origin: &str, token: &str) -> String {
    let origin = serde_json::to_string(origin).expect("JSON");
    let token = serde_json::to_string(token).expect("JSON");
    format!(
        r#"(function () {{
  if (window.location.origin !== {origin}) return;
  var invoke = function (cmd, args) {{
    return window.__TAURI_INTERNALS__.invoke(cmd, args || {{}});
  }};
  Object.defineProperty(window, "__INTERLOCK__", {{
    value: Object.freeze({{
      desktop: true,
      apiBase: {origin},
      token: {token},
      decide: function (args) {{ return invoke("decide", args); }},
      approverInfo: function () {{ return invoke("approver_info"); }},
      changeClient: function (args) {{ return invoke("change_client", args); }},
      changeHooks: function (args) {{ return invoke("change_hooks", args); }}
    }}),
    writable: false,
    configurable: false
  }});
}})();"#
    )
}

/// How to (re)create the window: it exists only while open — closing it frees
/// the web view and its WebKit processes, and the app stays in the tray.
struct WindowSpec {
    origin: String,
    ui: bool,
    init_script: String,
}

/// Shows and focuses the window, creating it if it is closed, on `route` (a
/// `#/…` route of the UI) if given.
fn open_window(app: &AppHandle, route: Option<&str>) {
    if let Some(w) = app.get_webview_window(WINDOW) {
        let _ = w.show();
        let _ = w.unminimize();
        let _ = w.set_focus();
        if let Some(route) = route {
            let route = serde_json::to_string(route).expect("JSON");
            let _ = w.eval(format!("window.location.hash = {route};"));
        }
        return;
    }
    let Some(spec) = app.try_state::<WindowSpec>() else {
        return;
    };
    if let Err(e) = build_window(app, &spec, route) {
        eprintln!("interlock-desktop: cannot open the window: {e}");
    }
}

fn build_window(
    app: &AppHandle,
    spec: &WindowSpec,
    route: Option<&str>,
) -> Result<(), Box<dyn std::error::Error>> {
    let url = if spec.ui {
        format!("{}/{}", spec.origin, route.unwrap_or(""))
    } else {
        no_ui_page(&spec.origin)
    };
    let origin = spec.origin.clone();
    let download_origin = spec.origin.clone();
    let window = WebviewWindowBuilder::new(app, WINDOW, WebviewUrl::External(url.parse()?))
        .title("Interlock")
        .inner_size(1200.0, 800.0)
        .min_inner_size(640.0, 480.0)
        .initialization_script(spec.init_script.clone())
        // The window stays on the gateway's origin; nothing else may load in it.
        .on_navigation(move |u| u.scheme() == "data" || u.origin().ascii_serialization() == origin)
        .on_new_window(|_, _| tauri::webview::NewWindowResponse::Deny)
        // A receipts bundle dropped on the window reaches the page (the
        // Receipts view verifies it); Tauri's own handler would swallow the drop.
        .disable_drag_drop_handler()
        .on_download(move |webview, event| save_download(&webview, &download_origin, event))
        .build()?;
    tune_webview(&window);
    let _ = window.set_focus();
    Ok(())
}

/// Where a file the UI saves goes (see `downloads`), and a notice saying so.
fn save_download(
    webview: &tauri::Webview,
    origin: &str,
    event: tauri::webview::DownloadEvent<'_>,
) -> bool {
    use tauri::webview::DownloadEvent;
    let app = webview.app_handle();
    match event {
        DownloadEvent::Requested { url, destination } => {
            if !downloads::allowed(url.as_str(), origin) {
                eprintln!("interlock-desktop: download of {url} refused (not the UI's)");
                return false;
            }
            let paths = app.path();
            let Some(folder) = downloads::folder(paths.download_dir().ok(), paths.home_dir().ok())
            else {
                return false;
            };
            if let Err(e) = std::fs::create_dir_all(&folder) {
                eprintln!("interlock-desktop: cannot make {}: {e}", folder.display());
                return false;
            }
            let suggested = destination
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            *destination =
                downloads::free_path(&folder, &downloads::clean_name(&suggested), |p| p.exists());
            true
        }
        DownloadEvent::Finished { path, success, .. } => {
            let options = app
                .try_state::<Arc<notify::Options>>()
                .map(|o| Arc::clone(&o));
            let (title, body) = match (&path, success) {
                (Some(p), true) => (
                    format!(
                        "Saved {}",
                        p.file_name().unwrap_or_default().to_string_lossy()
                    ),
                    format!("in {}", p.parent().unwrap_or(p).display()),
                ),
                _ => ("Not saved".to_owned(), "The download failed.".to_owned()),
            };
            eprintln!("interlock-desktop: {title} {body}");
            if let Some(options) = options {
                tauri::async_runtime::spawn(async move {
                    notify::notice(&options, &title, &body).await;
                });
            }
            true
        }
        _ => true,
    }
}

struct WindowShell(AppHandle);

impl notify::Shell for WindowShell {
    fn open(&self, route: &str) {
        open_window(&self.0, Some(route));
    }
}

/// A page shown when the review UI is not built.
fn no_ui_page(origin: &str) -> String {
    let html = format!(
        "<!doctype html><meta charset=utf-8><title>Interlock</title>\
         <body style='font:15px system-ui;margin:3em;max-width:40em'>\
         <h1>Interlock</h1><p>The gateway runs at <code>{origin}</code>; notifications \
         and the tray work. The review UI is not built: run <code>scripts/ui.sh</code> \
         (or set <code>INTERLOCK_UI_DIR</code> to a built <code>ui/dist</code>) and restart.</p>"
    );
    format!(
        "data:text/html;charset=utf-8,{}",
        interlock_gateway::reviewer::route::encode_component(&html)
    )
}

/// The review UI needs no GPU compositing; without it WebKit's web process
/// keeps far less memory (no GL surfaces, smaller tile buffers), and a document
/// viewer's caches are enough for one local page.
#[cfg(target_os = "linux")]
fn tune_webview(window: &tauri::WebviewWindow) {
    let _ = window.with_webview(|wv| {
        use webkit2gtk::{
            CacheModel, HardwareAccelerationPolicy, SettingsExt as _, WebContextExt as _,
            WebViewExt as _,
        };
        let view = wv.inner();
        if let Some(settings) = view.settings() {
            settings.set_hardware_acceleration_policy(HardwareAccelerationPolicy::Never);
        }
        if let Some(context) = view.context() {
            context.set_cache_model(CacheModel::DocumentViewer);
            if let Some(tag) = language_for_the_page(&locale_env()) {
                context.set_preferred_languages(&[tag]);
            }
        }
    });
}

/// The locale variables, in the order POSIX consults them.
#[cfg(target_os = "linux")]
fn locale_env() -> Vec<String> {
    ["LC_ALL", "LC_MESSAGES", "LANG"]
        .iter()
        .filter_map(|k| std::env::var(k).ok())
        .collect()
}

/// A language for the page when the process has none a browser accepts.
/// Under the `C`/`POSIX` locale (or none: a session started without one)
/// WebKitGTK reports `navigator.language` as `"C"`, which is not a BCP 47 tag:
/// `Intl` throws on it, and with it the chart library the Overview loads —
/// the charts stayed empty. `None` keeps WebKit's own choice.
fn language_for_the_page(locale: &[String]) -> Option<&'static str> {
    let first = locale.iter().map(String::as_str).find(|v| !v.is_empty());
    match first.map(|v| v.split(['.', '@']).next().unwrap_or(v)) {
        None | Some("C" | "POSIX") => Some("en-US"),
        Some(_) => None,
    }
}

#[cfg(not(target_os = "linux"))]
fn tune_webview(_window: &tauri::WebviewWindow) {}

fn quit(app: &AppHandle) {
    let app = app.clone();
    tauri::async_runtime::spawn(async move {
        if let Some(b) = app.try_state::<Arc<Backend>>() {
            b.shutdown().await;
        }
        app.exit(0);
    });
}

fn ui_candidates(app: &AppHandle) -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    if let Ok(res) = app.path().resource_dir() {
        dirs.push(res.join("ui"));
    }
    // A build from the repository: the UI built next to it by scripts/ui.sh.
    dirs.push(PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../ui/dist"
    )));
    dirs
}

fn setup(app: &mut tauri::App, started_at: Instant) -> Result<(), Box<dyn std::error::Error>> {
    let handle = app.handle().clone();
    eprintln!(
        "interlock-desktop: event loop ready {} ms after start",
        started_at.elapsed().as_millis()
    );
    let settings = backend::Settings::from_env(&ui_candidates(&handle))?;
    let started = tauri::async_runtime::block_on(backend::start(settings))?;
    let backend = Arc::new(started.backend);
    app.manage(Arc::clone(&backend));

    // The UI's origin may call exactly these commands, in the main window.
    app.add_capability(
        CapabilityBuilder::new("review-ui")
            .remote(backend.origin.clone())
            .local(false)
            .window(WINDOW)
            .permission("allow-decide")
            .permission("allow-approver-info")
            .permission("allow-change-client")
            .permission("allow-change-hooks"),
    )?;

    let paused = notify::new_paused();
    let tray = tray::build(
        &handle,
        Arc::clone(&paused),
        tray::Actions {
            open: open_window,
            quit,
        },
    )?;
    eprintln!(
        "interlock-desktop: tray ready {} ms after start",
        started_at.elapsed().as_millis()
    );

    app.manage(WindowSpec {
        origin: backend.origin.clone(),
        ui: backend.ui,
        init_script: init_script(&backend.origin, &started.reviewer_token),
    });
    // `--hidden` (autostart): only the tray until the reviewer opens the window.
    // The first run (the approver key made now) opens on the welcome page: the
    // key, the AI clients found to connect, then what arrived for review.
    if !std::env::args().any(|a| a == "--hidden") {
        open_window(&handle, started.created_key.then_some("#/welcome"));
        eprintln!(
            "interlock-desktop: window built {} ms after start",
            started_at.elapsed().as_millis()
        );
    }

    let icon_path = handle.path().app_cache_dir().ok().and_then(|dir| {
        std::fs::create_dir_all(&dir).ok()?;
        let p = dir.join("interlock.png");
        std::fs::write(&p, APP_ICON).ok()?;
        Some(p.to_string_lossy().into_owned())
    });
    let options = Arc::new(notify::Options { icon: icon_path });
    app.manage(Arc::clone(&options));
    tauri::async_runtime::spawn(notify::run(
        Arc::clone(&backend),
        Arc::new(WindowShell(handle.clone())),
        paused,
        options,
    ));
    tauri::async_runtime::spawn(tray::keep(Arc::clone(&backend), tray));
    if started.created_key {
        eprintln!(
            "interlock-desktop: approver key {} created in the OS keychain",
            backend.key.fingerprint()
        );
    }
    Ok(())
}

/// GTK opens GLX when it starts, to choose a visual for GL, and under software
/// GL (Xvfb, most VMs) that maps Mesa's llvmpipe and LLVM: ~50 MiB of RSS in
/// the tray, where the app draws nothing with GL (the web view draws without
/// GPU compositing, `tune_webview`; figures in docs/BENCHMARKS.md, "The desktop
/// window's memory"). `GDK_GL=disable` turns that off, and must be in the
/// environment before GTK starts: the app re-executes itself once with it (the
/// process keeps its PID and arguments). Not `std::env::set_var`, which is
/// unsafe and this crate forbids `unsafe`. A user's own `GDK_GL` is kept.
#[cfg(target_os = "linux")]
fn without_gdk_gl() {
    use std::os::unix::process::CommandExt as _;
    if std::env::var_os("GDK_GL").is_some() {
        return;
    }
    let Ok(exe) = std::env::current_exe() else {
        return;
    };
    let err = std::process::Command::new(exe)
        .args(std::env::args_os().skip(1))
        .env("GDK_GL", "disable")
        .exec();
    eprintln!("interlock-desktop: cannot re-execute with GDK_GL=disable ({err}); going on");
}

#[cfg(not(target_os = "linux"))]
fn without_gdk_gl() {}

/// The single-instance D-Bus name's stem: one app per data directory, not
/// one per user. Two apps on two data directories (two teams' reviews, or
/// two reviewers in one session as the e2e test runs them) are two apps; a
/// second launch on the same directory — the one that would open the same
/// database and keychain service — still only brings the first forward.
fn instance_id() -> String {
    let data_dir =
        interlock_host::Host::new(std::env::var_os("INTERLOCK_DATA_DIR").map(Into::into))
            .data_dir()
            .map(|d| std::path::absolute(&d).unwrap_or(d))
            .unwrap_or_default();
    let digest = interlock_core::canon::Digest::of_bytes(data_dir.as_os_str().as_encoded_bytes());
    // A D-Bus name element may not start with a digit.
    format!("dev.interlock.desktop.d{}", &digest.hex()[..16])
}

fn main() {
    without_gdk_gl();
    let started_at = Instant::now();
    let app = tauri::Builder::default()
        // First: a second launch on the same data directory only brings the
        // running app's window forward.
        .plugin(
            tauri_plugin_single_instance::Builder::new()
                .dbus_id(instance_id())
                .callback(|app, _argv, _cwd| open_window(app, None))
                .build(),
        )
        // Used from Rust only (`decide`'s confirmation); no page is granted its commands.
        .plugin(tauri_plugin_dialog::init())
        .invoke_handler(tauri::generate_handler![
            decide,
            approver_info,
            clients::change_client,
            hooks::change_hooks
        ])
        .setup(move |app| {
            setup(app, started_at).map_err(|e| {
                eprintln!("interlock-desktop: cannot start: {e}");
                e
            })
        })
        .build(tauri::generate_context!())
        .unwrap_or_else(|e| {
            eprintln!("interlock-desktop: {e}");
            std::process::exit(2);
        });
    app.run(|app, event| match event {
        // Closing the window (it is destroyed, freeing the web view) keeps the
        // app in the tray; Quit exits.
        RunEvent::ExitRequested { api, code, .. } if code.is_none() => api.prevent_exit(),
        RunEvent::Exit => {
            if let Some(b) = app.try_state::<Arc<Backend>>() {
                tauri::async_runtime::block_on(b.shutdown());
            }
        }
        _ => {}
    });
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_window_decision_names_a_plan_a_server_a_tool_or_a_removal() {
        use super::Target;
        use interlock_trust::SubjectKind;
        assert_eq!(
            Target::parse("plan", "p"),
            Some(Target::Subject(SubjectKind::Plan))
        );
        assert_eq!(
            Target::parse("tool", "files/write_file"),
            Some(Target::Tool { split: 5 })
        );
        for bad in ["files", "/write_file", "files/"] {
            assert_eq!(Target::parse("tool", bad), None, "{bad}");
        }
        assert_eq!(Target::parse("removal", "files"), Some(Target::Removal));
        assert_eq!(Target::parse("standing", "s1"), None);
    }

    #[test]
    fn regression_the_c_locale_gives_the_page_a_language_intl_accepts() {
        let v = |xs: &[&str]| xs.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(super::language_for_the_page(&v(&[])), Some("en-US"));
        assert_eq!(super::language_for_the_page(&v(&["C"])), Some("en-US"));
        assert_eq!(
            super::language_for_the_page(&v(&["C.UTF-8"])),
            Some("en-US")
        );
        assert_eq!(
            super::language_for_the_page(&v(&["", "POSIX"])),
            Some("en-US")
        );
        assert_eq!(super::language_for_the_page(&v(&["de_DE.UTF-8"])), None);
        assert_eq!(
            super::language_for_the_page(&v(&["", "C", "fr_FR"])),
            Some("en-US")
        );
    }

    use super::*;

    #[test]
    fn the_init_script_is_bound_to_the_gateway_origin() {
        let s = init_script("http://127.0.0.1:8717", "ilk_x\"</script>");
        assert!(s.contains(r#"if (window.location.origin !== "http://127.0.0.1:8717") return;"#));
        assert!(s.contains(r#"token: "ilk_x\"</script>""#));
    }
}
