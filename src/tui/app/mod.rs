//! The TUI's state and its reaction to keys and worker messages: the live
//! table (sort, filter, cursor kept on its program, scroll kept across
//! updates), the delay dialog, the help panel, and the switch into the
//! drilldown ([`super::drill`]). No I/O: every outside effect is returned
//! as an [`Effect`](super::effect::Effect) for the event loop to carry out.
//!
//! This file holds the state, the table layout and the worker messages;
//! `columns` has the columns and their sort order, `keys` the keys of the
//! table, the filter and the delay dialog.

mod columns;
mod cost;
mod keys;

use super::drill::{About, Drill};
use super::effect::Effect;
use super::history::Shared;
use super::worker::{Cmd, Msg};
use super::Config;
use crate::activity::ActivityRow;
use crate::render::listing::{activity_headers, ActivityCol};
use crate::render::listing::{attach_cell, owners_cell};
use crate::render::num::{commas, fmt_g};

use super::text::{is_hard_quit, scroll_top, Input};
pub(crate) use columns::Sort;
use columns::{compare, default_order};
pub(crate) use cost::CostPane;

pub(crate) const FOOTER: &str = " ^q Quit  r Refresh  ? Inspect  space Pause/mode  x Extended  c Cumulative/fold  d Delay  h Help  s/S Sort  / Filter";

/// Main-table help panel rows.
pub(crate) const MAIN_HELP: [(&str, &str); 20] = [
    ("Up/Down, j/k", "Move one row"),
    ("PgUp/PgDn", "Move one page"),
    ("Home/End", "First / last row"),
    ("^Home/^End", "First / last row"),
    ("Left/Right", "Scroll columns; ID, NAME stay"),
    ("^PgUp/^PgDn", "Scroll columns by page"),
    ("Enter, ?", "Inspect program"),
    ("Space", "Pause / resume"),
    ("r", "Refresh once"),
    ("x", "Extended columns"),
    ("c", "Cumulative columns"),
    ("C", "Cost: program/dispatch/stats"),
    ("d", "Refresh delay"),
    ("s / S", "Next sort column / reverse"),
    ("< / >", "Previous / next sort column"),
    ("/", "Filter: name/type/ID/owner/pod"),
    ("Esc", "Close dialog / clear filter"),
    ("g", "History chart of the program"),
    ("h", "Toggle this help"),
    ("q, ^q, ^c", "Quit"),
];

pub(crate) struct App {
    pub config: Config,
    pub extended: bool,
    pub cumulative: bool,
    pub delay: f64,
    /// Terminal size (columns, rows).
    pub size: (u16, u16),
    pub rows: Vec<ActivityRow>,
    pub measured: f64,
    /// Indices into `rows` after filter and sort.
    pub order: Vec<usize>,
    pub headers: Vec<&'static str>,
    pub cols: Vec<ActivityCol>,
    /// Cell texts of `order`, row by row.
    /// Column widths; they only grow until the columns change (no jitter).
    pub widths: Vec<usize>,
    pub sort: Sort,
    pub filter: String,
    /// The filter being typed.
    pub filter_input: Option<Input>,
    pub cursor: usize,
    pub top: usize,
    /// First column shown (horizontal scroll).
    pub hcol: usize,
    pub paused: bool,
    pub window_running: bool,
    pub status: String,
    pub help: bool,
    pub delay_dialog: Option<Input>,
    pub drill: Option<Drill>,
    /// Something visible changed since the last draw.
    pub dirty: bool,
    /// The recent windows of every program (recorded by the sampler).
    pub history: Shared,
    /// `g`: the chart pane of the selected program is shown.
    pub chart: bool,
    /// The user moved the cursor (or came back from a drilldown): from
    /// then on it stays on its program; before, on row 0, the hottest.
    pub moved: bool,
    /// `C`: the cost capture and its figures, shown over the table.
    pub cost: Option<CostPane>,
    seq: u64,
}

