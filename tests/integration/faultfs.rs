//! Issue 44's filesystem for faults a kill cannot make: a power cut, a full
//! disk and I/O errors. It is a real filesystem (FUSE, on the `fuser` crate,
//! served by a thread of the test process), mounted where a gateway keeps its
//! data directory; the gateway and its CLI reach it through the kernel like
//! any other, so SQLite's own locking, `mmap` of its `-shm` and `fdatasync`
//! are the real ones.
//!
//! What survives a [`FaultFs::power_cut`] is what a journaling filesystem in
//! its strictest common mode keeps (ext4 `data=ordered` without its periodic
//! commit):
//! - a file's bytes as of its last `fsync`/`fdatasync` (an unsynced write,
//!   truncation or extension is lost; a file never synced comes back empty);
//! - the names — creates, renames, unlinks, `mkdir` — as of the last `fsync`
//!   of anything (the journal commit every sync forces), so a rename is kept
//!   only if some sync followed it.
//!
//! Everything else — the kernel's caches included — is dropped: a cut
//! unmounts the filesystem, rolls the state back and mounts it again.
//!
//! [`Fault`] turns on a full disk (every write that would grow a file, and
//! every create, fails with `ENOSPC`, as when no block is left) or I/O errors
//! (every write and sync fails with `EIO`).

use std::collections::{BTreeMap, HashMap};
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use fuser::{
    BackgroundSession, Config, Errno, FileAttr, FileHandle, FileType, Filesystem, FopenFlags,
    Generation, INodeNo, LockOwner, MountOption, OpenFlags, RenameFlags, ReplyAttr, ReplyCreate,
    ReplyData, ReplyDirectory, ReplyEmpty, ReplyEntry, ReplyOpen, ReplyStatfs, ReplyWrite, Request,
    TimeOrNow, WriteFlags,
};

/// A fault the filesystem injects until it is set back to [`Fault::None`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    None,
    /// No block left: what would grow a file or add a name fails with `ENOSPC`.
    DiskFull,
    /// The device fails: every write and every sync fails with `EIO`.
    IoError,
}

/// How many times each thing happened (for the campaign's figures).
#[derive(Clone, Copy, Debug, Default)]
pub struct Counts {
    pub syncs: u64,
    pub writes: u64,
    pub injected: u64,
    pub power_cuts: u64,
}

enum Content {
    File(FileContent),
    Dir(BTreeMap<OsString, u64>),
    Socket,
}

/// A file's bytes now, and the bytes a power cut would leave.
struct FileContent {
    data: Vec<u8>,
    synced: Vec<u8>,
}

struct Node {
    content: Content,
    perm: u16,
    uid: u32,
    gid: u32,
    mtime: SystemTime,
}

struct State {
    nodes: HashMap<u64, Node>,
    /// Every directory's entries as of the last sync of anything.
    committed_names: HashMap<u64, BTreeMap<OsString, u64>>,
    next_ino: u64,
    fault: Fault,
    counts: Counts,
}

const ROOT: u64 = 1;
const TTL: Duration = Duration::from_millis(200);

impl State {
    fn new() -> State {
        let mut nodes = HashMap::new();
        nodes.insert(
            ROOT,
            Node {
                content: Content::Dir(BTreeMap::new()),
                perm: 0o755,
                uid: 0,
                gid: 0,
                mtime: SystemTime::now(),
            },
        );
        State {
            committed_names: HashMap::from([(ROOT, BTreeMap::new())]),
            nodes,
            next_ino: ROOT + 1,
            fault: Fault::None,
            counts: Counts::default(),
        }
    }

