//! Files the review UI saves (an exported receipts bundle, a tlog-proof, a
//! report) land in the user's Downloads folder, never over an existing file,
//! and a notice says where.
//!
//! Why the shell decides this: WebKitGTK's own default writes next to the
//! process's working directory when no XDG Downloads folder is configured (a
//! fresh account, a headless session), which for an app started from a menu
//! is `/` — the export would fail, or land somewhere nobody looks. The UI's
//! downloads are `blob:` URLs of the gateway's own origin; nothing else may
//! start one.

use std::path::{Path, PathBuf};

/// Whether `url` is a download this window may make: a `blob:` URL of the
/// page's own origin (what `ui/src/lib/download.ts` creates). A remote URL is
/// refused: the window only ever shows the gateway's origin, so anything
/// else is not the UI's.
pub fn allowed(url: &str, origin: &str) -> bool {
    url.strip_prefix("blob:")
        .and_then(|rest| rest.strip_prefix(origin))
        .is_some_and(|rest| rest.starts_with('/'))
}

/// The folder downloads go to: the XDG Downloads folder when the account
/// names one, else `~/Downloads` (made if missing).
pub fn folder(xdg_download: Option<PathBuf>, home: Option<PathBuf>) -> Option<PathBuf> {
    xdg_download.or_else(|| home.map(|h| h.join("Downloads")))
}

/// A file name that is only a name: WebKit suggests the `<a download>`
/// attribute, which a page controls; path separators and leading dots are
/// dropped so it cannot leave `folder` or hide itself.
pub fn clean_name(suggested: &str) -> String {
    let name: String = suggested
        .chars()
        .map(|c| {
            if c == '/' || c == '\\' || c.is_control() {
                '_'
            } else {
                c
            }
        })
        .collect();
    let name = name.trim().trim_start_matches('.').to_owned();
    if name.is_empty() {
        "download".to_owned()
    } else {
        name
    }
}

/// `folder/name`, or `folder/stem (n).ext` with the first free `n`: an
/// earlier export is never overwritten.
pub fn free_path(folder: &Path, name: &str, exists: impl Fn(&Path) -> bool) -> PathBuf {
    let first = folder.join(name);
    if !exists(&first) {
        return first;
    }
    let (stem, ext) = match name.rsplit_once('.') {
        Some((s, e)) if !s.is_empty() => (s, format!(".{e}")),
        _ => (name, String::new()),
    };
    (1..)
        .map(|n| folder.join(format!("{stem} ({n}){ext}")))
        .find(|p| !exists(p))
        .expect("some number is free")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_blob_urls_of_the_gateway_origin_may_download() {
        let origin = "http://127.0.0.1:8717";
        assert!(allowed("blob:http://127.0.0.1:8717/5e1d-44", origin));
        assert!(!allowed("http://127.0.0.1:8717/api/v1/receipts", origin));
        assert!(!allowed("blob:http://127.0.0.1:87170/x", origin));
        assert!(!allowed("blob:http://evil.example/x", origin));
        assert!(!allowed("data:text/plain,hi", origin));
    }

    #[test]
    fn downloads_go_to_the_xdg_folder_or_home_downloads() {
        assert_eq!(
            folder(Some("/x/Dl".into()), Some("/home/a".into())),
            Some(PathBuf::from("/x/Dl"))
        );
        assert_eq!(
            folder(None, Some("/home/a".into())),
            Some(PathBuf::from("/home/a/Downloads"))
        );
        assert_eq!(folder(None, None), None);
    }

    #[test]
    fn regression_a_suggested_name_cannot_leave_the_folder_or_hide() {
        assert_eq!(clean_name("../../.bashrc"), "_.._.bashrc");
        assert_eq!(clean_name("..."), "download");
        assert_eq!(clean_name(".hidden"), "hidden");
        assert_eq!(clean_name("a\nb/c"), "a_b_c");
        assert_eq!(clean_name("bundle.json"), "bundle.json");
    }

    #[test]
    fn an_earlier_export_is_never_overwritten() {
        let taken = ["/d/bundle.json", "/d/bundle (1).json"];
        let exists = |p: &Path| taken.iter().any(|t| Path::new(t) == p);
        assert_eq!(
            free_path(Path::new("/d"), "bundle.json", exists),
            PathBuf::from("/d/bundle (2).json")
        );
        assert_eq!(
            free_path(Path::new("/d"), "report.html", exists),
            PathBuf::from("/d/report.html")
        );
        let taken_plain = |p: &Path| p == Path::new("/d/notes");
        assert_eq!(
            free_path(Path::new("/d"), "notes", taken_plain),
            PathBuf::from("/d/notes (1)")
        );
    }
}
