//! `perf_event_open`, the mmap'd per-CPU sample ring, and the few other
//! syscalls a capture needs (ioctl, read, poll, eventfd, rlimits).
//!
//! The ring protocol: the kernel advances `data_head` after writing records;
//! we load it with acquire ordering, read the bytes between our tail and that
//! head in place, then store the new `data_tail` with release ordering so the
//! kernel may reuse the space. We never read past `data_head`.

use std::os::fd::{AsFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicU64, Ordering};

/// The kernel's perf ABI numbers, for the record parser above this layer.
pub(crate) use perf_event_open_sys::bindings as abi;
use perf_event_open_sys::bindings::{perf_event_attr, perf_event_mmap_page};
use rustix::event::EventfdFlags;
use rustix::mm::{MapFlags, ProtFlags};
pub(crate) use rustix::process::Resource;

use super::Errno;

pub(crate) const PERF_TYPE_HARDWARE: u32 = abi::PERF_TYPE_HARDWARE;
pub(crate) const PERF_TYPE_SOFTWARE: u32 = abi::PERF_TYPE_SOFTWARE;
pub(crate) const PERF_COUNT_SW_DUMMY: u64 = abi::PERF_COUNT_SW_DUMMY as u64;

pub(crate) const FORMAT_TOTAL_TIME_ENABLED: u64 = abi::PERF_FORMAT_TOTAL_TIME_ENABLED as u64;
pub(crate) const FORMAT_TOTAL_TIME_RUNNING: u64 = abi::PERF_FORMAT_TOTAL_TIME_RUNNING as u64;

pub(crate) const BRANCH_USER: u64 = abi::PERF_SAMPLE_BRANCH_USER as u64;
pub(crate) const BRANCH_KERNEL: u64 = abi::PERF_SAMPLE_BRANCH_KERNEL as u64;
pub(crate) const BRANCH_CALL_STACK: u64 = abi::PERF_SAMPLE_BRANCH_CALL_STACK as u64;

/// The attribute flags brr uses, numbered as the bits of the ABI's flag
/// word (so a value reads like the kernel's documentation). They reach the
/// kernel through the bindings' bitfield setters, never as a raw word.
pub(crate) mod flag {
    pub(crate) const DISABLED: u64 = 1 << 0;
    pub(crate) const EXCLUDE_USER: u64 = 1 << 4;
    pub(crate) const EXCLUDE_HV: u64 = 1 << 6;
    pub(crate) const COMM: u64 = 1 << 9;
    pub(crate) const FREQ: u64 = 1 << 10;
    /// FORK and EXIT records.
    pub(crate) const TASK: u64 = 1 << 13;
    pub(crate) const WATERMARK: u64 = 1 << 14;
    pub(crate) const PRECISE_SHIFT: u32 = 15;
    pub(crate) const PRECISE_MASK: u64 = 3 << PRECISE_SHIFT;
    pub(crate) const SAMPLE_ID_ALL: u64 = 1 << 18;
    pub(crate) const EXCLUDE_CALLCHAIN_USER: u64 = 1 << 22;
    pub(crate) const COMM_EXEC: u64 = 1 << 24;
    /// Timestamps from `clockid` instead of the perf clock.
    pub(crate) const USE_CLOCKID: u64 = 1 << 25;
    pub(crate) const KSYMBOL: u64 = 1 << 29;
    pub(crate) const BPF_EVENT: u64 = 1 << 30;

    pub(super) const KNOWN: u64 = DISABLED
        | EXCLUDE_USER
        | EXCLUDE_HV
        | COMM
        | FREQ
        | TASK
        | WATERMARK
        | PRECISE_MASK
        | SAMPLE_ID_ALL
        | EXCLUDE_CALLCHAIN_USER
        | COMM_EXEC
        | USE_CLOCKID
        | KSYMBOL
        | BPF_EVENT;
}

