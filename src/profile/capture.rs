//! Ring sizing, the drain loop, and stopping on time.
//!
//! One thread drains: it wakes when a ring's watermark fires and sweeps
//! every ring at least every `drain_ms`. A second thread owns the clock: at
//! the deadline (or on cancel) it disables every event at once, so a long
//! drain can never stretch the capture, then wakes the drain thread for the
//! final sweep.

use std::os::fd::{AsFd, AsRawFd, OwnedFd, RawFd};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

use super::attribute::Attributor;
use super::events::Shape;
use super::image::ProgMeta;
use super::records::{self, ParseStats, Record};
use crate::error::{BrrError, Result};
use crate::kernel::perf::{self, Ring, Waker};

// ---------------------------------------------------------------------------
// Ring planning: pages per CPU, drain interval and wakeup watermark
// ---------------------------------------------------------------------------

#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct PlanInput {
    pub frequency: u64,
    pub shape: Shape,
    /// `--perf-buffer-pages` (None = auto).
    pub pages: Option<u64>,
    /// `--perf-drain-ms` (None = auto).
    pub drain_ms: Option<u64>,
    pub page_size: u64,
    /// `kernel.perf_event_mlock_kb`, `perf_event_max_stack`,
    /// `perf_event_max_contexts_per_stack` as read (None = unreadable).
    pub mlock_kb: Option<i64>,
    pub max_stack: Option<i64>,
    pub max_contexts: Option<i64>,
    /// The process has CAP_IPC_LOCK, which lifts the kernel's
    /// `perf_event_mlock_kb` and RLIMIT_MEMLOCK limits on perf rings.
    pub lock_exempt: bool,
}

/// Automatic ring size limit per CPU when CAP_IPC_LOCK lifts the kernel's
/// cap: 8 MiB, enough for 100 kHz direct sampling with 100 ms drains and
/// several times the headroom; larger rings only lock more memory.
pub(crate) const LOCK_EXEMPT_MAX_PAGES: u64 = 2048;

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Plan {
    pub record_bytes: u64,
    pub pages: u64,
    pub bytes_per_cpu: u64,
    pub drain_ms: u64,
    pub watermark: u64,
    pub mlock_kb: i64,
    pub warnings: Vec<String>,
}

/// Estimated bytes per sample record for a shape.
pub(crate) fn record_bytes(shape: Shape, max_stack: Option<i64>, max_contexts: Option<i64>) -> u64 {
    let positive = |v: Option<i64>, d: u64| v.filter(|&v| v > 0).map_or(d, |v| v as u64);
    match shape {
        Shape::Direct => 48,
        Shape::Callchain => 48 + 8 + (positive(max_stack, 127) + positive(max_contexts, 8)) * 8,
        Shape::Lbr => 48 + 8 + 64 * 24,
    }
}

fn largest_pow2_le(v: u64) -> u64 {
    if v == 0 {
        0
    } else {
        1 << (63 - v.leading_zeros())
    }
}

pub(crate) fn plan(i: &PlanInput) -> Plan {
    let record = record_bytes(i.shape, i.max_stack, i.max_contexts);
    let page = i.page_size.max(1);
    let f = i.frequency as f64;
    let mlock_kb = i
        .mlock_kb
        .filter(|&k| k > 0)
        .unwrap_or((128 * page / 1024) as i64);
    let mut warnings = Vec::new();
    let pages = match i.pages {
        Some(p) => p,
        None => {
            let target_ms = i.drain_ms.unwrap_or(100) as f64;
            let target_bytes = ((f * (target_ms / 1000.0)) * record as f64 * 4.0).ceil();
            let needed = ((target_bytes / page as f64).ceil() as u64).max(8);
            let auto = needed.checked_next_power_of_two().unwrap_or(1 << 63);
            let allowance = ((mlock_kb as u64).saturating_mul(1024).saturating_sub(page)) / page;
            let cap = if i.lock_exempt {
                largest_pow2_le(LOCK_EXEMPT_MAX_PAGES * 4096 / page).max(8)
            } else if allowance == 0 {
                128
            } else {
                largest_pow2_le(allowance)
            };
            let pages = auto.min(cap);
            if pages < auto && !i.lock_exempt {
                warnings.push(format!(
                    "automatic perf buffer was capped at {pages} pages per CPU by kernel.perf_event_mlock_kb={mlock_kb}"
                ));
            }
            pages
        }
    };
    let bytes_per_cpu = pages.saturating_mul(page);
    let byte_rate = (i.frequency.saturating_mul(record).saturating_mul(4)).max(1);
    let safe = ((bytes_per_cpu as f64 / byte_rate as f64 * 1000.0).floor() as u64).max(1);
    let drain_ms = i.drain_ms.unwrap_or_else(|| safe.min(100));
    let watermark = bytes_per_cpu.min(record.max(bytes_per_cpu / 4));
    if drain_ms > safe {
        warnings.push(format!(
            "configured perf drain interval {drain_ms}ms exceeds the estimated safe interval {safe}ms; watermark polling will drain earlier"
        ));
    }
    if drain_ms < 5 {
        warnings.push(format!(
            "perf sampling requires a {drain_ms}ms drain interval at this frequency; profiling overhead may be high"
        ));
    }
    Plan {
        record_bytes: record,
        pages,
        bytes_per_cpu,
        drain_ms,
        watermark,
        mlock_kb,
        warnings,
    }
}

