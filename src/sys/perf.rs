//! `perf_event_open`, the mmap'd per-CPU sample ring, and the few other
//! syscalls a capture needs (ioctl, read, poll, eventfd, rlimits).
//!
//! The ring protocol: the kernel advances `data_head` after writing records;
//! we load it with acquire ordering, read the bytes between our tail and that
//! head in place, then store the new `data_tail` with release ordering so the
//! kernel may reuse the space. We never read past `data_head`.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicU64, Ordering};

use super::Errno;

pub const PERF_TYPE_HARDWARE: u32 = 0;
pub const PERF_TYPE_SOFTWARE: u32 = 1;
pub const PERF_COUNT_SW_DUMMY: u64 = 9;

pub const FORMAT_TOTAL_TIME_ENABLED: u64 = 1 << 0;
pub const FORMAT_TOTAL_TIME_RUNNING: u64 = 1 << 1;

pub const BRANCH_USER: u64 = 1 << 0;
pub const BRANCH_KERNEL: u64 = 1 << 1;
pub const BRANCH_CALL_STACK: u64 = 1 << 11;

/// Bit positions in the attribute flag word.
pub mod flag {
    pub const DISABLED: u64 = 1 << 0;
    pub const EXCLUDE_USER: u64 = 1 << 4;
    pub const EXCLUDE_HV: u64 = 1 << 6;
    pub const FREQ: u64 = 1 << 10;
    pub const WATERMARK: u64 = 1 << 14;
    pub const PRECISE_SHIFT: u32 = 15;
    pub const EXCLUDE_CALLCHAIN_USER: u64 = 1 << 22;
    pub const KSYMBOL: u64 = 1 << 29;
    pub const BPF_EVENT: u64 = 1 << 30;
}

pub const ATTR_SIZE_VER0: u32 = 64;
pub const ATTR_SIZE_VER2: u32 = 80;

/// `struct perf_event_attr` through `sig_data` (VER7, 128 bytes). The
/// `size` field tells the kernel how much of it we mean.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct PerfEventAttr {
    pub type_: u32,
    pub size: u32,
    pub config: u64,
    pub sample_freq: u64,
    pub sample_type: u64,
    pub read_format: u64,
    pub flags: u64,
    /// `wakeup_events` or, with the watermark flag, `wakeup_watermark`.
    pub wakeup: u32,
    pub bp_type: u32,
    pub config1: u64,
    pub config2: u64,
    pub branch_sample_type: u64,
    pub sample_regs_user: u64,
    pub sample_stack_user: u32,
    pub clockid: i32,
    pub sample_regs_intr: u64,
    pub aux_watermark: u32,
    pub sample_max_stack: u16,
    pub reserved_2: u16,
    pub aux_sample_size: u32,
    pub reserved_3: u32,
    pub sig_data: u64,
}
const _: () = assert!(std::mem::size_of::<PerfEventAttr>() == 128);
const _: () = assert!(std::mem::offset_of!(PerfEventAttr, wakeup) == 48);
const _: () = assert!(std::mem::offset_of!(PerfEventAttr, branch_sample_type) == 72);

const PERF_FLAG_FD_CLOEXEC: libc::c_ulong = 1 << 3;

/// `perf_event_open(attr, pid = -1, cpu, group_fd = -1, FD_CLOEXEC)`:
/// a system-wide event on one CPU.
pub fn open_cpu_event(attr: &PerfEventAttr, cpu: u32) -> Result<OwnedFd, Errno> {
    let mut copy = *attr;
    // SAFETY: `copy` is a live, initialised #[repr(C)] attribute of 128 bytes
    // and its `size` field is at most 128, so the kernel reads only our bytes.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_perf_event_open,
            &mut copy as *mut PerfEventAttr,
            -1 as libc::pid_t,
            cpu as libc::c_int,
            -1 as libc::c_int,
            PERF_FLAG_FD_CLOEXEC,
        )
    };
    if rc < 0 {
        return Err(Errno::last());
    }
    // SAFETY: a successful perf_event_open returns a new fd owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(rc as RawFd) })
}

const IOC_ENABLE: libc::c_ulong = 0x2400;
const IOC_DISABLE: libc::c_ulong = 0x2401;

fn ioctl0(fd: RawFd, req: libc::c_ulong) -> Result<(), Errno> {
    // SAFETY: ENABLE/DISABLE take an integer argument (0 = this event only);
    // an invalid fd just yields EBADF.
    let rc = unsafe { libc::ioctl(fd, req as _, 0 as libc::c_ulong) };
    if rc < 0 {
        Err(Errno::last())
    } else {
        Ok(())
    }
}

/// Start counting/sampling. Takes a raw fd so a timer thread can stop events
/// it does not own.
pub fn enable(fd: RawFd) -> Result<(), Errno> {
    ioctl0(fd, IOC_ENABLE)
}

pub fn disable(fd: RawFd) -> Result<(), Errno> {
    ioctl0(fd, IOC_DISABLE)
}

/// `read()` of an event opened with TOTAL_TIME_ENABLED|RUNNING:
/// `(value, time_enabled, time_running)`; a short read is `None`.
pub fn read_times(fd: &OwnedFd) -> Result<Option<(u64, u64, u64)>, Errno> {
    let mut buf = [0u64; 3];
    // SAFETY: `buf` is 24 writable bytes.
    let rc = unsafe {
        libc::read(
            fd.as_raw_fd(),
            buf.as_mut_ptr() as *mut libc::c_void,
            std::mem::size_of_val(&buf),
        )
    };
    if rc < 0 {
        return Err(Errno::last());
    }
    Ok((rc as usize == std::mem::size_of_val(&buf)).then_some((buf[0], buf[1], buf[2])))
}

