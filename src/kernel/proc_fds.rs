//! The one walk over processes' fd tables under `/proc`: each fd whose link
//! target names a BPF object, a perf event or a statistics fd is handed to
//! the caller, who decides what to read about it.
//!
//! A host can have tens of thousands of fds, so the walk works on directory
//! fds with reused buffers: one getdents and one readlinkat per fd, and an
//! fdinfo read only for the fds whose caller asks for it. Processes and fds
//! vanish during the walk; such entries are skipped.

use std::ffi::CStr;
use std::mem::MaybeUninit;
use std::os::fd::{AsFd, OwnedFd};
use std::path::Path;

use rustix::fs::{openat, readlinkat_raw, Mode, OFlags, RawDir, CWD};

use crate::kernel::fdinfo;
use crate::sys::Errno;

/// The object kinds whose holders are listed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum HeldKind {
    Prog,
    Map,
    Link,
}

impl HeldKind {
    /// The fdinfo key carrying the object's own id.
    fn id_key(self) -> &'static [u8] {
        match self {
            HeldKind::Prog => b"prog_id",
            HeldKind::Map => b"map_id",
            HeldKind::Link => b"link_id",
        }
    }
}

/// What an fd names, from its `/proc/PID/fd/N` link target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FdKind {
    /// A BPF program, map or link.
    Held(HeldKind),
    /// A perf event, through which a program may be attached.
    PerfEvent,
    /// A `BPF_ENABLE_STATS` fd: while any is held, the kernel times every
    /// run of every program on the host.
    Stats,
}

/// The kind an `/proc/PID/fd/N` link target names. The kernel's anon-inode
/// names are `bpf-prog`, `bpf-map`, `bpf_link` and `bpf-stats` (checked on
/// 6.18; `tests/doctor_live.rs` holds a statistics fd); `bpf-link` is
/// accepted in case a kernel spells it like the others.
pub(crate) fn classify_target(target: &[u8]) -> Option<FdKind> {
    match target {
        b"anon_inode:bpf-prog" => Some(FdKind::Held(HeldKind::Prog)),
        b"anon_inode:bpf-map" => Some(FdKind::Held(HeldKind::Map)),
        b"anon_inode:bpf_link" | b"anon_inode:bpf-link" => Some(FdKind::Held(HeldKind::Link)),
        b"anon_inode:[perf_event]" => Some(FdKind::PerfEvent),
        b"anon_inode:bpf-stats" => Some(FdKind::Stats),
        _ => None,
    }
}

/// What a walk's caller does with the fds it finds.
pub(crate) trait FdVisitor {
    /// Process `pid`'s fd `fd` names `kind`; `info` reads its fdinfo.
    /// True when the process is to be named (see [`FdVisitor::named`]).
    fn fd(&mut self, pid: u32, fd: u32, kind: FdKind, info: &mut FdInfo<'_>) -> bool;
    /// Called once, after its fds, for each process that [`FdVisitor::fd`]
    /// answered true for: its `comm`, empty when it could not be read.
    fn named(&mut self, pid: u32, comm: String);
    /// Process `pid`'s fd directory could not be opened (`errno`: EACCES
    /// for another user's process without privilege).
    fn unreadable(&mut self, _pid: u32, _errno: Errno) {}
}

/// Reads one fd's fdinfo on request, into the walk's reused buffer.
pub(crate) struct FdInfo<'w> {
    proc_fd: &'w OwnedFd,
    pid: u32,
    fd: u32,
    text: &'w mut [u8],
}

impl FdInfo<'_> {
    /// The object's own id in the fdinfo (`prog_id`, `map_id`, `link_id`);
    /// None when the fd was closed meanwhile or the key is missing.
    pub(crate) fn object_id(&mut self, kind: HeldKind) -> Option<u32> {
        let mut info_path = [0u8; 32];
        let path = fdinfo_path(&mut info_path, self.pid, self.fd);
        let text = read_at(self.proc_fd, path, self.text)?;
        fdinfo::id_in(text, kind.id_key())
    }
}

/// `/proc/PID/comm` text: one line, at most 15 bytes.
pub(crate) fn parse_comm(raw: &[u8]) -> String {
    let line = raw.split(|&b| b == b'\n').next().unwrap_or_default();
    String::from_utf8_lossy(line).into_owned()
}

