//! Desktop notifications for held items, with *Approve*, *Reject* and *Review*.
//!
//! [`Folder`] decides what to show (pure, unit-tested): one notification per
//! held item, a newer event about the same item replaces its notification
//! instead of adding one, and a burst (more than [`BURST`] new items within
//! [`WINDOW`]) is grouped into one summary. The notifier task feeds it the
//! gateway's events, shows notifications with `notify-rust`, and acts on the
//! actions that the notification server reports over D-Bus.
//!
//! *Approve* is offered only for a plan of low or medium risk: a notification's
//! text is the proposer's (its title), not what the reviewer sees hashed, so a
//! high or critical plan and every server surface offer *Review* (and *Reject*)
//! instead, and are approved only in their review. An `approve` action that
//! arrives anyway is checked again against the store's risk of the plan at
//! action time ([`approve_from_notification`]), never against the notification.
//! *Approve* signs exactly the hash the notification was raised for; if the item
//! changed since, nothing is signed and the review opens instead. Actions are
//! accepted only from the bus name that owns `org.freedesktop.Notifications`
//! (anyone on the session bus can emit a signal; only the server's count).
//!
//! A held tool call (issue 18) is a high-risk plan, so it offers no
//! *Approve*. If this app's gateway held it for its risk (not for what
//! inspection found in its arguments) and the call itself is of low or medium
//! risk (issue 39 item 8: a high or critical one is approved in its review,
//! for once or longer), it offers *Approve for 1 hour*: the
//! call, and a standing approval for that agent to call that tool for an
//! hour — exactly the agent and tool the notification names. Checked again
//! at action time ([`approve_hour_from_notification`]).

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use interlock_core::RiskLevel;
use interlock_host::Decision;
use interlock_trust::{EventType, SubjectKind};
use tokio::sync::broadcast::error::RecvError;
use tokio::sync::mpsc;

use crate::backend::{Backend, DecideError, Held};
use interlock_gateway::reviewer::route::route;

/// Bursts: more than `BURST` new notifications within `WINDOW` are grouped.
pub const BURST: usize = 3;
pub const WINDOW: Duration = Duration::from_secs(2);

const BUS_NAME: &str = "org.freedesktop.Notifications";
const OBJECT_PATH: &str = "/org/freedesktop/Notifications";

/// What a shown notification stands for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    Item(Held),
    /// A summary of a burst: *Review* opens the inbox.
    Summary(usize),
}

/// What to show now.
#[derive(Debug, PartialEq, Eq)]
pub enum Show {
    Item {
        item: Held,
        replaces: Option<u32>,
    },
    /// `total` counts the items of an open summary that this one replaces.
    Summary {
        items: Vec<Held>,
        total: usize,
        replaces: Option<u32>,
    },
}

type Key = (SubjectKind, String);

fn key(h: &Held) -> Key {
    (h.kind, h.subject.clone())
}

/// Folding and grouping, with time passed in.
#[derive(Debug)]
pub struct Folder {
    window: Duration,
    burst: usize,
    /// When recent notifications (items and summaries) were raised.
    recent: VecDeque<Instant>,
    /// Open notification per item.
    open: HashMap<Key, u32>,
    /// What each open notification stands for.
    targets: HashMap<u32, Target>,
    /// Items held back during a burst, one per item, oldest first.
    pending: Vec<Held>,
    /// When the pending items are shown as a summary.
    due: Option<Instant>,
    /// Until when a burst is still going on (new items keep being summarized).
    quiet_until: Option<Instant>,
    summary: Option<u32>,
}

impl Folder {
    pub fn new(window: Duration, burst: usize) -> Folder {
        Folder {
            window,
            burst,
            recent: VecDeque::new(),
            open: HashMap::new(),
            targets: HashMap::new(),
            pending: Vec::new(),
            due: None,
            quiet_until: None,
            summary: None,
        }
    }

