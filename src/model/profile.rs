//! The plain-data result of one capture: what `profile` renders and what
//! `top` drilldowns consume. No limits are applied here; every sample is in
//! some row.

/// Sample counters over the whole capture, reported in the metadata.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counters {
    pub total_samples: u64,
    pub bpf_jit_samples: u64,
    /// Samples outside every JIT range (also reported as `unresolved_samples`).
    pub non_bpf_samples: u64,
    pub callchain_samples: u64,
    pub kernel_attributed_samples: u64,
    pub kernel_unattributed_samples: u64,
    pub kernel_symbolized_samples: u64,
    /// Samples taken in an interrupt or exception that arrived while a
    /// program ran (not counted in `kernel_attributed_samples`).
    pub interrupt_samples: u64,
}

/// Capture telemetry: how the rings were sized and drained, and what perf
/// reported losing, throttling or multiplexing.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Telemetry {
    pub actual_duration: f64,
    pub cpus: Vec<u32>,
    pub pages_per_cpu: u64,
    pub bytes_per_cpu: u64,
    pub bytes_total: u64,
    pub drain_interval_ms: u64,
    pub drain_count: u64,
    /// Raw peak (not rounded), percent of a ring's data size.
    pub max_ring_occupancy: f64,
    pub lost_samples: u64,
    pub throttle_events: u64,
    pub unthrottle_events: u64,
    pub malformed_records: u64,
    pub unknown_records: u64,
    pub discarded_bytes: u64,
    pub time_enabled_ns: u64,
    pub time_running_ns: u64,
    pub warnings: Vec<String>,
    pub incomplete: bool,
    /// Ended before its duration by a cancel (Ctrl-C).
    pub cancelled: bool,
}

impl Telemetry {
    /// `round(running / enabled × 100, 4)`, or 100.0 when nothing was enabled.
    pub(crate) fn running_percent(&self) -> f64 {
        if self.time_enabled_ns == 0 {
            100.0
        } else {
            round(
                self.time_running_ns as f64 / self.time_enabled_ns as f64 * 100.0,
                4,
            )
        }
    }
}

/// Python's `round(x, n)` as the double whose text is `x` with `n` decimals.
pub(crate) fn round(x: f64, n: usize) -> f64 {
    if !x.is_finite() {
        return x;
    }
    format!("{x:.n$}").parse().unwrap_or(x)
}

/// A direct hotspot: samples whose IP fell in one line record's JIT code,
/// or the unmapped row (all location fields `None`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Hotspot {
    pub samples: u64,
    pub jited_address: Option<u64>,
    /// Byte offset of the line record's first xlated instruction.
    pub instruction_offset: Option<u64>,
    pub file: Option<String>,
    pub line: Option<u32>,
    pub column: Option<u32>,
    pub source: Option<String>,
    /// BTF name of the (sub)program holding the line's JIT code.
    pub function: Option<String>,
}

impl Hotspot {
    pub(crate) fn is_unmapped(&self) -> bool {
        self.jited_address.is_none()
    }
}

/// Direct samples at one exact JIT address: one native instruction.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NativeSamples {
    pub samples: u64,
    pub ip: u64,
    /// The JIT function holding it, by its index in the kernel's
    /// `jited_ksyms` order (0 = the main program).
    pub func_index: Option<usize>,
    /// That function's BTF name.
    pub function: Option<String>,
    /// Bytes from the function's start (`offset` in `dump --jited`).
    pub offset: Option<u64>,
}

/// Samples in one kernel IP under one BPF call site (exact-IP row).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KernelHotspot {
    pub samples: u64,
    pub ip: u64,
    pub symbol: Option<String>,
    pub module: Option<String>,
    pub symbol_offset: Option<u64>,
    pub kind: &'static str,
    /// The caller line record's JIT address, or the raw caller address
    /// when there is no record.
    pub bpf_jited_address: Option<u64>,
    pub bpf_instruction_offset: Option<u64>,
    pub bpf_file: Option<String>,
    pub bpf_line: Option<u32>,
    pub bpf_column: Option<u32>,
    pub bpf_source: Option<String>,
    pub bpf_function: Option<String>,
    /// The caller had a line record (mapped) or not.
    pub caller_mapped: bool,
}

