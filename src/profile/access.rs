//! Whether a capture can attribute anything at all: the kernel must show
//! brr the programs' JIT addresses, and the programs must be JIT-compiled.
//! Both are checked before sampling starts, so a profile that could only
//! come out empty fails at once, naming the cause and the fix, instead of
//! sampling for its whole duration and printing nothing.
//!
//! The kernel shows JIT addresses (`bpf_prog_info.jited_ksyms`, line-info
//! addresses, helper targets) when `kallsyms_show_value()` allows it:
//! `kernel.kptr_restrict=0` with `kernel.perf_event_paranoid` <= 1 shows
//! them to everyone; 0 with a higher paranoid level, and 1, show them to
//! holders of CAP_SYSLOG; 2 hides them from everyone. Hidden addresses
//! read as zero.

use crate::privilege::{Cap, CapSet};

/// The inputs of the kernel's decision, as read on this host (None: not
/// readable here).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct AddressPolicy {
    pub kptr_restrict: Option<i64>,
    pub perf_event_paranoid: Option<i64>,
    /// Whether brr holds CAP_SYSLOG.
    pub syslog: Option<bool>,
}

impl AddressPolicy {
    /// This host's sysctls and this process's capabilities.
    pub(crate) fn current() -> AddressPolicy {
        AddressPolicy {
            kptr_restrict: super::events::kernel_sysctl("kptr_restrict"),
            perf_event_paranoid: super::events::kernel_sysctl("perf_event_paranoid"),
            syslog: CapSet::current().map(|c| c.has(Cap::Syslog)),
        }
    }
}

/// Why brr cannot see kernel addresses, and what to change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Hidden {
    /// What hides them: `kernel.kptr_restrict=2`, ...
    pub by: String,
    pub fix: String,
}

impl Hidden {
    pub(crate) fn cause(&self) -> String {
        format!("BPF JIT addresses are hidden by {}", self.by)
    }

    /// One line: the cause, then the fix.
    pub(crate) fn message(&self) -> String {
        format!("{}; {}", self.cause(), self.fix)
    }
}

/// The policy decides that brr cannot see JIT addresses. None when they
/// are visible, or when what decides could not be read (the capture then
/// finds out from the programs themselves).
pub(crate) fn hidden_by_policy(p: &AddressPolicy) -> Option<Hidden> {
    let kptr = p.kptr_restrict?;
    if kptr >= 2 {
        return Some(Hidden {
            by: format!("kernel.kptr_restrict={kptr}"),
            fix: "set it to 1 and run brr as root".into(),
        });
    }
    if p.syslog? {
        return None;
    }
    if kptr == 1 {
        return Some(Hidden {
            by: "kernel.kptr_restrict=1 from processes without CAP_SYSLOG".into(),
            fix: "run brr as root or grant it CAP_SYSLOG".into(),
        });
    }
    let paranoid = p.perf_event_paranoid?;
    (paranoid >= 2).then(|| Hidden {
        by: format!(
            "kernel.perf_event_paranoid={paranoid} (with kernel.kptr_restrict={kptr}) from processes without CAP_SYSLOG"
        ),
        fix: "run brr as root, grant it CAP_SYSLOG, or set kernel.perf_event_paranoid to 1".into(),
    })
}

/// What the capture saw of one program.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ProgSight {
    pub id: u32,
    /// The kernel JIT-compiled it (`jited_prog_len` > 0).
    pub jited: bool,
    /// At least one of its JIT functions has a visible address.
    pub addressed: bool,
}

/// Why no sample can be attributed to the loaded programs (or to
/// `program_id` alone), if that is so. `jit_enable` is
/// `net.core.bpf_jit_enable` (None: absent, a kernel without the JIT).
/// No programs, or the chosen one gone: nothing to say.
pub(crate) fn unattributable(
    progs: &[ProgSight],
    program_id: Option<u32>,
    jit_enable: Option<i64>,
    policy: &AddressPolicy,
) -> Option<String> {
    unattributable_among(progs, program_id.as_slice(), jit_enable, policy)
}

/// [`unattributable`] for a set of selected programs (empty: every one).
pub(crate) fn unattributable_among(
    progs: &[ProgSight],
    selected: &[u32],
    jit_enable: Option<i64>,
    policy: &AddressPolicy,
) -> Option<String> {
    let scope: Vec<&ProgSight> = progs
        .iter()
        .filter(|p| selected.is_empty() || selected.contains(&p.id))
        .collect();
    if scope.is_empty() {
        return None;
    }
    if !scope.iter().any(|p| p.jited) {
        let ids: Vec<String> = scope.iter().map(|p| p.id.to_string()).collect();
        let what = match (selected, ids.as_slice()) {
            ([], _) => "no loaded eBPF program is JIT-compiled".into(),
            (_, [id]) => format!("eBPF program {id} is not JIT-compiled"),
            _ => format!("eBPF programs {} are not JIT-compiled", ids.join(", ")),
        };
        return Some(format!("{what}: {}", interpreted_cause(jit_enable)));
    }
    if scope.iter().any(|p| p.jited && p.addressed) {
        return None;
    }
    Some(hidden_by_policy(policy).map_or_else(|| {
        let kptr = policy
            .kptr_restrict
            .map_or_else(|| "unreadable".to_string(), |k| k.to_string());
        format!(
            "BPF JIT addresses are hidden from brr by the kernel although kernel.kptr_restrict={kptr} would show them (a security module or a user namespace denies CAP_SYSLOG); run brr as root in the initial user namespace"
        )
    }, |h| h.message()))
}

