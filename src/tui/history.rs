//! The recent windows of every program, kept by the sampling thread and
//! read by the UI for the chart pane (`g`) and the drilldown's sparkline.
//!
//! Bounded twice over: [`WINDOWS`] points per program, and a program's
//! points go with the first window it is missing from (it unloaded), so
//! memory follows the programs loaded now: about 1.5 KiB for each program
//! that ran in the windows kept, a few bytes for each one that did not
//! (most programs on most hosts sit idle; their series of zeros is shared).

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};

use crate::activity::ActivityRow;

/// Windows kept per program.
pub(crate) const WINDOWS: usize = 120;

/// One program in one window. f32 halves the memory of f64 and is far
/// finer than a chart row.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub(crate) struct Point {
    pub cpu_pct: f32,
    pub execs_per_sec: f32,
    pub avg_ns: f32,
}

/// One program's points: a count of zero points while it has not run in
/// any window kept, else the points themselves.
#[derive(Debug)]
enum Series {
    Idle(usize),
    Ran(VecDeque<Point>),
}

#[derive(Debug, Default)]
pub(crate) struct History {
    by_prog: HashMap<u32, Series>,
    /// `zeros[n]`: n zero points, what every idle program's series reads as.
    zeros: Vec<VecDeque<Point>>,
    /// Length of the last window recorded, for the chart's time axis.
    window_seconds: f64,
}

impl History {
    /// Add one window; `rows` must hold every loaded program (the TUI's
    /// windows do), so programs absent from it are gone.
    pub(crate) fn record(&mut self, rows: &[ActivityRow], measured: f64) {
        let d = if measured > 0.0 { measured } else { 1.0 };
        self.window_seconds = measured;
        let loaded: std::collections::HashSet<u32> = rows.iter().map(|r| r.prog.id).collect();
        self.by_prog.retain(|id, _| loaded.contains(id));
        let mut longest_idle = 0;
        for r in rows {
            let point = Point {
                cpu_pct: r.cpu_pct(d) as f32,
                execs_per_sec: r.execs_per_sec(d) as f32,
                avg_ns: r.avg_ns() as f32,
            };
            let series = self.by_prog.entry(r.prog.id).or_insert(Series::Idle(0));
            push(series, point);
            if let Series::Idle(n) = series {
                longest_idle = longest_idle.max(*n);
            }
        }
        while self.zeros.len() <= longest_idle {
            let n = self.zeros.len();
            self.zeros.push(VecDeque::from(vec![Point::default(); n]));
        }
    }

    /// A program's points, oldest first.
    pub(crate) fn of(&self, id: u32) -> Option<&VecDeque<Point>> {
        match self.by_prog.get(&id)? {
            Series::Idle(n) => self.zeros.get(*n),
            Series::Ran(points) => Some(points),
        }
    }

    pub(crate) fn window_seconds(&self) -> f64 {
        self.window_seconds
    }

    #[cfg(test)]
    pub(crate) fn programs(&self) -> usize {
        self.by_prog.len()
    }
}

/// Append `point`, dropping the oldest beyond [`WINDOWS`]; a series whose
/// points are all zero again goes back to a count.
fn push(series: &mut Series, point: Point) {
    let zero = point == Point::default();
    match series {
        Series::Idle(n) if zero => *n = (*n + 1).min(WINDOWS),
        Series::Idle(n) => {
            let mut points = VecDeque::with_capacity(WINDOWS);
            points.extend(std::iter::repeat_n(Point::default(), (*n).min(WINDOWS - 1)));
            points.push_back(point);
            *series = Series::Ran(points);
        }
        Series::Ran(points) => {
            if points.len() == WINDOWS {
                points.pop_front();
            }
            points.push_back(point);
            if zero && points.iter().all(|p| *p == Point::default()) {
                *series = Series::Idle(points.len());
            }
        }
    }
}

/// The history as the sampler and the UI share it.
#[derive(Debug, Clone, Default)]
pub(crate) struct Shared(Arc<Mutex<History>>);

