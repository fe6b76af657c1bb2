//! [`audit`]: recompute the log from storage alone and name what does not hold.

use std::fmt;

use ed25519_dalek::VerifyingKey;
use interlock_merkle::{Checkpoint, Frontier, NoteVerifier, SignedNote, TILE_WIDTH, leaf_hash};
use std::collections::BTreeSet;

use interlock_store::{Snapshot, Store};

use crate::error::LogError;
use crate::log::{META_ORIGIN, META_VKEY};

/// Leaves are read in pages of this many indices, so an audit of a large log
/// does not hold every entry's bytes at once (only every leaf hash).
const PAGE: u64 = 8192;

/// One thing the audit found wrong. Each names the entries or checkpoint
/// concerned so a human can go and look.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AuditProblem {
    /// The log's origin or verifier key is missing from the database, or unusable.
    LogIdentity(String),
    /// The verifier key recorded in the database is not the trusted key.
    UntrustedKey {
        /// Recorded in the database.
        stored: String,
        /// The key the auditor trusts.
        trusted: String,
    },
    /// The stored leaf hash is not the hash of the stored data: the entry
    /// was edited.
    EditedEntry {
        /// Its index.
        index: u64,
    },
    /// The entry's `seq` is not its position: it was moved or renumbered.
    ReorderedEntry {
        /// Where it is stored.
        index: u64,
        /// The `seq` it carries (`None` if it has none).
        seq: Option<String>,
    },
    /// The stored bytes are not a canonical JSON object.
    MalformedEntry {
        /// Its index.
        index: u64,
        /// Why.
        reason: String,
    },
    /// Indices `from..to` are missing: entries were dropped.
    MissingEntries {
        /// First missing index.
        from: u64,
        /// One past the last missing index.
        to: u64,
    },
    /// A checkpoint's signature does not verify with the log key (its note
    /// was edited, or it was not signed by this log).
    BadCheckpointSignature {
        /// The stored size.
        size: u64,
        /// Why.
        reason: String,
    },
    /// A checkpoint row disagrees with its own signed note (the size, root
    /// or origin columns were edited).
    CheckpointRowMismatch {
        /// The stored size.
        size: u64,
        /// What differs.
        reason: String,
    },
    /// The recomputed tree does not reproduce a signed checkpoint: some of
    /// entries `from..size` were edited, reordered or dropped since it was
    /// signed. `also` later checkpoints fail the same way.
    EntriesDoNotMatch {
        /// The size of the last checkpoint below that still matched (or 0).
        from: u64,
        /// The checkpoint's size.
        size: u64,
        /// How many later checkpoints also fail to match (not listed one by one).
        also: u64,
    },
    /// A validly signed checkpoint whose root is not a prefix of the tree a
    /// later, matching checkpoint commits to: the log key signed two
    /// different histories.
    Fork {
        /// The forked checkpoint's size.
        size: u64,
        /// The later checkpoint it contradicts.
        later: u64,
    },
    /// A checkpoint signs more entries than are stored.
    CheckpointBeyondLog {
        /// Its size.
        size: u64,
        /// Entries stored.
        entries: u64,
    },
    /// Entries `from..to` are covered by no signed checkpoint although they
    /// were appended more than [`PENDING_SECS`] ago (a writer signs one within
    /// its `checkpoint_interval`, and on reopening adopts and records what a
    /// stopped writer left), so they were added outside the log.
    UnsignedEntries {
        /// First unsigned index.
        from: u64,
        /// One past the last.
        to: u64,
    },
    /// A stored tile root (`log_tiles`) is not the root of the entries it
    /// covers. Tile roots are a cache the log checks before it uses them, so
    /// nothing was believed from it; but nothing the log writes makes one
    /// wrong: the database was edited.
    WrongTileRoot {
        /// The tile (entries `tile·256 .. (tile+1)·256`).
        tile: u64,
    },
    /// A key in the approver registry that no `approver.registered` leaf
    /// records for that identity: it was added (or its identity changed)
    /// outside the log, and the engine does not trust it.
    UnregisteredApprover {
        /// The key's id.
        key_id: String,
        /// The identity its row names.
        identity: String,
    },
}

