//! Keys of the live table, its filter input and the delay dialog.

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

use super::{is_hard_quit, App, Input, Sort};
use crate::render::listing::ActivityCol;
use crate::render::num::{self, fmt_g};
use crate::tui::drill::Outcome;
use crate::tui::effect::Effect;
use crate::values::ValueError;

/// What the status line says when the filter hides every program.
fn no_match(filter: &str) -> String {
    format!("No program matches '{filter}'; Esc clears the filter.")
}

impl App {
    pub(crate) fn on_key(&mut self, k: KeyEvent) -> Vec<Effect> {
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
                Outcome::Effects(fx) => fx,
                Outcome::Close => self.close_drill(),
                Outcome::Quit => vec![Effect::Quit],
            };
        }
        if self.cost.is_some() {
            return match k.code {
                KeyCode::Char('q') => vec![Effect::Quit],
                KeyCode::Esc | KeyCode::Char('C') => self.close_cost(),
                _ => Vec::new(),
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
                } else if self.order.is_empty() {
                    no_match(&self.filter)
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
        if self.filter_input.is_some() {
            let s = if !self.filter.is_empty() && self.order.is_empty() {
                no_match(&self.filter)
            } else {
                String::new()
            };
            self.set_status(s);
        }
        Vec::new()
    }

    fn table_key(&mut self, k: &KeyEvent) -> Vec<Effect> {
        let ctrl = k.modifiers.contains(KeyModifiers::CONTROL);
        let page = self.body_height();
        let n = self.order.len();
        match k.code {
            KeyCode::Char('q') => return vec![Effect::Quit],
            KeyCode::Up | KeyCode::Char('k') => self.move_cursor(self.cursor.saturating_sub(1)),
            KeyCode::Down | KeyCode::Char('j') => self.move_cursor(self.cursor + 1),
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
            KeyCode::Char('C') => return self.cost_key(),
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
            KeyCode::Char('g') => self.toggle_chart(),
            KeyCode::Esc => self.escape(),
            KeyCode::Char('s') | KeyCode::Char('>') => self.sort_step(1),
            KeyCode::Char('<') => self.sort_step(-1),
            KeyCode::Char('S') => {
                self.sort.desc = !self.sort.desc;
                self.sort_status();
                self.relayout(true);
            }
            KeyCode::Char('/') | KeyCode::Char('f') => {
                // A new query, not an edit of the last one.
                self.filter_input = Some(Input::default());
                if !self.filter.is_empty() {
                    self.filter.clear();
                    self.relayout(false);
                }
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

    fn toggle_chart(&mut self) {
        self.chart = !self.chart;
        let s = if !self.chart {
            "History chart hidden."
        } else if self.chart_shown() {
            "History chart of the selected program; g hides it."
        } else {
            "The terminal is too small for the history chart; g hides it."
        };
        self.set_status(s);
        self.clamp_scroll();
        self.dirty = true;
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

    /// Whether column `i` stays in place while the others scroll: ID and
    /// NAME say which program a row is.
    pub(crate) fn col_fixed(&self, i: usize) -> bool {
        matches!(self.cols.get(i), Some(ActivityCol::Id | ActivityCol::Name))
    }

    /// `hcol` counts the scrolling columns scrolled off to the left; the
    /// last one always stays.
    fn scroll_cols(&mut self, by: isize) {
        let scrolling = (0..self.cols.len()).filter(|&i| !self.col_fixed(i)).count();
        let max = scrolling.saturating_sub(1) as isize;
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
            desc: super::columns::natural_desc(col),
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