// ---------------------------------------------------------------------------
// Stopping
// ---------------------------------------------------------------------------

/// Ends a capture early: the cancel of a profile job (`session::Profiling`,
/// which Ctrl-C, the TUI and the exporter call), or an internal error.
/// One signal serves one capture.
#[derive(Debug, Default)]
pub(crate) struct StopSignal {
    cancelled: Mutex<bool>,
    cv: Condvar,
}

impl StopSignal {
    pub(crate) fn new() -> StopSignal {
        StopSignal::default()
    }

    pub(crate) fn cancel(&self) {
        *self.cancelled.lock().unwrap_or_else(|e| e.into_inner()) = true;
        self.cv.notify_all();
    }

    pub(crate) fn is_cancelled(&self) -> bool {
        *self.cancelled.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Sleep until `deadline` or a cancel; true if cancelled.
    pub(crate) fn wait_until(&self, deadline: Instant) -> bool {
        let mut c = self.cancelled.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            if *c {
                return true;
            }
            let now = Instant::now();
            if now >= deadline {
                return false;
            }
            c = self
                .cv
                .wait_timeout(c, deadline - now)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }
}

// ---------------------------------------------------------------------------
// The capture loop
// ---------------------------------------------------------------------------

/// One CPU's event and ring.
pub(crate) struct CpuRing {
    pub cpu: u32,
    pub fd: OwnedFd,
    pub ring: Ring,
}

/// Where programs loaded during the capture are read from.
pub(crate) trait ProgSource {
    /// The program with this ID, if it still exists.
    fn by_id(&mut self, id: u32) -> Option<ProgMeta>;
    /// The IDs of every loaded program (after side-band records were
    /// lost): only those not known yet are then read, so a loss costs one
    /// system call per program.
    fn ids(&mut self) -> Vec<u32>;
}

/// Reported while capturing (after each sweep).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Progress {
    pub elapsed: Duration,
    pub samples: u64,
}

#[derive(Debug, Clone, Default)]
pub(crate) struct LoopOutcome {
    pub started: Option<Instant>,
    /// Seconds between the last enable and the disable.
    pub actual_duration: f64,
    pub drain_count: u64,
    pub max_occupancy: f64,
    /// Sample-ring records (lost/throttle/malformed... counters).
    pub stats: ParseStats,
    /// When the first sample was seen by a drain.
    pub first_sample: Option<Instant>,
    pub cancelled: bool,
    /// The last command name the kernel reported for each process during
    /// the capture (PERF_RECORD_COMM), so a task that exits before the end
    /// keeps its name.
    pub comms: std::collections::HashMap<u32, String>,
    /// The parent of each process created during the capture
    /// (PERF_RECORD_FORK): a child that never took a name of its own runs
    /// under its parent's.
    pub parents: std::collections::HashMap<u32, u32>,
}

/// A change to apply once the samples read alongside it are accounted for.
enum Unreg {
    Addr(u64),
    Prog(u32),
}

