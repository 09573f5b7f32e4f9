//! A profile as every view reads it: the programs a report lists, each with
//! its rows ordered and cut by `--line-limit` (the cut samples kept as
//! Other totals), who pays for it, its hints, and every figure printed
//! beside them. `profile::report` builds it once after a capture; the text,
//! JSON and CSV renderers, `top --textmode` and the TUI only read it, so a
//! new view needs no analysis code.

use std::collections::BTreeMap;
use std::ops::Deref;
use std::sync::Arc;

use super::container::Workload;
use super::profile::{
    Counters, Hint, Hotspot, InterruptHotspot, KernelGroup, KernelHotspot, Payer, Telemetry,
};

/// How the capture was taken, as the metadata reports it.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Capture {
    pub requested_event: String,
    pub selected_event: String,
    /// Requested seconds.
    pub duration: f64,
    pub frequency: u64,
    pub kernel_samples: bool,
    /// `fp` or `lbr`.
    pub call_graph: crate::model::profile::CallGraph,
    /// The first selected program (program mode).
    pub program_id: Option<u32>,
    /// Every selected program (`--program-id`, `--pid`); empty for all.
    pub program_ids: Vec<u32>,
    /// `--pid`: the process whose programs were selected.
    pub pid: Option<u32>,
    pub counters: Counters,
    pub telemetry: Telemetry,
}

/// The report-wide figures of the JSON and CSV metadata.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Totals {
    /// Programs listed at most: 1 in program mode, else `--limit` (0 = all).
    pub limit: usize,
    /// Detail rows per program and list (0 = all).
    pub line_limit: usize,
    /// Direct samples of the selected program (0 without one).
    pub selected_program_samples: u64,
    /// BPF JIT samples outside the selected program (0 without one).
    pub other_bpf_samples: u64,
    /// Direct samples with a source line: of the selected program, else of
    /// every sampled program (listed or not).
    pub source_mapped_samples: u64,
    /// Direct samples without one, counted the same way.
    pub source_unmapped_samples: u64,
    /// The rings' peak occupancy, percent, 2 decimals.
    pub max_ring_occupancy_percent: f64,
    /// Time running over time enabled, percent, 4 decimals.
    pub running_percent: f64,
}

/// A row with the figures printed beside it.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Figured<T> {
    pub row: T,
    /// Percent of the whole the row is part of (the program's direct
    /// samples for a direct row, its under-eBPF samples for a kernel row,
    /// its inclusive samples for a payer), 2 decimals.
    pub sample_percent: f64,
    /// Percent of one CPU over the capture, 4 decimals.
    pub cpu_percent: f64,
}

impl<T> Deref for Figured<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.row
    }
}

/// Samples a limit left out of a list, as one total.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct Other {
    pub samples: u64,
    /// Percent of one CPU, 4 decimals.
    pub cpu_percent: f64,
}

/// Rows most samples first, cut by `--line-limit`; `other` holds the
/// samples of the list's total that no kept row shows, so the rows and
/// `other` add up to it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Rows<T> {
    pub rows: Vec<Figured<T>>,
    pub other: Other,
}

impl<T> Default for Rows<T> {
    fn default() -> Self {
        Rows {
            rows: Vec::new(),
            other: Other::default(),
        }
    }
}

/// The tasks or cgroups in whose context a program ran, most samples first.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Payers {
    /// Every payer (JSON, the TUI's who-pays view).
    pub all: Vec<Figured<Payer>>,
    /// How many of `all` the `--line-limit` view shows.
    pub shown: usize,
    /// The payers that view leaves out, as one row, when it leaves any.
    pub other: Option<Other>,
    /// The workload (container, pod, unit) of each payer in `all` whose
    /// cgroup is known, by payer id (pid or cgroup ID).
    pub workloads: BTreeMap<u64, Workload>,
}

impl Payers {
    /// The payers the `--line-limit` view shows.
    pub(crate) fn shown_rows(&self) -> &[Figured<Payer>] {
        self.all.get(..self.shown).unwrap_or(&self.all)
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.all.is_empty()
    }

    /// The workload of the payer with `id`, when its cgroup is known.
    pub(crate) fn workload(&self, id: u64) -> Option<&Workload> {
        self.workloads.get(&id)
    }
}

/// The workload of every cgroup and task a capture sampled, resolved once
/// when the capture ended (the kubelet's logs read once) for the report's
/// payers and the profile files' labels.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SampledWorkloads {
    /// By cgroup2 ID, for the cgroups whose path was found.
    pub cgroups: BTreeMap<u64, Workload>,
    /// By pid: the cgroup its samples carried most often, else (no cgroup
    /// IDs, cgroup v1) its `/proc/PID/cgroup` path when the capture ended.
    pub tasks: BTreeMap<u32, Workload>,
}

impl SampledWorkloads {
    /// The workload of a sample of task `pid` with cgroup ID `cgroup` (0
    /// when the kernel gave none): its cgroup's, else its task's.
    pub(crate) fn of_sample(&self, pid: u32, cgroup: u64) -> Option<&Workload> {
        let by_cgroup = (cgroup != 0).then(|| self.cgroups.get(&cgroup)).flatten();
        by_cgroup.or_else(|| self.tasks.get(&pid))
    }
}

