//! Pure parser: perf ring bytes -> records.
//!
//! Every byte handed in is accounted for: either it belongs to a record that
//! parsed, or it is counted in `discarded_bytes` together with a
//! `malformed_records` increment. No input can make it panic or loop: each
//! step advances by a header's `size`, which is checked to be at least 8 and
//! at most the bytes left. The ABI numbers come from the kernel's UAPI
//! headers (perf-event-open-sys), under the names the parser uses.

use crate::kernel::perf::abi;

/// `perf_event_header.type` values brr understands.
pub(crate) const RECORD_LOST: u32 = abi::PERF_RECORD_LOST;
pub(crate) const RECORD_THROTTLE: u32 = abi::PERF_RECORD_THROTTLE;
pub(crate) const RECORD_UNTHROTTLE: u32 = abi::PERF_RECORD_UNTHROTTLE;
pub(crate) const RECORD_SAMPLE: u32 = abi::PERF_RECORD_SAMPLE;
pub(crate) const RECORD_LOST_SAMPLES: u32 = abi::PERF_RECORD_LOST_SAMPLES;
pub(crate) const RECORD_KSYMBOL: u32 = abi::PERF_RECORD_KSYMBOL;
pub(crate) const RECORD_BPF_EVENT: u32 = abi::PERF_RECORD_BPF_EVENT;
pub(crate) const RECORD_COMM: u32 = abi::PERF_RECORD_COMM;
pub(crate) const RECORD_FORK: u32 = abi::PERF_RECORD_FORK;
pub(crate) const RECORD_EXIT: u32 = abi::PERF_RECORD_EXIT;
/// `perf_event_header.misc` bit of a COMM record: the name came with an
/// exec.
pub(crate) const MISC_COMM_EXEC: u16 = abi::PERF_RECORD_MISC_COMM_EXEC as u16;

/// `sample_type` bits whose fields the parser knows how to skip or read.
pub const SAMPLE_IP: u64 = abi::PERF_SAMPLE_IP as u64;
pub const SAMPLE_TID: u64 = abi::PERF_SAMPLE_TID as u64;
pub const SAMPLE_TIME: u64 = abi::PERF_SAMPLE_TIME as u64;
pub const SAMPLE_CALLCHAIN: u64 = abi::PERF_SAMPLE_CALLCHAIN as u64;
pub const SAMPLE_CPU: u64 = abi::PERF_SAMPLE_CPU as u64;
pub const SAMPLE_PERIOD: u64 = abi::PERF_SAMPLE_PERIOD as u64;
pub const SAMPLE_BRANCH_STACK: u64 = abi::PERF_SAMPLE_BRANCH_STACK as u64;
/// The task's cgroup2 ID (Linux 5.7+); laid out after the branch stack.
pub const SAMPLE_CGROUP: u64 = abi::PERF_SAMPLE_CGROUP as u64;

/// `PERF_RECORD_KSYMBOL` symbol type for BPF JIT images.
pub(crate) const KSYMBOL_TYPE_BPF: u16 = abi::PERF_RECORD_KSYMBOL_TYPE_BPF as u16;
/// `PERF_RECORD_KSYMBOL` flag: the symbol goes away.
pub(crate) const KSYMBOL_FLAG_UNREGISTER: u16 = abi::PERF_RECORD_KSYMBOL_FLAGS_UNREGISTER as u16;
/// `PERF_RECORD_BPF_EVENT` types.
pub(crate) const BPF_EVENT_PROG_LOAD: u16 = abi::PERF_BPF_EVENT_PROG_LOAD as u16;
pub(crate) const BPF_EVENT_PROG_UNLOAD: u16 = abi::PERF_BPF_EVENT_PROG_UNLOAD as u16;

/// Callchain entries at or above this are `PERF_CONTEXT_*` markers.
#[allow(clippy::unnecessary_cast)] // c_ulong is u64 only on 64-bit targets
pub(crate) const CONTEXT_MARKER_MIN: u64 = abi::PERF_CONTEXT_MAX as u64;

// The parser's layouts assume these values; a binding that disagrees is a
// build error, not a misread ring.
const _: () = assert!(SAMPLE_IP == 1 && SAMPLE_CGROUP == 1 << 21);
const _: () = assert!(CONTEXT_MARKER_MIN == u64::MAX - 4094);

const HEADER: usize = 8;

/// What the records of one ring hold beyond their own fields.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Layout {
    /// The event's `sample_type`: the fields of its SAMPLE records.
    pub sample_type: u64,
    /// `sample_id_all` with a `sample_type` of TIME alone: every other
    /// record ends with the time the kernel wrote it.
    pub time_trailer: bool,
}

