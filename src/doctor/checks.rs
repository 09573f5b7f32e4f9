//! The checks: each fact brr depends on, judged `ok`, `limited` or
//! `missing`, with what it means for brr and what to change.

use super::facts::{Facts, Sysctl, VmlinuxBtf};
use super::{mounts, Check, Status};
use crate::privilege::{Cap, Operation};
use crate::profile::access::{self, AddressPolicy};
use crate::profile::events;

fn row(name: &str, status: Status, detail: impl Into<String>, fix: Option<&str>) -> Check {
    Check {
        name: name.into(),
        status,
        detail: detail.into(),
        fix: fix.map(str::to_string),
    }
}

fn ok(name: &str, detail: impl Into<String>) -> Check {
    row(name, Status::Ok, detail, None)
}

/// A sysctl's value for a row named after it.
fn value(s: Sysctl) -> String {
    match s {
        Sysctl::Value(v) => v.to_string(),
        Sysctl::Unreadable => "not readable by this user".into(),
        Sysctl::Absent => "does not exist".into(),
    }
}

/// The kernel's major and minor version.
pub(crate) fn version(f: &Facts) -> Option<(u32, u32)> {
    f.release.as_deref().and_then(super::facts::version)
}

/// Whether the kernel has a feature: from its BTF when that describes the
/// type carrying it, else from the release it first appeared in.
pub(crate) fn feature(
    btf: Option<bool>,
    version: Option<(u32, u32)>,
    since: (u32, u32),
) -> Option<bool> {
    btf.or_else(|| version.map(|v| v >= since))
}

/// The JIT-address policy the facts describe.
pub(crate) fn policy(f: &Facts) -> AddressPolicy {
    AddressPolicy {
        kptr_restrict: f.sysctl.kptr_restrict.value(),
        perf_event_paranoid: f.sysctl.perf_event_paranoid.value(),
        syslog: f.caps.map(|c| c.has(Cap::Syslog)),
    }
}

/// Every check, in report order.
pub(crate) fn all(f: &Facts) -> Vec<Check> {
    let mut out = vec![kernel(f)];
    out.extend(features(f));
    out.push(vmlinux(f));
    out.extend([jit_enable(f), jit_harden(f), jit_kallsyms(f), addresses(f)]);
    out.extend([
        paranoid(f),
        sample_rate(f),
        mlock(f),
        perf_events(f),
        pmu(f),
    ]);
    out.extend(capabilities(f));
    out.extend(mount_checks(f));
    out.extend([fd_limit(f), statistics(f)]);
    out
}

fn kernel(f: &Facts) -> Check {
    const NAME: &str = "kernel";
    match (f.release.as_deref(), version(f)) {
        (Some(r), Some(v)) if v >= (5, 8) => ok(NAME, format!("Linux {r}; brr needs 5.8 or later")),
        (Some(r), Some(_)) => row(
            NAME,
            Status::Limited,
            format!("Linux {r} is older than 5.8, which brr needs for statistics and links"),
            Some("run a Linux 5.8 or later kernel"),
        ),
        (r, _) => row(
            NAME,
            Status::Limited,
            format!(
                "the kernel release {} cannot be read as a version; features are judged from BTF alone",
                r.unwrap_or("(unreadable /proc/sys/kernel/osrelease)")
            ),
            None,
        ),
    }
}

/// One kernel feature: what brr does with it, and what it loses without.
struct Feature {
    name: &'static str,
    have: Option<bool>,
    since: (u32, u32),
    uses: &'static str,
    without: Status,
    loses: &'static str,
}

fn feature_check(ft: &Feature, source: &str) -> Check {
    let (major, minor) = ft.since;
    match ft.have {
        Some(true) => ok(ft.name, format!("{} ({source})", ft.uses)),
        Some(false) => row(
            ft.name,
            ft.without,
            format!(
                "the kernel lacks it (added in {major}.{minor}; {source}): {}",
                ft.loses
            ),
            Some(&format!("run Linux {major}.{minor} or later")),
        ),
        None => row(
            ft.name,
            Status::Limited,
            format!(
                "unknown: neither BTF nor the release tell; without it {}",
                ft.loses
            ),
            None,
        ),
    }
}