struct Loop<'a> {
    rings: &'a mut [CpuRing],
    side: &'a mut [CpuRing],
    sample_type: u64,
    attr: &'a mut Attributor,
    source: &'a mut dyn ProgSource,
    scratch: Vec<u8>,
    side_stats: ParseStats,
    /// Unloads seen but not applied yet (see [`Loop::drain`]).
    pending: Vec<Unreg>,
    /// CLOCK_MONOTONIC ns when sampling started: side-band times are
    /// relative to it.
    start_ns: u64,
    /// Per pid, whether its name came from the process's main thread,
    /// which names it in `/proc/PID/comm` too.
    comm_from_leader: std::collections::HashMap<u32, bool>,
    out: LoopOutcome,
}

impl Loop<'_> {
    /// Seconds into the capture of a side-band record (0 for one from
    /// before sampling started; the drain time for one without a time).
    /// A time of 0 is no time: the kernel has been seen to write it in an
    /// unload record while another perf session samples every CPU, and
    /// taken literally it would date a program's unload to the capture's
    /// start.
    fn seconds_at(&self, time: Option<u64>) -> f64 {
        match time.filter(|&t| t != 0) {
            Some(t) => t.saturating_sub(self.start_ns) as f64 / 1e9,
            None => self.out.started.map_or(0.0, |s| s.elapsed().as_secs_f64()),
        }
    }

    /// A task's new name: the main thread's wins over other threads'.
    fn comm(&mut self, pid: u32, tid: u32, comm: &[u8]) {
        let leader = pid == tid;
        if !leader && self.comm_from_leader.get(&pid) == Some(&true) {
            return;
        }
        self.comm_from_leader.insert(pid, leader);
        self.out
            .comms
            .insert(pid, String::from_utf8_lossy(comm).into_owned());
    }

    /// Apply side-band loads and names now; queue unloads in `pending`.
    fn drain_side(&mut self) {
        let unregs = &mut self.pending;
        let mut loads = Vec::new();
        let mut unloads = Vec::new();
        let mut comms: Vec<(u32, u32, Vec<u8>)> = Vec::new();
        let mut forks: Vec<(u32, u32)> = Vec::new();
        let mut resync = false;
        let lost_before = self.side_stats.lost_samples;
        for sb in self.side.iter_mut() {
            let (scratch, stats) = (&mut self.scratch, &mut self.side_stats);
            sb.ring.consume(|d| {
                resync |= d.overrun > 0;
                let layout = records::Layout::SIDE_BAND;
                records::walk(d.first, d.second, layout, scratch, stats, |r| match r {
                    Record::Ksymbol {
                        addr,
                        ksym_type: records::KSYMBOL_TYPE_BPF,
                        flags,
                        ..
                    } if flags & records::KSYMBOL_FLAG_UNREGISTER != 0 => {
                        unregs.push(Unreg::Addr(addr))
                    }
                    Record::BpfEvent { kind, id, time, .. }
                        if kind == records::BPF_EVENT_PROG_LOAD =>
                    {
                        loads.push((id, time))
                    }
                    Record::BpfEvent { kind, id, time, .. }
                        if kind == records::BPF_EVENT_PROG_UNLOAD =>
                    {
                        unregs.push(Unreg::Prog(id));
                        unloads.push((id, time));
                    }
                    Record::Comm { pid, tid, comm, .. } => comms.push((pid, tid, comm.to_vec())),
                    Record::Task {
                        exit: false,
                        pid,
                        ppid,
                        ..
                    } if pid != ppid => forks.push((pid, ppid)),
                    _ => {}
                });
            });
        }
        for (pid, tid, comm) in comms {
            self.comm(pid, tid, &comm);
        }
        self.out.parents.extend(forks);
        for (id, time) in loads {
            if !self.attr.knows(id) {
                if let Some(m) = self.source.by_id(id) {
                    self.attr.register(m);
                }
            }
            let secs = self.seconds_at(time);
            if secs > 0.0 {
                self.attr.loaded_at(id, secs);
            }
        }
        for (id, time) in unloads {
            let secs = self.seconds_at(time);
            self.attr.unloaded_at(id, secs);
        }
        if resync || self.side_stats.lost_samples > lost_before {
            for id in self.source.ids() {
                if !self.attr.knows(id) {
                    if let Some(m) = self.source.by_id(id) {
                        self.attr.register(m);
                    }
                }
            }
        }
    }

    /// Drain the listed sample rings. Their heads are read first and the
    /// side band second, so every program that ran in those samples is
    /// registered before they are attributed. Unloads wait for the end of
    /// a sweep of every ring: until then some ring may still hold samples
    /// taken before the unload.
    fn drain(&mut self, which: &[usize]) {
        let heads: Vec<(usize, u64)> = which
            .iter()
            .map(|&i| (i, self.rings[i].ring.head()))
            .collect();
        self.drain_side();
        let sample_type = self.sample_type;
        for (i, head) in heads {
            let ring = &mut self.rings[i].ring;
            let size = ring.data_size() as f64;
            let scratch = &mut self.scratch;
            let attr = &mut *self.attr;
            let out = &mut self.out;
            let samples_before = attr.counters.total_samples;
            ring.consume_to(head, |d| {
                out.drain_count += 1;
                let occupancy = d.available as f64 / size * 100.0;
                if occupancy > out.max_occupancy {
                    out.max_occupancy = occupancy;
                }
                out.stats.discarded_bytes += d.overrun;
                records::walk(
                    d.first,
                    d.second,
                    sample_type,
                    scratch,
                    &mut out.stats,
                    |rec| {
                        if let Record::Sample(s) = rec {
                            attr.sample(&s);
                        }
                    },
                );
            });
            if out.first_sample.is_none() && attr.counters.total_samples > samples_before {
                out.first_sample = Some(Instant::now());
            }
        }
        if which.len() == self.rings.len() {
            for u in std::mem::take(&mut self.pending) {
                match u {
                    Unreg::Addr(a) => self.attr.unregister_addr(a),
                    Unreg::Prog(id) => self.attr.unregister_prog(id),
                }
            }
        }
    }
}

