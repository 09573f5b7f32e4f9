//! The TUI's background work: activity windows (holding the stats fd),
//! program images, mixed-mode disassembly, watching an inspected program,
//! and profiles. Everything reaches the UI thread as an [`Event`] on one
//! channel, so the UI blocks on a single receiver and wakes only when
//! something happened.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use ratatui::crossterm::event::Event as TermEvent;

use crate::activity::{self, ActivityRow};
use crate::error::BrrError;
use crate::export::Targets;
use crate::inspect::disasm::CallNames;
use crate::inspect::drilldown::{native_rows, NativeRow};
use crate::inspect::native::NativeImage;
use crate::inspect::profile::ProfileInput;
use crate::model::profile::Profile;
use crate::model::report::Report;
use crate::model::ProgramImage;
use crate::profile::capture::Progress;
use crate::profile::{self, report::ReportOptions};
use crate::session::{self, ProgContext};

use super::history::Shared;

/// Everything the UI thread waits for.
pub(crate) enum Event {
    Input(TermEvent),
    /// The terminal input stream ended (closed terminal).
    InputGone,
    Worker(Box<Msg>),
    /// SIGINT, SIGTERM or SIGHUP.
    Signal(i32),
}

/// Requests from the UI.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Cmd {
    /// Measure one window of `delay` seconds. Any later command ends a
    /// window in flight without a result.
    Measure { delay: f64 },
    /// Read a program's image (and then watch it for unloading).
    Load { id: u32, seq: u64 },
    /// Helper names for mixed mode and the native code for the native
    /// view, beside the image `Load` read (read here only when it was not).
    Disasm { id: u32, seq: u64 },
    /// The drilldown closed: stop watching its program.
    Close,
    /// Save folded stacks and a flame graph of program `id`'s last profile
    /// in the current directory.
    Export { id: u32, profile: Arc<Profile> },
}

/// A finished profile: its report and the drilldown's rows read from it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ProfileDone {
    /// The program's rows, from `report`.
    pub input: ProfileInput,
    /// How the capture was taken, who pays for the program (`t`) and its
    /// hints (`H`), the same the text report gives.
    pub report: Arc<Report>,
    /// The capture itself, for `F` (export).
    pub profile: Arc<Profile>,
    /// The program's sampled native instructions, read when some of its
    /// direct samples have no line record (else empty).
    pub native: Vec<NativeRow>,
}

#[derive(Debug, Clone)]
pub(crate) enum Msg {
    Window {
        rows: Vec<ActivityRow>,
        measured: f64,
    },
    WindowFailed(BrrError),
    Loaded {
        seq: u64,
        result: Result<Arc<ProgramImage>, BrrError>,
    },
    Disasm {
        seq: u64,
        call_names: CallNames,
        /// The decoded JIT code, or why there is none.
        native: Result<Arc<NativeImage>, String>,
    },
    /// The watched program is gone.
    Vanished {
        id: u32,
    },
    Progress {
        seq: u64,
        elapsed: f64,
        samples: u64,
    },
    Profiled {
        seq: u64,
        result: Result<ProfileDone, BrrError>,
    },
    /// Where an export went, or why it failed (one line).
    Exported(Result<String, String>),
}

/// A profile to run for the drilldown.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ProfileJob {
    pub seq: u64,
    pub id: u32,
    pub request: profile::Request,
    pub line_limit: usize,
}

/// How long a finished window is kept open (its last snapshot and the
/// stats fd) for the next window to start from, so that back-to-back
/// windows leave no unmeasured gap and cost one enumeration each; past
/// that, statistics are switched off (paused, drilldown).
const HOLD: Duration = Duration::from_millis(300);
/// How often an inspected program is checked for having been unloaded.
const WATCH_EVERY: Duration = Duration::from_secs(1);
/// How often the context behind the OWNERS, ATTACH and MEMLOCK columns
/// (and the filter by owner) is read while they are shown, and how old an
/// owner scan it accepts: the scan reads every process's fd table, so it
/// runs on its own thread at this slower cadence, never inside a window.
const CONTEXT_EVERY: Duration = Duration::from_secs(5);
/// Progress reports are sent at most this often.
const PROGRESS_EVERY: Duration = Duration::from_millis(200);

