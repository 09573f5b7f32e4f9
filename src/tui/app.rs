//! The TUI's state and its reaction to keys and worker messages: the live
//! table (sort, filter, cursor kept on its program, scroll kept across
//! updates), the delay dialog, the help panel, and the switch into the
//! drilldown ([`super::drill`]). No I/O: every outside effect is returned
//! as an [`Effect`] for the event loop to carry out.

use std::cmp::Ordering;

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

use super::drill::Drill;
use super::worker::{Cmd, Msg, ProfileJob};
use super::Config;
use crate::activity::ActivityRow;
use crate::render::listing::activity_table;
use crate::render::num::{self, commas, fmt_g};
use crate::values::ValueError;

/// What the event loop must do after a key or message.
#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    Cmd(Cmd),
    Profile(ProfileJob),
    CancelProfile,
    Quit,
}

/// A main-table column, in display order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Col {
    Id,
    Type,
    Name,
    Cpu,
    ExecsPerSec,
    AvgNs,
    CumulAvgNs,
    NsPerSec,
    ExecsDelta,
    TotalNs,
    ExecsTotal,
    CumulNs,
    Xlat,
    Jit,
    Tag,
    Pinned,
}

impl Col {
    pub fn of_header(h: &str) -> Col {
        match h {
            "ID" => Col::Id,
            "TYPE" => Col::Type,
            "NAME" => Col::Name,
            "CPU%" => Col::Cpu,
            "EXECS/s" => Col::ExecsPerSec,
            "AVG_NS" => Col::AvgNs,
            "CUMUL_AVG_NS" => Col::CumulAvgNs,
            "NS_PER/s" => Col::NsPerSec,
            "EXECS_DELTA" => Col::ExecsDelta,
            "TOTAL_NS" => Col::TotalNs,
            "EXECS_TOTAL" => Col::ExecsTotal,
            "CUMUL_NS" => Col::CumulNs,
            "XLAT_B" => Col::Xlat,
            "JIT_B" => Col::Jit,
            "TAG" => Col::Tag,
            _ => Col::Pinned,
        }
    }

    pub fn left_aligned(self) -> bool {
        matches!(self, Col::Type | Col::Name | Col::Tag | Col::Pinned)
    }

    /// Text columns sort ascending first, numbers descending.
    fn natural_desc(self) -> bool {
        !matches!(
            self,
            Col::Id | Col::Type | Col::Name | Col::Tag | Col::Pinned
        )
    }

    fn cmp(self, a: &ActivityRow, b: &ActivityRow) -> Ordering {
        let (p, q) = (&a.prog, &b.prog);
        match self {
            Col::Id => p.id.cmp(&q.id),
            Col::Type => p.prog_type.cmp(&q.prog_type),
            Col::Name => p.name.cmp(&q.name),
            Col::Cpu | Col::NsPerSec | Col::TotalNs => {
                a.run_time_ns_delta.cmp(&b.run_time_ns_delta)
            }
            Col::ExecsPerSec | Col::ExecsDelta => a.run_count_delta.cmp(&b.run_count_delta),
            Col::AvgNs => a.avg_ns().cmp(&b.avg_ns()),
            Col::CumulAvgNs => a.cumulative_avg_ns().cmp(&b.cumulative_avg_ns()),
            Col::ExecsTotal => p.run_count.cmp(&q.run_count),
            Col::CumulNs => p.run_time_ns.cmp(&q.run_time_ns),
            Col::Xlat => p.xlated_size.cmp(&q.xlated_size),
            Col::Jit => p.jited_size.cmp(&q.jited_size),
            Col::Tag => p.tag.cmp(&q.tag),
            Col::Pinned => p.pinned_paths.cmp(&q.pinned_paths),
        }
    }
}

