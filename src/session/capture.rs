//! A profile capture that the first Ctrl-C ends early, the one Report every
//! view of it reads, and the signals that end the long-running views (the
//! TUI, the exporter).

use std::sync::Arc;
use std::time::Duration;

use crate::error::Result;
use crate::inspect::native::NativeImage;
use crate::model::profile as data;
use crate::model::report::{Report, SampledWorkloads};
use crate::profile::report::ReportOptions;
use crate::profile::{self, capture::StopSignal};
use crate::sys::signal::InterruptGuard;

/// Which sampled native instructions a [`report`] lists.
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
/// ran in) and hints, and with `native` the sampled instructions.
pub(crate) fn report(
    profile: &data::Profile,
    opts: &ReportOptions,
    workloads: &SampledWorkloads,
    native: Native,
) -> Report {
    report_keeping(profile, opts, workloads, native, None).0
}

/// [`report`], and the whole decoded JIT code of program `keep` when it
/// has samples no source line maps (the drilldown names their
/// instructions), from the same read of its code.
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

/// One capture in which the first Ctrl-C ends sampling early (the partial
/// profile is reported as usual) and a second one exits with 130.
pub(crate) fn capture(req: &profile::Request) -> Result<data::Profile> {
    // Caught from here on, so a Ctrl-C before the watcher runs is not lost.
    let guard = InterruptGuard::block();
    let stop = Arc::new(StopSignal::new());
    let watcher_stop = Arc::clone(&stop);
    // Detached: it lives until the process exits.
    std::thread::spawn(move || loop {
        if guard.wait(Duration::from_secs(3600)) {
            if watcher_stop.is_cancelled() {
                std::process::exit(130);
            }
            watcher_stop.cancel();
        }
    });
    let profile = profile::run(req, &stop, &mut |_| {});
    // The capture is over and the watcher keeps catching Ctrl-C: let the
    // next one end brr at once, as an uncaught SIGINT would.
    stop.cancel();
    profile
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