impl fmt::Display for AuditProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AuditProblem::LogIdentity(m) => write!(f, "log identity: {m}"),
            AuditProblem::UntrustedKey { stored, trusted } => write!(
                f,
                "the database's log key {stored} is not the trusted key {trusted} (pass the log's own key with --log-key if this database belongs to another machine's log)"
            ),
            AuditProblem::EditedEntry { index } => write!(
                f,
                "entry {index} was edited: its data does not hash to its stored leaf hash"
            ),
            AuditProblem::ReorderedEntry {
                index,
                seq: Some(seq),
            } => write!(
                f,
                "entry {index} carries seq {seq}: it was reordered or renumbered"
            ),
            AuditProblem::ReorderedEntry { index, seq: None } => {
                write!(f, "entry {index} has no seq: it was rewritten")
            }
            AuditProblem::MalformedEntry { index, reason } => {
                write!(f, "entry {index} is malformed: {reason}")
            }
            AuditProblem::MissingEntries { from, to } if to - from == 1 => {
                write!(f, "entry {from} is missing (dropped)")
            }
            AuditProblem::MissingEntries { from, to } => {
                write!(f, "entries {from}..{} are missing (dropped)", to - 1)
            }
            AuditProblem::BadCheckpointSignature { size, reason } => write!(
                f,
                "the checkpoint at size {size} does not verify with the log key: {reason}"
            ),
            AuditProblem::CheckpointRowMismatch { size, reason } => write!(
                f,
                "the checkpoint row at size {size} disagrees with its signed note: {reason}"
            ),
            AuditProblem::EntriesDoNotMatch { from, size, also } => {
                write!(
                    f,
                    "entries {from}..{} do not match the checkpoint signed at size {size}",
                    size.saturating_sub(1)
                )?;
                if *also > 0 {
                    write!(f, " (nor do the {also} checkpoints signed after it)")?;
                }
                Ok(())
            }
            AuditProblem::Fork { size, later } => write!(
                f,
                "fork: the checkpoint signed at size {size} is not a prefix of the tree signed at size {later}"
            ),
            AuditProblem::CheckpointBeyondLog { size, entries } => write!(
                f,
                "the checkpoint signed at size {size} covers {} that {} not stored (dropped)",
                range(*entries, *size),
                if size - entries == 1 { "is" } else { "are" }
            ),
            AuditProblem::WrongTileRoot { tile } => write!(
                f,
                "the stored root of tile {tile} is not the root of {} (a cache the log checks and rebuilds; the database was edited)",
                range(tile * TILE_WIDTH, (tile + 1) * TILE_WIDTH)
            ),
            AuditProblem::UnregisteredApprover { key_id, identity } => write!(
                f,
                "approver key {key_id} ({identity}) has no approver.registered entry in the log: it was added or changed outside it"
            ),
            AuditProblem::UnsignedEntries { from, to } => write!(
                f,
                "{} not covered by any signed checkpoint (added outside the log)",
                match to - from {
                    1 => format!("{} is", range(*from, *to)),
                    _ => format!("{} are", range(*from, *to)),
                }
            ),
        }
    }
}

/// `entry N` or `entries A..B` (inclusive, as people read ranges) for `from..to`.
fn range(from: u64, to: u64) -> String {
    if to - from == 1 {
        format!("entry {from}")
    } else {
        format!("entries {from}..{}", to - 1)
    }
}

/// Entries appended within this many seconds of the audit may lack a
/// checkpoint without that being a problem: a running writer signs one at
/// most `checkpoint_interval` (100 ms by default) after it appends.
pub const PENDING_SECS: i64 = 5;

/// What [`audit`] found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AuditReport {
    /// Entry rows read.
    pub entries: u64,
    /// Checkpoints read.
    pub checkpoints: u64,
    /// Entries `from..to` at the end of the log that no checkpoint signs yet,
    /// all appended in the last [`PENDING_SECS`]: a running writer's newest
    /// entries, not a problem. (Older unsigned entries are
    /// [`AuditProblem::UnsignedEntries`].)
    pub pending: Option<(u64, u64)>,
    /// Everything wrong, in the order found (entries, then checkpoints).
    pub problems: Vec<AuditProblem>,
}

impl AuditReport {
    /// True if nothing is wrong.
    pub fn is_ok(&self) -> bool {
        self.problems.is_empty()
    }
}

