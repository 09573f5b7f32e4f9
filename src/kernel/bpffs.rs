//! Pinned paths, keyed by the real type of each object: by default under
//! every bpffs mount (as bpftool finds them, from `/proc/self/mountinfo`),
//! else under the directory `--bpffs` names, when it is on a bpffs; a
//! directory on another file system (`--bpffs /`) is not walked, only the
//! bpffs mounts below it.

use std::collections::HashMap;
use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

use crate::kernel::mountinfo::{self, Mount};
use crate::sys::bpf::{self, ObjKind, ProgWant};
use crate::sys::link_info;
use crate::sys::Errno;

/// The root that stands for every bpffs mount: what brr scans when
/// `--bpffs` is not given.
pub(crate) const EVERY_MOUNT: &str = "";

/// Where bpffs is mounted by convention: scanned when the mounts cannot be
/// read.
const CONVENTIONAL: &str = "/sys/fs/bpf";

/// `BPF_FS_MAGIC`, the file system type statfs(2) reports for bpffs.
pub(crate) const BPF_FS_MAGIC: u64 = 0xcafe_4a11;

/// What a `--bpffs` directory is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum RootKind {
    /// On a bpffs: walked as given.
    Bpffs,
    /// On another file system: only the bpffs mounts below it are walked
    /// (none when the list is empty).
    Other { mounts_below: Vec<PathBuf> },
    /// It cannot be examined (missing, not allowed): nothing is walked.
    Unreadable(Errno),
}

/// What `root` is, for a warning before a command runs.
pub(crate) fn root_kind(root: &Path) -> RootKind {
    match on_bpffs(root) {
        Ok(true) => RootKind::Bpffs,
        Ok(false) => RootKind::Other {
            mounts_below: mounts_below(root, &mountinfo::read()),
        },
        Err(e) => RootKind::Unreadable(e),
    }
}

fn on_bpffs(path: &Path) -> Result<bool, Errno> {
    let st = rustix::fs::statfs(path).map_err(Errno::from)?;
    // f_type's width differs between architectures.
    #[allow(clippy::unnecessary_cast)]
    Ok(st.f_type as u64 == BPF_FS_MAGIC)
}

/// The bpffs mount points in `mounts`, in mount order, without those a
/// walk of an earlier one reaches anyway (nested under it, or the same
/// point mounted again).
fn bpffs_points(mounts: &[Mount]) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    for m in mounts.iter().filter(|m| m.fstype == "bpf") {
        if !out.iter().any(|p| m.point.starts_with(p)) {
            out.retain(|p| !p.starts_with(&m.point));
            out.push(m.point.clone());
        }
    }
    out
}

/// The bpffs mounts strictly below `root` (compared as an absolute path
/// without symlinks, when it resolves).
fn mounts_below(root: &Path, mounts: &[Mount]) -> Vec<PathBuf> {
    let abs = std::fs::canonicalize(root).unwrap_or_else(|_| normalise(root));
    bpffs_points(mounts)
        .into_iter()
        .filter(|p| p.starts_with(&abs) && *p != abs)
        .collect()
}

/// The directories a scan of `root` walks.
fn walk_roots(root: &Path) -> Vec<PathBuf> {
    if root.as_os_str() == EVERY_MOUNT {
        let points = bpffs_points(&mountinfo::read());
        if points.is_empty() && on_bpffs(Path::new(CONVENTIONAL)).unwrap_or(false) {
            return vec![PathBuf::from(CONVENTIONAL)];
        }
        return points;
    }
    match root_kind(root) {
        RootKind::Bpffs => vec![normalise(root)],
        RootKind::Other { mounts_below } => mounts_below,
        RootKind::Unreadable(_) => Vec::new(),
    }
}

/// Pinned paths per object ID, one table per object kind.
#[derive(Debug, Default, Clone)]
pub(crate) struct Pins {
    pub progs: HashMap<u32, Vec<String>>,
    pub maps: HashMap<u32, Vec<String>>,
    pub links: HashMap<u32, Vec<String>>,
}

impl Pins {
    pub(crate) fn for_prog(&self, id: u32) -> Vec<String> {
        self.progs.get(&id).cloned().unwrap_or_default()
    }
    pub(crate) fn for_map(&self, id: u32) -> Vec<String> {
        self.maps.get(&id).cloned().unwrap_or_default()
    }
    pub(crate) fn for_link(&self, id: u32) -> Vec<String> {
        self.links.get(&id).cloned().unwrap_or_default()
    }
}

/// Normalise lexically: no repeated or trailing `/`, no `.` parts,
/// symlinks kept. Works on bytes, so a non-UTF-8 root is scanned as given.
pub(crate) fn normalise(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        if c != Component::CurDir {
            out.push(c);
        }
    }
    if out.as_os_str().is_empty() {
        out.push(".");
    }
    out
}