/// Screen lines of the chart pane: a border line, three charts of a
/// label line and [`CHART_ROWS`] sparkline rows each, a border line.
pub(crate) const CHART_HEIGHT: usize = 2 + 3 * (1 + CHART_ROWS);
/// Rows of each sparkline in the chart pane.
pub(crate) const CHART_ROWS: usize = 2;
/// Table rows that must stay visible for the chart pane to be shown.
const MIN_TABLE_ROWS: usize = 5;

impl App {
    /// `rows` is the start-up snapshot (shown at once, zero deltas).
    pub(crate) fn new(config: Config, size: (u16, u16), rows: Vec<ActivityRow>) -> App {
        let mut app = App {
            delay: config.delay,
            extended: config.extended,
            cumulative: config.cumulative,
            config,
            size,
            rows,
            measured: 0.0,
            order: Vec::new(),
            headers: Vec::new(),
            cols: Vec::new(),
            widths: Vec::new(),
            sort: Sort {
                col: ActivityCol::Cpu,
                desc: true,
            },
            filter: String::new(),
            filter_input: None,
            cursor: 0,
            top: 0,
            hcol: 0,
            paused: false,
            window_running: false,
            status: "Sampling eBPF runtime deltas...".into(),
            help: false,
            delay_dialog: None,
            drill: None,
            dirty: true,
            history: Shared::default(),
            chart: false,
            moved: false,
            cost: None,
            seq: 0,
        };
        app.relayout(true);
        app
    }

    /// The host's CPU the programs' run time took in the last window:
    /// the sum of their run time, percent of all `config.cpus` CPUs
    /// (dispatch and statistics not included: `C` measures them). None
    /// before a window was measured.
    pub(crate) fn programs_run_time(&self) -> Option<f64> {
        if self.measured <= 0.0 || self.config.cpus == 0 {
            return None;
        }
        let ns: u64 = self.rows.iter().map(|r| r.run_time_ns_delta).sum();
        Some(ns as f64 / (self.measured * 1e9 * self.config.cpus as f64) * 100.0)
    }

    /// Effects to run at start: the first window, or straight into a
    /// drilldown for `--program-id`.
    pub(crate) fn start(&mut self) -> Vec<Effect> {
        match self.config.program_id {
            Some(id) => self.open_drill(id),
            None => self.maybe_measure(),
        }
    }

    pub(crate) fn next_seq(&mut self) -> u64 {
        self.seq += 1;
        self.seq
    }

    /// Rows of the table body.
    pub(crate) fn body_height(&self) -> usize {
        // Header bar, column headers, status line, footer.
        let all = (self.size.1 as usize).saturating_sub(4).max(1);
        if self.chart_shown() {
            all - CHART_HEIGHT
        } else {
            all
        }
    }

    /// Whether the chart pane is drawn: asked for with `g`, and the
    /// terminal is tall enough to keep some table rows beside it.
    pub(crate) fn chart_shown(&self) -> bool {
        self.chart && (self.size.1 as usize).saturating_sub(4) >= CHART_HEIGHT + MIN_TABLE_ROWS
    }

    /// The program under the cursor (the one the chart pane shows).
    pub(crate) fn selected(&self) -> Option<&ActivityRow> {
        self.order.get(self.cursor).and_then(|&i| self.rows.get(i))
    }

    fn cursor_id(&self) -> Option<u32> {
        self.order.get(self.cursor).map(|&i| self.rows[i].prog.id)
    }

    /// Rebuild the order and widths from `rows`; keep the cursor on its program
    /// and both scroll offsets (clamped).
    fn relayout(&mut self, reset_widths: bool) {
        let keep = self.cursor_id();
        self.relayout_keeping(keep, reset_widths);
    }

    /// The text of column `c` in the `ri`-th row of the table as ordered.
    pub(crate) fn cell(&self, ri: usize, c: usize) -> String {
        match (self.order.get(ri), self.cols.get(c)) {
            (Some(&i), Some(col)) => col.cell(&self.rows[i], self.window_seconds(), &commas),
            _ => String::new(),
        }
    }

