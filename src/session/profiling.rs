//! The one way to profile: a [`Profiling`] value runs one job at a time
//! (capture, its workloads, its export files and its Report) on a thread of
//! its own, reports progress, answers whether it is busy, and cancels the
//! capture for whoever asks (Ctrl-C in the CLI, the TUI, the exporter's
//! SIGTERM). Also the signals that end the long-running views.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::error::{BrrError, Result};
use crate::export::Targets;
use crate::inspect::native::NativeImage;
use crate::model::profile as data;
use crate::model::report::{Report, SampledWorkloads};
use crate::profile::capture::{Progress, StopSignal};
use crate::profile::report::ReportOptions;
use crate::profile::{self, Request};
use crate::sys::signal::InterruptGuard;

use super::Collector;

/// Which sampled native instructions a [`report_keeping`] lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Native {
    /// None: no JIT code is read.
    Off,
    /// Only those a `--line-limit` table prints, with their text, the
    /// rest counted in its Other row (a text report).
    Table,
    /// Each with its text only where a `--line-limit` table prints it.
    Printed,
    /// Each with its text (JSON and CSV list them all).
    Every,
}

/// The Report of a capture, built once for every view of it: the rows,
/// payers (named with `workloads`, the containers and pods the samples
/// ran in) and hints, and with `native` the sampled instructions. Also
/// the whole decoded JIT code of program `keep` when it has samples no
/// source line maps (the drilldown names their instructions), from the
/// same read of its code.
pub(crate) fn report_keeping(
    profile: &data::Profile,
    opts: &ReportOptions,
    workloads: &SampledWorkloads,
    native: Native,
    keep: Option<u32>,
) -> (Report, Option<NativeImage>) {
    let mut report = profile::report::build_with(profile, opts, workloads);
    if native == Native::Off {
        return (report, None);
    }
    let keep = keep.filter(|&id| {
        report
            .program(id)
            .is_some_and(|p| p.direct_source_unmapped_samples > 0)
    });
    let code = super::image::annotate_keeping(&mut report, profile, native, keep);
    (report, code)
}

/// The Report a job builds from its capture.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ReportPlan {
    pub options: ReportOptions,
    pub native: Native,
    /// Keep the decoded JIT code of this program (see [`report_keeping`]).
    pub keep: Option<u32>,
}

/// What one profile job does.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Job {
    pub request: Request,
    /// The files written from the capture; folded stacks to stdout (`-`)
    /// replace the report.
    pub exports: Targets,
    /// The Report to build, if any.
    pub report: Option<ReportPlan>,
}

/// A finished job.
#[derive(Debug)]
pub(crate) struct Profiled {
    pub profile: data::Profile,
    /// The containers and pods its samples ran in, named once for the
    /// report and the pprof labels.
    pub workloads: SampledWorkloads,
    /// The folded stacks when they go to stdout (then there is no report).
    pub folded: Option<String>,
    pub report: Option<Report>,
    /// The decoded JIT code the plan asked to keep.
    pub native: Option<NativeImage>,
    /// The job was cancelled (its capture may have ended early).
    pub cancelled: bool,
    /// The files that could not be written after the capture (the report
    /// is still made).
    pub write_failures: Vec<BrrError>,
}

/// What a job that planned a report gives to print.
pub(crate) enum Output {
    /// The folded stacks, in place of the report.
    Folded(String),
    Report(Box<Report>),
}

impl Profiled {
    /// The folded stacks for stdout, else the report (taken out of the
    /// job's result).
    pub(crate) fn take_output(&mut self) -> Result<Output> {
        match (self.folded.take(), self.report.take()) {
            (Some(text), _) => Ok(Output::Folded(text)),
            (None, Some(report)) => Ok(Output::Report(Box::new(report))),
            (None, None) => Err(BrrError::Failed("the profile job planned no report".into())),
        }
    }
}

/// The job in progress.
struct Running {
    stop: StopSignal,
    /// When its capture is due to end.
    ends: Instant,
    /// Its capture is over: cancelling it changes nothing any more.
    captured: AtomicBool,
}

/// The job that runs, if one does, and the signal that it ended.
#[derive(Default)]
struct SlotInner {
    job: Mutex<Option<Arc<Running>>>,
    /// Notified when a job's thread frees the slot.
    freed: Condvar,
}

