//! [`Log`]: group-committed appends with a signed checkpoint per commit.

use std::sync::{Arc, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::time::{SystemTime, UNIX_EPOCH};

use interlock_canon::{Map, Number, Value, canonical_bytes};
use interlock_merkle::{
    Checkpoint, Hash, NoteVerifier, Tree, leaf_hash, open_checkpoint, sign_checkpoint,
};
use interlock_store::{CheckpointRow, LeafRow, Store, StoreError};
use tokio::sync::{mpsc, oneshot};

use crate::error::LogError;
use crate::signer::{AsSigner, CheckpointSigner};

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

/// What an acknowledged append returns. By the time it exists, the entry and
/// a checkpoint covering it are durable.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Appended {
    /// The entry's index (its `seq`).
    pub index: u64,
    /// RFC 6962 leaf hash of the stored entry bytes.
    pub leaf_hash: Hash,
    /// The tree size of the checkpoint committed with it.
    pub tree_size: u64,
    /// That checkpoint: a C2SP signed note, shared by the whole batch.
    pub checkpoint: Arc<str>,
}

enum Request {
    Append {
        entries: Vec<Value>,
        reply: oneshot::Sender<Result<Vec<Appended>, LogError>>,
    },
    Close {
        reply: oneshot::Sender<()>,
    },
}

/// The durable view readers see, and the tree the writer extends.
struct State {
    /// Every leaf hash, possibly including a batch being written.
    tree: Tree,
    /// Leaves known durable; readers never see beyond this.
    durable: u64,
    /// The latest durable checkpoint note.
    checkpoint: Option<Arc<str>>,
}

struct Shared {
    store: Store,
    origin: String,
    verifier: NoteVerifier,
    state: RwLock<State>,
}

impl Shared {
    fn read(&self) -> RwLockReadGuard<'_, State> {
        // A panic while holding the lock cannot leave `State` half-updated
        // in a way readers could misuse: `durable` only moves after a commit.
        self.state.read().unwrap_or_else(|e| e.into_inner())
    }

    fn write(&self) -> RwLockWriteGuard<'_, State> {
        self.state.write().unwrap_or_else(|e| e.into_inner())
    }
}

