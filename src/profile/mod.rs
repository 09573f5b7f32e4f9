//! The sampling profiler: `brr profile`, `brr perf-events`, and the engine
//! `top` reuses.
//!
//! `run` performs one capture (for `session::Profiling`, the one profile
//! job) and returns a plain-data [`Profile`];
//! [`report`] turns it once into the `Report` every view reads (rows
//! ordered and cut by [`aggregate`], payers from [`who`], [`hints`]), and
//! `render::profile` lays that out as text, JSON or CSV.

pub(crate) mod access;
pub(crate) mod aggregate;
pub(crate) mod attribute;
pub(crate) mod capture;
pub(crate) mod context;
pub(crate) mod cost;
pub(crate) mod cost_hints;
pub(crate) mod events;
pub(crate) mod hints;
pub(crate) mod image;
pub(crate) mod records;
pub(crate) mod report;
pub(crate) mod syscall_filter;
pub(crate) mod tailcalls;
pub(crate) mod who;

use std::os::fd::OwnedFd;
use std::time::{Duration, Instant};

use crate::error::{BrrError, Result};
use crate::kernel::kallsyms::Kallsyms;
use crate::kernel::lines::BtfCache;
use crate::kernel::perf::{self, PerfEventAttr};
use crate::kernel::{objects, prog_reads, Errno};
use crate::model;
pub use crate::model::profile::CallGraph;
use crate::model::profile::{Profile, Telemetry};
use crate::values::{self, ValueError};
use attribute::Attributor;
use capture::{CpuRing, PlanInput, ProgSource, Progress, StopSignal};
pub(crate) use context::Context;
pub use events::Event;
use events::Shape;
use image::ProgMeta;

/// What to capture.
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    pub event: Event,
    /// Seconds.
    pub duration: f64,
    pub frequency: u64,
    pub kernel_samples: bool,
    /// Used only with `kernel_samples`.
    pub call_graph: CallGraph,
    /// `--perf-buffer-pages` (None = auto).
    pub pages: Option<u64>,
    /// `--perf-drain-ms` (None = auto).
    pub drain_ms: Option<u64>,
    /// Report only these programs (each checked to exist before
    /// capturing); empty for every program.
    pub program_ids: Vec<u32>,
    /// Report only the programs this process holds file descriptors on
    /// (with `program_ids`, those too).
    pub pid: Option<u32>,
}

/// Why a [`Request`] cannot be captured. Each front end words it its own
/// way (the command line names its options, the TUI its form fields).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Invalid {
    Duration(ValueError),
    Frequency(ValueError),
    /// An LBR call stack is only read with kernel samples.
    LbrWithoutKernelSamples,
    Pages(ValueError),
    DrainMs(ValueError),
}

impl Request {
    /// Capture length when none is given.
    pub(crate) const DEFAULT_DURATION: f64 = 5.0;
    /// Sampling frequency when none is given: a prime, so that sampling
    /// does not beat with periodic work.
    pub(crate) const DEFAULT_FREQUENCY: u64 = 997;

    /// The first reason, in field order, why this cannot be captured.
    pub fn validate(&self) -> std::result::Result<(), Invalid> {
        values::seconds_in_range(self.duration).map_err(Invalid::Duration)?;
        if self.frequency == 0 {
            return Err(Invalid::Frequency(ValueError::NotPositive));
        }
        if self.call_graph == CallGraph::Lbr && !self.kernel_samples {
            return Err(Invalid::LbrWithoutKernelSamples);
        }
        if let Some(p) = self.pages {
            values::pages_in_range(p).map_err(Invalid::Pages)?;
        }
        if let Some(ms) = self.drain_ms {
            values::drain_ms_in_range(ms).map_err(Invalid::DrainMs)?;
        }
        Ok(())
    }

    pub fn shape(&self) -> Shape {
        match (self.kernel_samples, self.call_graph) {
            (false, _) => Shape::Direct,
            (true, CallGraph::Lbr) => Shape::Lbr,
            (true, CallGraph::Fp) => Shape::Callchain,
        }
    }
}