type Slot = Arc<SlotInner>;

fn lock(slot: &Slot) -> std::sync::MutexGuard<'_, Option<Arc<Running>>> {
    slot.job.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Whether the job in `slot` was cancelled and is only ending.
fn is_ending(slot: &Option<Arc<Running>>) -> bool {
    slot.as_ref().is_some_and(|r| r.stop.is_cancelled())
}

/// Another job is running; its capture is due to end at `ends`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Busy {
    pub ends: Instant,
}

/// Why a job did not start.
#[derive(Debug)]
pub(crate) enum Refused {
    Busy(Busy),
    Failed(BrrError),
}

/// Profiles, one job at a time, each asking `collector` for the context
/// of what it sampled.
pub(crate) struct Profiling {
    collector: Arc<Collector>,
    running: Slot,
}

/// A started job: [`Ticket::finish`] waits for what its `then` returned.
pub(crate) struct Ticket<R> {
    thread: JoinHandle<R>,
}

impl<R> Ticket<R> {
    /// Wait for the job to end.
    pub(crate) fn finish(self) -> Result<R> {
        self.thread
            .join()
            .map_err(|_| BrrError::Failed("the profile thread has stopped".into()))
    }
}

impl Profiling {
    pub(crate) fn new(collector: Arc<Collector>) -> Profiling {
        Profiling {
            collector,
            running: Slot::default(),
        }
    }

    /// Start `job` unless one runs. `on_progress` hears of the capture
    /// after each sweep; `then` gets the result on the job's thread, and
    /// the job counts as running until it returns.
    pub(crate) fn start<R: Send + 'static>(
        &self,
        job: Job,
        on_progress: impl FnMut(Progress) + Send + 'static,
        then: impl FnOnce(Result<Profiled>) -> R + Send + 'static,
    ) -> std::result::Result<Ticket<R>, Refused> {
        let mut slot = lock(&self.running);
        if let Some(r) = slot.as_ref() {
            return Err(Refused::Busy(Busy { ends: r.ends }));
        }
        let running = Arc::new(Running {
            stop: StopSignal::new(),
            ends: Instant::now() + super::wait_for(job.request.duration),
            captured: AtomicBool::new(false),
        });
        let thread = spawn(
            job,
            Arc::clone(&self.collector),
            Arc::clone(&running),
            Arc::clone(&self.running),
            on_progress,
            then,
        )
        .map_err(Refused::Failed)?;
        *slot = Some(running);
        Ok(Ticket { thread })
    }

    /// [`Profiling::start`], cancelling the job that runs first (it ends
    /// on its own thread).
    pub(crate) fn restart<R: Send + 'static>(
        &self,
        job: Job,
        on_progress: impl FnMut(Progress) + Send + 'static,
        then: impl FnOnce(Result<Profiled>) -> R + Send + 'static,
    ) -> Result<Ticket<R>> {
        if let Some(r) = lock(&self.running).take() {
            r.stop.cancel();
            // The slot no longer holds a job that is ending.
            self.running.freed.notify_all();
        }
        match self.start(job, on_progress, then) {
            Ok(t) => Ok(t),
            Err(Refused::Failed(e)) => Err(e),
            Err(Refused::Busy(_)) => {
                Err(BrrError::Failed("another profile started meanwhile".into()))
            }
        }
    }

    /// Wait, for `at_most`, while the running job was cancelled and is
    /// only writing up what it sampled; true when none is ending now.
    pub(crate) fn wait_while_ending(&self, at_most: Duration) -> bool {
        let slot = lock(&self.running);
        let (slot, _) = self
            .running
            .freed
            .wait_timeout_while(slot, at_most, |s| is_ending(s))
            .unwrap_or_else(PoisonError::into_inner);
        !is_ending(&slot)
    }

    /// When the running job's capture is due to end, if one runs.
    pub(crate) fn busy(&self) -> Option<Busy> {
        lock(&self.running).as_ref().map(|r| Busy { ends: r.ends })
    }

    /// End the running job's capture now (what was sampled is kept);
    /// false when no capture was running or it was cancelled already.
    pub(crate) fn cancel(&self) -> bool {
        let slot = lock(&self.running);
        let Some(r) = slot.as_ref() else {
            return false;
        };
        if r.captured.load(Ordering::SeqCst) || r.stop.is_cancelled() {
            return false;
        }
        r.stop.cancel();
        true
    }
}

