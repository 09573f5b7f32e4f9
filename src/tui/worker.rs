//! The TUI's background work: one thread asks the collector for activity
//! windows and their object context (one harvest per refresh), program
//! images and mixed-mode disassembly, and watches an inspected program;
//! profiles run on their own thread. Everything reaches the UI thread as
//! an [`Event`] on one channel, so the UI blocks on a single receiver and
//! wakes only when something happened.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::Arc;
use std::time::{Duration, Instant};

use ratatui::crossterm::event::Event as TermEvent;

use crate::activity::ActivityRow;
use crate::error::BrrError;
use crate::export::Targets;
use crate::inspect::disasm::CallNames;
use crate::inspect::drilldown::{native_rows, NativeRow};
use crate::inspect::native::NativeImage;
use crate::inspect::profile::ProfileInput;
use crate::model::cost::Cost;
use crate::model::profile::Profile;
use crate::model::report::Report;
use crate::model::ProgramImage;
use crate::profile::capture::Progress;
use crate::profile::{self, report::ReportOptions};
use crate::session::live::Live;
use crate::session::{self, Collector};

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
    CostProgress {
        seq: u64,
        elapsed: f64,
    },
    Costed {
        seq: u64,
        result: Result<Cost, BrrError>,
    },
}

/// A cost capture for the cost pane.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct CostJob {
    pub seq: u64,
    pub request: profile::Request,
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
/// runs at this slower cadence, while a window is open (after the
/// snapshot that starts it), never delaying a snapshot.
const CONTEXT_EVERY: Duration = Duration::from_secs(5);
/// Progress reports are sent at most this often.
const PROGRESS_EVERY: Duration = Duration::from_millis(200);

pub(crate) struct Worker {
    cmds: Sender<Cmd>,
    events: Sender<Event>,
    profiling: session::Profiling,
    collector: Arc<Collector>,
    /// Whether the view shows the context; the worker reads it at each
    /// window's start and end.
    wanted: Arc<AtomicBool>,
}

impl Worker {
    /// Start the worker thread, reading through `collector`. `held` is the
    /// start-up window (its baseline read with statistics on) that the
    /// first window measures from; every window is also recorded into
    /// `history`.
    pub(crate) fn spawn(
        events: Sender<Event>,
        held: Option<session::Window>,
        collector: Arc<Collector>,
        history: Shared,
    ) -> Worker {
        let (tx, rx) = mpsc::channel();
        let ev = events.clone();
        let wanted = Arc::new(AtomicBool::new(false));
        let live = Live::new(Arc::clone(&collector), held, HOLD, CONTEXT_EVERY);
        let shown = Arc::clone(&wanted);
        std::thread::spawn(move || sampler(rx, ev, live, &shown, &history));
        Worker {
            cmds: tx,
            events,
            profiling: session::Profiling::new(Arc::clone(&collector)),
            collector,
            wanted,
        }
    }

    /// Whether the view shows or filters by what the owner scan finds;
    /// the scan runs only while it does.
    pub(crate) fn want_context(&self, wanted: bool) {
        self.wanted.store(wanted, Ordering::Relaxed);
    }

    pub(crate) fn send(&self, cmd: Cmd) {
        let _ = self.cmds.send(cmd);
    }

    /// Run a profile on its own thread (the sampler stays free). A running
    /// one is cancelled first.
    pub(crate) fn profile(&mut self, job: ProfileJob) {
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
                // The drilldown places each record's samples itself.
                merge_lines: false,
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

    /// Run a cost capture through the session on the profile job (a
    /// running profile is cancelled first).
    pub(crate) fn cost(&mut self, job: CostJob) {
        let seq = job.seq;
        self.profiling.cancel();
        let progress = self.events.clone();
        let mut last = Instant::now();
        let on_progress = move |p: Progress| {
            if last.elapsed() >= PROGRESS_EVERY {
                last = Instant::now();
                let elapsed = p.elapsed.as_secs_f64();
                post(&progress, Msg::CostProgress { seq, elapsed });
            }
        };
        let posted = self.events.clone();
        let then = move |result: crate::error::Result<Cost>| {
            post(&posted, Msg::Costed { seq, result });
        };
        let started = session::cost::start_cost(
            &self.profiling,
            &self.collector,
            job.request,
            on_progress,
            then,
        );
        if let Err(refused) = started {
            let e = match refused {
                session::Refused::Failed(e) => e,
                session::Refused::Busy(_) => {
                    BrrError::Failed("a profile is still ending; press C again".into())
                }
            };
            post(
                &self.events,
                Msg::Costed {
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

/// One window of `delay` seconds from `live`, waiting for its end on the
/// command channel: any command ends it without a result.
fn measure(
    delay: f64,
    live: &mut Live,
    rx: &Receiver<Cmd>,
    events: &Sender<Event>,
    wanted: &AtomicBool,
    history: &Shared,
) -> WindowEnd {
    let mut end = WindowEnd::Done;
    let harvest = live.window(
        delay,
        &|| wanted.load(Ordering::Relaxed),
        &mut |deadline| loop {
            let now = Instant::now();
            if now >= deadline {
                return false;
            }
            match rx.recv_timeout(deadline - now) {
                Ok(cmd) => end = WindowEnd::Interrupted(cmd),
                Err(RecvTimeoutError::Timeout) => continue,
                Err(RecvTimeoutError::Disconnected) => end = WindowEnd::Disconnected,
            }
            return true;
        },
    );
    match harvest {
        None => end,
        Some(Err(e)) => fail(e, delay, rx, events),
        Some(Ok(h)) => {
            history.lock().record(&h.rows, h.measured);
            post(
                events,
                Msg::Window {
                    rows: h.rows,
                    measured: h.measured,
                },
            );
            WindowEnd::Done
        }
    }
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

/// The worker thread: windows while the view asks for them, and what the
/// drilldown needs, until the UI is gone.
fn sampler(
    rx: Receiver<Cmd>,
    events: Sender<Event>,
    mut live: Live,
    wanted: &AtomicBool,
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
                let timeout = if live.holding() {
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
                        live.release();
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
                match measure(delay, &mut live, &rx, &events, wanted, history) {
                    WindowEnd::Done => {}
                    WindowEnd::Interrupted(c) => {
                        live.release();
                        pending = Some(c);
                    }
                    WindowEnd::Disconnected => return,
                }
            }
            Cmd::Load { id, seq } => {
                live.release();
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
