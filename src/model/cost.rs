//! What eBPF costs the host, per program and in total: the program's own
//! samples, its hook's dispatch and the statistics' clock reads, beside
//! its runs (`brr cost`).

/// One program's share of a cost capture.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct ProgramCost {
    pub id: u32,
    pub name: String,
    pub full_name: String,
    pub prog_type: String,
    /// Where it is attached (`raw_tracepoint:task_rename`, ...), or empty.
    pub hook: String,
    pub runs_per_sec: f64,
    pub samples: Split<u64>,
    /// What its instructions compare events with, in words (read for
    /// programs on `sys_enter`/`sys_exit` only).
    pub narrows: Vec<String>,
    /// The one syscall id it compares with, if so.
    pub one_syscall: Option<i64>,
}

/// A process other than brr that holds `BPF_ENABLE_STATS` on.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct StatsHolder {
    pub pid: u32,
    pub comm: String,
    /// How long the process has run: it holds statistics on for at most
    /// that long (when it opened the fd is not recorded anywhere).
    pub running_secs: Option<u64>,
}

/// Samples (or figures from them) in the three parts of a cost.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct Split<T> {
    pub program: T,
    pub dispatch: T,
    pub stats: T,
}

impl Split<u64> {
    pub(crate) fn total(&self) -> u64 {
        self.program + self.dispatch + self.stats
    }
}

/// A cost capture: the programs (by descending total) and the host.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Cost {
    pub programs: Vec<ProgramCost>,
    /// Dispatch and statistics samples no program could be tied to.
    pub unattributed_dispatch: u64,
    /// Samples of all programs, including those not listed.
    pub host: Split<u64>,
    /// Nanoseconds of CPU one sample stands for (`1e9 / frequency`).
    pub sample_ns: f64,
    /// Seconds sampled.
    pub seconds: f64,
    /// CPUs sampled.
    pub cpus: usize,
    pub frequency: u64,
    pub warnings: Vec<String>,
    /// Where dispatch or statistics cost more than a program's run.
    pub hints: Vec<crate::model::profile::Hint>,
    /// Other processes holding statistics on when the window ended.
    pub stats_holders: Vec<StatsHolder>,
}

impl Cost {
    /// Percent of all sampled CPU time that `samples` stand for.
    pub(crate) fn cpu_percent(&self, samples: u64) -> f64 {
        let whole = self.seconds * self.cpus as f64 * 1e9;
        if whole > 0.0 {
            samples as f64 * self.sample_ns * 100.0 / whole
        } else {
            0.0
        }
    }

    /// Nanoseconds per run that `samples` stand for, at `runs_per_sec`;
    /// None without runs.
    pub(crate) fn ns_per_run(&self, samples: u64, runs_per_sec: f64) -> Option<f64> {
        let runs = runs_per_sec * self.seconds;
        (runs > 0.0).then(|| samples as f64 * self.sample_ns / runs)
    }
}