fn features(f: &Facts) -> Vec<Check> {
    let v = version(f);
    let source = |btf: Option<bool>, since: (u32, u32)| match btf {
        Some(_) => "kernel BTF".to_string(),
        None => format!("kernel version; added in {}.{}", since.0, since.1),
    };
    let cgroup = match f.perf.sample_cgroup {
        Some(opens) => (Some(opens), "a perf event opened with it".to_string()),
        None => {
            let have = feature(f.features.sample_cgroup, v, (5, 7));
            (have, source(f.features.sample_cgroup, (5, 7)))
        }
    };
    let list = [
        (
            Feature {
                name: "BPF_ENABLE_STATS",
                have: feature(f.features.enable_stats, v, (5, 8)),
                since: (5, 8),
                uses: "run counts and run time for activity, top, prog --stats and the exporter",
                without: Status::Missing,
                loses: "activity, top, prog --stats and the exporter's run counters fail",
            },
            source(f.features.enable_stats, (5, 8)),
        ),
        (
            Feature {
                name: "bpf link info",
                have: feature(f.features.link_info, v, (5, 8)),
                since: (5, 8),
                uses: "links and programs' attach points are listed",
                without: Status::Missing,
                loses: "link fails and programs show no attach points",
            },
            source(f.features.link_info, (5, 8)),
        ),
        (
            Feature {
                name: "JIT line info",
                have: feature(f.features.jited_line_info, v, (5, 0)),
                since: (5, 0),
                uses: "profile maps JIT addresses to source lines",
                without: Status::Limited,
                loses: "profile attributes samples to programs but not to source lines",
            },
            source(f.features.jited_line_info, (5, 0)),
        ),
        (
            Feature {
                name: "PERF_SAMPLE_CGROUP",
                have: cgroup.0,
                since: (5, 7),
                uses: "profile's TRIGGERED BY names each sample's cgroup",
                without: Status::Limited,
                loses: "profile's TRIGGERED BY shows no cgroup",
            },
            cgroup.1,
        ),
        (
            Feature {
                name: "recursion_misses",
                have: feature(f.features.recursion_misses, v, (5, 12)),
                since: (5, 12),
                uses: "programs' recursion_misses and activity's MISSES",
                without: Status::Limited,
                loses: "recursion_misses is null and MISSES `-`",
            },
            source(f.features.recursion_misses, (5, 12)),
        ),
        (
            Feature {
                name: "verified_insns",
                have: feature(f.features.verified_insns, v, (5, 16)),
                since: (5, 16),
                uses: "programs' verified_insns",
                without: Status::Limited,
                loses: "verified_insns is null",
            },
            source(f.features.verified_insns, (5, 16)),
        ),
        (
            Feature {
                name: "perf_event link info",
                // The link info's union says nothing in BTF about this
                // member by name, so the release decides.
                have: feature(None, v, (6, 6)),
                since: (6, 6),
                uses: "perf_event links name their kprobe, uprobe, tracepoint or event",
                without: Status::Limited,
                loses: "perf_event links show no target",
            },
            source(None, (6, 6)),
        ),
    ];
    list.iter()
        .map(|(ft, src)| feature_check(ft, src))
        .collect()
}

fn vmlinux(f: &Facts) -> Check {
    const NAME: &str = "vmlinux BTF";
    match &f.vmlinux_btf {
        VmlinuxBtf::Read(bytes) => ok(
            NAME,
            format!(
                "/sys/kernel/btf/vmlinux ({} KiB): kernel features are read from it, tracing link targets are named",
                bytes / 1024
            ),
        ),
        VmlinuxBtf::Unreadable(e) => row(
            NAME,
            Status::Limited,
            format!("/sys/kernel/btf/vmlinux cannot be read ({e}); features are judged from the kernel version"),
            Some("make /sys/kernel/btf/vmlinux readable (it is mode 0444 by default)"),
        ),
        VmlinuxBtf::Absent => row(
            NAME,
            Status::Limited,
            "no /sys/kernel/btf/vmlinux (kernel built without CONFIG_DEBUG_INFO_BTF): tracing link targets show BTF IDs, and features are judged from the kernel version",
            Some("run a kernel built with CONFIG_DEBUG_INFO_BTF=y"),
        ),
    }
}