/// Side-band ring sizes, the first that maps: load/unload records are rare
/// and small, and a lost one only triggers a re-enumeration, but every
/// process a host starts adds a FORK, a COMM and an EXIT record (about
/// 150 bytes), thousands a second on a busy build or a shell loop, and a
/// lost COMM or FORK leaves a task unnamed.
const SIDE_BAND_PAGES: [u64; 2] = [64, 2];

/// Reads programs from the kernel for the capture loop.
struct KernelPrograms {
    btf: BtfCache,
}

impl ProgSource for KernelPrograms {
    fn by_id(&mut self, id: u32) -> Option<ProgMeta> {
        image::read_meta_by_id(id, &mut self.btf).ok().flatten()
    }
    fn ids(&mut self) -> Vec<u32> {
        prog_reads::program_ids()
    }
}

fn limit_text(v: Option<u64>) -> String {
    v.map_or_else(|| "unlimited".into(), |v| v.to_string())
}

fn alloc_error(cpu: u32, plan: &capture::Plan, ncpus: usize, page: u64, e: Errno) -> BrrError {
    let (soft, hard) = perf::memlock_limit();
    BrrError::Failed(format!(
        "failed to allocate perf ring for CPU {cpu}: {} data pages ({} bytes per CPU, {} bytes total): {e}; kernel.perf_event_mlock_kb={}, RLIMIT_MEMLOCK={}/{}; lower --perf-buffer-pages or sampling frequency, or raise the perf/memlock allowance (CAP_IPC_LOCK lifts it)",
        plan.pages,
        plan.bytes_per_cpu,
        ncpus as u64 * (plan.bytes_per_cpu + page),
        plan.mlock_kb,
        limit_text(soft),
        limit_text(hard),
    ))
}

/// Open and map one sampling event per CPU (disabled). A CPU that went
/// offline meanwhile is skipped with a warning.
fn open_rings(setup: &Setup, warnings: &mut Vec<String>) -> Result<Vec<CpuRing>> {
    let mut fds: Vec<(u32, OwnedFd)> = Vec::new();
    for &cpu in &setup.cpus {
        match perf::open(&setup.attr, cpu) {
            Ok(fd) => fds.push((cpu, fd)),
            Err(Errno(libc::ENODEV)) if !events::online_cpus().contains(&cpu) => {
                warnings.push(format!(
                    "CPU {cpu} went offline before perf sampling and was skipped"
                ));
            }
            Err(e) => return Err(events::open_error(setup.event.name, e)),
        }
    }
    if fds.is_empty() {
        return Err(BrrError::Unsupported(
            "no online CPUs remained for perf sampling".into(),
        ));
    }
    let n = fds.len();
    let (plan, page) = (&setup.plan, setup.page);
    fds.into_iter()
        .map(|(cpu, fd)| {
            let ring = perf::map_ring(&fd, plan.pages, page)
                .map_err(|e| alloc_error(cpu, plan, n, page, e))?;
            Ok(CpuRing { cpu, fd, ring })
        })
        .collect()
}

/// Best effort: a dummy event per CPU reporting BPF loads/unloads. Without
/// it, programs loaded during the capture are not attributed.
fn open_side_band(cpus: &[u32], page: u64) -> Vec<CpuRing> {
    let attr = events::side_band_attr();
    let mut out = Vec::new();
    for &cpu in cpus {
        let Ok(fd) = perf::open(&attr, cpu) else {
            return Vec::new();
        };
        // The locked-memory limit may not allow the larger ring.
        let Some(ring) = SIDE_BAND_PAGES
            .iter()
            .find_map(|&pages| perf::map_ring(&fd, pages, page).ok())
        else {
            return Vec::new();
        };
        out.push(CpuRing { cpu, fd, ring });
    }
    out
}

/// Environment switch for the benchmark script: report start-up timing on
/// stderr.
const TRACE_ENV: &str = "BRR_TRACE_STARTUP";

fn unix_ns_at(t: Instant) -> u128 {
    let now_unix = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    now_unix.saturating_sub(t.elapsed()).as_nanos()
}

