//! Closing many object fds in few syscalls: a walk opens one fd per object
//! and would close each with a syscall of its own.

use std::os::fd::{IntoRawFd, OwnedFd, RawFd};

/// Fds a walk is done with, closed together: consecutive numbers (what
/// the kernel hands out when nothing else opens files meanwhile) go in one
/// `close_range(2)`. Holding them a little longer delays the release of an
/// object that is unloaded meanwhile by at most one batch's reads.
#[derive(Debug, Default)]
pub(crate) struct FdBatch {
    held: Vec<OwnedFd>,
    raw: Vec<RawFd>,
}

impl FdBatch {
    /// How many fds are held before they are closed.
    const MAX: usize = 64;

    /// Keep `fd` until the batch is full or flushed.
    pub(crate) fn keep(&mut self, fd: OwnedFd) {
        self.held.push(fd);
        if self.held.len() >= Self::MAX {
            self.flush();
        }
    }

    /// Whether any fd is held.
    pub(crate) fn is_empty(&self) -> bool {
        self.held.is_empty()
    }

    /// Close every held fd now.
    pub(crate) fn flush(&mut self) {
        self.raw.clear();
        self.raw
            .extend(self.held.drain(..).map(IntoRawFd::into_raw_fd));
        self.raw.sort_unstable();
        let mut i = 0;
        while i < self.raw.len() {
            let first = self.raw[i];
            let mut j = i;
            while j + 1 < self.raw.len() && self.raw[j + 1] == self.raw[j] + 1 {
                j += 1;
            }
            close_run(first, self.raw[j]);
            i = j + 1;
        }
        self.raw.clear();
    }
}

impl Drop for FdBatch {
    fn drop(&mut self) {
        self.flush();
    }
}

/// Close `first..=last`, every one of which this process owns through the
/// batch (fd numbers are unique, so no other owner's fd lies in the run).
fn close_run(first: RawFd, last: RawFd) {
    if last > first {
        // SAFETY: every fd in first..=last was an OwnedFd this batch took
        // over with into_raw_fd and nothing else closes; close_range takes
        // two fd numbers and a flags word and touches no memory.
        let rc = unsafe { libc::syscall(libc::SYS_close_range, first as u32, last as u32, 0u32) };
        if rc == 0 {
            return;
        }
        // ENOSYS before Linux 5.9 (or a seccomp filter): nothing was
        // closed, so close them one by one.
    }
    for fd in first..=last {
        // SAFETY: as above, fd is owned by this batch and still open; it
        // is closed exactly once, here.
        unsafe { libc::close(fd) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsRawFd;

    /// A fresh fd on a file of its own, so that a number reused by another
    /// test's thread meanwhile is told apart by its inode.
    fn open_unique() -> (OwnedFd, u64) {
        match rustix::fs::memfd_create("fds-test", rustix::fs::MemfdFlags::CLOEXEC) {
            Ok(fd) => {
                let ino = rustix::fs::fstat(&fd).map(|s| s.st_ino).unwrap_or(0);
                (fd, ino)
            }
            Err(e) => panic!("memfd_create: {e}"),
        }
    }

    /// Whether `fd` is still open on the file with inode `ino`.
    fn is_open(fd: RawFd, ino: u64) -> bool {
        // SAFETY: the number is only inspected for the duration of fstat;
        // the borrowed fd is never closed here.
        let fd = unsafe { std::os::fd::BorrowedFd::borrow_raw(fd) };
        rustix::fs::fstat(fd).is_ok_and(|s| s.st_ino == ino)
    }

    #[test]
    fn closes_every_fd_it_holds_and_no_other() {
        let mut batch = FdBatch::default();
        let fds: Vec<(OwnedFd, u64)> = (0..10).map(|_| open_unique()).collect();
        let numbers: Vec<(RawFd, u64)> = fds.iter().map(|(f, i)| (f.as_raw_fd(), *i)).collect();
        // Leave a hole: the fifth stays with the test, so the batch holds
        // two runs around a number it must not close.
        let mut kept = None;
        for (i, (fd, _)) in fds.into_iter().enumerate() {
            if i == 4 {
                kept = Some(fd);
            } else {
                batch.keep(fd);
            }
        }
        assert!(!batch.is_empty());
        assert!(numbers.iter().all(|&(n, ino)| is_open(n, ino)));
        batch.flush();
        assert!(batch.is_empty());
        for (i, &(n, ino)) in numbers.iter().enumerate() {
            assert_eq!(is_open(n, ino), i == 4, "fd {n} (#{i})");
        }
        drop(kept);
        assert!(!is_open(numbers[4].0, numbers[4].1));
    }

    #[test]
    fn a_full_batch_closes_itself_and_drop_closes_the_rest() {
        let mut batch = FdBatch::default();
        let mut numbers = Vec::new();
        for _ in 0..FdBatch::MAX + 3 {
            let (fd, ino) = open_unique();
            numbers.push((fd.as_raw_fd(), ino));
            batch.keep(fd);
        }
        assert!(numbers[..FdBatch::MAX]
            .iter()
            .all(|&(n, ino)| !is_open(n, ino)));
        let last = &numbers[FdBatch::MAX..];
        assert!(last.iter().all(|&(n, ino)| is_open(n, ino)));
        drop(batch);
        assert!(last.iter().all(|&(n, ino)| !is_open(n, ino)));
    }
}
