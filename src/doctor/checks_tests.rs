//! Each check's classification from synthetic facts.

use super::*;
use crate::doctor::facts::tests::{root_host, unprivileged};
use crate::doctor::facts::{Facts, JitSurvey};
use crate::doctor::holders::StatsHolders;
use crate::model::Owner;
use crate::privilege::CapSet;
use crate::profile::events::tests::results;
use crate::sys::Errno;

fn get(f: &Facts, name: &str) -> Check {
    all(f)
        .into_iter()
        .find(|c| c.name == name)
        .unwrap_or_else(|| panic!("no check {name}"))
}

fn status(f: &Facts, name: &str) -> Status {
    get(f, name).status
}

fn caps(list: &[Cap]) -> Option<CapSet> {
    Some(CapSet(list.iter().fold(0, |a, c| a | 1 << c.bit())))
}

#[test]
fn a_root_host_is_all_ok_but_the_pmu() {
    let checks = all(&root_host());
    let names: Vec<&str> = checks.iter().map(|c| c.name.as_str()).collect();
    for required in [
        "kernel",
        "BPF_ENABLE_STATS",
        "bpf link info",
        "JIT line info",
        "PERF_SAMPLE_CGROUP",
        "vmlinux BTF",
        "net.core.bpf_jit_enable",
        "net.core.bpf_jit_harden",
        "net.core.bpf_jit_kallsyms",
        "kernel.kptr_restrict",
        "kernel.perf_event_paranoid",
        "kernel.perf_event_max_sample_rate",
        "kernel.perf_event_mlock_kb",
        "perf events",
        "hardware PMU",
        "CAP_SYS_ADMIN",
        "CAP_SYSLOG",
        "CAP_PERFMON",
        "CAP_IPC_LOCK",
        "CAP_BPF",
        "bpffs",
        "tracefs",
        "cgroup2",
        "RLIMIT_NOFILE",
        "statistics",
    ] {
        assert!(
            names.contains(&required),
            "{required} missing from {names:?}"
        );
    }
    for c in &checks {
        let expected = if c.name == "hardware PMU" {
            Status::Limited
        } else {
            Status::Ok
        };
        assert_eq!(c.status, expected, "{c:?}");
        assert_eq!(c.fix.is_some(), c.status != Status::Ok, "{c:?}");
    }
    assert!(get(&root_host(), "perf events")
        .detail
        .contains("--event auto picks cpu-clock"));
}

/// A 5.10 kernel: its BTF's bpf_prog_info has neither counter, and its
/// perf_event links carry no info; each is named with the release that
/// added it.
#[test]
fn a_5_10_kernel_names_what_it_lacks_and_since_when() {
    let mut f = root_host();
    f.release = Some("5.10.0-35-amd64".into());
    f.features.recursion_misses = Some(false);
    f.features.verified_insns = Some(false);
    for (name, since) in [
        ("recursion_misses", "5.12"),
        ("verified_insns", "5.16"),
        ("perf_event link info", "6.6"),
    ] {
        let c = get(&f, name);
        assert_eq!(c.status, Status::Limited, "{c:?}");
        assert!(c.detail.contains(&format!("added in {since}")), "{c:?}");
        assert_eq!(c.fix, Some(format!("run Linux {since} or later")));
    }
    // Without BTF the release decides: 5.15 has recursion_misses only.
    f.release = Some("5.15.0".into());
    f.features = Default::default();
    assert_eq!(status(&f, "recursion_misses"), Status::Ok);
    assert_eq!(status(&f, "verified_insns"), Status::Limited);
}

#[test]
fn kernel_features_from_btf_or_version() {
    let mut f = root_host();
    f.release = Some("5.4.0-100-generic".into());
    f.features = Default::default();
    f.perf.sample_cgroup = None;
    assert_eq!(status(&f, "kernel"), Status::Limited);
    let stats = get(&f, "BPF_ENABLE_STATS");
    assert_eq!(stats.status, Status::Missing);
    assert!(
        stats.detail.contains("kernel version; added in 5.8"),
        "{stats:?}"
    );
    assert_eq!(stats.fix.as_deref(), Some("run Linux 5.8 or later"));
    assert_eq!(status(&f, "bpf link info"), Status::Missing);
    assert_eq!(status(&f, "JIT line info"), Status::Ok);
    assert_eq!(status(&f, "PERF_SAMPLE_CGROUP"), Status::Limited);
    // BTF wins over the version; a perf probe wins over BTF.
    f.features.enable_stats = Some(true);
    assert_eq!(status(&f, "BPF_ENABLE_STATS"), Status::Ok);
    f.features.sample_cgroup = Some(true);
    f.perf.sample_cgroup = Some(false);
    assert_eq!(status(&f, "PERF_SAMPLE_CGROUP"), Status::Limited);
    f.release = Some("weird".into());
    f.features = Default::default();
    assert_eq!(status(&f, "kernel"), Status::Limited);
    assert_eq!(status(&f, "BPF_ENABLE_STATS"), Status::Limited);
    f.vmlinux_btf = VmlinuxBtf::Absent;
    assert!(get(&f, "vmlinux BTF")
        .fix
        .is_some_and(|x| x.contains("CONFIG_DEBUG_INFO_BTF")));
}