/// Exact-IP kernel rows merged per function and caller line: the
/// summed row (`ip` = lowest IP, no symbol offset, lowest caller address,
/// instruction offset and column) and the number of distinct IPs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct KernelGroup {
    pub row: KernelHotspot,
    pub ip_count: usize,
}

impl std::ops::Deref for KernelGroup {
    type Target = KernelHotspot;
    fn deref(&self) -> &KernelHotspot {
        &self.row
    }
}

/// One kernel frame of a callchain beneath a BPF call site.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Frame {
    pub ip: u64,
    pub symbol: Option<String>,
    pub module: Option<String>,
    /// As [`KernelHotspot::kind`].
    pub kind: &'static str,
}

/// Samples of one program that share a task and an identical stack: the
/// BPF line (the sampled one, or the call site the kernel frames run under)
/// and the kernel frames beneath it. Exporters turn these into folded
/// stacks, flame graphs and pprof samples.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Stack {
    pub samples: u64,
    /// Thread-group ID of the task the sample interrupted (0 = idle/none).
    pub pid: u32,
    /// Its cgroup2 ID (0 when the kernel does not report cgroups).
    pub cgroup: u64,
    /// The BTF function holding the line when it is not the program's main
    /// function (a BPF-to-BPF subprogram).
    pub subprogram: Option<String>,
    /// JIT address of the line record, or the raw address without one.
    pub jited_address: Option<u64>,
    pub file: Option<String>,
    pub line: Option<u32>,
    pub column: Option<u32>,
    pub source: Option<String>,
    /// Kernel frames under the line, outermost first; empty for a sample
    /// in the program's own instructions.
    pub kernel: Vec<Frame>,
    /// The interrupt or exception entry (its symbol) when the sample was
    /// taken in an interrupt that arrived while the line ran: `kernel` then
    /// holds the interrupt's frames, from that entry down, which the line
    /// did not call.
    pub interrupt: Option<String>,
}

/// Samples taken in interrupts entered through one entry point while one
/// BPF line ran (the line executing, or calling the kernel code the
/// interrupt arrived in).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct InterruptHotspot {
    pub samples: u64,
    /// The entry symbol, e.g. `asm_sysvec_apic_timer_interrupt`.
    pub entry: String,
    /// As in [`KernelHotspot`]: the interrupted line.
    pub bpf_jited_address: Option<u64>,
    pub bpf_instruction_offset: Option<u64>,
    pub bpf_file: Option<String>,
    pub bpf_line: Option<u32>,
    pub bpf_column: Option<u32>,
    pub bpf_source: Option<String>,
    pub bpf_function: Option<String>,
    pub caller_mapped: bool,
}

/// A task or cgroup in whose context a program ran, with its samples.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Payer {
    /// pid, or cgroup2 ID.
    pub id: u64,
    /// comm, or cgroup path.
    pub name: String,
    pub samples: u64,
}

/// An evidence-based diagnosis of one program: what was measured, the
/// threshold it crossed, and what to change.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Hint {
    /// `hash_map_contention`, `map_access_dominates`, `output_cost`,
    /// `tail_calls` or `hot_and_slow`.
    pub kind: &'static str,
    pub program_id: u32,
    pub program: String,
    /// The source line the evidence points at, when there is one.
    pub file: Option<String>,
    pub line: Option<u32>,
    pub source: Option<String>,
    /// The measured figure and the threshold it crossed, in `unit`.
    pub figure: f64,
    pub threshold: f64,
    pub unit: &'static str,
    /// The figure in words.
    pub evidence: String,
    pub fix: &'static str,
}

