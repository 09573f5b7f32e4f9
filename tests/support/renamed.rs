//! A raw tracepoint program on `task_rename`, which nothing else on a
//! test host uses, and a thread that fires it with prctl(PR_SET_NAME)
//! until the fixture is dropped: a program whose hook dispatch shows in
//! kernel callchains, for the views that report dispatch.

use std::io;
use std::os::fd::OwnedFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

use super::insn::*;
use super::{load_program, sys, LoadedProg, ProgBuilder};

/// The program, attached and fired; detached when dropped.
pub(crate) struct RenameFixture {
    pub prog: LoadedProg,
    _link: OwnedFd,
    stop: Arc<AtomicBool>,
    firing: Option<JoinHandle<()>>,
}

impl RenameFixture {
    /// Load `r0 = 0; exit` as `name`, attach it to `task_rename` and start
    /// firing it.
    pub(crate) fn start(name: &str) -> io::Result<Self> {
        let mut b = ProgBuilder::new();
        b.emit(mov64_imm(R0, 0));
        b.emit(exit());
        let prog = load_program(sys::BPF_PROG_TYPE_RAW_TRACEPOINT, name, &b)?;
        let link = sys::raw_tracepoint_open(prog.fd(), "task_rename")?;
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let firing = std::thread::spawn(move || {
            let names = [c"brr-rename-a", c"brr-rename-b"];
            while !flag.load(Ordering::Relaxed) {
                for n in names {
                    // SAFETY: PR_SET_NAME reads a NUL-terminated string
                    // that outlives the call.
                    unsafe { libc::prctl(libc::PR_SET_NAME, n.as_ptr()) };
                }
            }
        });
        Ok(Self {
            prog,
            _link: link,
            stop,
            firing: Some(firing),
        })
    }
}

impl Drop for RenameFixture {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.firing.take() {
            let _ = t.join();
        }
    }
}