pub(crate) struct Worker {
    cmds: Sender<Cmd>,
    events: Sender<Event>,
    profiling: session::Profiling,
    bpffs: PathBuf,
    context: Arc<Context>,
}

impl Worker {
    /// Start the sampling thread. `held` is the start-up window (its
    /// baseline read with statistics on) that the first window measures
    /// from; every window is also recorded into `history`.
    pub(crate) fn spawn(
        events: Sender<Event>,
        held: Option<session::Window>,
        bpffs: PathBuf,
        history: Shared,
    ) -> Worker {
        let (tx, rx) = mpsc::channel();
        let ev = events.clone();
        let root = bpffs.clone();
        let context = Arc::new(Context::default());
        let shared = Arc::clone(&context);
        let sampled = Arc::clone(&context);
        std::thread::spawn(move || context_loop(&shared));
        std::thread::spawn(move || sampler(rx, ev, held, root, &sampled, &history));
        Worker {
            cmds: tx,
            events,
            profiling: session::Profiling::new(),
            bpffs,
            context,
        }
    }

    /// Whether the view shows or filters by what the owner scan finds;
    /// the scan runs only while it does.
    pub(crate) fn want_context(&self, wanted: bool) {
        self.context.wanted.store(wanted, Ordering::Relaxed);
        self.context.ring();
    }

    pub(crate) fn send(&self, cmd: Cmd) {
        let _ = self.cmds.send(cmd);
    }

    /// Run a profile on its own thread (the sampler stays free). A running
    /// one is cancelled first.
    pub(crate) fn profile(&mut self, mut job: ProfileJob) {
        job.request.bpffs = self.bpffs.clone();
        let (seq, id) = (job.seq, job.id);
        let progress = self.events.clone();
        let mut last = Instant::now();
        let on_progress = move |p: Progress| {
            if last.elapsed() >= PROGRESS_EVERY {
                last = Instant::now();
                post(
                    &progress,
                    Msg::Progress {
                        seq,
                        elapsed: p.elapsed.as_secs_f64(),
                        samples: p.samples,
                    },
                );
            }
        };
        // The native view places samples by instruction; the JIT code it
        // reads names the unmapped samples' instructions too.
        let report = session::ReportPlan {
            options: ReportOptions {
                limit: 0,
                line_limit: job.line_limit,
            },
            native: session::Native::Printed,
            keep: Some(id),
        };
        let job = session::Job {
            request: job.request,
            exports: Targets::default(),
            report: Some(report),
        };
        let posted = self.events.clone();
        let then = move |result: crate::error::Result<session::Profiled>| {
            if result.as_ref().is_ok_and(|done| done.cancelled) {
                // Cancelled by the UI: the result is dropped.
                return;
            }
            let result = result.and_then(|done| profile_done(done, id));
            post(&posted, Msg::Profiled { seq, result });
        };
        if let Err(e) = self.profiling.restart(job, on_progress, then) {
            post(
                &self.events,
                Msg::Profiled {
                    seq,
                    result: Err(e),
                },
            );
        }
    }

    pub(crate) fn cancel_profile(&mut self) {
        self.profiling.cancel();
    }
}

/// The drilldown's rows of program `id` from a finished profile.
fn profile_done(mut done: session::Profiled, id: u32) -> Result<ProfileDone, BrrError> {
    let report = match done.take_output()? {
        session::Output::Report(report) => report,
        session::Output::Folded(_) => {
            return Err(BrrError::Failed("the profile wrote folded stacks".into()))
        }
    };
    let unmapped = has_unmapped(&report, id);
    Ok(ProfileDone {
        input: session::drilldown_input(&report, id),
        native: unmapped_native(&done.profile, id, unmapped, done.native.as_ref()),
        report: Arc::new(*report),
        profile: Arc::new(done.profile),
    })
}