impl Layout {
    /// A sampling event's ring.
    pub const fn samples(sample_type: u64) -> Layout {
        Layout {
            sample_type,
            time_trailer: false,
        }
    }

    /// The side band's ring (see `events::side_band_attr`).
    pub const SIDE_BAND: Layout = Layout {
        sample_type: SAMPLE_TIME,
        time_trailer: true,
    };
}

impl From<u64> for Layout {
    fn from(sample_type: u64) -> Layout {
        Layout::samples(sample_type)
    }
}

/// Counters for everything the parser saw.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ParseStats {
    /// Well-formed SAMPLE records.
    pub samples: u64,
    pub lost_samples: u64,
    pub throttle_events: u64,
    pub unthrottle_events: u64,
    /// Records of a type brr does not use (not a capture problem).
    pub unknown_records: u64,
    /// Well-formed KSYMBOL / BPF_EVENT / COMM side-band records.
    pub side_band_records: u64,
    pub malformed_records: u64,
    pub discarded_bytes: u64,
    /// Bytes of records that parsed (any type, including unknown).
    pub parsed_bytes: u64,
}

/// A packed array of native-endian u64 values inside a record.
#[derive(Debug, Clone, Copy, Default)]
pub struct U64s<'a>(&'a [u8]);

impl<'a> U64s<'a> {
    pub fn is_empty(&self) -> bool {
        self.0.len() < 8
    }
    pub fn iter(&self) -> impl Iterator<Item = u64> + 'a {
        self.0.chunks_exact(8).map(u64_at0)
    }
    /// Return addresses without `PERF_CONTEXT_*` markers and zeros, leaf first.
    pub fn addresses(&self) -> impl Iterator<Item = u64> + 'a {
        self.iter().filter(|&a| a != 0 && a < CONTEXT_MARKER_MIN)
    }
}

/// A packed array of `{from, to, flags}` branch entries.
#[derive(Debug, Clone, Copy, Default)]
pub struct Branches<'a>(&'a [u8]);

impl<'a> Branches<'a> {
    pub fn is_empty(&self) -> bool {
        self.0.len() < 24
    }
    /// `(from, to)` of each entry, skipping entries where both are zero.
    pub fn pairs(&self) -> impl Iterator<Item = (u64, u64)> + 'a {
        self.0
            .chunks_exact(24)
            .map(|e| (u64_at0(&e[0..8]), u64_at0(&e[8..16])))
            .filter(|&(f, t)| f != 0 || t != 0)
    }
}

/// One PERF_RECORD_SAMPLE; fields not requested are zero/empty.
#[derive(Debug, Clone, Copy, Default)]
pub struct Sample<'a> {
    pub ip: u64,
    pub pid: u32,
    pub tid: u32,
    pub time: u64,
    pub cpu: u32,
    pub period: u64,
    pub callchain: U64s<'a>,
    pub branches: Branches<'a>,
    /// cgroup2 ID of the interrupted task (0 when not requested).
    pub cgroup: u64,
}

/// Records that carry data for the consumer. Counters-only records (lost,
/// throttle, unknown) are tallied in [`ParseStats`].
#[derive(Debug, Clone, Copy)]
#[allow(dead_code)] // the full record layout; the capture needs only some fields
pub enum Record<'a> {
    Sample(Sample<'a>),
    /// A kernel symbol (e.g. a BPF JIT image) was registered or removed.
    Ksymbol {
        addr: u64,
        len: u32,
        ksym_type: u16,
        flags: u16,
        name: &'a [u8],
    },
    /// A BPF program was loaded or unloaded.
    BpfEvent {
        kind: u16,
        flags: u16,
        id: u32,
        tag: [u8; 8],
        /// When, with a time trailer (the clock the event asked for).
        time: Option<u64>,
    },
    /// A task took a new command name (by exec when `exec`, else by
    /// prctl or a thread rename).
    Comm {
        pid: u32,
        tid: u32,
        exec: bool,
        comm: &'a [u8],
        time: Option<u64>,
    },
    /// A task was created (`exit` false) or ended: process `pid`'s thread
    /// `tid`, made by thread `ptid` of process `ppid`. A new process
    /// (`pid != ppid`) runs under its parent's name until a COMM record
    /// names it.
    Task {
        exit: bool,
        pid: u32,
        ppid: u32,
        tid: u32,
        ptid: u32,
        time: Option<u64>,
    },
}

fn u64_at0(b: &[u8]) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[..8]);
    u64::from_ne_bytes(a)
}

