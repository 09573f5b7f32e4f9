//! `brr cost`: one capture of every CPU with callchains, inside a window
//! that holds statistics on, so that each program's samples (its own,
//! its hook's dispatch, the statistics' clock reads) stand beside its
//! runs in the same seconds.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use super::context::SCAN_NOW;
use super::{profile_interruptible, Collector, Job, Profiled, Profiling, Refused, Window, BRIEF};
use crate::error::Result;
use crate::export::Targets;
use crate::kernel::owners::{self, Owners};
use crate::model::cost::{Cost, StatsHolder};
use crate::model::profile::{CallGraph, Profile};
use crate::model::report::Report;
use crate::profile::capture::Progress;
use crate::profile::cost::{self, Hooked};
use crate::profile::Request;
use crate::session::profiling::Ticket;

/// The capture a cost measurement takes: kernel callchains (dispatch is
/// only seen in them), by frame pointers.
pub(crate) fn cost_request(mut request: Request) -> Request {
    request.kernel_samples = true;
    request.call_graph = CallGraph::Fp;
    request
}

/// Measure what each program costs the host for `request`'s window.
/// Ctrl-C ends the capture early; the figures cover the time measured.
pub(crate) fn cost(request: Request, collector: &Arc<Collector>) -> Result<Cost> {
    let window = Window::start(collector, BRIEF)?;
    let done = profile_interruptible(cost_job(request), Arc::clone(collector));
    measured(window, done, collector)
}

/// [`cost`] as a job of `profiling` (one capture at a time, with
/// profiles; its cancel ends the capture early): `then` gets the figures
/// on the job's thread.
pub(crate) fn start_cost<R: Send + 'static>(
    profiling: &Profiling,
    collector: &Arc<Collector>,
    request: Request,
    on_progress: impl FnMut(Progress) + Send + 'static,
    then: impl FnOnce(Result<Cost>) -> R + Send + 'static,
) -> std::result::Result<Ticket<R>, Refused> {
    if let Some(b) = profiling.busy() {
        return Err(Refused::Busy(b));
    }
    let window = Window::start(collector, BRIEF).map_err(Refused::Failed)?;
    let c = Arc::clone(collector);
    profiling.start(cost_job(request), on_progress, move |done| {
        then(measured(window, done, &c))
    })
}

fn cost_job(request: Request) -> Job {
    Job {
        request: cost_request(request),
        exports: Targets::default(),
        report: None,
    }
}

/// The figures of a capture `done` inside `window`.
fn measured(window: Window, done: Result<Profiled>, collector: &Collector) -> Result<Cost> {
    let mut m = window.finish(collector)?;
    let done = done?;
    // One owner scan gives both the programs' context and who else holds
    // statistics on.
    let scan = collector.owners(SCAN_NOW);
    collector.prog_context(JUST_SCANNED)?.apply(&mut m.current);
    let base: HashMap<u32, u64> = m.base.iter().map(|c| (c.id, c.run_count)).collect();
    let seconds = m.seconds.max(f64::MIN_POSITIVE);
    let progs: Vec<Hooked> = m
        .current
        .into_iter()
        .map(|p| {
            // A program loaded during the window ran only from then on.
            let runs = p
                .run_count
                .saturating_sub(base.get(&p.id).copied().unwrap_or(0));
            Hooked {
                id: p.id,
                name: p.name.to_string(),
                full_name: p.full_name.to_string(),
                prog_type: p.prog_type.to_string(),
                attached: p.attached,
                runs,
                runs_per_sec: runs as f64 / seconds,
            }
        })
        .collect();
    let args =
        crate::kernel::btf::kernel_tracepoint_args(&cost::args_wanted(&done.profile, &progs));
    Ok(cost::with_facts(
        cost::build(&done.profile, &progs, &args),
        stats_holders(&scan),
    ))
}

/// An owner scan at most this old is the one [`measured`] has just taken.
const JUST_SCANNED: Duration = Duration::from_secs(10);

/// The processes other than this one that hold statistics on (the owner
/// scan leaves brr's own pid out), with how long each has run.
fn stats_holders(owners: &Owners) -> Vec<StatsHolder> {
    owners
        .stats
        .iter()
        .map(|h| StatsHolder {
            running_secs: owners::running_secs(std::path::Path::new("/proc"), h.pid),
            pid: h.pid,
            comm: h.comm.clone(),
        })
        .collect()
}

/// Tie each hook's dispatch samples in `profile` (a capture with kernel
/// callchains) to the programs of `report`, as `brr cost` does. A profile
/// holds no statistics, so it has no runs: a program counts as having run
/// when it has samples of its own, and a hook shared by several such
/// programs is split by those samples. Dispatch of a hook none of whose
/// programs was sampled stays untied; no NS/RUN is given.
pub(crate) fn tie_dispatch(
    profile: &Profile,
    report: &mut Report,
    collector: &Collector,
) -> Result<()> {
    let tied = match profile.dispatch.is_empty() || report.programs.is_empty() {
        true => HashMap::new(),
        false => tied_dispatch(profile, collector)?,
    };
    for p in &mut report.programs {
        let n = tied.get(&p.id).copied().unwrap_or(0);
        p.dispatch_samples = Some(n);
        p.dispatch_cpu_percent = Some(profile.cpu_percent(n));
    }
    Ok(())
}

/// Each program's dispatch samples in `profile`, by ID.
fn tied_dispatch(profile: &Profile, collector: &Collector) -> Result<HashMap<u32, u64>> {
    let mut listed = collector.programs_recalled(BRIEF)?;
    collector.prog_context(SCAN_NOW)?.apply(&mut listed);
    let own: HashMap<u32, u64> = profile
        .programs
        .iter()
        .map(|p| (p.id, p.inclusive_samples()))
        .collect();
    let progs: Vec<Hooked> = listed
        .into_iter()
        .map(|p| Hooked {
            id: p.id,
            name: p.name.to_string(),
            full_name: p.full_name.to_string(),
            prog_type: p.prog_type.to_string(),
            attached: p.attached,
            runs: own.get(&p.id).copied().unwrap_or(0),
            runs_per_sec: 0.0,
        })
        .collect();
    let args = crate::kernel::btf::kernel_tracepoint_args(&cost::args_wanted(profile, &progs));
    Ok(cost::build(profile, &progs, &args)
        .programs
        .iter()
        .map(|p| (p.id, p.samples.dispatch))
        .collect())
}
