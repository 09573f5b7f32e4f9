//! The drilldown: one program's source (or mixed source/instruction) rows
//! from the inspect row model, profiled on demand, with folds, child
//! groups, markers, search, the profile-options form and overlays.
//! State and keys only; drawing is in `ui.rs`. (Split from `app.rs`
//! because the drilldown is half of the TUI's state machine.)
//!
//! This file holds the state and its construction; the rest is split by
//! concern:
//! - `layout`: title, status lines and the heights they leave the table;
//! - `rows`: building the row list and turning it into shown lines;
//! - `anchor`: finding "the same row" again after the row list changes;
//! - `messages`: worker messages (image, disassembly, profile results);
//! - `keys`: key dispatch, navigation and the action keys;
//! - `folds`: expanding and collapsing child groups and folds;
//! - `search`: the search bar and its matches;
//! - `form`: the profile-options form.

mod anchor;
mod folds;
mod form;
mod keys;
mod layout;
mod messages;
mod rows;
mod search;

use std::sync::Arc;

use super::effect::Effect;
#[cfg(test)]
use super::worker::{Msg, ProfileDone};
use super::Config;
use crate::inspect::disasm::CallNames;
use crate::inspect::drilldown::{Drilldown, Mode, NativeRow};
use crate::inspect::native::NativeImage;
use crate::inspect::profile::ProfileInput;
use crate::inspect::source::SourceTree;
use crate::model::profile::{Hint, Profile};
use crate::model::report::{ProgramReport, Report};
use crate::model::ProgramImage;
use crate::render::drilldown::{Line, ViewState};

pub(crate) use form::{Form, FORM_LABELS, FORM_PROMPT};
pub(crate) use search::{Search, SEARCH_HINT};

pub(crate) const HELP_LINE: &str = "Space source/mixed/native | i kernel IPs | m markers | M legend | p/P profile | e/c/E/C folds | h help | Esc closes";

/// Drilldown help overlay rows.
pub(crate) const HELP_ROWS: [(&str, &str); 14] = [
    ("Up/Down, PgUp/PgDn, Home/End", "Navigate rows"),
    ("Space", "Cycle source/mixed/native view"),
    ("/", "Search source"),
    ("n / N", "Next / previous search match"),
    ("p / P", "Profile with defaults / choose options"),
    ("i", "Toggle kernel function/IP detail"),
    ("m / M", "Toggle source markers / marker legend"),
    ("e / c", "Expand / collapse selected branch"),
    ("E / C", "Expand / collapse all branches"),
    ("Left/Right", "Scroll code horizontally"),
    ("F", "Save last profile: folded + flame graph"),
    ("t", "Who pays: tasks the last profile ran in"),
    ("H", "Hints: what the last profile suggests"),
    ("h / Esc", "Close this help"),
];

/// What a drilldown key asks of the app: effects to carry out, closing
/// the drilldown (back to the live table), or quitting.
pub(crate) enum Outcome {
    Effects(Vec<Effect>),
    Close,
    Quit,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Overlay {
    None,
    Help,
    Legend,
    /// `t`: the tasks in whose context the program ran.
    WhoPays,
    /// `H`: the last profile's hints.
    Hints,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Running {
    pub seq: u64,
    pub duration: f64,
    pub frequency: u64,
    pub elapsed: f64,
    pub samples: u64,
}

/// What the last profile used, shown in the title (event, frequency,
/// actual duration, samples) so a result says how it was taken.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Meta {
    pub event: String,
    pub frequency: u64,
    pub actual_duration: f64,
    pub samples: u64,
}

/// What the main table knows about the inspected program.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct About {
    pub full_name: String,
    pub owner: Option<String>,
    pub attach: Option<String>,
}