impl fmt::Display for AuditReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_ok() {
            writeln!(
                f,
                "log OK: {} entries, {} checkpoints verified",
                self.entries, self.checkpoints
            )?;
            if let Some((from, to)) = self.pending {
                writeln!(
                    f,
                    "  ({} appended in the last {PENDING_SECS} s, not yet signed by a checkpoint)",
                    range(from, to)
                )?;
            }
            return Ok(());
        }
        writeln!(
            f,
            "log FAILED audit: {} problem(s) in {} entries and {} checkpoints",
            self.problems.len(),
            self.entries,
            self.checkpoints
        )?;
        for p in &self.problems {
            writeln!(f, "  - {p}")?;
        }
        Ok(())
    }
}

/// Recomputes the log in `store` from its rows and checks every entry, every
/// checkpoint and the approver registry (each key must be backed by an
/// `approver.registered` entry for its identity). Checkpoint signatures are
/// checked with `trusted_log_key` if given (an auditor's own copy of the key,
/// pinned outside the database), else with the key recorded in the database
/// (which only proves self-consistency).
///
/// Everything is read from one [`Snapshot`](interlock_store::Snapshot) of the
/// database, so appends by a running gateway meanwhile are simply not seen
/// (never reported as dropped or unsigned entries).
///
/// Errors only if the database cannot be read; everything wrong *in* it is
/// an [`AuditProblem`] in the report.
///
/// Unsigned entries are judged by waiting, not only by the clock. Whether
/// an unsigned tail is a running writer's newest entries was told by their
/// `appended_at` against the auditor's wall clock alone; a clock stepped
/// forward by more than [`PENDING_SECS`] between an append and the audit
/// (an NTP step, a laptop's resume) made a running gateway's newest entry
/// read as "added outside the log" (issue 44's clock campaign found it). So
/// a tail that would be reported is watched for up to [`PENDING_SECS`] on
/// the monotonic clock: a running writer signs it within its checkpoint
/// interval, and the log is audited again; only what stays unsigned is
/// reported.
pub async fn audit(
    store: &Store,
    trusted_log_key: Option<VerifyingKey>,
) -> Result<AuditReport, LogError> {
    let report = audit_once(store, trusted_log_key).await?;
    let Some(end) = report.problems.iter().find_map(|p| match p {
        AuditProblem::UnsignedEntries { to, .. } => Some(*to),
        _ => None,
    }) else {
        return Ok(report);
    };
    let deadline =
        std::time::Instant::now() + std::time::Duration::from_secs(PENDING_SECS.unsigned_abs());
    while std::time::Instant::now() < deadline {
        if store
            .latest_checkpoint()
            .await?
            .is_some_and(|cp| cp.size >= end)
        {
            return audit_once(store, trusted_log_key).await;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    Ok(report)
}

/// One pass of [`audit`] over one snapshot.
async fn audit_once(
    store: &Store,
    trusted_log_key: Option<VerifyingKey>,
) -> Result<AuditReport, LogError> {
    let mut problems = Vec::new();
    let mut snap = store.snapshot().await?;
    let verifier = log_verifier(&mut snap, trusted_log_key, &mut problems).await?;
    // Entries: recompute each leaf hash from its data; check seq and
    // contiguity. The pages are read here while the one before is checked
    // on a blocking thread (issue 45 item 5: at 10M entries reading and
    // checking each took half of the audit's time, one after the other).
    let end = snap.log_size().await?;
    let (pages, checked) = tokio::sync::mpsc::channel::<Vec<interlock_store::LeafRow>>(2);
    let log_key = verifier.as_ref().map(|v| v.key);
    // The checkpoints first (same snapshot): the checker takes the roots at
    // their sizes as it goes, rather than keeping the whole tree for after
    // (at 10M entries that tree was about a gigabyte).
    let rows = snap.checkpoints().await?;
    let mut sizes: Vec<u64> = rows.iter().map(|r| r.size).collect();
    sizes.sort_unstable();
    sizes.dedup();
    // The stored tile roots, checked against the entries as they are read.
    let tiles = snap.log_tile_roots().await?;
    let checker =
        tokio::task::spawn_blocking(move || check_entries(checked, log_key, sizes, tiles));
    let mut lo = 0u64;
    while lo < end {
        let hi = lo.saturating_add(PAGE).min(end);
        let page = snap.leaves(lo..hi).await?;
        if pages.send(page).await.is_err() {
            break;
        }
        lo = hi;
    }
    drop(pages);
    let Checked {
        roots,
        appended_at,
        entries,
        registered,
        problems: entry_problems,
    } = checker
        .await
        .map_err(|e| LogError::AuditChecker(e.to_string()))?;
    problems.extend(entry_problems);

    // Checkpoints.
    let checkpoints = rows.len() as u64;
    // (size, matches the recomputed tree) for every checkpoint whose signature verified.
    let mut verified: Vec<(u64, bool)> = Vec::new();
    for row in &rows {
        let Some(verifier) = &verifier else {
            break;
        };
        let cp = match open_signed(&row.note, verifier) {
            Ok(cp) => cp,
            Err(reason) => {
                problems.push(AuditProblem::BadCheckpointSignature {
                    size: row.size,
                    reason,
                });
                continue;
            }
        };
        let mut row_problem = None;
        if cp.size != row.size {
            row_problem = Some(format!("the note signs size {}", cp.size));
        } else if cp.root != row.root {
            row_problem = Some("the stored root is not the signed root".to_owned());
        } else if cp.origin != verifier.name {
            row_problem = Some(format!("the note names origin {:?}", cp.origin));
        }
        if let Some(reason) = row_problem {
            problems.push(AuditProblem::CheckpointRowMismatch {
                size: row.size,
                reason,
            });
        }
        // From here on only the signed content counts.
        // `end` is one past the highest stored index: a checkpoint beyond it
        // signs entries that are gone from the tail. Below it, a dropped
        // entry in the middle shrinks the recomputed tree instead, and the
        // root comparison fails (with the gap named above).
        if cp.size > end {
            problems.push(AuditProblem::CheckpointBeyondLog {
                size: cp.size,
                entries: end,
            });
            verified.push((cp.size, false));
            continue;
        }
        let matches = roots.get(&cp.size) == Some(&cp.root);
        verified.push((cp.size, matches));
    }
    classify_mismatches(&verified, end, &mut problems);
    let covered = verified
        .iter()
        .filter(|(_, ok)| *ok)
        .map(|(s, _)| *s)
        .max()
        .unwrap_or(0);
    let signed_max = verified.iter().map(|(s, _)| *s).max().unwrap_or(0);
    let mut pending = None;
    if verifier.is_some() && signed_max < end && covered == signed_max {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX));
        let skip = usize::try_from(signed_max).unwrap_or(usize::MAX);
        // Recent on either side: an entry dated ahead of the auditor's clock
        // is no running writer's (that one signed it while the audit
        // waited), and a row dated far ahead must not be exempt for ever.
        let recent = appended_at
            .iter()
            .skip(skip)
            .all(|&t| (now - PENDING_SECS..=now + PENDING_SECS).contains(&t));
        if recent && signed_max > 0 {
            pending = Some((signed_max, end));
        } else {
            problems.push(AuditProblem::UnsignedEntries {
                from: signed_max,
                to: end,
            });
        }
    }
    for key in snap.approver_keys().await? {
        if !registered.contains(&(key.key_id.clone(), key.identity.clone())) {
            problems.push(AuditProblem::UnregisteredApprover {
                key_id: key.key_id,
                identity: key.identity,
            });
        }
    }
    Ok(AuditReport {
        entries,
        checkpoints,
        pending,
        problems,
    })
}

