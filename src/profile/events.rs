//! The perf event catalogue, `--event auto`, frequency checks, attribute
//! blocks, online CPUs, and which events `brr perf-events` lists.

use super::records;
use crate::error::{BrrError, Result};
use crate::kernel::perf::{self, flag, PerfEventAttr};
use crate::kernel::Errno;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EventSpec {
    pub name: &'static str,
    pub type_: u32,
    pub config: u64,
    pub precise_ip: u8,
}

const fn hw(name: &'static str, config: u64, precise_ip: u8) -> EventSpec {
    EventSpec {
        name,
        type_: perf::PERF_TYPE_HARDWARE,
        config,
        precise_ip,
    }
}

/// Every name `--event` accepts, `auto` first, then the catalogue in its
/// canonical order (the `perf-events` listing and the "expected one of"
/// list). [`EVENTS`] takes its names from here.
pub(crate) const EVENT_NAMES: &[&str] = &[
    "auto",
    "cycles:ppp",
    "cycles:pp",
    "cycles:p",
    "cycles",
    "cpu-clock",
    "instructions",
    "cache-references",
    "cache-misses",
    "branches",
    "branch-misses",
    "bus-cycles",
    "stalled-cycles-frontend",
    "stalled-cycles-backend",
    "ref-cycles",
];

/// The catalogue, in [`EVENT_NAMES`] order.
pub(crate) const EVENTS: &[EventSpec] = &[
    hw(EVENT_NAMES[1], 0, 3),
    hw(EVENT_NAMES[2], 0, 2),
    hw(EVENT_NAMES[3], 0, 1),
    hw(EVENT_NAMES[4], 0, 0),
    EventSpec {
        name: EVENT_NAMES[5],
        type_: perf::PERF_TYPE_SOFTWARE,
        config: 0,
        precise_ip: 0,
    },
    hw(EVENT_NAMES[6], 1, 0),
    hw(EVENT_NAMES[7], 2, 0),
    hw(EVENT_NAMES[8], 3, 0),
    hw(EVENT_NAMES[9], 4, 0),
    hw(EVENT_NAMES[10], 5, 0),
    hw(EVENT_NAMES[11], 6, 0),
    hw(EVENT_NAMES[12], 7, 0),
    hw(EVENT_NAMES[13], 8, 0),
    hw(EVENT_NAMES[14], 9, 0),
];

/// What `auto` tries, in order.
pub(crate) const AUTO_CANDIDATES: &[&str] =
    &["cycles:ppp", "cycles:pp", "cycles:p", "cycles", "cpu-clock"];

pub(crate) fn lookup(name: &str) -> Option<&'static EventSpec> {
    EVENTS.iter().find(|e| e.name == name)
}

/// What `--event` asks for: `auto` (the first of [`AUTO_CANDIDATES`] that
/// opens) or one catalogue event.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Event {
    #[default]
    Auto,
    Named(&'static EventSpec),
}

impl Event {
    /// `auto` or a catalogue name; None for anything else.
    pub fn from_name(name: &str) -> Option<Event> {
        if name == "auto" {
            Some(Event::Auto)
        } else {
            lookup(name).map(Event::Named)
        }
    }

    /// The name as `--event` takes it and the reports print it.
    pub fn name(self) -> &'static str {
        match self {
            Event::Auto => "auto",
            Event::Named(e) => e.name,
        }
    }
}

impl EventSpec {
    pub(crate) fn type_name(&self) -> &'static str {
        if self.type_ == perf::PERF_TYPE_HARDWARE {
            "hardware"
        } else {
            "software"
        }
    }
}

/// The record shape a capture asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    Direct,
    /// `--kernel-samples --call-graph fp`
    Callchain,
    /// `--kernel-samples --call-graph lbr`
    Lbr,
}

/// What every sample carries: the IP to attribute and the task that pays.
/// Time, CPU and period are not requested: nothing reads them, and at the
/// maximum rate every byte per record is ring space and drain time.
pub(crate) const SAMPLE_DIRECT: u64 = records::SAMPLE_IP | records::SAMPLE_TID;

