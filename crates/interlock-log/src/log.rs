//! [`Log`]: group-committed appends of statement leaves, with checkpoints
//! signed at most once per [`LogOptions::checkpoint_interval`].

use std::sync::{Arc, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use interlock_canon::{Number, Value};
use interlock_merkle::{
    Checkpoint, Frontier, Hash, NoteSigner, NoteVerifier, TILE_WIDTH, TiledError, TiledTree,
    leaf_hash, open_checkpoint, sign_checkpoint_with,
};
use interlock_receipts::CanonicalPredicate;
use interlock_store::{CheckpointRow, Flush, LeafRow, StateChange, Store, StoreError};
use tokio::sync::{mpsc, oneshot};

use crate::error::LogError;
use crate::signer::{AsSigner, CheckpointSigner};
use crate::tail::{LeafTail, Recent};
use crate::tiles::TileCache;

/// At most this many entries go into one commit. Bounds the latency of a
/// commit and the memory of a batch; larger bursts take several commits.
pub const MAX_BATCH: usize = 4096;

/// The largest canonical entry accepted (1 MiB): the log records decisions,
/// not payloads.
pub const MAX_ENTRY_BYTES: usize = 1 << 20;

/// `meta` key of the log's origin (its checkpoint name).
pub const META_ORIGIN: &str = "log.origin";
/// `meta` key of the log's verifier key (`name+id+key`, C2SP vkey).
pub const META_VKEY: &str = "log.vkey";

/// Requests queued for the writer; bounded so a flood of appenders waits
/// instead of growing memory without limit.
const QUEUE_DEPTH: usize = 16 * 1024;

/// How long after a seal request ([`Store::request_log_seal`]) writers sign
/// every commit, and leave the lock free for [`SEAL_WANTED_GAP`] after each, so
/// the waiting writer gets its turn however busy the other one is.
const SEAL_WANTED_FOR: Duration = Duration::from_secs(2);

/// How long a writer that saw a seal request leaves the lock free after a commit.
const SEAL_WANTED_GAP: Duration = Duration::from_millis(2);

/// Asks the other writers to sign their commits; a failure only costs the
/// wait, so it is logged, not returned.
fn want_seal(store: &Store) {
    if let Err(e) = store.request_log_seal() {
        tracing::warn!(error = %e, "cannot ask the other writer for a checkpoint");
    }
}

/// How long a writer waits for another writer to sign the checkpoint over
/// leaves it appended before giving up (it signs within its own
/// `checkpoint_interval`; only a writer that died leaves them unsigned).
const FOREIGN_SEAL_WAIT: Duration = Duration::from_secs(3);

/// How the log commits: issue 17's durability contract (docs/ARCHITECTURE.md).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LogOptions {
    /// At most one checkpoint is signed per interval while the log grows; one
    /// is signed at once when someone needs it ([`Log::seal`], shutdown).
    /// `Duration::ZERO` signs one with every commit.
    pub checkpoint_interval: Duration,
    /// A [`Durability::Committed`] append is `fsync`ed within this window
    /// (by the next durable commit, or by the writer when the window ends).
    pub flush_window: Duration,
}

impl Default for LogOptions {
    fn default() -> Self {
        LogOptions {
            checkpoint_interval: Duration::from_millis(100),
            flush_window: Duration::from_millis(10),
        }
    }
}

/// When an append is acknowledged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Durability {
    /// `fsync`ed before the append returns (shared with the other appends of
    /// its group commit). What every entry gets unless it asks otherwise.
    Durable,
    /// Committed before the append returns — a killed process loses nothing
    /// acknowledged — and `fsync`ed within [`LogOptions::flush_window`]: a
    /// power loss can lose the last window of such entries, never an entry
    /// before a durable one. For a tool call's outcome leaf, whose intent
    /// leaf was durable before the call was forwarded.
    Committed,
}

/// What an acknowledged append returns. By the time it exists, the entry is
/// committed (durable, unless it was appended [`Durability::Committed`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Appended {
    /// The entry's index (its `seq`).
    pub index: u64,
    /// RFC 6962 leaf hash of the stored entry bytes.
    pub leaf_hash: Hash,
    /// The tree size after the entry's batch.
    pub tree_size: u64,
    /// The checkpoint signed with the batch (a C2SP signed note, shared by the
    /// whole batch), if one was: checkpoints are signed at most once per
    /// interval, so most batches under load have none; [`Log::seal`] signs one
    /// covering everything at once.
    pub checkpoint: Option<Arc<str>>,
}

enum Request {
    Append {
        entries: Vec<Value>,
        durability: Durability,
        reply: oneshot::Sender<Result<Vec<Appended>, LogError>>,
    },
    /// Sign a checkpoint over everything now, unless one already covers it.
    Seal {
        reply: oneshot::Sender<Result<Option<Arc<str>>, LogError>>,
    },
    /// One entry and the state change it records, committed together (boxed:
    /// a change is far larger than the other requests).
    AppendWithChange {
        entry: Value,
        change: Box<StateChange>,
        reply: oneshot::Sender<Result<Vec<Appended>, LogError>>,
    },
    Close {
        reply: oneshot::Sender<()>,
    },
}

/// The durable view readers see.
///
/// The tree holds exactly the durable, verified leaves: a batch's root is
/// computed beside it (from its [`Frontier`]) and the tree is extended only
/// once the store has committed the batch. So a batch that fails, or loses
/// the race for its indices to another process, leaves nothing to undo, and
/// leaves written by another process can be adopted at the tree's end.
struct State {
    /// The committed leaves' tree: its complete tiles' roots and its last
    /// tile's leaves ([`TiledTree`]); its length is the committed size.
    tree: TiledTree,
    /// How many of the tree's complete tiles the store holds (see
    /// [`store_tiles_if_due`]).
    stored_tiles: u64,
    /// The latest signed checkpoint note (it may not cover the whole tree).
    checkpoint: Option<Arc<str>>,
    /// The size that checkpoint signs: leaves from here on are not yet
    /// covered by a signature.
    sealed: u64,
}

/// How many adopted ranges [`Log::adopted_ranges`] keeps for a slow
/// receiver before telling it that it lagged.
pub const ADOPTED_BACKLOG: usize = 1024;

pub(crate) struct Shared {
    pub(crate) store: Store,
    origin: String,
    verifier: NoteVerifier,
    options: LogOptions,
    state: RwLock<State>,
    /// Held by whatever extends the tree — the writer for a whole commit
    /// (index assignment to publication), [`Log::refresh`] for a catch-up —
    /// so the size a batch was sealed for cannot move under it. An async
    /// lock because it is held across store calls; the writer is its only
    /// frequent user, so on the append path it is uncontended.
    extend: tokio::sync::Mutex<()>,
    /// The signed size, published whenever a checkpoint is adopted or signed:
    /// what tails the log (alert delivery) waits on instead of polling the
    /// store.
    sealed_tx: tokio::sync::watch::Sender<u64>,
    /// The index ranges of entries other writers appended, as this `Log`
    /// adopts them: what a gateway announces to its reviewers when another
    /// gateway on the same database proposed or decided something.
    adopted_tx: tokio::sync::broadcast::Sender<std::ops::Range<u64>>,
    /// When checkpoints and deferred `fsync`s are due. Held by whoever
    /// commits — the writer task for a batch, or an appender committing on
    /// its own task ([`Log::append_inline`]) — so commits never interleave
    /// and the two agree on what is due.
    pace: tokio::sync::Mutex<Pace>,
    /// Appends under way (from their start to their answer): an append
    /// commits inline only when it is alone, so that under load appends
    /// keep meeting in the writer's group commit, one `fsync` for many.
    appending: std::sync::atomic::AtomicUsize,
    /// Tells the writer that an inline commit set a deadline (a checkpoint
    /// or a deferred `fsync` became due) it may not be waiting for yet. At
    /// most once per flush window and once per checkpoint interval, not
    /// once per commit.
    paced: tokio::sync::Notify,
    /// The leaves this log committed lately, kept while a [`LeafTail`]
    /// reads them (so it need not read them back from the store).
    pub(crate) recent: Recent,
    /// Batches whose commit failed without saying whether they landed (see
    /// [`settle_in_doubt`]): all written at the tree's size, so at most one
    /// of them landed.
    in_doubt: std::sync::Mutex<Vec<InDoubt>>,
    /// Complete tiles' leaf hashes read lately for proofs and verified
    /// entries, each checked against the tree's tile root.
    tiles: std::sync::Mutex<TileCache>,
    /// Set while a task stores tile roots (one at a time).
    storing_tiles: std::sync::atomic::AtomicBool,
}

/// A batch whose write failed with an error that does not say whether the
/// database committed it — a connection lost after its `COMMIT` was sent:
/// the index it was written at and its leaf hashes. Its waiters were told
/// it failed; if it landed, its leaves are this log's own, and the log must
/// take them into its tree, or it would take them for another writer's
/// unsigned entries and refuse every later append (issue 44).
#[derive(Clone)]
struct InDoubt {
    start: u64,
    hashes: Vec<Hash>,
}

/// Notes a failed write of `leaves` as in doubt, unless the store's error
/// says nothing was written.
fn note_in_doubt(shared: &Shared, leaves: &[LeafRow], error: &StoreError) {
    if leaves.is_empty()
        || matches!(
            error,
            StoreError::LeafIndexMismatch { .. }
                | StoreError::ChangeRefused { .. }
                | StoreError::Malformed(_)
        )
    {
        return;
    }
    let start = leaves[0].idx;
    let mut doubts = shared.in_doubt.lock().unwrap_or_else(|e| e.into_inner());
    // Batches in doubt at another index were settled by the tree's move.
    doubts.retain(|d| d.start == start);
    doubts.push(InDoubt {
        start,
        hashes: leaves.iter().map(|l| l.leaf_hash).collect(),
    });
}

