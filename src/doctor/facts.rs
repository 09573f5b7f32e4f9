//! What doctor looks at, gathered from the host in one pass: sysctls,
//! capabilities, mounts, limits, vmlinux BTF, object IDs, perf events that
//! open and statistics holders. Everything here only reads (a perf event is
//! opened and closed at once; no statistics are enabled); the fields are
//! plain data, so that the classification is tested from synthetic values.

use std::path::Path;

use super::btf::{self, Features};
use super::holders::{self, StatsHolders};
use super::mounts::{self, Mount};
use crate::privilege::CapSet;
use crate::profile::events::{self, EventSpec, Shape};
use crate::sys::bpf::{self, ObjKind, ProgWant};
use crate::sys::perf::{self, Resource};
use crate::sys::Errno;

/// A sysctl as read here.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Sysctl {
    Value(i64),
    /// It exists but this user may not read it (some are root-only).
    Unreadable,
    /// The kernel has no such sysctl.
    Absent,
}

impl Sysctl {
    pub(crate) fn value(self) -> Option<i64> {
        match self {
            Sysctl::Value(v) => Some(v),
            _ => None,
        }
    }

    pub(crate) fn read(path: &Path) -> Sysctl {
        match std::fs::read_to_string(path) {
            Ok(text) => text
                .trim()
                .parse()
                .map_or(Sysctl::Unreadable, Sysctl::Value),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Sysctl::Absent,
            Err(_) => Sysctl::Unreadable,
        }
    }

    /// `name=value` or what stands in for the value.
    pub(crate) fn show(self, name: &str) -> String {
        match self {
            Sysctl::Value(v) => format!("{name}={v}"),
            Sysctl::Unreadable => format!("{name} is not readable by this user"),
            Sysctl::Absent => format!("{name} does not exist"),
        }
    }
}

/// The sysctls doctor reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Sysctls {
    pub kptr_restrict: Sysctl,
    pub perf_event_paranoid: Sysctl,
    pub perf_event_max_sample_rate: Sysctl,
    pub perf_event_mlock_kb: Sysctl,
    pub bpf_stats_enabled: Sysctl,
    pub bpf_jit_enable: Sysctl,
    pub bpf_jit_harden: Sysctl,
    pub bpf_jit_kallsyms: Sysctl,
}

impl Sysctls {
    fn read() -> Sysctls {
        let k = |n: &str| Sysctl::read(&Path::new("/proc/sys/kernel").join(n));
        let net = |n: &str| Sysctl::read(&Path::new("/proc/sys/net/core").join(n));
        Sysctls {
            kptr_restrict: k("kptr_restrict"),
            perf_event_paranoid: k("perf_event_paranoid"),
            perf_event_max_sample_rate: k("perf_event_max_sample_rate"),
            perf_event_mlock_kb: k("perf_event_mlock_kb"),
            bpf_stats_enabled: k("bpf_stats_enabled"),
            bpf_jit_enable: net("bpf_jit_enable"),
            bpf_jit_harden: net("bpf_jit_harden"),
            bpf_jit_kallsyms: net("bpf_jit_kallsyms"),
        }
    }
}

/// `/sys/kernel/btf/vmlinux`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum VmlinuxBtf {
    /// Read: its size in bytes.
    Read(usize),
    /// There but not readable: the error text.
    Unreadable(String),
    Absent,
}

/// How many objects of each kind are loaded, or why they could not be
/// counted (only IDs are walked; nothing is opened).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ObjectCounts {
    pub progs: Result<u32, Errno>,
    pub maps: Result<u32, Errno>,
    pub links: Result<u32, Errno>,
    pub btfs: Result<u32, Errno>,
}

/// The loaded programs as the profiler would see them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct JitSurvey {
    /// JIT-compiled programs.
    pub jited: u32,
    /// Programs running in the interpreter.
    pub interpreted: u32,
    /// JIT-compiled programs whose addresses the kernel shows brr.
    pub addressed: u32,
}

/// perf_event_open as brr uses it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PerfFacts {
    /// Every catalogue event with the result of opening it (CPU-wide, as
    /// a capture does) on one CPU.
    pub events: Vec<(EventSpec, Result<(), Errno>)>,
    /// Whether `PERF_SAMPLE_CGROUP` opens with the first event that does;
    /// None when none opens.
    pub sample_cgroup: Option<bool>,
    /// `/sys/bus/event_source/devices` names.
    pub pmus: Vec<String>,
}