/// The order rows keep under any sort column, and among equal sort keys:
/// run-time delta, then run-count delta (both descending), then ID, so
/// that the busiest programs come first and equal rows never swap.
fn default_order(a: &ActivityRow, b: &ActivityRow) -> Ordering {
    b.run_time_ns_delta
        .cmp(&a.run_time_ns_delta)
        .then(b.run_count_delta.cmp(&a.run_count_delta))
        .then(a.prog.id.cmp(&b.prog.id))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sort {
    pub col: Col,
    pub desc: bool,
}

/// Greedy word wrap to `width` cells (long words are cut).
pub fn wrap(text: &str, width: usize) -> Vec<String> {
    let width = width.max(1);
    let mut out = Vec::new();
    let mut line = String::new();
    let mut len = 0;
    for word in text.split(' ') {
        let mut w: Vec<char> = word.chars().collect();
        if len > 0 && len + 1 + w.len() > width {
            out.push(std::mem::take(&mut line));
            len = 0;
        }
        if len > 0 {
            line.push(' ');
            len += 1;
        }
        while len + w.len() > width {
            let take = width - len;
            line.extend(w.drain(..take));
            out.push(std::mem::take(&mut line));
            len = 0;
        }
        len += w.len();
        line.extend(w);
    }
    out.push(line);
    out
}

/// The first shown row: `top` moved only as far as needed to keep the
/// cursor in a viewport of `height` rows over `n` rows.
pub fn scroll_top(top: usize, cursor: usize, n: usize, height: usize) -> usize {
    let top = top.min(n.saturating_sub(height));
    if cursor < top {
        cursor
    } else if cursor >= top + height {
        cursor + 1 - height
    } else {
        top
    }
}

/// A one-line text input (the delay dialog and the filter).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Input {
    pub text: String,
}

impl Input {
    pub fn new(text: &str) -> Input {
        Input { text: text.into() }
    }

    /// Apply an editing key; false if the key is not an editing key.
    pub fn edit(&mut self, k: &KeyEvent) -> bool {
        match k.code {
            KeyCode::Char(c) if !k.modifiers.contains(KeyModifiers::CONTROL) => {
                self.text.push(c);
                true
            }
            KeyCode::Backspace => {
                self.text.pop();
                true
            }
            _ => false,
        }
    }
}

/// Ctrl+C and Ctrl+Q quit from everywhere, also while typing.
pub fn is_hard_quit(k: &KeyEvent) -> bool {
    k.modifiers.contains(KeyModifiers::CONTROL)
        && matches!(k.code, KeyCode::Char('c') | KeyCode::Char('q'))
}

pub const FOOTER: &str = " ^q Quit  r Refresh  ? Inspect  space Pause/mode  x Extended  c Cumulative/fold  d Delay  h Help  s/S Sort  / Filter";

/// Main-table help panel rows.
pub const MAIN_HELP: [(&str, &str); 18] = [
    ("Up/Down", "Move one row"),
    ("PgUp/PgDn", "Move one page"),
    ("Home/End", "First / last row"),
    ("^Home/^End", "First / last row"),
    ("Left/Right", "Scroll columns"),
    ("^PgUp/^PgDn", "Scroll columns by page"),
    ("Enter, ?", "Inspect program"),
    ("Space", "Pause / resume"),
    ("r", "Refresh once"),
    ("x", "Extended columns"),
    ("c", "Cumulative columns"),
    ("d", "Refresh delay"),
    ("s / S", "Next sort column / reverse"),
    ("< / >", "Previous / next sort column"),
    ("/", "Filter by name or type"),
    ("Esc", "Close dialog / clear filter"),
    ("h", "Toggle this help"),
    ("q, ^q, ^c", "Quit"),
];

pub struct App {
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
    pub cols: Vec<Col>,
    /// Cell texts of `order`, row by row.
    pub cells: Vec<Vec<String>>,
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
    seq: u64,
}

impl App {
    /// `rows` is the start-up snapshot (shown at once, zero deltas).
    pub fn new(config: Config, size: (u16, u16), rows: Vec<ActivityRow>) -> App {
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
            cells: Vec::new(),
            widths: Vec::new(),
            sort: Sort {
                col: Col::Cpu,
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
            seq: 0,
        };
        app.relayout(true);
        app
    }