fn jit_enable(f: &Facts) -> Check {
    const NAME: &str = "net.core.bpf_jit_enable";
    let loaded = f.jit.map_or_else(String::new, |s| {
        let mut t = format!(
            "; {} of {} loaded programs JIT-compiled",
            s.jited,
            s.jited + s.interpreted
        );
        if s.interpreted > 0 {
            t.push_str(&format!(", {} interpreted (not profiled)", s.interpreted));
        }
        t
    });
    let reload = Some("sysctl -w net.core.bpf_jit_enable=1, then reload the programs");
    match f.sysctl.bpf_jit_enable {
        Sysctl::Value(0) if f.jit.is_some_and(|s| s.jited > 0) => row(
            NAME,
            Status::Limited,
            format!("0: programs loaded from now on run in the interpreter and cannot be profiled{loaded}"),
            reload,
        ),
        Sysctl::Value(0) => row(
            NAME,
            Status::Missing,
            format!("0: programs run in the interpreter; profile cannot attribute samples to them{loaded}"),
            reload,
        ),
        Sysctl::Value(2) => ok(NAME, format!("2: JIT on, with debug output to the kernel log{loaded}")),
        Sysctl::Value(v) => ok(NAME, format!("{v}: JIT on{loaded}")),
        Sysctl::Absent => row(
            NAME,
            Status::Missing,
            "the kernel has no BPF JIT (CONFIG_BPF_JIT off): programs are interpreted and cannot be profiled",
            Some("run a kernel built with CONFIG_BPF_JIT=y"),
        ),
        Sysctl::Unreadable => row(NAME, Status::Limited, value(Sysctl::Unreadable), None),
    }
}

fn jit_harden(f: &Facts) -> Check {
    const NAME: &str = "net.core.bpf_jit_harden";
    let detail = match f.sysctl.bpf_jit_harden {
        Sysctl::Value(0) => "0: no constant blinding".to_string(),
        Sysctl::Value(v) => format!(
            "{v}: constants are blinded in programs {} loads from now on (dump shows their rewritten instructions, through register 11) and JIT programs are left out of /proc/kallsyms; they profile as usual",
            if v == 1 { "an unprivileged loader" } else { "any loader" }
        ),
        Sysctl::Unreadable => "not readable without root (mode 0600); no brr command depends on it".into(),
        Sysctl::Absent => "does not exist (no BPF JIT)".into(),
    };
    ok(NAME, detail)
}

fn jit_kallsyms(f: &Facts) -> Check {
    const NAME: &str = "net.core.bpf_jit_kallsyms";
    let detail = match f.sysctl.bpf_jit_kallsyms {
        Sysctl::Value(0) => "0: JIT programs are not in /proc/kallsyms (perf report cannot name them); brr reads their addresses through bpf() and does not need it".to_string(),
        Sysctl::Value(v) => format!("{v}: JIT programs are listed in /proc/kallsyms for perf and other tools (unless hardened); brr does not need it"),
        Sysctl::Unreadable => "not readable without root (mode 0600); no brr command depends on it".into(),
        Sysctl::Absent => "does not exist (no BPF JIT)".into(),
    };
    ok(NAME, detail)
}