/// Finds out whether a batch in doubt landed: reads the store from the
/// tree's size, and if the stored leaves there are one batch's, extends the
/// tree with them (unsigned: the next checkpoint signs them; the caller that
/// can sign does so at once). Returns whether it adopted them. A store that
/// cannot be read leaves the batches in doubt. The caller holds `extend`.
async fn settle_in_doubt(shared: &Shared) -> Result<bool, StoreError> {
    let doubts = shared
        .in_doubt
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .clone();
    if doubts.is_empty() {
        return Ok(false);
    }
    let size = shared.read().tree.len();
    let clear = || {
        shared
            .in_doubt
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clear()
    };
    if doubts.iter().all(|d| d.start != size) {
        // The tree moved on from where they were written: by adopting one
        // under another writer's checkpoint, or by leaves written at that
        // index instead (so none landed).
        clear();
        return Ok(false);
    }
    let (tail, _) = shared.store.log_tail(size).await?;
    clear();
    let Some(landed) = doubts
        .into_iter()
        .find(|d| d.start == size && tail.starts_with(&d.hashes))
    else {
        return Ok(false);
    };
    let mut st = shared.write();
    st.tree.extend(landed.hashes);
    tracing::warn!(
        from = size,
        to = st.tree.len(),
        "a log batch reported as failed had been committed (its answer was lost): its entries are kept"
    );
    Ok(true)
}

impl crate::tiles::HoldsTree for Shared {
    fn with_tree<R>(&self, f: impl FnOnce(&TiledTree) -> R) -> R {
        f(&self.read().tree)
    }
}

impl Shared {
    /// The committed size (the tree's).
    pub(crate) fn size(&self) -> u64 {
        self.read().tree.len()
    }
}

/// How many completed tiles wait before their roots are stored (16,384
/// entries): one write, and one `fsync`, for all of them. A log that stops
/// first rebuilds at most these from their leaves when it opens; one that
/// closes stores them then.
const TILES_STORED_TOGETHER: u64 = 64;

/// Stores the roots of the tree's complete tiles the store lacks, once
/// [`TILES_STORED_TOGETHER`] wait, on a task of its own unless one is at it
/// already: off the append path, since they are a cache. (Stored as each
/// tile completed, they would take a commit and an `fsync` every 256
/// entries, contending with the appends for the database lock.)
fn store_tiles_if_due(shared: &Arc<Shared>) {
    let due = {
        let st = shared.read();
        st.tree.complete_tiles() >= st.stored_tiles + TILES_STORED_TOGETHER
    };
    if !due
        || shared
            .storing_tiles
            .swap(true, std::sync::atomic::Ordering::AcqRel)
    {
        return;
    }
    let shared = Arc::clone(shared);
    tokio::spawn(async move {
        store_tiles(&shared).await;
        shared
            .storing_tiles
            .store(false, std::sync::atomic::Ordering::Release);
    });
}

/// Stores the tile roots the store lacks until it has them all (or fails:
/// the next commit tries again).
async fn store_tiles(shared: &Shared) {
    loop {
        let (from, to) = {
            let st = shared.read();
            (st.stored_tiles, st.tree.complete_tiles())
        };
        let tiles = crate::tiles::tiles_to_store(&shared.store, shared, from, to).await;
        if tiles.is_empty() {
            return;
        }
        if let Err(error) = shared.store.put_log_tiles(from, &tiles).await {
            tracing::warn!(%error, from, "storing the log's tile roots failed (they are kept in memory, and stored again later)");
            return;
        }
        let mut st = shared.write();
        st.stored_tiles = st.stored_tiles.max(from + tiles.len() as u64);
    }
}

/// Counts an append in [`Shared::appending`] while it lives (also when the
/// append's future is dropped midway).
struct Appending<'a>(&'a Shared);

impl<'a> Appending<'a> {
    fn enter(shared: &'a Shared) -> Self {
        shared
            .appending
            .fetch_add(1, std::sync::atomic::Ordering::AcqRel);
        Appending(shared)
    }
}

impl Drop for Appending<'_> {
    fn drop(&mut self) {
        self.0
            .appending
            .fetch_sub(1, std::sync::atomic::Ordering::AcqRel);
    }
}

/// The writer's clock: what its timers wait for.
#[derive(Default)]
struct Pace {
    /// When this log last signed a checkpoint (`None`: never).
    signed_at: Option<Instant>,
    /// When the unsigned tail, if any, must be signed.
    seal_due: Option<Instant>,
    /// When the writer next checks for committed leaves left without an
    /// `fsync` (`unflushed`). Left set by a durable commit, which clears
    /// `unflushed` instead: re-arming the writer's timer on every commit
    /// woke a parked worker thread per call (issue 17's profile).
    flush_due: Option<Instant>,
    /// A [`Flush::Deferred`] commit that no `fsync` has covered yet.
    unflushed: bool,
    /// How many appenders the writer's latest batch answered. An append
    /// commits inline only after a batch of one: once appenders meet in the
    /// writer's batches, they keep sharing its `fsync`s (an inline commit
    /// cannot gather the appenders that arrive while it runs).
    last_batch: usize,
}

impl Pace {
    /// Whether the next commit must sign a checkpoint.
    fn checkpoint_due(&self, options: &LogOptions) -> bool {
        options.checkpoint_interval.is_zero()
            || self
                .signed_at
                .is_none_or(|t| t.elapsed() >= options.checkpoint_interval)
    }

    /// The writer's next deadline.
    fn next_due(&self) -> Option<Instant> {
        match (self.seal_due, self.flush_due) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Records a commit; returns whether it set a deadline that was not set
    /// before (the writer must be told if it did not commit itself).
    fn committed(&mut self, shared: &Shared, flush: Flush, signed: bool) -> bool {
        let now = Instant::now();
        let mut new = false;
        if signed {
            self.signed_at = Some(now);
        }
        match flush {
            Flush::Now => self.unflushed = false,
            Flush::Deferred => {
                self.unflushed = true;
                if self.flush_due.is_none() {
                    self.flush_due = Some(now + shared.options.flush_window);
                    new = true;
                }
            }
        }
        let unsealed = {
            let st = shared.read();
            st.sealed < st.tree.len()
        };
        if !unsealed {
            self.seal_due = None;
        } else if self.seal_due.is_none() {
            let from = self.signed_at.unwrap_or(now);
            self.seal_due = Some(from + shared.options.checkpoint_interval);
            new = true;
        }
        new
    }

    /// `fsync`s deferred commits whose window has ended, unless a durable
    /// commit already did.
    async fn flush_if_due(&mut self, shared: &Shared, now: Instant) {
        if self.flush_due.is_some_and(|d| d <= now) {
            self.flush_due = None;
            if std::mem::take(&mut self.unflushed)
                && let Err(e) = shared.store.flush_log().await
            {
                tracing::error!(error = %e, "flushing the log's committed entries failed");
            }
        }
    }
}

impl Shared {
    fn read(&self) -> RwLockReadGuard<'_, State> {
        // A panic while holding the lock cannot leave `State` half-updated
        // in a way readers could misuse: the tree only grows by whole,
        // committed batches.
        self.state.read().unwrap_or_else(|e| e.into_inner())
    }

    fn write(&self) -> RwLockWriteGuard<'_, State> {
        self.state.write().unwrap_or_else(|e| e.into_inner())
    }
}

/// The tamper-evident log. Cheap to clone; all clones feed one writer task.
///
/// Several writers may share one database: other processes (a long-running
/// gateway beside short CLI commands) or other `Log`s opened on their own
/// [`Store`]. They coordinate through the store alone. A batch is sealed for
/// the next index this `Log` knows of; if another writer took it first, the
/// store refuses the batch ([`StoreError::LeafIndexMismatch`], checked inside
/// the write transaction), and the writer catches up — reads the other
/// writer's leaf hashes and checks that the store's latest checkpoint is
/// signed by the log key over exactly this tree extended by them — then
/// re-seals the batch at the new index and writes it again, that second
/// time under the database write lock so it cannot lose the race twice.
/// An extension that does not verify is never adopted: appends fail with
/// [`LogError::ForeignAppend`] until the log is audited.
///
/// Readers see what this `Log` has verified: [`refresh`](Log::refresh)
/// catches up with other writers, and [`leaf`](Log::leaf) /
/// [`entry`](Log::entry) do so by themselves when asked for an index beyond
/// it.
#[derive(Clone)]
pub struct Log {
    shared: Arc<Shared>,
    tx: mpsc::Sender<Request>,
}

impl std::fmt::Debug for Log {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Log")
            .field("origin", &self.shared.origin)
            .field("size", &self.size())
            .finish_non_exhaustive()
    }
}

fn now_secs() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}

impl Log {
    /// Opens the log kept in `store`, signing checkpoints with `signer` under
    /// the key name `origin`, with the default [`LogOptions`].
    pub async fn open(
        store: Store,
        signer: CheckpointSigner,
        origin: &str,
    ) -> Result<Log, LogError> {
        Log::open_with(store, signer, origin, LogOptions::default()).await
    }

