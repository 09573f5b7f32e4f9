//! `brr doctor`: what brr can do on this host, and why not.
//!
//! [`facts`] looks at the host once (sysctls, capabilities, mounts, limits,
//! vmlinux BTF, object IDs, perf events that open, statistics holders);
//! [`checks`] and [`verdicts`] turn those plain facts into rows. Doctor
//! needs no privilege and changes nothing: it loads no program, enables no
//! statistics and writes no sysctl; a perf event it opens to see whether
//! it opens is closed at once.

pub(crate) mod btf;
pub(crate) mod checks;
pub(crate) mod facts;
pub(crate) mod holders;
pub(crate) mod mounts;
pub(crate) mod verdicts;

/// How far brr can use what a check looks at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Status {
    Ok,
    /// Usable with a loss, or at a cost the host pays.
    Limited,
    /// Not usable: something brr needs is absent.
    Missing,
}

impl Status {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Limited => "limited",
            Status::Missing => "missing",
        }
    }
}

/// One thing looked at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Check {
    pub name: String,
    pub status: Status,
    pub detail: String,
    /// What to change; None when there is nothing to fix.
    pub fix: Option<String>,
}

/// Whether a command works here.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Verdict {
    pub command: &'static str,
    pub works: bool,
    /// Why it does not work; for a command that works, what it cannot
    /// do here (None when nothing).
    pub reason: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Report {
    pub checks: Vec<Check>,
    pub commands: Vec<Verdict>,
}

/// Look at this host and judge it.
pub(crate) fn examine() -> Report {
    let f = facts::gather();
    Report {
        checks: checks::all(&f),
        commands: verdicts::all(&f),
    }
}