fn parse_pid(name: &[u8]) -> Option<u32> {
    if name.is_empty() || name.len() > 10 || !name.iter().all(u8::is_ascii_digit) {
        return None;
    }
    std::str::from_utf8(name).ok()?.parse().ok()
}

fn errno(e: rustix::io::Errno) -> Errno {
    Errno(e.raw_os_error())
}

fn open_dir(dir: impl AsFd, path: impl rustix::path::Arg) -> Result<OwnedFd, Errno> {
    openat(
        dir,
        path,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(errno)
}

/// Read a small file relative to `dir` into `buf`; the bytes read.
fn read_at<'b>(dir: impl AsFd, path: &CStr, buf: &'b mut [u8]) -> Option<&'b [u8]> {
    let fd = openat(dir, path, OFlags::RDONLY | OFlags::CLOEXEC, Mode::empty()).ok()?;
    let mut len = 0;
    // fdinfo and comm are single-record seq_files: a read gets all that
    // is left of the record up to the space given, so one that returns
    // less than that has reached the end, and a read for the end-of-file
    // (a syscall per fd on a walk of thousands) is not needed.
    while len < buf.len() {
        match rustix::io::read(&fd, &mut buf[len..]) {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                len += n;
                if len < buf.len() {
                    break;
                }
            }
        }
    }
    Some(&buf[..len])
}

/// Reused buffers of one walk.
struct Scratch {
    fd_dents: Vec<MaybeUninit<u8>>,
    link: [u8; 64],
    text: Vec<u8>,
    path: Vec<u8>,
}

impl Scratch {
    fn new() -> Scratch {
        Scratch {
            fd_dents: vec![MaybeUninit::uninit(); 32 * 1024],
            link: [0; 64],
            text: vec![0; 4096],
            path: Vec::with_capacity(32),
        }
    }
}

/// Walk every process under `root` (`/proc`, or a procfs-shaped tree in
/// tests) in pid order, leaving out `skip`. Processes whose fd directory
/// cannot be opened go to [`FdVisitor::unreadable`].
pub(crate) fn walk_all(root: &Path, skip: Option<u32>, v: &mut impl FdVisitor) {
    let Ok(proc_fd) = open_dir(CWD, root) else {
        return;
    };
    let mut pids = Vec::new();
    {
        let mut dents = vec![MaybeUninit::uninit(); 32 * 1024];
        let mut dir = RawDir::new(&proc_fd, &mut dents);
        while let Some(Ok(e)) = dir.next() {
            if let Some(pid) = parse_pid(e.file_name().to_bytes()) {
                if Some(pid) != skip {
                    pids.push(pid);
                }
            }
        }
    }
    pids.sort_unstable();
    let mut s = Scratch::new();
    for pid in pids {
        if let Err(e) = walk_pid(&proc_fd, pid, &mut s, v) {
            v.unreadable(pid, e);
        }
    }
}

/// Walk process `pid` under `root`. Fails with the errno of opening its fd
/// directory: ENOENT for no such process, EACCES for one brr may not look
/// into.
pub(crate) fn walk_one(root: &Path, pid: u32, v: &mut impl FdVisitor) -> Result<(), Errno> {
    let proc_fd = open_dir(CWD, root)?;
    walk_pid(&proc_fd, pid, &mut Scratch::new(), v)
}

fn walk_pid(
    proc_fd: &OwnedFd,
    pid: u32,
    s: &mut Scratch,
    v: &mut impl FdVisitor,
) -> Result<(), Errno> {
    // Paths below are relative to /proc (not to /proc/PID) so that a process
    // costs one directory open, not two.
    let fd_dir = open_dir(proc_fd, num_path(&mut s.path, b"", pid, b"/fd"))?;
    let mut named = false;
    let mut dir = RawDir::new(&fd_dir, &mut s.fd_dents);
    while let Some(Ok(e)) = dir.next() {
        let name = e.file_name();
        let Some(fd) = parse_pid(name.to_bytes()) else {
            continue;
        };
        let Ok(n) = readlinkat_raw(&fd_dir, name, &mut s.link[..]) else {
            continue;
        };
        let Some(kind) = classify_target(&s.link[..n.min(s.link.len())]) else {
            continue;
        };
        let mut info = FdInfo {
            proc_fd,
            pid,
            fd,
            text: &mut s.text,
        };
        named |= v.fd(pid, fd, kind, &mut info);
    }
    if named {
        let comm = read_at(
            proc_fd,
            num_path(&mut s.path, b"", pid, b"/comm"),
            &mut s.text,
        )
        .map(parse_comm)
        .unwrap_or_default();
        v.named(pid, comm);
    }
    Ok(())
}