    /// Opens the log kept in `store`, signing checkpoints with `signer` under
    /// the key name `origin`.
    ///
    /// Refuses to start if `signer` does not sign with the key it reports
    /// ([`LogError::Signer`]), if the database belongs to another origin or
    /// key, if a leaf is missing, or if the stored leaves do not reproduce the latest
    /// checkpoint and its signature: a log that no longer matches what it
    /// signed must be audited, not extended.
    ///
    /// Leaves after the latest checkpoint — what a writer killed before its
    /// next checkpoint left — are adopted: they were acknowledged, so they
    /// stay. Nothing signed them, so the log records that it adopted them (a
    /// `log.tail_adopted` entry naming the range) and signs a checkpoint over
    /// them before this returns.
    pub async fn open_with(
        store: Store,
        signer: CheckpointSigner,
        origin: &str,
        options: LogOptions,
    ) -> Result<Log, LogError> {
        let verifier = NoteVerifier::new(origin, signer.public_key()).map_err(|source| {
            LogError::InvalidOrigin {
                origin: origin.to_owned(),
                source,
            }
        })?;
        // A signer whose key is not the one it reports is refused before
        // anything is recorded (on a new database, its key would be).
        NoteSigner::new(origin, verifier.key, &AsSigner(&*signer)).map_err(LogError::Signer)?;
        let stored_origin = store.get_or_init_meta(META_ORIGIN, origin).await?;
        if stored_origin != origin {
            return Err(LogError::OriginMismatch {
                stored: stored_origin,
                given: origin.to_owned(),
            });
        }
        let ours = verifier.to_vkey();
        let stored_vkey = store.get_or_init_meta(META_VKEY, &ours).await?;
        if stored_vkey != ours {
            return Err(LogError::KeyMismatch {
                stored: stored_vkey,
                ours,
            });
        }
        let Loaded {
            tree,
            checkpoint,
            signed: sealed,
            stored_tiles,
        } = load_adopting(&store, &verifier, origin).await?;
        let size = tree.len();
        tracing::info!(origin, size, "log opened");
        let shared = Arc::new(Shared {
            store,
            origin: origin.to_owned(),
            verifier,
            options,
            state: RwLock::new(State {
                tree,
                stored_tiles,
                checkpoint,
                sealed,
            }),
            extend: tokio::sync::Mutex::new(()),
            sealed_tx: tokio::sync::watch::channel(sealed).0,
            adopted_tx: tokio::sync::broadcast::channel(ADOPTED_BACKLOG).0,
            pace: tokio::sync::Mutex::new(Pace::default()),
            appending: std::sync::atomic::AtomicUsize::new(0),
            paced: tokio::sync::Notify::new(),
            recent: Recent::default(),
            in_doubt: std::sync::Mutex::new(Vec::new()),
            tiles: std::sync::Mutex::new(TileCache::default()),
            storing_tiles: std::sync::atomic::AtomicBool::new(false),
        });
        store_tiles_if_due(&shared);
        let (tx, rx) = mpsc::channel(QUEUE_DEPTH);
        // The writer builds the checkpoint signer it keeps (which checks the
        // key once) and says whether it could before taking requests.
        let (ready, is_ready) = oneshot::channel();
        tokio::spawn(writer(Arc::clone(&shared), signer, rx, ready));
        let log = match is_ready.await {
            Ok(Ok(())) => Log { shared, tx },
            Ok(Err(e)) => return Err(LogError::Signer(e)),
            Err(_) => return Err(LogError::Closed),
        };
        if sealed < size {
            tracing::warn!(
                origin,
                from = sealed,
                to = size,
                "adopting log entries no checkpoint signed (a writer stopped before signing one)"
            );
            log.append(tail_adopted_entry(
                sealed,
                size,
                "these entries were committed but no checkpoint signed them before their writer stopped; they were adopted as stored",
            ))
            .await?;
            log.seal().await?;
        }
        Ok(log)
    }

    /// Appends one entry (a JSON object without `seq`); returns once it is durable.
    pub async fn append(&self, entry: Value) -> Result<Appended, LogError> {
        let mut v = self.append_many(vec![entry]).await?;
        v.pop().ok_or(LogError::Closed)
    }

    /// Appends one entry; returns once it is committed, its `fsync` left to
    /// the next durable commit or the end of the flush window (see
    /// [`Durability::Committed`]).
    pub async fn append_committed(&self, entry: Value) -> Result<Appended, LogError> {
        let mut v = self
            .append_many_with(vec![entry], Durability::Committed)
            .await?;
        v.pop().ok_or(LogError::Closed)
    }

    /// Appends entries in order (contiguous indices); returns once all are durable.
    pub async fn append_many(&self, entries: Vec<Value>) -> Result<Vec<Appended>, LogError> {
        self.append_many_with(entries, Durability::Durable).await
    }

    async fn append_many_with(
        &self,
        entries: Vec<Value>,
        durability: Durability,
    ) -> Result<Vec<Appended>, LogError> {
        if entries.is_empty() {
            return Ok(Vec::new());
        }
        for e in &entries {
            check_entry(e)?;
        }
        let _appending = Appending::enter(&self.shared);
        let entries = match self.append_inline(entries, durability).await {
            Ok(done) => return done,
            Err(entries) => entries,
        };
        let (reply, rx) = oneshot::channel();
        self.tx
            .send(Request::Append {
                entries,
                durability,
                reply,
            })
            .await
            .map_err(|_| LogError::Closed)?;
        rx.await.map_err(|_| LogError::Closed)?
    }

    /// Commits `entries` on the caller's task when no other append is under
    /// way, nobody is committing or queued, the writer's last batch had one
    /// appender and no checkpoint is due: the store's append, the tree's
    /// extension and the answer happen here, with no hand-off to the writer
    /// task and back: two task wake-ups per append, often of a parked worker
    /// thread (a sequential proxied call went from 10 to 7.5 context
    /// switches, issue 17, docs/BENCHMARKS.md). A lone appender is a batch of
    /// one either way; under load the writer keeps batching, since an
    /// appender that is not alone, or comes after a batch of several, queues.
    ///
    /// Safe to drop midway: everything before the store's write may wait, and
    /// nothing after it does ([`Store::try_append_batch_now`] refuses rather
    /// than wait), so a commit is published by whoever made it. Returns the
    /// entries when the writer must take them: a commit or a queue ahead, a
    /// checkpoint due or wanted (the writer keeps the signer), another
    /// process holding the database, Postgres.
    async fn append_inline(
        &self,
        entries: Vec<Value>,
        durability: Durability,
    ) -> Result<Result<Vec<Appended>, LogError>, Vec<Value>> {
        // An inline commit never waits, so a task appending in a loop would
        // never yield to the others on its worker (through the writer it
        // yielded at every append): count each append against tokio's
        // cooperative budget, which yields once the task has used it up.
        tokio::task::coop::consume_budget().await;
        let shared = &*self.shared;
        // (Postgres appends and very large batches go to the writer anyway:
        // decided here, before the entries are encoded for nothing.)
        if shared.appending.load(std::sync::atomic::Ordering::Acquire) > 1
            || shared.store.backend() == interlock_store::Backend::Postgres
            || entries.len() > MAX_BATCH
        {
            return Err(entries);
        }
        let Ok(mut pace) = shared.pace.try_lock() else {
            return Err(entries);
        };
        // Requests already queued go first; a closed log refuses.
        if self.tx.is_closed()
            || self.tx.capacity() < self.tx.max_capacity()
            || !shared
                .in_doubt
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .is_empty()
            || pace.last_batch > 1
            || pace.checkpoint_due(&shared.options)
            || shared.store.log_seal_requested_within(SEAL_WANTED_FOR)
        {
            return Err(entries);
        }
        let Ok(extend) = shared.extend.try_lock() else {
            return Err(entries);
        };
        let flush = match durability {
            Durability::Committed => Flush::Deferred,
            Durability::Durable => Flush::Now,
        };
        let now = now_secs();
        let start = shared.read().tree.len();
        let (reply, mut rx) = oneshot::channel();
        let (leaves, waiters) = encode(vec![(entries, reply)], start, now);
        if !leaves.is_empty() {
            match shared
                .store
                .try_append_batch_now(&leaves, None, flush)
                .await
            {
                Ok(true) => {
                    let written = Written {
                        foreign: Vec::new(),
                        foreign_note: None,
                        written: Some((leaves, None)),
                    };
                    publish(shared, Ok(written), waiters).await;
                    store_tiles_if_due(&self.shared);
                    if pace.committed(shared, flush, false) {
                        shared.paced.notify_one();
                    }
                }
                // Nothing written: the writer retries (under the database
                // lock, adopting another writer's entries, if need be).
                Ok(false) | Err(StoreError::LeafIndexMismatch { .. }) => {
                    drop((extend, pace));
                    return match entries_of(&leaves) {
                        Ok(entries) => Err(entries),
                        Err(e) => Ok(Err(e)),
                    };
                }
                Err(e) => {
                    note_in_doubt(shared, &leaves, &e);
                    drop(extend);
                    publish(shared, Err(BatchError::Store(Arc::new(e))), waiters).await;
                }
            }
        }
        Ok(rx.try_recv().unwrap_or(Err(LogError::Closed)))
    }

    /// Signs a checkpoint over every entry this log has committed, unless the
    /// latest one already covers them, and returns the latest checkpoint
    /// (`None` for an empty log). For whoever needs one now: an inclusion
    /// proof, an export, a receipt.
    pub async fn seal(&self) -> Result<Option<Arc<str>>, LogError> {
        let (reply, rx) = oneshot::channel();
        self.tx
            .send(Request::Seal { reply })
            .await
            .map_err(|_| LogError::Closed)?;
        rx.await.map_err(|_| LogError::Closed)?
    }

    /// The size the latest signed checkpoint covers (at most [`size`](Self::size)).
    pub fn sealed_size(&self) -> u64 {
        self.shared.read().sealed
    }

    /// The signed size as it changes: a receiver that wakes whenever this
    /// `Log` signs or adopts a checkpoint, so a tail of the log (alert
    /// delivery) waits on it instead of polling the store. Other writers'
    /// checkpoints show only once this `Log` catches up with them.
    pub fn sealed_watch(&self) -> tokio::sync::watch::Receiver<u64> {
        self.shared.sealed_tx.subscribe()
    }

    /// The index ranges of entries other writers (another gateway or a CLI
    /// on the same database) appended, each sent once as this `Log` adopts
    /// them — verified, under a checkpoint. A receiver that falls more than
    /// [`ADOPTED_BACKLOG`] ranges behind is told it lagged.
    pub fn adopted_ranges(&self) -> tokio::sync::broadcast::Receiver<std::ops::Range<u64>> {
        self.shared.adopted_tx.subscribe()
    }

    /// Every leaf from index `from` on, in order, each once: what this
    /// process committed comes from memory, the rest from the store (see
    /// [`LeafTail`]).
    pub fn tail(&self, from: u64) -> LeafTail {
        LeafTail::new(Arc::clone(&self.shared), from)
    }