/// One program that received direct or kernel samples.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ProgramProfile {
    pub id: u32,
    pub prog_type: String,
    pub name: String,
    pub tag: String,
    /// BTF name of the main function (may be longer than `name`).
    pub full_name: Option<String>,
    /// JITed functions: 1 + the number of BPF-to-BPF subprograms.
    pub function_count: usize,
    pub pinned_paths: Vec<String>,
    pub samples: u64,
    pub kernel_samples: u64,
    pub direct_source_mapped_samples: u64,
    pub direct_source_unmapped_samples: u64,
    pub under_bpf_caller_source_mapped_samples: u64,
    pub under_bpf_caller_source_unmapped_samples: u64,
    /// Every direct row, in the order each was first seen.
    pub hotspots: Vec<Hotspot>,
    /// Every exact-IP kernel row, in the order each was first seen.
    pub kernel_hotspots: Vec<KernelHotspot>,
    /// Every sample of the program by task and stack; the counts add up to
    /// its inclusive samples plus its interrupt samples.
    pub stacks: Vec<Stack>,
    /// Every direct sample by exact JIT address, most samples first (ties
    /// by address); the counts add up to `samples`.
    pub native: Vec<NativeSamples>,
    /// Samples taken in interrupts that arrived while the program ran:
    /// neither its own instructions nor calls it made.
    pub interrupt_samples: u64,
    /// Those samples by entry point and interrupted line, in the order
    /// each was first seen.
    pub interrupts: Vec<InterruptHotspot>,
    /// Seconds into the capture at which the program was loaded, when it
    /// was loaded during the capture.
    pub loaded_after: Option<f64>,
    /// Seconds into the capture at which it was unloaded, when that
    /// happened during the capture.
    pub unloaded_after: Option<f64>,
}

impl ProgramProfile {
    pub fn inclusive_samples(&self) -> u64 {
        self.samples + self.kernel_samples
    }

    /// Seconds of a capture of `seconds` during which the program was
    /// loaded, when it was loaded or unloaded during the capture.
    pub(crate) fn loaded_seconds(&self, seconds: f64) -> Option<f64> {
        if self.loaded_after.is_none() && self.unloaded_after.is_none() {
            return None;
        }
        let from = self.loaded_after.unwrap_or(0.0);
        let to = self.unloaded_after.unwrap_or(seconds);
        Some((to - from).max(0.0))
    }
}

/// Where kernel call stacks come from (used only with kernel samples).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum CallGraph {
    /// The kernel's frame-pointer callchain.
    #[default]
    Fp,
    /// The last-branch-record call stack (hardware that has it).
    Lbr,
}

impl CallGraph {
    /// Every value, in the order option help and errors list them.
    pub(crate) const ALL: [CallGraph; 2] = [CallGraph::Fp, CallGraph::Lbr];

    /// The option value and the JSON/CSV text: `fp` or `lbr`.
    pub fn name(self) -> &'static str {
        match self {
            CallGraph::Fp => "fp",
            CallGraph::Lbr => "lbr",
        }
    }

    pub fn from_name(name: &str) -> Option<CallGraph> {
        CallGraph::ALL.into_iter().find(|c| c.name() == name)
    }
}

/// A finished capture.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Profile {
    pub requested_event: String,
    pub selected_event: String,
    /// Requested seconds.
    pub duration: f64,
    pub frequency: u64,
    pub kernel_samples: bool,
    pub call_graph: CallGraph,
    /// The programs selected (`--program-id`, `--pid`); empty for all.
    pub program_ids: Vec<u32>,
    /// `--pid`: the process whose programs were selected.
    pub pid: Option<u32>,
    pub counters: Counters,
    pub telemetry: Telemetry,
    /// Programs with samples, by descending inclusive samples then ID.
    pub programs: Vec<ProgramProfile>,
    /// The command name of every pid in the stacks, read when the capture
    /// ended (`?` for a task that had exited, `swapper` for pid 0).
    pub comms: std::collections::BTreeMap<u32, String>,
    /// The cgroup2 path (relative to the cgroup2 mount, `/` for the root)
    /// of every cgroup ID in the stacks that still existed at the end.
    pub cgroups: std::collections::BTreeMap<u64, String>,
    /// The cgroup path of every pid whose samples carried no cgroup ID
    /// (kernels before 5.7, cgroup v1 hosts), from `/proc/PID/cgroup` when
    /// the capture ended; a task that had exited has none.
    pub task_cgroups: std::collections::BTreeMap<u32, String>,
    /// Hints whose evidence was read from the kernel when the capture ended
    /// (tail calls); the sample-based ones are derived from the stacks.
    pub kernel_hints: Vec<Hint>,
    /// Samples in hooks' dispatch and statistics code, outside any
    /// program (with kernel samples only), by kind and hook.
    pub dispatch: Vec<DispatchSamples>,
}

