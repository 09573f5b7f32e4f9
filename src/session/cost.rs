//! `brr cost`: one capture of every CPU with callchains, inside a window
//! that holds statistics on, so that each program's samples (its own,
//! its hook's dispatch, the statistics' clock reads) stand beside its
//! runs in the same seconds.

use std::collections::HashMap;
use std::sync::Arc;

use super::context::SCAN_NOW;
use super::{profile_interruptible, Collector, Job, Window, BRIEF};
use crate::error::Result;
use crate::export::Targets;
use crate::model::cost::Cost;
use crate::model::profile::CallGraph;
use crate::profile::cost::{self, Hooked};
use crate::profile::Request;

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
    let job = Job {
        request: cost_request(request),
        exports: Targets::default(),
        report: None,
    };
    let done = profile_interruptible(job, Arc::clone(collector));
    let mut m = window.finish(collector)?;
    let done = done?;
    collector.prog_context(SCAN_NOW)?.apply(&mut m.current);
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
    Ok(cost::build(&done.profile, &progs, &args))
}