impl Shared {
    /// The history, also after a thread panicked while holding it (its
    /// data is still a valid, if partial, history).
    pub(crate) fn lock(&self) -> MutexGuard<'_, History> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Program;

    fn row(id: u32, count: u64, ns: u64) -> ActivityRow {
        ActivityRow {
            prog: Program {
                id,
                ..Default::default()
            },
            run_count_delta: count,
            run_time_ns_delta: ns,
            recursion_misses_delta: Some(0),
        }
    }

    #[test]
    fn bounded_per_program_and_gone_with_the_program() {
        let mut h = History::default();
        for i in 0..(WINDOWS as u64 + 30) {
            h.record(&[row(1, i, i * 100), row(2, 1, 10)], 2.0);
        }
        let p = h.of(1).unwrap();
        assert_eq!(p.len(), WINDOWS);
        // The oldest 30 windows were dropped.
        assert_eq!(p[0].execs_per_sec, 15.0);
        assert_eq!(p[WINDOWS - 1].avg_ns, 100.0);
        assert_eq!(h.window_seconds(), 2.0);
        h.record(&[row(2, 1, 10)], 2.0);
        assert!(h.of(1).is_none());
        assert_eq!(h.programs(), 1);
        assert_eq!(h.of(2).unwrap().len(), WINDOWS);
    }

    #[test]
    fn values_are_the_table_formulas() {
        let mut h = History::default();
        h.record(&[row(5, 3_939_893, 486_420_680)], 2.0);
        let p = h.of(5).unwrap()[0];
        assert!((p.cpu_pct - 24.321).abs() < 1e-3);
        assert_eq!(p.execs_per_sec, 1_969_946.0);
        assert_eq!(p.avg_ns, 123.0);
    }

    #[test]
    fn idle_programs_share_their_zeros_until_they_run() {
        let mut h = History::default();
        for _ in 0..3 {
            h.record(&[row(1, 0, 0), row(2, 0, 0)], 1.0);
        }
        assert_eq!(h.of(1).map(VecDeque::len), Some(3));
        assert!(h.of(2).unwrap().iter().all(|p| *p == Point::default()));
        assert!(matches!(h.by_prog[&1], Series::Idle(3)));
        // It runs: three zeros, then its point.
        h.record(&[row(1, 4, 400), row(2, 0, 0)], 1.0);
        let p = h.of(1).unwrap();
        assert_eq!(p.len(), 4);
        assert_eq!(p[3].execs_per_sec, 4.0);
        assert_eq!(p[2], Point::default());
        assert_eq!(h.of(2).map(VecDeque::len), Some(4));
        // Idle again for every window kept: a count once more.
        for _ in 0..WINDOWS {
            h.record(&[row(1, 0, 0)], 1.0);
        }
        assert!(matches!(h.by_prog[&1], Series::Idle(WINDOWS)));
        assert_eq!(h.of(1).map(VecDeque::len), Some(WINDOWS));
        assert!(h.of(2).is_none());
        // An idle series is capped like any other.
        h.record(&[row(1, 0, 0)], 1.0);
        assert_eq!(h.of(1).map(VecDeque::len), Some(WINDOWS));
        h.record(&[row(1, 1, 1)], 1.0);
        let p = h.of(1).unwrap();
        assert_eq!((p.len(), p[WINDOWS - 1].avg_ns), (WINDOWS, 1.0));
    }

    #[test]
    fn a_thousand_programs_cost_a_few_mib() {
        let rows: Vec<ActivityRow> = (1..=1000).map(|id| row(id, 1, 1)).collect();
        let mut h = History::default();
        for _ in 0..WINDOWS {
            h.record(&rows, 1.0);
        }
        let per_point = std::mem::size_of::<Point>();
        let bytes = h.programs() * WINDOWS * per_point;
        assert!(bytes < 2 << 20, "{bytes}");
    }
}
