//! The measuring window: statistics on between two snapshots of every
//! program, one window or a stream of back-to-back windows.

use std::ops::ControlFlow;
use std::time::{Instant, SystemTime};

use super::context::SCAN_NOW;
use super::{wait_for, Collector};
use crate::activity::{self, ActivityRow};
use crate::error::Result;
use crate::kernel::objects::ProgRecall;
use crate::kernel::stats::StatsGuard;
use crate::model::activity::Counters;
use crate::model::{ProgFields, Program};
use crate::sys::signal::InterruptGuard;

/// What activity rows are computed from in every view: the info struct's
/// counters, and the full names the views print. A window's snapshots read
/// these (and `memlock` or `map_ids` when asked); full names and memlock are
/// read once per program and then recalled. Pins and context are added at
/// the window's end, only for views that print them.
pub(crate) const BRIEF: ProgFields = ProgFields {
    full_name: true,
    map_ids: false,
    memlock: false,
    pins: false,
    context: false,
};

/// How often a stream of windows walks every program ID instead of opening
/// the ones it saw by ID and asking only for greater ones: often enough
/// that a program whose ID came after the kernel's ID space wrapped shows
/// within this many windows.
const FULL_WALK_EVERY: u32 = 60;

/// An activity window in progress: statistics are on and the baseline has
/// been read. The window's clock starts when the baseline enumeration
/// starts, so the measured time is the one between the starts of the two
/// enumerations.
pub(crate) struct Window {
    stats: StatsGuard,
    fields: ProgFields,
    /// What the deltas are taken from.
    base: Vec<Counters>,
    start: Instant,
    wall_start: SystemTime,
    /// Snapshots taken since the last walk of every ID.
    since_full: u32,
    /// The programs the last snapshot saw, whose rows the next one copies.
    recall: ProgRecall,
}

/// Two snapshots of one window and the seconds between them.
#[derive(Debug, Clone)]
pub(crate) struct Measurement {
    pub base: Vec<Counters>,
    pub current: Vec<Program>,
    pub seconds: f64,
    /// Wall-clock times of the starts of the two enumerations, in Unix
    /// seconds: what streams print so that windows line up with other logs.
    pub wall_start: f64,
    pub wall_end: f64,
}

