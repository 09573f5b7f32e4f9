//! Which processes hold file descriptors on BPF programs, maps and links.
//!
//! brr loads nothing, so it cannot use a BPF iterator; it reads every
//! process's fd table instead (`kernel::proc_fds`), and an fdinfo only for
//! the few fds whose link target names a BPF object.
//!
//! The same walk finds programs attached through perf event fds (bpftrace,
//! BCC, libbpf without perf-event links): each `anon_inode:[perf_event]` fd
//! is asked with `BPF_TASK_FD_QUERY` which program is attached through it
//! and where, as `bpftool perf` does. Such a program has no link, so this
//! is the only way to name its attach point.
//!
//! It also finds the processes that hold `BPF_ENABLE_STATS` fds
//! (`anon_inode:bpf-stats`): while any does, every run of every program
//! pays for the statistics.

use std::collections::BTreeMap;
use std::path::Path;

use crate::kernel::perf_attach::{self, TaskFdQuery};
pub use crate::kernel::proc_fds::HeldKind;
use crate::kernel::proc_fds::{self, FdInfo, FdKind, FdVisitor};
pub use crate::model::Owner;
use crate::model::{AttachPoint, PerfEventFd};
use crate::sys::Errno;

/// Per kind, object id -> its holders sorted by pid, each pid once; and
/// program id -> where it is attached through perf event fds.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Owners {
    pub progs: BTreeMap<u32, Vec<Owner>>,
    pub maps: BTreeMap<u32, Vec<Owner>>,
    pub links: BTreeMap<u32, Vec<Owner>>,
    /// Each attach point once (the lowest pid and fd holding it), sorted
    /// by attach type and target.
    pub perf_attached: BTreeMap<u32, Vec<AttachPoint>>,
    /// The processes holding run-time statistics on, by pid.
    pub stats: Vec<Owner>,
}

impl Owners {
    fn table(&self, kind: HeldKind) -> &BTreeMap<u32, Vec<Owner>> {
        match kind {
            HeldKind::Prog => &self.progs,
            HeldKind::Map => &self.maps,
            HeldKind::Link => &self.links,
        }
    }

    /// The holders of one object; empty when nobody holds an fd on it.
    pub fn of(&self, kind: HeldKind, id: u32) -> &[Owner] {
        self.table(kind).get(&id).map(Vec::as_slice).unwrap_or(&[])
    }

    /// Where program `id` is attached through perf event fds.
    pub(crate) fn perf_attached(&self, id: u32) -> &[AttachPoint] {
        self.perf_attached
            .get(&id)
            .map(Vec::as_slice)
            .unwrap_or(&[])
    }
}

/// One perf event fd a program is attached through: (program id, attach
/// type, target, the fd and its holder).
type PerfSighting = (u32, String, String, PerfEventFd);

/// Collects (kind, id, pid) sightings; a process holding many fds on one
/// object is one owner.
#[derive(Debug, Default)]
pub(crate) struct Aggregator {
    seen: Vec<(HeldKind, u32, u32)>,
    comms: BTreeMap<u32, String>,
    perf: Vec<PerfSighting>,
    stats: Vec<u32>,
}

impl Aggregator {
    pub(crate) fn add(&mut self, kind: HeldKind, id: u32, pid: u32) {
        self.seen.push((kind, id, pid));
    }

    /// Process `pid`'s perf event fd `fd`, through which the kernel says
    /// `q.prog_id` is attached. The process holds the program through it,
    /// so it is one of the program's owners too.
    pub(crate) fn add_perf(&mut self, pid: u32, fd: u32, q: &TaskFdQuery) {
        let (attach_type, target) = perf_attach::describe(q);
        self.add(HeldKind::Prog, q.prog_id, pid);
        self.perf
            .push((q.prog_id, attach_type, target, PerfEventFd { pid, fd }));
    }

    /// Process `pid` holds a `BPF_ENABLE_STATS` fd.
    pub(crate) fn add_stats(&mut self, pid: u32) {
        self.stats.push(pid);
    }

    pub(crate) fn set_comm(&mut self, pid: u32, comm: String) {
        self.comms.insert(pid, comm);
    }

