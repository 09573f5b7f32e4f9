//! The drilldown: one program's source (or mixed source/instruction) rows
//! from the inspect row model, profiled on demand, with folds, child
//! groups, markers, search, the profile-options form and overlays.
//! State and keys only; drawing is in `ui.rs`. (Split from `app.rs`
//! because the drilldown is half of the TUI's state machine.)

use std::collections::HashSet;
use std::sync::Arc;

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::app::{is_hard_quit, scroll_top, wrap, Effect, Input};
#[cfg(test)]
use super::worker::ProfileDone;
use super::worker::{Cmd, Msg, ProfileJob};
use super::Config;
use crate::error::BrrError;
use crate::inspect::disasm::CallNames;
use crate::inspect::drilldown::{
    Devmode, Drilldown, Line, Mode, Options, ProgramData, RowKind, SourceKey, ViewState,
};
use crate::inspect::profile::ProfileInput;
use crate::inspect::source::SourceTree;
use crate::kernel::lines::ProgramImage;
use crate::profile::{self, events};
use crate::render::num::fmt_g;
use crate::values::{self, ValueError};

pub const HELP_LINE: &str = "Space source/mixed | i kernel IPs | m markers | M legend | p/P profile | e/c/E/C folds | h help | Esc closes";
pub const SEARCH_HINT: &str = "Search source; Enter jumps to first match, Esc clears search";
pub const FORM_PROMPT: &str =
    "Edit duration, frequency, event, call graph, perf buffers, and samples; press Enter to profile";

/// Drilldown help overlay rows.
pub const HELP_ROWS: [(&str, &str); 11] = [
    ("Up/Down, PgUp/PgDn, Home/End", "Navigate rows"),
    ("Space", "Switch source/mixed view"),
    ("/", "Search source"),
    ("n / N", "Next / previous search match"),
    ("p / P", "Profile with defaults / choose options"),
    ("i", "Toggle kernel function/IP detail"),
    ("m / M", "Toggle source markers / marker legend"),
    ("e / c", "Expand / collapse selected branch"),
    ("E / C", "Expand / collapse all branches"),
    ("Left/Right", "Scroll code horizontally"),
    ("h / Esc", "Close this help"),
];

/// Labels of the profile form's fields, in order.
pub const FORM_LABELS: [&str; 7] = [
    "duration (s)",
    "frequency (Hz)",
    "event",
    "call graph",
    "perf pages",
    "drain ms",
    "kernel/helper samples",
];