/// `kernel.kptr_restrict` with CAP_SYSLOG (and the paranoid level that
/// decides when it is 0): whether brr sees JIT addresses.
fn addresses(f: &Facts) -> Check {
    const NAME: &str = "kernel.kptr_restrict";
    const LOSES: &str = "profile cannot attribute any sample, dump shows helper-call targets as 0, --kernel-samples shows no kernel symbols";
    let p = policy(f);
    let inputs = format!(
        "{}, {}, CAP_SYSLOG {}",
        f.sysctl.kptr_restrict.show("kernel.kptr_restrict"),
        f.sysctl
            .perf_event_paranoid
            .show("kernel.perf_event_paranoid"),
        match p.syslog {
            Some(true) => "held",
            Some(false) => "not held",
            None => "unknown",
        }
    );
    if let Some(h) = access::hidden_by_policy(&p) {
        return row(
            NAME,
            Status::Missing,
            format!("{inputs}: JIT addresses are hidden from brr; {LOSES}"),
            Some(&h.fix),
        );
    }
    match f.jit {
        Some(s) if s.jited > 0 && s.addressed == 0 => row(
            NAME,
            Status::Missing,
            format!("{inputs}, yet the kernel hides the JIT addresses of all {} JIT-compiled programs (a security module or a user namespace denies CAP_SYSLOG); {LOSES}", s.jited),
            Some("run brr as root in the initial user namespace"),
        ),
        Some(s) if s.addressed > 0 => ok(NAME, format!("{inputs}: JIT addresses visible (seen on {} programs)", s.addressed)),
        _ if p.kptr_restrict.is_some() && p.syslog.is_some() => ok(NAME, format!("{inputs}: JIT addresses visible")),
        _ => row(NAME, Status::Limited, format!("{inputs}: cannot tell whether JIT addresses are visible"), None),
    }
}

fn paranoid(f: &Facts) -> Check {
    const NAME: &str = "kernel.perf_event_paranoid";
    let level = f.sysctl.perf_event_paranoid;
    let held = f.caps.is_some_and(|c| c.allows(Operation::PerfCpuWide));
    let opens = f.perf.events.iter().any(|(_, r)| r.is_ok());
    let shown = value(level);
    match level.value() {
        Some(v) if v <= 0 => ok(NAME, format!("{shown}: CPU-wide perf events open without privilege")),
        _ if held && opens => ok(NAME, format!("{shown}: CPU-wide perf events need CAP_PERFMON or CAP_SYS_ADMIN, which brr holds")),
        _ if opens => ok(NAME, format!("{shown}: CPU-wide perf events open for brr")),
        _ if held => row(NAME, Status::Missing, format!("{shown}: brr holds CAP_PERFMON or CAP_SYS_ADMIN, yet CPU-wide perf events are refused (a security module or a user namespace)"), Some("run brr as root in the initial user namespace")),
        _ => row(
            NAME,
            Status::Missing,
            format!("{shown}: CPU-wide perf events need CAP_PERFMON (or CAP_SYS_ADMIN), which brr lacks: perf-events and profile fail"),
            Some("run brr as root or grant it CAP_PERFMON, or set kernel.perf_event_paranoid to 0"),
        ),
    }
}

fn sample_rate(f: &Facts) -> Check {
    const NAME: &str = "kernel.perf_event_max_sample_rate";
    match f.sysctl.perf_event_max_sample_rate.value() {
        Some(r) if r > 0 && r < 997 => row(
            NAME,
            Status::Limited,
            format!("{r} Hz: below brr's default -F 997, so profile and top --profile-top fail unless -F is at most {r}"),
            Some(&format!("pass -F {r} or lower, or raise kernel.perf_event_max_sample_rate")),
        ),
        Some(r) => ok(NAME, format!("{r} Hz: brr's default -F 997 fits (the kernel lowers the limit by itself when sampling takes too long)")),
        None => row(NAME, Status::Limited, value(f.sysctl.perf_event_max_sample_rate), None),
    }
}

fn mib(bytes: Option<u64>) -> String {
    bytes.map_or_else(|| "unlimited".into(), |b| format!("{} KiB", b / 1024))
}