    /// A new or changed held item.
    pub fn offer(&mut self, now: Instant, item: Held) -> Option<Show> {
        let k = key(&item);
        if let Some(p) = self.pending.iter_mut().find(|p| key(p) == k) {
            *p = item; // folded into the coming summary
            return None;
        }
        if let Some(&id) = self.open.get(&k) {
            // The same item again (a new revision, a new drift): replace its
            // notification, so Approve signs the newest hash.
            return Some(Show::Item {
                item,
                replaces: Some(id),
            });
        }
        while self
            .recent
            .front()
            .is_some_and(|t| now.duration_since(*t) >= self.window)
        {
            self.recent.pop_front();
        }
        if self.recent.len() >= self.burst || self.quiet_until.is_some_and(|q| now < q) {
            self.pending.push(item);
            self.due.get_or_insert(now + self.window);
            return None;
        }
        self.recent.push_back(now);
        Some(Show::Item {
            item,
            replaces: None,
        })
    }

    /// When [`Folder::flush`] has something to show.
    pub fn due(&self) -> Option<Instant> {
        self.due
    }

    /// The summary of the held-back items, once due.
    pub fn flush(&mut self, now: Instant) -> Option<Show> {
        if self.due.is_none_or(|d| now < d) {
            return None;
        }
        self.due = None;
        if self.pending.is_empty() {
            return None;
        }
        self.recent.push_back(now);
        // While items keep coming, keep summarizing them.
        self.quiet_until = Some(now + self.window);
        let before = match self.summary.and_then(|id| self.targets.get(&id)) {
            Some(Target::Summary(n)) => *n,
            _ => 0,
        };
        let items = std::mem::take(&mut self.pending);
        Some(Show::Summary {
            total: before + items.len(),
            items,
            replaces: self.summary,
        })
    }

    /// Records the id the server gave a notification.
    pub fn shown(&mut self, target: Target, id: u32) {
        match &target {
            Target::Item(h) => {
                if let Some(old) = self.open.insert(key(h), id)
                    && old != id
                {
                    self.targets.remove(&old);
                }
            }
            Target::Summary(_) => {
                if let Some(old) = self.summary.replace(id)
                    && old != id
                {
                    self.targets.remove(&old);
                }
            }
        }
        self.targets.insert(id, target);
    }

    /// What notification `id` stands for, if it is one of ours and open.
    pub fn target(&self, id: u32) -> Option<&Target> {
        self.targets.get(&id)
    }

    /// The server closed notification `id`.
    pub fn closed(&mut self, id: u32) {
        match self.targets.remove(&id) {
            Some(Target::Item(h)) => {
                self.open.remove(&key(&h));
            }
            Some(Target::Summary(_)) => self.summary = None,
            None => {}
        }
    }

    /// The item was decided (here or elsewhere): drop it from the coming
    /// summary, and return its open notification to close.
    pub fn resolved(&mut self, kind: SubjectKind, subject: &str) -> Option<u32> {
        self.pending
            .retain(|p| !(p.kind == kind && p.subject == subject));
        if self.pending.is_empty() {
            self.due = None;
        }
        let k = self
            .open
            .keys()
            .find(|(k, s)| *k == kind && s == subject)
            .cloned()?;
        let id = self.open.remove(&k)?;
        self.targets.remove(&id);
        Some(id)
    }
}

/// A signal from the notification server.
#[derive(Debug)]
pub enum Signal {
    Action(u32, String),
    Closed(u32),
}

/// What the notifier needs from the shell (the window lives there).
pub trait Shell: Send + Sync + 'static {
    /// Shows and focuses the window on `route` (`#/plans/<id>`, `#/servers/<name>`, `#/inbox`).
    fn open(&self, route: &str);
}

/// One line of untrusted text for a notification: no control characters, no
/// markup (servers may interpret `<b>` and `&amp;`), at most `max` characters.
pub fn one_line(s: &str, max: usize) -> String {
    let mut out = String::new();
    for (n, c) in s
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .enumerate()
    {
        if n == max {
            out.push('…');
            break;
        }
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            c => out.push(c),
        }
    }
    out
}