pub fn page_size() -> usize {
    // SAFETY: sysconf has no memory-safety preconditions.
    let v = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if v > 0 {
        v as usize
    } else {
        4096
    }
}

/// Soft and hard limits of a resource; `None` components are unlimited.
pub fn rlimit(resource: libc::__rlimit_resource_t) -> (Option<u64>, Option<u64>) {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `lim` is a valid, writable rlimit.
    if unsafe { libc::getrlimit(resource, &mut lim) } != 0 {
        return (None, None);
    }
    let f = |v: libc::rlim_t| (v != libc::RLIM_INFINITY).then_some(v);
    (f(lim.rlim_cur), f(lim.rlim_max))
}

/// CPUs this process may run on (sorted).
pub fn affinity_cpus() -> Vec<u32> {
    // SAFETY: `set` is a zeroed cpu_set_t we own; the kernel fills it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            return Vec::new();
        }
        (0..libc::CPU_SETSIZE as usize)
            .filter(|&c| libc::CPU_ISSET(c, &set))
            .map(|c| c as u32)
            .collect()
    }
}

/// A per-CPU ring: one header page plus `2^n` data pages, mapped shared and
/// writable (so the kernel honours `data_tail` and never overwrites unread
/// records).
pub struct Ring {
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
pub struct RingData<'a> {
    pub first: &'a [u8],
    pub second: &'a [u8],
    /// head − tail as read, before any overrun correction.
    pub available: u64,
    /// Bytes lost because more than the ring size was pending.
    pub overrun: u64,
}

const HEAD_OFF: usize = 1024;
const TAIL_OFF: usize = 1032;
const DATA_OFFSET_OFF: usize = 1040;
const DATA_SIZE_OFF: usize = 1048;

impl Ring {
    pub fn map(fd: &OwnedFd, data_pages: usize, page_size: usize) -> Result<Ring, Errno> {
        let len = data_pages
            .checked_add(1)
            .and_then(|p| p.checked_mul(page_size))
            .ok_or(Errno(libc::ENOMEM))?;
        // SAFETY: a fresh shared mapping of a perf fd; the kernel validates
        // the length (1 + 2^n pages) and we check the result.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_POPULATE,
                fd.as_raw_fd(),
                0,
            )
        };
        if base == libc::MAP_FAILED {
            return Err(Errno::last());
        }
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

    pub fn data_size(&self) -> usize {
        self.data_size
    }

    /// The head as of now (acquire); pass it to [`Ring::consume_to`].
    pub fn head(&self) -> u64 {
        self.word(HEAD_OFF).load(Ordering::Acquire)
    }

    /// Consume everything written so far.
    pub fn consume<R>(&mut self, f: impl FnOnce(RingData<'_>) -> R) -> Option<R> {
        let head = self.head();
        self.consume_to(head, f)
    }

    /// Hand the bytes between the tail and `head` (a value previously
    /// returned by [`Ring::head`]) to `f`, then release them to the kernel.
    /// `None` when there was nothing to read.
    pub fn consume_to<R>(&mut self, head: u64, f: impl FnOnce(RingData<'_>) -> R) -> Option<R> {
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
    pub fn anonymous(data_pages: usize, page_size: usize) -> Ring {
        let len = (data_pages + 1) * page_size;
        // SAFETY: a fresh private anonymous mapping; checked below.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        assert_ne!(base, libc::MAP_FAILED, "test mapping");
        Ring {
            base: base as *mut u8,
            len,
            data_offset: page_size,
            data_size: data_pages * page_size,
        }
    }

    /// Append `bytes` at the head (wrapping) and publish the new head.
    pub fn produce(&mut self, bytes: &[u8]) {
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
        // it outlives a `consume` call.
        unsafe {
            libc::munmap(self.base as *mut libc::c_void, self.len);
        }
    }
}

/// An eventfd used to wake a poll loop from another thread.
pub struct Waker {
    fd: OwnedFd,
}

impl Waker {
    pub fn new() -> Result<Waker, Errno> {
        // SAFETY: eventfd has no pointer arguments.
        let rc = unsafe { libc::eventfd(0, libc::EFD_CLOEXEC | libc::EFD_NONBLOCK) };
        if rc < 0 {
            return Err(Errno::last());
        }
        // SAFETY: a new fd owned by nobody else.
        Ok(Waker {
            fd: unsafe { OwnedFd::from_raw_fd(rc) },
        })
    }

    pub fn wake(&self) {
        let one: u64 = 1;
        // SAFETY: writes 8 bytes from a live u64. A full counter (EAGAIN)
        // already means "woken".
        unsafe {
            libc::write(
                self.fd.as_raw_fd(),
                &one as *const u64 as *const libc::c_void,
                8,
            );
        }
    }

    pub fn raw(&self) -> RawFd {
        self.fd.as_raw_fd()
    }

    /// Reset the counter after a wake-up.
    pub fn clear(&self) {
        let mut v: u64 = 0;
        // SAFETY: reads 8 bytes into a live u64; EAGAIN when not woken.
        unsafe {
            libc::read(
                self.fd.as_raw_fd(),
                &mut v as *mut u64 as *mut libc::c_void,
                8,
            );
        }
    }
}

/// `poll()` on `fds` (events POLLIN); returns the number ready, retrying on
/// EINTR with the same timeout.
pub fn poll(fds: &mut [libc::pollfd], timeout_ms: i32) -> Result<usize, Errno> {
    loop {
        // SAFETY: `fds` is a valid, writable slice of pollfd of the stated length.
        let rc = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, timeout_ms) };
        if rc >= 0 {
            return Ok(rc as usize);
        }
        let e = Errno::last();
        if e.0 != libc::EINTR {
            return Err(e);
        }
    }
}