/// A bounds-checked reader over one record's payload.
struct Cursor<'a> {
    b: &'a [u8],
    pos: usize,
}

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let end = self.pos.checked_add(n)?;
        let s = self.b.get(self.pos..end)?;
        self.pos = end;
        Some(s)
    }
    fn u64(&mut self) -> Option<u64> {
        self.take(8).map(u64_at0)
    }
    fn u32(&mut self) -> Option<u32> {
        self.take(4)
            .map(|s| u32::from_ne_bytes([s[0], s[1], s[2], s[3]]))
    }
    fn u16(&mut self) -> Option<u16> {
        self.take(2).map(|s| u16::from_ne_bytes([s[0], s[1]]))
    }
    /// `nr` entries of `width` bytes, `nr` read as a u64 count.
    fn array(&mut self, width: usize) -> Option<&'a [u8]> {
        let nr = usize::try_from(self.u64()?).ok()?;
        self.take(nr.checked_mul(width)?)
    }
}

#[inline]
fn parse_sample(payload: &[u8], sample_type: u64) -> Option<Sample<'_>> {
    let mut c = Cursor { b: payload, pos: 0 };
    let mut s = Sample::default();
    if sample_type & SAMPLE_IP != 0 {
        s.ip = c.u64()?;
    }
    if sample_type & SAMPLE_TID != 0 {
        s.pid = c.u32()?;
        s.tid = c.u32()?;
    }
    if sample_type & SAMPLE_TIME != 0 {
        s.time = c.u64()?;
    }
    if sample_type & SAMPLE_CPU != 0 {
        s.cpu = c.u32()?;
        c.u32()?;
    }
    if sample_type & SAMPLE_PERIOD != 0 {
        s.period = c.u64()?;
    }
    if sample_type & SAMPLE_CALLCHAIN != 0 {
        s.callchain = U64s(c.array(8)?);
    }
    if sample_type & SAMPLE_BRANCH_STACK != 0 {
        s.branches = Branches(c.array(24)?);
    }
    if sample_type & SAMPLE_CGROUP != 0 {
        s.cgroup = c.u64()?;
    }
    Some(s)
}

/// A side-band record's fields without its time trailer, and the time.
fn split_trailer(payload: &[u8], layout: Layout) -> Option<(&[u8], Option<u64>)> {
    if !layout.time_trailer {
        return Some((payload, None));
    }
    let at = payload.len().checked_sub(8)?;
    Some((&payload[..at], Some(u64_at0(&payload[at..]))))
}

/// The bytes before the first NUL (all of them without one).
fn c_string(b: &[u8]) -> &[u8] {
    let end = b.iter().position(|&c| c == 0).unwrap_or(b.len());
    &b[..end]
}

/// Parse one complete record (`bytes.len()` equals the header's size, ≥ 8).
/// Returns the data-carrying record, if any, and updates `stats`.
#[inline]
pub(crate) fn parse_record<'a>(
    bytes: &'a [u8],
    layout: Layout,
    stats: &mut ParseStats,
) -> Option<Record<'a>> {
    if bytes.len() < HEADER {
        stats.malformed_records += 1;
        stats.discarded_bytes += bytes.len() as u64;
        return None;
    }
    let kind = u32::from_ne_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
    let misc = u16::from_ne_bytes([bytes[4], bytes[5]]);
    let payload = &bytes[HEADER..];
    let parsed: Option<Option<Record<'a>>> = match kind {
        RECORD_SAMPLE => parse_sample(payload, layout.sample_type).map(|s| {
            stats.samples += 1;
            Some(Record::Sample(s))
        }),
        RECORD_LOST => {
            let mut c = Cursor { b: payload, pos: 0 };
            c.u64().and_then(|_id| c.u64()).map(|n| {
                stats.lost_samples = stats.lost_samples.saturating_add(n);
                None
            })
        }
        RECORD_LOST_SAMPLES => Cursor { b: payload, pos: 0 }.u64().map(|n| {
            stats.lost_samples = stats.lost_samples.saturating_add(n);
            None
        }),
        RECORD_THROTTLE => {
            stats.throttle_events += 1;
            Some(None)
        }
        RECORD_UNTHROTTLE => {
            stats.unthrottle_events += 1;
            Some(None)
        }
        RECORD_KSYMBOL | RECORD_BPF_EVENT | RECORD_COMM | RECORD_FORK | RECORD_EXIT => {
            parse_side_band(kind, misc, payload, layout).map(|r| {
                stats.side_band_records += 1;
                Some(r)
            })
        }
        _ => {
            stats.unknown_records += 1;
            Some(None)
        }
    };
    match parsed {
        Some(rec) => {
            stats.parsed_bytes += bytes.len() as u64;
            rec
        }
        None => {
            stats.malformed_records += 1;
            stats.discarded_bytes += bytes.len() as u64;
            None
        }
    }
}