/// One sampled native instruction of a program (`--annotate`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct NativeRow {
    pub samples: u64,
    /// Its JIT address (the sampled IP).
    pub ip: u64,
    /// The JIT function holding it: its index in `jited_ksyms` order
    /// (0 = the main program) and BTF name.
    pub func_index: Option<usize>,
    /// Shared by the rows of one function (and `file` and `source` by the
    /// rows of one line): a program has thousands of sampled instructions.
    pub function: Option<Arc<str>>,
    /// Bytes from the function's start (`offset` in `dump --jited`).
    pub offset: Option<u64>,
    /// The instruction as `dump --jited` shows it; None when the JIT code
    /// could not be read or no instruction starts there, and for the rows
    /// a text report leaves out (under `Other`), whose text is not made.
    pub asm: Option<String>,
    /// The line record covering it (the greatest JIT address at or below).
    pub file: Option<Arc<str>>,
    pub line: Option<u32>,
    pub source: Option<Arc<str>>,
    /// `prologue`, `epilogue`, `thunk` (a call or jump into a mitigation
    /// thunk) or `body`; `body` when the code was not decoded.
    pub role: &'static str,
}

/// A program's sampled native instructions (`--annotate`): every one,
/// most samples first (ties by address), and the `--line-limit` view.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Annotation {
    /// Every sampled instruction: the samples add up to the program's
    /// direct samples. `sample_percent` is of those. A report made for a
    /// text table keeps only the `shown` ones (the rest are in `other`).
    /// Shared: a JSON document writes them from here. A `Vec` behind the
    /// `Arc`, not a slice: thousands of rows are not copied into it.
    pub all: std::sync::Arc<Vec<Figured<NativeRow>>>,
    /// How many of `all` the `--line-limit` view shows.
    pub shown: usize,
    /// The instructions that view leaves out, as one row, when it leaves
    /// any.
    pub other: Option<Other>,
    /// Why the instructions have no text, when the JIT code could not be
    /// read (the program was unloaded, the kernel withheld it).
    pub unavailable: Option<String>,
}

impl Annotation {
    /// The instructions the `--line-limit` view shows.
    pub(crate) fn shown_rows(&self) -> &[Figured<NativeRow>] {
        self.all.get(..self.shown).unwrap_or(&self.all)
    }
}

/// One listed program. Further per-program answers (instruction rows,
/// interrupt samples) join as fields here, filled by `profile::report`.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct ProgramReport {
    pub id: u32,
    pub prog_type: String,
    pub name: String,
    pub tag: String,
    /// BTF name of the main function (may be longer than `name`).
    pub full_name: Option<String>,
    /// JITed functions: 1 + the number of BPF-to-BPF subprograms.
    pub function_count: usize,
    pub pinned_paths: Vec<String>,
    /// Direct samples.
    pub samples: u64,
    /// Under-eBPF samples.
    pub kernel_samples: u64,
    pub inclusive_samples: u64,
    /// Direct samples, percent of every sample taken (2 decimals).
    pub sample_percent: f64,
    /// Percent of one CPU (4 decimals): direct, under eBPF, inclusive.
    pub cpu_percent: f64,
    pub kernel_cpu_percent: f64,
    pub inclusive_cpu_percent: f64,
    /// With kernel callchains: samples in its hook's dispatch with no
    /// program above them, tied to it as `brr cost` ties them, and their
    /// percent of one CPU.
    pub dispatch_samples: Option<u64>,
    pub dispatch_cpu_percent: Option<f64>,
    pub direct_source_mapped_samples: u64,
    pub direct_source_unmapped_samples: u64,
    pub under_bpf_caller_source_mapped_samples: u64,
    pub under_bpf_caller_source_unmapped_samples: u64,
    /// Direct rows by line record.
    pub direct: Rows<Hotspot>,
    /// Under-eBPF rows by exact kernel IP and caller line.
    pub kernel_ips: Rows<KernelHotspot>,
    /// Under-eBPF rows by kernel function and caller line.
    pub kernel_functions: Rows<KernelGroup>,
    pub tasks: Payers,
    /// Empty when the kernel reported no cgroup IDs.
    pub cgroups: Payers,
    /// From the samples, then those read from the kernel at the end of the
    /// capture.
    pub hints: Vec<Hint>,
    /// Its sampled native instructions, with `--annotate`.
    pub native: Option<Annotation>,
    /// Samples of interrupts that arrived while the program ran (not in
    /// its direct, under-eBPF or inclusive samples), and their percent of
    /// one CPU (4 decimals).
    pub interrupt_samples: u64,
    pub interrupt_cpu_percent: f64,
    /// Those samples by entry point and interrupted line.
    pub interrupts: Rows<InterruptHotspot>,
    /// Seconds into the capture at which the program was loaded or
    /// unloaded, when that happened during the capture.
    pub loaded_after: Option<f64>,
    pub unloaded_after: Option<f64>,
    /// Percent of one CPU over the time it was loaded (4 decimals), direct
    /// and inclusive, when it was not loaded for the whole capture.
    pub loaded_cpu_percent: Option<f64>,
    pub loaded_inclusive_cpu_percent: Option<f64>,
}

impl ProgramReport {
    /// The BTF name of the main function, which the kernel's `name` cuts at
    /// 15 bytes; `name` for a program without BTF.
    pub(crate) fn display_name(&self) -> &str {
        self.full_name.as_deref().unwrap_or(&self.name)
    }
}

/// A finished capture, ready for every view.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Report {
    pub capture: Capture,
    pub totals: Totals,
    /// The selected program in program mode, else the first `--limit`
    /// programs by descending inclusive samples.
    pub programs: Vec<ProgramReport>,
}

impl Report {
    pub(crate) fn program(&self, id: u32) -> Option<&ProgramReport> {
        self.programs.iter().find(|p| p.id == id)
    }

    /// The hints of every listed program, in listing order.
    pub(crate) fn hints(&self) -> impl Iterator<Item = &Hint> {
        self.programs.iter().flat_map(|p| p.hints.iter())
    }
}