pub(crate) const ATTR_SIZE_VER0: u32 = abi::PERF_ATTR_SIZE_VER0;
pub(crate) const ATTR_SIZE_VER2: u32 = abi::PERF_ATTR_SIZE_VER2;
/// The first size with `clockid`.
pub(crate) const ATTR_SIZE_VER3: u32 = abi::PERF_ATTR_SIZE_VER3;
/// `CLOCK_MONOTONIC`, the clock of `std::time::Instant` on Linux.
pub(crate) const CLOCK_MONOTONIC: i32 = libc::CLOCK_MONOTONIC;

/// What brr asks of `perf_event_open`: the part of `struct perf_event_attr`
/// it sets, as plain fields. [`open_cpu_event`] writes it into the
/// bindings' struct; `size` tells the kernel how much of that we mean.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct PerfEventAttr {
    pub type_: u32,
    pub size: u32,
    pub config: u64,
    pub sample_freq: u64,
    pub sample_type: u64,
    pub read_format: u64,
    /// [`flag`] bits.
    pub flags: u64,
    /// `wakeup_events` or, with the watermark flag, `wakeup_watermark`.
    pub wakeup: u32,
    pub branch_sample_type: u64,
    /// With [`flag::USE_CLOCKID`] (and a size of at least
    /// [`ATTR_SIZE_VER3`]).
    pub clockid: i32,
}

impl PerfEventAttr {
    /// The kernel's struct, or EINVAL for a flag brr does not know how to
    /// set or a size larger than the struct.
    fn to_abi(self) -> Result<perf_event_attr, Errno> {
        if self.flags & !flag::KNOWN != 0
            || self.size as usize > std::mem::size_of::<perf_event_attr>()
        {
            return Err(Errno(libc::EINVAL));
        }
        let mut a = perf_event_attr {
            type_: self.type_,
            size: self.size,
            config: self.config,
            sample_type: self.sample_type,
            read_format: self.read_format,
            branch_sample_type: self.branch_sample_type,
            ..Default::default()
        };
        a.sample_freq = self.sample_freq;
        a.wakeup_events = self.wakeup;
        a.clockid = self.clockid;
        let on = |bit: u64| u64::from(self.flags & bit != 0);
        a.set_disabled(on(flag::DISABLED));
        a.set_exclude_user(on(flag::EXCLUDE_USER));
        a.set_exclude_hv(on(flag::EXCLUDE_HV));
        a.set_comm(on(flag::COMM));
        a.set_sample_id_all(on(flag::SAMPLE_ID_ALL));
        a.set_comm_exec(on(flag::COMM_EXEC));
        a.set_use_clockid(on(flag::USE_CLOCKID));
        a.set_freq(on(flag::FREQ));
        a.set_task(on(flag::TASK));
        a.set_watermark(on(flag::WATERMARK));
        a.set_precise_ip((self.flags & flag::PRECISE_MASK) >> flag::PRECISE_SHIFT);
        a.set_exclude_callchain_user(on(flag::EXCLUDE_CALLCHAIN_USER));
        a.set_ksymbol(on(flag::KSYMBOL));
        a.set_bpf_event(on(flag::BPF_EVENT));
        Ok(a)
    }
}

/// `perf_event_open(attr, pid = -1, cpu, group_fd = -1, FD_CLOEXEC)`:
/// a system-wide event on one CPU.
pub(crate) fn open_cpu_event(attr: &PerfEventAttr, cpu: u32) -> Result<OwnedFd, Errno> {
    let mut raw = attr.to_abi()?;
    // SAFETY: `raw` is a live, fully initialised perf_event_attr and its
    // `size` field is at most its size (checked in `to_abi`), so the kernel
    // reads only our bytes; the other arguments are plain integers.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_perf_event_open,
            &mut raw as *mut perf_event_attr,
            -1 as libc::pid_t,
            cpu as libc::c_int,
            -1 as libc::c_int,
            abi::PERF_FLAG_FD_CLOEXEC as libc::c_ulong,
        )
    };
    if rc < 0 {
        return Err(Errno::last());
    }
    // SAFETY: a successful perf_event_open returns a new fd owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(rc as RawFd) })
}