/// Scan `root` recursively ([`EVERY_MOUNT`]: every bpffs mount; a root on
/// another file system: the bpffs mounts below it). A missing root,
/// unreadable directories and files that are not BPF objects are silently
/// skipped: pins are decoration.
pub(crate) fn scan(root: impl AsRef<Path>) -> Pins {
    let mut pins = Pins::default();
    let mut stack = walk_roots(root.as_ref());
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = dir.join(entry.file_name());
            // file_type() does not follow symlinks: symlinked dirs are not walked.
            match entry.file_type() {
                Ok(t) if t.is_dir() => stack.push(path),
                Ok(_) => classify(&path, &path.to_string_lossy(), &mut pins),
                Err(_) => {}
            }
        }
    }
    for list in pins
        .progs
        .values_mut()
        .chain(pins.maps.values_mut())
        .chain(pins.links.values_mut())
    {
        list.sort();
        list.dedup();
    }
    pins
}

fn classify(fs_path: &Path, shown: &str, pins: &mut Pins) {
    let Ok(c) = CString::new(fs_path.as_os_str().as_bytes()) else {
        return;
    };
    let Ok(fd) = bpf::obj_get(&c) else {
        return;
    };
    let id = match bpf::fd_object_kind(&fd) {
        Some(ObjKind::Prog) => bpf::prog_detail(&fd, ProgWant::default())
            .ok()
            .map(|d| (&mut pins.progs, d.info.id)),
        Some(ObjKind::Map) => bpf::map_info(&fd).ok().map(|i| (&mut pins.maps, i.id)),
        Some(ObjKind::Link) => link_info::link_info(&fd)
            .ok()
            .map(|i| (&mut pins.links, i.info.id)),
        _ => None,
    };
    if let Some((table, id)) = id {
        table.entry(id).or_default().push(shown.to_string());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalise_is_lexical() {
        for (given, want) in [
            ("/sys/fs/bpf/", "/sys/fs/bpf"),
            ("//sys//fs/bpf//x", "/sys/fs/bpf/x"),
            ("/", "/"),
            ("rel/./dir/", "rel/dir"),
            ("./", "."),
        ] {
            assert_eq!(normalise(Path::new(given)), Path::new(want), "{given}");
        }
    }

    #[test]
    fn missing_root_has_no_pins() {
        let p = scan(Path::new("/nonexistent/brr/bpffs"));
        assert!(p.progs.is_empty() && p.maps.is_empty() && p.links.is_empty());
        assert!(matches!(
            root_kind(Path::new("/nonexistent/brr/bpffs")),
            RootKind::Unreadable(Errno(libc::ENOENT))
        ));
    }

    fn mounts(text: &str) -> Vec<Mount> {
        mountinfo::parse(text)
    }

    const MOUNTS: &str = "22 1 0:21 / / rw - ext4 /dev/vda1 rw\n\
        42 22 0:39 / /sys/fs/bpf rw,relatime - bpf bpf rw\n\
        43 42 0:45 / /sys/fs/bpf/nested rw - bpf bpf rw\n\
        44 22 0:46 / /run/cilium/bpffs rw - bpf bpf rw\n\
        45 22 0:47 / /sys/kernel/tracing rw - tracefs tracefs rw\n\
        46 22 0:39 / /sys/fs/bpf rw - bpf bpf rw\n\
        47 22 0:48 / /srv/bpf rw - bpf bpf rw\n";

    /// Every bpffs mount, once: a nested mount or the same point mounted
    /// again is reached by the walk of the one above it.
    #[test]
    fn every_bpffs_mount_is_walked_once() {
        let m = mounts(MOUNTS);
        assert_eq!(
            bpffs_points(&m),
            [
                PathBuf::from("/sys/fs/bpf"),
                PathBuf::from("/run/cilium/bpffs"),
                PathBuf::from("/srv/bpf")
            ]
        );
        // A mount listed after one nested in it replaces it.
        let m = mounts("43 22 0:45 / /a/b rw - bpf bpf rw\n44 22 0:46 / /a rw - bpf bpf rw\n");
        assert_eq!(bpffs_points(&m), [PathBuf::from("/a")]);
        assert!(bpffs_points(&mounts("22 1 0:21 / / rw - ext4 x rw\n")).is_empty());
    }

    /// `--bpffs /` walks the bpffs mounts below it, not the file system.
    #[test]
    fn a_root_on_another_file_system_walks_only_the_bpffs_below_it() {
        let m = mounts(MOUNTS);
        assert_eq!(
            mounts_below(Path::new("/"), &m),
            [
                PathBuf::from("/sys/fs/bpf"),
                PathBuf::from("/run/cilium/bpffs"),
                PathBuf::from("/srv/bpf")
            ]
        );
        assert_eq!(
            mounts_below(Path::new("/sys"), &m),
            [PathBuf::from("/sys/fs/bpf")]
        );
        // `/srv/bpfx` is not below `/srv/bpf`, nor a mount below itself.
        assert!(mounts_below(Path::new("/srv/bpf"), &m).is_empty());
        assert!(mounts_below(Path::new("/srv/b"), &m).is_empty());
        // This machine's root file system is not a bpffs.
        assert!(matches!(root_kind(Path::new("/")), RootKind::Other { .. }));
    }
}