/// Unix seconds of `t`; a clock before 1970 counts as 0.
fn unix_seconds(t: SystemTime) -> f64 {
    t.duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

impl Window {
    /// Enable statistics and read the baseline through `collector`; the
    /// snapshots read `fields`' `full_name`, `map_ids` and `memlock`.
    pub(crate) fn start(collector: &Collector, fields: ProgFields) -> Result<Window> {
        Window::start_listed(collector, fields).map(|(w, _)| w)
    }

    /// [`Window::start`], also giving the baseline's programs whole (the
    /// window keeps only their counters).
    pub(crate) fn start_listed(
        collector: &Collector,
        fields: ProgFields,
    ) -> Result<(Window, Vec<Program>)> {
        let stats = StatsGuard::enable()?;
        let start = Instant::now();
        let wall_start = SystemTime::now();
        let mut recall = ProgRecall::default();
        let listed = collector.programs_recalling(fields, &mut recall, true)?;
        let window = Window {
            stats,
            fields,
            base: listed.iter().map(Counters::from).collect(),
            start,
            wall_start,
            since_full: 0,
            recall,
        };
        Ok((window, listed))
    }

    /// When the baseline enumeration started.
    pub(crate) fn started(&self) -> Instant {
        self.start
    }

    /// What the deltas are taken from: each baseline program's counters.
    pub(crate) fn base(&self) -> &[Counters] {
        &self.base
    }

    /// When a window of `seconds` ends.
    pub(crate) fn deadline(&self, seconds: f64) -> Instant {
        self.start + wait_for(seconds)
    }

    /// The second snapshot, when its enumeration started, and the seconds
    /// since the baseline's started.
    fn second(&mut self, c: &Collector) -> Result<(Vec<Program>, Instant, SystemTime, f64)> {
        let at = Instant::now();
        let wall = SystemTime::now();
        let full = self.since_full + 1 >= FULL_WALK_EVERY;
        let current = c.programs_recalling(self.fields, &mut self.recall, full)?;
        Ok((
            current,
            at,
            wall,
            at.duration_since(self.start).as_secs_f64(),
        ))
    }

    /// Read the second snapshot through `c` (the collector that started
    /// the window); statistics go off right after it.
    pub(crate) fn finish(mut self, c: &Collector) -> Result<Measurement> {
        let (current, _, wall, seconds) = self.second(c)?;
        drop(self.stats);
        Ok(Measurement {
            base: self.base,
            current,
            seconds,
            wall_start: unix_seconds(self.wall_start),
            wall_end: unix_seconds(wall),
        })
    }

    /// Read the second snapshot and keep statistics on: the returned window
    /// starts from that snapshot, so back-to-back windows leave no
    /// unmeasured gap and cost one enumeration each.
    pub(crate) fn finish_and_continue(mut self, c: &Collector) -> Result<(Measurement, Window)> {
        let (current, at, wall, seconds) = self.second(c)?;
        let next = Window {
            stats: self.stats,
            fields: self.fields,
            base: current.iter().map(Counters::from).collect(),
            start: at,
            wall_start: wall,
            since_full: (self.since_full + 1) % FULL_WALK_EVERY,
            recall: self.recall,
        };
        let m = Measurement {
            base: self.base,
            current,
            seconds,
            wall_start: unix_seconds(self.wall_start),
            wall_end: unix_seconds(wall),
        };
        Ok((m, next))
    }
}

/// One window of a stream, as [`Collector::activity_stream`] hands it on.
#[derive(Debug, Clone)]
pub(crate) struct StreamWindow {
    pub rows: Vec<ActivityRow>,
    /// Seconds actually measured (shorter than asked when Ctrl-C ended it).
    pub seconds: f64,
    pub wall_start: f64,
    pub wall_end: f64,
}

impl Collector {
    /// One activity window of `duration` seconds, with statistics enabled only
    /// in between. Ctrl-C ends the window early; the
    /// rates then cover the shorter window. The snapshots read `fields` as
    /// [`Window::start`] does.
    pub(crate) fn measure(&self, duration: f64, fields: ProgFields) -> Result<Measurement> {
        let interrupt = InterruptGuard::block();
        let window = Window::start(self, fields)?;
        crate::trace::ready("stats-window");
        let deadline = window.deadline(duration);
        loop {
            let now = Instant::now();
            if now >= deadline || interrupt.wait(deadline - now) {
                break;
            }
        }
        window.finish(self)
    }

    /// Back-to-back activity windows of `interval` seconds on one held
    /// statistics fd, each handed to `emit` as it ends; `count` 0 runs until
    /// Ctrl-C (which ends the current window early, hands it on, and stops) or
    /// until `emit` breaks. With `fields.pins`, pins are read at every window
    /// end, so programs pinned meanwhile show their paths.
    pub(crate) fn activity_stream(
        &self,
        interval: f64,
        count: u64,
        all: bool,
        limit: usize,
        fields: ProgFields,
        emit: &mut dyn FnMut(StreamWindow) -> ControlFlow<()>,
    ) -> Result<()> {
        let interrupt = InterruptGuard::block();
        let mut window = Window::start(self, fields)?;
        let mut done = 0u64;
        loop {
            crate::trace::ready("stats-window");
            let deadline = window.deadline(interval);
            let mut interrupted = false;
            loop {
                let now = Instant::now();
                if now >= deadline {
                    break;
                }
                if interrupt.wait(deadline - now) {
                    interrupted = true;
                    break;
                }
            }
            done = done.saturating_add(1);
            let last = interrupted || (count > 0 && done >= count);
            let (mut m, next) = if last {
                (window.finish(self)?, None)
            } else {
                let (m, next) = window.finish_and_continue(self)?;
                (m, Some(next))
            };
            if fields.pins {
                self.attach_prog_pins(&mut m.current);
            }
            let flow = emit(StreamWindow {
                rows: activity::compute(&m.base, &m.current, all, limit),
                seconds: m.seconds,
                wall_start: m.wall_start,
                wall_end: m.wall_end,
            });
            match next {
                Some(next) if flow.is_continue() => window = next,
                _ => return Ok(()),
            }
        }
    }

    /// Activity rows of one [`Collector::measure`] window, with pinned
    /// paths, and the measured seconds (`all` and `limit` as in
    /// [`activity::compute`]); with `extended`, who holds each program,
    /// where it is attached and its memlock.
    pub(crate) fn activity(
        &self,
        duration: f64,
        all: bool,
        limit: usize,
        extended: bool,
    ) -> Result<(Vec<ActivityRow>, f64)> {
        let fields = ProgFields {
            pins: true,
            context: extended,
            ..BRIEF
        };
        self.activity_with(duration, all, limit, fields)
    }

    /// [`Collector::activity`] with the fields the view prints: pins with
    /// `fields.pins`, and with `fields.context` who holds each program,
    /// where it is attached and its memlock.
    pub(crate) fn activity_with(
        &self,
        duration: f64,
        all: bool,
        limit: usize,
        fields: ProgFields,
    ) -> Result<(Vec<ActivityRow>, f64)> {
        let mut m = self.measure(duration, fields)?;
        if fields.pins {
            self.attach_prog_pins(&mut m.current);
        }
        if fields.context {
            self.prog_context(SCAN_NOW)?.apply(&mut m.current);
        }
        Ok((
            activity::compute(&m.base, &m.current, all, limit),
            m.seconds,
        ))
    }
}