/// How much the drain thread's nice value is lowered while it drains, so
/// that on a busy host the scheduler runs it before the rings fill.
pub(crate) const DRAIN_NICE_BOOST: i32 = 10;

/// Lowers the calling thread's nice value (Linux applies PRIO_PROCESS with
/// pid 0 to the calling thread) and restores it on drop. Without
/// CAP_SYS_NICE the kernel refuses and the drain runs at its old priority.
struct DrainPriority(Option<i32>);

impl DrainPriority {
    fn raise() -> DrainPriority {
        let Ok(old) = rustix::process::getpriority_process(None) else {
            return DrainPriority(None);
        };
        let new = (old - DRAIN_NICE_BOOST).max(-20);
        DrainPriority(
            rustix::process::setpriority_process(None, new)
                .ok()
                .map(|()| old),
        )
    }
}

impl Drop for DrainPriority {
    fn drop(&mut self) {
        if let Some(old) = self.0 {
            let _ = rustix::process::setpriority_process(None, old);
        }
    }
}

/// CLOCK_MONOTONIC in ns (the clock the side band stamps its records
/// with, and `Instant`'s).
fn monotonic_ns() -> u64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::Monotonic);
    (t.tv_sec as u64).saturating_mul(1_000_000_000) + t.tv_nsec as u64
}

fn ceil_ms(d: Duration) -> i32 {
    let ms = d.as_nanos().div_ceil(1_000_000);
    ms.min(i32::MAX as u128) as i32
}