/// The notification's title and body for an item.
pub fn text(h: &Held) -> (String, String) {
    let title = match h.event {
        EventType::PlanProposed => "Plan held for review".to_owned(),
        EventType::ServerPending => format!("New MCP server: {}", one_line(&h.subject, 60)),
        EventType::ServerQuarantined => {
            format!("MCP server quarantined: {}", one_line(&h.subject, 60))
        }
        _ => format!("MCP server changed: {}", one_line(&h.subject, 60)),
    };
    let body = format!(
        "{}\nRisk: {}",
        one_line(&h.title, 200),
        one_line(&h.risk, 20)
    );
    (title, body)
}

fn summary_text(items: &[Held], total: usize) -> (String, String) {
    let title = format!(
        "{total} more item{} wait for review",
        if total == 1 { "" } else { "s" }
    );
    let mut lines: Vec<String> = items
        .iter()
        .rev()
        .take(3)
        .map(|h| one_line(&h.title, 80))
        .collect();
    if items.len() > 3 {
        lines.push(format!("…and {} more", items.len() - 3));
    }
    (title, lines.join("\n"))
}

/// Whether a notification may approve: only a plan, and only of low or medium
/// risk. A server's surface (tool descriptions an upstream wrote) and a high or
/// critical plan are approved in their review, where what is signed is shown;
/// an unknown label is treated as the highest.
pub fn may_approve_from_notification(kind: SubjectKind, risk: Option<RiskLevel>) -> bool {
    kind == SubjectKind::Plan && matches!(risk, Some(RiskLevel::Low | RiskLevel::Medium))
}

/// The actions (id, label) a held item's notification offers.
pub fn item_actions(h: &Held) -> Vec<(&'static str, &'static str)> {
    let mut actions = Vec::with_capacity(4);
    if may_approve_from_notification(h.kind, RiskLevel::from_name(&h.risk)) {
        actions.push(("approve", "Approve"));
    }
    // `grantable` carries Approve's risk rule for the call itself (issue 39
    // item 8; `interlock_trust::scopes::grantable_from_notification`).
    if h.kind == SubjectKind::Plan && h.grantable {
        actions.push(("approve_hour", "Approve for 1 hour"));
    }
    actions.extend([
        ("reject", "Reject"),
        ("review", "Review"),
        ("default", "Review"),
    ]);
    actions
}

/// A notification's *Approve*: signs `item.hash` only if the plan's risk, read
/// from the store now (not the notification's, which an event carried), still
/// allows approving from a notification. Otherwise nothing is signed and the
/// error (`review_only`) says to approve it in its review.
pub async fn approve_from_notification(
    backend: &Backend,
    item: &Held,
) -> Result<serde_json::Value, DecideError> {
    let risk = match item.kind {
        SubjectKind::Plan => Some(backend.plan_risk_now(&item.subject, &item.hash).await?),
        _ => None,
    };
    if !may_approve_from_notification(item.kind, risk) {
        let what = match (item.kind, risk) {
            (SubjectKind::Plan, Some(r)) => format!("`{}` is a {r}-risk plan", item.subject),
            (SubjectKind::Plan, None) => format!("`{}` has no known risk", item.subject),
            _ => format!("`{}` is an MCP server", item.subject),
        };
        return Err(DecideError {
            code: "review_only",
            message: format!(
                "{what}: approve it in its review, where what is signed is shown \
                 (a notification approves only low and medium plans); nothing was signed"
            ),
        });
    }
    backend
        .decide(
            item.kind,
            &item.subject,
            &item.hash,
            Decision::Approve,
            "approved from a desktop notification",
        )
        .await
}