fn mlock(f: &Facts) -> Check {
    const NAME: &str = "kernel.perf_event_mlock_kb";
    let lock = f.caps.is_some_and(|c| c.has(Cap::IpcLock));
    match f.sysctl.perf_event_mlock_kb.value() {
        Some(_) | None if lock => ok(NAME, format!("{} KiB per CPU; brr holds CAP_IPC_LOCK, so perf rings are not limited by it", value(f.sysctl.perf_event_mlock_kb))),
        Some(kb) if kb >= 8 => ok(NAME, format!("{kb} KiB per CPU, plus RLIMIT_MEMLOCK {}: the automatic ring size stays within it; a larger --perf-buffer-pages needs CAP_IPC_LOCK", mib(f.memlock.0))),
        Some(kb) => row(NAME, Status::Limited, format!("{kb} KiB per CPU, plus RLIMIT_MEMLOCK {}: too small for a perf ring of one data page", mib(f.memlock.0)), Some("raise kernel.perf_event_mlock_kb, or run brr as root (CAP_IPC_LOCK)")),
        None => row(NAME, Status::Limited, value(f.sysctl.perf_event_mlock_kb), None),
    }
}

/// The names of the catalogue events that opened.
pub(crate) fn openable(f: &Facts) -> Vec<&'static str> {
    f.perf
        .events
        .iter()
        .filter(|(_, r)| r.is_ok())
        .map(|(e, _)| e.name)
        .collect()
}

fn perf_events(f: &Facts) -> Check {
    const NAME: &str = "perf events";
    let open = openable(f);
    let auto = events::AUTO_CANDIDATES.iter().find(|n| open.contains(n));
    match auto {
        Some(a) => ok(
            NAME,
            format!("open: {}; --event auto picks {a}", open.join(", ")),
        ),
        None if !open.is_empty() => row(
            NAME,
            Status::Limited,
            format!("open: {}; none that --event auto tries", open.join(", ")),
            Some("pass --event with one of them"),
        ),
        None => {
            let denied = f
                .perf
                .events
                .iter()
                .any(|(_, r)| matches!(r, Err(e) if e.0 == libc::EPERM || e.0 == libc::EACCES));
            let (detail, fix) = if denied {
                (
                    "none opens: permission denied (see kernel.perf_event_paranoid)",
                    "run brr as root or grant it CAP_PERFMON",
                )
            } else {
                (
                    "none of brr's events is supported by this kernel",
                    "run a kernel with perf events (CONFIG_PERF_EVENTS)",
                )
            };
            row(NAME, Status::Missing, detail, Some(fix))
        }
    }
}

fn pmu(f: &Facts) -> Check {
    const NAME: &str = "hardware PMU";
    let hardware: Vec<&str> = f
        .perf
        .events
        .iter()
        .filter(|(e, r)| r.is_ok() && e.type_name() == "hardware")
        .map(|(e, _)| e.name)
        .collect();
    let sources = if f.perf.pmus.is_empty() {
        "none".to_string()
    } else {
        f.perf.pmus.join(", ")
    };
    let core =
        f.perf.pmus.iter().any(|p| {
            matches!(p.as_str(), "cpu" | "cpu_core" | "cpu_atom") || p.starts_with("armv")
        });
    if !hardware.is_empty() {
        return ok(
            NAME,
            format!("hardware events open: {}", hardware.join(", ")),
        );
    }
    if openable(f).is_empty() && core {
        return ok(NAME, format!("a CPU PMU is registered (event sources: {sources}); brr could not open events to try it"));
    }
    row(
        NAME,
        Status::Limited,
        format!("no hardware event opens (event sources: {sources}): only cpu-clock samples, driven by a timer; no cycles, no precise IPs, no --call-graph lbr"),
        Some("run on a host or VM with a hardware PMU (e.g. a virtual PMU passed through to the guest)"),
    )
}

