fn main() {
    // The app's own commands, each with a generated `allow-<command>` permission.
    // The review UI is granted exactly these (see `capability` in src/main.rs) and
    // nothing of Tauri's core (no file system, shell, window or event APIs).
    //
    // No capability files: the one capability is granted at run time (src/main.rs).
    // Saying where they would be keeps tauri-build from watching a `capabilities/`
    // directory that does not exist, which made cargo rebuild the app on every
    // build (issue 45 item 7: scripts/test's steps share one build).
    tauri_build::try_build(
        tauri_build::Attributes::new()
            .capabilities_path_pattern("./capabilities/**/*")
            .app_manifest(tauri_build::AppManifest::new().commands(&[
                "decide",
                "approver_info",
                "change_client",
                "change_hooks",
            ])),
    )
    .expect("tauri build script");
}