    /// Effects to run at start: the first window, or straight into a
    /// drilldown for `--program-id`.
    pub fn start(&mut self) -> Vec<Effect> {
        match self.config.program_id {
            Some(id) => self.open_drill(id),
            None => self.maybe_measure(),
        }
    }

    pub fn next_seq(&mut self) -> u64 {
        self.seq += 1;
        self.seq
    }

    /// Rows of the table body.
    pub fn body_height(&self) -> usize {
        // Header bar, column headers, status line, footer.
        (self.size.1 as usize).saturating_sub(4).max(1)
    }

    fn cursor_id(&self) -> Option<u32> {
        self.order.get(self.cursor).map(|&i| self.rows[i].prog.id)
    }

    /// Rebuild order and cells from `rows`; keep the cursor on its program
    /// and both scroll offsets (clamped).
    fn relayout(&mut self, reset_widths: bool) {
        let keep = self.cursor_id();
        self.relayout_keeping(keep, reset_widths);
    }

    fn relayout_keeping(&mut self, keep: Option<u32>, reset_widths: bool) {
        let (shown, _) = activity_table(&[], 1.0, self.cumulative, self.extended, commas);
        if !shown.iter().any(|h| Col::of_header(h) == self.sort.col) {
            self.sort = Sort {
                col: Col::Cpu,
                desc: true,
            };
        }
        let needle = self.filter.to_lowercase();
        let mut order: Vec<usize> = (0..self.rows.len())
            .filter(|&i| {
                needle.is_empty() || {
                    let p = &self.rows[i].prog;
                    p.name.to_lowercase().contains(&needle)
                        || p.prog_type.to_lowercase().contains(&needle)
                }
            })
            .collect();
        let sort = self.sort;
        let rows = &self.rows;
        order.sort_by(|&a, &b| {
            let (a, b) = (&rows[a], &rows[b]);
            let o = sort.col.cmp(a, b);
            let o = if sort.desc { o.reverse() } else { o };
            o.then_with(|| default_order(a, b))
        });
        let shown: Vec<ActivityRow> = order.iter().map(|&i| self.rows[i].clone()).collect();
        let measured = if self.measured > 0.0 {
            self.measured
        } else {
            1.0
        };
        let (headers, cells) =
            activity_table(&shown, measured, self.cumulative, self.extended, commas);
        self.cols = headers.iter().map(|h| Col::of_header(h)).collect();
        if reset_widths || self.widths.len() != headers.len() {
            self.widths = vec![0; headers.len()];
        }
        for (i, h) in headers.iter().enumerate() {
            let w = self.header_text(i, h).chars().count();
            self.widths[i] = self.widths[i].max(w);
        }
        for row in &cells {
            for (w, c) in self.widths.iter_mut().zip(row) {
                *w = (*w).max(c.chars().count());
            }
        }
        self.headers = headers;
        self.cells = cells;
        self.order = order;
        self.cursor = keep
            .and_then(|id| self.order.iter().position(|&i| self.rows[i].prog.id == id))
            .unwrap_or(self.cursor)
            .min(self.order.len().saturating_sub(1));
        self.hcol = self.hcol.min(self.cols.len().saturating_sub(1));
        self.clamp_scroll();
        self.dirty = true;
    }

    /// Header text with the sort arrow.
    pub fn header_text(&self, i: usize, h: &str) -> String {
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
        self.cursor = to.min(self.order.len().saturating_sub(1));
        self.clamp_scroll();
        self.dirty = true;
    }

    pub fn resize(&mut self, w: u16, h: u16) {
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

    pub fn on_msg(&mut self, msg: Msg) -> Vec<Effect> {
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
        self.drill = Some(Drill::new(id, seq, &self.config, self.size));
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
        }
        fx.push(Effect::Cmd(Cmd::Close));
        self.dirty = true;
        let s = self.runtime_status();
        self.set_status(s);
        // One update at once, also when paused.
        fx.extend(self.measure_now());
        fx
    }