impl Shape {
    pub(crate) fn sample_type(self) -> u64 {
        match self {
            Shape::Direct => SAMPLE_DIRECT,
            Shape::Callchain => SAMPLE_DIRECT | records::SAMPLE_CALLCHAIN,
            Shape::Lbr => SAMPLE_DIRECT | records::SAMPLE_BRANCH_STACK,
        }
    }
}

/// The attribute block of a sampling event. `watermark` is the wakeup
/// watermark in bytes for a capture; `None` for a probe (`wakeup_events = 1`).
pub(crate) fn sample_attr(
    ev: &EventSpec,
    freq: u64,
    shape: Shape,
    watermark: Option<u32>,
) -> PerfEventAttr {
    let mut flags = flag::DISABLED
        | flag::EXCLUDE_USER
        | flag::EXCLUDE_HV
        | flag::FREQ
        | ((ev.precise_ip as u64 & 3) << flag::PRECISE_SHIFT);
    if shape != Shape::Direct {
        // User-space frames are never used; asking for them only makes the
        // records bigger. (The ring-size estimate still assumes them.)
        flags |= flag::EXCLUDE_CALLCHAIN_USER;
    }
    let mut attr = PerfEventAttr {
        type_: ev.type_,
        size: perf::ATTR_SIZE_VER0,
        config: ev.config,
        sample_freq: freq,
        sample_type: shape.sample_type(),
        read_format: perf::FORMAT_TOTAL_TIME_ENABLED | perf::FORMAT_TOTAL_TIME_RUNNING,
        flags,
        wakeup: 1,
        ..Default::default()
    };
    if let Some(w) = watermark {
        attr.flags |= flag::WATERMARK;
        attr.wakeup = w;
    }
    if shape == Shape::Lbr {
        attr.size = perf::ATTR_SIZE_VER2;
        attr.branch_sample_type = perf::BRANCH_USER | perf::BRANCH_KERNEL | perf::BRANCH_CALL_STACK;
    }
    attr
}

/// Whether this kernel fills `PERF_SAMPLE_CGROUP` for `attr`'s event:
/// one trial open on `cpu` (older kernels reject the unknown bit with
/// EINVAL).
pub(crate) fn cgroup_supported(attr: &PerfEventAttr, cpu: u32) -> bool {
    let mut probe = *attr;
    probe.sample_type |= records::SAMPLE_CGROUP;
    perf::open(&probe, cpu).is_ok()
}

/// A software dummy event that only reports BPF program loads/unloads,
/// JIT symbol (un)registration, tasks' new command names (exec,
/// prctl) and new processes (fork, so a child is named after its parent
/// until it execs) on its CPU, each record ending with its CLOCK_MONOTONIC time
/// (`records::Layout::SIDE_BAND`).
pub(crate) fn side_band_attr() -> PerfEventAttr {
    PerfEventAttr {
        type_: perf::PERF_TYPE_SOFTWARE,
        size: perf::ATTR_SIZE_VER3,
        config: perf::PERF_COUNT_SW_DUMMY,
        sample_type: records::Layout::SIDE_BAND.sample_type,
        flags: flag::EXCLUDE_USER
            | flag::EXCLUDE_HV
            | flag::KSYMBOL
            | flag::BPF_EVENT
            | flag::COMM
            | flag::COMM_EXEC
            | flag::TASK
            | flag::SAMPLE_ID_ALL
            | flag::USE_CLOCKID,
        clockid: perf::CLOCK_MONOTONIC,
        ..Default::default()
    }
}