    /// The seconds the rows' rates are over (1 before the first window).
    fn window_seconds(&self) -> f64 {
        if self.measured > 0.0 {
            self.measured
        } else {
            1.0
        }
    }

    fn relayout_keeping(&mut self, keep: Option<u32>, reset_widths: bool) {
        if !ActivityCol::shown(self.cumulative, self.extended).contains(&self.sort.col) {
            self.sort = Sort {
                col: ActivityCol::Cpu,
                desc: true,
            };
        }
        let needle = self.filter.to_lowercase();
        let mut order: Vec<usize> = (0..self.rows.len())
            .filter(|&i| {
                needle.is_empty() || {
                    let p = &self.rows[i].prog;
                    p.name.to_lowercase().contains(&needle)
                        || p.display_name().to_lowercase().contains(&needle)
                        || p.prog_type.to_lowercase().contains(&needle)
                        || p.id.to_string().contains(&needle)
                        || p.keepers.as_ref().is_some_and(|k| owners_match(k, &needle))
                }
            })
            .collect();
        let sort = self.sort;
        let rows = &self.rows;
        order.sort_by(|&a, &b| {
            let (a, b) = (&rows[a], &rows[b]);
            let o = compare(sort.col, a, b);
            let o = if sort.desc { o.reverse() } else { o };
            o.then_with(|| default_order(a, b))
        });
        let measured = self.window_seconds();
        let cols = ActivityCol::shown(self.cumulative, self.extended);
        let headers = activity_headers(&cols);
        self.cols = cols;
        if reset_widths || self.widths.len() != headers.len() {
            self.widths = vec![0; headers.len()];
        }
        for (i, h) in headers.iter().enumerate() {
            let w = self.header_text(i, h).chars().count();
            self.widths[i] = self.widths[i].max(w);
        }
        // Widths fit every row, so that they do not change as the table
        // scrolls; the text is made only for the rows drawn (`cell`).
        for &i in &order {
            let row = &self.rows[i];
            for (w, c) in self.widths.iter_mut().zip(&self.cols) {
                *w = (*w).max(c.grouped_width(row, measured));
            }
        }
        self.headers = headers;
        self.order = order;
        let keep = keep.filter(|_| self.moved);
        let fallback = if self.moved { self.cursor } else { 0 };
        self.cursor = keep
            .and_then(|id| self.order.iter().position(|&i| self.rows[i].prog.id == id))
            .unwrap_or(fallback)
            .min(self.order.len().saturating_sub(1));
        self.hcol = self.hcol.min(self.cols.len().saturating_sub(1));
        self.clamp_scroll();
        self.dirty = true;
    }

    /// Header text with the sort arrow.
    pub(crate) fn header_text(&self, i: usize, h: &str) -> String {
        if self.cols.get(i) == Some(&self.sort.col) {
            format!("{h}{}", if self.sort.desc { "▼" } else { "▲" })
        } else {
            h.to_string()
        }
    }

    fn clamp_scroll(&mut self) {
        self.top = scroll_top(self.top, self.cursor, self.order.len(), self.body_height());
    }

    fn move_cursor(&mut self, to: usize) {
        self.moved = true;
        self.cursor = to.min(self.order.len().saturating_sub(1));
        self.clamp_scroll();
        self.dirty = true;
    }

    pub(crate) fn resize(&mut self, w: u16, h: u16) {
        self.size = (w, h);
        self.clamp_scroll();
        if let Some(d) = &mut self.drill {
            d.resize(self.size);
        }
        self.dirty = true;
    }

    /// Start a window when the table is live and none runs.
    fn maybe_measure(&mut self) -> Vec<Effect> {
        if self.paused || self.delay_dialog.is_some() || self.drill.is_some() {
            return Vec::new();
        }
        self.measure_now()
    }

    fn measure_now(&mut self) -> Vec<Effect> {
        if self.window_running {
            return Vec::new();
        }
        self.window_running = true;
        vec![Effect::Cmd(Cmd::Measure { delay: self.delay })]
    }