type EventIoctl = unsafe fn(libc::c_int, libc::c_uint) -> libc::c_int;

fn event_ioctl(fd: RawFd, op: EventIoctl) -> Result<(), Errno> {
    // SAFETY: `op` is PERF_EVENT_IOC_ENABLE or _DISABLE, which take an
    // integer argument (0 = this event only), no pointer; a stale or foreign
    // fd just yields an error.
    let rc = unsafe { op(fd, 0) };
    if rc < 0 {
        Err(Errno::last())
    } else {
        Ok(())
    }
}

/// Start counting/sampling. Takes a raw fd so a timer thread can stop events
/// it does not own.
pub(crate) fn enable(fd: RawFd) -> Result<(), Errno> {
    event_ioctl(fd, perf_event_open_sys::ioctls::ENABLE)
}

pub(crate) fn disable(fd: RawFd) -> Result<(), Errno> {
    event_ioctl(fd, perf_event_open_sys::ioctls::DISABLE)
}

/// `read()` of an event opened with TOTAL_TIME_ENABLED|RUNNING:
/// `(value, time_enabled, time_running)`; a short read is `None`.
pub(crate) fn read_times(fd: &OwnedFd) -> Result<Option<(u64, u64, u64)>, Errno> {
    let mut buf = [0u8; 24];
    let n = rustix::io::read(fd, &mut buf)?;
    if n != buf.len() {
        return Ok(None);
    }
    let word = |i: usize| {
        let mut w = [0u8; 8];
        w.copy_from_slice(&buf[i * 8..i * 8 + 8]);
        u64::from_ne_bytes(w)
    };
    Ok(Some((word(0), word(1), word(2))))
}

pub(crate) fn page_size() -> usize {
    rustix::param::page_size()
}

/// Soft and hard limits of a resource; `None` components are unlimited.
pub(crate) fn rlimit(resource: Resource) -> (Option<u64>, Option<u64>) {
    let lim = rustix::process::getrlimit(resource);
    (lim.current, lim.maximum)
}

/// CPUs this process may run on (sorted).
pub(crate) fn affinity_cpus() -> Vec<u32> {
    let Ok(set) = rustix::thread::sched_getaffinity(None) else {
        return Vec::new();
    };
    (0..rustix::thread::CpuSet::MAX_CPU)
        .filter(|&c| set.is_set(c))
        .filter_map(|c| u32::try_from(c).ok())
        .collect()
}

/// A per-CPU ring: one header page plus `2^n` data pages, mapped shared and
/// writable (so the kernel honours `data_tail` and never overwrites unread
/// records).
pub(crate) struct Ring {
    base: *mut u8,
    len: usize,
    data_offset: usize,
    data_size: usize,
}

// SAFETY: the mapping is owned by this value; the control words are accessed
// through atomics and the data area only between tail and head, which the
// kernel does not write until we advance the tail.
unsafe impl Send for Ring {}

/// The unread part of a ring: `first` then `second` (non-empty only when the
/// data wraps around the end of the buffer).
pub(crate) struct RingData<'a> {
    pub first: &'a [u8],
    pub second: &'a [u8],
    /// head − tail as read, before any overrun correction.
    pub available: u64,
    /// Bytes lost because more than the ring size was pending.
    pub overrun: u64,
}

const HEAD_OFF: usize = std::mem::offset_of!(perf_event_mmap_page, data_head);
const TAIL_OFF: usize = std::mem::offset_of!(perf_event_mmap_page, data_tail);
const DATA_OFFSET_OFF: usize = std::mem::offset_of!(perf_event_mmap_page, data_offset);
const DATA_SIZE_OFF: usize = std::mem::offset_of!(perf_event_mmap_page, data_size);
// `word` hands these out as AtomicU64s.
const _: () = assert!(
    HEAD_OFF.is_multiple_of(8)
        && TAIL_OFF.is_multiple_of(8)
        && DATA_OFFSET_OFF.is_multiple_of(8)
        && DATA_SIZE_OFF.is_multiple_of(8)
);