#[test]
fn jit_sysctls() {
    let mut f = root_host();
    f.sysctl.bpf_jit_enable = Sysctl::Value(0);
    let c = get(&f, "net.core.bpf_jit_enable");
    assert_eq!(
        c.status,
        Status::Limited,
        "programs already JITed still profile"
    );
    assert!(c.detail.contains("3 of 3 loaded programs JIT-compiled"));
    f.jit = Some(JitSurvey {
        jited: 0,
        interpreted: 2,
        addressed: 0,
    });
    let c = get(&f, "net.core.bpf_jit_enable");
    assert_eq!(c.status, Status::Missing);
    assert!(c.detail.contains("2 interpreted"), "{c:?}");
    f.sysctl.bpf_jit_enable = Sysctl::Absent;
    assert_eq!(status(&f, "net.core.bpf_jit_enable"), Status::Missing);
    f.sysctl.bpf_jit_harden = Sysctl::Value(2);
    let c = get(&f, "net.core.bpf_jit_harden");
    assert_eq!(c.status, Status::Ok);
    assert!(c.detail.contains("any loader loads from now on"));
    let u = unprivileged();
    assert!(get(&u, "net.core.bpf_jit_kallsyms")
        .detail
        .contains("not readable without root"));
}

#[test]
fn kernel_addresses_follow_kptr_restrict_and_cap_syslog() {
    let mut f = root_host();
    f.sysctl.kptr_restrict = Sysctl::Value(2);
    let c = get(&f, "kernel.kptr_restrict");
    assert_eq!(c.status, Status::Missing);
    assert!(c.detail.starts_with("kernel.kptr_restrict=2"), "{c:?}");
    assert_eq!(c.fix.as_deref(), Some("set it to 1 and run brr as root"));
    f.caps = caps(&[Cap::SysAdmin]);
    assert_eq!(status(&f, "CAP_SYSLOG"), Status::Ok, "it would not help");
    f.sysctl.kptr_restrict = Sysctl::Value(1);
    assert_eq!(status(&f, "kernel.kptr_restrict"), Status::Missing);
    assert_eq!(status(&f, "CAP_SYSLOG"), Status::Missing);
    f.sysctl.kptr_restrict = Sysctl::Value(0);
    assert_eq!(
        status(&f, "kernel.kptr_restrict"),
        Status::Missing,
        "paranoid 2"
    );
    f.sysctl.perf_event_paranoid = Sysctl::Value(1);
    assert_eq!(status(&f, "CAP_SYSLOG"), Status::Ok);
    // The policy allows it, yet nothing shows: refused elsewhere.
    f.jit = Some(JitSurvey {
        jited: 3,
        interpreted: 0,
        addressed: 0,
    });
    let c = get(&f, "kernel.kptr_restrict");
    assert_eq!(c.status, Status::Missing);
    assert!(c.detail.contains("user namespace"));
    f.sysctl.kptr_restrict = Sysctl::Unreadable;
    f.jit = None;
    assert_eq!(status(&f, "kernel.kptr_restrict"), Status::Limited);
}

#[test]
fn perf_settings() {
    let u = unprivileged();
    let c = get(&u, "kernel.perf_event_paranoid");
    assert_eq!(c.status, Status::Missing);
    assert!(c.detail.starts_with("2: "), "{c:?}");
    let c = get(&u, "perf events");
    assert_eq!(c.status, Status::Missing);
    assert!(c.detail.contains("permission denied"));
    let mut open = unprivileged();
    open.sysctl.perf_event_paranoid = Sysctl::Value(-1);
    open.perf.events = results(&["cpu-clock"], Errno(libc::ENOENT));
    assert_eq!(status(&open, "kernel.perf_event_paranoid"), Status::Ok);
    assert_eq!(status(&open, "CAP_PERFMON"), Status::Ok);
    let mut f = root_host();
    f.perf.events = results(&[], Errno(libc::ENOENT));
    assert!(get(&f, "perf events").detail.contains("supported"));
    f.sysctl.perf_event_max_sample_rate = Sysctl::Value(500);
    let c = get(&f, "kernel.perf_event_max_sample_rate");
    assert_eq!(c.status, Status::Limited);
    assert!(c.fix.is_some_and(|x| x.starts_with("pass -F 500")));
    let mut m = unprivileged();
    assert_eq!(status(&m, "kernel.perf_event_mlock_kb"), Status::Ok);
    m.sysctl.perf_event_mlock_kb = Sysctl::Value(4);
    assert_eq!(status(&m, "kernel.perf_event_mlock_kb"), Status::Limited);
}