    fn runtime_status(&self) -> String {
        if self.paused {
            "Refresh paused; press Space to resume or r to refresh once.".into()
        } else if self
            .rows
            .iter()
            .all(|r| r.run_count_delta == 0 && r.run_time_ns_delta == 0)
        {
            "No active eBPF program runtime deltas observed.".into()
        } else {
            format!(
                "Runtime deltas over {}s; press Enter or ? to inspect a program.",
                fmt_g(self.delay)
            )
        }
    }

    fn set_status(&mut self, s: impl Into<String>) {
        let s = s.into();
        if s != self.status {
            self.status = s;
            self.dirty = true;
        }
    }

    pub(crate) fn on_msg(&mut self, msg: Msg) -> Vec<Effect> {
        match msg {
            Msg::Window { rows, measured } => {
                self.window_running = false;
                // Idle hosts produce identical windows: nothing to redraw.
                let changed = rows != self.rows;
                let keep = self.cursor_id();
                self.rows = rows;
                self.measured = measured;
                if changed {
                    self.relayout_keeping(keep, false);
                }
                if self.drill.is_none() {
                    let s = self.runtime_status();
                    self.set_status(s);
                }
                self.maybe_measure()
            }
            Msg::CostProgress { seq, elapsed } => {
                self.cost_progress(seq, elapsed);
                Vec::new()
            }
            Msg::Costed { seq, result } => {
                self.costed(seq, result);
                Vec::new()
            }
            Msg::WindowFailed(e) => {
                self.window_running = false;
                if self.drill.is_none() {
                    self.set_status(e.render());
                }
                self.maybe_measure()
            }
            other => match &mut self.drill {
                Some(d) => {
                    let fx = d.on_msg(other);
                    self.dirty |= d.take_dirty();
                    fx
                }
                None => Vec::new(),
            },
        }
    }

    fn open_drill(&mut self, id: u32) -> Vec<Effect> {
        let seq = self.next_seq();
        let mut drill = Drill::new(id, seq, &self.config, self.size);
        drill.about = self.rows.iter().find(|r| r.prog.id == id).map(|r| {
            let p = &r.prog;
            let owner = owners_cell(p.keepers.as_ref(), !p.pinned_paths.is_empty());
            let attach = attach_cell(&p.attached);
            About {
                full_name: p.display_name().to_string(),
                owner: (owner != "-").then_some(owner),
                attach: (attach != "-").then_some(attach),
            }
        });
        self.drill = Some(drill);
        // The window in flight ends without a result (the Load interrupts it).
        self.window_running = false;
        self.dirty = true;
        vec![Effect::Cmd(Cmd::Load { id, seq })]
    }

    fn close_drill(&mut self) -> Vec<Effect> {
        let mut fx = Vec::new();
        if let Some(d) = self.drill.take() {
            if d.running.is_some() {
                fx.push(Effect::CancelProfile);
            }
            // Back on the program just viewed, wherever it sorts now.
            self.moved = true;
            self.relayout_keeping(Some(d.id), false);
        }
        fx.push(Effect::Cmd(Cmd::Close));
        self.dirty = true;
        let s = self.runtime_status();
        self.set_status(s);
        // One update at once, also when paused.
        fx.extend(self.measure_now());
        fx
    }
}

/// Whether an owner's comm, or the pod (`namespace/name`) or container
/// name it runs in, contains `needle` (already lowercase).
fn owners_match(k: &crate::model::Keepers, needle: &str) -> bool {
    let has = |t: &str| t.to_lowercase().contains(needle);
    k.owners.iter().any(|o| has(&o.comm))
        || k.workloads.values().any(|w| {
            let pod = w.pod.as_ref().is_some_and(|p| {
                let ns = p.namespace.as_deref().unwrap_or("");
                let name = p.name.as_deref().unwrap_or("");
                has(&format!("{ns}/{name}"))
            });
            let container = w
                .container
                .as_ref()
                .and_then(|c| c.name.as_deref())
                .is_some_and(has);
            pod || container
        })
}