/// The catalogue message for a failed perf_event_open.
pub(crate) fn open_error(name: &str, e: Errno) -> BrrError {
    match e.0 {
        libc::EPERM | libc::EACCES => BrrError::Permission(format!(
            "permission denied while opening perf event {name}; {}",
            crate::privilege::denial_hint(
                crate::privilege::Operation::PerfCpuWide,
                crate::privilege::CapSet::current()
            )
        )),
        libc::EINVAL | libc::ENODEV | libc::EOPNOTSUPP | libc::ENOENT => {
            BrrError::Unsupported(format!("perf event {name} is not supported on this host"))
        }
        _ => BrrError::Failed(format!("failed to open perf event {name}: {e}")),
    }
}

/// An integer sysctl under /proc/sys/kernel.
pub(crate) fn kernel_sysctl(name: &str) -> Option<i64> {
    std::fs::read_to_string(format!("/proc/sys/kernel/{name}"))
        .ok()?
        .trim()
        .parse()
        .ok()
}

pub(crate) fn max_sample_rate() -> Option<i64> {
    kernel_sysctl("perf_event_max_sample_rate")
}

/// `F` must not exceed a readable, positive `kernel.perf_event_max_sample_rate`.
/// Returns the limit that was read.
pub(crate) fn check_frequency(freq: u64) -> Result<Option<i64>> {
    let max = max_sample_rate();
    check_frequency_against(freq, max)?;
    Ok(max)
}

pub(crate) fn check_frequency_against(freq: u64, max: Option<i64>) -> Result<()> {
    match max {
        Some(m) if m > 0 && freq > m as u64 => Err(BrrError::Unsupported(above_sample_rate(
            &freq.to_string(),
            m,
        ))),
        _ => Ok(()),
    }
}

/// The refusal of a frequency above the sysctl's limit; `freq` is text so
/// that a number too large for any integer type is named as it was typed.
pub(crate) fn above_sample_rate(freq: &str, max: i64) -> String {
    format!(
        "requested perf sample frequency {freq} Hz exceeds current kernel.perf_event_max_sample_rate {max} Hz; lower -F/--frequency or raise /proc/sys/kernel/perf_event_max_sample_rate"
    )
}

/// Parse a sysfs CPU list such as `0-3,5,7-8`.
pub(crate) fn parse_cpu_list(s: &str) -> Option<Vec<u32>> {
    let mut out = Vec::new();
    for item in s.trim().split(',').map(str::trim).filter(|i| !i.is_empty()) {
        match item.split_once('-') {
            Some((a, b)) => {
                let (a, b): (u32, u32) = (a.trim().parse().ok()?, b.trim().parse().ok()?);
                if b < a || b - a > 1 << 16 {
                    return None;
                }
                out.extend(a..=b);
            }
            None => out.push(item.parse().ok()?),
        }
    }
    Some(out)
}

/// Online CPUs, else the process affinity set.
pub(crate) fn online_cpus() -> Vec<u32> {
    std::fs::read_to_string("/sys/devices/system/cpu/online")
        .ok()
        .and_then(|s| parse_cpu_list(&s))
        .unwrap_or_else(perf::allowed_cpus)
}

/// The CPU probes run on: the first online CPU, else 0.
pub(crate) fn probe_cpu() -> u32 {
    online_cpus().first().copied().unwrap_or(0)
}

/// Open and immediately close the event on `cpu`.
pub(crate) fn probe(
    ev: &EventSpec,
    freq: u64,
    shape: Shape,
    cpu: u32,
) -> std::result::Result<(), Errno> {
    perf::open(&sample_attr(ev, freq, shape, None), cpu).map(drop)
}

/// Resolve `--event` to an event that opens with the attributes the
/// capture will use, so failures surface here.
pub(crate) fn select(
    requested: Event,
    freq: u64,
    shape: Shape,
    cpu: u32,
) -> Result<&'static EventSpec> {
    if let Event::Named(ev) = requested {
        return probe(ev, freq, shape, cpu)
            .map(|_| ev)
            .map_err(|e| open_error(ev.name, e));
    }
    let unable = || BrrError::Unsupported("unable to select a supported perf event".into());
    for ev in AUTO_CANDIDATES.iter().filter_map(|n| lookup(n)) {
        if probe(ev, freq, shape, cpu).is_ok() {
            return Ok(ev);
        }
    }
    // Report cpu-clock's real error; if it opens now after all, give up
    // rather than guess.
    let clock = lookup("cpu-clock").ok_or_else(unable)?;
    match probe(clock, freq, shape, cpu) {
        Err(e) => Err(open_error(clock.name, e)),
        Ok(()) => Err(unable()),
    }
}