/// The job's thread: run it, hand the result to `then`, and free the slot
/// (unless a newer job took it).
fn spawn<R: Send + 'static>(
    job: Job,
    collector: Arc<Collector>,
    running: Arc<Running>,
    slot: Slot,
    mut on_progress: impl FnMut(Progress) + Send + 'static,
    then: impl FnOnce(Result<Profiled>) -> R + Send + 'static,
) -> Result<JoinHandle<R>> {
    let body = move || {
        let _free = Free {
            slot,
            running: Arc::clone(&running),
        };
        then(run(&job, &collector, &running, &mut on_progress))
    };
    std::thread::Builder::new()
        .name("brr-profile".into())
        .spawn(body)
        .map_err(|e| BrrError::Failed(format!("cannot start the profile thread: {e}")))
}

/// Frees the slot of `running` when dropped.
struct Free {
    slot: Slot,
    running: Arc<Running>,
}

impl Drop for Free {
    fn drop(&mut self) {
        let mut slot = lock(&self.slot);
        if slot.as_ref().is_some_and(|r| Arc::ptr_eq(r, &self.running)) {
            *slot = None;
            self.slot.freed.notify_all();
        }
    }
}

/// Capture, name the workloads, write the export files, build the Report.
fn run(
    job: &Job,
    collector: &Collector,
    running: &Running,
    progress: &mut dyn FnMut(Progress),
) -> Result<Profiled> {
    // A file that cannot be written fails the job before it samples.
    let files = job.exports.open()?;
    let captured = profile::run(&job.request, collector, &running.stop, progress);
    running.captured.store(true, Ordering::SeqCst);
    let profile = match captured {
        Ok(p) => p,
        Err(e) => {
            files.discard();
            return Err(e);
        }
    };
    let workloads = collector.workloads(&profile);
    let written = crate::export::write_opened(&profile, files, &workloads);
    let folded = written.stdout;
    let (report, native) = match job.report.filter(|_| folded.is_none()) {
        Some(plan) => {
            let (mut report, native) =
                report_keeping(&profile, &plan.options, &workloads, plan.native, plan.keep);
            if job.request.kernel_samples {
                super::cost::tie_dispatch(&profile, &mut report, collector)?;
            }
            (Some(report), native)
        }
        None => (None, None),
    };
    Ok(Profiled {
        profile,
        workloads,
        folded,
        report,
        native,
        cancelled: running.stop.is_cancelled(),
        write_failures: written.failed,
    })
}

/// Run `job` to its end, the first Ctrl-C ending its capture early (the
/// partial profile is written and reported as usual) and any later one
/// exiting with 130, as an uncaught SIGINT would.
pub(crate) fn profile_interruptible(job: Job, collector: Arc<Collector>) -> Result<Profiled> {
    // Caught from here on, so a Ctrl-C before the watcher runs is not lost.
    let guard = InterruptGuard::block();
    let profiling = Arc::new(Profiling::new(collector));
    let ticket = profiling.restart(job, |_| {}, |done| done)?;
    let watched = Arc::clone(&profiling);
    // Detached: it lives until the process exits.
    std::thread::spawn(move || loop {
        if guard.wait(Duration::from_secs(3600)) && !watched.cancel() {
            std::process::exit(130);
        }
    });
    ticket.finish()?
}

/// The signals that end the interactive view: SIGINT (`kill -INT`; in raw
/// mode Ctrl-C is a key), SIGTERM and SIGHUP (a closed terminal).
pub(crate) struct Terminations(());

impl Terminations {
    /// Catch the terminating signals from now on; they no longer kill the
    /// process, so the caller must act on [`Terminations::wait`].
    pub(crate) fn catch() -> Result<Terminations> {
        crate::sys::signal::block_terminating();
        Ok(Terminations(()))
    }