    /// Appends one entry together with the state change it records, in one
    /// transaction: when this returns `Ok`, both are durable; on any error,
    /// neither is — [`LogError::ChangeRefused`] if the change's
    /// compare-and-swap found its row moved. For decisions whose effect must
    /// never exist without its evidence (a server trusted, a plan approved).
    pub async fn append_with_change(
        &self,
        entry: Value,
        change: StateChange,
    ) -> Result<Appended, LogError> {
        check_entry(&entry)?;
        let (reply, rx) = oneshot::channel();
        self.tx
            .send(Request::AppendWithChange {
                entry,
                change: Box::new(change),
                reply,
            })
            .await
            .map_err(|_| LogError::Closed)?;
        let mut v = rx.await.map_err(|_| LogError::Closed)??;
        v.pop().ok_or(LogError::Closed)
    }

    /// Stops the writer after the appends already queued; later appends fail
    /// with [`LogError::Closed`]. Returns once the writer has stopped.
    pub async fn close(&self) {
        let (reply, rx) = oneshot::channel();
        if self.tx.send(Request::Close { reply }).await.is_ok() {
            let _ = rx.await;
        }
    }

    /// The log's origin (checkpoint key name).
    pub fn origin(&self) -> &str {
        &self.shared.origin
    }

    /// The log's verifier key (`name+id+key`).
    pub fn verifier_key(&self) -> String {
        self.shared.verifier.to_vkey()
    }

    /// The store underneath.
    pub fn store(&self) -> &Store {
        &self.shared.store
    }

    /// Number of durable entries this `Log` has verified: everything it
    /// appended, plus other writers' entries as of its last catch-up
    /// (see [`refresh`](Self::refresh)).
    pub fn size(&self) -> u64 {
        self.shared.read().tree.len()
    }

    /// Root of the durable tree (of [`size`](Self::size) entries).
    pub fn root(&self) -> Hash {
        self.shared.read().tree.root()
    }

    /// Inclusion proof of entry `index` in the tree of `size` entries
    /// (`size` at most [`size`](Self::size); call [`refresh`](Self::refresh)
    /// first to prove entries other writers appended since).
    ///
    /// Reads at most two tiles' leaf hashes from the store (the one holding
    /// `index`, the one `size` ends inside), each checked against the tile
    /// root the verified tree holds ([`LogError::TileMismatch`] otherwise).
    pub async fn inclusion_proof(&self, index: u64, size: u64) -> Result<Vec<Hash>, LogError> {
        check_size(size, self.size())?;
        self.with_tiles(|tree, tiles| tree.inclusion_proof(index, size, tiles))
            .await
    }

    /// Consistency proof from size `old` to size `new` (`new` at most
    /// [`size`](Self::size)); reads tiles as [`inclusion_proof`](Self::inclusion_proof).
    pub async fn consistency_proof(&self, old: u64, new: u64) -> Result<Vec<Hash>, LogError> {
        check_size(new, self.size())?;
        self.with_tiles(|tree, tiles| tree.consistency_proof(old, new, tiles))
            .await
    }

    /// Runs `compute` over the tree and the tiles at hand, reading (and
    /// checking) the tiles it lacks.
    async fn with_tiles<T>(
        &self,
        compute: impl Fn(
            &TiledTree,
            &std::collections::HashMap<u64, interlock_merkle::Tree>,
        ) -> Result<T, TiledError>,
    ) -> Result<T, LogError> {
        let shared = &*self.shared;
        crate::tiles::with_tiles(&shared.store, &shared.tiles, shared, compute).await
    }

    /// Catches up with entries other writers (other processes, other `Log`s
    /// on the same database) appended since this `Log` last looked, and
    /// returns the new size. Their leaves are adopted only if the store's
    /// latest checkpoint is signed by the log key over exactly this log's
    /// tree extended by them; otherwise nothing changes and the error is
    /// [`LogError::ForeignAppend`].
    ///
    /// This `Log`'s own appends never need it (they catch up when they find
    /// their index taken). A long-running process that serves sizes, roots or
    /// proofs calls it before answering, so it does not serve a view that
    /// is stale by another process's appends: one snapshot read of the
    /// store when nothing changed.
    pub async fn refresh(&self) -> Result<u64, LogError> {
        let _extend = self.shared.extend.lock().await;
        catch_up(&self.shared).await
    }

    /// The latest signed checkpoint (a C2SP note), if anything was appended. It
    /// may not cover the newest entries yet ([`sealed_size`](Self::sealed_size));
    /// [`seal`](Self::seal) signs one that does.
    pub fn latest_checkpoint(&self) -> Option<Arc<str>> {
        self.shared.read().checkpoint.clone()
    }

    /// Fails with [`LogError::OutOfRange`] unless `index` is an entry of the
    /// verified log, catching up with other writers first if it lies beyond
    /// what this `Log` has seen: an entry another process appended is
    /// readable here without an explicit [`refresh`](Self::refresh), and
    /// only once its checkpoint has verified.
    async fn check_index(&self, index: u64) -> Result<(), LogError> {
        let requested = index.saturating_add(1);
        if requested > self.size() {
            self.refresh().await?;
        }
        check_size(requested, self.size())
    }

    /// The stored leaf at `index`: the bytes of its signed receipt (a DSSE envelope).
    pub async fn leaf(&self, index: u64) -> Result<Vec<u8>, LogError> {
        self.check_index(index).await?;
        Ok(self
            .shared
            .store
            .leaf(index)
            .await?
            .ok_or_else(|| StoreError::NotFound {
                what: format!("log entry {index}"),
            })?
            .data)
    }

    /// [`entry`](Self::entry), checked against the verified tree: the stored
    /// bytes must hash to the leaf the signed checkpoints commit to at `index`,
    /// so an edited row in the database is refused, not believed.
    pub async fn verified_entry(&self, index: u64) -> Result<Value, LogError> {
        self.read_entry(index, true).await
    }

    /// The facts recorded at `index` (the receipt's predicate, with its `seq`).
    pub async fn entry(&self, index: u64) -> Result<Value, LogError> {
        self.read_entry(index, false).await
    }

    async fn read_entry(&self, index: u64, against_tree: bool) -> Result<Value, LogError> {
        self.check_index(index).await?;
        let row = self
            .shared
            .store
            .leaf(index)
            .await?
            .ok_or_else(|| StoreError::NotFound {
                what: format!("log entry {index}"),
            })?;
        if against_tree
            && self
                .with_tiles(|tree, tiles| tree.leaf(index, tiles))
                .await?
                != leaf_hash(&row.data)
        {
            return Err(LogError::MalformedEntry {
                index,
                reason: "its stored bytes are not the leaf the signed log commits to".into(),
            });
        }
        interlock_receipts::open_leaf_unverified(&row.data)
            .map(|opened| Value::Object(opened.predicate))
            .map_err(|e| LogError::MalformedEntry {
                index,
                reason: e.to_string(),
            })
    }
}

fn check_size(requested: u64, size: u64) -> Result<(), LogError> {
    if requested > size {
        return Err(LogError::OutOfRange { requested, size });
    }
    Ok(())
}

fn check_entry(e: &Value) -> Result<(), LogError> {
    let obj = e.as_object().ok_or(LogError::NotAnObject(e.kind()))?;
    if obj.contains_key("seq") {
        return Err(LogError::SeqPresent);
    }
    Ok(())
}

/// A number for a log entry (indices stay far below 2^53).
fn safe(n: u64) -> Number {
    i64::try_from(n)
        .ok()
        .and_then(Number::from_i64)
        .unwrap_or_else(|| Number::from_i64(interlock_canon::MAX_SAFE_INTEGER).expect("safe"))
}

/// A log as it opens: its tree, its latest checkpoint, the size that signs,
/// and how many of the tree's tiles the store holds.
struct Loaded {
    tree: TiledTree,
    checkpoint: Option<Arc<str>>,
    signed: u64,
    stored_tiles: u64,
}

/// [`load_verified`], deciding what to do with leaves no checkpoint signs.
///
/// A live writer (another process) signs its newest leaves within its
/// `checkpoint_interval`: if the latest checkpoint moves on within
/// [`FOREIGN_SEAL_WAIT`], the log opens on what is signed and leaves the rest
/// to that writer. If nothing is signed meanwhile, their writer is dead (this
/// process, before a crash, most often): they were acknowledged, so they are
/// kept — each must be a well-formed leaf carrying its own index — and the
/// caller records their adoption.
async fn load_adopting(
    store: &Store,
    verifier: &NoteVerifier,
    origin: &str,
) -> Result<Loaded, LogError> {
    let mut read = load_verified(store, verifier, origin).await?;
    let first_sealed = read.signed;
    if first_sealed == read.size() {
        return Ok(read.into_loaded(first_sealed));
    }
    let deadline = Instant::now() + FOREIGN_SEAL_WAIT;
    want_seal(store);
    while Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(25)).await;
        read = load_verified(store, verifier, origin).await?;
        if read.signed > first_sealed || read.signed == read.size() {
            // A live writer signs: open on what is signed.
            let signed = read.signed;
            return Ok(read.into_loaded(signed));
        }
    }
    let end = read.size();
    for row in store.leaves(read.signed..end).await? {
        check_adoptable(&row)?;
    }
    Ok(read.into_loaded(end))
}

/// Whether an entry no checkpoint signs may be adopted as stored: a
/// well-formed leaf, stored under its own index and hash.
fn check_adoptable(row: &LeafRow) -> Result<(), LogError> {
    let opened = interlock_receipts::open_leaf_unverified(&row.data).map_err(|e| {
        LogError::MalformedEntry {
            index: row.idx,
            reason: format!("an unsigned entry cannot be adopted: {e}"),
        }
    })?;
    if opened.seq != row.idx || leaf_hash(&row.data) != row.leaf_hash {
        return Err(LogError::MalformedEntry {
            index: row.idx,
            reason:
                "an unsigned entry cannot be adopted: it is not stored under its own index and hash"
                    .into(),
        });
    }
    Ok(())
}