impl Ring {
    pub(crate) fn map(fd: &OwnedFd, data_pages: usize, page_size: usize) -> Result<Ring, Errno> {
        let len = data_pages
            .checked_add(1)
            .and_then(|p| p.checked_mul(page_size))
            .ok_or(Errno(libc::ENOMEM))?;
        if page_size < std::mem::size_of::<perf_event_mmap_page>() {
            // The control words would lie outside the mapping.
            return Err(Errno(libc::EINVAL));
        }
        // SAFETY: a fresh shared mapping of a perf fd at an address of the
        // kernel's choosing, so no existing memory is replaced; the kernel
        // validates the length (1 + 2^n pages).
        let base = unsafe {
            rustix::mm::mmap(
                std::ptr::null_mut(),
                len,
                ProtFlags::READ | ProtFlags::WRITE,
                MapFlags::SHARED | MapFlags::POPULATE,
                fd,
                0,
            )
        }?;
        let mut ring = Ring {
            base: base as *mut u8,
            len,
            data_offset: 0,
            data_size: 0,
        };
        let off = ring.word(DATA_OFFSET_OFF).load(Ordering::Relaxed) as usize;
        let size = ring.word(DATA_SIZE_OFF).load(Ordering::Relaxed) as usize;
        ring.data_offset = if off == 0 { page_size } else { off };
        ring.data_size = if size == 0 {
            len.saturating_sub(ring.data_offset)
        } else {
            size
        };
        if ring
            .data_offset
            .checked_add(ring.data_size)
            .is_none_or(|end| end > len)
        {
            // A header we cannot trust; treat the ring as empty.
            ring.data_size = 0;
        }
        Ok(ring)
    }

    fn word(&self, off: usize) -> &AtomicU64 {
        // SAFETY: `off` is one of the 8-byte-aligned control-page offsets,
        // inside the mapping, which lives as long as `self`.
        unsafe { &*(self.base.add(off) as *const AtomicU64) }
    }

    pub(crate) fn data_size(&self) -> usize {
        self.data_size
    }

    /// The head as of now (acquire); pass it to [`Ring::consume_to`].
    pub(crate) fn head(&self) -> u64 {
        self.word(HEAD_OFF).load(Ordering::Acquire)
    }