    fn attr(&self, ino: u64) -> Option<FileAttr> {
        let node = self.nodes.get(&ino)?;
        let (kind, size, nlink) = match &node.content {
            Content::File(f) => (FileType::RegularFile, f.data.len() as u64, 1),
            Content::Dir(_) => (FileType::Directory, 0, 2),
            Content::Socket => (FileType::Socket, 0, 1),
        };
        Some(FileAttr {
            ino: INodeNo(ino),
            size,
            blocks: size.div_ceil(512),
            atime: node.mtime,
            mtime: node.mtime,
            ctime: node.mtime,
            crtime: node.mtime,
            kind,
            perm: node.perm,
            nlink,
            uid: node.uid,
            gid: node.gid,
            rdev: 0,
            blksize: 4096,
            flags: 0,
        })
    }

    fn dir(&mut self, ino: u64) -> Result<&mut BTreeMap<OsString, u64>, Errno> {
        match self.nodes.get_mut(&ino).map(|n| &mut n.content) {
            Some(Content::Dir(entries)) => Ok(entries),
            Some(_) => Err(Errno::ENOTDIR),
            None => Err(Errno::ENOENT),
        }
    }

    fn child(&mut self, parent: u64, name: &OsStr) -> Result<u64, Errno> {
        self.dir(parent)?.get(name).copied().ok_or(Errno::ENOENT)
    }

    fn add(
        &mut self,
        req: &Request,
        parent: u64,
        name: &OsStr,
        node: Content,
        mode: u32,
    ) -> Result<FileAttr, Errno> {
        if self.fault != Fault::None {
            self.counts.injected += 1;
            return Err(self.fault_errno());
        }
        if self.dir(parent)?.contains_key(name) {
            return Err(Errno::EEXIST);
        }
        let ino = self.next_ino;
        self.next_ino += 1;
        self.nodes.insert(
            ino,
            Node {
                content: node,
                perm: (mode & 0o7777) as u16,
                uid: req.uid(),
                gid: req.gid(),
                mtime: SystemTime::now(),
            },
        );
        self.dir(parent)?.insert(name.to_owned(), ino);
        Ok(self.attr(ino).expect("just added"))
    }

    fn fault_errno(&self) -> Errno {
        match self.fault {
            Fault::DiskFull => Errno::ENOSPC,
            _ => Errno::EIO,
        }
    }

    /// A sync: the file's bytes (if `ino` is a file) and every name.
    fn sync(&mut self, ino: u64) -> Result<(), Errno> {
        if self.fault == Fault::IoError {
            self.counts.injected += 1;
            return Err(Errno::EIO);
        }
        self.counts.syncs += 1;
        if let Some(Node {
            content: Content::File(f),
            ..
        }) = self.nodes.get_mut(&ino)
            && f.synced != f.data
        {
            f.synced.clone_from(&f.data);
        }
        self.committed_names = self
            .nodes
            .iter()
            .filter_map(|(ino, n)| match &n.content {
                Content::Dir(entries) => Some((*ino, entries.clone())),
                _ => None,
            })
            .collect();
        Ok(())
    }

    /// What a power cut leaves: the committed names, each file at its synced
    /// bytes; whatever no committed name reaches is gone.
    fn power_cut(&mut self) {
        let mut kept = HashMap::new();
        let mut todo = vec![ROOT];
        while let Some(ino) = todo.pop() {
            let Some(mut node) = self.nodes.remove(&ino) else {
                continue;
            };
            match &mut node.content {
                Content::Dir(entries) => {
                    *entries = self.committed_names.get(&ino).cloned().unwrap_or_default();
                    todo.extend(entries.values().copied());
                }
                Content::File(f) => f.data.clone_from(&f.synced),
                Content::Socket => {}
            }
            kept.insert(ino, node);
        }
        // A directory committed under a name may have been created after the
        // last commit of its own entries: it comes back empty.
        self.committed_names = kept
            .iter()
            .filter_map(|(ino, n)| match &n.content {
                Content::Dir(entries) => Some((*ino, entries.clone())),
                _ => None,
            })
            .collect();
        self.nodes = kept;
        self.counts.power_cuts += 1;
    }
}

/// The FUSE face of a [`State`].
struct Served(Arc<Mutex<State>>);

