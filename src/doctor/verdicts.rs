//! Every command, judged from the facts: whether it works here, and why
//! not, in the words the command itself would fail with.

use super::checks::{feature, policy, version};
use super::facts::{Facts, Sysctl};
use super::Verdict;
use crate::error::BrrError;
use crate::privilege::{self, Operation};
use crate::profile::access::{self, ProgSight};
use crate::profile::events;
use crate::sys::Errno;

type Why = Result<(), String>;

fn denied(e: Errno) -> bool {
    e.0 == libc::EPERM || e.0 == libc::EACCES
}

/// Listing objects of one kind: as `brr prog` (or `map`, ...) would fail.
fn listing(f: &Facts, walked: Result<u32, Errno>) -> Why {
    first_step(f, walked, LIST)
}

const LIST: &str = "list eBPF object IDs";
/// What `activity`, `top` and `exporter` ask the kernel before they list.
const ENABLE_STATS: &str = "enable eBPF runtime statistics";
/// What `dump` and `dump-compare` ask first (`ID` is the one given).
const OPEN_BY_ID: &str = "open eBPF object id ID";

/// A command whose first bpf() call is `step`, judged by how walking the
/// object IDs went: the kernel refuses each of these calls for the same
/// reason (CAP_SYS_ADMIN, or no bpf() at all), so the command fails on
/// `step` with the walk's error.
fn first_step(f: &Facts, walked: Result<u32, Errno>, step: &str) -> Why {
    match walked {
        Ok(_) => Ok(()),
        Err(e) if denied(e) => Err(format!(
            "permission denied while trying to {step}; {}",
            privilege::denial_hint(Operation::BpfObjects, f.caps)
        )),
        Err(e) => Err(BrrError::bpf(step, e).message()),
    }
}

fn stats(f: &Facts) -> Why {
    match feature(f.features.enable_stats, version(f), (5, 8)) {
        Some(false) => Err("the kernel lacks BPF_ENABLE_STATS (Linux 5.8 or later)".into()),
        _ => Ok(()),
    }
}

/// Opening a sampling event, as `--event auto` would: the error reported
/// is cpu-clock's, the last event auto tries.
fn perf(f: &Facts) -> Why {
    if f.perf.events.iter().any(|(_, r)| r.is_ok()) {
        return Ok(());
    }
    let clock = f.perf.events.iter().find(|(e, _)| e.name == "cpu-clock");
    match clock {
        Some((e, Err(errno))) if denied(*errno) => Err(format!(
            "permission denied while opening perf event {}; {}",
            e.name,
            privilege::denial_hint(Operation::PerfCpuWide, f.caps)
        )),
        _ => Err("no perf event brr samples is supported on this host".into()),
    }
}

/// `brr perf-events`: fails only when nothing opens for lack of
/// privilege (naming the event `auto` reports); lists nothing when
/// nothing opens for lack of support.
fn perf_listing(f: &Facts) -> Why {
    match events::listing_from_probes(&f.perf.events) {
        Ok(listed) if listed.is_empty() => {
            Err("no perf event brr samples is supported on this host".into())
        }
        Ok(_) => Ok(()),
        Err(e) => Err(e.message()),
    }
}

/// Whether samples can be attributed to programs: JIT addresses visible
/// and programs JIT-compiled (also for programs loaded later).
fn attribution(f: &Facts) -> Why {
    let p = policy(f);
    if let Some(h) = access::hidden_by_policy(&p) {
        return Err(h.message());
    }
    let jit_enable = match f.sysctl.bpf_jit_enable {
        Sysctl::Value(v) => Some(v),
        Sysctl::Absent => None,
        Sysctl::Unreadable => Some(1),
    };
    if let Some(s) = f.jit {
        let sight = |jited, addressed| ProgSight {
            id: 0,
            jited,
            addressed,
        };
        let mut sights = vec![sight(true, true); s.addressed.min(1) as usize];
        sights.extend((s.jited > s.addressed).then(|| sight(true, false)));
        sights.extend((s.interpreted > 0).then(|| sight(false, false)));
        if let Some(why) = access::unattributable(&sights, None, jit_enable, &p) {
            return Err(why);
        }
        if s.jited > 0 {
            return Ok(());
        }
    }
    match jit_enable {
        Some(0) | None => Err(format!(
            "programs loaded from now on cannot be profiled: {}",
            access::interpreted_cause(jit_enable)
        )),
        Some(_) => Ok(()),
    }
}

fn sample_rate_note(f: &Facts) -> Option<String> {
    let max = f.sysctl.perf_event_max_sample_rate.value()?;
    (max > 0 && max < 997).then(|| {
        format!("the default -F 997 exceeds kernel.perf_event_max_sample_rate={max}; pass -F {max} or lower")
    })
}

fn verdict(command: &'static str, why: Why) -> Verdict {
    match why {
        Ok(()) => Verdict {
            command,
            works: true,
            reason: None,
        },
        Err(reason) => Verdict {
            command,
            works: false,
            reason: Some(reason),
        },
    }
}

/// A command that works, with what it cannot do here.
fn works_but(command: &'static str, note: Option<String>) -> Verdict {
    Verdict {
        command,
        works: true,
        reason: note,
    }
}

/// Every command brr has that touches the kernel, in usage order.
pub(crate) fn all(f: &Facts) -> Vec<Verdict> {
    let progs = listing(f, f.objects.progs);
    let activity = first_step(f, f.objects.progs, ENABLE_STATS).and_then(|()| stats(f));
    let opened = first_step(f, f.objects.progs, OPEN_BY_ID);
    let profile = perf(f)
        .and_then(|()| progs.clone())
        .and_then(|()| attribution(f));
    let hidden = access::hidden_by_policy(&policy(f)).map(|h| h.by);
    let top = match (&activity, &profile) {
        (Ok(()), Err(why)) => works_but(
            "top",
            Some(format!(
                "the drilldown's profile (p, --profile-top) does not work: {why}"
            )),
        ),
        _ => verdict("top", activity.clone()),
    };
    let dump = match (&progs, hidden) {
        (Ok(()), Some(by)) => works_but(
            "dump",
            Some(format!(
                "helper-call targets show as 0: kernel addresses are hidden by {by}"
            )),
        ),
        _ => verdict("dump", opened.clone()),
    };
    let dump_compare = opened.and_then(|()| {
        if f.bpftool {
            Ok(())
        } else {
            Err("bpftool is not in PATH".into())
        }
    });
    let exporter = first_step(f, f.objects.progs, ENABLE_STATS).and_then(|()| {
        stats(f).map_err(|why| {
            format!("{why}; exporter --no-stats serves everything but the run counters")
        })
    });
    // `cost` holds statistics on around a profile with kernel callchains:
    // it fails where the first of the two fails.
    let cost = activity.clone().and_then(|()| profile.clone());
    vec![
        verdict("prog", progs.clone()),
        verdict("map", listing(f, f.objects.maps)),
        verdict("link", listing(f, f.objects.links)),
        verdict("btf", listing(f, f.objects.btfs)),
        verdict("activity", activity),
        top,
        match profile {
            Ok(()) => works_but("profile", sample_rate_note(f)),
            Err(why) => verdict("profile", Err(why)),
        },
        verdict("cost", cost),
        verdict("perf-events", perf_listing(f)),
        dump,
        verdict("dump-compare", dump_compare),
        verdict("exporter", exporter),
    ]
}

#[cfg(test)]
#[path = "verdicts_tests.rs"]
mod tests;