/// The ring size, drain interval and watermark for this request under the
/// kernel's perf limits.
fn plan_rings(req: &Request, shape: Shape, page: u64) -> capture::Plan {
    capture::plan(&PlanInput {
        frequency: req.frequency,
        shape,
        pages: req.pages,
        drain_ms: req.drain_ms,
        page_size: page,
        mlock_kb: events::kernel_sysctl("perf_event_mlock_kb"),
        max_stack: events::kernel_sysctl("perf_event_max_stack"),
        max_contexts: events::kernel_sysctl("perf_event_max_contexts_per_stack"),
        lock_exempt: crate::privilege::CapSet::current()
            .is_some_and(|c| c.has(crate::privilege::Cap::IpcLock)),
    })
}

/// One perf fd per CPU must fit under RLIMIT_NOFILE; failing up front gives
/// a clear message instead of an EMFILE halfway through opening.
fn check_fd_limit(cpus: usize) -> Result<()> {
    if let (Some(soft), Some(open)) = (perf::open_files_limit(), perf::open_files()) {
        let n = cpus as u64;
        if open + n > soft {
            return Err(BrrError::Failed(format!(
                "perf sampling needs {n} additional file descriptors for {n} CPUs, but RLIMIT_NOFILE={soft} and approximately {open} descriptors are already open; raise the file-descriptor limit"
            )));
        }
    }
    Ok(())
}

fn trace_startup(outcome: &capture::LoopOutcome) {
    if std::env::var_os(TRACE_ENV).is_some() {
        eprintln!(
            "brr-trace: enabled_unix_ns={} first_sample_unix_ns={}",
            outcome.started.map_or(0, unix_ns_at),
            outcome.first_sample.map_or(0, unix_ns_at)
        );
    }
}

fn telemetry(
    outcome: &capture::LoopOutcome,
    cpus: Vec<u32>,
    plan: &capture::Plan,
    bytes_total: u64,
) -> Telemetry {
    Telemetry {
        actual_duration: outcome.actual_duration,
        cpus,
        pages_per_cpu: plan.pages,
        bytes_per_cpu: plan.bytes_per_cpu,
        bytes_total,
        drain_interval_ms: plan.drain_ms,
        drain_count: outcome.drain_count,
        max_ring_occupancy: outcome.max_occupancy,
        lost_samples: outcome.stats.lost_samples,
        throttle_events: outcome.stats.throttle_events,
        unthrottle_events: outcome.stats.unthrottle_events,
        malformed_records: outcome.stats.malformed_records,
        unknown_records: outcome.stats.unknown_records,
        discarded_bytes: outcome.stats.discarded_bytes,
        cancelled: outcome.cancelled,
        ..Default::default()
    }
}

/// Loads and unloads that the side band reported after sampling ended
/// happened after the capture, not during it.
fn lifetimes_within(programs: &mut [model::profile::ProgramProfile], seconds: f64) {
    for p in programs {
        p.loaded_after = p.loaded_after.filter(|&s| s < seconds);
        p.unloaded_after = p.unloaded_after.filter(|&s| s < seconds);
    }
}

/// Sum the events' enabled and running times (for the multiplexing check);
/// returns whether some CPU's times could not be read.
fn add_ring_times(rings: &[CpuRing], tel: &mut Telemetry, warnings: &mut Vec<String>) -> bool {
    let mut timing_incomplete = false;
    for r in rings {
        match perf::times(&r.fd) {
            Ok(Some((enabled, running))) => {
                tel.time_enabled_ns += enabled;
                tel.time_running_ns += running;
            }
            Ok(None) => {}
            Err(e) => {
                timing_incomplete = true;
                warnings.push(format!(
                    "perf timing metadata is incomplete for CPU {}: {e}",
                    r.cpu
                ));
            }
        }
    }
    timing_incomplete
}

/// Warn (and return true) when kernel.perf_event_max_sample_rate dropped
/// below the requested frequency during the capture: the kernel lowers it
/// on its own when sampling takes too long.
fn check_rate_lowered(
    rate_at_start: Option<i64>,
    frequency: u64,
    warnings: &mut Vec<String>,
) -> bool {
    let Some(now) = events::max_sample_rate() else {
        return false;
    };
    if !rate_was_lowered(rate_at_start, now, frequency) {
        return false;
    }
    warnings.push(format!(
        "kernel.perf_event_max_sample_rate was lowered below requested perf sample frequency during sampling ({now} Hz < {frequency} Hz); sampled dataset may be inconsistent, rerun with a lower -F/--frequency"
    ));
    true
}

