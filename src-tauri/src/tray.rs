//! The tray: its icon and count, and a menu that lists what waits (issue 46:
//! it showed only a count). The list is the inbox's, riskiest first, each
//! line with the risk label every other view shows
//! (`interlock_gateway::inbox`); choosing one opens its review.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use interlock_gateway::inbox::{InboxEntry, most_urgent};
use interlock_gateway::reviewer::route::route;
use tauri::image::Image;
use tauri::menu::{CheckMenuItem, Menu, MenuItem, PredefinedMenuItem};
use tauri::tray::{TrayIcon, TrayIconBuilder};
use tauri::{AppHandle, Wry};

use crate::backend::Backend;

const TRAY_IDLE: &[u8] = include_bytes!("../../icons/tray.png");
const TRAY_HELD: &[u8] = include_bytes!("../../icons/tray-held.png");

/// How many waiting items the menu lists; the rest are "…and N more".
pub const LISTED: usize = 5;

/// A menu item's id that opens the review at a route.
const OPEN_ROUTE: &str = "open-route:";

/// What the tray's menu items do, given by the shell (it owns the window).
pub struct Actions {
    pub open: fn(&AppHandle, Option<&str>),
    pub quit: fn(&AppHandle),
}

pub struct Tray {
    app: AppHandle,
    icon: TrayIcon,
    menu: Menu<Wry>,
    status: MenuItem<Wry>,
    /// The listed items now in the menu, after `status`.
    listed: Vec<MenuItem<Wry>>,
}

pub fn build(app: &AppHandle, paused: Arc<AtomicBool>, actions: Actions) -> tauri::Result<Tray> {
    let status = MenuItem::with_id(app, "status", "Starting…", false, None::<&str>)?;
    let open = MenuItem::with_id(app, "open", "Open Interlock", true, None::<&str>)?;
    let pause = CheckMenuItem::with_id(
        app,
        "pause",
        "Pause notifications",
        true,
        false,
        None::<&str>,
    )?;
    let quit_item = MenuItem::with_id(app, "quit", "Quit", true, None::<&str>)?;
    let sep = PredefinedMenuItem::separator(app)?;
    let menu = Menu::with_items(app, &[&status, &open, &pause, &sep, &quit_item])?;
    let Actions {
        open: open_at,
        quit,
    } = actions;
    let icon = TrayIconBuilder::with_id("interlock")
        .icon(Image::from_bytes(TRAY_IDLE)?)
        .tooltip("Interlock")
        .menu(&menu)
        .show_menu_on_left_click(true)
        .on_menu_event(move |app, event| match event.id().as_ref() {
            "open" => open_at(app, None),
            "pause" => {
                let now = !paused.load(Ordering::Relaxed);
                paused.store(now, Ordering::Relaxed);
                eprintln!(
                    "interlock-desktop: notifications {}",
                    if now { "paused" } else { "resumed" }
                );
            }
            "quit" => quit(app),
            id => {
                if let Some(route) = id.strip_prefix(OPEN_ROUTE) {
                    open_at(app, Some(route));
                }
            }
        })
        .build(app)?;
    Ok(Tray {
        app: app.clone(),
        icon,
        menu,
        status,
        listed: Vec::new(),
    })
}

/// The status line: how many items wait.
fn count_text(n: usize) -> String {
    match n {
        0 => "Nothing waits for review".to_owned(),
        1 => "1 item waits for review".to_owned(),
        n => format!("{n} items wait for review"),
    }
}

/// A menu label shows `&` as a mnemonic marker; a subject's own is doubled.
fn label(text: &str) -> String {
    text.replace('&', "&&")
}