impl Served {
    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Filesystem for Served {
    fn lookup(&self, _req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEntry) {
        let mut s = self.state();
        match s.child(parent.0, name) {
            Ok(ino) => reply.entry(&TTL, &s.attr(ino).unwrap(), Generation(0)),
            Err(e) => reply.error(e),
        }
    }

    fn getattr(&self, _req: &Request, ino: INodeNo, _fh: Option<FileHandle>, reply: ReplyAttr) {
        match self.state().attr(ino.0) {
            Some(attr) => reply.attr(&TTL, &attr),
            None => reply.error(Errno::ENOENT),
        }
    }

    fn setattr(
        &self,
        _req: &Request,
        ino: INodeNo,
        mode: Option<u32>,
        uid: Option<u32>,
        gid: Option<u32>,
        size: Option<u64>,
        _atime: Option<TimeOrNow>,
        mtime: Option<TimeOrNow>,
        _ctime: Option<SystemTime>,
        _fh: Option<FileHandle>,
        _crtime: Option<SystemTime>,
        _chgtime: Option<SystemTime>,
        _bkuptime: Option<SystemTime>,
        _flags: Option<fuser::BsdFileFlags>,
        reply: ReplyAttr,
    ) {
        let mut s = self.state();
        let fault = s.fault;
        let Some(node) = s.nodes.get_mut(&ino.0) else {
            return reply.error(Errno::ENOENT);
        };
        if let Some(size) = size {
            let Content::File(f) = &mut node.content else {
                return reply.error(Errno::EISDIR);
            };
            let grows = size > f.data.len() as u64;
            if fault == Fault::IoError || (fault == Fault::DiskFull && grows) {
                s.counts.injected += 1;
                let e = s.fault_errno();
                return reply.error(e);
            }
            f.data.resize(size as usize, 0);
            node.mtime = SystemTime::now();
        }
        if let Some(mode) = mode {
            node.perm = (mode & 0o7777) as u16;
        }
        if let Some(uid) = uid {
            node.uid = uid;
        }
        if let Some(gid) = gid {
            node.gid = gid;
        }
        if let Some(t) = mtime {
            node.mtime = match t {
                TimeOrNow::SpecificTime(t) => t,
                TimeOrNow::Now => SystemTime::now(),
            };
        }
        reply.attr(&TTL, &s.attr(ino.0).unwrap());
    }

    fn mknod(
        &self,
        req: &Request,
        parent: INodeNo,
        name: &OsStr,
        mode: u32,
        umask: u32,
        _rdev: u32,
        reply: ReplyEntry,
    ) {
        let content = match mode & S_IFMT {
            m if m == S_IFSOCK => Content::Socket,
            m if m == S_IFREG => Content::File(FileContent {
                data: Vec::new(),
                synced: Vec::new(),
            }),
            _ => return reply.error(Errno::EPERM),
        };
        match self
            .state()
            .add(req, parent.0, name, content, mode & !umask)
        {
            Ok(attr) => reply.entry(&TTL, &attr, Generation(0)),
            Err(e) => reply.error(e),
        }
    }

    fn mkdir(
        &self,
        req: &Request,
        parent: INodeNo,
        name: &OsStr,
        mode: u32,
        umask: u32,
        reply: ReplyEntry,
    ) {
        let dir = Content::Dir(BTreeMap::new());
        match self.state().add(req, parent.0, name, dir, mode & !umask) {
            Ok(attr) => reply.entry(&TTL, &attr, Generation(0)),
            Err(e) => reply.error(e),
        }
    }

    fn unlink(&self, _req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEmpty) {
        let mut s = self.state();
        let result = s.child(parent.0, name).and_then(|ino| {
            if matches!(s.nodes[&ino].content, Content::Dir(_)) {
                return Err(Errno::EISDIR);
            }
            s.dir(parent.0)?.remove(name);
            Ok(())
        });
        match result {
            Ok(()) => reply.ok(),
            Err(e) => reply.error(e),
        }
    }

    fn rmdir(&self, _req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEmpty) {
        let mut s = self.state();
        let result = s.child(parent.0, name).and_then(|ino| {
            if !s.dir(ino)?.is_empty() {
                return Err(Errno::ENOTEMPTY);
            }
            s.dir(parent.0)?.remove(name);
            Ok(())
        });
        match result {
            Ok(()) => reply.ok(),
            Err(e) => reply.error(e),
        }
    }

    fn rename(
        &self,
        _req: &Request,
        parent: INodeNo,
        name: &OsStr,
        newparent: INodeNo,
        newname: &OsStr,
        flags: RenameFlags,
        reply: ReplyEmpty,
    ) {
        let mut s = self.state();
        let result = (|| {
            if flags.contains(RenameFlags::RENAME_EXCHANGE) {
                return Err(Errno::EINVAL);
            }
            let ino = s.child(parent.0, name)?;
            if let Some(old) = s.dir(newparent.0)?.get(newname).copied() {
                if flags.contains(RenameFlags::RENAME_NOREPLACE) {
                    return Err(Errno::EEXIST);
                }
                if let Content::Dir(entries) = &s.nodes[&old].content
                    && !entries.is_empty()
                {
                    return Err(Errno::ENOTEMPTY);
                }
            }
            s.dir(parent.0)?.remove(name);
            s.dir(newparent.0)?.insert(newname.to_owned(), ino);
            Ok(())
        })();
        match result {
            Ok(()) => reply.ok(),
            Err(e) => reply.error(e),
        }
    }

    fn open(&self, _req: &Request, ino: INodeNo, _flags: OpenFlags, reply: ReplyOpen) {
        match self.state().nodes.get(&ino.0) {
            Some(_) => reply.opened(FileHandle(0), FopenFlags::empty()),
            None => reply.error(Errno::ENOENT),
        }
    }

    fn read(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        size: u32,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        reply: ReplyData,
    ) {
        let s = self.state();
        match s.nodes.get(&ino.0).map(|n| &n.content) {
            Some(Content::File(f)) => {
                let start = (offset as usize).min(f.data.len());
                let end = (start + size as usize).min(f.data.len());
                reply.data(&f.data[start..end]);
            }
            Some(_) => reply.error(Errno::EISDIR),
            None => reply.error(Errno::ENOENT),
        }
    }

    fn write(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        data: &[u8],
        _write_flags: WriteFlags,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        reply: ReplyWrite,
    ) {
        let mut s = self.state();
        let fault = s.fault;
        s.counts.writes += 1;
        let Some(node) = s.nodes.get_mut(&ino.0) else {
            return reply.error(Errno::ENOENT);
        };
        let Content::File(f) = &mut node.content else {
            return reply.error(Errno::EISDIR);
        };
        let end = offset as usize + data.len();
        if fault == Fault::IoError || (fault == Fault::DiskFull && end > f.data.len()) {
            s.counts.injected += 1;
            let e = s.fault_errno();
            return reply.error(e);
        }
        if f.data.len() < end {
            f.data.resize(end, 0);
        }
        f.data[offset as usize..end].copy_from_slice(data);
        node.mtime = SystemTime::now();
        reply.written(data.len() as u32);
    }

    fn flush(
        &self,
        _req: &Request,
        _ino: INodeNo,
        _fh: FileHandle,
        _lock_owner: LockOwner,
        reply: ReplyEmpty,
    ) {
        reply.ok();
    }

    fn fsync(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        _datasync: bool,
        reply: ReplyEmpty,
    ) {
        match self.state().sync(ino.0) {
            Ok(()) => reply.ok(),
            Err(e) => reply.error(e),
        }
    }

    fn fsyncdir(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        _datasync: bool,
        reply: ReplyEmpty,
    ) {
        match self.state().sync(ino.0) {
            Ok(()) => reply.ok(),
            Err(e) => reply.error(e),
        }
    }

    fn readdir(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        mut reply: ReplyDirectory,
    ) {
        let mut s = self.state();
        let entries: Vec<(u64, OsString)> = match s.dir(ino.0) {
            Ok(entries) => entries.iter().map(|(n, i)| (*i, n.clone())).collect(),
            Err(e) => return reply.error(e),
        };
        let listed = [(ino.0, OsString::from(".")), (ino.0, OsString::from(".."))]
            .into_iter()
            .chain(entries);
        for (i, (child, name)) in listed.enumerate().skip(offset as usize) {
            let kind = s.attr(child).map_or(FileType::RegularFile, |a| a.kind);
            if reply.add(INodeNo(child), (i + 1) as u64, kind, &name) {
                break;
            }
        }
        reply.ok();
    }

    fn statfs(&self, _req: &Request, _ino: INodeNo, reply: ReplyStatfs) {
        let free = if self.state().fault == Fault::DiskFull {
            0
        } else {
            1 << 20
        };
        reply.statfs(1 << 20, free, free, 1 << 20, free, 4096, 255, 4096);
    }

    fn access(&self, _req: &Request, ino: INodeNo, _mask: fuser::AccessFlags, reply: ReplyEmpty) {
        if self.state().nodes.contains_key(&ino.0) {
            reply.ok();
        } else {
            reply.error(Errno::ENOENT);
        }
    }

    fn create(
        &self,
        req: &Request,
        parent: INodeNo,
        name: &OsStr,
        mode: u32,
        umask: u32,
        _flags: i32,
        reply: ReplyCreate,
    ) {
        let file = Content::File(FileContent {
            data: Vec::new(),
            synced: Vec::new(),
        });
        match self.state().add(req, parent.0, name, file, mode & !umask) {
            Ok(attr) => reply.created(
                &TTL,
                &attr,
                Generation(0),
                FileHandle(0),
                FopenFlags::empty(),
            ),
            Err(e) => reply.error(e),
        }
    }
}

const S_IFMT: u32 = 0o170_000;
const S_IFSOCK: u32 = 0o140_000;
const S_IFREG: u32 = 0o100_000;

/// A [`State`] mounted at a directory; unmounted when dropped.
pub struct FaultFs {
    state: Arc<Mutex<State>>,
    mountpoint: PathBuf,
    session: Option<BackgroundSession>,
}

impl FaultFs {
    /// Mounts an empty filesystem at `mountpoint` (an empty directory).
    pub fn mount(mountpoint: &Path) -> FaultFs {
        std::fs::create_dir_all(mountpoint).unwrap();
        let mut fs = FaultFs {
            state: Arc::new(Mutex::new(State::new())),
            mountpoint: mountpoint.to_owned(),
            session: None,
        };
        fs.serve();
        fs
    }

