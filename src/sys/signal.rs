//! Ctrl-C as an event to wait for, not a process kill: while brr measures it
//! catches SIGINT and reports what it measured when the user stops it.
//!
//! Built on signal-hook: the handler writes a byte to a socket per waiter,
//! so it does not matter which thread the kernel picks to run it, nor when
//! threads are started.

use std::io::{ErrorKind, Read};
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use rustix::event::{PollFd, PollFlags, Timespec};
use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
use signal_hook::iterator::Signals;
use signal_hook::SigId;

/// SIGINT keeps its default action (end the process) whenever nothing is
/// waiting for it: signal-hook cannot uninstall its handler, so the
/// default is emulated while `catchers` is zero.
struct SigintState {
    default_action: Arc<AtomicBool>,
    catchers: Mutex<usize>,
}

/// `None` if the handler could not be installed; SIGINT then simply keeps
/// its default action.
fn sigint_state() -> Option<&'static SigintState> {
    static STATE: OnceLock<Option<SigintState>> = OnceLock::new();
    STATE
        .get_or_init(|| {
            let default_action = Arc::new(AtomicBool::new(true));
            // Registered before any waiter, so it runs first and a waiter's
            // wake-up never races a process that is about to die anyway.
            signal_hook::flag::register_conditional_default(SIGINT, Arc::clone(&default_action))
                .ok()?;
            Some(SigintState {
                default_action,
                catchers: Mutex::new(0),
            })
        })
        .as_ref()
}

/// Count one more (or one fewer) part of brr that wants SIGINT delivered
/// instead of acted on.
fn catch_sigint(more: bool) -> bool {
    let Some(state) = sigint_state() else {
        return false;
    };
    let mut n = state.catchers.lock().unwrap_or_else(|e| e.into_inner());
    *n = if more {
        n.saturating_add(1)
    } else {
        n.saturating_sub(1)
    };
    state.default_action.store(*n == 0, Ordering::SeqCst);
    true
}

/// Catches SIGINT until dropped: a Ctrl-C no longer ends the process but
/// wakes [`InterruptGuard::wait`]. Every live guard sees every Ctrl-C.
pub(crate) struct InterruptGuard {
    /// The read end of the socket the handler writes to, and the handler's
    /// registration; `None` when signals could not be set up, in which case
    /// `wait` only sleeps and Ctrl-C keeps its default action.
    hook: Option<(UnixStream, SigId)>,
}

impl InterruptGuard {
    pub(crate) fn block() -> InterruptGuard {
        let hook = (|| {
            let (reader, writer) = UnixStream::pair().ok()?;
            if !catch_sigint(true) {
                return None;
            }
            match signal_hook::low_level::pipe::register(SIGINT, writer) {
                Ok(id) => Some((reader, id)),
                Err(_) => {
                    catch_sigint(false);
                    None
                }
            }
        })();
        InterruptGuard { hook }
    }

    /// Sleep up to `timeout`; true if Ctrl-C arrived (and was consumed).
    pub(crate) fn wait(&self, timeout: Duration) -> bool {
        let Some((reader, _)) = &self.hook else {
            std::thread::sleep(timeout);
            return false;
        };
        let deadline = Instant::now().checked_add(timeout);
        loop {
            let left = match deadline {
                Some(d) => d.saturating_duration_since(Instant::now()),
                None => timeout,
            };
            // Beyond what a timespec holds is forever for our purposes.
            let ts = Timespec::try_from(left).ok();
            let mut fds = [PollFd::new(reader, PollFlags::IN)];
            match rustix::event::poll(&mut fds, ts.as_ref()) {
                Ok(0) => return false,
                Ok(_) => {
                    // One byte per signal, so a second Ctrl-C that arrived
                    // meanwhile is still there for the next wait.
                    let mut byte = [0u8; 1];
                    match (&*reader).read(&mut byte) {
                        Ok(1) => return true,
                        Err(e) if e.kind() == ErrorKind::Interrupted => {}
                        // Cannot happen while the writer is registered;
                        // sleeping keeps a caller's wait loop from spinning.
                        Ok(_) | Err(_) => {
                            std::thread::sleep(left);
                            return false;
                        }
                    }
                }
                Err(rustix::io::Errno::INTR) => {}
                Err(_) => {
                    std::thread::sleep(left);
                    return false;
                }
            }
        }
    }
}

impl Drop for InterruptGuard {
    fn drop(&mut self) {
        if let Some((_, id)) = self.hook.take() {
            signal_hook::low_level::unregister(id);
            catch_sigint(false);
        }
    }
}

/// The signals that end the interactive view: Ctrl-C from another terminal
/// (`kill -INT`), `kill`, and a closed terminal.
const TERMINATING: [libc::c_int; 3] = [SIGINT, SIGTERM, SIGHUP];

fn terminating() -> &'static Option<Mutex<Signals>> {
    static SIGNALS: OnceLock<Option<Mutex<Signals>>> = OnceLock::new();
    SIGNALS.get_or_init(|| {
        // SIGINT must not fall back to its default action once we own it.
        catch_sigint(true);
        Signals::new(TERMINATING).ok().map(Mutex::new)
    })
}

/// From now on SIGINT, SIGTERM and SIGHUP no longer end the process; they
/// are handed to [`wait_terminating`] instead. Lasts until the process exits.
pub(crate) fn block_terminating() {
    terminating();
}

/// Wait for one of the signals caught since [`block_terminating`]; returns
/// its number. Without that call (or if the handlers could not be
/// installed) it never returns, as nothing will be caught.
pub(crate) fn wait_terminating() -> libc::c_int {
    loop {
        match terminating() {
            Some(signals) => {
                let mut signals = signals.lock().unwrap_or_else(|e| e.into_inner());
                if let Some(sig) = signals.wait().next() {
                    return sig;
                }
            }
            None => std::thread::park(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // One test: the process-wide SIGINT state must not be shared between
    // tests running in parallel.
    #[test]
    fn every_guard_sees_every_interrupt_until_the_last_one_goes() {
        let a = InterruptGuard::block();
        let b = InterruptGuard::block();
        assert!(!a.wait(Duration::from_millis(10)), "no signal yet");
        signal_hook::low_level::raise(SIGINT).expect("raise");
        signal_hook::low_level::raise(SIGINT).expect("raise");
        // Both guards see both signals, one per wait.
        assert!(a.wait(Duration::from_secs(5)));
        assert!(a.wait(Duration::from_secs(5)));
        assert!(!a.wait(Duration::from_millis(10)));
        assert!(b.wait(Duration::from_secs(5)));
        drop(a);
        // With one guard left, SIGINT is still caught, not acted on.
        signal_hook::low_level::raise(SIGINT).expect("raise");
        assert!(b.wait(Duration::from_secs(5)));
        assert!(b.wait(Duration::from_secs(5)));
        let state = sigint_state().expect("handler installed");
        assert!(!state.default_action.load(Ordering::SeqCst));
        drop(b);
        assert!(state.default_action.load(Ordering::SeqCst));
    }
}