pub enum Outcome {
    Effects(Vec<Effect>),
    Close,
    Quit,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Overlay {
    None,
    Help,
    Legend,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Running {
    pub seq: u64,
    pub duration: f64,
    pub frequency: u64,
    pub elapsed: f64,
    pub samples: u64,
}

/// What the last profile used (D20: shown in the title).
#[derive(Debug, Clone, PartialEq)]
pub struct Meta {
    pub event: String,
    pub frequency: u64,
    pub actual_duration: f64,
    pub samples: u64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Search {
    pub input: Input,
    pub editing: bool,
    /// Line indices that match.
    pub matches: Vec<usize>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Form {
    /// duration, frequency, event, call graph, pages, drain ms.
    pub fields: [Input; 6],
    pub kernel: bool,
    /// 0..=5 the inputs, 6 the checkbox.
    pub focus: usize,
}

impl Form {
    /// Prefilled from the profile defaults.
    fn new(o: &profile::Request) -> Form {
        let auto = |v: Option<u64>| v.map_or_else(|| "auto".to_string(), |v| v.to_string());
        Form {
            fields: [
                Input::new(&crate::render::num::float(o.duration)),
                Input::new(&o.frequency.to_string()),
                Input::new(&o.event),
                Input::new(o.call_graph),
                Input::new(&auto(o.pages)),
                Input::new(&auto(o.drain_ms)),
            ],
            // Prefilled on, so that P + Enter profiles like p does.
            kernel: true,
            focus: 0,
        }
    }

    /// The request these fields describe, or the first validation message.
    pub fn request(&self, id: u32) -> Result<profile::Request, String> {
        let f = |i: usize| self.fields[i].text.trim().to_string();
        let frequency = values::positive_int(&f(1));
        let Ok(duration) = values::number(&f(0)) else {
            return Err("duration must be numeric and frequency must be an integer".into());
        };
        if frequency == Err(ValueError::NotAnInteger) {
            return Err("duration must be numeric and frequency must be an integer".into());
        }
        if duration <= 0.0 || frequency == Err(ValueError::NotPositive) {
            return Err("duration and frequency must be greater than zero".into());
        }
        let frequency = frequency.map_err(|e| format!("frequency {e}"))?;
        if duration > values::MAX_SECONDS {
            return Err(format!(
                "duration must be at most {}",
                fmt_g(values::MAX_SECONDS)
            ));
        }
        let event = if f(2).is_empty() { "auto".into() } else { f(2) };
        if event != "auto" && events::lookup(&event).is_none() {
            return Err(
                "event is not supported by brr; run brr perf-events to list options".into(),
            );
        }
        let call_graph = match f(3).as_str() {
            "" | "fp" => "fp",
            "lbr" => "lbr",
            _ => return Err("call graph must be fp or lbr".into()),
        };
        if call_graph == "lbr" && !self.kernel {
            return Err("lbr call graph requires kernel/helper samples".into());
        }
        let pages = values::perf_pages_or_empty(&f(4))?;
        let drain_ms = values::drain_ms_or_empty(&f(5))?;
        Ok(profile::Request {
            event,
            duration,
            frequency: frequency.min(u64::from(u32::MAX)),
            kernel_samples: self.kernel,
            call_graph,
            pages,
            drain_ms,
            program_id: Some(id as u64),
            bpffs: std::path::PathBuf::new(),
        })
    }
}

/// Python `repr` of a string, for the search messages.
pub fn py_repr(s: &str) -> String {
    let quote = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
    let mut out = String::from(quote);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c => out.push(c),
        }
    }
    out.push(quote);
    out
}

/// A row's identity, to find "the same row" after the list changes.
#[derive(Debug, Clone, Default, PartialEq)]
struct Anchor {
    key: Option<SourceKey>,
    slot: Option<usize>,
    /// Child rows: the kernel symbol.
    child: Option<String>,
    /// Summary and context rows: their text.
    text: Option<String>,
}

/// The kernel symbol of a child row's text (`  -> kind symbol...`).
fn child_symbol(text: &str) -> String {
    let rest = text.trim_start().trim_start_matches("-> ");
    let after_kind = rest.split_once(' ').map_or(rest, |(_, s)| s);
    after_kind
        .split([' ', '+'])
        .next()
        .unwrap_or("")
        .to_string()
}

pub struct Drill {
    pub id: u32,
    load_seq: u64,
    counter: u64,
    config: Config,
    size: (u16, u16),
    pub image: Option<Arc<ProgramImage>>,
    pub failed: Option<String>,
    pub vanished: bool,
    pub disasm: Option<(Vec<String>, CallNames)>,
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
    devmode: Option<(SourceTree, bool)>,
    pub dev_warning: Option<String>,
    dirty: bool,
}

impl Drill {
    pub fn new(id: u32, load_seq: u64, config: &Config, size: (u16, u16)) -> Drill {
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
            mode: if config.mixed && config.program_id == Some(id) {
                Mode::Mixed
            } else {
                Mode::Source
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
            devmode: config.devmode.as_deref().map(crate::session::devmode_tree),
            dev_warning: None,
            dirty: true,
        }
    }

    /// A drilldown over an already loaded image (tests, snapshots).
    #[cfg(test)]
    pub fn with_image(
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

    pub fn take_dirty(&mut self) -> bool {
        std::mem::take(&mut self.dirty)
    }

    pub fn loaded(&self) -> bool {
        self.dd.is_some()
    }

    // ---- layout -------------------------------------------------------

    fn inner_width(&self) -> usize {
        (self.size.0 as usize).saturating_sub(2).max(1)
    }

    /// Status lines before wrapping.
    pub fn status_lines(&self) -> Vec<String> {
        let mut v = Vec::new();
        if let Some(f) = &self.failed {
            v.push(f.clone());
        } else if let Some(r) = &self.running {
            v.push(format!(
                "profiling program {} for {}s at {}Hz...",
                self.id,
                fmt_g(r.duration),
                r.frequency
            ));
            v.push(format!(
                "{:.1}s of {}s, {} samples; Esc cancels and closes",
                r.elapsed.min(r.duration),
                fmt_g(r.duration),
                r.samples
            ));
            v.extend(self.message.clone());
        } else if let Some(m) = &self.message {
            v.push(m.clone());
        } else if let Some(dd) = self.dd.as_ref().filter(|d| d.profiled()) {
            v.extend(dd.header_lines());
        } else if self.dd.is_some() {
            v.push(HELP_LINE.into());
        }
        if self.vanished {
            v.push(format!(
                "program {} was unloaded; Esc returns to the live table",
                self.id
            ));
        }
        v.extend(self.dev_warning.clone());
        v
    }

    /// Status lines wrapped to the panel (at most a third of it).
    pub fn status_wrapped(&self) -> Vec<String> {
        let w = self.inner_width().saturating_sub(1);
        let max = ((self.size.1 as usize) / 3).max(1);
        let mut out: Vec<String> = self
            .status_lines()
            .iter()
            .flat_map(|l| wrap(l, w))
            .collect();
        out.truncate(max);
        out
    }

    /// The title wrapped to the panel (at most two lines).
    pub fn title_wrapped(&self) -> Vec<String> {
        let mut t = wrap(&self.title(), self.inner_width().saturating_sub(1));
        t.truncate(2);
        t
    }

    /// Rows of the table body.
    pub fn table_height(&self) -> usize {
        let inner = (self.size.1 as usize).saturating_sub(2);
        let mut used = self.title_wrapped().len() + self.status_wrapped().len() + 1;
        if self.form.is_some() {
            used += FORM_LABELS.len();
        }
        if self.search.is_some() {
            used += 1;
        }
        inner.saturating_sub(used).max(1)
    }

    pub fn title(&self) -> String {
        let (Some(img), Some(dd)) = (&self.image, &self.dd) else {
            return if self.failed.is_some() {
                format!("program {}", self.id)
            } else {
                format!("loading program {}...", self.id)
            };
        };
        let mut t = format!(
            "program {} {} mode={} disasm={}",
            self.id,
            img.program.name,
            dd.mode.name(),
            dd.disasm.name()
        );
        let under = self
            .profile
            .as_ref()
            .and_then(|p| p.program.as_ref())
            .is_some_and(|p| p.kernel_samples > 0);
        if under {
            t.push_str(if self.exact_ips {
                " kernel=IPs"
            } else {
                " kernel=functions"
            });
        }
        if let Some(m) = &self.meta {
            t.push_str(&format!(
                " event={} F={}Hz {:.1}s samples={}",
                m.event, m.frequency, m.actual_duration, m.samples
            ));
        }
        t
    }

    // ---- rows -----------------------------------------------------------

    fn build(&mut self) -> Option<Drilldown> {
        let img = Arc::clone(self.image.as_ref()?);
        let mixed = self.mode == Mode::Mixed;
        let (bpftool, call_names) = match (&self.disasm, mixed) {
            (Some((b, c)), true) => (b.clone(), c.clone()),
            _ => Default::default(),
        };
        let opts = Options {
            mixed,
            exact_ips: self.exact_ips,
            source_limit: 0,
            bpftool,
            call_names,
        };
        let data = ProgramData {
            id: img.program.id,
            name: &img.program.name,
            xlated: &img.xlated,
            lines: &img.lines,
            jit_ranges: &img.jit_ranges,
        };
        let dev = self
            .devmode
            .as_mut()
            .map(|(tree, bare)| Devmode { tree, bare: *bare });
        match Drilldown::build(data, self.profile.as_ref(), &opts, dev) {
            Ok(d) => Some(d),
            Err(e) => {
                // D19: a bare --devmode that resolves nothing still shows
                // the BTF rows, with a warning.
                let d = Drilldown::build(data, self.profile.as_ref(), &opts, None).ok()?;
                if !d.keys.is_empty() {
                    self.dev_warning = Some(format!("Warning: {e}"));
                }
                Some(d)
            }
        }
    }

    /// Recompute the shown lines from the row list and view state.
    fn refresh_lines(&mut self) {
        if let Some(dd) = &self.dd {
            self.lines = dd.lines(&self.view);
        }
        if let Some(s) = &mut self.search {
            s.matches = matches(self.dd.as_ref(), &self.lines, &s.input.text);
        }
        self.cursor = self.cursor.min(self.lines.len().saturating_sub(1));
        self.clamp_scroll();
        self.dirty = true;
    }

    fn compute_folds(&mut self) {
        let h = self.table_height();
        if let Some(dd) = &self.dd {
            let folds = dd.folds(h);
            if folds != self.view.folds {
                self.view.folds = folds;
                self.view.open_folds.clear();
            }
        }
    }

    /// Rebuild the row list. `reset` collapses every group and fold.
    fn rebuild(&mut self, reset: bool) {
        let anchor = self.anchor(self.cursor);
        let screen = self.cursor.saturating_sub(self.top);
        let expanded_keys: Vec<SourceKey> = match &self.dd {
            Some(dd) if !reset => self
                .view
                .expanded
                .iter()
                .filter_map(|&r| match dd.rows.get(r).map(|r| &r.kind) {
                    Some(RowKind::Source { key }) => Some(dd.keys[*key].clone()),
                    _ => None,
                })
                .collect(),
            _ => Vec::new(),
        };
        self.dd = self.build();
        if reset {
            self.view.expanded.clear();
            self.view.folds.clear();
            self.view.open_folds.clear();
        } else if let Some(dd) = &self.dd {
            self.view.expanded = dd
                .parents()
                .filter(|&r| match dd.rows[r].kind {
                    RowKind::Source { key } => expanded_keys.contains(&dd.keys[key]),
                    _ => false,
                })
                .collect();
        }
        self.compute_folds();
        self.refresh_lines();
        if let Some(a) = anchor {
            self.relocate(&a, screen);
        }
    }

    fn anchor(&self, line: usize) -> Option<Anchor> {
        let dd = self.dd.as_ref()?;
        let l = self.lines.get(line)?;
        let row = match (l.row, l.fold) {
            (Some(r), _) => r,
            (None, Some(f)) => self.view.folds.get(f)?.start,
            _ => return None,
        };
        let preceding_key = |r: usize| {
            dd.rows[..=r].iter().rev().find_map(|x| match x.kind {
                RowKind::Source { key } => Some(dd.keys[key].clone()),
                _ => None,
            })
        };
        let r = &dd.rows[row];
        Some(match r.kind {
            RowKind::Source { key } => Anchor {
                key: Some(dd.keys[key].clone()),
                ..Default::default()
            },
            RowKind::Instruction { slot } => Anchor {
                key: preceding_key(row),
                slot: Some(slot),
                ..Default::default()
            },
            RowKind::Child => Anchor {
                key: r.parent.and_then(preceding_key),
                child: Some(child_symbol(&r.text)),
                ..Default::default()
            },
            RowKind::Context | RowKind::Summary => Anchor {
                text: Some(r.text.clone()),
                ..Default::default()
            },
        })
    }

    /// The best row for `a` in the current row list.
    fn find_row(&self, a: &Anchor) -> Option<usize> {
        let dd = self.dd.as_ref()?;
        let key_of = |r: usize| match dd.rows[r].kind {
            RowKind::Source { key } => Some(&dd.keys[key]),
            _ => None,
        };
        let mut best: Option<(u8, usize)> = None;
        for (i, r) in dd.rows.iter().enumerate() {
            let score = match &r.kind {
                RowKind::Child if a.child.is_some() => {
                    let parent_key = r.parent.and_then(key_of);
                    (parent_key == a.key.as_ref() && Some(child_symbol(&r.text)) == a.child)
                        .then_some(5)
                }
                RowKind::Instruction { slot } if Some(*slot) == a.slot => Some(5),
                RowKind::Source { key } if a.key.as_ref() == Some(&dd.keys[*key]) => Some(4),
                RowKind::Source { key } => {
                    let k = &dd.keys[*key];
                    a.key
                        .as_ref()
                        .filter(|ak| ak.file == k.file && ak.line == k.line && k.line.is_some())
                        .map(|_| 2)
                }
                RowKind::Context | RowKind::Summary if a.text.as_ref() == Some(&r.text) => Some(4),
                _ => None,
            };
            if let Some(s) = score {
                if best.is_none_or(|(b, _)| s > b) {
                    best = Some((s, i));
                }
            }
        }
        best.map(|(_, i)| i)
    }

    /// The shown line that stands for row `r` (itself, its collapsed
    /// parent, or its closed fold).
    fn line_of_row(&self, r: usize) -> Option<usize> {
        if let Some(i) = self.lines.iter().position(|l| l.row == Some(r)) {
            return Some(i);
        }
        let dd = self.dd.as_ref()?;
        if let Some(p) = dd.rows[r].parent {
            if !self.view.expanded.contains(&p) {
                return self.line_of_row(p);
            }
        }
        let f = self.view.folds.iter().position(|f| f.contains(&r))?;
        self.lines.iter().position(|l| l.fold == Some(f))
    }

    /// Put the cursor on `a`'s line at screen line `screen`.
    fn relocate(&mut self, a: &Anchor, screen: usize) {
        if let Some(line) = self.find_row(a).and_then(|r| self.line_of_row(r)) {
            self.cursor = line;
            self.top = line.saturating_sub(screen);
            self.clamp_scroll();
        }
    }

    fn clamp_scroll(&mut self) {
        self.top = scroll_top(self.top, self.cursor, self.lines.len(), self.table_height());
    }

    fn move_to(&mut self, to: usize) {
        self.cursor = to.min(self.lines.len().saturating_sub(1));
        self.clamp_scroll();
        self.dirty = true;
    }

    /// Cursor on the hottest source row (own plus children's samples).
    fn cursor_to_hottest(&mut self) {
        let Some(dd) = &self.dd else {
            return;
        };
        let mut best: Option<(u64, usize)> = None;
        for (i, r) in dd.rows.iter().enumerate() {
            let RowKind::Source { .. } = r.kind else {
                continue;
            };
            let own = if r.leaf {
                r.samples
            } else {
                // Mixed mode: the instructions up to the next source row.
                dd.rows[i + 1..]
                    .iter()
                    .take_while(|x| !matches!(x.kind, RowKind::Source { .. }))
                    .filter(|x| matches!(x.kind, RowKind::Instruction { .. }))
                    .map(|x| x.samples)
                    .sum()
            };
            let total = own + r.children.iter().map(|&c| dd.rows[c].samples).sum::<u64>();
            if total > 0 && best.is_none_or(|(b, _)| total > b) {
                best = Some((total, i));
            }
        }
        if let Some(line) = best.and_then(|(_, r)| self.line_of_row(r)) {
            self.move_to(line);
        }
    }

    pub fn resize(&mut self, size: (u16, u16)) {
        self.size = size;
        self.compute_folds();
        self.refresh_lines();
    }

    // ---- messages -------------------------------------------------------

    pub fn on_msg(&mut self, msg: Msg) -> Vec<Effect> {
        self.dirty = true;
        match msg {
            Msg::Loaded { seq, result } if seq == self.load_seq => match result {
                Ok(img) => {
                    self.image = Some(img);
                    self.rebuild(true);
                    if self.mode == Mode::Mixed {
                        return self.request_disasm();
                    }
                }
                Err(e) => self.failed = Some(e.render()),
            },
            Msg::Disasm {
                seq,
                bpftool,
                call_names,
            } if Some(seq) == self.disasm_seq => {
                self.disasm_seq = None;
                self.disasm = Some((bpftool, call_names));
                self.message = None;
                if self.mode == Mode::Mixed {
                    self.rebuild(true);
                }
            }
            Msg::Vanished { id } if id == self.id => self.vanished = true,
            Msg::Progress {
                seq,
                elapsed,
                samples,
            } => {
                if let Some(r) = self.running.as_mut().filter(|r| r.seq == seq) {
                    r.elapsed = elapsed;
                    r.samples = samples;
                }
            }
            Msg::Profiled { seq, result }
                if self.running.as_ref().is_some_and(|r| r.seq == seq) =>
            {
                self.running = None;
                match result {
                    Ok(done) => {
                        self.meta = Some(Meta {
                            event: done.event,
                            frequency: done.frequency,
                            actual_duration: done.actual_duration,
                            samples: done.inclusive_samples,
                        });
                        self.profile = Some(done.input);
                        self.message = None;
                        self.rebuild(true);
                        self.cursor_to_hottest();
                    }
                    Err(e) => {
                        if matches!(e, BrrError::NoProgram(_)) {
                            self.vanished = true;
                        }
                        self.message = Some(e.render());
                    }
                }
                self.refresh_lines();
            }
            _ => self.dirty = false,
        }
        Vec::new()
    }

    fn request_disasm(&mut self) -> Vec<Effect> {
        if self.disasm.is_some() {
            return Vec::new();
        }
        self.message = Some("Rendering mixed view...".into());
        let seq = self.next_seq();
        self.disasm_seq = Some(seq);
        vec![Effect::Cmd(Cmd::Disasm { id: self.id, seq })]
    }

    fn start_profile(&mut self, request: profile::Request) -> Vec<Effect> {
        let seq = self.next_seq();
        self.running = Some(Running {
            seq,
            duration: request.duration,
            frequency: request.frequency,
            elapsed: 0.0,
            samples: 0,
        });
        self.message = None;
        self.refresh_lines();
        vec![Effect::Profile(ProfileJob {
            seq,
            id: self.id,
            request,
            line_limit: self.config.line_limit,
        })]
    }

    fn default_request(&self) -> profile::Request {
        profile::Request {
            // `p` always captures kernel samples (spec 4.5).
            kernel_samples: true,
            program_id: Some(self.id as u64),
            // The worker fills in its own root.
            bpffs: std::path::PathBuf::new(),
            ..self.config.profile.clone()
        }
    }

    // ---- keys -------------------------------------------------------------

    pub fn on_key(&mut self, k: &KeyEvent) -> Outcome {
        self.dirty = true;
        if is_hard_quit(k) {
            return Outcome::Quit;
        }
        // Overlays take every key but their own and quit.
        match self.overlay {
            Overlay::Help => {
                match k.code {
                    KeyCode::Char('h') | KeyCode::Esc => self.close_overlay(),
                    KeyCode::Char('q') => return Outcome::Quit,
                    _ => {}
                }
                return Outcome::Effects(Vec::new());
            }
            Overlay::Legend => {
                match k.code {
                    KeyCode::Char('M') | KeyCode::Esc => self.close_overlay(),
                    KeyCode::Char('h') => self.open_help(),
                    KeyCode::Char('q') => return Outcome::Quit,
                    _ => {}
                }
                return Outcome::Effects(Vec::new());
            }
            Overlay::None => {}
        }
        if self.form.is_some() {
            return Outcome::Effects(self.form_key(k));
        }
        if self.search.as_ref().is_some_and(|s| s.editing) {
            self.search_edit_key(k);
            return Outcome::Effects(Vec::new());
        }
        if k.code == KeyCode::Esc {
            if self.search.is_some() {
                self.search = None;
                self.message = None;
                self.refresh_lines();
                return Outcome::Effects(Vec::new());
            }
            return Outcome::Close;
        }
        if k.code == KeyCode::Char('q') {
            return Outcome::Quit;
        }
        if self.nav_key(k) {
            return Outcome::Effects(Vec::new());
        }
        if k.code == KeyCode::Char('h') {
            self.open_help();
            return Outcome::Effects(Vec::new());
        }
        if !self.loaded() {
            return Outcome::Effects(Vec::new());
        }
        if self.search.is_some() {
            // The search bar disables the action keys, except moving
            // between matches and editing the query again.
            match k.code {
                KeyCode::Char('n') | KeyCode::Enter => self.next_match(true),
                KeyCode::Char('N') => self.next_match(false),
                KeyCode::Char('/') => {
                    if let Some(s) = &mut self.search {
                        s.editing = true;
                    }
                }
                _ => {}
            }
            return Outcome::Effects(Vec::new());
        }
        Outcome::Effects(self.action_key(k))
    }

    fn nav_key(&mut self, k: &KeyEvent) -> bool {
        let h = self.table_height();
        let n = self.lines.len();
        match k.code {
            KeyCode::Up => self.move_to(self.cursor.saturating_sub(1)),
            KeyCode::Down => self.move_to(self.cursor + 1),
            KeyCode::PageUp => self.move_to(self.cursor.saturating_sub(h)),
            KeyCode::PageDown => self.move_to(self.cursor + h),
            KeyCode::Home => self.move_to(0),
            KeyCode::End => self.move_to(n.saturating_sub(1)),
            KeyCode::Left => self.hscroll = self.hscroll.saturating_sub(8),
            KeyCode::Right => self.hscroll += 8,
            _ => return false,
        }
        true
    }

    fn open_help(&mut self) {
        self.overlay = Overlay::Help;
        self.message = Some("drilldown help open; Esc or h closes".into());
    }

    fn close_overlay(&mut self) {
        self.overlay = Overlay::None;
        self.message = None;
    }

    fn action_key(&mut self, k: &KeyEvent) -> Vec<Effect> {
        match k.code {
            KeyCode::Char(' ') => {
                let anchor = self.anchor(self.cursor);
                let screen = self.cursor.saturating_sub(self.top);
                self.mode = match self.mode {
                    Mode::Source => Mode::Mixed,
                    Mode::Mixed => Mode::Source,
                };
                if self.mode == Mode::Mixed && self.disasm.is_none() {
                    return self.request_disasm();
                }
                self.message = None;
                self.rebuild(true);
                if let Some(a) = anchor {
                    self.relocate(&a, screen);
                }
            }
            KeyCode::Char('p') if self.running.is_none() => {
                let r = self.default_request();
                return self.start_profile(r);
            }
            KeyCode::Char('P') if self.running.is_none() => {
                self.form = Some(Form::new(&self.config.profile));
                self.message = Some(FORM_PROMPT.into());
                self.refresh_lines();
            }
            KeyCode::Char('i') => {
                let Some(p) = &self.profile else {
                    return Vec::new();
                };
                if p.program.as_ref().is_none_or(|q| q.kernel_samples == 0) {
                    self.message = Some(
                        "no kernel/helper samples; profile with kernel samples enabled".into(),
                    );
                    return Vec::new();
                }
                self.exact_ips = !self.exact_ips;
                self.message = None;
                self.rebuild(false);
            }
            KeyCode::Char('m') => {
                self.view.markers = !self.view.markers;
                self.message = Some(
                    if self.view.markers {
                        "source mapping markers shown"
                    } else {
                        "source mapping markers hidden"
                    }
                    .into(),
                );
                self.refresh_lines();
            }
            KeyCode::Char('M') => {
                self.overlay = Overlay::Legend;
                self.message = Some("marker legend open; Esc or M closes".into());
            }
            KeyCode::Char('e') => self.expand_one(),
            KeyCode::Char('c') => self.collapse_one(),
            KeyCode::Char('E') => self.set_all(true),
            KeyCode::Char('C') => self.set_all(false),
            KeyCode::Char('/') => {
                let all: HashSet<usize> = (0..self.view.folds.len()).collect();
                self.view.open_folds = all;
                self.search = Some(Search {
                    input: Input::default(),
                    editing: true,
                    matches: Vec::new(),
                });
                self.message = Some(SEARCH_HINT.into());
                self.refresh_lines();
            }
            _ => {}
        }
        Vec::new()
    }

    fn expand_one(&mut self) {
        let Some(l) = self.lines.get(self.cursor).cloned() else {
            return;
        };
        match (l.row, l.fold) {
            (None, Some(f)) => {
                self.view.open_folds.insert(f);
            }
            (Some(r), _) => {
                let has_children = self
                    .dd
                    .as_ref()
                    .is_some_and(|d| !d.rows[r].children.is_empty());
                if !has_children || !self.view.expanded.insert(r) {
                    return;
                }
            }
            _ => return,
        }
        self.refresh_lines();
    }

    fn collapse_one(&mut self) {
        let Some(r) = self.lines.get(self.cursor).and_then(|l| l.row) else {
            return;
        };
        let Some(dd) = &self.dd else {
            return;
        };
        let screen = self.cursor.saturating_sub(self.top);
        if let Some(p) = dd.rows[r].parent {
            self.view.expanded.remove(&p);
            self.refresh_lines();
            if let Some(line) = self.line_of_row(p) {
                self.cursor = line;
                self.top = line.saturating_sub(screen);
                self.clamp_scroll();
            }
        } else if self.view.expanded.remove(&r) {
            self.refresh_lines();
        } else if let Some(f) = self
            .view
            .folds
            .iter()
            .position(|f| f.contains(&r))
            .filter(|f| self.view.open_folds.contains(f))
        {
            self.view.open_folds.remove(&f);
            self.refresh_lines();
            if let Some(line) = self.lines.iter().position(|l| l.fold == Some(f)) {
                self.cursor = line;
                self.top = line.saturating_sub(screen);
                self.clamp_scroll();
            }
        }
    }

    /// `E` / `C`: every group and fold, keeping the selected branch on its
    /// screen line.
    fn set_all(&mut self, open: bool) {
        let Some(dd) = &self.dd else {
            return;
        };
        let anchor = self.anchor(self.cursor);
        let screen = self.cursor.saturating_sub(self.top);
        if open {
            self.view.expanded = dd.parents().collect();
            self.view.open_folds = (0..self.view.folds.len()).collect();
        } else {
            self.view.expanded.clear();
            self.view.open_folds.clear();
        }
        self.refresh_lines();
        if let Some(a) = anchor {
            self.relocate(&a, screen);
        }
    }

    fn search_edit_key(&mut self, k: &KeyEvent) {
        let Some(s) = &mut self.search else {
            return;
        };
        match k.code {
            KeyCode::Esc => {
                self.search = None;
                self.message = None;
            }
            KeyCode::Enter => {
                s.editing = false;
                let q = s.input.text.clone();
                if q.is_empty() {
                    self.message = None;
                } else {
                    s.matches = matches(self.dd.as_ref(), &self.lines, &q);
                    let n = s.matches.len();
                    self.message = Some(if n == 0 {
                        format!("no source search matches for {}", py_repr(&q))
                    } else {
                        format!("{n} source search matches for {}", py_repr(&q))
                    });
                    if let Some(&first) = s.matches.first() {
                        self.move_to(first);
                    }
                }
            }
            _ => {
                if s.input.edit(k) {
                    // The hint stays until the first keystroke.
                    if self.message.as_deref() == Some(SEARCH_HINT) {
                        self.message = None;
                    }
                }
            }
        }
        self.refresh_lines();
    }

    fn next_match(&mut self, forward: bool) {
        let Some(s) = &self.search else {
            return;
        };
        let m = &s.matches;
        let to = if forward {
            m.iter().find(|&&i| i > self.cursor).or(m.first())
        } else {
            m.iter().rev().find(|&&i| i < self.cursor).or(m.last())
        };
        if let Some(&to) = to {
            let n = m.len();
            let at = m.iter().position(|&i| i == to).unwrap_or(0) + 1;
            self.message = Some(format!("match {at} of {n} for {}", py_repr(&s.input.text)));
            self.move_to(to);
        }
    }

    fn form_key(&mut self, k: &KeyEvent) -> Vec<Effect> {
        let Some(form) = &mut self.form else {
            return Vec::new();
        };
        let n = FORM_LABELS.len();
        match k.code {
            KeyCode::Esc => {
                self.form = None;
                // D16: back to the CPU (or help) line.
                self.message = None;
                self.refresh_lines();
            }
            KeyCode::Tab | KeyCode::Down => form.focus = (form.focus + 1) % n,
            KeyCode::BackTab | KeyCode::Up => form.focus = (form.focus + n - 1) % n,
            KeyCode::Enter | KeyCode::Char(' ') if form.focus == 6 => form.kernel = !form.kernel,
            KeyCode::Enter => match form.request(self.id) {
                Ok(req) => {
                    self.form = None;
                    return self.start_profile(req);
                }
                Err(e) => self.message = Some(e),
            },
            _ if form.focus < 6 && !k.modifiers.contains(KeyModifiers::ALT) => {
                form.fields[form.focus].edit(k);
            }
            _ => {}
        }
        Vec::new()
    }
}

/// Shown lines whose row text contains `q` (case-insensitive); fold lines
/// never match.
fn matches(dd: Option<&Drilldown>, lines: &[Line], q: &str) -> Vec<usize> {
    let (Some(dd), false) = (dd, q.is_empty()) else {
        return Vec::new();
    };
    let q = q.to_lowercase();
    lines
        .iter()
        .enumerate()
        .filter(|(_, l)| {
            l.row
                .is_some_and(|r| dd.rows[r].text.to_lowercase().contains(&q))
        })
        .map(|(i, _)| i)
        .collect()
}