    /// Block until one of the signals arrives; returns its number.
    pub(crate) fn wait(&mut self) -> i32 {
        crate::sys::signal::wait_terminating()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;

    fn collector() -> Arc<Collector> {
        let nowhere = std::path::Path::new("/nonexistent");
        Arc::new(Collector::new(nowhere, nowhere))
    }

    /// A job that fails before sampling anything: no program has this ID.
    fn job() -> Job {
        Job {
            request: Request {
                event: profile::Event::Auto,
                duration: 30.0,
                frequency: 99,
                kernel_samples: false,
                call_graph: profile::CallGraph::Fp,
                pages: None,
                drain_ms: None,
                program_ids: vec![u32::MAX],
                pid: None,
            },
            exports: Targets::default(),
            report: None,
        }
    }

    /// Start a job whose answer is being made until the sender returned
    /// is used or dropped: the job counts as running meanwhile. It gives
    /// whether the job failed.
    fn held(profiling: &Profiling) -> (mpsc::Sender<()>, Ticket<bool>) {
        let (release, held) = mpsc::channel::<()>();
        let then = move |done: Result<Profiled>| {
            let _ = held.recv();
            done.is_err()
        };
        let ticket = profiling
            .start(job(), |_| {}, then)
            .expect("nothing runs yet");
        (release, ticket)
    }

    #[test]
    fn one_job_at_a_time_busy_until_its_answer_is_made() {
        let profiling = Profiling::new(collector());
        assert!(profiling.busy().is_none());
        let started = Instant::now();
        let (release, first) = held(&profiling);
        let busy = profiling.busy().expect("busy while the job runs");
        assert!(busy.ends >= started + Duration::from_secs(30));
        match profiling.start(job(), |_| {}, |_| ()) {
            Err(Refused::Busy(b)) => assert_eq!(b, busy),
            _ => panic!("a second job started while one runs"),
        }
        release.send(()).unwrap();
        assert!(first.finish().unwrap(), "no such program: an error");
        assert!(profiling.busy().is_none(), "free again once it answered");
    }

    #[test]
    fn cancel_ends_only_a_capture_in_progress_and_restart_replaces_the_job() {
        let profiling = Profiling::new(collector());
        assert!(!profiling.cancel(), "nothing to cancel");
        let (release, old) = held(&profiling);
        // Its capture failed at once, so it is over: a cancel now is a
        // second Ctrl-C.
        let t = Instant::now();
        while !lock(&profiling.running)
            .as_ref()
            .is_some_and(|r| r.captured.load(Ordering::SeqCst))
        {
            assert!(
                t.elapsed() < Duration::from_secs(10),
                "the capture never ended"
            );
            std::thread::sleep(Duration::from_millis(1));
        }
        assert!(!profiling.cancel());
        let new = profiling.restart(job(), |_| {}, |_| ()).unwrap();
        new.finish().unwrap();
        assert!(profiling.busy().is_none());
        // The replaced job ends on its own and frees no one else's slot.
        let (again, third) = held(&profiling);
        release.send(()).unwrap();
        assert!(old.finish().unwrap());
        assert!(profiling.busy().is_some(), "the old job freed the new slot");
        drop(again);
        assert!(third.finish().unwrap());
    }

    /// A request after a cancel waits for the cancelled job's answer,
    /// and is woken when it is made, not when the wait times out.
    #[test]
    fn a_new_request_waits_for_a_cancelled_job_to_end() {
        let profiling = Profiling::new(collector());
        assert!(profiling.wait_while_ending(Duration::ZERO), "nothing runs");
        let (release, old) = held(&profiling);
        assert!(
            profiling.wait_while_ending(Duration::from_millis(10)),
            "a job that was not cancelled is not ending"
        );
        lock(&profiling.running).as_ref().unwrap().stop.cancel();
        assert!(
            !profiling.wait_while_ending(Duration::from_millis(50)),
            "it holds the slot until its answer is made"
        );
        let t = Instant::now();
        std::thread::scope(|s| {
            let waiter = s.spawn(|| profiling.wait_while_ending(Duration::from_secs(30)));
            std::thread::sleep(Duration::from_millis(50));
            release.send(()).unwrap();
            assert!(waiter.join().unwrap());
        });
        assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
        assert!(old.finish().unwrap());
        assert!(profiling.busy().is_none());
    }

    #[test]
    fn the_collector_names_tasks_as_they_are_now() {
        let c = collector();
        let me = std::fs::read_to_string("/proc/self/comm").unwrap();
        let comm = |pid| profile::Context::comm(&*c, pid);
        assert_eq!(comm(std::process::id()).as_deref(), Some(me.trim_end()));
        assert_eq!(comm(u32::MAX), None, "no such task");
    }
}
