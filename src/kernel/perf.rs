//! Perf events for the sampling profiler: one system-wide event per CPU,
//! its mapped ring, switching events on and off, their timing, the limits
//! that bound rings and the wait for records. The ABI numbers the profiler
//! builds events and parses records with are re-exported from here, so
//! that `profile/` reaches the kernel only through this layer.

use std::os::fd::{BorrowedFd, OwnedFd, RawFd};

use crate::sys::perf::{self as sys, Resource};
pub(crate) use crate::sys::perf::{
    abi, flag, PerfEventAttr, Readiness, Ring, Waker, ATTR_SIZE_VER0, ATTR_SIZE_VER2,
    ATTR_SIZE_VER3, BRANCH_CALL_STACK, BRANCH_KERNEL, BRANCH_USER, CLOCK_MONOTONIC,
    FORMAT_TOTAL_TIME_ENABLED, FORMAT_TOTAL_TIME_RUNNING, PERF_COUNT_SW_DUMMY, PERF_TYPE_HARDWARE,
    PERF_TYPE_SOFTWARE,
};
use crate::sys::Errno;

/// Open the event `attr` describes on `cpu`, for every task (disabled
/// when `attr` says so).
pub(crate) fn open(attr: &PerfEventAttr, cpu: u32) -> Result<OwnedFd, Errno> {
    sys::open_cpu_event(attr, cpu)
}

/// Map the ring of event `fd`: a header page and `data_pages` pages of
/// `page_size` bytes.
pub(crate) fn map_ring(fd: &OwnedFd, data_pages: u64, page_size: u64) -> Result<Ring, Errno> {
    let too_big = || Errno(libc::ENOMEM);
    let pages = usize::try_from(data_pages).map_err(|_| too_big())?;
    let page = usize::try_from(page_size).map_err(|_| too_big())?;
    Ring::map(fd, pages, page)
}

/// Start sampling. A raw fd, so that the thread that owns the clock can
/// switch off events it does not own.
pub(crate) fn enable(fd: RawFd) -> Result<(), Errno> {
    sys::enable(fd)
}

pub(crate) fn disable(fd: RawFd) -> Result<(), Errno> {
    sys::disable(fd)
}

/// Nanoseconds the event was enabled and running, `None` after a short
/// read.
pub(crate) fn times(fd: &OwnedFd) -> Result<Option<(u64, u64)>, Errno> {
    Ok(sys::read_times(fd)?.map(|(_, enabled, running)| (enabled, running)))
}

/// The size of a memory page, the unit of a ring.
pub(crate) fn page_size() -> u64 {
    sys::page_size() as u64
}

/// The soft and hard RLIMIT_MEMLOCK (`None` for unlimited), which bounds
/// the rings of a process without CAP_IPC_LOCK.
pub(crate) fn memlock_limit() -> (Option<u64>, Option<u64>) {
    sys::rlimit(Resource::Memlock)
}

/// The soft RLIMIT_NOFILE (`None` for unlimited): one event per CPU must
/// fit under it.
pub(crate) fn open_files_limit() -> Option<u64> {
    sys::rlimit(Resource::Nofile).0
}

/// How many file descriptors this process has open now.
pub(crate) fn open_files() -> Option<u64> {
    std::fs::read_dir("/proc/self/fd")
        .ok()
        .map(|d| d.count() as u64)
}

/// The CPUs this process may run on, sorted.
pub(crate) fn allowed_cpus() -> Vec<u32> {
    sys::affinity_cpus()
}

/// A descriptor another thread writes to, to end a [`poll`] early.
pub(crate) fn waker() -> Result<Waker, Errno> {
    Waker::new()
}

/// Wait up to `timeout_ms` for input on `fds`; fills `out` with what each
/// said and returns how many are ready.
pub(crate) fn poll(
    fds: &[BorrowedFd<'_>],
    out: &mut Vec<Readiness>,
    timeout_ms: i32,
) -> Result<usize, Errno> {
    sys::poll_input(fds, out, timeout_ms)
}
