//! `C`: a `brr cost` capture as long as the refresh window, its split per
//! program (program, dispatch, statistics; CPU% and ns per run; hook)
//! shown in a pane over the table, as `brr cost` prints it.

use super::App;
use crate::error::BrrError;
use crate::model::cost::Cost;
use crate::render::{cost, Format};
use crate::tui::effect::Effect;
use crate::tui::worker::CostJob;

/// The cost pane: a capture in progress, then its figures.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct CostPane {
    pub seq: u64,
    pub seconds: f64,
    /// Seconds captured so far, while it runs.
    pub elapsed: Option<f64>,
    /// What `brr cost` prints of the capture, or why there is none.
    pub text: Option<Result<String, String>>,
}

impl CostPane {
    /// The pane's lines.
    pub(crate) fn lines(&self) -> Vec<String> {
        match &self.text {
            Some(Ok(t)) => t.lines().map(str::to_string).collect(),
            Some(Err(e)) => vec![e.clone()],
            None => vec![format!(
                "Measuring what eBPF costs this host: {:.1} s of {} s (Esc cancels)...",
                self.elapsed.unwrap_or(0.0),
                crate::render::num::fmt_g(self.seconds)
            )],
        }
    }
}

impl App {
    /// `C`: start a capture of the refresh window's length; a pane already
    /// open closes (cancelling its capture).
    pub(super) fn cost_key(&mut self) -> Vec<Effect> {
        if self.cost.is_some() {
            return self.close_cost();
        }
        let seq = self.next_seq();
        let mut request = self.config.profile.clone();
        request.duration = self.delay;
        request.program_ids.clear();
        self.cost = Some(CostPane {
            seq,
            seconds: self.delay,
            elapsed: None,
            text: None,
        });
        self.dirty = true;
        vec![Effect::Cost(CostJob { seq, request })]
    }

    /// Close the pane, cancelling a capture still running.
    pub(super) fn close_cost(&mut self) -> Vec<Effect> {
        let running = self.cost.take().is_some_and(|c| c.text.is_none());
        self.dirty = true;
        if running {
            vec![Effect::CancelProfile]
        } else {
            Vec::new()
        }
    }

    pub(super) fn cost_progress(&mut self, seq: u64, elapsed: f64) {
        if let Some(c) = self.cost.as_mut().filter(|c| c.seq == seq) {
            c.elapsed = Some(elapsed);
            self.dirty = true;
        }
    }

    pub(super) fn costed(&mut self, seq: u64, result: Result<Cost, BrrError>) {
        if let Some(c) = self.cost.as_mut().filter(|c| c.seq == seq) {
            c.text = Some(match result {
                Ok(cost) => Ok(cost::render(&cost, Format::Text)),
                Err(e) => Err(e.render()),
            });
            self.dirty = true;
        }
    }
}