/// `buf` := `prefix` + decimal `n` + NUL, as a CStr borrowed from `buf`.
fn num_path<'b>(buf: &'b mut Vec<u8>, prefix: &[u8], n: u32, suffix: &[u8]) -> &'b CStr {
    buf.clear();
    buf.extend_from_slice(prefix);
    let mut digits = [0u8; 10];
    let n = write_decimal(&mut digits, n);
    buf.extend_from_slice(&digits[..n]);
    buf.extend_from_slice(suffix);
    buf.push(0);
    // The buffer holds digits and caller-given ASCII without NULs before
    // the one just pushed; the fallback is never taken.
    CStr::from_bytes_with_nul(buf).unwrap_or(c"")
}

/// `PID/fdinfo/FD` in a stack buffer (the RawDir iterator borrows the
/// scratch space, so the shared path buffer is not available here).
fn fdinfo_path(buf: &mut [u8; 32], pid: u32, fd: u32) -> &CStr {
    let mut len = 0;
    for part in [&b""[..], b"/fdinfo/"] {
        let n = if part.is_empty() { pid } else { fd };
        buf[len..len + part.len()].copy_from_slice(part);
        len += part.len();
        len += write_decimal(&mut buf[len..], n);
    }
    buf[len] = 0;
    CStr::from_bytes_with_nul(&buf[..=len]).unwrap_or(c"")
}

