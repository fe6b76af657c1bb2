//! The system calls no sandboxed server may make (issue 38), refused with
//! `EPERM` by a seccomp filter bubblewrap installs before the server runs
//! (`--seccomp FD`): the kernel's keyrings, which user namespaces do not
//! separate, and the calls that only widen the kernel's attack surface or
//! aid an exploit (BPF, perf events, userfaultfd, module and kexec loading,
//! file handles, mounting). Everything else is allowed: a filter that broke
//! Node's, Python's or a browser's runtime would push people to
//! `sandbox = "off"`.

use std::collections::BTreeMap;
use std::io::{Seek, SeekFrom, Write};
use std::os::fd::{AsRawFd, OwnedFd};

use seccompiler::{BpfProgram, SeccompAction, SeccompFilter, SeccompRule, TargetArch};

use crate::SandboxError;

/// The refused calls, by name (for the documentation and the tests) and
/// number on this architecture.
pub fn denied() -> Vec<(&'static str, i64)> {
    let mut calls = vec![
        // Kernel keyrings: shared by every process of the OS user.
        ("keyctl", libc::SYS_keyctl),
        ("add_key", libc::SYS_add_key),
        ("request_key", libc::SYS_request_key),
        // Kernel attack surface and exploit aids.
        ("bpf", libc::SYS_bpf),
        ("perf_event_open", libc::SYS_perf_event_open),
        ("userfaultfd", libc::SYS_userfaultfd),
        ("init_module", libc::SYS_init_module),
        ("finit_module", libc::SYS_finit_module),
        ("delete_module", libc::SYS_delete_module),
        ("kexec_load", libc::SYS_kexec_load),
        ("kexec_file_load", libc::SYS_kexec_file_load),
        ("open_by_handle_at", libc::SYS_open_by_handle_at),
        ("name_to_handle_at", libc::SYS_name_to_handle_at),
        ("mount", libc::SYS_mount),
        ("umount2", libc::SYS_umount2),
        ("pivot_root", libc::SYS_pivot_root),
        ("fsopen", libc::SYS_fsopen),
        ("fsmount", libc::SYS_fsmount),
        ("move_mount", libc::SYS_move_mount),
        ("open_tree", libc::SYS_open_tree),
        ("acct", libc::SYS_acct),
        ("swapon", libc::SYS_swapon),
        ("swapoff", libc::SYS_swapoff),
        ("reboot", libc::SYS_reboot),
        ("quotactl", libc::SYS_quotactl),
    ];
    #[cfg(target_arch = "x86_64")]
    calls.extend([("iopl", libc::SYS_iopl), ("ioperm", libc::SYS_ioperm)]);
    calls
}

/// The filter, compiled for this architecture, as the bytes of a cBPF
/// program (what `seccomp_export_bpf` writes and bubblewrap reads).
pub fn program() -> Result<Vec<u8>, SandboxError> {
    let fail = |e: String| SandboxError::Seccomp(e);
    let arch = TargetArch::try_from(std::env::consts::ARCH).map_err(|e| fail(format!("{e:?}")))?;
    let rules: BTreeMap<i64, Vec<SeccompRule>> = denied()
        .into_iter()
        .map(|(_, nr)| (nr, Vec::new()))
        .collect();
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EPERM as u32),
        arch,
    )
    .map_err(|e| fail(e.to_string()))?;
    let bpf: BpfProgram = filter
        .try_into()
        .map_err(|e: seccompiler::BackendError| fail(e.to_string()))?;
    let mut bytes = Vec::with_capacity(bpf.len() * 8);
    for f in bpf {
        bytes.extend_from_slice(&f.code.to_ne_bytes());
        bytes.push(f.jt);
        bytes.push(f.jf);
        bytes.extend_from_slice(&f.k.to_ne_bytes());
    }
    Ok(bytes)
}

/// `program` in a sealed memory file (no one, the sandboxed server
/// included, can change it through the descriptor or `/proc`), inheritable
/// by the next child: pass its number as `--seccomp N` and drop it once the
/// child has started.
pub fn sealed(program: &[u8]) -> Result<OwnedFd, SandboxError> {
    use rustix::fs::{MemfdFlags, SealFlags};
    let fail = |e: std::io::Error| SandboxError::Seccomp(e.to_string());
    let fd = rustix::fs::memfd_create(
        "interlock-seccomp",
        MemfdFlags::CLOEXEC | MemfdFlags::ALLOW_SEALING,
    )
    .map_err(|e| fail(e.into()))?;
    let mut file = std::fs::File::from(fd);
    file.write_all(program).map_err(fail)?;
    file.seek(SeekFrom::Start(0)).map_err(fail)?;
    rustix::fs::fcntl_add_seals(
        &file,
        SealFlags::WRITE | SealFlags::SHRINK | SealFlags::GROW | SealFlags::SEAL,
    )
    .map_err(|e| fail(e.into()))?;
    let fd = OwnedFd::from(file);
    // Inherited by the child that reads it (bubblewrap), which closes it.
    rustix::io::fcntl_setfd(&fd, rustix::io::FdFlags::empty()).map_err(|e| fail(e.into()))?;
    Ok(fd)
}

/// The number to pass as `--seccomp`.
pub fn number(fd: &OwnedFd) -> i32 {
    fd.as_raw_fd()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_program_compiles_and_seals() {
        let p = program().unwrap();
        assert!(p.len() >= 8 * denied().len(), "{} bytes", p.len());
        assert_eq!(p.len() % 8, 0);
        let fd = sealed(&p).unwrap();
        // Sealed: not writable, even by its creator.
        let mut f = std::fs::File::from(fd);
        assert!(f.write_all(b"x").is_err());
    }
}