    pub(crate) fn finish(mut self) -> Owners {
        self.seen.sort_unstable();
        self.seen.dedup();
        let mut out = Owners::default();
        self.stats.sort_unstable();
        self.stats.dedup();
        out.stats = self
            .stats
            .iter()
            .map(|&pid| Owner {
                pid,
                comm: self.comms.get(&pid).cloned().unwrap_or_default(),
            })
            .collect();
        for (kind, id, pid) in self.seen {
            let comm = self.comms.get(&pid).cloned().unwrap_or_default();
            let table = match kind {
                HeldKind::Prog => &mut out.progs,
                HeldKind::Map => &mut out.maps,
                HeldKind::Link => &mut out.links,
            };
            table.entry(id).or_default().push(Owner { pid, comm });
        }
        // One attach point per place: the same event may be held by a
        // loader and its children, or through dup'ed fds.
        self.perf.sort_unstable();
        self.perf
            .dedup_by(|b, a| (a.0, &a.1, &a.2) == (b.0, &b.1, &b.2));
        for (prog, attach_type, target, fd) in self.perf {
            out.perf_attached
                .entry(prog)
                .or_default()
                .push(AttachPoint {
                    link_id: None,
                    attach_type: Some(attach_type),
                    target: Some(target),
                    perf_event: Some(fd),
                });
        }
        out
    }
}

/// Which program is attached through fd `fd` of process `pid`, if any.
pub(crate) type PerfQuery<'q> = dyn FnMut(u32, u32) -> Option<TaskFdQuery> + 'q;

/// The every-process walk's visitor: BPF objects by their fdinfo id, and
/// perf event fds by asking the kernel which program is attached.
struct Holders<'q> {
    agg: Aggregator,
    query: &'q mut PerfQuery<'q>,
}

impl FdVisitor for Holders<'_> {
    fn fd(&mut self, pid: u32, fd: u32, kind: FdKind, info: &mut FdInfo<'_>) -> bool {
        match kind {
            FdKind::Held(kind) => info.object_id(kind).map(|id| self.agg.add(kind, id, pid)),
            FdKind::PerfEvent => (self.query)(pid, fd).map(|q| self.agg.add_perf(pid, fd, &q)),
            FdKind::Stats => {
                self.agg.add_stats(pid);
                Some(())
            }
        }
        .is_some()
    }

    fn named(&mut self, pid: u32, comm: String) {
        self.agg.set_comm(pid, comm);
    }
}

/// Scan every process under `/proc`, leaving out brr's own pid.
pub fn scan() -> Owners {
    // A uprobe's path can be as long as PATH_MAX.
    let mut name = vec![0u8; 4096];
    let mut query = |pid, fd| perf_attach::query(pid, fd, &mut name);
    scan_root_with(Path::new("/proc"), std::process::id(), &mut query)
}

/// Scan a procfs-shaped tree under `root` (tests point it at a fake one),
/// leaving out `skip_pid`; perf event fds are not asked about.
#[cfg(test)]
pub(crate) fn scan_root(root: &Path, skip_pid: u32) -> Owners {
    scan_root_with(root, skip_pid, &mut |_, _| None)
}

