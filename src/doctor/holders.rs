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

/// How long process `pid` has run, from its start time (`/proc/PID/stat`
/// field 22, in clock ticks after boot) and the system's uptime; None
/// when either cannot be read. A process holds a statistics fd for at
/// most that long: when it opened the fd is not recorded.
pub(crate) fn running_secs(proc_root: &Path, pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(proc_root.join(pid.to_string()).join("stat")).ok()?;
    let uptime = std::fs::read_to_string(proc_root.join("uptime")).ok()?;
    let ticks = rustix::param::clock_ticks_per_second();
    age(&stat, &uptime, ticks)
}

/// [`running_secs`] from the two files' text.
fn age(stat: &str, uptime: &str, ticks: u64) -> Option<u64> {
    // Fields after the parenthesised command name, which may hold spaces;
    // starttime is the 22nd field, the 20th after the name.
    let start: u64 = stat
        .rsplit_once(')')?
        .1
        .split_whitespace()
        .nth(19)?
        .parse()
        .ok()?;
    let up: f64 = uptime.split_whitespace().next()?.parse().ok()?;
    (ticks > 0).then(|| (up - start as f64 / ticks as f64).max(0.0) as u64)
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
    fn a_process_age_from_its_start_time_and_the_uptime() {
        let stat = "4242 (a (b) c) S 1 4242 4242 0 -1 4194560 100 0 0 0 5 3 0 0 20 0 1 0 \
                    150000 1000 200";
        assert_eq!(age(stat, "3000.50 5000.00\n", 100), Some(1500));
        assert_eq!(age(stat, "1000.00 1.00\n", 100), Some(0));
        assert_eq!(age("4242 (x) S 1", "3000.5 1\n", 100), None);
        assert_eq!(age(stat, "", 100), None);
    }

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