/// The listed lines: the most urgent items, then how many more wait.
pub fn lines(entries: &[InboxEntry]) -> Vec<(String, String)> {
    let shown = most_urgent(entries.to_vec(), LISTED);
    let mut lines: Vec<(String, String)> = shown
        .iter()
        .map(|e| (route(e.kind, &e.subject), label(&e.line())))
        .collect();
    if entries.len() > shown.len() {
        lines.push((
            "#/inbox".to_owned(),
            format!("…and {} more in the inbox", entries.len() - shown.len()),
        ));
    }
    lines
}

impl Tray {
    fn show(&mut self, entries: &[InboxEntry]) -> tauri::Result<()> {
        let n = entries.len();
        let text = count_text(n);
        let icon = if n == 0 { TRAY_IDLE } else { TRAY_HELD };
        self.icon.set_icon(Some(Image::from_bytes(icon)?))?;
        self.icon.set_title((n > 0).then(|| n.to_string()))?;
        self.icon.set_tooltip(Some(format!("Interlock — {text}")))?;
        self.status.set_text(&text)?;
        for item in self.listed.drain(..) {
            self.menu.remove(&item)?;
        }
        for (at, (route, line)) in lines(entries).into_iter().enumerate() {
            let item = MenuItem::with_id(
                &self.app,
                format!("{OPEN_ROUTE}{route}"),
                line,
                true,
                None::<&str>,
            )?;
            // After the status line, in order.
            self.menu.insert(&item, 1 + at)?;
            self.listed.push(item);
        }
        Ok(())
    }
}

/// Keeps the tray in step: recomputed after every event (bursts coalesced),
/// and every few seconds for changes made by other processes.
pub async fn keep(backend: Arc<Backend>, mut tray: Tray) {
    use tokio::sync::broadcast::error::{RecvError, TryRecvError};
    let mut events = backend.events().subscribe();
    let mut shown: Option<Vec<InboxEntry>> = None;
    loop {
        match backend.inbox_entries().await {
            Ok(entries) if shown.as_ref() != Some(&entries) => {
                if let Err(e) = tray.show(&entries) {
                    eprintln!("interlock-desktop: cannot update the tray: {e}");
                }
                shown = Some(entries);
            }
            Ok(_) => {}
            Err(e) => eprintln!("interlock-desktop: cannot list held items: {e}"),
        }
        match tokio::time::timeout(Duration::from_secs(5), events.recv()).await {
            Err(_) | Ok(Ok(_)) | Ok(Err(RecvError::Lagged(_))) => {}
            Ok(Err(RecvError::Closed)) => return,
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
        // Coalesce what else arrived meanwhile into this one recount.
        while let Ok(_) | Err(TryRecvError::Lagged(_)) = events.try_recv() {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use interlock_core::RiskLevel;
    use interlock_gateway::inbox::Why;
    use interlock_trust::SubjectKind;

    fn plan(id: &str, risk: RiskLevel) -> InboxEntry {
        InboxEntry {
            kind: SubjectKind::Plan,
            subject: id.to_owned(),
            title: format!("R&D {id}"),
            risk,
            why: Why::Proposed,
        }
    }

    #[test]
    fn the_menu_lists_the_riskiest_and_counts_the_rest() {
        let mut entries: Vec<InboxEntry> = (0..7)
            .map(|i| plan(&format!("p{i}"), RiskLevel::Low))
            .collect();
        entries.push(InboxEntry {
            kind: SubjectKind::Server,
            subject: "fs".into(),
            title: "fs".into(),
            risk: RiskLevel::Critical,
            why: Why::Quarantined,
        });
        let got = lines(&entries);
        assert_eq!(got.len(), LISTED + 1);
        assert_eq!(
            got[0],
            (
                "#/servers/fs".to_owned(),
                "CRITICAL · server fs — quarantined: its surface changed".to_owned()
            )
        );
        assert_eq!(got[1].1, "LOW · plan R&&D p0 — waits for a decision");
        assert_eq!(
            got[LISTED],
            ("#/inbox".to_owned(), "…and 3 more in the inbox".to_owned())
        );
        assert!(lines(&[]).is_empty());
    }
}