/// Before sampling: brr may list programs, and the kernel's policy shows
/// it their JIT addresses. Listing comes first: a process without
/// CAP_SYS_ADMIN hears about that, the more basic lack.
fn check_access() -> Result<()> {
    prog_reads::check_listing()?;
    match access::hidden_by_policy(&access::AddressPolicy::current()) {
        Some(hidden) => Err(BrrError::Unsupported(hidden.message())),
        None => Ok(()),
    }
}

/// An attributor that knows every program loaded now (later loads come
/// through the side band). Fails, before any sampling, when none of them
/// (or not `program_id`) can have a sample attributed: interpreted, or
/// JIT addresses hidden.
fn attributor_for_loaded(shape: Shape, btf: &mut BtfCache, selected: &[u32]) -> Result<Attributor> {
    let metas = prog_reads::each_program(|fd| image::read_meta(fd, btf))?;
    let sights: Vec<access::ProgSight> = metas
        .iter()
        .map(|m| access::ProgSight {
            id: m.id,
            jited: m.jited,
            addressed: !m.funcs.is_empty(),
        })
        .collect();
    let policy = access::AddressPolicy::current();
    if let Some(why) =
        access::unattributable_among(&sights, selected, access::jit_enable(), &policy)
    {
        return Err(BrrError::Unsupported(why));
    }
    let mut attributor = Attributor::new(shape);
    for m in metas {
        attributor.register(m);
    }
    Ok(attributor)
}

/// A capture checked and planned, before any event is open: the programs
/// it selects, the event and attributes it samples with, its rings, and
/// the kernel symbols being read meanwhile.
struct Setup {
    selected: Vec<u32>,
    shape: Shape,
    event: &'static events::EventSpec,
    /// `kernel.perf_event_max_sample_rate` before sampling.
    rate_at_start: Option<i64>,
    cpus: Vec<u32>,
    page: u64,
    plan: capture::Plan,
    attr: PerfEventAttr,
    /// /proc/kallsyms takes tens of milliseconds of kernel time to read;
    /// it is read while the capture runs.
    ksyms: Option<std::thread::JoinHandle<Kallsyms>>,
}

/// Check that `req` can be sampled here and plan its rings.
fn prepare(req: &Request, ctx: &dyn Context) -> Result<Setup> {
    let rate_at_start = events::check_frequency(req.frequency)?;
    let selected = selected_programs(req, ctx)?;
    let shape = req.shape();
    let cpus = events::online_cpus();
    let Some(&first) = cpus.first() else {
        return Err(BrrError::Unsupported(
            "no online CPUs available for perf sampling".into(),
        ));
    };
    let event = events::select(req.event, req.frequency, shape, first)?;
    check_access()?;
    let ksyms = req
        .kernel_samples
        .then(|| std::thread::spawn(Kallsyms::load));
    let page = perf::page_size();
    let plan = plan_rings(req, shape, page);
    check_fd_limit(cpus.len())?;
    let watermark = plan.watermark.min(u32::MAX as u64) as u32;
    let mut attr = events::sample_attr(event, req.frequency, shape, Some(watermark));
    if events::cgroup_supported(&attr, first) {
        attr.sample_type |= records::SAMPLE_CGROUP;
    }
    Ok(Setup {
        selected,
        shape,
        event,
        rate_at_start,
        cpus,
        page,
        plan,
        attr,
        ksyms,
    })
}

/// The open events of a capture and what attributes their samples.
struct Opened {
    rings: Vec<CpuRing>,
    side: Vec<CpuRing>,
    attributor: Attributor,
    source: KernelPrograms,
    /// The CPUs skipped because they went offline.
    offline: Vec<String>,
}