/// Whether some direct samples of program `id` fell where no line record
/// is (every sample of a program without line info).
fn has_unmapped(report: &Report, id: u32) -> bool {
    report
        .program(id)
        .is_some_and(|p| p.direct_source_unmapped_samples > 0)
}

/// The native instructions of program `id` that took direct samples, when
/// it `unmapped` some: the drilldown lists them under those samples, named
/// from its decoded JIT `code`, which is kept only then.
fn unmapped_native(
    prof: &Profile,
    id: u32,
    unmapped: bool,
    code: Option<&NativeImage>,
) -> Vec<NativeRow> {
    match prof.programs.iter().find(|p| p.id == id) {
        Some(p) if unmapped => native_rows(&p.native, code),
        _ => Vec::new(),
    }
}

fn post(events: &Sender<Event>, m: Msg) {
    let _ = events.send(Event::Worker(Box::new(m)));
}

enum WindowEnd {
    Done,
    /// A command arrived meanwhile; it is handled next.
    Interrupted(Cmd),
    Disconnected,
}

/// The latest context, shared by its thread and the sampler, and whether
/// the view shows it. Its thread sleeps on `bell` until the view wants the
/// context, the next scan is due or the worker is gone: an idle view
/// wakes it never.
#[derive(Default)]
struct Context {
    latest: Mutex<Option<Arc<ProgContext>>>,
    wanted: AtomicBool,
    gone: AtomicBool,
    bell: Mutex<()>,
    rung: Condvar,
}