pub(crate) struct Drill {
    pub id: u32,
    load_seq: u64,
    counter: u64,
    config: Config,
    size: (u16, u16),
    pub image: Option<Arc<ProgramImage>>,
    pub failed: Option<String>,
    pub vanished: bool,
    /// Helper names (mixed view) and the native code or why there is
    /// none (native view), once the worker has read them.
    pub disasm: Option<(CallNames, Result<Arc<NativeImage>, String>)>,
    disasm_seq: Option<u64>,
    pub mode: Mode,
    pub exact_ips: bool,
    pub profile: Option<ProfileInput>,
    pub meta: Option<Meta>,
    pub dd: Option<Drilldown>,
    pub view: ViewState,
    pub lines: Vec<Line>,
    pub cursor: usize,
    pub top: usize,
    pub hscroll: usize,
    pub message: Option<String>,
    pub overlay: Overlay,
    pub search: Option<Search>,
    pub form: Option<Form>,
    pub running: Option<Running>,
    /// The full name, owner and attach point as the main table last saw
    /// them, for the title.
    pub about: Option<About>,
    /// The last finished capture, for `F`, and its report: who pays (`t`)
    /// and hints (`H`).
    pub last: Option<(Arc<Profile>, Arc<Report>)>,
    /// The last profile's sampled native instructions (see `ProfileDone`).
    pub native: Vec<NativeRow>,
    devmode: Option<(SourceTree, bool)>,
    pub dev_warning: Option<String>,
    dirty: bool,
}

impl Drill {
    pub(crate) fn new(id: u32, load_seq: u64, config: &Config, size: (u16, u16)) -> Drill {
        Drill {
            id,
            load_seq,
            counter: 0,
            config: config.clone(),
            size,
            image: None,
            failed: None,
            vanished: false,
            disasm: None,
            disasm_seq: None,
            mode: match (config.program_id == Some(id), config.mixed, config.native) {
                (true, _, true) => Mode::Native,
                (true, true, _) => Mode::Mixed,
                _ => Mode::Source,
            },
            exact_ips: config.kernel_ip_detail,
            profile: None,
            meta: None,
            dd: None,
            view: ViewState::default(),
            lines: Vec::new(),
            cursor: 0,
            top: 0,
            hscroll: 0,
            message: None,
            overlay: Overlay::None,
            search: None,
            form: None,
            running: None,
            about: None,
            last: None,
            native: Vec::new(),
            devmode: config.devmode.as_deref().map(crate::session::devmode_tree),
            dev_warning: None,
            dirty: true,
        }
    }

    /// A drilldown over an already loaded image (tests, snapshots).
    #[cfg(test)]
    pub(crate) fn with_image(
        config: &Config,
        size: (u16, u16),
        image: ProgramImage,
        profile: Option<ProfileDone>,
    ) -> Drill {
        let mut d = Drill::new(image.program.id, 1, config, size);
        let _ = d.on_msg(Msg::Loaded {
            seq: 1,
            result: Ok(Arc::new(image)),
        });
        if let Some(p) = profile {
            let seq = d.next_seq();
            d.running = Some(Running {
                seq,
                duration: 1.0,
                frequency: 997,
                elapsed: 0.0,
                samples: 0,
            });
            let _ = d.on_msg(Msg::Profiled { seq, result: Ok(p) });
        }
        d
    }

    fn next_seq(&mut self) -> u64 {
        self.counter += 1;
        (self.load_seq << 20) + self.counter
    }

    pub(crate) fn take_dirty(&mut self) -> bool {
        std::mem::take(&mut self.dirty)
    }

    pub(crate) fn loaded(&self) -> bool {
        self.dd.is_some()
    }

    pub(crate) fn resize(&mut self, size: (u16, u16)) {
        self.size = size;
        self.compute_folds();
        self.refresh_lines();
    }

    /// This program's part of the last profile's report.
    pub(crate) fn last_program(&self) -> Option<&ProgramReport> {
        self.last.as_ref().and_then(|(_, r)| r.program(self.id))
    }

    /// The last profile's hints for this program, for `H`.
    pub(crate) fn hints(&self) -> &[Hint] {
        self.last_program().map_or(&[], |p| &p.hints)
    }
}