/// How the kernel gets from a hook to a program: the kinds of dispatch
/// code brr recognises in a callchain.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum DispatchKind {
    SyscallSlowPath,
    RawTracepoint,
    PerfTracepoint,
    Kprobe,
    Kretprobe,
    KprobeMulti,
    Trampoline,
    Xdp,
    Tc,
    Cgroup,
    SocketFilter,
}

impl DispatchKind {
    /// How brr names it.
    pub fn label(self) -> &'static str {
        match self {
            DispatchKind::SyscallSlowPath => "syscall_slow_path",
            DispatchKind::RawTracepoint => "raw_tracepoint",
            DispatchKind::PerfTracepoint => "tracepoint",
            DispatchKind::Kprobe => "kprobe",
            DispatchKind::Kretprobe => "kretprobe",
            DispatchKind::KprobeMulti => "kprobe_multi",
            DispatchKind::Trampoline => "trampoline",
            DispatchKind::Xdp => "xdp",
            DispatchKind::Tc => "tc",
            DispatchKind::Cgroup => "cgroup",
            DispatchKind::SocketFilter => "socket_filter",
        }
    }
}

/// Samples in one hook's dispatch code that no program frame sits above.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DispatchSamples {
    pub kind: DispatchKind,
    /// The hook when the callchain names it (a tracepoint, the traced
    /// function).
    pub hook: Option<String>,
    /// The tracepoint's argument count, when the dispatcher says it
    /// (`bpf_trace_run<N>`) and the chain names no hook.
    pub args: Option<usize>,
    /// Samples in the dispatch path.
    pub dispatch: u64,
    /// Samples in the clock reads and counter updates of statistics.
    pub stats: u64,
}

impl Profile {
    /// `D`: the measured duration, else the requested one.
    pub fn seconds(&self) -> f64 {
        if self.telemetry.actual_duration > 0.0 {
            self.telemetry.actual_duration
        } else {
            self.duration
        }
    }

    /// `round(samples / (D × F) × 100, 4)`: 100 % is one CPU.
    pub fn cpu_percent(&self, samples: u64) -> f64 {
        self.cpu_percent_over(samples, self.seconds())
    }

    /// The same over `seconds` instead of the capture (the time a program
    /// was loaded).
    pub(crate) fn cpu_percent_over(&self, samples: u64, seconds: f64) -> f64 {
        let denom = seconds * self.frequency as f64;
        if denom <= 0.0 {
            0.0
        } else {
            round(samples as f64 / denom * 100.0, 4)
        }
    }

    pub fn program(&self, id: u32) -> Option<&ProgramProfile> {
        self.programs.iter().find(|p| p.id == id)
    }

    /// Whether the report covers program `id`: every program, or only
    /// the selected ones.
    pub(crate) fn selects(&self, id: u32) -> bool {
        self.program_ids.is_empty() || self.program_ids.contains(&id)
    }
}

/// `round(part / whole × 100, 2)`, 0.0 for an empty whole.
pub(crate) fn share(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        round(part as f64 / whole as f64 * 100.0, 2)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_rounding() {
        assert_eq!(round(2.675, 2), 2.67); // binary value is below .675
        assert_eq!(round(0.125, 2), 0.12); // exact tie: half-even
        assert_eq!(round(5.35789, 4), 5.3579);
        assert_eq!(round(100.0, 4), 100.0);
        assert_eq!(share(1, 3), 33.33);
        assert_eq!(share(1, 0), 0.0);
    }

    #[test]
    fn cpu_percent_uses_measured_duration() {
        let mut p = Profile {
            duration: 5.0,
            frequency: 1000,
            ..Default::default()
        };
        assert_eq!(p.cpu_percent(50), 1.0);
        p.telemetry.actual_duration = 2.0;
        assert_eq!(p.cpu_percent(50), 2.5);
        p.frequency = 0;
        assert_eq!(p.cpu_percent(50), 0.0);
    }
}
