//! The one collector: what `commands`, `top`, the TUI and the exporter
//! share. Each file says what it holds:
//!
//! - [`collector`]: the [`Collector`] value a front end builds and holds,
//!   with its settings and caches; the reads below are its methods;
//! - [`window`]: the measuring window (statistics on between two
//!   snapshots) and its streams;
//! - [`live`]: the windows and context of a view that repeats (the TUI),
//!   driven by one thread;
//! - [`context`]: object context (owners, memlock, links, attach points,
//!   full names), with the one owner-scan cache and the record of what
//!   cannot change while an object lives;
//! - [`listings`]: the `prog`, `map` and `link` rows with the fields each
//!   view prints;
//! - [`image`]: one program's image, its disassembly and whether it is
//!   still loaded, for the drilldown;
//! - [`profiling`]: the one way to profile (one job at a time, with
//!   progress and cancel), and the signals that end the long-running views;
//! - [`inspect`]: the `--devmode` tree, source contexts, `dump-compare`
//!   and the drilldown's input.
//!
//! Signal handling lives here and nowhere above it, so that the way signals
//! are caught can change without touching the callers.

pub(crate) mod collector;
pub(crate) mod context;
pub(crate) mod cost;
pub(crate) mod image;
pub(crate) mod inspect;
pub(crate) mod listings;
pub(crate) mod live;
pub(crate) mod profiling;
pub(crate) mod window;

use std::time::Duration;

/// Statistics on for as long as it is held (the exporter holds it for its
/// life).
pub(crate) use crate::kernel::stats::StatsGuard;
/// How a long-running front end (the exporter) gives the memory of its
/// bursts back between them.
pub(crate) use crate::sys::alloc::{give_back_free_pages, give_back_large_blocks};
pub(crate) use collector::Collector;
pub(crate) use context::{InventoryRecall, ProgContext};
pub(crate) use image::{
    call_names, disassembly, dump_image, kptr_restrict, program_gone, program_image,
};
pub(crate) use inspect::{
    compare_with_bpftool, devmode_tree, drilldown_input, dump_devmode, profile_contexts,
};
pub(crate) use listings::{bpffs_warning, btfs};
pub(crate) use profiling::{
    profile_interruptible, Job, Native, Output, Profiled, Profiling, Refused, ReportPlan,
    Terminations,
};
pub(crate) use window::{Window, BRIEF};

/// Longest wait that is ever computed: keeps `Instant + Duration` from
/// overflowing (the CLI caps durations much lower).
const MAX_WAIT_SECONDS: f64 = 1e9;

/// `seconds` as a wait that can always be added to an `Instant`: negative
/// or NaN waits are zero, absurd ones capped.
pub(crate) fn wait_for(seconds: f64) -> Duration {
    if seconds.is_nan() {
        return Duration::ZERO;
    }
    Duration::from_secs_f64(seconds.clamp(0.0, MAX_WAIT_SECONDS))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    #[test]
    fn waits_are_always_addable() {
        assert_eq!(wait_for(1.5), Duration::from_millis(1500));
        assert_eq!(wait_for(-1.0), Duration::ZERO);
        assert_eq!(wait_for(f64::NAN), Duration::ZERO);
        assert_eq!(wait_for(f64::INFINITY), Duration::from_secs(1_000_000_000));
        let _ = Instant::now() + wait_for(f64::MAX);
    }
}