/// The tamper-evident log. Cheap to clone; all clones feed one writer task.
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
    /// the key name `origin`.
    ///
    /// Refuses to start if the database belongs to another origin or key, if
    /// a leaf is missing, or if the stored leaves do not reproduce the latest
    /// checkpoint and its signature: a log that no longer matches what it
    /// signed must be audited, not extended.
    pub async fn open(
        store: Store,
        signer: CheckpointSigner,
        origin: &str,
    ) -> Result<Log, LogError> {
        let verifier = NoteVerifier::new(origin, signer.public_key()).map_err(|source| {
            LogError::InvalidOrigin {
                origin: origin.to_owned(),
                source,
            }
        })?;
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
        let (tree, checkpoint) = load_verified(&store, &verifier, origin).await?;
        let size = tree.len();
        tracing::info!(origin, size, "log opened");
        let shared = Arc::new(Shared {
            store,
            origin: origin.to_owned(),
            verifier,
            state: RwLock::new(State {
                tree,
                durable: size,
                checkpoint,
            }),
        });
        let (tx, rx) = mpsc::channel(QUEUE_DEPTH);
        tokio::spawn(writer(Arc::clone(&shared), signer, rx));
        Ok(Log { shared, tx })
    }

    /// Appends one entry (a JSON object without `seq`); returns once it is durable.
    pub async fn append(&self, entry: Value) -> Result<Appended, LogError> {
        let mut v = self.append_many(vec![entry]).await?;
        v.pop().ok_or(LogError::Closed)
    }

    /// Appends entries in order (contiguous indices); returns once all are durable.
    pub async fn append_many(&self, entries: Vec<Value>) -> Result<Vec<Appended>, LogError> {
        if entries.is_empty() {
            return Ok(Vec::new());
        }
        for e in &entries {
            check_entry(e)?;
        }
        let (reply, rx) = oneshot::channel();
        self.tx
            .send(Request::Append { entries, reply })
            .await
            .map_err(|_| LogError::Closed)?;
        rx.await.map_err(|_| LogError::Closed)?
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

    /// Number of durable entries.
    pub fn size(&self) -> u64 {
        self.shared.read().durable
    }

    /// Root of the durable tree.
    pub fn root(&self) -> Hash {
        let st = self.shared.read();
        st.tree.root_at(st.durable).expect("durable <= tree length")
    }

    /// Inclusion proof of entry `index` in the tree of `size` entries
    /// (`size` at most the durable size).
    pub fn inclusion_proof(&self, index: u64, size: u64) -> Result<Vec<Hash>, LogError> {
        let st = self.shared.read();
        check_size(size, st.durable)?;
        Ok(st.tree.inclusion_proof(index, size)?)
    }

    /// Consistency proof from size `old` to size `new` (`new` at most the durable size).
    pub fn consistency_proof(&self, old: u64, new: u64) -> Result<Vec<Hash>, LogError> {
        let st = self.shared.read();
        check_size(new, st.durable)?;
        Ok(st.tree.consistency_proof(old, new)?)
    }

    /// The latest durable signed checkpoint (a C2SP note), if anything was appended.
    pub fn latest_checkpoint(&self) -> Option<Arc<str>> {
        self.shared.read().checkpoint.clone()
    }

    /// The stored leaf at `index`: the bytes of its signed receipt (a DSSE envelope).
    pub async fn leaf(&self, index: u64) -> Result<Vec<u8>, LogError> {
        check_size(index.saturating_add(1), self.size())?;
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

    /// The facts recorded at `index` (the receipt's predicate, with its `seq`).
    pub async fn entry(&self, index: u64) -> Result<Value, LogError> {
        check_size(index.saturating_add(1), self.size())?;
        let row = self
            .shared
            .store
            .leaf(index)
            .await?
            .ok_or_else(|| StoreError::NotFound {
                what: format!("log entry {index}"),
            })?;
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

/// Loads the leaf hashes, rebuilds the tree and checks it against the latest
/// signed checkpoint.
async fn load_verified(
    store: &Store,
    verifier: &NoteVerifier,
    origin: &str,
) -> Result<(Tree, Option<Arc<str>>), LogError> {
    let hashes = store.leaf_hashes().await?;
    let tree = Tree::from_leaves(&hashes);
    let Some(row) = store.latest_checkpoint().await? else {
        if tree.is_empty() {
            return Ok((tree, None));
        }
        return Err(LogError::CheckpointMismatch(format!(
            "{} entries are stored but no checkpoint signs them",
            tree.len()
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
    if cp.size != tree.len() {
        return mismatch(format!(
            "the latest checkpoint signs {} entries but {} are stored",
            cp.size,
            tree.len()
        ));
    }
    if tree.root() != cp.root {
        return mismatch(format!(
            "entries 0..{} do not reproduce the root signed at size {}",
            cp.size, cp.size
        ));
    }
    Ok((tree, Some(Arc::from(row.note))))
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

/// The single writer: drains, commits, acknowledges; repeat.
async fn writer(shared: Arc<Shared>, signer: CheckpointSigner, mut rx: mpsc::Receiver<Request>) {
    let mut batch: Vec<(Vec<Value>, Reply)> = Vec::new();
    let mut queued = 0usize;
    let mut closing: Option<oneshot::Sender<()>> = None;
    // A request that did not fit the previous batch.
    let mut carry: Option<Request> = None;
    // Waiters answered by the previous commit, and gather yields so far.
    let mut last_waiters = 0usize;
    let mut yields = 0u32;
    loop {
        let first = match carry.take() {
            Some(r) => r,
            None => match rx.recv().await {
                Some(r) => r,
                None => break,
            },
        };
        let mut next = Some(first);
        while let Some(req) = next.take() {
            match req {
                Request::Close { reply } => {
                    closing = Some(reply);
                    break;
                }
                Request::Append { entries: es, reply } => {
                    if queued > 0 && queued + es.len() > MAX_BATCH {
                        carry = Some(Request::Append { entries: es, reply });
                        break;
                    }
                    queued += es.len();
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
            commit(&shared, &*signer, std::mem::take(&mut batch)).await;
            queued = 0;
        }
        if let Some(reply) = closing.take() {
            rx.close();
            // Fail whatever was queued behind the close.
            while let Ok(req) = rx.try_recv() {
                match req {
                    Request::Append { reply, .. } => {
                        let _ = reply.send(Err(LogError::Closed));
                    }
                    Request::Close { reply } => {
                        let _ = reply.send(());
                    }
                }
            }
            if let Some(Request::Append { reply, .. }) = carry.take() {
                let _ = reply.send(Err(LogError::Closed));
            }
            let _ = reply.send(());
            break;
        }
    }
    tracing::debug!(origin = %shared.origin, "log writer stopped");
}

/// Why a batch failed, shared by every waiter of the batch.
#[derive(Clone)]
enum BatchError {
    Store(Arc<StoreError>),
    Sign(interlock_merkle::NoteError),
    /// An entry could not be sealed into a signed receipt.
    Seal(String),
}

impl BatchError {
    fn to_log_error(&self) -> LogError {
        match self {
            BatchError::Store(e) => LogError::WriteFailed(Arc::clone(e)),
            BatchError::Sign(e) => LogError::Signing(e.clone()),
            BatchError::Seal(e) => LogError::Sealing(e.clone()),
        }
    }
}

/// Assigns indices and seals each waiter's entries into signed receipts (the
/// leaf is the DSSE envelope of an in-toto statement whose predicate is the
/// entry plus its `seq`). A waiter whose entry cannot be stored (too large,
/// index beyond 2^53) is answered with its error here and takes no index, so
/// it does not fail the rest of the batch. Signing is spread over the cores:
/// it is the one expensive step per entry.
fn encode(
    batch: Vec<(Vec<Value>, Reply)>,
    start: u64,
    now: i64,
    signer: &dyn crate::LogSigner,
) -> (Result<Vec<LeafRow>, BatchError>, Vec<Pending>) {
    let mut predicates: Vec<(u64, Map)> =
        Vec::with_capacity(batch.iter().map(|(e, _)| e.len()).sum());
    let mut waiters = Vec::with_capacity(batch.len());
    'waiter: for (entries, reply) in batch {
        let mark = predicates.len();
        let count = entries.len();
        for entry in entries {
            let index = start + predicates.len() as u64;
            match predicate(entry, index, now) {
                Ok(p) => predicates.push((index, p)),
                Err(e) => {
                    predicates.truncate(mark);
                    let _ = reply.send(Err(e));
                    continue 'waiter;
                }
            }
        }
        waiters.push(Pending { count, reply });
    }
    let key_id = interlock_core::KeyId::of(&signer.public_key());
    let seal = |chunk: Vec<(u64, Map)>| -> Result<Vec<LeafRow>, BatchError> {
        chunk
            .into_iter()
            .map(|(index, p)| {
                let data = interlock_receipts::seal(p, &key_id, |pae| {
                    signer
                        .try_sign(pae)
                        .map_err(|e| interlock_receipts::ReceiptError::Signing(e.to_string()))
                })
                .map_err(|e| BatchError::Seal(e.to_string()))?;
                Ok(LeafRow {
                    idx: index,
                    leaf_hash: leaf_hash(&data),
                    data,
                    appended_at: now,
                })
            })
            .collect()
    };
    let threads = if predicates.len() >= 32 {
        std::thread::available_parallelism().map_or(1, usize::from)
    } else {
        1
    };
    let leaves = if threads <= 1 {
        seal(predicates)
    } else {
        let per = predicates.len().div_ceil(threads);
        let mut chunks = Vec::new();
        let mut rest = predicates;
        while rest.len() > per {
            let tail = rest.split_off(per);
            chunks.push(rest);
            rest = tail;
        }
        chunks.push(rest);
        let sealed: Vec<Result<Vec<LeafRow>, BatchError>> = std::thread::scope(|s| {
            let handles: Vec<_> = chunks.into_iter().map(|c| s.spawn(|| seal(c))).collect();
            handles
                .into_iter()
                .map(|h| {
                    h.join().unwrap_or_else(|_| {
                        Err(BatchError::Seal("a signing thread panicked".into()))
                    })
                })
                .collect()
        });
        sealed.into_iter().try_fold(Vec::new(), |mut all, part| {
            all.extend(part?);
            Ok(all)
        })
    };
    (leaves, waiters)
}

/// The receipt predicate of `entry` at `index`: the entry's facts plus `seq`,
/// and `time` (when the log recorded it) unless the entry states its own.
fn predicate(entry: Value, index: u64, now: i64) -> Result<Map, LogError> {
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
    let size = canonical_bytes(&Value::Object(obj.clone())).len();
    if size > MAX_ENTRY_BYTES / 2 {
        return Err(LogError::EntryTooLarge {
            size,
            max: MAX_ENTRY_BYTES / 2,
        });
    }
    Ok(obj)
}

/// Commits one batch and answers its waiters.
async fn commit(shared: &Shared, signer: &dyn crate::LogSigner, batch: Vec<(Vec<Value>, Reply)>) {
    let now = now_secs();
    let start = shared.read().durable;
    let (leaves, mut waiters) = match encode(batch, start, now, signer) {
        (Ok(leaves), waiters) => (leaves, waiters),
        (Err(err), waiters) => {
            // Nothing was written; every waiter of the batch hears why.
            tracing::error!(error = %err.to_log_error(), "sealing a log batch failed");
            for w in waiters {
                let _ = w.reply.send(Err(err.to_log_error()));
            }
            return;
        }
    };
    let n = leaves.len();
    if n == 0 {
        return;
    }
    let result: Result<_, BatchError> = async {
        // Extend the tree (beyond `durable`, so readers do not see it yet).
        let (size, root) = {
            let mut st = shared.write();
            debug_assert_eq!(st.tree.len(), start);
            st.tree.extend(leaves.iter().map(|l| l.leaf_hash));
            (st.tree.len(), st.tree.root())
        };
        let cp = Checkpoint {
            origin: shared.origin.clone(),
            size,
            root,
            extensions: Vec::new(),
        };
        let note = sign_checkpoint(&cp, &shared.origin, &AsSigner(signer), &shared.verifier.key)
            .map_err(BatchError::Sign)?
            .to_string();
        let row = CheckpointRow {
            size,
            root,
            note,
            created_at: now,
        };
        shared
            .store
            .append_batch(&leaves, Some(&row))
            .await
            .map_err(|e| BatchError::Store(Arc::new(e)))?;
        Ok((leaves, row))
    }
    .await;

    match result {
        Ok((leaves, row)) => {
            let note: Arc<str> = Arc::from(row.note);
            {
                let mut st = shared.write();
                st.durable = row.size;
                st.checkpoint = Some(Arc::clone(&note));
            }
            let mut it = leaves.into_iter();
            for w in waiters.drain(..) {
                let acks = it
                    .by_ref()
                    .take(w.count)
                    .map(|l| Appended {
                        index: l.idx,
                        leaf_hash: l.leaf_hash,
                        tree_size: row.size,
                        checkpoint: Arc::clone(&note),
                    })
                    .collect();
                let _ = w.reply.send(Ok(acks));
            }
            tracing::trace!(entries = n, size = row.size, "log batch committed");
        }
        Err(err) => {
            tracing::error!(entries = n, error = %err.to_log_error(), "log batch failed");
            rollback(shared).await;
            for w in waiters.drain(..) {
                let _ = w.reply.send(Err(err.to_log_error()));
            }
        }
    }
}

/// After a failed batch: drop the unwritten leaves from the tree. If the
/// store says the batch landed after all (an error reported after commit),
/// reload from the store so memory and disk agree again.
async fn rollback(shared: &Shared) {
    let durable = {
        let mut st = shared.write();
        let durable = st.durable;
        if st.tree.len() != durable {
            let kept: Vec<Hash> = (0..durable)
                .map(|i| st.tree.leaf(i).expect("durable <= tree length"))
                .collect();
            st.tree = Tree::from_leaves(&kept);
        }
        durable
    };
    match shared.store.log_size().await {
        Ok(stored) if stored == durable => {}
        Ok(stored) => {
            tracing::warn!(
                durable,
                stored,
                "store size differs after a failed batch; reloading"
            );
            match load_verified(&shared.store, &shared.verifier, &shared.origin).await {
                Ok((tree, checkpoint)) => {
                    let mut st = shared.write();
                    st.durable = tree.len();
                    st.tree = tree;
                    st.checkpoint = checkpoint;
                }
                Err(e) => {
                    tracing::error!(error = %e, "reloading the log failed; appends will fail until it is reopened")
                }
            }
        }
        Err(e) => tracing::warn!(error = %e, "cannot read the log size after a failed batch"),
    }
}
