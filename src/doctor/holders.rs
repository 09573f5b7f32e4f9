//! Which processes hold a `BPF_ENABLE_STATS` file descriptor right now.
//! While any does, the kernel times every run of every eBPF program on the
//! host. Such an fd is an anonymous inode the kernel names `bpf-stats`, so
//! `/proc/PID/fd/N` links to `anon_inode:bpf-stats` (checked on Linux 6.18
//! by `tests/doctor_live.rs`, which holds one).

use std::path::Path;

use crate::kernel::owners::parse_comm;
use crate::model::Owner;

/// What `/proc/PID/fd/N` of a statistics fd links to.
pub(crate) const STATS_TARGET: &str = "anon_inode:bpf-stats";

/// The holders found, and how many processes could not be looked at
/// (another user's, without privilege).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct StatsHolders {
    /// By pid.
    pub holders: Vec<Owner>,
    pub unreadable: usize,
}

/// Scan a procfs-shaped tree. Processes and fds that vanish meanwhile are
/// skipped.
pub(crate) fn scan(proc_root: &Path) -> StatsHolders {
    let mut out = StatsHolders::default();
    let Ok(dir) = std::fs::read_dir(proc_root) else {
        return out;
    };
    let mut pids: Vec<u32> = dir
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
        .collect();
    pids.sort_unstable();
    for pid in pids {
        let base = proc_root.join(pid.to_string());
        let fds = match std::fs::read_dir(base.join("fd")) {
            Ok(fds) => fds,
            Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {
                out.unreadable += 1;
                continue;
            }
            Err(_) => continue,
        };
        let holds = fds
            .filter_map(Result::ok)
            .any(|fd| std::fs::read_link(fd.path()).is_ok_and(|t| t == Path::new(STATS_TARGET)));
        if holds {
            let comm = std::fs::read(base.join("comm"))
                .map(|raw| parse_comm(&raw))
                .unwrap_or_default();
            out.holders.push(Owner { pid, comm });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

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
