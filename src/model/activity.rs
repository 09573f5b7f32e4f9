//! One program's runs over a measured window.

use super::objects::Program;

/// A program's ID and run counters at one snapshot: all a window's
/// deltas are taken from, a tenth of a whole [`Program`]'s size.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Counters {
    pub id: u32,
    pub run_count: u64,
    pub run_time_ns: u64,
    pub recursion_misses: Option<u64>,
}

impl From<&Program> for Counters {
    fn from(p: &Program) -> Counters {
        Counters {
            id: p.id,
            run_count: p.run_count,
            run_time_ns: p.run_time_ns,
            recursion_misses: p.recursion_misses,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ActivityRow {
    /// The program as seen at the end of the window.
    pub prog: Program,
    pub run_count_delta: u64,
    pub run_time_ns_delta: u64,
    /// Runs skipped in the window because the program was already running
    /// on that CPU; `None` on a kernel without the counter.
    pub recursion_misses_delta: Option<u64>,
}

impl ActivityRow {
    pub(crate) fn run_count_total(&self) -> u64 {
        self.prog.run_count
    }
    pub(crate) fn run_time_ns_total(&self) -> u64 {
        self.prog.run_time_ns
    }
    pub(crate) fn avg_ns(&self) -> u64 {
        floor_div(self.run_time_ns_delta, self.run_count_delta)
    }
    pub(crate) fn cumulative_avg_ns(&self) -> u64 {
        floor_div(self.prog.run_time_ns, self.prog.run_count)
    }
    /// Percent of one CPU over a window of `secs` seconds.
    pub(crate) fn cpu_pct(&self, secs: f64) -> f64 {
        self.run_time_ns_delta as f64 / (secs * 1e9) * 100.0
    }
    pub(crate) fn execs_per_sec(&self, secs: f64) -> f64 {
        (self.run_count_delta as f64 / secs).round_ties_even()
    }
    pub(crate) fn ns_per_sec(&self, secs: f64) -> f64 {
        (self.run_time_ns_delta as f64 / secs).round_ties_even()
    }
}

fn floor_div(a: u64, b: u64) -> u64 {
    a.checked_div(b).unwrap_or(0)
}