/// Write `n` in decimal at the start of `out` (at least 10 bytes); its length.
fn write_decimal(out: &mut [u8], n: u32) -> usize {
    let mut digits = [0u8; 10];
    let mut i = digits.len();
    let mut v = n;
    loop {
        i -= 1;
        digits[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    let d = &digits[i..];
    out[..d.len()].copy_from_slice(d);
    d.len()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    #[test]
    fn link_targets() {
        let held = |k| Some(FdKind::Held(k));
        assert_eq!(
            classify_target(b"anon_inode:bpf-prog"),
            held(HeldKind::Prog)
        );
        assert_eq!(classify_target(b"anon_inode:bpf-map"), held(HeldKind::Map));
        assert_eq!(
            classify_target(b"anon_inode:bpf_link"),
            held(HeldKind::Link)
        );
        assert_eq!(
            classify_target(b"anon_inode:[perf_event]"),
            Some(FdKind::PerfEvent)
        );
        assert_eq!(
            classify_target(b"anon_inode:bpf-stats"),
            Some(FdKind::Stats)
        );
        for other in [
            &b"anon_inode:btf"[..],
            b"anon_inode:[eventfd]",
            b"socket:[1234]",
            b"/sys/fs/bpf/prog",
            b"anon_inode:bpf-prog2",
            b"",
        ] {
            assert_eq!(classify_target(other), None);
        }
    }

    #[test]
    fn comm_and_pid_text() {
        assert_eq!(parse_comm(b"bpftrace\n"), "bpftrace");
        assert_eq!(parse_comm(b""), "");
        assert_eq!(parse_comm(b"a\xffb\n"), "a\u{fffd}b");
        assert_eq!(parse_pid(b"123"), Some(123));
        for bad in [&b""[..], b"self", b"12a", b"99999999999", b"-1"] {
            assert_eq!(parse_pid(bad), None);
        }
        let mut buf = Vec::new();
        assert_eq!(num_path(&mut buf, b"fdinfo/", 0, b""), c"fdinfo/0");
        assert_eq!(num_path(&mut buf, b"", u32::MAX, b"/x"), c"4294967295/x");
        let mut b = [0u8; 32];
        assert_eq!(
            fdinfo_path(&mut b, u32::MAX, u32::MAX),
            c"4294967295/fdinfo/4294967295"
        );
        assert_eq!(fdinfo_path(&mut b, 1, 0), c"1/fdinfo/0");
    }

    /// Records every call, naming each process that holds a program.
    #[derive(Default)]
    struct Log {
        fds: Vec<(u32, u32, FdKind, Option<u32>)>,
        named: Vec<(u32, String)>,
        unreadable: Vec<(u32, Errno)>,
    }

    impl FdVisitor for Log {
        fn fd(&mut self, pid: u32, fd: u32, kind: FdKind, info: &mut FdInfo<'_>) -> bool {
            let id = match kind {
                FdKind::Held(k) => info.object_id(k),
                _ => None,
            };
            self.fds.push((pid, fd, kind, id));
            kind == FdKind::Held(HeldKind::Prog)
        }
        fn named(&mut self, pid: u32, comm: String) {
            self.named.push((pid, comm));
        }
        fn unreadable(&mut self, pid: u32, errno: Errno) {
            self.unreadable.push((pid, errno));
        }
    }

    /// A procfs-shaped tree: symlinks for fds, plain files for fdinfo.
    #[test]
    fn walk_of_a_fake_proc_tree() {
        let root = std::env::temp_dir().join(format!("brr-proc-fds-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        for (pid, comm, fds) in [
            (
                40u32,
                Some("holder"),
                &[
                    (3u32, "anon_inode:bpf-prog", "prog_id:\t9\n"),
                    (4, "/dev/null", ""),
                ][..],
            ),
            (7, None, &[(5, "anon_inode:bpf-prog", "")][..]),
            (
                77,
                Some("me"),
                &[(3, "anon_inode:bpf-prog", "prog_id:\t1\n")][..],
            ),
            (
                5,
                Some("stats"),
                &[
                    (1, "anon_inode:bpf-stats", ""),
                    (2, "anon_inode:[perf_event]", ""),
                ][..],
            ),
        ] {
            let p = root.join(pid.to_string());
            std::fs::create_dir_all(p.join("fd")).unwrap();
            std::fs::create_dir_all(p.join("fdinfo")).unwrap();
            if let Some(comm) = comm {
                std::fs::write(p.join("comm"), format!("{comm}\n")).unwrap();
            }
            for (n, target, info) in fds {
                symlink(target, p.join("fd").join(n.to_string())).unwrap();
                std::fs::write(p.join("fdinfo").join(n.to_string()), info).unwrap();
            }
        }
        // A process entry without an fd directory, and a non-process entry.
        std::fs::create_dir_all(root.join("9")).unwrap();
        std::fs::create_dir_all(root.join("self")).unwrap();
        let mut all = Log::default();
        walk_all(&root, Some(77), &mut all);
        let mut one = Log::default();
        let found = walk_one(&root, 77, &mut one);
        let gone = walk_one(&root, 78, &mut Log::default());
        let no_root = walk_one(Path::new("/nonexistent-brr"), 1, &mut Log::default());
        let _ = std::fs::remove_dir_all(&root);
        let prog = FdKind::Held(HeldKind::Prog);
        // Processes come in pid order, a process's fds in directory order.
        all.fds.sort_by_key(|&(pid, fd, ..)| (pid, fd));
        assert_eq!(
            all.fds,
            [
                (5, 1, FdKind::Stats, None),
                (5, 2, FdKind::PerfEvent, None),
                (7, 5, prog, None),
                (40, 3, prog, Some(9)),
            ]
        );
        assert_eq!(all.named, [(7, String::new()), (40, "holder".into())]);
        assert_eq!(all.unreadable, [(9, Errno(libc::ENOENT))]);
        assert_eq!((found, one.fds), (Ok(()), vec![(77, 3, prog, Some(1))]));
        assert_eq!(one.named, [(77, "me".into())]);
        assert_eq!(gone, Err(Errno(libc::ENOENT)));
        assert_eq!(no_root, Err(Errno(libc::ENOENT)));
        let mut none = Log::default();
        walk_all(Path::new("/nonexistent-brr"), None, &mut none);
        assert!(none.fds.is_empty() && none.unreadable.is_empty());
    }
}
