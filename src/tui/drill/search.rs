//! The search bar: editing the query, matching shown lines, and moving
//! between matches.

use ratatui::crossterm::event::{KeyCode, KeyEvent};

use super::Drill;
use crate::inspect::drilldown::{Drilldown, RowKind};
use crate::render::drilldown::Line;
use crate::render::num::py_repr;
use crate::tui::text::Input;

pub(crate) const SEARCH_HINT: &str = "Search source; Enter jumps to first match, Esc clears search";

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Search {
    pub input: Input,
    pub editing: bool,
    /// Line indices that match.
    pub matches: Vec<usize>,
}

impl Drill {
    pub(super) fn search_edit_key(&mut self, k: &KeyEvent) {
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
                    // Helper/kernel rows folded under their line are
                    // searched too: their lines open to show the match.
                    let parents = collapsed_matches(self.dd.as_ref(), &q);
                    if !parents.is_empty() {
                        self.view.expanded.extend(parents);
                        self.refresh_lines();
                    }
                    let Some(s) = &mut self.search else {
                        return;
                    };
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

    pub(super) fn next_match(&mut self, forward: bool) {
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
}

/// The source rows with a helper/kernel child row whose text contains `q`
/// (case-insensitive).
fn collapsed_matches(dd: Option<&Drilldown>, q: &str) -> Vec<usize> {
    let Some(dd) = dd else {
        return Vec::new();
    };
    let q = q.to_lowercase();
    dd.rows
        .iter()
        .filter(|r| r.kind == RowKind::Child && r.text.to_lowercase().contains(&q))
        .filter_map(|r| r.parent)
        .collect()
}

/// Shown lines whose row text contains `q` (case-insensitive); fold lines
/// never match.
pub(super) fn matches(dd: Option<&Drilldown>, lines: &[Line], q: &str) -> Vec<usize> {
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