/// One row of `brr perf-events`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Listed {
    pub event: EventSpec,
    pub selected_by_auto: bool,
}

/// Given each catalogue event's probe result, the openable events and who
/// `auto` would pick. With nothing openable, a permission failure is an
/// error instead of an empty list.
pub(crate) fn listing_from_probes(
    results: &[(EventSpec, std::result::Result<(), Errno>)],
) -> Result<Vec<Listed>> {
    let auto = AUTO_CANDIDATES
        .iter()
        .find(|n| results.iter().any(|(e, r)| e.name == **n && r.is_ok()));
    let out: Vec<Listed> = results
        .iter()
        .filter(|(_, r)| r.is_ok())
        .map(|(e, _)| Listed {
            event: *e,
            selected_by_auto: auto == Some(&e.name),
        })
        .collect();
    if out.is_empty() {
        // Name the event `auto` reports when nothing opens (cpu-clock, the
        // one every host has), not the first refused: a host without a PMU
        // could not open cycles:ppp even with the privilege.
        let denied = |(e, r): &(EventSpec, std::result::Result<(), Errno>)| match r {
            Err(errno @ Errno(libc::EPERM | libc::EACCES)) => Some((e.name, *errno)),
            _ => None,
        };
        let refused = AUTO_CANDIDATES
            .iter()
            .rev()
            .find_map(|n| {
                results
                    .iter()
                    .filter(|(e, _)| e.name == *n)
                    .find_map(denied)
            })
            .or_else(|| results.iter().find_map(denied));
        if let Some((name, errno)) = refused {
            return Err(open_error(name, errno));
        }
    }
    Ok(out)
}