/// Open the sample rings and the side band (disabled), and learn every
/// program loaded now.
fn open_events(setup: &Setup) -> Result<Opened> {
    let mut offline = Vec::new();
    let rings = open_rings(setup, &mut offline)?;
    let kept: Vec<u32> = rings.iter().map(|r| r.cpu).collect();
    // Side band before the enumeration: a program loaded in between is seen
    // by both, which is harmless.
    let side = open_side_band(&kept, setup.page);
    let mut source = KernelPrograms {
        btf: BtfCache::default(),
    };
    let attributor = attributor_for_loaded(setup.shape, &mut source.btf, &setup.selected)?;
    Ok(Opened {
        rings,
        side,
        attributor,
        source,
        offline,
    })
}

/// How the capture went, from the rings (closed here) and the kernel's
/// sample rate now, with every warning in its order.
fn measured(
    setup: &Setup,
    rings: Vec<CpuRing>,
    offline: Vec<String>,
    outcome: &capture::LoopOutcome,
    frequency: u64,
) -> Telemetry {
    let plan = &setup.plan;
    let mut warnings = plan.warnings.clone();
    warnings.extend(offline);
    let kept: Vec<u32> = rings.iter().map(|r| r.cpu).collect();
    let bytes_total = rings.len() as u64 * (plan.bytes_per_cpu + setup.page);
    let mut tel = telemetry(outcome, kept, plan, bytes_total);
    let timing_incomplete = add_ring_times(&rings, &mut tel, &mut warnings);
    drop(rings);
    let rate_lowered = check_rate_lowered(setup.rate_at_start, frequency, &mut warnings);
    tel.incomplete = record_warnings(&tel, &mut warnings) || rate_lowered || timing_incomplete;
    tel.warnings = warnings;
    tel
}

/// The kernel's symbols, read meanwhile when the request takes kernel
/// samples; when the kernel hides them, that is said after the ring plan's
/// warnings.
fn kernel_symbols(setup: &mut Setup, kernel_samples: bool, warnings: &mut Vec<String>) -> Kallsyms {
    let ksyms = match setup.ksyms.take() {
        Some(h) => h.join().unwrap_or_default(),
        None => Kallsyms::default(),
    };
    if kernel_samples && ksyms.hidden {
        warnings.insert(setup.plan.warnings.len(), KSYMS_HIDDEN.into());
    }
    ksyms
}

/// Run one capture. `stop` ends it early (the result then covers the time
/// actually measured); `progress` is called after every sweep. Pins, task
/// names and cgroups come from `ctx`.
pub(crate) fn run(
    req: &Request,
    ctx: &dyn Context,
    stop: &StopSignal,
    progress: &mut dyn FnMut(Progress),
) -> Result<Profile> {
    let mut setup = prepare(req, ctx)?;
    let mut opened = open_events(&setup)?;
    let outcome = capture::run(
        &mut opened.rings,
        &mut opened.side,
        setup.attr.sample_type,
        setup.plan.drain_ms,
        Duration::from_secs_f64(req.duration.clamp(0.0, 1e9)),
        stop,
        &mut opened.attributor,
        &mut opened.source,
        progress,
    )?;
    drop(opened.side);
    trace_startup(&outcome);
    let mut telemetry = measured(
        &setup,
        opened.rings,
        opened.offline,
        &outcome,
        req.frequency,
    );
    let ksyms = kernel_symbols(&mut setup, req.kernel_samples, &mut telemetry.warnings);
    let pins = ctx.pins();
    let (mut programs, counters, dispatch) =
        opened.attributor.finish(&ksyms, |id| pins.for_prog(id));
    lifetimes_within(&mut programs, outcome.actual_duration);
    let mut profile = Profile {
        requested_event: req.event.name().to_string(),
        selected_event: setup.event.name.to_string(),
        duration: req.duration,
        frequency: req.frequency,
        kernel_samples: req.kernel_samples,
        call_graph: req.call_graph,
        program_ids: setup.selected,
        pid: req.pid,
        counters,
        telemetry,
        comms: who::comms(&programs, &outcome.comms, &outcome.parents, |pid| {
            ctx.comm(pid)
        }),
        programs,
        dispatch,
        ..Profile::default()
    };
    add_cgroups(&mut profile, ctx);
    profile.kernel_hints = tailcalls::hints(&profile, &mut tailcalls::Kernel);
    Ok(profile)
}