/// What checking every entry found: the roots of the tree their data hashes
/// to at each checkpoint's size (sizes beyond the entries have none), when
/// each was appended (by position), how many there were, the approvers they
/// registered, and their problems.
struct Checked {
    roots: std::collections::HashMap<u64, interlock_merkle::Hash>,
    appended_at: Vec<i64>,
    entries: u64,
    registered: BTreeSet<(String, String)>,
    problems: Vec<AuditProblem>,
}

/// Checks the entries of each page received, in order: contiguity, each
/// leaf hash recomputed from its data, each receipt (its seq, its signature
/// by `log_key`). The tree is built from what the data hashes to, so an
/// edit of data and leaf hash together still fails the checkpoints.
///
/// Each entry's own checks (its hash, its receipt's signature: ~6 µs, most
/// of an audit) are independent of every other's, so a page is split over
/// the machine's cores; what they found is then taken in the entries'
/// order, as one thread would have found it.
fn check_entries(
    mut pages: tokio::sync::mpsc::Receiver<Vec<interlock_store::LeafRow>>,
    log_key: Option<VerifyingKey>,
    checkpoint_sizes: Vec<u64>,
    tile_roots: std::collections::BTreeMap<u64, interlock_merkle::Hash>,
) -> Checked {
    // The leaf hashes of the tile being read, while the entries are whole
    // (after a gap, tiles no longer line up with what is stored: the gap is
    // the problem named).
    let mut tile = Vec::with_capacity(TILE_WIDTH as usize);
    let mut whole = true;
    // The right edge of the recomputed tree, and the checkpoint sizes it has
    // yet to reach (ascending).
    let mut frontier = Frontier::new();
    let mut sizes = checkpoint_sizes.into_iter().peekable();
    let mut c = Checked {
        roots: std::collections::HashMap::new(),
        appended_at: Vec::new(),
        entries: 0,
        registered: BTreeSet::new(),
        problems: Vec::new(),
    };
    let mut take_root = |frontier: &Frontier, roots: &mut std::collections::HashMap<_, _>| {
        while let Some(&size) = sizes.peek() {
            if size > frontier.size() {
                break;
            }
            if size == frontier.size() {
                roots.insert(size, frontier.root());
            }
            sizes.next();
        }
    };
    take_root(&frontier, &mut c.roots);
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get().min(8));
    let mut expected = 0u64;
    while let Some(page) = pages.blocking_recv() {
        let per_thread = page.len().div_ceil(threads).max(1);
        let own: Vec<Vec<(interlock_merkle::Hash, Vec<AuditProblem>)>> = std::thread::scope(|s| {
            let workers: Vec<_> = page
                .chunks(per_thread)
                .map(|rows| {
                    s.spawn(move || {
                        let mut registered = BTreeSet::new();
                        let found: Vec<_> = rows
                            .iter()
                            .map(|row| {
                                let mut problems = Vec::new();
                                check_entry(
                                    row.idx,
                                    &row.data,
                                    log_key.as_ref(),
                                    &mut problems,
                                    &mut registered,
                                );
                                (leaf_hash(&row.data), problems)
                            })
                            .collect();
                        (found, registered)
                    })
                })
                .collect();
            workers
                .into_iter()
                .map(|w| {
                    let (found, registered) = w.join().expect("an entry checker panicked");
                    c.registered.extend(registered);
                    found
                })
                .collect()
        });
        for (row, (computed, problems)) in page.iter().zip(own.into_iter().flatten()) {
            if row.idx != expected {
                c.problems.push(AuditProblem::MissingEntries {
                    from: expected,
                    to: row.idx,
                });
                whole = false;
            }
            expected = row.idx + 1;
            c.entries += 1;
            c.appended_at.push(row.appended_at);
            if computed != row.leaf_hash {
                c.problems
                    .push(AuditProblem::EditedEntry { index: row.idx });
            }
            c.problems.extend(problems);
            frontier.push(computed);
            take_root(&frontier, &mut c.roots);
            if whole {
                tile.push(computed);
                if tile.len() as u64 == TILE_WIDTH {
                    let index = row.idx / TILE_WIDTH;
                    if tile_roots
                        .get(&index)
                        .is_some_and(|stored| *stored != interlock_merkle::root(&tile))
                    {
                        c.problems.push(AuditProblem::WrongTileRoot { tile: index });
                    }
                    tile.clear();
                }
            }
        }
    }
    c
}

