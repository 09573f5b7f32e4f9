//! What the drilldown needs from a profile of one program, as plain data.
//! `top` fills these from the profile engine (`src/profile`); tests build
//! them by hand. Kernel rows come in one shape for both exact IPs and
//! function groups.

/// A retained direct hotspot: samples whose IP fell in the program's JIT
/// code, keyed by the line record that covers the IP (profiler spec §8.4).
/// The engine's own row type; it is plain data.
pub use crate::profile::data::Hotspot as DirectHotspot;

/// A retained under-eBPF hotspot: kernel code that ran while this program
/// was the nearest BPF frame on the callchain. An exact-IP row has
/// `ip_count == 1` and a `symbol_offset`; a function group sums several IPs.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct KernelHotspot {
    pub samples: u64,
    pub ip: u64,
    pub symbol: Option<String>,
    pub module: Option<String>,
    pub symbol_offset: Option<u64>,
    /// `bpf_helper`, `bpf_map`, `kernel` or `unknown`.
    pub kind: String,
    pub ip_count: usize,
    pub bpf_jited_address: Option<u64>,
    pub bpf_instruction_offset: Option<u64>,
    pub bpf_file: Option<String>,
    pub bpf_line: Option<u32>,
    pub bpf_column: Option<u32>,
    pub bpf_source: Option<String>,
}

/// One program's share of a capture (profiler spec §10.3), with the
/// `--line-limit`-retained hotspot lists in the profiler's order (§10.4).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ProgramProfile {
    /// Direct samples.
    pub samples: u64,
    /// Under-eBPF samples.
    pub kernel_samples: u64,
    pub inclusive_samples: u64,
    /// Already rounded to 4 decimals (profiler spec §10.2).
    pub inclusive_cpu_percent: f64,
    pub direct_source_unmapped_samples: u64,
    pub under_bpf_caller_source_unmapped_samples: u64,
    pub direct_hotspot_samples_omitted_by_limit: u64,
    pub under_bpf_hotspot_samples_omitted_by_limit: u64,
    pub under_bpf_function_samples_omitted_by_limit: u64,
    pub unaccounted_samples: u64,
    pub hotspots: Vec<DirectHotspot>,
    /// Exact-IP rows.
    pub kernel_ips: Vec<KernelHotspot>,
    /// Function groups.
    pub kernel_functions: Vec<KernelHotspot>,
}

/// A finished capture as the drilldown sees it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ProfileInput {
    /// None when the program got no samples at all.
    pub program: Option<ProgramProfile>,
    /// `--line-limit` in force (0 = unlimited).
    pub line_limit: usize,
    /// Profile warnings in emission order (profiler spec §7.2).
    pub warnings: Vec<String>,
    pub incomplete: bool,
}
