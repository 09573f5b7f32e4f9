//! Which processes hold a `BPF_ENABLE_STATS` file descriptor right now.
//! While any does, the kernel times every run of every eBPF program on the
//! host. Such an fd is an anonymous inode the kernel names `bpf-stats`, so
//! `/proc/PID/fd/N` links to `anon_inode:bpf-stats` (checked on Linux 6.18
//! by `tests/doctor_live.rs`, which holds one).

use std::path::Path;

use crate::kernel::proc_fds::{self, FdInfo, FdKind, FdVisitor};
use crate::model::Owner;
use crate::sys::Errno;

/// The holders found, and how many processes could not be looked at
/// (another user's, without privilege).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct StatsHolders {
    /// By pid.
    pub holders: Vec<Owner>,
    pub unreadable: usize,
}

impl FdVisitor for StatsHolders {
    fn fd(&mut self, _: u32, _: u32, kind: FdKind, _: &mut FdInfo<'_>) -> bool {
        kind == FdKind::Stats
    }

    fn named(&mut self, pid: u32, comm: String) {
        self.holders.push(Owner { pid, comm });
    }

    fn unreadable(&mut self, _: u32, errno: Errno) {
        if matches!(errno, Errno(libc::EACCES | libc::EPERM)) {
            self.unreadable += 1;
        }
    }
}

/// Scan a procfs-shaped tree, brr's own process included. Processes and
/// fds that vanish meanwhile are skipped.
pub(crate) fn scan(proc_root: &Path) -> StatsHolders {
    let mut out = StatsHolders::default();
    proc_fds::walk_all(proc_root, None, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    /// What `/proc/PID/fd/N` of a statistics fd links to.
    const STATS_TARGET: &str = "anon_inode:bpf-stats";

    #[test]
    fn finds_stats_fds_in_a_fake_proc() {
        let root = std::env::temp_dir().join(format!("brr-holders-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let proc_with = |pid: &str, comm: &str, targets: &[&str]| {
            let fd = root.join(pid).join("fd");
            std::fs::create_dir_all(&fd).unwrap();
            std::fs::write(root.join(pid).join("comm"), format!("{comm}\n")).unwrap();
            for (i, t) in targets.iter().enumerate() {
                symlink(t, fd.join(i.to_string())).unwrap();
            }
        };
        proc_with("120", "exporter", &["/dev/null", STATS_TARGET]);
        proc_with("7", "bpftop", &[STATS_TARGET, STATS_TARGET]);
        proc_with("9", "sshd", &["anon_inode:bpf-prog", "socket:[1]"]);
        std::fs::create_dir_all(root.join("self")).unwrap();
        let found = scan(&root);
        std::fs::remove_dir_all(&root).unwrap();
        assert_eq!(
            found.holders,
            vec![
                Owner {
                    pid: 7,
                    comm: "bpftop".into()
                },
                Owner {
                    pid: 120,
                    comm: "exporter".into()
                },
            ]
        );
        assert_eq!(found.unreadable, 0);
        assert_eq!(scan(Path::new("/nonexistent/brr")), StatsHolders::default());
    }
}