/// Everything the checks and verdicts are made from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Facts {
    /// `/proc/sys/kernel/osrelease`.
    pub release: Option<String>,
    pub vmlinux_btf: VmlinuxBtf,
    pub features: Features,
    pub sysctl: Sysctls,
    /// brr's effective capabilities.
    pub caps: Option<CapSet>,
    /// brr runs in a user namespace other than the initial one, where its
    /// capabilities do not count for bpf().
    pub user_ns: Option<bool>,
    /// None when mountinfo is unreadable.
    pub mounts: Option<Vec<Mount>>,
    /// RLIMIT_NOFILE (soft, hard); None = unlimited.
    pub nofile: (Option<u64>, Option<u64>),
    /// RLIMIT_MEMLOCK (soft, hard).
    pub memlock: (Option<u64>, Option<u64>),
    pub cpus: usize,
    pub objects: ObjectCounts,
    /// None when programs cannot be opened.
    pub jit: Option<JitSurvey>,
    pub perf: PerfFacts,
    pub stats: StatsHolders,
    /// bpftool is in PATH (for `dump-compare`).
    pub bpftool: bool,
}

/// The release's major and minor number: `6.18.44-x` -> (6, 18).
pub(crate) fn version(release: &str) -> Option<(u32, u32)> {
    let mut parts = release.split(['.', '-', '+']);
    let major = parts.next()?.parse().ok()?;
    let minor = parts
        .next()?
        .chars()
        .take_while(char::is_ascii_digit)
        .collect::<String>()
        .parse()
        .ok()?;
    Some((major, minor))
}

fn count(kind: ObjKind) -> Result<u32, Errno> {
    let (mut id, mut n) = (0u32, 0u32);
    while let Some(next) = bpf::next_id(kind, id)? {
        id = next;
        n += 1;
    }
    Ok(n)
}

/// Read every program's JIT length and first JIT address.
fn survey_jit() -> Option<JitSurvey> {
    let want = ProgWant {
        jit_ranges: true,
        ..Default::default()
    };
    let mut s = JitSurvey::default();
    let mut id = 0u32;
    while let Some(next) = bpf::next_id(ObjKind::Prog, id).ok()? {
        id = next;
        let detail =
            match bpf::fd_by_id(ObjKind::Prog, id).and_then(|fd| bpf::prog_detail(&fd, want)) {
                Ok(d) => d,
                Err(Errno(libc::ENOENT)) => continue,
                Err(_) => return None,
            };
        if detail.info.jited_prog_len == 0 {
            s.interpreted += 1;
            continue;
        }
        s.jited += 1;
        if detail.jited_ksyms.iter().any(|&a| a != 0) {
            s.addressed += 1;
        }
    }
    Some(s)
}

fn perf_facts() -> PerfFacts {
    let cpu = events::probe_cpu();
    let results: Vec<_> = events::EVENTS
        .iter()
        .map(|e| (*e, events::probe(e, 997, Shape::Direct, cpu)))
        .collect();
    let sample_cgroup = results.iter().find(|(_, r)| r.is_ok()).map(|(e, _)| {
        events::cgroup_supported(&events::sample_attr(e, 997, Shape::Direct, None), cpu)
    });
    let mut pmus: Vec<String> = std::fs::read_dir("/sys/bus/event_source/devices")
        .map(|d| {
            d.filter_map(|e| e.ok()?.file_name().into_string().ok())
                .collect()
        })
        .unwrap_or_default();
    pmus.sort();
    PerfFacts {
        events: results,
        sample_cgroup,
        pmus,
    }
}

fn vmlinux() -> (VmlinuxBtf, Features) {
    match std::fs::read("/sys/kernel/btf/vmlinux") {
        Ok(data) => (VmlinuxBtf::Read(data.len()), btf::features(&data)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            (VmlinuxBtf::Absent, Features::default())
        }
        Err(e) => (VmlinuxBtf::Unreadable(e.to_string()), Features::default()),
    }
}

/// The initial user namespace maps every uid to itself.
fn in_user_namespace() -> Option<bool> {
    let map = std::fs::read_to_string("/proc/self/uid_map").ok()?;
    let words: Vec<&str> = map.split_whitespace().collect();
    Some(words != ["0", "0", "4294967295"])
}

