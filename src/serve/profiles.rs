//! Profiles over HTTP (`brr exporter --serve-profiles`): `GET
//! /debug/pprof/profile?seconds=N`, the path and query continuous
//! profilers (Parca, Grafana Alloy's `pyroscope.scrape`, `go tool pprof`)
//! pull CPU profiles from. Each request is one capture of N seconds with
//! the helper and kernel frames under each BPF line, answered as the same
//! gzipped `profile.proto` that `brr profile --pprof` writes, its samples
//! labelled with their containers and pods.
//!
//! Captures run one at a time as jobs of the session's [`Profiling`], on a
//! thread of their own (the HTTP connection threads have small stacks): a
//! request that comes while one runs gets 429 with `Retry-After`, and
//! `/metrics` is served meanwhile as usual.

use std::sync::Arc;
use std::time::Instant;

use super::http::{HttpRequest, Response};
use crate::error::{BrrError, Result};
use crate::export::{pprof, Targets};
use crate::profile::{CallGraph, Event, Request};
use crate::session::{Collector, Job, Profiled, Profiling, Refused};

/// Where profiles are served: the Go convention every puller uses.
pub(crate) const PATH: &str = "/debug/pprof/profile";
/// The capture length when a request names none (Go's default).
pub(crate) const DEFAULT_SECONDS: u64 = 30;
/// The longest capture a request may ask for unless `--max-profile-seconds`
/// says otherwise.
pub(crate) const DEFAULT_MAX_SECONDS: u64 = 60;
/// The most `--max-profile-seconds` may allow: an hour.
pub(crate) const MAX_SECONDS_LIMIT: u64 = 3600;
/// The sampling frequency unless `--profile-hz` says otherwise: the rate
/// of continuous profilers and of `perf record -F 99` (not 100, so that
/// sampling does not run in lockstep with 100 Hz timer work). A profile
/// puller asks every 10-15 s for most of that time, so this rate is paid
/// nearly all the time; `brr profile` defaults to 997 Hz for one-off
/// captures.
pub(crate) const DEFAULT_FREQUENCY: u64 = 99;
/// `Content-Type` of a profile: what Go's handler sends.
pub(crate) const CONTENT_TYPE: &str = "application/octet-stream";

/// How profiles are served.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProfileServing {
    /// Sampling frequency, Hz.
    pub frequency: u64,
    /// The longest capture a request may ask for, seconds.
    pub max_seconds: u64,
}

impl Default for ProfileServing {
    fn default() -> ProfileServing {
        ProfileServing {
            frequency: DEFAULT_FREQUENCY,
            max_seconds: DEFAULT_MAX_SECONDS,
        }
    }
}

/// The capture length a query asks for: its first `seconds` parameter, a
/// whole number from 1 to `max` (digits only, as Go's handler reads it),
/// else [`DEFAULT_SECONDS`] (or `max` when that is lower). `Err` carries
/// the 400 answer's text.
pub(crate) fn seconds(query: &str, max: u64) -> std::result::Result<u64, String> {
    let value = query.split('&').find_map(|pair| {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        (key == "seconds").then_some(value)
    });
    let Some(value) = value else {
        return Ok(DEFAULT_SECONDS.min(max));
    };
    let digits =
        !value.is_empty() && value.len() <= 10 && value.bytes().all(|b| b.is_ascii_digit());
    match digits.then(|| value.parse::<u64>().ok()).flatten() {
        Some(n) if (1..=max).contains(&n) => Ok(n),
        _ => Err(format!(
            "seconds must be a whole number from 1 to {max} (--max-profile-seconds)\n"
        )),
    }
}

/// What a profile request got.
#[derive(Debug)]
pub(crate) enum Outcome {
    /// Another capture runs; ask again after this many seconds.
    Busy { retry_after: u64 },
    /// The gzipped profile, or why there is none.
    Done(Result<Vec<u8>>),
}

/// The profiles served, one capture at a time.
pub(crate) struct Profiler {
    config: ProfileServing,
    profiling: Profiling,
}

impl Profiler {
    /// Samples nothing until asked.
    pub(crate) fn new(config: ProfileServing, collector: Arc<Collector>) -> Profiler {
        Profiler {
            config,
            profiling: Profiling::new(collector),
        }
    }

    /// Seconds until the capture in progress has answered, when one runs.
    pub(crate) fn busy(&self) -> Option<u64> {
        let busy = self.profiling.busy()?;
        Some(retry_after(busy.ends, Instant::now()))
    }