/// What [`load_verified`] read and checked: the stored tile roots inside the
/// signed size, the leaf hashes after them, the latest checkpoint and the
/// size it signs.
struct Verified {
    tiles: Vec<Hash>,
    /// From entry `tiles.len() × TILE_WIDTH` on.
    hashes: Vec<Hash>,
    checkpoint: Option<Arc<str>>,
    signed: u64,
}

impl Verified {
    fn base(&self) -> u64 {
        self.tiles.len() as u64 * TILE_WIDTH
    }

    /// The stored size.
    fn size(&self) -> u64 {
        self.base() + self.hashes.len() as u64
    }

    /// The log opened on its first `size` entries (`base <= size <= self.size()`).
    fn into_loaded(self, size: u64) -> Loaded {
        let keep = usize::try_from(size - self.base()).unwrap_or(usize::MAX);
        Loaded {
            tree: TiledTree::from_parts_keeping(
                &self.tiles,
                &self.hashes[..keep],
                crate::tiles::RECENT_TILES,
            ),
            stored_tiles: self.tiles.len() as u64,
            checkpoint: self.checkpoint,
            signed: self.signed,
        }
    }
}

/// Loads the log's tree and checks it against the latest signed checkpoint,
/// which must sign a prefix of the stored leaves (the leaves after it are
/// committed but not yet signed). Everything comes from one snapshot, so a
/// log another process is appending to opens cleanly.
///
/// The tree is made of the stored tile roots (one per 256 entries, inside
/// the signed size) and the leaf hashes after them: a 10-million-entry log
/// opens from 40 thousand rows. Tile roots are a cache of what the leaves
/// determine: if they do not reproduce the signed root, the tree is rebuilt
/// from every leaf hash, and if that verifies, the tile rows are dropped
/// (and stored again from the rebuilt tree). The leaves under a stored tile
/// are checked against it whenever they are read ([`Log::inclusion_proof`],
/// [`Log::verified_entry`]); `audit verify` checks them all.
async fn load_verified(
    store: &Store,
    verifier: &NoteVerifier,
    origin: &str,
) -> Result<Verified, LogError> {
    let (tiles, hashes, row) = store.log_tiles_and_tail(TILE_WIDTH).await?;
    if tiles.is_empty() {
        return verify_loaded(verifier, origin, tiles, hashes, row);
    }
    let tiled = verify_loaded(verifier, origin, tiles, hashes, row);
    let Err(tiled_error) = tiled else {
        return tiled;
    };
    let (hashes, row) = store.log_tail(0).await?;
    let whole = verify_loaded(verifier, origin, Vec::new(), hashes, row)?;
    tracing::warn!(
        origin,
        error = %tiled_error,
        "the log's stored tile roots do not reproduce its signed root, and its leaves do: the tile roots are rebuilt from the leaves"
    );
    store.drop_log_tiles(0).await?;
    Ok(whole)
}

/// Checks `tiles` followed by `hashes` against the latest checkpoint `row`.
fn verify_loaded(
    verifier: &NoteVerifier,
    origin: &str,
    tiles: Vec<Hash>,
    hashes: Vec<Hash>,
    row: Option<CheckpointRow>,
) -> Result<Verified, LogError> {
    let signed = row.as_ref().map_or(0, |r| r.size);
    let read = Verified {
        tiles,
        hashes,
        checkpoint: None,
        signed,
    };
    let size = read.size();
    if signed > size {
        return Err(LogError::CheckpointMismatch(format!(
            "the latest checkpoint signs {signed} entries but {size} are stored"
        )));
    }
    let Some(signed_tail) = signed.checked_sub(read.base()) else {
        return Err(LogError::CheckpointMismatch(format!(
            "tile roots are stored beyond the {signed} signed entries"
        )));
    };
    let root = || {
        let keep = usize::try_from(signed_tail).unwrap_or(usize::MAX);
        TiledTree::from_parts(&read.tiles, &read.hashes[..keep]).root()
    };
    let checkpoint = verify_checkpoint(verifier, origin, row, signed, root)?;
    if checkpoint.is_none() && size > 0 {
        // A writer's first commit always signs one, so leaves with no
        // checkpoint at all were not written by a writer of this log.
        return Err(LogError::CheckpointMismatch(format!(
            "{size} entries are stored but no checkpoint signs them"
        )));
    }
    Ok(Verified { checkpoint, ..read })
}

/// Checks the latest stored checkpoint `row` against a tree of `size`
/// leaves whose root `root` computes: signed by the log key, for this
/// origin, its row agreeing with its note, and signing exactly that tree.
/// Returns its note (`None` for an empty log without checkpoint).
fn verify_checkpoint(
    verifier: &NoteVerifier,
    origin: &str,
    row: Option<CheckpointRow>,
    size: u64,
    root: impl FnOnce() -> Hash,
) -> Result<Option<Arc<str>>, LogError> {
    let Some(row) = row else {
        if size == 0 {
            return Ok(None);
        }
        return Err(LogError::CheckpointMismatch(format!(
            "{size} entries are stored but no checkpoint signs them"
        )));
    };
    let cp = open_checkpoint(&row.note, std::slice::from_ref(verifier)).map_err(|source| {
        LogError::CheckpointSignature {
            size: row.size,
            source,
        }
    })?;
    let mismatch = |m: String| Err(LogError::CheckpointMismatch(m));
    if cp.origin != origin {
        return mismatch(format!(
            "checkpoint at size {} names origin {:?}, not {origin:?}",
            row.size, cp.origin
        ));
    }
    if cp.size != row.size || cp.root != row.root {
        return mismatch(format!(
            "checkpoint row at size {} differs from its signed note (size {})",
            row.size, cp.size
        ));
    }
    if cp.size != size {
        return mismatch(format!(
            "the latest checkpoint signs {} entries but {size} are stored",
            cp.size
        ));
    }
    if root() != cp.root {
        return mismatch(format!(
            "entries 0..{} do not reproduce the root signed at size {}",
            cp.size, cp.size
        ));
    }
    Ok(Some(Arc::from(row.note)))
}

/// Catches up with leaves other writers committed beyond this log's tree.
/// The caller holds `shared.extend`.
///
/// Reads the stored leaf hashes from the tree's size on and the latest
/// checkpoint in one snapshot, and adopts the leaves only if that checkpoint
/// verifies as [`load_verified`] would verify it at open — signed by the log
/// key, and its root that of this tree extended by exactly those leaves —
/// which also proves the other writer extended *this* history rather than
/// rewriting it. Returns the new size. Nothing changes on failure: the
/// error is [`LogError::ForeignAppend`] (or [`LogError::Store`] when the
/// store could not be read).
async fn catch_up(shared: &Shared) -> Result<u64, LogError> {
    settle_in_doubt(shared).await?;
    let (size, sealed) = {
        let st = shared.read();
        (st.tree.len(), st.sealed)
    };
    let foreign = |source: LogError| LogError::ForeignAppend {
        size,
        source: Arc::new(source),
    };
    let (mut tail, row) = match shared.store.log_tail(size).await {
        Ok(read) => read,
        // A hole after our entries, or an unreadable hash: not an extension.
        Err(e @ StoreError::Malformed(_)) => return Err(foreign(LogError::Store(e))),
        Err(e) => return Err(e.into()),
    };
    let signed = row.as_ref().map_or(0, |r| r.size);
    if signed <= sealed {
        // Nothing newer is signed: leaves another writer appended after ours
        // are adopted once its checkpoint over them verifies.
        return Ok(size);
    }
    if signed < size {
        // A checkpoint over part of our own tail, signed by another writer:
        // only possible if it adopted our leaves, which a writer never does.
        return Err(foreign(LogError::CheckpointMismatch(format!(
            "another writer signed size {signed}, inside this log's unsigned tail ({sealed}..{size})"
        ))));
    }
    // Adopt only what the new checkpoint signs; later leaves wait for theirs.
    tail.truncate(usize::try_from(signed - size).unwrap_or(usize::MAX));
    let mut frontier = shared.read().tree.frontier();
    for h in &tail {
        frontier.push(*h);
    }
    let note = verify_checkpoint(
        &shared.verifier,
        &shared.origin,
        row,
        frontier.size(),
        || frontier.root(),
    )
    .map_err(foreign)?;
    let new_size = {
        let mut st = shared.write();
        st.tree.extend(tail);
        st.checkpoint = note;
        st.sealed = st.tree.len();
        shared.sealed_tx.send_replace(st.sealed);
        st.tree.len()
    };
    if new_size > size {
        // No receivers is fine: nobody announces adopted entries.
        let _ = shared.adopted_tx.send(size..new_size);
    }
    tracing::debug!(
        origin = %shared.origin,
        from = size,
        to = new_size,
        "caught up with another writer's appends"
    );
    Ok(new_size)
}

/// How many times the writer yields to let acknowledged appenders come
/// back before committing a smaller batch.
const MAX_GATHER_YIELDS: u32 = 8;

type Reply = oneshot::Sender<Result<Vec<Appended>, LogError>>;

/// One waiter of a batch and how many of the batch's leaves are its.
struct Pending {
    count: usize,
    reply: Reply,
}

/// The checkpoint signer the writer keeps: built (and its key checked) once.
type Notes<'a> = NoteSigner<'a, AsSigner<'a>>;