    pub fn on_key(&mut self, k: KeyEvent) -> Vec<Effect> {
        if k.kind == KeyEventKind::Release {
            return Vec::new();
        }
        if is_hard_quit(&k) {
            return vec![Effect::Quit];
        }
        if let Some(d) = &mut self.drill {
            let out = d.on_key(&k);
            self.dirty |= d.take_dirty();
            return match out {
                super::drill::Outcome::Effects(fx) => fx,
                super::drill::Outcome::Close => self.close_drill(),
                super::drill::Outcome::Quit => vec![Effect::Quit],
            };
        }
        if self.delay_dialog.is_some() {
            return self.delay_key(&k);
        }
        if self.filter_input.is_some() {
            return self.filter_key(&k);
        }
        self.table_key(&k)
    }

    fn delay_key(&mut self, k: &KeyEvent) -> Vec<Effect> {
        let Some(input) = &mut self.delay_dialog else {
            return Vec::new();
        };
        self.dirty = true;
        match k.code {
            KeyCode::Esc => {
                self.delay_dialog = None;
                let s = format!("Refresh delay remains {}s.", fmt_g(self.delay));
                self.set_status(s);
                self.maybe_measure()
            }
            KeyCode::Enter => match crate::values::seconds(&input.text) {
                Err(ValueError::NotPositive) => {
                    self.set_status("delay must be greater than zero");
                    Vec::new()
                }
                Err(ValueError::AtMost(_)) => {
                    self.set_status(format!(
                        "delay must be at most {}",
                        fmt_g(crate::values::MAX_SECONDS)
                    ));
                    Vec::new()
                }
                Err(_) => {
                    self.set_status("delay must be a number greater than zero");
                    Vec::new()
                }
                Ok(v) => {
                    self.delay = v;
                    self.delay_dialog = None;
                    self.set_status(format!("Refresh delay set to {}s.", fmt_g(v)));
                    self.maybe_measure()
                }
            },
            _ => {
                input.edit(k);
                Vec::new()
            }
        }
    }

    fn filter_key(&mut self, k: &KeyEvent) -> Vec<Effect> {
        let Some(input) = &mut self.filter_input else {
            return Vec::new();
        };
        match k.code {
            KeyCode::Esc => {
                self.filter_input = None;
                self.filter.clear();
                self.set_status("Filter cleared.");
            }
            KeyCode::Enter => {
                self.filter_input = None;
                let s = if self.filter.is_empty() {
                    "Filter cleared.".to_string()
                } else {
                    format!(
                        "Showing {} of {} programs matching '{}'; / edits, Esc clears.",
                        self.order.len(),
                        self.rows.len(),
                        self.filter
                    )
                };
                self.set_status(s);
            }
            _ => {
                if input.edit(k) {
                    self.filter = input.text.clone();
                }
            }
        }
        self.relayout(false);
        Vec::new()
    }