/// A KSYMBOL, BPF_EVENT, COMM, FORK or EXIT record's fields; None when
/// it is short.
fn parse_side_band(kind: u32, misc: u16, payload: &[u8], layout: Layout) -> Option<Record<'_>> {
    let (body, time) = split_trailer(payload, layout)?;
    let mut c = Cursor { b: body, pos: 0 };
    match kind {
        RECORD_KSYMBOL => {
            let addr = c.u64()?;
            let len = c.u32()?;
            let ksym_type = c.u16()?;
            let flags = c.u16()?;
            Some(Record::Ksymbol {
                addr,
                len,
                ksym_type,
                flags,
                name: c_string(&body[c.pos..]),
            })
        }
        RECORD_BPF_EVENT => {
            let kind = c.u16()?;
            let flags = c.u16()?;
            let id = c.u32()?;
            let mut tag = [0u8; 8];
            tag.copy_from_slice(c.take(8)?);
            Some(Record::BpfEvent {
                kind,
                flags,
                id,
                tag,
                time,
            })
        }
        RECORD_FORK | RECORD_EXIT => {
            let pid = c.u32()?;
            let ppid = c.u32()?;
            let tid = c.u32()?;
            let ptid = c.u32()?;
            // The record's own time field; the trailer's is the same.
            let own = c.u64()?;
            Some(Record::Task {
                exit: kind == RECORD_EXIT,
                pid,
                ppid,
                tid,
                ptid,
                time: time.or(Some(own)),
            })
        }
        _ => {
            let pid = c.u32()?;
            let tid = c.u32()?;
            Some(Record::Comm {
                pid,
                tid,
                exec: misc & MISC_COMM_EXEC != 0,
                comm: c_string(&body[c.pos..]),
                time,
            })
        }
    }
}

/// The bytes `[pos, pos + n)` of the concatenation `first ++ second`,
/// borrowed when they lie in one piece, else copied into `scratch`.
fn span<'a>(
    first: &'a [u8],
    second: &'a [u8],
    pos: usize,
    n: usize,
    scratch: &'a mut Vec<u8>,
) -> &'a [u8] {
    let f = first.len();
    if pos + n <= f {
        &first[pos..pos + n]
    } else if pos >= f {
        &second[pos - f..pos - f + n]
    } else {
        scratch.clear();
        scratch.extend_from_slice(&first[pos..]);
        scratch.extend_from_slice(&second[..n - (f - pos)]);
        scratch
    }
}

