//! Which Linux capability each kernel operation brr performs needs, and which
//! of them this process holds, so that a permission error can name what is
//! missing instead of only saying "use sudo".
//!
//! The table was measured on Linux 6.18 by running brr as uid 65534 with
//! exact ambient capability sets (docs/privileges.md has the results);
//! it matches the kernel's checks: `GET_NEXT_ID`, `GET_FD_BY_ID` and
//! `ENABLE_STATS` test `capable(CAP_SYS_ADMIN)` (CAP_BPF is not enough), and
//! CPU-wide perf events test `perfmon_capable()`, which CAP_SYS_ADMIN also
//! satisfies.

/// The capabilities brr's operations depend on, with their kernel bit numbers
/// (`include/uapi/linux/capability.h`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Cap {
    IpcLock,
    SysAdmin,
    Syslog,
    Perfmon,
    Bpf,
}

impl Cap {
    pub(crate) fn bit(self) -> u32 {
        match self {
            Cap::IpcLock => 14,
            Cap::SysAdmin => 21,
            Cap::Syslog => 34,
            Cap::Perfmon => 38,
            Cap::Bpf => 39,
        }
    }

    pub(crate) fn name(self) -> &'static str {
        match self {
            Cap::IpcLock => "CAP_IPC_LOCK",
            Cap::SysAdmin => "CAP_SYS_ADMIN",
            Cap::Syslog => "CAP_SYSLOG",
            Cap::Perfmon => "CAP_PERFMON",
            Cap::Bpf => "CAP_BPF",
        }
    }
}

/// A kernel operation that can fail with EPERM/EACCES for lack of privilege.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Operation {
    /// bpf() `*_GET_NEXT_ID`, `*_GET_FD_BY_ID` and `ENABLE_STATS`.
    BpfObjects,
    /// perf_event_open for one CPU, all tasks (every event brr opens).
    PerfCpuWide,
    /// JIT addresses, line-info addresses and helper-call targets in
    /// `OBJ_GET_INFO_BY_FD`, and addresses in /proc/kallsyms.
    KernelAddresses,
}

/// Any one of these capabilities lets the operation through; the first is the
/// one to ask for (CAP_SYS_ADMIN is listed last where a narrower one works).
pub(crate) fn needed(op: Operation) -> &'static [Cap] {
    match op {
        Operation::BpfObjects => &[Cap::SysAdmin],
        Operation::PerfCpuWide => &[Cap::Perfmon, Cap::SysAdmin],
        Operation::KernelAddresses => &[Cap::Syslog],
    }
}

/// A capability bit set, as in the `CapEff:` line of /proc/PID/status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct CapSet(pub u64);

impl CapSet {
    pub(crate) fn has(self, cap: Cap) -> bool {
        self.0 & (1u64 << cap.bit()) != 0
    }

    /// Whether the set lets `op` through on capabilities alone.
    pub(crate) fn allows(self, op: Operation) -> bool {
        needed(op).iter().any(|c| self.has(*c))
    }

    /// The effective set from the text of /proc/self/status.
    pub(crate) fn from_status(status: &str) -> Option<CapSet> {
        let hex = status
            .lines()
            .find_map(|l| l.strip_prefix("CapEff:"))?
            .trim();
        u64::from_str_radix(hex, 16).ok().map(CapSet)
    }

    /// This process's effective set; None when /proc is unreadable.
    pub(crate) fn current() -> Option<CapSet> {
        std::fs::read_to_string("/proc/self/status")
            .ok()
            .and_then(|s| CapSet::from_status(&s))
    }
}

/// Another way than a capability to let `op` through, worth naming in the
/// message because it is how unprivileged profiling is usually enabled.
fn sysctl_alternative(op: Operation) -> Option<&'static str> {
    match op {
        Operation::PerfCpuWide => Some("kernel.perf_event_paranoid <= 0"),
        _ => None,
    }
}

/// What follows `permission denied while ...; ` in the error message: the
/// capability that is needed, and whether the process already holds it (then
/// the refusal came from elsewhere and sudo alone may not help). `held` is
/// None when the effective set could not be read; the message then assumes
/// the capability is missing, the common case.
pub(crate) fn denial_hint(op: Operation, held: Option<CapSet>) -> String {
    let need = needed(op)[0].name();
    if held.is_some_and(|h| h.allows(op)) {
        return format!(
            "needs {need}, which brr has, so a security module or user namespace refused it"
        );
    }
    match sysctl_alternative(op) {
        Some(alt) => format!("needs {need} or {alt} (run brr with sudo)"),
        None => format!("needs {need} (run brr with sudo)"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(caps: &[Cap]) -> CapSet {
        CapSet(caps.iter().fold(0, |a, c| a | 1 << c.bit()))
    }

    #[test]
    fn parses_cap_eff_only() {
        let status = "Name:\tbrr\nCapInh:\t0000000000000000\nCapPrm:\t000001ffffffffff\n\
                      CapEff:\t000000c000200000\nCapBnd:\t000001ffffffffff\n";
        let s = CapSet::from_status(status).unwrap();
        assert!(s.has(Cap::SysAdmin) && s.has(Cap::Perfmon) && s.has(Cap::Bpf));
        assert!(!s.has(Cap::Syslog) && !s.has(Cap::IpcLock));
        assert_eq!(CapSet::from_status("Name:\tx\n"), None);
        assert_eq!(CapSet::from_status("CapEff:\tzz\n"), None);
        assert_eq!(CapSet::from_status(""), None);
    }

    #[test]
    fn bpf_and_perfmon_do_not_list_objects() {
        // The combination older documentation recommended.
        let s = set(&[Cap::Bpf, Cap::Perfmon]);
        assert!(!s.allows(Operation::BpfObjects));
        assert!(s.allows(Operation::PerfCpuWide));
        let admin = set(&[Cap::SysAdmin]);
        assert!(admin.allows(Operation::BpfObjects) && admin.allows(Operation::PerfCpuWide));
        assert!(!admin.allows(Operation::KernelAddresses));
    }

    #[test]
    fn hint_names_the_missing_capability() {
        assert_eq!(
            denial_hint(Operation::BpfObjects, Some(set(&[Cap::Bpf, Cap::Perfmon]))),
            "needs CAP_SYS_ADMIN (run brr with sudo)"
        );
        assert_eq!(
            denial_hint(Operation::BpfObjects, None),
            "needs CAP_SYS_ADMIN (run brr with sudo)"
        );
        assert_eq!(
            denial_hint(Operation::PerfCpuWide, Some(CapSet(0))),
            "needs CAP_PERFMON or kernel.perf_event_paranoid <= 0 (run brr with sudo)"
        );
        assert_eq!(
            denial_hint(Operation::KernelAddresses, Some(CapSet(0))),
            "needs CAP_SYSLOG (run brr with sudo)"
        );
    }

    #[test]
    fn hint_when_the_capability_is_already_held() {
        let held =
            "needs CAP_SYS_ADMIN, which brr has, so a security module or user namespace refused it";
        assert_eq!(
            denial_hint(Operation::BpfObjects, Some(set(&[Cap::SysAdmin]))),
            held
        );
        // CAP_SYS_ADMIN also satisfies perfmon_capable().
        assert!(
            denial_hint(Operation::PerfCpuWide, Some(set(&[Cap::SysAdmin])))
                .starts_with("needs CAP_PERFMON, which brr has")
        );
        assert!(
            denial_hint(Operation::BpfObjects, Some(CapSet(u64::MAX))).contains("which brr has")
        );
    }
}