/// The paths of the cgroups the samples carry, and for samples without
/// one (a kernel without cgroup samples), their tasks' cgroups.
fn add_cgroups(profile: &mut Profile, ctx: &dyn Context) {
    let stacks = || profile.programs.iter().flat_map(|p| p.stacks.iter());
    let ids: Vec<u64> = stacks().map(|s| s.cgroup).collect();
    let pids: Vec<u32> = stacks()
        .filter_map(|s| (s.cgroup == 0).then_some(s.pid))
        .collect();
    profile.cgroups = ctx.cgroup_paths(&ids);
    profile.task_cgroups = ctx.task_cgroups(&pids);
}

/// The programs a request selects: each `--program-id` (which must
/// exist), then those process `--pid` holds (it must hold one); empty for
/// every program.
fn selected_programs(req: &Request, ctx: &dyn Context) -> Result<Vec<u32>> {
    let mut ids = Vec::new();
    for &id in &req.program_ids {
        drop(objects::open_program(u64::from(id))?);
        if !ids.contains(&id) {
            ids.push(id);
        }
    }
    if let Some(pid) = req.pid {
        for id in programs_of_pid(pid, ctx)? {
            if !ids.contains(&id) {
                ids.push(id);
            }
        }
    }
    Ok(ids)
}

/// The programs process `pid` holds, or why there are none to profile.
fn programs_of_pid(pid: u32, ctx: &dyn Context) -> Result<Vec<u32>> {
    match ctx.programs_of_pid(pid) {
        Ok(ids) if ids.is_empty() => Err(BrrError::Failed(format!(
            "process {pid} holds no eBPF programs (no file descriptor of it names a program)"
        ))),
        Ok(ids) => Ok(ids),
        Err(Errno(libc::ENOENT)) => Err(BrrError::Failed(format!("no process with pid {pid}"))),
        Err(e @ Errno(libc::EACCES | libc::EPERM)) => Err(BrrError::Permission(format!(
            "cannot read the file descriptors of process {pid}: {e}; run brr as root or as the process's owner with CAP_SYS_PTRACE"
        ))),
        Err(e) => Err(BrrError::Failed(format!(
            "cannot read the file descriptors of process {pid}: {e}"
        ))),
    }
}

const KSYMS_HIDDEN: &str = "kernel symbol addresses are hidden by the kernel (they need CAP_SYSLOG; kernel.kptr_restrict=2 hides them from everyone); kernel/helper samples are reported without symbols";

/// Append the warnings about what the rings reported, in this order: lost
/// samples, throttling, malformed records, multiplexing, ring occupancy;
/// returns whether those problems make the profile incomplete (all but
/// occupancy do).
fn record_warnings(tel: &Telemetry, warnings: &mut Vec<String>) -> bool {
    let running = tel.running_percent();
    if tel.lost_samples > 0 {
        warnings.push(format!(
            "perf dropped {} samples; CPU percentages are lower bounds",
            tel.lost_samples
        ));
    }
    if tel.throttle_events > 0 {
        warnings.push(format!(
            "perf throttled sampling {} times; profile is incomplete",
            tel.throttle_events
        ));
    }
    if tel.malformed_records > 0 || tel.discarded_bytes > 0 {
        warnings.push(format!(
            "perf ring parsing discarded {} bytes across {} malformed records; profile is incomplete",
            tel.discarded_bytes, tel.malformed_records
        ));
    }
    if running < 99.0 {
        warnings.push(format!(
            "perf events ran for {running:.2}% of enabled time; profile is incomplete due to multiplexing"
        ));
    }
    // The unrounded peak decides; unthrottle and unknown records and a full
    // ring alone are not incomplete.
    if tel.max_ring_occupancy >= 75.0 {
        warnings.push(format!(
            "perf ring occupancy reached {:.1}%; consider increasing --perf-buffer-pages or reducing --perf-drain-ms",
            tel.max_ring_occupancy
        ));
    }
    tel.lost_samples > 0
        || tel.throttle_events > 0
        || tel.malformed_records > 0
        || tel.discarded_bytes > 0
        || running < 99.0
}

