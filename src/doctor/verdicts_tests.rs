//! Each command's verdict from synthetic facts.

use super::*;
use crate::doctor::facts::tests::{root_host, unprivileged};
use crate::doctor::facts::JitSurvey;

fn get(f: &Facts, command: &str) -> Verdict {
    all(f)
        .into_iter()
        .find(|v| v.command == command)
        .unwrap_or_else(|| panic!("no verdict for {command}"))
}

fn reason(f: &Facts, command: &str) -> String {
    get(f, command).reason.unwrap_or_default()
}

#[test]
fn every_command_works_for_root() {
    let verdicts = all(&root_host());
    let names: Vec<&str> = verdicts.iter().map(|v| v.command).collect();
    assert_eq!(
        names,
        [
            "prog",
            "map",
            "link",
            "btf",
            "activity",
            "top",
            "profile",
            "cost",
            "perf-events",
            "dump",
            "dump-compare",
            "exporter"
        ]
    );
    for v in verdicts {
        assert!(v.works && v.reason.is_none(), "{v:?}");
    }
}

#[test]
fn unprivileged_user_is_told_which_capability() {
    let u = unprivileged();
    // Each in the words of the call it makes first.
    for (commands, step) in [
        (&["prog", "map", "link", "btf"][..], "list eBPF object IDs"),
        (
            &["activity", "top", "cost", "exporter"],
            "enable eBPF runtime statistics",
        ),
        (&["dump", "dump-compare"], "open eBPF object id ID"),
    ] {
        for command in commands {
            let v = get(&u, command);
            assert!(!v.works, "{v:?}");
            assert_eq!(
                v.reason,
                Some(format!(
                    "permission denied while trying to {step}; needs CAP_SYS_ADMIN (run brr with sudo)"
                ))
            );
        }
    }
    // As the commands themselves: both name the event `auto` reports when
    // nothing opens.
    assert!(!get(&u, "profile").works);
    assert!(reason(&u, "profile")
        .starts_with("permission denied while opening perf event cpu-clock; needs CAP_PERFMON"));
    assert!(reason(&u, "perf-events")
        .starts_with("permission denied while opening perf event cpu-clock; needs CAP_PERFMON"));
    // CAP_PERFMON alone: profile stops at listing programs.
    let mut perfmon = unprivileged();
    perfmon.perf.events = root_host().perf.events;
    assert!(reason(&perfmon, "profile").contains("CAP_SYS_ADMIN"));
    assert!(get(&perfmon, "perf-events").works);
}

#[test]
fn hidden_jit_addresses_stop_profile_only() {
    let mut f = root_host();
    f.sysctl.kptr_restrict = Sysctl::Value(2);
    let p = get(&f, "profile");
    assert!(!p.works);
    assert_eq!(
        p.reason.as_deref(),
        Some("BPF JIT addresses are hidden by kernel.kptr_restrict=2; set it to 1 and run brr as root")
    );
    let top = get(&f, "top");
    assert!(
        top.works && reason(&f, "top").contains("kptr_restrict=2"),
        "{top:?}"
    );
    let dump = get(&f, "dump");
    assert!(dump.works && reason(&f, "dump").starts_with("helper-call targets show as 0"));
    assert!(get(&f, "activity").works && get(&f, "activity").reason.is_none());
    // kptr_restrict=1 without CAP_SYSLOG.
    let mut g = root_host();
    g.sysctl.kptr_restrict = Sysctl::Value(1);
    g.caps = Some(crate::privilege::CapSet(
        1 << crate::privilege::Cap::SysAdmin.bit(),
    ));
    assert!(reason(&g, "profile").contains("kernel.kptr_restrict=1"));
}

#[test]
fn interpreted_programs_stop_profile() {
    let mut f = root_host();
    f.jit = Some(JitSurvey {
        jited: 0,
        interpreted: 4,
        addressed: 0,
    });
    f.sysctl.bpf_jit_enable = Sysctl::Value(0);
    assert!(reason(&f, "profile")
        .starts_with("no loaded eBPF program is JIT-compiled: net.core.bpf_jit_enable=0"));
    // No program loaded yet: later ones would be interpreted too.
    f.jit = Some(JitSurvey::default());
    assert!(reason(&f, "profile").starts_with("programs loaded from now on cannot be profiled"));
    f.sysctl.bpf_jit_enable = Sysctl::Absent;
    assert!(reason(&f, "profile").contains("CONFIG_BPF_JIT"));
    // JIT off now, but the loaded programs were compiled: they profile.
    let mut g = root_host();
    g.sysctl.bpf_jit_enable = Sysctl::Value(0);
    assert!(get(&g, "profile").works);
}

#[test]
fn missing_kernel_features_and_tools() {
    let mut f = root_host();
    f.release = Some("5.4.0".into());
    f.features = Default::default();
    for command in ["activity", "top", "exporter"] {
        assert!(!get(&f, command).works, "{command}");
    }
    assert!(reason(&f, "exporter").contains("--no-stats"));
    assert!(reason(&f, "activity").contains("BPF_ENABLE_STATS"));
    let mut g = root_host();
    g.bpftool = false;
    assert_eq!(reason(&g, "dump-compare"), "bpftool is not in PATH");
    g.sysctl.perf_event_max_sample_rate = Sysctl::Value(500);
    let p = get(&g, "profile");
    assert!(p.works && reason(&g, "profile").ends_with("pass -F 500 or lower"));
    g.perf.events = crate::profile::events::tests::results(&[], Errno(libc::ENOENT));
    assert_eq!(
        reason(&g, "perf-events"),
        "no perf event brr samples is supported on this host"
    );
    assert!(!get(&g, "profile").works);
}