/// Look at this host.
pub(crate) fn gather() -> Facts {
    let (vmlinux_btf, features) = vmlinux();
    let objects = ObjectCounts {
        progs: count(ObjKind::Prog),
        maps: count(ObjKind::Map),
        links: count(ObjKind::Link),
        btfs: count(ObjKind::Btf),
    };
    Facts {
        release: std::fs::read_to_string("/proc/sys/kernel/osrelease")
            .ok()
            .map(|r| r.trim().to_string()),
        vmlinux_btf,
        features,
        sysctl: Sysctls::read(),
        caps: CapSet::current(),
        user_ns: in_user_namespace(),
        mounts: std::fs::read_to_string("/proc/self/mountinfo")
            .ok()
            .map(|t| mounts::parse(&t)),
        nofile: perf::rlimit(Resource::Nofile),
        memlock: perf::rlimit(Resource::Memlock),
        cpus: events::online_cpus().len(),
        jit: objects.progs.ok().and_then(|_| survey_jit()),
        objects,
        perf: perf_facts(),
        stats: holders::scan(Path::new("/proc")),
        bpftool: crate::bpftool::find().is_some(),
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::profile::events::tests::results;

    const MOUNTINFO: &str = "42 23 0:39 / /sys/fs/bpf rw,relatime - bpf bpf rw\n\
        43 23 0:13 / /sys/kernel/tracing rw,relatime - tracefs tracefs rw\n\
        44 23 0:27 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n";

    /// A 6.18 host with root running brr, three JIT-compiled programs, no
    /// hardware PMU and statistics off.
    pub(crate) fn root_host() -> Facts {
        Facts {
            release: Some("6.18.44".into()),
            vmlinux_btf: VmlinuxBtf::Read(5 << 20),
            features: Features {
                enable_stats: Some(true),
                link_info: Some(true),
                jited_line_info: Some(true),
                sample_cgroup: Some(true),
                recursion_misses: Some(true),
                verified_insns: Some(true),
            },
            sysctl: Sysctls {
                kptr_restrict: Sysctl::Value(0),
                perf_event_paranoid: Sysctl::Value(2),
                perf_event_max_sample_rate: Sysctl::Value(100_000),
                perf_event_mlock_kb: Sysctl::Value(516),
                bpf_stats_enabled: Sysctl::Value(0),
                bpf_jit_enable: Sysctl::Value(1),
                bpf_jit_harden: Sysctl::Value(0),
                bpf_jit_kallsyms: Sysctl::Value(1),
            },
            caps: Some(CapSet((1 << 41) - 1)),
            user_ns: Some(false),
            mounts: Some(mounts::parse(MOUNTINFO)),
            nofile: (Some(1024), Some(4096)),
            memlock: (Some(8 << 20), Some(8 << 20)),
            cpus: 2,
            objects: ObjectCounts {
                progs: Ok(3),
                maps: Ok(2),
                links: Ok(1),
                btfs: Ok(1),
            },
            jit: Some(JitSurvey {
                jited: 3,
                interpreted: 0,
                addressed: 3,
            }),
            perf: PerfFacts {
                events: results(&["cpu-clock"], Errno(libc::ENOENT)),
                sample_cgroup: Some(true),
                pmus: vec!["software".into(), "tracepoint".into()],
            },
            stats: StatsHolders::default(),
            bpftool: true,
        }
    }

    /// The same host seen by uid 65534 with no capability.
    pub(crate) fn unprivileged() -> Facts {
        let denied = Err(Errno(libc::EPERM));
        let mut f = root_host();
        f.caps = Some(CapSet(0));
        f.objects = ObjectCounts {
            progs: denied,
            maps: denied,
            links: denied,
            btfs: denied,
        };
        f.jit = None;
        f.perf.events = results(&[], Errno(libc::EACCES));
        f.perf.sample_cgroup = None;
        f.sysctl.bpf_jit_harden = Sysctl::Unreadable;
        f.sysctl.bpf_jit_kallsyms = Sysctl::Unreadable;
        f.stats.unreadable = 120;
        f
    }

    #[test]
    fn kernel_versions() {
        assert_eq!(version("6.18.44-fc-v669"), Some((6, 18)));
        assert_eq!(version("5.8.0"), Some((5, 8)));
        assert_eq!(version("4.19"), Some((4, 19)));
        assert_eq!(version("5.15rc1"), Some((5, 15)));
        assert_eq!(version("x"), None);
        assert_eq!(version(""), None);
    }

    #[test]
    fn sysctl_reads() {
        let dir = std::env::temp_dir().join(format!("brr-sysctl-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("n"), "2\n").unwrap();
        std::fs::write(dir.join("bad"), "x\n").unwrap();
        assert_eq!(Sysctl::read(&dir.join("n")), Sysctl::Value(2));
        assert_eq!(Sysctl::read(&dir.join("bad")), Sysctl::Unreadable);
        assert_eq!(Sysctl::read(&dir.join("none")), Sysctl::Absent);
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(Sysctl::Value(2).show("kernel.x"), "kernel.x=2");
        assert_eq!(Sysctl::Absent.value(), None);
    }
}