/// The single writer: drains, commits, acknowledges; repeat. An append that
/// finds nothing committing or queued and no checkpoint due commits itself
/// ([`Log::append_inline`]); the writer batches the rest, signs checkpoints
/// and runs the timers. Both hold `Shared::pace` while they commit.
///
/// A commit runs inline on this task, start to end: encoding the leaves, and
/// the store's append, which is synchronous SQLite with its `fsync` (see
/// `interlock-store`'s `appender.rs`). So it holds the tokio worker it runs
/// on for the commit's duration while the other workers keep serving. That is
/// deliberate: an appender woken on this task's worker (tokio's LIFO slot) and
/// answered there costs no thread switch, where handing the commit to another
/// thread and back cost two per commit, a large share of a proxied call's CPU
/// (`docs/BENCHMARKS.md`).
///
/// Checkpoints: a commit signs one if none was signed for `checkpoint_interval`;
/// otherwise the writer signs one when the interval ends (a checkpoint-only
/// write), or at once on [`Log::seal`] and on close. `fsync`: a batch of
/// [`Durability::Committed`] entries only is committed without one, and the
/// writer `fsync`s the WAL when `flush_window` ends unless a durable commit
/// did so first.
///
/// First it builds the checkpoint signer it keeps for its life — which
/// checks, with one signature, that the signer's key is the log's — and
/// reports on `ready`; it stops if that fails.
async fn writer(
    shared: Arc<Shared>,
    signer: CheckpointSigner,
    mut rx: mpsc::Receiver<Request>,
    ready: oneshot::Sender<Result<(), interlock_merkle::NoteError>>,
) {
    let adapter = AsSigner(&*signer);
    let notes = match NoteSigner::new(&shared.origin, shared.verifier.key, &adapter) {
        Ok(n) => n,
        Err(e) => {
            let _ = ready.send(Err(e));
            return;
        }
    };
    if ready.send(Ok(())).is_err() {
        return;
    }
    let options = shared.options;
    let mut batch: Vec<(Vec<Value>, Reply)> = Vec::new();
    let mut queued = 0usize;
    // Whether every entry of `batch` may skip the commit's fsync.
    let mut deferrable = true;
    let mut closing: Option<oneshot::Sender<()>> = None;
    let mut seal_requests: Vec<oneshot::Sender<Result<Option<Arc<str>>, LogError>>> = Vec::new();
    // A request that did not fit the previous batch.
    let mut carry: Option<Request> = None;
    // An entry with its state change: committed on its own, after the batch
    // gathered before it (order of arrival is kept).
    let mut with_change: Option<(Value, StateChange, Reply)> = None;
    // Waiters answered by the previous commit, and gather yields so far.
    let mut last_waiters = 0usize;
    let mut yields = 0u32;
    loop {
        let first = match carry.take() {
            Some(r) => r,
            None => {
                let due = shared.pace.lock().await.next_due();
                let next = tokio::select! {
                    biased;
                    r = rx.recv() => r,
                    // An inline commit set a deadline: wait for it instead.
                    () = shared.paced.notified() => continue,
                    () = tokio::time::sleep_until(due.unwrap_or_else(Instant::now).into()), if due.is_some() => {
                        let now = Instant::now();
                        let mut pace = shared.pace.lock().await;
                        pace.flush_if_due(&shared, now).await;
                        if pace.seal_due.is_some_and(|d| d <= now) {
                            pace.seal_due = None;
                            if seal_now(&shared, &notes).await.is_ok() {
                                pace.signed_at = Some(Instant::now());
                            }
                        }
                        continue;
                    }
                };
                match next {
                    Some(r) => r,
                    None => break,
                }
            }
        };
        // Whoever holds `pace` commits: inline appenders queue meanwhile.
        let mut pace = shared.pace.lock().await;
        let mut next = Some(first);
        while let Some(req) = next.take() {
            match req {
                Request::Close { reply } => {
                    closing = Some(reply);
                    break;
                }
                Request::Seal { reply } => seal_requests.push(reply),
                Request::AppendWithChange {
                    entry,
                    change,
                    reply,
                } => {
                    with_change = Some((entry, *change, reply));
                    break;
                }
                Request::Append {
                    entries: es,
                    durability,
                    reply,
                } => {
                    if queued > 0 && queued + es.len() > MAX_BATCH {
                        carry = Some(Request::Append {
                            entries: es,
                            durability,
                            reply,
                        });
                        break;
                    }
                    queued += es.len();
                    deferrable &= durability == Durability::Committed;
                    batch.push((es, reply));
                }
            }
            if queued >= MAX_BATCH {
                break;
            }
            next = rx.try_recv().ok();
            // Group-commit gather: the waiters acknowledged by the previous
            // commit are usually about to append again, but their tasks
            // have not run yet. Yielding lets them, so one fsync covers
            // them too instead of leaving them for the next commit. Stop as
            // soon as a yield brings nothing (a lone appender pays one yield).
            if next.is_none() && batch.len() < last_waiters && yields < MAX_GATHER_YIELDS {
                yields += 1;
                tokio::task::yield_now().await;
                next = rx.try_recv().ok();
            }
        }
        yields = 0;
        if !batch.is_empty() {
            last_waiters = batch.len();
            pace.last_batch = batch.len();
            let due = pace.checkpoint_due(&options);
            let wanted = !due && shared.store.log_seal_requested_within(SEAL_WANTED_FOR);
            let sign = due || wanted;
            let flush = if deferrable {
                Flush::Deferred
            } else {
                Flush::Now
            };
            let signed = commit(&shared, &notes, std::mem::take(&mut batch), sign, flush).await;
            store_tiles_if_due(&shared);
            // A failed batch made nothing durable: earlier deferred leaves
            // still wait for their fsync.
            if let Some(signed) = signed {
                pace.committed(&shared, flush, signed);
            }
            if wanted {
                // Another writer waits for the lock: leave it a moment.
                tokio::time::sleep(SEAL_WANTED_GAP).await;
            }
            queued = 0;
            deferrable = true;
        }
        if let Some((entry, change, reply)) = with_change.take()
            && let Some(signed) = commit_with_change(&shared, &notes, entry, change, reply).await
        {
            // Durable (and signed, unless nothing was written).
            pace.committed(&shared, Flush::Now, signed);
        }
        if !seal_requests.is_empty() || closing.is_some() {
            let unsealed = {
                let st = shared.read();
                st.sealed < st.tree.len()
            };
            let sealed = seal_now(&shared, &notes).await.map_err(|e| e.to_string());
            if unsealed && sealed.is_ok() {
                pace.signed_at = Some(Instant::now());
            }
            for reply in seal_requests.drain(..) {
                let _ = reply.send(sealed.clone().map_err(LogError::Sealing));
            }
            pace.seal_due = None;
        }
        if let Some(reply) = closing.take() {
            store_tiles(&shared).await;
            if std::mem::take(&mut pace.unflushed)
                && let Err(e) = shared.store.flush_log().await
            {
                tracing::error!(error = %e, "flushing the log's committed entries failed");
            }
            rx.close();
            // Fail whatever was queued behind the close.
            while let Ok(req) = rx.try_recv() {
                match req {
                    Request::Append { reply, .. } | Request::AppendWithChange { reply, .. } => {
                        let _ = reply.send(Err(LogError::Closed));
                    }
                    Request::Seal { reply } => {
                        let _ = reply.send(Err(LogError::Closed));
                    }
                    Request::Close { reply } => {
                        let _ = reply.send(());
                    }
                }
            }
            if let Some(Request::Append { reply, .. } | Request::AppendWithChange { reply, .. }) =
                carry.take()
            {
                let _ = reply.send(Err(LogError::Closed));
            }
            let _ = reply.send(());
            break;
        }
    }
    tracing::debug!(origin = %shared.origin, "log writer stopped");
}

/// Signs a checkpoint over the whole tree and writes it alone, unless the
/// latest one already covers the tree. Returns the latest checkpoint.
async fn seal_now(shared: &Shared, notes: &Notes<'_>) -> Result<Option<Arc<str>>, LogError> {
    let _extend = shared.extend.lock().await;
    settle_in_doubt(shared).await?;
    let (size, sealed, latest) = {
        let st = shared.read();
        (st.tree.len(), st.sealed, st.checkpoint.clone())
    };
    if sealed == size {
        return Ok(latest);
    }
    let frontier = shared.read().tree.frontier();
    let row = sign_row(shared, notes, &frontier, now_secs()).map_err(|e| e.to_log_error())?;
    if let Err(e) = shared.store.append_batch(&[], Some(&row)).await {
        tracing::error!(error = %e, size, "signing the log's checkpoint failed");
        return Err(LogError::WriteFailed(Arc::new(e)));
    }
    let note: Arc<str> = Arc::from(row.note);
    let mut st = shared.write();
    st.checkpoint = Some(Arc::clone(&note));
    st.sealed = size;
    shared.sealed_tx.send_replace(st.sealed);
    Ok(Some(note))
}

/// Why a batch failed, shared by every waiter of the batch.
#[derive(Clone)]
enum BatchError {
    Store(Arc<StoreError>),
    Sign(interlock_merkle::NoteError),
    /// The state change committed with the batch lost its compare-and-swap.
    ChangeRefused(String),
    /// Another writer changed the log, and the change does not verify.
    Foreign {
        size: u64,
        source: Arc<LogError>,
    },
}

impl BatchError {
    fn to_log_error(&self) -> LogError {
        match self {
            BatchError::Store(e) => LogError::WriteFailed(Arc::clone(e)),
            BatchError::Sign(e) => LogError::Signing(e.clone()),
            BatchError::ChangeRefused(e) => LogError::ChangeRefused(e.clone()),
            BatchError::Foreign { size, source } => LogError::ForeignAppend {
                size: *size,
                source: Arc::clone(source),
            },
        }
    }
}

/// Assigns indices and encodes each waiter's entries as statement leaves (the
/// in-toto statement whose predicate is the entry plus its `seq`). A waiter
/// whose entry cannot be stored (too large, index beyond 2^53) is answered
/// with its error here and takes no index, so it does not fail the rest of
/// the batch.
fn encode(batch: Vec<(Vec<Value>, Reply)>, start: u64, now: i64) -> (Vec<LeafRow>, Vec<Pending>) {
    let mut leaves: Vec<LeafRow> = Vec::with_capacity(batch.iter().map(|(e, _)| e.len()).sum());
    let mut waiters = Vec::with_capacity(batch.len());
    'waiter: for (entries, reply) in batch {
        let mark = leaves.len();
        let count = entries.len();
        for entry in entries {
            let index = start + leaves.len() as u64;
            let data = predicate(entry, index, now).and_then(|p| {
                interlock_receipts::seal_statement(&p).map_err(|e| LogError::Sealing(e.to_string()))
            });
            match data {
                Ok(data) => leaves.push(LeafRow {
                    idx: index,
                    leaf_hash: leaf_hash(&data),
                    data,
                    appended_at: now,
                }),
                Err(e) => {
                    leaves.truncate(mark);
                    let _ = reply.send(Err(e));
                    continue 'waiter;
                }
            }
        }
        waiters.push(Pending { count, reply });
    }
    (leaves, waiters)
}