/// The limit is below `F` now and was higher (or unreadable) at the start.
fn rate_was_lowered(start: Option<i64>, now: i64, freq: u64) -> bool {
    now < freq.min(i64::MAX as u64) as i64 && start.is_none_or(|s| now < s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lowered_sample_rate() {
        assert!(rate_was_lowered(Some(100_000), 50_000, 99_997));
        assert!(rate_was_lowered(None, 50_000, 99_997));
        assert!(
            !rate_was_lowered(Some(50_000), 50_000, 99_997),
            "already low at the start"
        );
        assert!(!rate_was_lowered(Some(100_000), 99_997, 99_997));
    }

    #[test]
    fn ring_warnings_in_order_and_incomplete_rules() {
        let clean = Telemetry {
            time_enabled_ns: 1000,
            time_running_ns: 1000,
            unthrottle_events: 3,
            unknown_records: 2,
            max_ring_occupancy: 74.99,
            ..Default::default()
        };
        let mut w = Vec::new();
        assert!(!record_warnings(&clean, &mut w));
        assert!(w.is_empty());
        let bad = Telemetry {
            lost_samples: 17137,
            throttle_events: 2,
            malformed_records: 1,
            discarded_bytes: 48,
            time_enabled_ns: 1000,
            time_running_ns: 985,
            max_ring_occupancy: 99.6,
            ..Default::default()
        };
        assert!(record_warnings(&bad, &mut w));
        assert_eq!(
            w,
            vec![
                "perf dropped 17137 samples; CPU percentages are lower bounds",
                "perf throttled sampling 2 times; profile is incomplete",
                "perf ring parsing discarded 48 bytes across 1 malformed records; profile is incomplete",
                "perf events ran for 98.50% of enabled time; profile is incomplete due to multiplexing",
                "perf ring occupancy reached 99.6%; consider increasing --perf-buffer-pages or reducing --perf-drain-ms",
            ]
        );
        // A full ring alone is a hint, not an incomplete profile.
        let full = Telemetry {
            max_ring_occupancy: 75.0,
            ..Default::default()
        };
        let mut w = Vec::new();
        assert!(!record_warnings(&full, &mut w));
        assert_eq!(w.len(), 1);
    }

    fn request() -> Request {
        Request {
            event: Event::Auto,
            duration: 1.0,
            frequency: 997,
            kernel_samples: false,
            call_graph: CallGraph::Lbr,
            pages: None,
            drain_ms: None,
            program_ids: Vec::new(),
            pid: None,
        }
    }

    #[test]
    fn request_shapes() {
        let mut r = request();
        assert_eq!(r.shape(), Shape::Direct);
        r.kernel_samples = true;
        assert_eq!(r.shape(), Shape::Lbr);
        r.call_graph = CallGraph::Fp;
        assert_eq!(r.shape(), Shape::Callchain);
    }

    #[test]
    fn request_validation_in_field_order() {
        let ok = Request {
            kernel_samples: true,
            pages: Some(8),
            drain_ms: Some(u64::from(u32::MAX)),
            ..request()
        };
        assert_eq!(ok.validate(), Ok(()));
        let cases = [
            (
                Request {
                    duration: 0.0,
                    frequency: 0,
                    ..request()
                },
                Invalid::Duration(ValueError::NotPositive),
            ),
            (
                Request {
                    duration: 2e7,
                    ..ok.clone()
                },
                Invalid::Duration(ValueError::AtMost("10000000".into())),
            ),
            (
                Request {
                    frequency: 0,
                    ..request()
                },
                Invalid::Frequency(ValueError::NotPositive),
            ),
            (
                Request {
                    pages: Some(3),
                    ..request()
                },
                Invalid::LbrWithoutKernelSamples,
            ),
            (
                Request {
                    pages: Some(3),
                    drain_ms: Some(0),
                    ..ok.clone()
                },
                Invalid::Pages(ValueError::NotPowerOfTwo),
            ),
            (
                Request {
                    drain_ms: Some(0),
                    ..ok.clone()
                },
                Invalid::DrainMs(ValueError::NotPositive),
            ),
        ];
        for (r, want) in cases {
            assert_eq!(r.validate(), Err(want), "{r:?}");
        }
    }
}