/// The openable catalogue events for `brr perf-events`, probed on one CPU.
pub(crate) fn listing(freq: u64) -> Result<Vec<Listed>> {
    check_frequency(freq)?;
    let cpu = probe_cpu();
    let results: Vec<_> = EVENTS
        .iter()
        .map(|e| (*e, probe(e, freq, Shape::Direct, cpu)))
        .collect();
    listing_from_probes(&results)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    #[test]
    fn catalogue_names() {
        let names: Vec<&str> = EVENTS.iter().map(|e| e.name).collect();
        assert_eq!(&EVENT_NAMES[1..], names.as_slice());
        assert_eq!(
            lookup("cycles:ppp").map(|e| (e.config, e.precise_ip)),
            Some((0, 3))
        );
        assert_eq!(lookup("ref-cycles").map(|e| e.config), Some(9));
        assert_eq!(lookup("cpu-clock").map(|e| e.type_name()), Some("software"));
        assert!(AUTO_CANDIDATES.iter().all(|n| lookup(n).is_some()));
    }

    #[test]
    fn event_names_round_trip() {
        for name in EVENT_NAMES {
            assert_eq!(Event::from_name(name).map(Event::name), Some(*name));
        }
        assert_eq!(Event::from_name("auto"), Some(Event::Auto));
        assert_eq!(Event::default(), Event::Auto);
        for bad in ["", "Auto", "cycles:q", " cycles"] {
            assert_eq!(Event::from_name(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn attribute_blocks() {
        let clock = lookup("cpu-clock").unwrap();
        let a = sample_attr(clock, 997, Shape::Direct, None);
        assert_eq!((a.type_, a.config, a.size), (1, 0, 64));
        // IP | TID only (the original also asked for TIME | CPU | PERIOD).
        assert_eq!(a.sample_type, 0x3);
        assert_eq!(a.read_format, 3);
        assert_eq!(a.flags, 1 | 1 << 4 | 1 << 6 | 1 << 10);
        assert_eq!(a.wakeup, 1);
        let ppp = lookup("cycles:ppp").unwrap();
        let a = sample_attr(ppp, 99, Shape::Callchain, Some(8192));
        assert_eq!(a.sample_type, 0x23);
        assert_eq!(
            a.flags,
            1 | 1 << 4 | 1 << 6 | 1 << 10 | 1 << 14 | 3 << 15 | 1 << 22
        );
        assert_eq!(a.wakeup, 8192);
        let a = sample_attr(clock, 99, Shape::Lbr, Some(4096));
        assert_eq!(
            (a.sample_type, a.size, a.branch_sample_type),
            (0x803, 80, 0x803)
        );
    }

    #[test]
    fn cpu_lists() {
        assert_eq!(
            parse_cpu_list("0-3,5,7-8\n"),
            Some(vec![0, 1, 2, 3, 5, 7, 8])
        );
        assert_eq!(parse_cpu_list("0"), Some(vec![0]));
        assert_eq!(parse_cpu_list(""), Some(vec![]));
        assert_eq!(parse_cpu_list("x"), None);
        assert_eq!(parse_cpu_list("3-1"), None);
    }

    #[test]
    fn frequency_limit() {
        assert!(check_frequency_against(100_000, Some(100_000)).is_ok());
        assert!(check_frequency_against(5, None).is_ok());
        assert!(check_frequency_against(5, Some(0)).is_ok());
        let e = check_frequency_against(100_001, Some(100_000)).unwrap_err();
        assert_eq!(e.exit_code(), 3);
        assert_eq!(
            e.render(),
            "brr: requested perf sample frequency 100001 Hz exceeds current kernel.perf_event_max_sample_rate 100000 Hz; lower -F/--frequency or raise /proc/sys/kernel/perf_event_max_sample_rate"
        );
    }

    #[test]
    fn open_errors() {
        assert_eq!(open_error("cycles", Errno(libc::EACCES)).exit_code(), 2);
        assert_eq!(
            open_error("cycles", Errno(libc::ENOENT)).render(),
            "brr: perf event cycles is not supported on this host"
        );
        let e = open_error("cpu-clock", Errno(libc::EMFILE));
        assert_eq!(e.exit_code(), 1);
        assert_eq!(
            e.render(),
            "brr: failed to open perf event cpu-clock: Too many open files"
        );
    }

    pub(crate) fn results(
        ok: &[&str],
        err: Errno,
    ) -> Vec<(EventSpec, std::result::Result<(), Errno>)> {
        EVENTS
            .iter()
            .map(|e| {
                (
                    *e,
                    if ok.contains(&e.name) {
                        Ok(())
                    } else {
                        Err(err)
                    },
                )
            })
            .collect()
    }

    #[test]
    fn listing_and_auto() {
        let l = listing_from_probes(&results(&["cpu-clock"], Errno(libc::ENOENT))).unwrap();
        assert_eq!(l.len(), 1);
        assert!(l[0].selected_by_auto);
        let l = listing_from_probes(&results(
            &["cycles", "cpu-clock", "instructions"],
            Errno(libc::ENOENT),
        ))
        .unwrap();
        let auto: Vec<&str> = l
            .iter()
            .filter(|x| x.selected_by_auto)
            .map(|x| x.event.name)
            .collect();
        assert_eq!(auto, vec!["cycles"]);
        // Nothing openable: empty listing, unless privilege was the reason.
        let l = listing_from_probes(&results(&[], Errno(libc::ENOENT))).unwrap();
        assert!(l.is_empty());
        let e = listing_from_probes(&results(&[], Errno(libc::EACCES))).unwrap_err();
        assert_eq!(e.exit_code(), 2);
        assert!(e.render().starts_with(
            "brr: permission denied while opening perf event cpu-clock; needs CAP_PERFMON"
        ));
    }
}