    /// Consume everything written so far.
    pub(crate) fn consume<R>(&mut self, f: impl FnOnce(RingData<'_>) -> R) -> Option<R> {
        let head = self.head();
        self.consume_to(head, f)
    }

    /// Hand the bytes between the tail and `head` (a value previously
    /// returned by [`Ring::head`]) to `f`, then release them to the kernel.
    /// `None` when there was nothing to read.
    pub(crate) fn consume_to<R>(
        &mut self,
        head: u64,
        f: impl FnOnce(RingData<'_>) -> R,
    ) -> Option<R> {
        let tail = self.word(TAIL_OFF).load(Ordering::Relaxed);
        let size = self.data_size as u64;
        if size == 0 || head <= tail {
            return None;
        }
        let available = head - tail;
        let (start, overrun) = if available > size {
            (head - size, available - size)
        } else {
            (tail, 0)
        };
        let len = (head - start) as usize;
        let pos = (start % size) as usize;
        let first_len = len.min(self.data_size - pos);
        // SAFETY: [data_offset, data_offset + data_size) lies inside the
        // mapping (checked in `map`); `pos + first_len <= data_size` and the
        // wrapped part starts at the data area's beginning. The kernel has
        // finished writing these bytes (acquire on head) and will not touch
        // them before we store the new tail below.
        let (first, second) = unsafe {
            let data = self.base.add(self.data_offset);
            (
                std::slice::from_raw_parts(data.add(pos), first_len),
                std::slice::from_raw_parts(data, len - first_len),
            )
        };
        let out = f(RingData {
            first,
            second,
            available,
            overrun,
        });
        self.word(TAIL_OFF).store(head, Ordering::Release);
        Some(out)
    }
}

/// Rings the tests fill themselves, playing the kernel's part.
#[cfg(test)]
impl Ring {
    /// An anonymous mapping laid out like a perf ring (header page + data).
    pub(crate) fn anonymous(data_pages: usize, page_size: usize) -> Ring {
        assert!(page_size >= std::mem::size_of::<perf_event_mmap_page>());
        let len = (data_pages + 1) * page_size;
        // SAFETY: a fresh private anonymous mapping at an address of the
        // kernel's choosing.
        let base = unsafe {
            rustix::mm::mmap_anonymous(
                std::ptr::null_mut(),
                len,
                ProtFlags::READ | ProtFlags::WRITE,
                MapFlags::PRIVATE,
            )
        }
        .expect("test mapping");
        Ring {
            base: base as *mut u8,
            len,
            data_offset: page_size,
            data_size: data_pages * page_size,
        }
    }

    /// Append `bytes` at the head (wrapping) and publish the new head.
    pub(crate) fn produce(&mut self, bytes: &[u8]) {
        let head = self.word(HEAD_OFF).load(Ordering::Relaxed);
        for (i, b) in bytes.iter().enumerate() {
            let pos = (head as usize + i) % self.data_size;
            // SAFETY: `pos < data_size`, inside the data area of our mapping.
            unsafe { *self.base.add(self.data_offset + pos) = *b };
        }
        self.word(HEAD_OFF)
            .store(head + bytes.len() as u64, Ordering::Release);
    }
}

impl Drop for Ring {
    fn drop(&mut self) {
        // SAFETY: unmapping exactly the region mapped in `map`; no slice into
        // it outlives a `consume` call. A failure leaves the mapping in
        // place, which is harmless.
        let _ = unsafe { rustix::mm::munmap(self.base as *mut libc::c_void, self.len) };
    }
}

/// An eventfd used to wake a poll loop from another thread.
pub(crate) struct Waker {
    fd: OwnedFd,
}

impl Waker {
    pub(crate) fn new() -> Result<Waker, Errno> {
        let fd = rustix::event::eventfd(0, EventfdFlags::CLOEXEC | EventfdFlags::NONBLOCK)?;
        Ok(Waker { fd })
    }

    pub(crate) fn wake(&self) {
        // A full counter (EAGAIN) already means "woken".
        let _ = rustix::io::write(&self.fd, &1u64.to_ne_bytes());
    }

    pub(crate) fn fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }

    /// Reset the counter after a wake-up.
    pub(crate) fn clear(&self) {
        // EAGAIN when not woken.
        let _ = rustix::io::read(&self.fd, &mut [0u8; 8]);
    }
}

/// What `poll()` said of one descriptor.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Readiness {
    pub readable: bool,
    /// POLLERR, POLLHUP or POLLNVAL: the descriptor is broken.
    pub failed: bool,
    /// The raw `revents` bits, for messages.
    pub bits: u16,
}

