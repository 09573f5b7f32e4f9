//! What the drilldown needs from a profile of one program, as plain data.
//! `session::drilldown_input` fills these from the program's part of a
//! profile report; tests build them by hand. Kernel rows come in one shape for both exact IPs and
//! function groups (the engine's `KernelGroup`).

/// A retained direct hotspot: samples whose IP fell in the program's JIT
/// code, keyed by the line record with the greatest JIT address at or below
/// the IP (so `instruction_offset` is that record's first instruction).
/// The engine's own row type; it is plain data.
pub(crate) use crate::model::profile::Hotspot as DirectHotspot;

/// A retained under-eBPF row: the engine's kernel row and how many distinct
/// IPs it sums (1 for an exact-IP row, which also has a `symbol_offset`).
pub(crate) use crate::model::profile::KernelGroup as KernelRow;

/// A sampled native instruction (`--annotate`): the report's row.
pub(crate) use crate::model::report::NativeRow as NativeSample;

/// One program's share of a capture, with the hotspot lists `--line-limit`
/// retained, most samples first (then file and line, then symbol for kernel
/// rows).
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct DrillProfile {
    /// Direct samples.
    pub samples: u64,
    /// Under-eBPF samples.
    pub kernel_samples: u64,
    pub inclusive_samples: u64,
    /// Percent of one CPU over the capture, already rounded to 4 decimals.
    pub inclusive_cpu_percent: f64,
    pub direct_source_unmapped_samples: u64,
    pub under_bpf_caller_source_unmapped_samples: u64,
    pub direct_hotspot_samples_omitted_by_limit: u64,
    pub under_bpf_hotspot_samples_omitted_by_limit: u64,
    pub under_bpf_function_samples_omitted_by_limit: u64,
    pub unaccounted_samples: u64,
    pub hotspots: Vec<DirectHotspot>,
    /// Exact-IP rows.
    pub kernel_ips: Vec<KernelRow>,
    /// Function groups.
    pub kernel_functions: Vec<KernelRow>,
    /// Every sampled native instruction, when the profile was annotated
    /// (the native view places these, not `hotspots`).
    pub native: Vec<NativeSample>,
    /// Samples of interrupts that arrived while the program ran: not in
    /// `inclusive_samples`, shown on a row of their own.
    pub interrupt_samples: u64,
    /// Those samples by entry point and interrupted line, as retained by
    /// `--line-limit` (the row lists them; it keeps the rest itself).
    pub interrupts: Vec<InterruptRow>,
    /// Its inclusive CPU% over the time it was loaded, when it was loaded
    /// or unloaded during the capture (the text report's "while loaded").
    pub loaded_cpu_percent: Option<f64>,
    /// Seconds into the capture it was unloaded at, if it was.
    pub unloaded_after: Option<f64>,
}

/// Interrupt samples of one entry point while one line ran.
pub(crate) use crate::model::profile::InterruptHotspot as InterruptRow;

/// A finished capture as the drilldown sees it.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct ProfileInput {
    /// None when the program got no samples at all.
    pub program: Option<DrillProfile>,
    /// `--line-limit` in force (0 = unlimited).
    pub line_limit: usize,
    /// Profile warnings in the order the profiler emitted them.
    pub warnings: Vec<String>,
    pub incomplete: bool,
}