fn capabilities(f: &Facts) -> Vec<Check> {
    let Some(caps) = f.caps else {
        return vec![row(
            "capabilities",
            Status::Limited,
            "unknown: /proc/self/status is unreadable",
            None,
        )];
    };
    let kptr = f.sysctl.kptr_restrict.value();
    let paranoid = f.sysctl.perf_event_paranoid.value();
    let admin_fix = Some(
        "run brr as root, or grant a copy of it cap_sys_admin,cap_syslog+ep (docs/privileges.md)",
    );
    let admin = match (caps.has(Cap::SysAdmin), f.user_ns == Some(true)) {
        (true, false) => ok("CAP_SYS_ADMIN", "held: loaded objects are listed, opened and measured"),
        (true, true) => row("CAP_SYS_ADMIN", Status::Missing, "held only in a user namespace, which bpf() does not accept: prog, map, link, btf, activity, dump, profile, top and exporter fail", Some("run brr as root in the initial user namespace")),
        (false, _) => row("CAP_SYS_ADMIN", Status::Missing, "not held: prog, map, link, btf, activity, dump, dump-compare, profile, top and exporter fail (exit 2)", admin_fix),
    };
    let syslog = if caps.has(Cap::Syslog) {
        ok(
            "CAP_SYSLOG",
            "held: kernel addresses are shown unless kernel.kptr_restrict=2",
        )
    } else if kptr.is_some_and(|k| k >= 2) {
        ok("CAP_SYSLOG", "not held; it would not help while kernel.kptr_restrict=2 hides addresses from everyone")
    } else if kptr == Some(0) && paranoid.is_some_and(|p| p <= 1) {
        ok(
            "CAP_SYSLOG",
            "not held; not needed while kernel.kptr_restrict=0 and kernel.perf_event_paranoid <= 1",
        )
    } else {
        row("CAP_SYSLOG", Status::Missing, "not held: the kernel hides JIT addresses and kernel symbols from brr (see kernel.kptr_restrict)", Some("run brr as root or grant it CAP_SYSLOG"))
    };
    let perfmon = if caps.has(Cap::Perfmon) {
        ok("CAP_PERFMON", "held: CPU-wide perf events open")
    } else if caps.has(Cap::SysAdmin) {
        ok(
            "CAP_PERFMON",
            "not held; CAP_SYS_ADMIN opens CPU-wide perf events as well",
        )
    } else if paranoid.is_some_and(|p| p <= 0) {
        ok(
            "CAP_PERFMON",
            "not held; not needed while kernel.perf_event_paranoid <= 0",
        )
    } else {
        row(
            "CAP_PERFMON",
            Status::Missing,
            "not held: perf-events and profile cannot open perf events",
            Some("run brr as root or grant it CAP_PERFMON"),
        )
    };
    let ipc = if caps.has(Cap::IpcLock) {
        ok(
            "CAP_IPC_LOCK",
            "held: --perf-buffer-pages may exceed kernel.perf_event_mlock_kb plus RLIMIT_MEMLOCK",
        )
    } else {
        row("CAP_IPC_LOCK", Status::Limited, "not held: perf rings are limited to kernel.perf_event_mlock_kb per CPU plus RLIMIT_MEMLOCK (the automatic size stays within that)", Some("run brr as root or grant it CAP_IPC_LOCK for a larger --perf-buffer-pages"))
    };
    let bpf = ok(
        "CAP_BPF",
        format!(
            "{}; brr does not need it: listing, opening and statistics check CAP_SYS_ADMIN",
            if caps.has(Cap::Bpf) {
                "held"
            } else {
                "not held"
            }
        ),
    );
    vec![admin, syslog, perfmon, ipc, bpf]
}