    fn table_key(&mut self, k: &KeyEvent) -> Vec<Effect> {
        let ctrl = k.modifiers.contains(KeyModifiers::CONTROL);
        let page = self.body_height();
        let n = self.order.len();
        match k.code {
            KeyCode::Char('q') => return vec![Effect::Quit],
            KeyCode::Up => self.move_cursor(self.cursor.saturating_sub(1)),
            KeyCode::Down => self.move_cursor(self.cursor + 1),
            KeyCode::PageUp if ctrl => self.scroll_cols(-4),
            KeyCode::PageDown if ctrl => self.scroll_cols(4),
            KeyCode::PageUp => self.move_cursor(self.cursor.saturating_sub(page)),
            KeyCode::PageDown => self.move_cursor(self.cursor + page),
            KeyCode::Home => self.move_cursor(0),
            KeyCode::End => self.move_cursor(n.saturating_sub(1)),
            KeyCode::Left => self.scroll_cols(-1),
            KeyCode::Right => self.scroll_cols(1),
            KeyCode::Enter | KeyCode::Char('?') => {
                if let Some(id) = self.cursor_id() {
                    return self.open_drill(id);
                }
            }
            KeyCode::Char(' ') => return self.toggle_pause(),
            KeyCode::Char('r') => {
                if !self.window_running {
                    self.set_status("Refreshing eBPF runtime deltas...");
                }
                return self.measure_now();
            }
            KeyCode::Char('x') => self.toggle_extended(),
            KeyCode::Char('c') => self.toggle_cumulative(),
            KeyCode::Char('d') => {
                self.delay_dialog = Some(Input::new(&num::float(self.delay)));
                self.set_status(
                    "Enter a refresh delay in seconds; press Enter to apply or Esc to cancel.",
                );
                self.dirty = true;
            }
            KeyCode::Char('h') => {
                self.help = !self.help;
                self.dirty = true;
            }
            KeyCode::Esc => self.escape(),
            KeyCode::Char('s') | KeyCode::Char('>') => self.sort_step(1),
            KeyCode::Char('<') => self.sort_step(-1),
            KeyCode::Char('S') => {
                self.sort.desc = !self.sort.desc;
                self.sort_status();
                self.relayout(true);
            }
            KeyCode::Char('/') | KeyCode::Char('f') => {
                self.filter_input = Some(Input::new(&self.filter));
                self.set_status("");
                self.dirty = true;
            }
            _ => {}
        }
        Vec::new()
    }

    /// Space: a resumed table measures at once instead of waiting a delay.
    fn toggle_pause(&mut self) -> Vec<Effect> {
        self.paused = !self.paused;
        self.dirty = true;
        if self.paused {
            self.set_status("Refresh paused; press Space to resume or r to refresh once.");
            Vec::new()
        } else {
            let s = format!("Refresh resumed with {}s delay.", fmt_g(self.delay));
            self.set_status(s);
            self.maybe_measure()
        }
    }

    fn toggle_extended(&mut self) {
        self.extended = !self.extended;
        self.set_status(if self.extended {
            "Extended columns shown."
        } else {
            "Extended columns hidden."
        });
        self.relayout(true);
    }

    fn toggle_cumulative(&mut self) {
        self.cumulative = !self.cumulative;
        self.set_status(if self.cumulative {
            "Cumulative columns shown."
        } else {
            "Cumulative columns hidden."
        });
        self.relayout(true);
    }

    /// Esc closes the help panel first; otherwise it clears the filter.
    fn escape(&mut self) {
        if self.help {
            self.help = false;
            self.dirty = true;
        } else if !self.filter.is_empty() {
            self.filter.clear();
            self.set_status("Filter cleared.");
            self.relayout(false);
        }
    }

    fn scroll_cols(&mut self, by: isize) {
        let max = self.cols.len().saturating_sub(1) as isize;
        let to = (self.hcol as isize + by).clamp(0, max) as usize;
        if to != self.hcol {
            self.hcol = to;
            self.dirty = true;
        }
    }

    fn sort_step(&mut self, by: isize) {
        let n = self.cols.len() as isize;
        let at = self
            .cols
            .iter()
            .position(|&c| c == self.sort.col)
            .unwrap_or(0) as isize;
        let col = self.cols[((at + by).rem_euclid(n)) as usize];
        self.sort = Sort {
            col,
            desc: col.natural_desc(),
        };
        self.sort_status();
        self.relayout(true);
    }

    fn sort_status(&mut self) {
        let name = self
            .cols
            .iter()
            .zip(&self.headers)
            .find(|(c, _)| **c == self.sort.col)
            .map_or("", |(_, h)| *h);
        let s = format!(
            "Sorted by {name} {}; s/S/</> change the sort.",
            if self.sort.desc {
                "descending"
            } else {
                "ascending"
            }
        );
        self.set_status(s);
    }
}