/// The verifier to check checkpoints with, recording identity problems.
async fn log_verifier(
    store: &mut Snapshot,
    trusted: Option<VerifyingKey>,
    problems: &mut Vec<AuditProblem>,
) -> Result<Option<NoteVerifier>, LogError> {
    let origin = store.get_meta(META_ORIGIN).await?;
    let vkey = store.get_meta(META_VKEY).await?;
    let Some(origin) = origin else {
        problems.push(AuditProblem::LogIdentity(
            "no log origin is recorded; checkpoints cannot be checked".into(),
        ));
        return Ok(None);
    };
    let stored = match vkey.as_deref().map(NoteVerifier::from_vkey) {
        Some(Ok(v)) => Some(v),
        Some(Err(e)) => {
            problems.push(AuditProblem::LogIdentity(format!(
                "the recorded log key is unusable: {e}"
            )));
            None
        }
        None => {
            problems.push(AuditProblem::LogIdentity("no log key is recorded".into()));
            None
        }
    };
    if let Some(v) = &stored
        && v.name != origin
    {
        problems.push(AuditProblem::LogIdentity(format!(
            "the recorded log key is named {:?} but the origin is {origin:?}",
            v.name
        )));
    }
    match trusted {
        Some(key) => {
            let t = match NoteVerifier::new(&origin, key) {
                Ok(t) => t,
                Err(e) => {
                    problems.push(AuditProblem::LogIdentity(format!(
                        "origin {origin:?} is not a valid key name: {e}"
                    )));
                    return Ok(None);
                }
            };
            if let Some(v) = &stored
                && v != &t
            {
                problems.push(AuditProblem::UntrustedKey {
                    stored: v.to_vkey(),
                    trusted: t.to_vkey(),
                });
            }
            Ok(Some(t))
        }
        None => Ok(stored),
    }
}