fn mount_checks(f: &Facts) -> Vec<Check> {
    let Some(all) = f.mounts.as_deref() else {
        return vec![row(
            "mounts",
            Status::Limited,
            "/proc/self/mountinfo is unreadable",
            None,
        )];
    };
    let bpf = mounts::points(all, "bpf");
    // Every bpffs mount is scanned for pins, wherever it is.
    let bpffs = if !bpf.is_empty() {
        ok(
            "bpffs",
            format!("mounted at {}: pinned paths are shown", bpf.join(", ")),
        )
    } else {
        row(
            "bpffs",
            Status::Limited,
            "not mounted in brr's mount namespace: no pinned path is shown",
            Some("mount -t bpf bpf /sys/fs/bpf"),
        )
    };
    let trace = mounts::points(all, "tracefs");
    let tracefs = match trace.first() {
        Some(_) => ok(
            "tracefs",
            format!("mounted at {}; brr does not read it", trace.join(", ")),
        ),
        None => ok(
            "tracefs",
            "not mounted; brr does not need it (loaders that attach classic tracepoints do)",
        ),
    };
    let cg = mounts::points(all, "cgroup2");
    let cgroup2 = match cg.first() {
        Some(_) => ok(
            "cgroup2",
            format!(
                "mounted at {}: cgroup links show their cgroup path",
                cg.join(", ")
            ),
        ),
        None => row(
            "cgroup2",
            Status::Limited,
            "not mounted: cgroup links show cgroup IDs instead of paths",
            Some("mount -t cgroup2 none /sys/fs/cgroup"),
        ),
    };
    vec![bpffs, tracefs, cgroup2]
}

fn fd_limit(f: &Facts) -> Check {
    const NAME: &str = "RLIMIT_NOFILE";
    let o = &f.objects;
    let loaded = match (o.progs, o.maps, o.links, o.btfs) {
        (Ok(p), Ok(m), Ok(l), Ok(b)) => {
            format!("{p} programs, {m} maps, {l} links and {b} BTF objects loaded")
        }
        (Ok(p), Ok(m), _, _) => format!("{p} programs and {m} maps loaded"),
        _ => "loaded objects not countable without CAP_SYS_ADMIN".into(),
    };
    let need = 2 * f.cpus as u64 + 16;
    let soft = f.nofile.0;
    let detail = format!(
        "soft {}, hard {}; {loaded}; brr opens objects one at a time, and a profile opens 2 perf events per CPU ({} here)",
        soft.map_or_else(|| "unlimited".into(), |s| s.to_string()),
        f.nofile.1.map_or_else(|| "unlimited".into(), |s| s.to_string()),
        2 * f.cpus
    );
    match soft {
        Some(s) if s < need => row(
            NAME,
            Status::Limited,
            format!("{detail}: too few for a profile"),
            Some(&format!("ulimit -n {need}")),
        ),
        _ => ok(NAME, detail),
    }
}

fn statistics(f: &Facts) -> Check {
    const NAME: &str = "statistics";
    let s = &f.stats;
    let unseen = if s.unreadable > 0 {
        format!(" ({} processes of other users not looked at)", s.unreadable)
    } else {
        String::new()
    };
    let holders: Vec<String> = s
        .holders
        .iter()
        .map(|o| format!("{}({})", o.comm, o.pid))
        .collect();
    let cost = "every run of every eBPF program on the host pays for the accounting (82 ns per run on a KVM guest; brr cost measures it here)";
    match f.sysctl.bpf_stats_enabled {
        Sysctl::Value(v) if v != 0 => row(
            NAME,
            Status::Limited,
            format!("on: kernel.bpf_stats_enabled={v}{}; {cost} until it is 0", if holders.is_empty() { String::new() } else { format!(", and BPF_ENABLE_STATS held by {}", holders.join(", ")) }),
            Some("sysctl -w kernel.bpf_stats_enabled=0 (brr turns statistics on itself while it measures)"),
        ),
        _ if !holders.is_empty() => row(
            NAME,
            Status::Limited,
            format!("on: BPF_ENABLE_STATS held by {}; {cost} while they hold it{unseen}", holders.join(", ")),
            Some("end those processes when the counters are not needed"),
        ),
        level => ok(NAME, format!("off: {} and no process{} holds BPF_ENABLE_STATS{unseen}; brr turns statistics on only while it measures", level.show("kernel.bpf_stats_enabled"), if s.unreadable > 0 { " brr could look at" } else { "" })),
    }
}

#[cfg(test)]
#[path = "checks_tests.rs"]
mod tests;