    /// Capture for `seconds` and return the encoded profile, unless a
    /// capture runs already. The encoding is part of the job, so that the
    /// next capture waits for it.
    pub(crate) fn capture(&self, seconds: u64) -> Outcome {
        let job = Job {
            request: request(self.config.frequency, seconds),
            exports: Targets::default(),
            report: None,
        };
        match self
            .profiling
            .start(job, |_| {}, |done| done.and_then(encode))
        {
            Ok(ticket) => Outcome::Done(ticket.finish().and_then(|encoded| encoded)),
            Err(Refused::Busy(busy)) => Outcome::Busy {
                retry_after: retry_after(busy.ends, Instant::now()),
            },
            Err(Refused::Failed(e)) => Outcome::Done(Err(e)),
        }
    }

    /// End the capture in progress now (SIGTERM).
    pub(crate) fn cancel(&self) {
        self.profiling.cancel();
    }

    /// The answer to a request for [`PATH`]: 400 for a bad `seconds`, 429
    /// while another capture runs, else the profile (or 500 and why not).
    /// HEAD checks the same but captures nothing.
    pub(crate) fn answer(&self, req: &HttpRequest) -> Response {
        let seconds = match seconds(&req.query, self.config.max_seconds) {
            Ok(n) => n,
            Err(why) => return Response::new(400, "text/plain; charset=utf-8", why),
        };
        if req.is_head() {
            if let Some(after) = self.busy() {
                return too_many(after);
            }
            let mut r = Response::new(200, CONTENT_TYPE, Vec::new());
            r.length_unknown = true;
            return r;
        }
        match self.capture(seconds) {
            Outcome::Busy { retry_after } => too_many(retry_after),
            Outcome::Done(Ok(body)) => Response::new(200, CONTENT_TYPE, body),
            Outcome::Done(Err(e)) => Response::new(
                500,
                "text/plain; charset=utf-8",
                format!("{}\n", e.render()),
            ),
        }
    }
}

/// Whole seconds until `ends`, plus one for the answer to be made; at
/// least 1.
fn retry_after(ends: Instant, now: Instant) -> u64 {
    let left = ends.saturating_duration_since(now);
    let whole = left.as_secs() + u64::from(left.subsec_nanos() > 0);
    whole + 1
}

fn too_many(retry_after: u64) -> Response {
    let mut r = Response::new(
        429,
        "text/plain; charset=utf-8",
        "a profile is being captured; one runs at a time\n",
    );
    r.retry_after = Some(retry_after);
    r
}

/// A capture of every program on every CPU with the helper and kernel
/// frames under each BPF line.
pub(crate) fn request(frequency: u64, seconds: u64) -> Request {
    Request {
        event: Event::Auto,
        duration: seconds as f64,
        frequency,
        kernel_samples: true,
        call_graph: CallGraph::Fp,
        pages: None,
        drain_ms: None,
        program_ids: Vec::new(),
        pid: None,
    }
}

/// A capture, its samples labelled with their containers and pods, encoded
/// as pprof.
fn encode(done: Profiled) -> Result<Vec<u8>> {
    let ctx = pprof::Context::now(&done.profile).with_workloads(done.workloads);
    let mut out = Vec::new();
    pprof::write(&done.profile, &ctx, &mut out)
        .map_err(|e| BrrError::Failed(format!("cannot encode the profile: {e}")))?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn seconds_are_whole_numbers_within_the_maximum() {
        assert_eq!(seconds("", 60), Ok(30));
        assert_eq!(seconds("debug=1", 60), Ok(30));
        assert_eq!(
            seconds("", 10),
            Ok(10),
            "the default never exceeds the maximum"
        );
        assert_eq!(seconds("seconds=3", 60), Ok(3));
        assert_eq!(seconds("x=1&seconds=60&seconds=0", 60), Ok(60));
        for bad in [
            "seconds=0",
            "seconds=61",
            "seconds=-1",
            "seconds=abc",
            "seconds=1e3",
            "seconds=",
            "seconds",
            "seconds=+3",
            "seconds=3.0",
            "seconds= 3",
            "seconds=99999999999999999999",
        ] {
            let e = seconds(bad, 60).unwrap_err();
            assert_eq!(
                e, "seconds must be a whole number from 1 to 60 (--max-profile-seconds)\n",
                "{bad}"
            );
        }
    }

    #[test]
    fn retry_after_rounds_up_and_adds_the_answer() {
        let now = Instant::now();
        assert_eq!(retry_after(now, now), 1);
        assert_eq!(retry_after(now, now + Duration::from_secs(5)), 1);
        assert_eq!(retry_after(now + Duration::from_millis(2500), now), 4);
        assert_eq!(retry_after(now + Duration::from_secs(3), now), 4);
    }

    #[test]
    fn captures_whole_host_with_kernel_frames() {
        let r = request(99, 14);
        assert_eq!(
            (r.frequency, r.duration, r.kernel_samples),
            (99, 14.0, true)
        );
        assert_eq!(
            (r.program_ids.len(), r.pid, r.event),
            (0, None, Event::Auto)
        );
        assert!(r.validate().is_ok());
    }
}