#[test]
fn hardware_pmu() {
    let mut f = root_host();
    f.perf.events = results(&["cycles:ppp", "cycles", "cpu-clock"], Errno(libc::ENOENT));
    let c = get(&f, "hardware PMU");
    assert_eq!(c.status, Status::Ok);
    assert!(c.detail.contains("cycles:ppp, cycles"));
    assert!(get(&f, "perf events")
        .detail
        .ends_with("--event auto picks cycles:ppp"));
    // Nothing opens for this user, but sysfs shows a CPU PMU.
    let mut u = unprivileged();
    u.perf.pmus = vec!["cpu".into(), "software".into()];
    assert_eq!(status(&u, "hardware PMU"), Status::Ok);
    assert_eq!(status(&unprivileged(), "hardware PMU"), Status::Limited);
}

#[test]
fn capabilities_and_their_costs() {
    let u = unprivileged();
    let admin = get(&u, "CAP_SYS_ADMIN");
    assert_eq!(admin.status, Status::Missing);
    assert!(admin.detail.contains("prog, map, link, btf, activity"));
    assert_eq!(status(&u, "CAP_PERFMON"), Status::Missing);
    assert_eq!(status(&u, "CAP_SYSLOG"), Status::Missing);
    assert_eq!(status(&u, "CAP_IPC_LOCK"), Status::Limited);
    assert_eq!(status(&u, "CAP_BPF"), Status::Ok);
    let mut f = root_host();
    f.caps = caps(&[Cap::SysAdmin, Cap::Syslog]);
    assert!(get(&f, "CAP_PERFMON")
        .detail
        .contains("CAP_SYS_ADMIN opens"));
    assert_eq!(status(&f, "CAP_PERFMON"), Status::Ok);
    f.user_ns = Some(true);
    assert!(get(&f, "CAP_SYS_ADMIN").detail.contains("user namespace"));
    f.caps = None;
    assert_eq!(status(&f, "capabilities"), Status::Limited);
}

#[test]
fn mounts_and_limits() {
    let mut f = root_host();
    f.mounts = Some(mounts::parse("50 23 0:40 / /mnt/bpf rw - bpf none rw\n"));
    // Pins are read from every bpffs mount, not only /sys/fs/bpf.
    let c = get(&f, "bpffs");
    assert_eq!(c.status, Status::Ok);
    assert_eq!(c.detail, "mounted at /mnt/bpf: pinned paths are shown");
    assert_eq!(status(&f, "tracefs"), Status::Ok, "brr does not need it");
    assert_eq!(status(&f, "cgroup2"), Status::Limited);
    f.mounts = Some(Vec::new());
    assert_eq!(
        get(&f, "bpffs").fix.as_deref(),
        Some("mount -t bpf bpf /sys/fs/bpf")
    );
    f.mounts = None;
    assert_eq!(status(&f, "mounts"), Status::Limited);
    f.nofile = (Some(8), Some(8));
    let c = get(&f, "RLIMIT_NOFILE");
    assert_eq!(c.status, Status::Limited);
    assert_eq!(c.fix.as_deref(), Some("ulimit -n 20"));
    assert!(c
        .detail
        .contains("3 programs, 2 maps, 1 links and 1 BTF objects loaded"));
    assert!(get(&unprivileged(), "RLIMIT_NOFILE")
        .detail
        .contains("not countable"));
}

#[test]
fn statistics_holders_and_sysctl() {
    let mut f = root_host();
    f.stats = StatsHolders {
        holders: vec![Owner {
            pid: 120,
            comm: "exporter".into(),
        }],
        unreadable: 0,
    };
    let c = get(&f, "statistics");
    assert_eq!(c.status, Status::Limited);
    assert!(c
        .detail
        .starts_with("on: BPF_ENABLE_STATS held by exporter(120); every run"));
    f.sysctl.bpf_stats_enabled = Sysctl::Value(1);
    let c = get(&f, "statistics");
    assert!(c
        .detail
        .starts_with("on: kernel.bpf_stats_enabled=1, and BPF_ENABLE_STATS held by exporter(120)"));
    assert!(c
        .fix
        .is_some_and(|x| x.starts_with("sysctl -w kernel.bpf_stats_enabled=0")));
    let c = get(&unprivileged(), "statistics");
    assert_eq!(c.status, Status::Ok);
    assert!(
        c.detail
            .contains("no process brr could look at holds BPF_ENABLE_STATS (120 processes"),
        "{c:?}"
    );
}