impl Context {
    fn lock_bell(&self) -> MutexGuard<'_, ()> {
        self.bell.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Wake the context thread to look at `wanted` and `gone` again (the
    /// flags are set before the bell's lock is taken, so it cannot miss
    /// them).
    fn ring(&self) {
        let _held = self.lock_bell();
        self.rung.notify_all();
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        self.context.gone.store(true, Ordering::Relaxed);
        self.context.ring();
    }
}

/// Refresh the shared context while it is wanted, at most every
/// [`CONTEXT_EVERY`], until the worker is gone.
fn context_loop(shared: &Context) {
    // A failed read keeps the previous context: the columns go stale
    // rather than blank.
    refresh_while_wanted(shared, CONTEXT_EVERY, || {
        ProgContext::read(CONTEXT_EVERY).ok()
    });
}

/// Store what `read` returns in `shared` as soon as it is wanted and then
/// every `every` while it stays wanted; sleep otherwise. Returns when the
/// worker is gone.
fn refresh_while_wanted(
    shared: &Context,
    every: Duration,
    mut read: impl FnMut() -> Option<ProgContext>,
) {
    let mut last: Option<Instant> = None;
    let mut bell = shared.lock_bell();
    while !shared.gone.load(Ordering::Relaxed) {
        if !shared.wanted.load(Ordering::Relaxed) {
            bell = shared
                .rung
                .wait(bell)
                .unwrap_or_else(PoisonError::into_inner);
            continue;
        }
        let wait = last.map_or(Duration::ZERO, |t| every.saturating_sub(t.elapsed()));
        if !wait.is_zero() {
            bell = match shared.rung.wait_timeout(bell, wait) {
                Ok((b, _)) => b,
                Err(e) => e.into_inner().0,
            };
            continue;
        }
        drop(bell);
        last = Some(Instant::now());
        if let Some(c) = read() {
            if let Ok(mut slot) = shared.latest.lock() {
                *slot = Some(Arc::new(c));
            }
        }
        bell = shared.lock_bell();
    }
}

/// One window of `delay` seconds, started from the held window when it is
/// recent enough. Snapshots are brief; while the context is shown, pins
/// and the latest context are added to the rows at the end of the window.
fn measure(
    delay: f64,
    held: &mut Option<session::Window>,
    rx: &Receiver<Cmd>,
    events: &Sender<Event>,
    bpffs: &PathBuf,
    context: &Context,
    history: &Shared,
) -> WindowEnd {
    let window = match held.take() {
        Some(w) if w.started().elapsed() < HOLD => Ok(w),
        _ => session::Window::start(session::BRIEF),
    };
    let window = match window {
        Ok(w) => w,
        Err(e) => return fail(e, delay, rx, events),
    };
    let deadline = window.deadline(delay);
    loop {
        let now = Instant::now();
        if now >= deadline {
            break;
        }
        match rx.recv_timeout(deadline - now) {
            Ok(cmd) => return WindowEnd::Interrupted(cmd),
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => return WindowEnd::Disconnected,
        }
    }
    let (m, next) = match window.finish_and_continue() {
        Ok(r) => r,
        Err(e) => return fail(e, delay, rx, events),
    };
    let mut current = m.current;
    let latest = context.latest.lock().ok().and_then(|c| c.clone());
    // Pins show in the PINNED column and as "(pinned)" owners, both parts
    // of the context.
    if latest.is_some() || context.wanted.load(Ordering::Relaxed) {
        session::attach_prog_pins(&mut current, bpffs);
    }
    if let Some(c) = latest {
        c.apply(&mut current);
    }
    let rows = activity::compute_owned(&m.base, current, true, 0);
    drop(m.base);
    history.lock().record(&rows, m.seconds);
    *held = Some(next);
    post(
        events,
        Msg::Window {
            rows,
            measured: m.seconds,
        },
    );
    WindowEnd::Done
}

/// Report a failed window after waiting one delay, so that the UI's
/// immediate retry does not spin.
fn fail(e: BrrError, delay: f64, rx: &Receiver<Cmd>, events: &Sender<Event>) -> WindowEnd {
    let wait = session::wait_for(delay);
    post(events, Msg::WindowFailed(e));
    match rx.recv_timeout(wait) {
        Ok(cmd) => WindowEnd::Interrupted(cmd),
        Err(RecvTimeoutError::Timeout) => WindowEnd::Done,
        Err(RecvTimeoutError::Disconnected) => WindowEnd::Disconnected,
    }
}

fn sampler(
    rx: Receiver<Cmd>,
    events: Sender<Event>,
    mut held: Option<session::Window>,
    bpffs: PathBuf,
    context: &Context,
    history: &Shared,
) {
    let mut watched: Option<u32> = None;
    // The drilldown's image, read once for `Load` and reused by `Disasm`.
    let mut image: Option<Arc<ProgramImage>> = None;
    let mut pending: Option<Cmd> = None;
    loop {
        let cmd = match pending.take() {
            Some(c) => c,
            None => {
                let timeout = if held.is_some() {
                    Some(HOLD)
                } else if watched.is_some() {
                    Some(WATCH_EVERY)
                } else {
                    None
                };
                let got = match timeout {
                    Some(t) => rx.recv_timeout(t),
                    None => rx.recv().map_err(|_| RecvTimeoutError::Disconnected),
                };
                match got {
                    Ok(c) => c,
                    Err(RecvTimeoutError::Timeout) => {
                        // Nobody asked for the next window: statistics off.
                        held = None;
                        if let Some(id) = watched.filter(|&id| session::program_gone(id)) {
                            watched = None;
                            post(&events, Msg::Vanished { id });
                        }
                        continue;
                    }
                    Err(RecvTimeoutError::Disconnected) => return,
                }
            }
        };
        match cmd {
            Cmd::Measure { delay } => {
                watched = None;
                match measure(delay, &mut held, &rx, &events, &bpffs, context, history) {
                    WindowEnd::Done => {}
                    WindowEnd::Interrupted(c) => {
                        held = None;
                        pending = Some(c);
                    }
                    WindowEnd::Disconnected => return,
                }
            }
            Cmd::Load { id, seq } => {
                held = None;
                let result = session::program_image(id);
                watched = result.is_ok().then_some(id);
                image = result.as_ref().ok().map(Arc::clone);
                post(&events, Msg::Loaded { seq, result });
            }
            Cmd::Disasm { id, seq } => post(&events, disasm(id, seq, &mut image)),
            Cmd::Close => {
                watched = None;
                image = None;
            }
            Cmd::Export { id, profile } => {
                let dir = std::env::current_dir().unwrap_or_default();
                post(&events, Msg::Exported(export(&dir, id, &profile)));
            }
        }
    }
}

/// The mixed and native views' disassembly of program `id`, beside the
/// image `Load` read (kept in `image`), or one read now.
fn disasm(id: u32, seq: u64, image: &mut Option<Arc<ProgramImage>>) -> Msg {
    if image.as_ref().is_none_or(|img| img.program.id != id) {
        *image = session::program_image(id).ok();
    }
    let (call_names, native) = match image {
        Some(img) => session::disassembly(img),
        None => (
            CallNames::default(),
            Err(format!("no eBPF program with id {id}")),
        ),
    };
    Msg::Disasm {
        seq,
        call_names,
        native,
    }
}

/// `F`: `brr-<id>-<unix time>.folded` and `.svg` in `dir` (the current
/// directory).
pub(super) fn export(dir: &std::path::Path, id: u32, profile: &Profile) -> Result<String, String> {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let base = dir.join(format!("brr-{id}-{secs}"));
    let folded = base.with_extension("folded");
    let svg = base.with_extension("svg");
    let targets = crate::export::Targets {
        folded: Some(folded.clone()),
        flamegraph: Some(svg.clone()),
        pprof: None,
    };
    crate::export::write(profile, &targets)
        .map(|_| {
            format!(
                "saved folded stacks to {} and a flame graph to {}",
                folded.display(),
                svg.display()
            )
        })
        .map_err(|e| e.render())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An image whose program id no kernel hands out soon: reading it
    /// again would fail and leave no image.
    fn unreadable(id: u32) -> Arc<ProgramImage> {
        let mut img = ProgramImage::default();
        img.program.id = id;
        Arc::new(img)
    }

    #[test]
    fn the_context_is_read_only_while_wanted_and_the_thread_ends_with_the_worker() {
        use std::sync::atomic::AtomicUsize;
        let shared = Arc::new(Context::default());
        let reads = Arc::new(AtomicUsize::new(0));
        let (ctx, n) = (Arc::clone(&shared), Arc::clone(&reads));
        let thread = std::thread::spawn(move || {
            refresh_while_wanted(&ctx, Duration::from_millis(150), || {
                n.fetch_add(1, Ordering::SeqCst);
                Some(ProgContext::default())
            });
        });
        std::thread::sleep(Duration::from_millis(200));
        assert_eq!(reads.load(Ordering::SeqCst), 0, "read while not wanted");
        shared.wanted.store(true, Ordering::Relaxed);
        shared.ring();
        let wait_for = |at_least: usize| {
            let t = Instant::now();
            while reads.load(Ordering::SeqCst) < at_least {
                assert!(t.elapsed() < Duration::from_secs(10), "no read");
                std::thread::sleep(Duration::from_millis(5));
            }
        };
        wait_for(1);
        assert!(shared.latest.lock().unwrap().is_some());
        // Still wanted: read again after `every`.
        wait_for(2);
        shared.wanted.store(false, Ordering::Relaxed);
        shared.ring();
        std::thread::sleep(Duration::from_millis(50));
        let settled = reads.load(Ordering::SeqCst);
        std::thread::sleep(Duration::from_millis(400));
        assert_eq!(
            reads.load(Ordering::SeqCst),
            settled,
            "read while not wanted"
        );
        shared.gone.store(true, Ordering::Relaxed);
        shared.ring();
        thread.join().unwrap();
    }

    #[test]
    fn disasm_uses_the_image_load_read() {
        let id = u32::MAX - 7;
        let loaded = unreadable(id);
        let mut image = Some(Arc::clone(&loaded));
        let msg = disasm(id, 3, &mut image);
        assert!(matches!(msg, Msg::Disasm { seq: 3, .. }));
        let kept = image.expect("the loaded image is kept");
        assert!(Arc::ptr_eq(&kept, &loaded), "the image was read again");
        // Another program's disassembly reads its own image.
        let mut image = Some(loaded);
        let _ = disasm(id - 1, 4, &mut image);
        assert!(image.is_none());
    }
}