/// [`scan_root`], asking `query` about every perf event fd.
pub(crate) fn scan_root_with<'q>(
    root: &Path,
    skip_pid: u32,
    query: &'q mut PerfQuery<'q>,
) -> Owners {
    let mut v = Holders {
        agg: Aggregator::default(),
        query,
    };
    proc_fds::walk_all(root, Some(skip_pid), &mut v);
    v.agg.finish()
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

/// The BPF programs process `pid` holds file descriptors on, by id, sorted,
/// each once: its `fd` links under `root` (`/proc`) that name a program,
/// and the `prog_id` in each one's fdinfo. Fails with the errno of reading
/// its fd directory: ENOENT for no such process, EACCES for one brr may not
/// look into. (Separate from the every-process scan, which skips what it
/// cannot read.)
pub(crate) fn programs_of_pid(root: &Path, pid: u32) -> Result<Vec<u32>, Errno> {
    /// Program ids from the fdinfo of the fds naming a program.
    struct Programs(Vec<u32>);
    impl FdVisitor for Programs {
        fn fd(&mut self, _: u32, _: u32, kind: FdKind, info: &mut FdInfo<'_>) -> bool {
            if kind == FdKind::Held(HeldKind::Prog) {
                // The fd may be closed between listing and reading it.
                self.0.extend(info.object_id(HeldKind::Prog));
            }
            false
        }
        fn named(&mut self, _: u32, _: String) {}
    }
    let mut v = Programs(Vec::new());
    proc_fds::walk_one(root, pid, &mut v)?;
    v.0.sort_unstable();
    v.0.dedup();
    Ok(v.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::kernel::fdinfo::tests::{LINK, MAP, PROG};
    use std::os::unix::fs::symlink;

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
    fn aggregation_sorts_and_dedups() {
        let mut a = Aggregator::default();
        a.add(HeldKind::Prog, 7, 300);
        a.add(HeldKind::Prog, 7, 12);
        a.add(HeldKind::Prog, 7, 300); // a dup of the same fd in one process
        a.add(HeldKind::Map, 7, 12);
        a.add(HeldKind::Link, 1, 5);
        a.set_comm(12, "loader".into());
        a.set_comm(300, "agent".into());
        let o = a.finish();
        let pids: Vec<_> = o
            .of(HeldKind::Prog, 7)
            .iter()
            .map(|w| (w.pid, w.comm.as_str()))
            .collect();
        assert_eq!(pids, [(12, "loader"), (300, "agent")]);
        assert_eq!(o.of(HeldKind::Map, 7).len(), 1);
        assert_eq!(o.of(HeldKind::Link, 1)[0].comm, "", "comm vanished");
        assert!(o.of(HeldKind::Map, 8).is_empty());
    }

    /// A procfs-shaped tree: symlinks for fds, plain files for fdinfo.
    #[test]
    fn scan_of_a_fake_proc_tree() {
        let root = std::env::temp_dir().join(format!("brr-owners-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let mk = |pid: u32, comm: &str, fds: &[(u32, &str, &str)]| {
            let p = root.join(pid.to_string());
            std::fs::create_dir_all(p.join("fd")).unwrap();
            std::fs::create_dir_all(p.join("fdinfo")).unwrap();
            std::fs::write(p.join("comm"), format!("{comm}\n")).unwrap();
            for (n, target, info) in fds {
                symlink(target, p.join("fd").join(n.to_string())).unwrap();
                std::fs::write(p.join("fdinfo").join(n.to_string()), info).unwrap();
            }
        };
        mk(
            40,
            "holder",
            &[
                (3, "anon_inode:bpf-prog", PROG),
                (4, "anon_inode:bpf-prog", PROG),
                (5, "anon_inode:bpf-map", MAP),
                (6, "anon_inode:bpf_link", LINK),
                (7, "socket:[1]", PROG),
                (8, "anon_inode:bpf-map", "map_id:\t"),
            ],
        );
        mk(
            9,
            "other",
            &[
                (10, "anon_inode:bpf-map", MAP),
                (12, "anon_inode:bpf-stats", ""),
            ],
        );
        mk(
            77,
            "me",
            &[
                (3, "anon_inode:bpf-prog", PROG),
                (4, "anon_inode:bpf-stats", ""),
            ],
        );
        mk(31, "bpftop", &[(5, "anon_inode:bpf-stats", "")]);
        mk(5, "plain", &[(0, "/dev/null", "")]);
        std::fs::create_dir_all(root.join("self")).unwrap();
        // An fd whose fdinfo vanished before it was read.
        symlink("anon_inode:bpf-prog", root.join("9/fd/11")).unwrap();

        let o = scan_root(&root, 77);
        let _ = std::fs::remove_dir_all(&root);
        let prog: Vec<_> = o.of(HeldKind::Prog, 1106).to_vec();
        assert_eq!(
            prog,
            [Owner {
                pid: 40,
                comm: "holder".into()
            }]
        );
        let maps: Vec<_> = o.of(HeldKind::Map, 1028).iter().map(|w| w.pid).collect();
        assert_eq!(maps, [9, 40]);
        assert_eq!(o.of(HeldKind::Link, 90)[0].pid, 40);
        assert_eq!(o.progs.len() + o.maps.len() + o.links.len(), 3);
        // Statistics holders, by pid, without the scanning process.
        let stats: Vec<_> = o.stats.iter().map(|h| (h.pid, h.comm.as_str())).collect();
        assert_eq!(stats, [(9, "other"), (31, "bpftop")]);
        assert_eq!(
            scan_root(Path::new("/nonexistent-brr"), 0),
            Owners::default()
        );
    }

    /// Perf event fds are asked about; the answers become attach points
    /// (each place once, the lowest pid and fd) and their holders owners.
    #[test]
    fn perf_event_fds_name_attach_points() {
        let root = std::env::temp_dir().join(format!("brr-owners-perf-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        for (pid, comm, fds) in [
            (30u32, "bpftrace", &[3u32, 4, 5][..]),
            (31, "child", &[7][..]),
            (32, "perf", &[3][..]),
        ] {
            let p = root.join(pid.to_string());
            std::fs::create_dir_all(p.join("fd")).unwrap();
            std::fs::create_dir_all(p.join("fdinfo")).unwrap();
            std::fs::write(p.join("comm"), format!("{comm}\n")).unwrap();
            for fd in fds {
                symlink("anon_inode:[perf_event]", p.join("fd").join(fd.to_string())).unwrap();
            }
        }
        let mut asked = Vec::new();
        let mut query = |pid: u32, fd: u32| {
            asked.push((pid, fd));
            let (prog_id, fd_type, name, probe_offset) = match (pid, fd) {
                (30, 3) => (50, 1, "sys_enter_openat", 0),
                (30, 4) => (51, 2, "do_sys_openat2", 0x10),
                (30, 5) => (52, 4, "/usr/bin/bash", 0x4a2f0),
                // The child inherited the loader's tracepoint event.
                (31, 7) => (50, 1, "sys_enter_openat", 0),
                // `perf record`'s own events carry no program.
                _ => return None,
            };
            Some(TaskFdQuery {
                prog_id,
                fd_type,
                name: name.as_bytes().to_vec(),
                probe_offset,
                probe_addr: 0,
            })
        };
        let o = scan_root_with(&root, 0, &mut query);
        let _ = std::fs::remove_dir_all(&root);
        assert_eq!(asked.len(), 5);
        let cells = |id: u32| -> Vec<(String, String, PerfEventFd)> {
            o.perf_attached(id)
                .iter()
                .map(|a| {
                    assert_eq!(a.link_id, None);
                    (
                        a.attach_type.clone().unwrap(),
                        a.target.clone().unwrap(),
                        a.perf_event.unwrap(),
                    )
                })
                .collect()
        };
        let fd = |pid, fd| PerfEventFd { pid, fd };
        assert_eq!(
            cells(50),
            [("tracepoint".into(), "sys_enter_openat".into(), fd(30, 3))]
        );
        assert_eq!(
            cells(51),
            [("kprobe".into(), "do_sys_openat2+0x10".into(), fd(30, 4))]
        );
        assert_eq!(
            cells(52),
            [("uprobe".into(), "/usr/bin/bash+0x4a2f0".into(), fd(30, 5))]
        );
        let holders: Vec<_> = o
            .of(HeldKind::Prog, 50)
            .iter()
            .map(|w| (w.pid, w.comm.as_str()))
            .collect();
        assert_eq!(holders, [(30, "bpftrace"), (31, "child")]);
        assert!(o.of(HeldKind::Prog, 0).is_empty() && o.perf_attached(0).is_empty());
        assert!(scan_root(Path::new("/nonexistent-brr"), 0)
            .perf_attached
            .is_empty());
    }

    /// One process's programs from a procfs-shaped tree.
    #[test]
    fn programs_of_one_pid() {
        let root = std::env::temp_dir().join(format!("brr-pid-progs-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let p = root.join("40");
        std::fs::create_dir_all(p.join("fd")).unwrap();
        std::fs::create_dir_all(p.join("fdinfo")).unwrap();
        let other = PROG.replace("prog_id:\t1106", "prog_id:\t7");
        for (n, target, info) in [
            (3, "anon_inode:bpf-prog", PROG),
            (4, "anon_inode:bpf-prog", PROG),
            (5, "anon_inode:bpf-prog", other.as_str()),
            (6, "anon_inode:bpf-map", MAP),
            (7, "/dev/null", PROG),
        ] {
            symlink(target, p.join("fd").join(n.to_string())).unwrap();
            std::fs::write(p.join("fdinfo").join(n.to_string()), info).unwrap();
        }
        // Closed between listing and reading its fdinfo.
        symlink("anon_inode:bpf-prog", p.join("fd/8")).unwrap();
        std::fs::create_dir_all(root.join("41/fd")).unwrap();
        let got = programs_of_pid(&root, 40);
        let none = programs_of_pid(&root, 41);
        let gone = programs_of_pid(&root, 42);
        let _ = std::fs::remove_dir_all(&root);
        assert_eq!(got, Ok(vec![7, 1106]));
        assert_eq!(none, Ok(vec![]));
        assert_eq!(gone, Err(Errno(libc::ENOENT)));
    }

    /// Cost of a scan of this host's /proc; run with `--ignored --nocapture`.
    #[test]
    #[ignore]
    fn scan_cost_on_this_host() {
        let fds: usize = std::fs::read_dir("/proc")
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| std::fs::read_dir(e.path().join("fd")).ok())
            .map(|d| d.count())
            .sum();
        let _ = scan();
        let cpu = || {
            std::fs::read_to_string("/proc/thread-self/schedstat")
                .ok()
                .and_then(|s| s.split_whitespace().next()?.parse::<u64>().ok())
                .unwrap_or(0)
        };
        let c0 = cpu();
        let t = std::time::Instant::now();
        let runs = 200;
        let mut held = 0;
        for _ in 0..runs {
            let o = scan();
            held = o.progs.len() + o.maps.len() + o.links.len();
        }
        let per = t.elapsed() / runs;
        let cpu_per = std::time::Duration::from_nanos((cpu() - c0) / u64::from(runs));
        println!(
            "owner scan: {cpu_per:?} CPU ({per:?} wall) per scan, {fds} fds on the host, {held} held objects"
        );
    }
}
