fn main() {
    // The app's own commands, each with a generated `allow-<command>` permission.
    // The review UI is granted exactly these (see `capability` in src/main.rs) and
    // nothing of Tauri's core (no file system, shell, window or event APIs).
    tauri_build::try_build(tauri_build::Attributes::new().app_manifest(
        tauri_build::AppManifest::new().commands(&[
            "decide",
            "approver_info",
            "change_client",
            "change_hooks",
        ]),
    ))
    .expect("tauri build script");
}
