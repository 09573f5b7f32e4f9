//! Readiness lines for tests and benchmark scripts.
//!
//! With `BRR_TRACE_READY` set in the environment, brr writes one line
//! `brr-trace: ready <point>` on stderr when it reaches a point a caller may
//! want to wait for, so that tests act on brr's state instead of guessing
//! with sleeps. Points:
//! - `stats-window`: statistics are enabled and the baseline snapshot of an
//!   activity window has been read (a stream, `activity --interval`,
//!   announces every window: the line comes when that window's baseline,
//!   the previous window's closing snapshot, has been read);
//! - `capture`: a profile's perf events are enabled on every CPU.

use std::io::Write;

const READY_ENV: &str = "BRR_TRACE_READY";

/// Report that brr reached `point` (no-op unless `BRR_TRACE_READY` is set).
pub(crate) fn ready(point: &str) {
    if std::env::var_os(READY_ENV).is_some() {
        let mut err = std::io::stderr().lock();
        let _ = writeln!(err, "brr-trace: ready {point}");
        let _ = err.flush();
    }
}