/// The receipt predicate of `entry` at `index`: the entry's facts plus `seq`,
/// and `time` (when the log recorded it) unless the entry states its own.
fn predicate(entry: Value, index: u64, now: i64) -> Result<CanonicalPredicate, LogError> {
    let Value::Object(mut obj) = entry else {
        return Err(LogError::NotAnObject(entry.kind()));
    };
    if !obj.contains_key("time")
        && let Some(t) = Number::from_i64(now)
    {
        obj.insert("time".to_owned(), Value::Number(t));
    }
    let seq = i64::try_from(index)
        .ok()
        .and_then(Number::from_i64)
        .ok_or(LogError::OutOfRange {
            requested: index,
            size: interlock_canon::MAX_SAFE_INTEGER as u64,
        })?;
    obj.insert("seq".to_owned(), Value::Number(seq));
    // The bytes measured here are the ones the seal digests and embeds.
    let predicate = CanonicalPredicate::new(obj);
    let size = predicate.jcs().len();
    if size > MAX_ENTRY_BYTES / 2 {
        return Err(LogError::EntryTooLarge {
            size,
            max: MAX_ENTRY_BYTES / 2,
        });
    }
    Ok(predicate)
}

/// The entries of leaves encoded but not written (an inline commit handing
/// its batch to the writer): their predicates, `seq` to be replaced, `time`
/// kept.
fn entries_of(leaves: &[LeafRow]) -> Result<Vec<Value>, LogError> {
    leaves
        .iter()
        .map(|l| {
            interlock_receipts::open_leaf_unverified(&l.data)
                .map(|opened| Value::Object(opened.predicate))
                .map_err(|e| {
                    LogError::Sealing(format!("cannot re-read a sealed entry to re-seal it: {e}"))
                })
        })
        .collect()
}

/// Re-encodes a batch that lost the race for its indices, at `start`.
///
/// The leaves already encoded carry their old `seq`, so they cannot be
/// reused; their predicates are read back from the leaves — only on this
/// path, so the common path keeps no copy of the entries — and go through
/// [`encode`] again, keeping the `time` they were first given. A waiter whose
/// entries no longer fit (a longer `seq` pushing an entry over the size
/// limit) is answered with its error, as at first.
fn reseal(
    leaves: Vec<LeafRow>,
    waiters: Vec<Pending>,
    start: u64,
    now: i64,
) -> (Vec<LeafRow>, Vec<Pending>) {
    let mut it = leaves.into_iter();
    let mut batch = Vec::with_capacity(waiters.len());
    for w in waiters {
        let entries: Result<Vec<Value>, _> = it
            .by_ref()
            .take(w.count)
            .map(|l| {
                interlock_receipts::open_leaf_unverified(&l.data)
                    .map(|opened| Value::Object(opened.predicate))
            })
            .collect();
        match entries {
            Ok(entries) => batch.push((entries, w.reply)),
            Err(e) => {
                let _ = w.reply.send(Err(LogError::Sealing(format!(
                    "cannot re-read a sealed entry to re-seal it: {e}"
                ))));
            }
        }
    }
    encode(batch, start, now)
}

/// The checkpoint for `frontier` (the tree with a batch's leaves), signed.
fn sign_row(
    shared: &Shared,
    notes: &Notes<'_>,
    frontier: &Frontier,
    now: i64,
) -> Result<CheckpointRow, BatchError> {
    let (size, root) = (frontier.size(), frontier.root());
    let cp = Checkpoint {
        origin: shared.origin.clone(),
        size,
        root,
        extensions: Vec::new(),
    };
    let note = sign_checkpoint_with(&cp, notes)
        .map_err(BatchError::Sign)?
        .to_string();
    Ok(CheckpointRow {
        size,
        root,
        note,
        created_at: now,
    })
}

/// The first, optimistic write of a batch encoded for indices from the tree's
/// size: with `sign`, computes the extended tree's root beside the tree and
/// signs its checkpoint; appends leaves (and checkpoint) in one transaction.
/// Signing happens outside the database lock, so other processes' writers are
/// not held up by it.
async fn write_batch(
    shared: &Shared,
    notes: &Notes<'_>,
    leaves: &[LeafRow],
    now: i64,
    sign: bool,
    flush: Flush,
) -> Result<Option<CheckpointRow>, BatchError> {
    let row = if sign {
        let mut frontier = shared.read().tree.frontier();
        for l in leaves {
            frontier.push(l.leaf_hash);
        }
        Some(sign_row(shared, notes, &frontier, now)?)
    } else {
        None
    };
    shared
        .store
        .append_batch_flushed(leaves, row.as_ref(), flush)
        .await
        .map_err(|e| BatchError::Store(Arc::new(e)))?;
    Ok(row)
}

/// What a commit found and wrote.
struct Written {
    /// Other writers' leaf hashes, verified, that precede the batch (only
    /// found by the locked retry).
    foreign: Vec<Hash>,
    /// The store's latest checkpoint over them (before the batch).
    foreign_note: Option<Arc<str>>,
    /// The re-encoded batch and its checkpoint, if one was signed (`None`
    /// if every waiter of the batch was answered with its own error while
    /// re-encoding).
    written: Option<(Vec<LeafRow>, Option<CheckpointRow>)>,
}

/// The retry of a batch that lost the race for its indices: under the
/// database write lock ([`Store::append_batch_locked`]), reads what other
/// writers appended since the tree's size, checks that the latest
/// checkpoint signs this tree extended by exactly that (as [`catch_up`]
/// does), re-encodes the batch after it, signs and writes. Nobody can append
/// in between, so it cannot lose the race again. `waiters` is updated in
/// place (re-encoding can answer a waiter on its own).
///
/// If the other writer's leaves are not signed yet (it signs within its
/// `checkpoint_interval`), the transaction is rolled back — so that writer
/// can take the lock to sign — and tried again shortly, for at most
/// [`FOREIGN_SEAL_WAIT`]; then the batch fails with
/// [`LogError::ForeignAppend`] (leaves nobody signs are adopted only when
/// the log is reopened, and recorded as adopted).
async fn write_batch_locked(
    shared: &Shared,
    notes: &Notes<'_>,
    leaves: Vec<LeafRow>,
    waiters: &mut Vec<Pending>,
    now: i64,
    change: Option<&StateChange>,
) -> Result<Written, BatchError> {
    let mut size = shared.read().tree.len();
    let mut deadline = Instant::now() + FOREIGN_SEAL_WAIT;
    let mut leaves = Some(leaves);
    loop {
        // Verified foreign leaves are adopted even if the batch itself then fails.
        let mut verified: Option<(Vec<Hash>, Option<Arc<str>>)> = None;
        let mut unsigned: Option<(u64, u64)> = None;
        // The leaves this attempt writes, in case its commit goes unanswered.
        let mut attempted: Vec<LeafRow> = Vec::new();
        let built = shared
            .store
            .append_batch_locked(size, change, |tail, latest| {
                let signed = latest.as_ref().map_or(0, |r| r.size);
                let end = size + tail.len() as u64;
                if !tail.is_empty() && signed < end {
                    unsigned = Some((signed.max(size), end));
                    return Err(BatchError::Foreign {
                        size,
                        source: Arc::new(LogError::CheckpointMismatch(format!(
                            "entries {}..{end} of another writer are not signed yet",
                            signed.max(size)
                        ))),
                    });
                }
                let mut frontier = shared.read().tree.frontier();
                for h in &tail {
                    frontier.push(*h);
                }
                let note = if tail.is_empty() {
                    // Nothing foreign: the latest checkpoint is ours (or one
                    // another writer signed over a prefix of our tree).
                    shared.read().checkpoint.clone()
                } else {
                    verify_checkpoint(
                        &shared.verifier,
                        &shared.origin,
                        latest,
                        frontier.size(),
                        || frontier.root(),
                    )
                    .map_err(|e| BatchError::Foreign {
                        size,
                        source: Arc::new(e),
                    })?
                };
                verified = Some((tail, note));
                let (encoded, rest) = reseal(
                    leaves.take().unwrap_or_default(),
                    std::mem::take(waiters),
                    frontier.size(),
                    now,
                );
                *waiters = rest;
                if encoded.is_empty() {
                    return Ok((encoded, None));
                }
                for l in &encoded {
                    frontier.push(l.leaf_hash);
                }
                let row = sign_row(shared, notes, &frontier, now)?;
                attempted.clone_from(&encoded);
                Ok((encoded, Some(row)))
            })
            .await;
        if unsigned.is_some() && Instant::now() < deadline {
            // Rolled back with nothing consumed: ask the other writer to sign,
            // wait for its checkpoint outside the lock, then try again.
            want_seal(&shared.store);
            // Short: the other writer signs its very next commit now.
            tokio::time::sleep(Duration::from_millis(2)).await;
            continue;
        }
        if let Some((_, end)) = unsigned {
            // Nobody signed them within the wait: their writer is gone — dead,
            // or cut off from the database — and every writer of the team
            // would refuse to append after them until a restart (issue 44).
            // They are adopted as `Log::open` adopts a dead writer's tail, and
            // recorded so with this batch, whose checkpoint signs them.
            let adopted = adopt_stalled(shared, end)
                .await
                .map_err(|e| BatchError::Foreign {
                    size,
                    source: Arc::new(e),
                })?;
            if !adopted.is_empty() {
                let (mut record, mut record_waiter) = encode(
                    vec![(
                        vec![tail_adopted_entry(
                            adopted.start,
                            adopted.end,
                            "these entries were committed but their writer did not sign them within the wait (it stopped, or lost the database); they were adopted as stored",
                        )],
                        oneshot::channel().0,
                    )],
                    0,
                    now,
                );
                record.extend(leaves.take().unwrap_or_default());
                leaves = Some(record);
                record_waiter.append(waiters);
                *waiters = record_waiter;
            }
            size = shared.read().tree.len();
            deadline = Instant::now() + FOREIGN_SEAL_WAIT;
            continue;
        }
        let (foreign, foreign_note) = verified.unwrap_or_default();
        let written = match built {
            Ok(Ok((leaves, row))) if !leaves.is_empty() => Some((leaves, row)),
            Ok(Ok(_)) => None,
            Ok(Err(e)) => {
                adopt(shared, foreign, foreign_note);
                return Err(e);
            }
            Err(StoreError::ChangeRefused { what }) => {
                return Err(BatchError::ChangeRefused(what));
            }
            // A hole after our entries, or an unreadable hash: not an extension.
            Err(e @ StoreError::Malformed(_)) => {
                return Err(BatchError::Foreign {
                    size,
                    source: Arc::new(LogError::Store(e)),
                });
            }
            Err(StoreError::LeafIndexMismatch { expected, .. }) if expected < size => {
                return Err(removed(expected, size));
            }
            Err(e) => {
                // Foreign leaves it verified come first; the batch is in
                // doubt after them.
                adopt(shared, foreign, foreign_note);
                note_in_doubt(shared, &attempted, &e);
                return Err(BatchError::Store(Arc::new(e)));
            }
        };
        return Ok(Written {
            foreign,
            foreign_note,
            written,
        });
    }
}