/// Enable every sample event, drain until `duration` passes or `stop` is
/// cancelled, disable, drain once more. Events must be open, mapped and
/// disabled; side-band events already enabled.
#[allow(clippy::too_many_arguments)]
pub(crate) fn run(
    rings: &mut [CpuRing],
    side: &mut [CpuRing],
    sample_type: u64,
    drain_ms: u64,
    duration: Duration,
    stop: &StopSignal,
    attr: &mut Attributor,
    source: &mut dyn ProgSource,
    progress: &mut dyn FnMut(Progress),
) -> Result<LoopOutcome> {
    let raw: Vec<RawFd> = rings.iter().map(|r| r.fd.as_raw_fd()).collect();
    let cpus: Vec<u32> = rings.iter().map(|r| r.cpu).collect();
    let waker = perf::waker()
        .map_err(|e| BrrError::Failed(format!("failed to create a wakeup descriptor: {e}")))?;
    let disable_all = || {
        for &fd in &raw {
            let _ = perf::disable(fd);
        }
    };
    for (&fd, &cpu) in raw.iter().zip(&cpus) {
        if let Err(e) = perf::enable(fd) {
            disable_all();
            return Err(BrrError::Failed(format!(
                "failed to enable perf event on CPU {cpu}: {e}"
            )));
        }
    }
    let start = Instant::now();
    let start_ns = monotonic_ns();
    crate::trace::ready("capture");
    let deadline = start
        .checked_add(duration)
        .unwrap_or(start + Duration::from_secs(1 << 32));
    let stopped_at: Mutex<Option<(Instant, bool)>> = Mutex::new(None);
    let drain = Duration::from_millis(drain_ms.max(1));

    let mut lp = Loop {
        rings,
        side,
        sample_type,
        attr,
        source,
        scratch: Vec::new(),
        side_stats: ParseStats::default(),
        pending: Vec::new(),
        start_ns,
        comm_from_leader: Default::default(),
        out: LoopOutcome {
            started: Some(start),
            ..Default::default()
        },
    };
    let result = std::thread::scope(|scope| {
        scope.spawn(|| {
            let cancelled = stop.wait_until(deadline);
            disable_all();
            *stopped_at.lock().unwrap_or_else(|e| e.into_inner()) =
                Some((Instant::now(), cancelled));
            waker.wake();
        });
        let boost = DrainPriority::raise();
        let r = poll_loop(&mut lp, &cpus, &waker, start, drain, progress);
        drop(boost);
        if r.is_err() {
            stop.cancel();
        }
        r
    });
    let (stop_time, cancelled) = stopped_at
        .into_inner()
        .unwrap_or_else(|e| e.into_inner())
        .unwrap_or((Instant::now(), false));
    result?;
    let all: Vec<usize> = (0..lp.rings.len()).collect();
    lp.drain(&all);
    lp.out.actual_duration = stop_time.saturating_duration_since(start).as_secs_f64();
    lp.out.cancelled = cancelled;
    // Side-band parsing problems are capture problems too.
    lp.out.stats.malformed_records += lp.side_stats.malformed_records;
    lp.out.stats.discarded_bytes += lp.side_stats.discarded_bytes;
    Ok(lp.out)
}

fn poll_loop(
    lp: &mut Loop<'_>,
    cpus: &[u32],
    waker: &Waker,
    start: Instant,
    drain: Duration,
    progress: &mut dyn FnMut(Progress),
) -> Result<()> {
    let n = lp.rings.len();
    let all: Vec<usize> = (0..n).collect();
    // Sweep early and often at first so the first samples show up at once,
    // then settle at the drain interval.
    let mut interval = Duration::from_millis(1).min(drain);
    let mut next_sweep = start + interval;
    let mut ready = Vec::with_capacity(n);
    let mut seen = Vec::with_capacity(n + 1);
    loop {
        let timeout = ceil_ms(next_sweep.saturating_duration_since(Instant::now()));
        {
            // Borrowed only for the call: the drain below needs the rings.
            let fds: Vec<_> = lp
                .rings
                .iter()
                .map(|r| r.fd.as_fd())
                .chain(std::iter::once(waker.fd()))
                .collect();
            perf::poll(&fds, &mut seen, timeout)
                .map_err(|e| BrrError::Failed(format!("perf polling failed: {e}")))?;
        }
        if seen.get(n).is_some_and(|w| w.readable || w.failed) {
            waker.clear();
            return Ok(());
        }
        ready.clear();
        for (i, p) in seen.iter().take(n).enumerate() {
            if p.failed {
                return Err(BrrError::Failed(format!(
                    "perf polling failed on CPU {}: poll flags 0x{:x}",
                    cpus[i], p.bits
                )));
            }
            if p.readable {
                ready.push(i);
            }
        }
        let now = Instant::now();
        if now >= next_sweep {
            lp.drain(&all);
            interval = (interval * 2).min(drain);
            next_sweep = Instant::now() + interval;
            progress(Progress {
                elapsed: now.saturating_duration_since(start),
                samples: lp.attr.counters.total_samples,
            });
        } else if !ready.is_empty() {
            lp.drain(&ready);
        }
    }
}

#[cfg(test)]
#[path = "capture_tests.rs"]
mod tests;