/// Walk the records in `first ++ second` (the unread part of a ring, split
/// where it wraps), calling `sink` for each data-carrying record. A header
/// with `size < 8`, a size reaching past the end, or a trailing fragment
/// shorter than a header ends the walk: one malformed record, the rest
/// discarded.
pub fn walk(
    first: &[u8],
    second: &[u8],
    layout: impl Into<Layout>,
    scratch: &mut Vec<u8>,
    stats: &mut ParseStats,
    mut sink: impl FnMut(Record<'_>),
) {
    let layout = layout.into();
    let total = first.len() + second.len();
    let mut pos = 0usize;
    while pos < total {
        let remaining = total - pos;
        if remaining < HEADER {
            stats.malformed_records += 1;
            stats.discarded_bytes += remaining as u64;
            return;
        }
        let h = span(first, second, pos, HEADER, scratch);
        let size = u16::from_ne_bytes([h[6], h[7]]) as usize;
        if size < HEADER || size > remaining {
            stats.malformed_records += 1;
            stats.discarded_bytes += remaining as u64;
            return;
        }
        let bytes = span(first, second, pos, size, scratch);
        if let Some(rec) = parse_record(bytes, layout, stats) {
            sink(rec);
        }
        pos += size;
    }
}

/// [`walk`] over one contiguous byte stream.
#[cfg(test)]
pub(crate) fn walk_bytes(
    bytes: &[u8],
    layout: impl Into<Layout>,
    stats: &mut ParseStats,
    sink: impl FnMut(Record<'_>),
) {
    let mut scratch = Vec::new();
    walk(bytes, &[], layout, &mut scratch, stats, sink);
}

/// Builders for well-formed records, for tests and benchmarks.
#[cfg(test)]
pub(crate) mod build {
    use super::*;

    pub(crate) fn header(kind: u32, size: usize) -> Vec<u8> {
        let mut v = Vec::with_capacity(size);
        v.extend_from_slice(&kind.to_ne_bytes());
        v.extend_from_slice(&0u16.to_ne_bytes());
        v.extend_from_slice(&(size as u16).to_ne_bytes());
        v
    }

    pub(crate) fn record(kind: u32, payload: &[u8]) -> Vec<u8> {
        let mut v = header(kind, HEADER + payload.len());
        v.extend_from_slice(payload);
        v
    }

    pub(crate) fn u64s(vals: &[u64]) -> Vec<u8> {
        vals.iter().flat_map(|v| v.to_ne_bytes()).collect()
    }

    /// A sample with IP|TID|TIME|CPU|PERIOD and optionally a callchain.
    /// The fields [`sample`] writes besides a callchain: what brr requests
    /// plus time, CPU and period (which it must be able to skip).
    pub(crate) const SAMPLE_FIELDS: u64 =
        SAMPLE_IP | SAMPLE_TID | SAMPLE_TIME | SAMPLE_CPU | SAMPLE_PERIOD;

    pub(crate) fn sample(ip: u64, cpu: u32, chain: Option<&[u64]>) -> Vec<u8> {
        let mut p = Vec::new();
        p.extend_from_slice(&ip.to_ne_bytes());
        p.extend_from_slice(&7u32.to_ne_bytes());
        p.extend_from_slice(&8u32.to_ne_bytes());
        p.extend_from_slice(&123u64.to_ne_bytes());
        p.extend_from_slice(&cpu.to_ne_bytes());
        p.extend_from_slice(&0u32.to_ne_bytes());
        p.extend_from_slice(&1000u64.to_ne_bytes());
        if let Some(c) = chain {
            p.extend_from_slice(&(c.len() as u64).to_ne_bytes());
            p.extend_from_slice(&u64s(c));
        }
        record(RECORD_SAMPLE, &p)
    }

    /// The time side-band records built here end with (as
    /// [`Layout::SIDE_BAND`] has them), unless one is given.
    pub(crate) const TIME: u64 = 5_000_000_000;

    /// A NUL-terminated string padded to 8 bytes, as the kernel writes
    /// names.
    fn name_bytes(p: &mut Vec<u8>, name: &[u8]) {
        p.extend_from_slice(name);
        p.push(0);
        while !(p.len() + HEADER).is_multiple_of(8) {
            p.push(0);
        }
    }

    pub(crate) fn ksymbol(addr: u64, len: u32, flags: u16, name: &str) -> Vec<u8> {
        let mut p = Vec::new();
        p.extend_from_slice(&addr.to_ne_bytes());
        p.extend_from_slice(&len.to_ne_bytes());
        p.extend_from_slice(&KSYMBOL_TYPE_BPF.to_ne_bytes());
        p.extend_from_slice(&flags.to_ne_bytes());
        name_bytes(&mut p, name.as_bytes());
        p.extend_from_slice(&TIME.to_ne_bytes());
        record(RECORD_KSYMBOL, &p)
    }

    pub(crate) fn bpf_event(kind: u16, id: u32) -> Vec<u8> {
        bpf_event_at(kind, id, TIME)
    }

    pub(crate) fn bpf_event_at(kind: u16, id: u32, time: u64) -> Vec<u8> {
        let mut p = Vec::new();
        p.extend_from_slice(&kind.to_ne_bytes());
        p.extend_from_slice(&0u16.to_ne_bytes());
        p.extend_from_slice(&id.to_ne_bytes());
        p.extend_from_slice(&[0xab; 8]);
        p.extend_from_slice(&time.to_ne_bytes());
        record(RECORD_BPF_EVENT, &p)
    }

    pub(crate) fn comm(pid: u32, tid: u32, exec: bool, name: &str, time: u64) -> Vec<u8> {
        let mut p = Vec::new();
        p.extend_from_slice(&pid.to_ne_bytes());
        p.extend_from_slice(&tid.to_ne_bytes());
        name_bytes(&mut p, name.as_bytes());
        p.extend_from_slice(&time.to_ne_bytes());
        let mut r = record(RECORD_COMM, &p);
        if exec {
            r[4..6].copy_from_slice(&MISC_COMM_EXEC.to_ne_bytes());
        }
        r
    }

    /// A FORK (or EXIT) record: `pid`/`tid` made by `ppid`/`ptid`.
    pub(crate) fn task(exit: bool, pid: u32, ppid: u32, tid: u32, ptid: u32, time: u64) -> Vec<u8> {
        let mut p = Vec::new();
        for v in [pid, ppid, tid, ptid] {
            p.extend_from_slice(&v.to_ne_bytes());
        }
        p.extend_from_slice(&time.to_ne_bytes());
        p.extend_from_slice(&time.to_ne_bytes());
        record(if exit { RECORD_EXIT } else { RECORD_FORK }, &p)
    }
}

#[cfg(test)]
mod tests {
    use super::build::*;
    use super::*;

    const DIRECT: u64 = SAMPLE_IP | SAMPLE_TID | SAMPLE_TIME | SAMPLE_CPU | SAMPLE_PERIOD;
    const FP: u64 = DIRECT | SAMPLE_CALLCHAIN;
    const LBR: u64 = DIRECT | SAMPLE_BRANCH_STACK;

    #[derive(Debug, PartialEq)]
    enum Seen {
        Sample(u64, u32, Vec<u64>, Vec<(u64, u64)>),
        Ksym(u64, u32, u16, String),
        Bpf(u16, u32),
        Comm(u32, u32, bool, String, Option<u64>),
        Task(bool, u32, u32, u32, u32, Option<u64>),
    }

    fn collect(first: &[u8], second: &[u8], st: impl Into<Layout>) -> (Vec<Seen>, ParseStats) {
        let mut stats = ParseStats::default();
        let mut out = Vec::new();
        let mut scratch = Vec::new();
        walk(first, second, st, &mut scratch, &mut stats, |r| {
            out.push(match r {
                Record::Sample(s) => Seen::Sample(
                    s.ip,
                    s.cpu,
                    s.callchain.addresses().collect(),
                    s.branches.pairs().collect(),
                ),
                Record::Ksymbol {
                    addr,
                    len,
                    flags,
                    name,
                    ..
                } => Seen::Ksym(addr, len, flags, String::from_utf8_lossy(name).into()),
                Record::BpfEvent { kind, id, .. } => Seen::Bpf(kind, id),
                Record::Comm {
                    pid,
                    tid,
                    exec,
                    comm,
                    time,
                } => Seen::Comm(pid, tid, exec, String::from_utf8_lossy(comm).into(), time),
                Record::Task {
                    exit,
                    pid,
                    ppid,
                    tid,
                    ptid,
                    time,
                } => Seen::Task(exit, pid, ppid, tid, ptid, time),
            })
        });
        assert_eq!(
            stats.parsed_bytes + stats.discarded_bytes,
            (first.len() + second.len()) as u64,
            "every byte accounted for"
        );
        (out, stats)
    }

    #[test]
    fn every_record_type() {
        let mut s = Vec::new();
        s.extend(sample(0xffff_ffff_a000_0010, 1, None));
        s.extend(record(RECORD_LOST, &u64s(&[99, 5])));
        s.extend(record(RECORD_LOST_SAMPLES, &u64s(&[3])));
        s.extend(record(RECORD_THROTTLE, &u64s(&[1, 2, 3])));
        s.extend(record(RECORD_UNTHROTTLE, &u64s(&[1, 2, 3])));
        s.extend(record(42, &u64s(&[0])));
        s.extend(ksymbol(
            0xffff_ffff_c000_0000,
            0x80,
            0,
            "bpf_prog_0123456789abcdef_x",
        ));
        s.extend(bpf_event(BPF_EVENT_PROG_LOAD, 77));
        let (seen, st) = collect(&s, &[], DIRECT);
        assert_eq!(
            seen,
            vec![
                Seen::Sample(0xffff_ffff_a000_0010, 1, vec![], vec![]),
                Seen::Ksym(
                    0xffff_ffff_c000_0000,
                    0x80,
                    0,
                    "bpf_prog_0123456789abcdef_x".into()
                ),
                Seen::Bpf(BPF_EVENT_PROG_LOAD, 77),
            ]
        );
        assert_eq!(st.samples, 1);
        assert_eq!(st.lost_samples, 8);
        assert_eq!((st.throttle_events, st.unthrottle_events), (1, 1));
        assert_eq!(st.unknown_records, 1);
        assert_eq!(st.side_band_records, 2);
        assert_eq!((st.malformed_records, st.discarded_bytes), (0, 0));
    }

    /// The side band's records end with their time; COMM records carry
    /// the task and its new name, and whether an exec gave it.
    #[test]
    fn side_band_records_with_their_time() {
        let mut s = Vec::new();
        s.extend(comm(40, 40, true, "short-lived", 7_000));
        s.extend(comm(40, 41, false, "worker thread!", 8_000));
        s.extend(comm(42, 42, false, "", 9_000));
        s.extend(bpf_event_at(BPF_EVENT_PROG_UNLOAD, 77, 10_000));
        s.extend(ksymbol(0xffff_ffff_c000_0000, 0x80, 0, "bpf_prog_x"));
        s.extend(record(RECORD_LOST, &u64s(&[1, 2, 11_000])));
        s.extend(task(false, 43, 40, 43, 40, 12_000));
        s.extend(task(true, 43, 40, 43, 40, 13_000));
        let (seen, st) = collect(&s, &[], Layout::SIDE_BAND);
        assert_eq!(
            seen,
            vec![
                Seen::Comm(40, 40, true, "short-lived".into(), Some(7_000)),
                Seen::Comm(40, 41, false, "worker thread!".into(), Some(8_000)),
                Seen::Comm(42, 42, false, "".into(), Some(9_000)),
                Seen::Bpf(BPF_EVENT_PROG_UNLOAD, 77),
                Seen::Ksym(0xffff_ffff_c000_0000, 0x80, 0, "bpf_prog_x".into()),
                Seen::Task(false, 43, 40, 43, 40, Some(12_000)),
                Seen::Task(true, 43, 40, 43, 40, Some(13_000)),
            ]
        );
        assert_eq!((st.side_band_records, st.lost_samples), (7, 2));
        assert_eq!((st.malformed_records, st.discarded_bytes), (0, 0));
        let mut times = Vec::new();
        walk_bytes(&s, Layout::SIDE_BAND, &mut ParseStats::default(), |r| {
            if let Record::BpfEvent { time, .. } = r {
                times.push(time);
            }
        });
        assert_eq!(times, vec![Some(10_000)]);
        // Too short for its fields or its trailer: malformed, never misread.
        let short = record(RECORD_COMM, &u64s(&[40]));
        let (seen, st) = collect(&short, &[], Layout::SIDE_BAND);
        assert!(seen.is_empty());
        assert_eq!((st.malformed_records, st.discarded_bytes), (1, 16));
        let (seen, _) = collect(&short, &[], DIRECT);
        assert_eq!(seen, vec![Seen::Comm(40, 0, false, "".into(), None)]);
        let short = record(RECORD_FORK, &u64s(&[40, 41, 12_000]));
        let (seen, st) = collect(&short, &[], Layout::SIDE_BAND);
        assert!(seen.is_empty());
        assert_eq!(st.malformed_records, 1);
        let tiny = record(RECORD_BPF_EVENT, &u64s(&[1, 2]));
        let (_, st) = collect(&tiny, &[], Layout::SIDE_BAND);
        assert_eq!(st.malformed_records, 1);
    }

    #[test]
    fn cgroup_id_follows_the_branch_stack() {
        let st = DIRECT | SAMPLE_BRANCH_STACK | SAMPLE_CGROUP;
        let mut p = sample(0x10, 0, None)[HEADER..].to_vec();
        p.extend(u64s(&[1, 0xa, 0xb, 0, 0x1234]));
        let rec = record(RECORD_SAMPLE, &p);
        let mut got = Vec::new();
        let mut stats = ParseStats::default();
        walk_bytes(&rec, st, &mut stats, |r| {
            if let Record::Sample(s) = r {
                got.push((s.ip, s.pid, s.cgroup, s.branches.pairs().count()));
            }
        });
        assert_eq!(got, vec![(0x10, 7, 0x1234, 1)]);
        // Without the cgroup word the record is short: malformed, not misread.
        let short = record(RECORD_SAMPLE, &p[..p.len() - 8]);
        let mut stats = ParseStats::default();
        walk_bytes(&short, st, &mut stats, |_| {});
        assert_eq!(stats.malformed_records, 1);
    }

    #[test]
    fn callchain_cleanup_and_branches() {
        let chain = [
            0xffff_ffff_ffff_ff80, // PERF_CONTEXT_KERNEL
            0xffff_ffff_8100_0000,
            0,
            0xffff_ffff_c000_0040,
            0xffff_ffff_ffff_fe00, // PERF_CONTEXT_USER
            0x7f00_0000_1000,
        ];
        let (seen, _) = collect(&sample(1, 0, Some(&chain)), &[], FP);
        assert_eq!(
            seen,
            vec![Seen::Sample(
                1,
                0,
                vec![
                    0xffff_ffff_8100_0000,
                    0xffff_ffff_c000_0040,
                    0x7f00_0000_1000
                ],
                vec![]
            )]
        );
        // LBR: nr then {from, to, flags}; both-zero entries dropped.
        let mut p = sample(5, 0, None)[8..].to_vec();
        p.extend(u64s(&[3, 10, 20, 0, 0, 0, 0, 30, 40, 0]));
        let (seen, _) = collect(&record(RECORD_SAMPLE, &p), &[], LBR);
        assert_eq!(
            seen,
            vec![Seen::Sample(5, 0, vec![], vec![(10, 20), (30, 40)])]
        );
    }

    #[test]
    fn wraparound_at_every_split_point() {
        let mut s = Vec::new();
        s.extend(sample(10, 0, Some(&[10, 20, 30])));
        s.extend(ksymbol(0x1000, 16, 0, "bpf_prog_aa_y"));
        s.extend(sample(11, 1, None));
        s.extend(record(RECORD_LOST, &u64s(&[1, 2])));
        let (whole, wst) = collect(&s, &[], FP);
        for cut in 0..=s.len() {
            let (seen, st) = collect(&s[..cut], &s[cut..], FP);
            assert_eq!(seen, whole, "cut at {cut}");
            assert_eq!(st, wst, "cut at {cut}");
        }
    }

    #[test]
    fn truncation_is_malformed_and_discarded() {
        let s = sample(10, 0, None);
        for cut in 1..s.len() {
            let (seen, st) = collect(&s[..cut], &[], DIRECT);
            assert!(seen.is_empty());
            assert_eq!(st.malformed_records, 1, "cut {cut}");
            assert_eq!(st.discarded_bytes, cut as u64);
        }
        // A good record followed by a fragment.
        let mut two = sample(1, 0, None);
        two.extend_from_slice(&sample(2, 0, None)[..20]);
        let (seen, st) = collect(&two, &[], DIRECT);
        assert_eq!(seen.len(), 1);
        assert_eq!((st.malformed_records, st.discarded_bytes), (1, 20));
    }

    #[test]
    fn zero_and_oversized_headers() {
        let mut s = sample(1, 0, None);
        let good = s.len() as u64;
        s.extend_from_slice(&[0u8; 40]); // size 0 header
        let (seen, st) = collect(&s, &[], DIRECT);
        assert_eq!(seen.len(), 1);
        assert_eq!((st.malformed_records, st.discarded_bytes), (1, 40));
        assert_eq!(st.parsed_bytes, good);
        let mut big = header(RECORD_SAMPLE, 4000);
        big.extend_from_slice(&[0u8; 24]);
        let (_, st) = collect(&big, &[], DIRECT);
        assert_eq!((st.malformed_records, st.discarded_bytes), (1, 32));
    }

    #[test]
    fn short_payloads_are_malformed() {
        // Sample missing the period.
        let short = record(RECORD_SAMPLE, &u64s(&[1, 2, 3, 4]));
        let (seen, st) = collect(&short, &[], DIRECT);
        assert!(seen.is_empty());
        assert_eq!(
            (st.samples, st.malformed_records, st.discarded_bytes),
            (0, 1, 40)
        );
        // Callchain count larger than the record.
        let mut p = sample(5, 0, None)[8..].to_vec();
        p.extend(u64s(&[u64::MAX, 1]));
        let (_, st) = collect(&record(RECORD_SAMPLE, &p), &[], FP);
        assert_eq!(st.malformed_records, 1);
        let mut p = sample(5, 0, None)[8..].to_vec();
        p.extend(u64s(&[3, 1, 2]));
        let (_, st) = collect(&record(RECORD_SAMPLE, &p), &[], FP);
        assert_eq!(st.malformed_records, 1);
        for (kind, len) in [
            (RECORD_LOST, 8),
            (RECORD_LOST_SAMPLES, 0),
            (RECORD_KSYMBOL, 12),
            (RECORD_BPF_EVENT, 8),
        ] {
            let (seen, st) = collect(&record(kind, &vec![0u8; len]), &[], DIRECT);
            assert!(seen.is_empty(), "{kind}");
            assert_eq!(st.malformed_records, 1, "{kind}");
        }
    }

    /// Deterministic pseudo-random garbage (xorshift), split at random points.
    #[test]
    fn garbage_never_panics_and_accounts_every_byte() {
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for round in 0..3000 {
            let len = (next() % 600) as usize;
            let mut buf: Vec<u8> = (0..len).map(|_| next() as u8).collect();
            // Make headers plausible often enough to reach the payload parsers.
            let mut p = 0;
            while p + 8 <= buf.len() && round % 2 == 0 {
                let kinds = [2u32, 5, 6, 9, 13, 17, 18, 3];
                buf[p..p + 4].copy_from_slice(&kinds[(next() % 8) as usize].to_ne_bytes());
                let size = 8 * (1 + next() % 12) as u16;
                buf[p + 6..p + 8].copy_from_slice(&size.to_ne_bytes());
                p += size as usize;
            }
            let cut = if len == 0 {
                0
            } else {
                (next() as usize) % (len + 1)
            };
            for st in [DIRECT, FP, LBR, FP | LBR] {
                let _ = collect(&buf[..cut], &buf[cut..], st);
            }
        }
    }
}
