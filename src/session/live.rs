//! A view that repeats windows (the TUI's live table): one thread drives
//! both its windows and its object context, one harvest per refresh, as
//! bottom's `DataCollector` does. A finished window is held open for the
//! next one to start from, and the context behind the OWNERS, ATTACH and
//! MEMLOCK columns is read again, inside a window, once it is stale.

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::{Collector, ProgContext, Window, BRIEF};
use crate::activity::{self, ActivityRow};
use crate::error::Result;

/// One refresh: the window's activity rows and the seconds it measured.
#[derive(Debug, Clone)]
pub(crate) struct Harvest {
    pub rows: Vec<ActivityRow>,
    pub measured: f64,
}

/// The latest context, when it was last read, and whether it has been read
/// since the view last asked for it.
#[derive(Debug, Default)]
struct ContextSlot {
    latest: Option<Arc<ProgContext>>,
    read_at: Option<Instant>,
    read_since_asked: bool,
}

impl ContextSlot {
    /// Read the context with `read` when the view wants it and none was
    /// read since it asked, or, at a window's start, once the last read is
    /// `every` old. A failed read keeps the previous context: the columns go
    /// stale rather than blank.
    fn refresh(
        &mut self,
        now: Instant,
        wanted: bool,
        at_start: bool,
        every: Duration,
        read: impl FnOnce() -> Option<ProgContext>,
    ) {
        if !wanted {
            self.read_since_asked = false;
            return;
        }
        let stale = self
            .read_at
            .is_none_or(|t| now.saturating_duration_since(t) >= every);
        if self.read_since_asked && !(at_start && stale) {
            return;
        }
        self.read_at = Some(now);
        self.read_since_asked = true;
        if let Some(c) = read() {
            self.latest = Some(Arc::new(c));
        }
    }
}

/// The windows and context of one repeating view (see the module's text).
pub(crate) struct Live {
    collector: Arc<Collector>,
    held: Option<Window>,
    /// How long a finished window is held for the next to start from.
    hold: Duration,
    /// How often the context is read while the view shows it, and how
    /// old an owner scan it accepts.
    context_every: Duration,
    context: ContextSlot,
}

impl Live {
    /// A view reading through `collector`, its first window starting from
    /// `held` (a start-up window whose baseline was read).
    pub(crate) fn new(
        collector: Arc<Collector>,
        held: Option<Window>,
        hold: Duration,
        context_every: Duration,
    ) -> Live {
        Live {
            collector,
            held,
            hold,
            context_every,
            context: ContextSlot::default(),
        }
    }

    /// Whether a finished window is held open (statistics on).
    pub(crate) fn holding(&self) -> bool {
        self.held.is_some()
    }

    /// Let the held window go: statistics off until the next window.
    pub(crate) fn release(&mut self) {
        self.held = None;
    }

    /// One window of `delay` seconds, started from the held window when it
    /// is recent enough. `wanted` says whether the view shows the context;
    /// `wait` blocks until the deadline it is given and says whether
    /// something else came first, which ends the window without a result
    /// (None). Snapshots are brief; while the context is shown, pins and
    /// the latest context are added to the rows at the end of the window.
    pub(crate) fn window(
        &mut self,
        delay: f64,
        wanted: &dyn Fn() -> bool,
        wait: &mut dyn FnMut(Instant) -> bool,
    ) -> Option<Result<Harvest>> {
        let window = match self.held.take() {
            Some(w) if w.started().elapsed() < self.hold => w,
            _ => match Window::start(&self.collector, BRIEF) {
                Ok(w) => w,
                Err(e) => return Some(Err(e)),
            },
        };
        self.refresh_context(wanted(), true);
        if wait(window.deadline(delay)) {
            return None;
        }
        Some(self.harvest(window, wanted()))
    }

    fn refresh_context(&mut self, wanted: bool, at_start: bool) {
        let (collector, every) = (&self.collector, self.context_every);
        self.context
            .refresh(Instant::now(), wanted, at_start, every, || {
                collector.prog_context(every).ok()
            });
    }

    /// End `window` and hold the next one, which starts from its second
    /// snapshot.
    fn harvest(&mut self, window: Window, wanted: bool) -> Result<Harvest> {
        let (m, next) = window.finish_and_continue(&self.collector)?;
        // A view that asked for the context during this window sees it now.
        self.refresh_context(wanted, false);
        let mut current = m.current;
        let latest = self.context.latest.clone();
        // Pins show in the PINNED column and as "(pinned)" owners, both
        // parts of the context.
        if latest.is_some() || wanted {
            self.collector.attach_prog_pins(&mut current);
        }
        if let Some(c) = latest {
            c.apply(&mut current);
        }
        let rows = activity::compute_owned(&m.base, current, true, 0);
        self.held = Some(next);
        Ok(Harvest {
            rows,
            measured: m.seconds,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_context_is_read_only_while_wanted_at_most_every_period() {
        let every = Duration::from_secs(5);
        let t0 = Instant::now();
        let at = |s: u64| t0 + Duration::from_secs(s);
        let mut slot = ContextSlot::default();
        let mut reads = 0;
        let mut step = |slot: &mut ContextSlot, now, wanted, at_start| {
            slot.refresh(now, wanted, at_start, every, || {
                reads += 1;
                Some(ProgContext::default())
            });
            reads
        };
        assert_eq!(step(&mut slot, at(0), false, true), 0, "not wanted");
        // Asked for during a window: read at its end, not again at the
        // next start.
        assert_eq!(step(&mut slot, at(1), true, false), 1);
        assert!(slot.latest.is_some());
        assert_eq!(step(&mut slot, at(1), true, true), 1);
        // Stale: read again at a window's start only.
        assert_eq!(step(&mut slot, at(7), true, false), 1);
        assert_eq!(step(&mut slot, at(7), true, true), 2);
        assert_eq!(step(&mut slot, at(9), true, true), 2);
        // Not wanted: nothing read, the last context kept; asked again:
        // read at once.
        assert_eq!(step(&mut slot, at(10), false, true), 2);
        assert!(slot.latest.is_some());
        assert_eq!(step(&mut slot, at(11), true, false), 3);
        // A failed read keeps the previous context and waits a period.
        slot.refresh(at(20), true, true, every, || None);
        assert!(slot.latest.is_some());
        assert_eq!(step(&mut slot, at(21), true, true), 3);
    }
}