/// Why programs run in the interpreter, and the fix.
pub(crate) fn interpreted_cause(jit_enable: Option<i64>) -> String {
    match jit_enable {
        None => "this kernel has no BPF JIT (net.core.bpf_jit_enable is missing), and interpreted programs cannot be sampled; use a kernel built with CONFIG_BPF_JIT".into(),
        Some(0) => "net.core.bpf_jit_enable=0 runs programs in the interpreter, which cannot be sampled; set it to 1 and reload the programs".into(),
        Some(v) => format!("programs loaded while net.core.bpf_jit_enable was 0 run in the interpreter, which cannot be sampled (it is {v} now); reload them"),
    }
}

/// `net.core.bpf_jit_enable`, None when the file is missing or unreadable.
pub(crate) fn jit_enable() -> Option<i64> {
    std::fs::read_to_string("/proc/sys/net/core/bpf_jit_enable")
        .ok()?
        .trim()
        .parse()
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(kptr: i64, paranoid: i64, syslog: bool) -> AddressPolicy {
        AddressPolicy {
            kptr_restrict: Some(kptr),
            perf_event_paranoid: Some(paranoid),
            syslog: Some(syslog),
        }
    }

    #[test]
    fn policy_follows_the_kernel() {
        assert_eq!(
            hidden_by_policy(&policy(2, 2, true)).map(|h| h.message()).as_deref(),
            Some("BPF JIT addresses are hidden by kernel.kptr_restrict=2; set it to 1 and run brr as root")
        );
        assert!(hidden_by_policy(&policy(1, -1, true)).is_none());
        assert!(hidden_by_policy(&policy(1, -1, false))
            .is_some_and(|h| h.by.contains("kptr_restrict=1") && h.fix.contains("CAP_SYSLOG")));
        assert!(hidden_by_policy(&policy(0, 2, true)).is_none());
        assert!(hidden_by_policy(&policy(0, 1, false)).is_none());
        let m = hidden_by_policy(&policy(0, 2, false))
            .map(|h| h.message())
            .unwrap_or_default();
        assert!(m.contains("perf_event_paranoid=2") && m.contains("CAP_SYSLOG"));
        // Unknown inputs make no claim.
        let mut p = policy(0, 2, false);
        p.kptr_restrict = None;
        assert!(hidden_by_policy(&p).is_none());
        let mut p = policy(1, 2, false);
        p.syslog = None;
        assert!(hidden_by_policy(&p).is_none());
        p.kptr_restrict = Some(2);
        assert!(hidden_by_policy(&p).is_some(), "2 hides from everyone");
    }

    fn sight(id: u32, jited: bool, addressed: bool) -> ProgSight {
        ProgSight {
            id,
            jited,
            addressed,
        }
    }

    #[test]
    fn attribution_needs_a_visible_jit_program() {
        let open = policy(0, 2, true);
        assert_eq!(unattributable(&[], None, Some(1), &open), None);
        let fine = [sight(1, true, true), sight(2, false, false)];
        assert_eq!(unattributable(&fine, None, Some(1), &open), None);
        // The one asked for is interpreted.
        let m = unattributable(&fine, Some(2), Some(0), &open).unwrap_or_default();
        assert!(m.starts_with("eBPF program 2 is not JIT-compiled: net.core.bpf_jit_enable=0"));
        // A program that is gone: the capture reports that itself.
        assert_eq!(unattributable(&fine, Some(9), Some(0), &open), None);
        let m = unattributable_among(&fine, &[2, 9], Some(0), &open).unwrap_or_default();
        assert!(m.starts_with("eBPF program 2 is not JIT-compiled"), "{m}");
        let both = [
            ProgSight { id: 3, ..fine[1] },
            ProgSight { id: 4, ..fine[1] },
        ];
        let m = unattributable_among(&both, &[3, 4], Some(0), &open).unwrap_or_default();
        assert!(
            m.starts_with("eBPF programs 3, 4 are not JIT-compiled"),
            "{m}"
        );
        let interpreted = [sight(1, false, false), sight(2, false, false)];
        let m = unattributable(&interpreted, None, Some(0), &open).unwrap_or_default();
        assert!(
            m.starts_with("no loaded eBPF program is JIT-compiled"),
            "{m}"
        );
        assert!(unattributable(&interpreted, None, None, &open)
            .is_some_and(|m| m.contains("CONFIG_BPF_JIT")));
        assert!(unattributable(&interpreted, None, Some(1), &open)
            .is_some_and(|m| m.contains("reload")));
        // JIT-compiled but no address shows: the policy names the cause,
        // else the refusal came from elsewhere.
        let hidden = [sight(1, true, false)];
        assert!(unattributable(&hidden, None, Some(1), &policy(2, 2, true))
            .is_some_and(|m| m.contains("kptr_restrict=2")));
        assert!(unattributable(&hidden, None, Some(1), &open)
            .is_some_and(|m| m.contains("user namespace")));
    }
}
