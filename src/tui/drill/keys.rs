//! Key dispatch for the drilldown: overlays, the form and the search bar
//! take keys first; then navigation and the action keys.

use std::collections::HashSet;

use ratatui::crossterm::event::{KeyCode, KeyEvent};

use super::{Drill, Form, Outcome, Overlay, Search, FORM_PROMPT, SEARCH_HINT};
use crate::inspect::drilldown::Mode;
use crate::tui::effect::Effect;
use crate::tui::text::{is_hard_quit, Input};

impl Drill {
    pub(crate) fn on_key(&mut self, k: &KeyEvent) -> Outcome {
        self.dirty = true;
        if is_hard_quit(k) {
            return Outcome::Quit;
        }
        if let Some(out) = self.overlay_key(k) {
            return out;
        }
        if self.form.is_some() {
            return Outcome::Effects(self.form_key(k));
        }
        if self.search.as_ref().is_some_and(|s| s.editing) {
            self.search_edit_key(k);
            return Outcome::Effects(Vec::new());
        }
        if k.code == KeyCode::Esc {
            if self.running.is_some() {
                // The first Esc only stops the profile; a second one leaves.
                self.running = None;
                self.message = Some("profile cancelled; Esc again leaves the drilldown".into());
                return Outcome::Effects(vec![Effect::CancelProfile]);
            }
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
        if self.search.is_some() && self.search_bar_key(k) {
            return Outcome::Effects(Vec::new());
        }
        Outcome::Effects(self.action_key(k))
    }

    /// An open overlay takes every key but its own and quit; `None` when
    /// no overlay is open.
    fn overlay_key(&mut self, k: &KeyEvent) -> Option<Outcome> {
        match self.overlay {
            Overlay::Help => match k.code {
                KeyCode::Char('h') | KeyCode::Esc => self.close_overlay(),
                KeyCode::Char('q') => return Some(Outcome::Quit),
                _ => {}
            },
            Overlay::Legend => match k.code {
                KeyCode::Char('M') | KeyCode::Esc => self.close_overlay(),
                KeyCode::Char('h') => self.open_help(),
                KeyCode::Char('q') => return Some(Outcome::Quit),
                _ => {}
            },
            Overlay::WhoPays => match k.code {
                KeyCode::Char('t') | KeyCode::Esc => self.close_overlay(),
                KeyCode::Char('h') => self.open_help(),
                KeyCode::Char('q') => return Some(Outcome::Quit),
                _ => {}
            },
            Overlay::Hints => match k.code {
                KeyCode::Char('H') | KeyCode::Esc => self.close_overlay(),
                KeyCode::Char('h') => self.open_help(),
                KeyCode::Char('q') => return Some(Outcome::Quit),
                _ => {}
            },
            Overlay::None => return None,
        }
        Some(Outcome::Effects(Vec::new()))
    }

    /// While the search bar is shown (not being edited), `n`/`N`/Enter
    /// move between matches and `/` edits the query; false for any other
    /// key, which then works as without the bar.
    fn search_bar_key(&mut self, k: &KeyEvent) -> bool {
        match k.code {
            KeyCode::Char('n') | KeyCode::Enter => self.next_match(true),
            KeyCode::Char('N') => self.next_match(false),
            KeyCode::Char('/') => {
                if let Some(s) = &mut self.search {
                    s.editing = true;
                }
            }
            _ => return false,
        }
        true
    }

    fn nav_key(&mut self, k: &KeyEvent) -> bool {
        let h = self.table_height();
        let n = self.lines.len();
        match k.code {
            KeyCode::Up | KeyCode::Char('k') => self.move_to(self.cursor.saturating_sub(1)),
            KeyCode::Down | KeyCode::Char('j') => self.move_to(self.cursor + 1),
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
            KeyCode::Char(' ') => return self.toggle_mode(),
            KeyCode::Char('p') if self.running.is_none() => {
                let r = self.default_request();
                return self.start_profile(r);
            }
            KeyCode::Char('P') if self.running.is_none() => self.open_form(),
            KeyCode::Char('i') => self.toggle_exact_ips(),
            KeyCode::Char('m') => self.toggle_markers(),
            KeyCode::Char('M') => {
                self.overlay = Overlay::Legend;
                self.message = Some("marker legend open; Esc or M closes".into());
            }
            KeyCode::Char('e') => self.expand_one(),
            KeyCode::Char('c') => self.collapse_one(),
            KeyCode::Char('E') => self.set_all(true),
            KeyCode::Char('C') => self.set_all(false),
            KeyCode::Char('/') => self.open_search(),
            KeyCode::Char('F') => return self.export_last(),
            KeyCode::Char('t') => self.open_who_pays(),
            KeyCode::Char('H') => self.open_hints(),
            _ => {}
        }
        Vec::new()
    }

    /// Space: source -> mixed -> native -> source, keeping the selected
    /// row on its screen line. The first switch to mixed asks the worker
    /// for the disassembly (and native code) and rebuilds when it arrives.
    fn toggle_mode(&mut self) -> Vec<Effect> {
        let anchor = self.anchor(self.cursor);
        let screen = self.cursor.saturating_sub(self.top);
        self.mode = match self.mode {
            Mode::Source => Mode::Mixed,
            Mode::Mixed => Mode::Native,
            Mode::Native => Mode::Source,
        };
        if self.mode != Mode::Source && self.disasm.is_none() {
            return self.request_disasm();
        }
        self.message = self.native_unavailable();
        self.rebuild(true);
        if let Some(a) = anchor {
            self.relocate(&a, screen);
        }
        Vec::new()
    }

    fn open_form(&mut self) {
        self.form = Some(Form::new(&self.config.profile));
        self.message = Some(FORM_PROMPT.into());
        self.refresh_lines();
    }

    /// `i`: kernel functions <-> exact kernel IPs; only meaningful when
    /// the profile has kernel/helper samples.
    fn toggle_exact_ips(&mut self) {
        let Some(p) = &self.profile else {
            return;
        };
        if p.program.as_ref().is_none_or(|q| q.kernel_samples == 0) {
            self.message =
                Some("no kernel/helper samples; profile with kernel samples enabled".into());
            return;
        }
        self.exact_ips = !self.exact_ips;
        self.message = None;
        self.rebuild(false);
    }

    fn toggle_markers(&mut self) {
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

    /// `/`: every fold opens so that matches inside them are shown.
    fn open_search(&mut self) {
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
}