/// A notification's *Approve for 1 hour*: only for a held call this app's
/// gateway may grant from a notification — held for its risk, which is low
/// or medium (issue 39 item 8) — asked again now; then the call at exactly
/// `item.hash` and the hour's standing approval, both signed.
pub async fn approve_hour_from_notification(
    backend: &Backend,
    item: &Held,
) -> Result<serde_json::Value, DecideError> {
    if item.kind != SubjectKind::Plan || !backend.held_call_grantable(&item.subject) {
        return Err(DecideError {
            code: "review_only",
            message: format!(
                "`{}` is not a held call this app may approve for an hour from a notification: approve it in its review; nothing was signed",
                item.subject
            ),
        });
    }
    backend
        .approve_held(
            &item.subject,
            &item.hash,
            interlock_host::Scope::Hour,
            "approved for 1 hour from a desktop notification",
        )
        .await
}

/// Notification settings fixed at start.
pub struct Options {
    /// A PNG path for the notifications' icon.
    pub icon: Option<String>,
}

/// Listens for the notification server's signals and forwards ours.
pub async fn listen(tx: mpsc::UnboundedSender<Signal>) -> zbus::Result<()> {
    use futures_util::StreamExt as _;
    let conn = zbus::Connection::session().await?;
    let dbus = zbus::fdo::DBusProxy::new(&conn).await?;
    let rule = zbus::MatchRule::builder()
        .msg_type(zbus::message::Type::Signal)
        .interface(BUS_NAME)
        .path(OBJECT_PATH)
        .build()?;
    let mut stream = zbus::MessageStream::for_match_rule(rule, &conn, None).await?;
    while let Some(msg) = stream.next().await {
        let Ok(msg) = msg else { continue };
        let header = msg.header();
        let member = header.member().map(|m| m.as_str().to_owned());
        // Only the notification server's signals count.
        let owner = dbus
            .get_name_owner(BUS_NAME.try_into().expect("a valid bus name"))
            .await
            .ok();
        let from_server = match (header.sender(), &owner) {
            (Some(s), Some(o)) => s.as_str() == o.as_str(),
            _ => false,
        };
        if !from_server {
            continue;
        }
        let signal = match member.as_deref() {
            Some("ActionInvoked") => msg
                .body()
                .deserialize::<(u32, String)>()
                .ok()
                .map(|(id, a)| Signal::Action(id, a)),
            Some("NotificationClosed") => msg
                .body()
                .deserialize::<(u32, u32)>()
                .ok()
                .map(|(id, _)| Signal::Closed(id)),
            _ => None,
        };
        if let Some(s) = signal
            && tx.send(s).is_err()
        {
            break;
        }
    }
    Ok(())
}

/// Closes notification `id` (the item was decided elsewhere).
async fn close(id: u32) {
    if let Ok(conn) = zbus::Connection::session().await {
        let _ = conn
            .call_method(
                Some(BUS_NAME),
                OBJECT_PATH,
                Some(BUS_NAME),
                "CloseNotification",
                &(id,),
            )
            .await;
    }
}

fn base(options: &Options) -> notify_rust::Notification {
    let mut n = notify_rust::Notification::new();
    n.appname("Interlock");
    if let Some(icon) = &options.icon {
        n.icon(icon);
    }
    n
}

async fn show(options: &Options, what: &Show) -> Result<u32, String> {
    let mut n = base(options);
    match what {
        Show::Item { item, replaces } => {
            let (title, body) = text(item);
            n.summary(&title).body(&body);
            for (id, label) in item_actions(item) {
                n.action(id, label);
            }
            n.hint(notify_rust::Hint::Category("x-interlock.held".to_owned()));
            if matches!(item.risk.as_str(), "high" | "critical") {
                n.urgency(notify_rust::Urgency::Critical);
            }
            if let Some(id) = replaces {
                n.id(*id);
            }
        }
        Show::Summary {
            items,
            total,
            replaces,
        } => {
            let (title, body) = summary_text(items, *total);
            n.summary(&title).body(&body);
            n.action("review", "Open inbox")
                .action("default", "Open inbox");
            if let Some(id) = replaces {
                n.id(*id);
            }
        }
    }
    n.show_async()
        .await
        .map(|h| h.id())
        .map_err(|e| e.to_string())
}