    fn serve(&mut self) {
        let mut config = Config::default();
        config.mount_options = vec![
            MountOption::FSName("interlock-faultfs".into()),
            MountOption::DefaultPermissions,
        ];
        let session = fuser::spawn_mount2(Served(self.state.clone()), &self.mountpoint, &config)
            .unwrap_or_else(|e| {
                panic!(
                    "mounting the fault filesystem at {} (needs /dev/fuse, as root): {e}",
                    self.mountpoint.display()
                )
            });
        self.session = Some(session);
    }

    /// A power cut: every process using the filesystem must be dead already
    /// (as a cut kills them); what was not synced is lost, as the module
    /// comment says, and the filesystem comes back with the rest.
    pub fn power_cut(&mut self) {
        self.unmount();
        self.state.lock().unwrap().power_cut();
        self.serve();
    }

    /// Injects `fault` from now on ([`Fault::None`] ends it).
    pub fn set_fault(&self, fault: Fault) {
        self.state.lock().unwrap().fault = fault;
    }

    pub fn counts(&self) -> Counts {
        self.state.lock().unwrap().counts
    }

    fn unmount(&mut self) {
        if let Some(session) = self.session.take()
            && let Err(e) = session.umount_and_join()
        {
            // Still busy (a process the test forgot): detach it, so the
            // test fails on what it checks, not here.
            eprintln!(
                "faultfs: unmount of {}: {e}; detaching",
                self.mountpoint.display()
            );
            let _ = std::process::Command::new("umount")
                .arg("-l")
                .arg(&self.mountpoint)
                .status();
        }
    }
}

impl Drop for FaultFs {
    fn drop(&mut self) {
        self.unmount();
    }
}

/// Issue 44: the filesystem keeps exactly what was synced. Checked here
/// through the kernel, as the gateway will use it, so a campaign built on it
/// tests the product rather than the harness.
#[test]
fn fault_filesystem_keeps_what_was_synced_and_nothing_else() {
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("mnt");
    let mut fs = FaultFs::mount(&root);
    // Synced: a file's bytes and its name (the sync commits the names).
    let mut kept = std::fs::File::create(root.join("kept")).unwrap();
    kept.write_all(b"synced").unwrap();
    kept.sync_data().unwrap();
    // Written after the sync: lost.
    kept.write_all(b" and more").unwrap();
    drop(kept);
    // The atomic-write pattern: a synced temp file renamed over a synced one,
    // then a sync of the directory — kept; the same without the last sync —
    // the old bytes.
    std::fs::write(root.join("config"), b"old").unwrap();
    std::fs::File::open(root.join("config"))
        .unwrap()
        .sync_all()
        .unwrap();
    let mut tmp = std::fs::File::create(root.join("config.tmp")).unwrap();
    tmp.write_all(b"new").unwrap();
    tmp.sync_all().unwrap();
    std::fs::rename(root.join("config.tmp"), root.join("config")).unwrap();
    std::fs::File::open(&root).unwrap().sync_all().unwrap();
    std::fs::write(root.join("other"), b"old").unwrap();
    std::fs::File::open(root.join("other"))
        .unwrap()
        .sync_all()
        .unwrap();
    std::fs::write(root.join("other.tmp"), b"new").unwrap();
    std::fs::File::open(root.join("other.tmp"))
        .unwrap()
        .sync_all()
        .unwrap();
    std::fs::rename(root.join("other.tmp"), root.join("other")).unwrap();
    // (No sync after this rename.)
    // A directory and a file created after the last sync (as the rename was): gone.
    std::fs::create_dir(root.join("late")).unwrap();
    std::fs::write(root.join("late/file"), b"never synced").unwrap();
    assert_eq!(
        std::fs::read(root.join("kept")).unwrap(),
        b"synced and more"
    );

    fs.power_cut();
    assert_eq!(std::fs::read(root.join("kept")).unwrap(), b"synced");
    assert!(!root.join("late").exists(), "an unsynced mkdir survived");
    assert_eq!(std::fs::read(root.join("config")).unwrap(), b"new");
    assert_eq!(std::fs::read(root.join("other")).unwrap(), b"old");
    assert!(root.join("other.tmp").exists(), "a synced name was lost");

    // A full disk: growing fails with ENOSPC, rewriting in place does not.
    fs.set_fault(Fault::DiskFull);
    let err = std::fs::OpenOptions::new()
        .append(true)
        .open(root.join("kept"))
        .unwrap()
        .write_all(b"x")
        .unwrap_err();
    assert_eq!(err.raw_os_error(), Some(28), "{err}");
    let err = std::fs::File::create(root.join("new")).unwrap_err();
    assert_eq!(err.raw_os_error(), Some(28), "{err}");
    // I/O errors: a sync fails with EIO.
    fs.set_fault(Fault::IoError);
    let err = std::fs::File::open(root.join("kept"))
        .unwrap()
        .sync_all()
        .unwrap_err();
    assert_eq!(err.raw_os_error(), Some(5), "{err}");
    fs.set_fault(Fault::None);
    std::fs::write(root.join("new"), b"fine").unwrap();
    let counts = fs.counts();
    assert_eq!(counts.power_cuts, 1);
    assert_eq!(counts.injected, 3);
}