/// `poll()` for input on `fds`; fills `out` (one entry per fd, in order)
/// and returns how many are ready. EINTR retries with the same timeout.
pub(crate) fn poll_input(
    fds: &[BorrowedFd<'_>],
    out: &mut Vec<Readiness>,
    timeout_ms: i32,
) -> Result<usize, Errno> {
    use rustix::event::{PollFd, PollFlags, Timespec};
    let mut pfds: Vec<PollFd<'_>> = fds
        .iter()
        .map(|fd| PollFd::new(fd, PollFlags::IN))
        .collect();
    let timeout = (timeout_ms >= 0).then(|| Timespec {
        tv_sec: i64::from(timeout_ms / 1000),
        tv_nsec: i64::from(timeout_ms % 1000) * 1_000_000,
    });
    let n = loop {
        match rustix::event::poll(&mut pfds, timeout.as_ref()) {
            Ok(n) => break n,
            Err(rustix::io::Errno::INTR) => continue,
            Err(e) => return Err(e.into()),
        }
    };
    out.clear();
    out.extend(pfds.iter().map(|p| {
        let r = p.revents();
        Readiness {
            readable: r.contains(PollFlags::IN),
            failed: r.intersects(PollFlags::ERR | PollFlags::HUP | PollFlags::NVAL),
            bits: r.bits(),
        }
    }));
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn attr(flags: u64) -> PerfEventAttr {
        PerfEventAttr {
            type_: PERF_TYPE_SOFTWARE,
            size: ATTR_SIZE_VER2,
            config: 7,
            sample_freq: 997,
            sample_type: 0x1a7,
            read_format: FORMAT_TOTAL_TIME_ENABLED | FORMAT_TOTAL_TIME_RUNNING,
            flags,
            wakeup: 4096,
            branch_sample_type: BRANCH_KERNEL,
            clockid: 1,
        }
    }

    #[test]
    fn attribute_fields_reach_the_abi_struct() {
        let a = attr(flag::DISABLED | flag::FREQ | flag::WATERMARK | 2 << flag::PRECISE_SHIFT)
            .to_abi()
            .unwrap();
        assert_eq!((a.type_, a.size, a.config), (1, 80, 7));
        assert_eq!(
            (a.sample_freq, a.sample_type, a.read_format),
            (997, 0x1a7, 3)
        );
        assert_eq!((a.wakeup_watermark, a.branch_sample_type), (4096, 2));
        assert_eq!(
            (a.disabled(), a.freq(), a.watermark(), a.precise_ip()),
            (1, 1, 1, 2)
        );
        assert_eq!((a.exclude_user(), a.exclude_hv(), a.ksymbol()), (0, 0, 0));
        assert_eq!((a.bpf_event(), a.exclude_callchain_user()), (0, 0));
        assert_eq!(a.clockid, 1);
    }

    // The flag constants are documented as the ABI's bit numbers; check
    // each one against where the bindings put the bitfield.
    #[test]
    #[cfg(target_endian = "little")]
    fn flag_constants_are_the_abi_bit_positions() {
        for f in [
            flag::DISABLED,
            flag::EXCLUDE_USER,
            flag::EXCLUDE_HV,
            flag::FREQ,
            flag::WATERMARK,
            1 << flag::PRECISE_SHIFT,
            2 << flag::PRECISE_SHIFT,
            flag::EXCLUDE_CALLCHAIN_USER,
            flag::KSYMBOL,
            flag::BPF_EVENT,
            flag::COMM,
            flag::SAMPLE_ID_ALL,
            flag::COMM_EXEC,
            flag::USE_CLOCKID,
        ] {
            let a = attr(f).to_abi().unwrap();
            let mut word = [0u8; 8];
            for (i, b) in word.iter_mut().enumerate() {
                for bit in 0..8 {
                    if a._bitfield_1.get_bit(i * 8 + bit) {
                        *b |= 1 << bit;
                    }
                }
            }
            assert_eq!(u64::from_le_bytes(word), f, "flag {f:#x}");
        }
    }

    #[test]
    fn unknown_flags_and_oversized_attributes_are_refused() {
        assert_eq!(attr(1 << 2).to_abi().unwrap_err(), Errno(libc::EINVAL));
        let mut big = attr(0);
        big.size = 4096;
        assert_eq!(big.to_abi().unwrap_err(), Errno(libc::EINVAL));
    }

    #[test]
    fn ring_control_words_sit_where_the_kernel_puts_them() {
        assert_eq!((HEAD_OFF, TAIL_OFF), (1024, 1032));
        assert_eq!((DATA_OFFSET_OFF, DATA_SIZE_OFF), (1040, 1048));
    }
}