/// Adopts into the tree the leaves up to `end` that another writer appended
/// and did not sign: first what a checkpoint signs (verified, as
/// [`catch_up`]), then the rest, each checked as a dead writer's tail is
/// ([`check_adoptable`]).
/// Returns the range adopted unsigned. The caller holds `extend`.
async fn adopt_stalled(shared: &Shared, end: u64) -> Result<std::ops::Range<u64>, LogError> {
    catch_up(shared).await?;
    let from = shared.read().tree.len();
    if from >= end {
        return Ok(from..from);
    }
    let rows = shared.store.leaves(from..end).await?;
    if rows.len() as u64 != end - from {
        return Err(LogError::CheckpointMismatch(format!(
            "entries {from}..{end} of another writer are not all stored"
        )));
    }
    let mut hashes = Vec::with_capacity(rows.len());
    for row in rows {
        check_adoptable(&row)?;
        hashes.push(row.leaf_hash);
    }
    shared.write().tree.extend(hashes);
    let _ = shared.adopted_tx.send(from..end);
    tracing::warn!(
        from,
        to = end,
        "adopting log entries another writer appended and did not sign (it stopped, or lost the database)"
    );
    Ok(from..end)
}

/// The `log.tail_adopted` entry recording that entries `from..to` were
/// adopted unsigned, and why.
fn tail_adopted_entry(from: u64, to: u64, reason: &str) -> Value {
    let mut m = interlock_canon::Map::new();
    m.insert("type".into(), "log.tail_adopted".into());
    m.insert("from".into(), Value::Number(safe(from)));
    m.insert("to".into(), Value::Number(safe(to)));
    m.insert("reason".into(), reason.into());
    Value::Object(m)
}

/// The store's next index is below what this log verified.
fn removed(next: u64, size: u64) -> BatchError {
    BatchError::Foreign {
        size,
        source: Arc::new(LogError::CheckpointMismatch(format!(
            "the store's next index is {next} but this log verified {size} entries: \
             entries were removed outside the log"
        ))),
    }
}

/// Extends the tree with verified leaves another writer appended.
fn adopt(shared: &Shared, foreign: Vec<Hash>, note: Option<Arc<str>>) {
    if foreign.is_empty() {
        return;
    }
    let mut st = shared.write();
    let from = st.tree.len();
    st.tree.extend(foreign);
    st.checkpoint = note;
    st.sealed = st.tree.len();
    shared.sealed_tx.send_replace(st.sealed);
    let _ = shared.adopted_tx.send(from..st.tree.len());
}

/// Commits one batch and answers its waiters; returns whether a checkpoint
/// was signed with it, or `None` if nothing of it was written.
///
/// The first write is optimistic: encoded for the tree's size, signed (with
/// `sign`) and appended without a prior read. If another writer took that
/// index ([`StoreError::LeafIndexMismatch`] with a larger next index —
/// detected inside the write transaction, so the common path pays no extra
/// query), the batch is re-encoded and written once more under the write
/// lock ([`write_batch_locked`]), which adopts the other writer's verified
/// entries and cannot be overtaken: at most two writes per batch.
async fn commit(
    shared: &Shared,
    notes: &Notes<'_>,
    batch: Vec<(Vec<Value>, Reply)>,
    sign: bool,
    flush: Flush,
) -> Option<bool> {
    // Nothing else extends the tree until this batch is published or failed.
    let _extend = shared.extend.lock().await;
    // A batch in doubt that landed is this log's: adopted, and signed with
    // this batch, so other writers need not wait for it. (A store that
    // cannot be read now fails this batch's write too.)
    let sign = sign || settle_in_doubt(shared).await.unwrap_or(false);
    let now = now_secs();
    let start = shared.read().tree.len();
    let (leaves, mut waiters) = encode(batch, start, now);
    if leaves.is_empty() {
        return None;
    }
    let result = match write_batch(shared, notes, &leaves, now, sign, flush).await {
        Ok(row) => Ok(Written {
            foreign: Vec::new(),
            foreign_note: None,
            written: Some((leaves, row)),
        }),
        Err(BatchError::Store(e)) => match *e {
            StoreError::LeafIndexMismatch { expected, .. } if expected > start => {
                tracing::debug!(
                    start,
                    "another writer appended first; re-encoding the batch"
                );
                // Ask for its checkpoint now, before waiting for the lock: its
                // newest leaves are likely unsigned yet.
                want_seal(&shared.store);
                write_batch_locked(shared, notes, leaves, &mut waiters, now, None).await
            }
            StoreError::LeafIndexMismatch { expected, .. } => Err(removed(expected, start)),
            _ => {
                note_in_doubt(shared, &leaves, &e);
                Err(BatchError::Store(e))
            }
        },
        Err(err) => Err(err),
    };
    publish(shared, result, waiters).await
}

/// Commits one entry with its state change (see [`Log::append_with_change`]):
/// always under the write lock, the change applied in the same transaction,
/// durable and with a checkpoint.
async fn commit_with_change(
    shared: &Shared,
    notes: &Notes<'_>,
    entry: Value,
    change: StateChange,
    reply: Reply,
) -> Option<bool> {
    let _extend = shared.extend.lock().await;
    // (Its batch is always signed.)
    let _ = settle_in_doubt(shared).await;
    let now = now_secs();
    let start = shared.read().tree.len();
    let (leaves, mut waiters) = encode(vec![(vec![entry], reply)], start, now);
    if leaves.is_empty() {
        return None;
    }
    let result = write_batch_locked(shared, notes, leaves, &mut waiters, now, Some(&change)).await;
    publish(shared, result, waiters).await
}

/// Publishes a written batch to the tree and answers its waiters (or answers
/// them with the batch's error). Returns whether a checkpoint was signed, or
/// `None` if nothing of the batch was written.
async fn publish(
    shared: &Shared,
    result: Result<Written, BatchError>,
    mut waiters: Vec<Pending>,
) -> Option<bool> {
    match result {
        Ok(Written {
            foreign,
            foreign_note,
            written,
        }) => {
            let Some((leaves, row)) = written else {
                adopt(shared, foreign, foreign_note);
                return None;
            };
            let signed = row.is_some();
            let note: Option<Arc<str>> = row.map(|r| Arc::from(r.note));
            let size = {
                let mut st = shared.write();
                if !foreign.is_empty() {
                    let from = st.tree.len();
                    st.tree.extend(foreign);
                    st.checkpoint = foreign_note;
                    st.sealed = st.tree.len();
                    shared.sealed_tx.send_replace(st.sealed);
                    let _ = shared.adopted_tx.send(from..st.tree.len());
                }
                st.tree.extend(leaves.iter().map(|l| l.leaf_hash));
                if let Some(note) = &note {
                    st.checkpoint = Some(Arc::clone(note));
                    st.sealed = st.tree.len();
                    shared.sealed_tx.send_replace(st.sealed);
                }
                st.tree.len()
            };
            let mut it = leaves.iter();
            for w in waiters.drain(..) {
                let acks = it
                    .by_ref()
                    .take(w.count)
                    .map(|l| Appended {
                        index: l.idx,
                        leaf_hash: l.leaf_hash,
                        tree_size: size,
                        checkpoint: note.clone(),
                    })
                    .collect();
                let _ = w.reply.send(Ok(acks));
            }
            if shared.recent.wanted() {
                shared.recent.push(leaves);
            }
            tracing::trace!(size, signed, "log batch committed");
            Some(signed)
        }
        Err(err) => {
            tracing::error!(error = %err.to_log_error(), "log batch failed");
            if let BatchError::Store(_) = err {
                resync(shared).await;
            }
            for w in waiters.drain(..) {
                let _ = w.reply.send(Err(err.to_log_error()));
            }
            None
        }
    }
}

/// After a batch failed in the store: the tree needs no undo (it is only
/// extended after a commit), but the store may have moved — the batch may
/// have landed after all (an error reported after the commit), or another
/// writer appended — so catch up now, verified, rather than at the next
/// batch.
async fn resync(shared: &Shared) {
    match catch_up(shared).await {
        Ok(_) => {}
        Err(e @ LogError::ForeignAppend { .. }) => {
            tracing::error!(error = %e, "the stored log does not verify; appends will fail until it is audited")
        }
        Err(e) => tracing::warn!(error = %e, "cannot read the log after a failed batch"),
    }
}
