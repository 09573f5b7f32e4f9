//! Ctrl-C as an event to wait for, not a process kill: brr blocks SIGINT
//! while it measures and reports what it measured when the user stops it.

use std::time::Duration;

fn sigint_set() -> libc::sigset_t {
    // SAFETY: sigemptyset/sigaddset initialise the set we own.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGINT);
        set
    }
}

/// Blocks SIGINT on the calling thread until dropped (threads spawned while
/// it lives inherit the mask).
pub struct InterruptGuard {
    old: libc::sigset_t,
}

impl InterruptGuard {
    pub fn block() -> InterruptGuard {
        let set = sigint_set();
        // SAFETY: valid sigset pointers; `old` receives the previous mask.
        unsafe {
            let mut old: libc::sigset_t = std::mem::zeroed();
            libc::pthread_sigmask(libc::SIG_BLOCK, &set, &mut old);
            InterruptGuard { old }
        }
    }

    /// Sleep up to `timeout`; true if Ctrl-C arrived (and was consumed).
    pub fn wait(&self, timeout: Duration) -> bool {
        let set = sigint_set();
        let ts = libc::timespec {
            tv_sec: timeout.as_secs().min(i64::MAX as u64) as libc::time_t,
            tv_nsec: timeout.subsec_nanos() as libc::c_long,
        };
        // SAFETY: valid pointers; a null siginfo is allowed.
        let rc = unsafe { libc::sigtimedwait(&set, std::ptr::null_mut(), &ts) };
        rc == libc::SIGINT
    }
}

impl Drop for InterruptGuard {
    fn drop(&mut self) {
        // SAFETY: restores the mask saved in `block`.
        unsafe {
            libc::pthread_sigmask(libc::SIG_SETMASK, &self.old, std::ptr::null_mut());
        }
    }
}

/// The signals that end the interactive view: Ctrl-C from another terminal
/// (`kill -INT`), `kill`, and a closed terminal.
const TERMINATING: [libc::c_int; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

fn terminating_set() -> libc::sigset_t {
    // SAFETY: sigemptyset/sigaddset initialise the set we own.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for s in TERMINATING {
            libc::sigaddset(&mut set, s);
        }
        set
    }
}

/// Block SIGINT, SIGTERM and SIGHUP on the calling thread for good, so that
/// threads spawned afterwards inherit the mask and [`wait_terminating`] is
/// the only place they are received. Call before spawning any thread.
pub fn block_terminating() {
    let set = terminating_set();
    // SAFETY: valid sigset pointer; the old mask is not needed.
    unsafe {
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
    }
}

/// Wait for one of the signals blocked by [`block_terminating`]; returns
/// its number.
pub fn wait_terminating() -> libc::c_int {
    let set = terminating_set();
    loop {
        let mut sig: libc::c_int = 0;
        // SAFETY: valid set and output pointers.
        let rc = unsafe { libc::sigwait(&set, &mut sig) };
        if rc == 0 {
            return sig;
        }
    }
}