/// Verifies a note's signature and parses its checkpoint; the error is for humans.
fn open_signed(note: &str, verifier: &NoteVerifier) -> Result<Checkpoint, String> {
    let n = SignedNote::parse(note).map_err(|e| e.to_string())?;
    n.verify(std::slice::from_ref(verifier))
        .map_err(|e| e.to_string())?;
    Checkpoint::parse(&n.text).map_err(|e| e.to_string())
}

/// Checks an entry's bytes: a canonical signed receipt (DSSE envelope of an
/// in-toto statement) whose signature is the log key's and whose `seq` is its index.
fn check_entry(
    index: u64,
    data: &[u8],
    log_key: Option<&VerifyingKey>,
    problems: &mut Vec<AuditProblem>,
    registered: &mut BTreeSet<(String, String)>,
) {
    let opened = match interlock_receipts::open_leaf_unverified(data) {
        Ok(o) => o,
        Err(e) => {
            problems.push(AuditProblem::MalformedEntry {
                index,
                reason: e.to_string(),
            });
            return;
        }
    };
    if opened.seq != index {
        problems.push(AuditProblem::ReorderedEntry {
            index,
            seq: Some(opened.seq.to_string()),
        });
    }
    // (Its seal from what was read: reading it again doubled the audit's
    // per-entry cost, issue 45 item 5.)
    if let Some(key) = log_key
        && let Err(e) = opened.check_seal(key)
    {
        problems.push(AuditProblem::MalformedEntry {
            index,
            reason: format!("its receipt signature does not verify with the log key: {e}"),
        });
        return;
    }
    if opened.kind == "approver.registered" {
        let field = |k: &str| {
            opened
                .predicate
                .get(k)
                .and_then(|v| v.as_str())
                .map(str::to_owned)
        };
        if let (Some(key_id), Some(identity)) = (field("key_id"), field("identity")) {
            registered.insert((key_id, identity));
        }
    }
}

/// Names each verified checkpoint that the recomputed tree does not
/// reproduce: a fork if a later checkpoint does match (the data is then
/// attested, so the earlier signature contradicts it), otherwise the range
/// of entries since the last matching checkpoint — reported once per run of
/// consecutive failures, so one early edit does not print a line for every
/// later checkpoint.
fn classify_mismatches(verified: &[(u64, bool)], stored: u64, problems: &mut Vec<AuditProblem>) {
    let mut last_ok = 0u64;
    let mut i = 0;
    while i < verified.len() {
        let (size, ok) = verified[i];
        if ok {
            last_ok = size;
            i += 1;
            continue;
        }
        let later_match = verified[i + 1..]
            .iter()
            .find(|(_, ok)| *ok)
            .map(|(s, _)| *s);
        if let Some(later) = later_match {
            problems.push(AuditProblem::Fork { size, later });
            i += 1;
            continue;
        }
        // No later checkpoint matches: everything from here on fails.
        let run: Vec<u64> = verified[i..]
            .iter()
            .map(|(s, _)| *s)
            .filter(|s| *s <= stored)
            .collect();
        if let Some(&first) = run.first() {
            problems.push(AuditProblem::EntriesDoNotMatch {
                from: last_ok,
                size: first,
                also: run.len() as u64 - 1,
            });
        }
        break;
    }
}