/// A short notice with no actions (a decision's outcome, a refusal).
pub async fn notice(options: &Options, title: &str, body: &str) {
    let mut n = base(options);
    n.summary(title)
        .body(body)
        .hint(notify_rust::Hint::Transient(true))
        .timeout(notify_rust::Timeout::Milliseconds(6000));
    if let Err(e) = n.show_async().await {
        eprintln!("interlock-desktop: notification failed: {e}");
    }
}

/// Runs until the gateway's event bus closes.
pub async fn run(
    backend: Arc<Backend>,
    shell: Arc<dyn Shell>,
    paused: Arc<AtomicBool>,
    options: Arc<Options>,
) {
    let mut events = backend.events().subscribe();
    let (tx, mut signals) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        if let Err(e) = listen(tx).await {
            eprintln!("interlock-desktop: cannot listen for notification actions: {e}");
        }
    });
    let mut folder = Folder::new(WINDOW, BURST);
    loop {
        let due = folder.due();
        tokio::select! {
            e = events.recv() => match e {
                Ok(e) => {
                    if let Some(held) = backend.held_by(&e).await {
                        if paused.load(Ordering::Relaxed) {
                            continue;
                        }
                        if let Some(s) = folder.offer(Instant::now(), held) {
                            display(&options, &mut folder, s).await;
                        }
                    } else if e.kind.settles()
                        && let Some(id) = folder.resolved(e.subject_kind, &e.subject)
                    {
                        close(id).await;
                    }
                }
                Err(RecvError::Lagged(n)) => {
                    eprintln!("interlock-desktop: {n} events missed (the tray count is recomputed)");
                }
                Err(RecvError::Closed) => return,
            },
            Some(s) = signals.recv() => match s {
                Signal::Closed(id) => folder.closed(id),
                Signal::Action(id, action) => {
                    let Some(target) = folder.target(id).cloned() else { continue };
                    act(&backend, &shell, &options, target, &action);
                }
            },
            _ = sleep_until(due), if due.is_some() => {
                if let Some(s) = folder.flush(Instant::now()) {
                    display(&options, &mut folder, s).await;
                }
            }
        }
    }
}

async fn sleep_until(t: Option<Instant>) {
    if let Some(t) = t {
        tokio::time::sleep_until(t.into()).await;
    }
}

async fn display(options: &Options, folder: &mut Folder, s: Show) {
    match show(options, &s).await {
        Ok(id) => {
            let target = match s {
                Show::Item { item, .. } => Target::Item(item),
                Show::Summary { total, .. } => Target::Summary(total),
            };
            folder.shown(target, id);
        }
        Err(e) => eprintln!("interlock-desktop: notification failed: {e}"),
    }
}

/// Acts on a notification's action, off the notifier's loop.
fn act(
    backend: &Arc<Backend>,
    shell: &Arc<dyn Shell>,
    options: &Arc<Options>,
    target: Target,
    action: &str,
) {
    let item = match target {
        Target::Summary(_) => {
            if matches!(action, "review" | "default") {
                shell.open("#/inbox");
            }
            return;
        }
        Target::Item(item) => item,
    };
    let (decision, for_an_hour) = match action {
        "approve" => (Decision::Approve, false),
        "approve_hour" => (Decision::Approve, true),
        "reject" => (Decision::Reject, false),
        "review" | "default" => {
            shell.open(&route(item.kind, &item.subject));
            return;
        }
        _ => return,
    };
    let (backend, shell, options) = (Arc::clone(backend), Arc::clone(shell), Arc::clone(options));
    tokio::spawn(async move {
        let reason = match decision {
            Decision::Approve => "approved from a desktop notification",
            Decision::Reject => "rejected from a desktop notification",
        };
        let what = one_line(&item.title, 120);
        let outcome = match decision {
            Decision::Approve if for_an_hour => {
                approve_hour_from_notification(&backend, &item).await
            }
            Decision::Approve => approve_from_notification(&backend, &item).await,
            Decision::Reject => {
                backend
                    .decide(item.kind, &item.subject, &item.hash, decision, reason)
                    .await
            }
        };
        match outcome {
            Ok(outcome) => {
                let status = outcome["status"].as_str().unwrap_or("").to_owned();
                eprintln!(
                    "interlock-desktop: {} {} {} at {} → {status}",
                    decision.name(),
                    item.kind,
                    item.subject,
                    item.hash
                );
                let title = match decision {
                    Decision::Approve if for_an_hour => "Approved for 1 hour",
                    Decision::Approve => "Approved",
                    Decision::Reject => "Rejected",
                };
                notice(&options, title, &format!("{what}\nNow {status}")).await;
            }
            Err(e) => {
                eprintln!(
                    "interlock-desktop: {} {} {} refused: {e}",
                    decision.name(),
                    item.kind,
                    item.subject
                );
                // Nothing was signed: show the item as it is now.
                shell.open(&route(item.kind, &item.subject));
                let title = match e.code {
                    "changed" => "Changed since the notification — review it again",
                    "review_only" => "Approve it in its review",
                    _ => "Not recorded",
                };
                notice(&options, title, &one_line(&e.message, 200)).await;
            }
        }
    });
}

/// Whether notifications are paused (the tray's "Pause notifications").
pub fn new_paused() -> Arc<AtomicBool> {
    Arc::new(AtomicBool::new(false))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(id: &str, hash: &str) -> Held {
        Held {
            kind: SubjectKind::Plan,
            subject: id.to_owned(),
            hash: hash.to_owned(),
            event: EventType::PlanProposed,
            title: format!("Plan {id}"),
            risk: "medium".to_owned(),
            grantable: false,
        }
    }

    fn shown_item(s: Option<Show>) -> (Held, Option<u32>) {
        match s {
            Some(Show::Item { item, replaces }) => (item, replaces),
            other => panic!("expected an item, got {other:?}"),
        }
    }

    #[test]
    fn each_item_is_shown_and_a_newer_revision_replaces_it() {
        let t = Instant::now();
        let mut f = Folder::new(WINDOW, BURST);
        let (a, r) = shown_item(f.offer(t, plan("a", "h1")));
        assert_eq!(r, None);
        f.shown(Target::Item(a), 7);
        // The same plan again, with a new hash: the same notification, new target.
        let (a2, r) = shown_item(f.offer(t + Duration::from_millis(10), plan("a", "h2")));
        assert_eq!((a2.hash.as_str(), r), ("h2", Some(7)));
        f.shown(Target::Item(a2), 7);
        assert_eq!(f.target(7), Some(&Target::Item(plan("a", "h2"))));
        assert_eq!(f.resolved(SubjectKind::Plan, "a"), Some(7));
        assert_eq!(f.target(7), None);
    }

    #[test]
    fn bursts_are_grouped_into_one_summary() {
        let t = Instant::now();
        let mut f = Folder::new(WINDOW, BURST);
        for (n, id) in ["a", "b", "c"].iter().enumerate() {
            let (item, _) = shown_item(f.offer(t, plan(id, "h")));
            f.shown(Target::Item(item), n as u32 + 1);
        }
        for id in ["d", "e", "f", "e"] {
            assert_eq!(f.offer(t + Duration::from_millis(100), plan(id, "h")), None);
        }
        assert_eq!(f.flush(t + Duration::from_millis(500)), None, "not due yet");
        let due = f.due().unwrap();
        match f.flush(due) {
            Some(Show::Summary {
                items,
                total,
                replaces,
            }) => {
                let ids: Vec<_> = items.iter().map(|h| h.subject.as_str()).collect();
                assert_eq!(ids, ["d", "e", "f"], "folded by item");
                assert_eq!((total, replaces), (3, None));
            }
            other => panic!("expected a summary, got {other:?}"),
        }
        f.shown(Target::Summary(3), 9);
        // The burst goes on: the next items join the (open) summary.
        let next = due + Duration::from_millis(500);
        assert_eq!(f.offer(next, plan("g", "h")), None);
        match f.flush(f.due().unwrap()) {
            Some(Show::Summary {
                total, replaces, ..
            }) => assert_eq!((total, replaces), (4, Some(9))),
            other => panic!("expected a summary, got {other:?}"),
        }
        f.shown(Target::Summary(4), 9);
        // Once it is over, items are shown one by one again.
        let later = t + Duration::from_secs(10);
        assert!(matches!(
            f.offer(later, plan("h", "h")),
            Some(Show::Item { .. })
        ));
    }

    #[test]
    fn a_decided_item_leaves_the_coming_summary() {
        let t = Instant::now();
        let mut f = Folder::new(WINDOW, 1);
        let (a, _) = shown_item(f.offer(t, plan("a", "h")));
        f.shown(Target::Item(a), 1);
        assert_eq!(f.offer(t, plan("b", "h")), None);
        assert_eq!(f.resolved(SubjectKind::Plan, "b"), None);
        assert_eq!(f.due(), None);
        assert_eq!(f.flush(t + WINDOW), None);
    }

    #[test]
    fn closed_notifications_are_forgotten() {
        let t = Instant::now();
        let mut f = Folder::new(WINDOW, BURST);
        let (a, _) = shown_item(f.offer(t, plan("a", "h")));
        f.shown(Target::Item(a), 3);
        f.closed(3);
        assert_eq!(f.target(3), None);
        let (_, r) = shown_item(f.offer(t + WINDOW, plan("a", "h")));
        assert_eq!(r, None, "a closed notification is not replaced");
    }

    fn held(kind: SubjectKind, risk: &str) -> Held {
        Held {
            kind,
            risk: risk.to_owned(),
            ..plan("a", "h")
        }
    }

    fn ids(h: &Held) -> Vec<&'static str> {
        item_actions(h).into_iter().map(|(id, _)| id).collect()
    }

    #[test]
    fn a_held_call_held_for_its_risk_offers_approve_for_an_hour_only() {
        // `grantable`: held by this app's gateway for a risk of low or medium
        // (`interlock_trust::scopes::grantable_from_notification`); the plan
        // itself is high risk, as every held call's is.
        let call = Held {
            grantable: true,
            ..held(SubjectKind::Plan, "high")
        };
        assert_eq!(
            ids(&call),
            ["approve_hour", "reject", "review", "default"],
            "a held call: no plain Approve, but an hour's grant"
        );
        // Held by inspection (or before a restart): review only.
        assert_eq!(
            ids(&held(SubjectKind::Plan, "high")),
            ["reject", "review", "default"]
        );
        // A server is never granted from a notification, whatever it says.
        let server = Held {
            grantable: true,
            ..held(SubjectKind::Server, "low")
        };
        assert_eq!(ids(&server), ["reject", "review", "default"]);
    }

    #[test]
    fn regression_notification_offers_approve_only_for_low_and_medium_plans() {
        for risk in ["low", "medium"] {
            let h = held(SubjectKind::Plan, risk);
            assert_eq!(
                ids(&h),
                ["approve", "reject", "review", "default"],
                "{risk}"
            );
            assert_eq!(item_actions(&h)[0], ("approve", "Approve"));
        }
        // High and critical plans, every server surface, and a label this app
        // does not know: Review (and Reject), no Approve.
        for h in [
            held(SubjectKind::Plan, "high"),
            held(SubjectKind::Plan, "critical"),
            held(SubjectKind::Plan, "unheard-of"),
            held(SubjectKind::Server, "low"),
            held(SubjectKind::Server, "high"),
        ] {
            assert_eq!(ids(&h), ["reject", "review", "default"], "{h:?}");
        }
    }

    /// A real backend (the in-process gateway on a fresh data directory, the
    /// approver key in the keychain: run under `scripts/with-keyring`), real
    /// plans proposed to its engine, and an `approve` action arriving for
    /// items whose notification never offered it.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn regression_notification_approve_is_refused_for_a_high_risk_plan_or_a_server() {
        let dir =
            std::env::temp_dir().join(format!("interlock-notify-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let started = crate::backend::start(crate::backend::Settings {
            data_dir: Some(dir.clone()),
            listen: Some("127.0.0.1:0".parse().unwrap()),
            ui_dir: None,
            team_url: None,
            team_token: None,
            team_audience: None,
        })
        .await
        .expect("a keychain (scripts/with-keyring)");
        let backend = started.backend;
        let engine = backend.local_gateway().unwrap().engine();
        let doc = |id: &str, stage: serde_json::Value| {
            let doc = serde_json::json!({
                "schema_version": "interlock.plan/v1",
                "plan_id": id,
                "title": format!("Routine cleanup {id}"),
                "created_at": "2026-11-30T10:00:00Z",
                "description": "notification test",
                "proposer": "agent:notify-test",
                "body": {"stages": [stage]},
            });
            interlock_core::canon::from_serde_json(&doc).unwrap()
        };
        let target = dir.join("workspace").join("notes.txt");
        let target = target.to_str().unwrap();
        // `fs.ensure_absent` is a high-risk action; `fs.write_file` a medium one.
        let high = engine
            .propose(&doc(
                "high-1",
                serde_json::json!({
                    "id": "rm", "action": "fs.ensure_absent", "target": target,
                    "preconditions": [{"probe": "fs.path_exists"}],
                    "verify": [{"probe": "fs.path_absent"}], "rollback": "Restore it from backup.",
                }),
            ))
            .await
            .unwrap();
        let medium = engine
            .propose(&doc(
                "medium-1",
                serde_json::json!({
                    "id": "write", "action": "fs.write_file", "target": target,
                    "params": {"content": "v1"},
                    "preconditions": [{"probe": "fs.path_absent"}],
                    "verify": [{"probe": "fs.file_contains", "params": {"text": "v1"}}],
                    "rollback": "Delete it.",
                }),
            ))
            .await
            .unwrap();
        let status = async |id: &str| engine.plan(id).await.unwrap().status.as_str().to_owned();

        // The event (and so the notification) claims `low`: the store says high.
        let mut lying = held(SubjectKind::Plan, "low");
        lying.subject = "high-1".to_owned();
        lying.hash = high.plan_hash.to_string();
        let err = approve_from_notification(&backend, &lying)
            .await
            .unwrap_err();
        assert_eq!(err.code, "review_only", "{err}");
        assert!(err.message.contains("high-risk plan"), "{err}");
        assert_eq!(status("high-1").await, "PROPOSED");
        assert!(
            engine
                .store()
                .approvals_for("high-1", 1)
                .await
                .unwrap()
                .is_empty(),
            "nothing signed"
        );

        // A server, whatever its notification said: refused before any lookup.
        let mut server = held(SubjectKind::Server, "low");
        server.subject = "files".to_owned();
        let err = approve_from_notification(&backend, &server)
            .await
            .unwrap_err();
        assert_eq!(err.code, "review_only", "{err}");
        assert!(err.message.contains("MCP server"), "{err}");

        // A medium plan at its hash is approved from its notification.
        let mut fine = held(SubjectKind::Plan, "medium");
        fine.subject = "medium-1".to_owned();
        fine.hash = medium.plan_hash.to_string();
        let ok = approve_from_notification(&backend, &fine).await.unwrap();
        assert_eq!(ok["status"], "APPROVED", "{ok}");
        // At a stale hash it is not.
        fine.hash = format!("sha256:{}", "0".repeat(64));
        let err = approve_from_notification(&backend, &fine)
            .await
            .unwrap_err();
        assert_eq!(err.code, "changed", "{err}");

        backend.shutdown().await;
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn text_is_one_line_without_markup() {
        assert_eq!(one_line("a<b>&\nc", 100), "a&lt;b&gt;&amp; c");
        assert_eq!(one_line("abcdef", 3), "abc…");
        let (t, b) = text(&plan("a", "h"));
        assert_eq!(t, "Plan held for review");
        assert_eq!(b, "Plan a\nRisk: medium");
    }
}
