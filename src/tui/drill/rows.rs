//! The row list (built from the program image, profile and view options)
//! and the shown lines derived from it, with the cursor and scroll kept
//! in range.

use std::sync::Arc;

use super::search::matches;
use super::Drill;
use crate::inspect::drilldown::{
    Devmode, Drilldown, Mode, Options, ProgramData, RowKind, SourceKey,
};
use crate::render::drilldown;
use crate::tui::text::scroll_top;

/// An expanded row, found again after the row list is rebuilt: a source
/// row by its key, a summary row by its text.
#[derive(Debug, Clone, PartialEq)]
enum Expanded {
    Source(SourceKey),
    Summary(String),
}

impl Expanded {
    fn of(dd: &Drilldown, r: usize) -> Option<Expanded> {
        let row = dd.rows.get(r)?;
        match row.kind {
            RowKind::Source { key } => Some(Expanded::Source(dd.keys.get(key)?.clone())),
            RowKind::Summary => Some(Expanded::Summary(row.text.clone())),
            _ => None,
        }
    }
}

impl Drill {
    fn build(&mut self) -> Option<Drilldown> {
        let img = Arc::clone(self.image.as_ref()?);
        let mixed = self.mode == Mode::Mixed;
        let native_view = self.mode == Mode::Native;
        // Helper names serve source mode too: a program without line
        // info shows its instructions there.
        let call_names = match &self.disasm {
            Some((c, _)) => c.clone(),
            _ => Default::default(),
        };
        let native = match (&self.disasm, native_view) {
            (Some((_, Ok(n))), true) => Some(Arc::clone(n)),
            _ => None,
        };
        let opts = Options {
            mixed,
            exact_ips: self.exact_ips,
            source_limit: 0,
            call_names,
            native_view,
            native,
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
        let profile = self.profile.as_ref();
        match Drilldown::build_with_native(data, profile, &self.native, &opts, dev) {
            Ok(d) => Some(d),
            Err(e) => {
                // A bare --devmode that resolves nothing must not make the
                // program un-inspectable: show the BTF rows, and warn only
                // when the program has source lines to resolve.
                let d =
                    Drilldown::build_with_native(data, profile, &self.native, &opts, None).ok()?;
                if !d.keys.is_empty() {
                    self.dev_warning = Some(format!("Warning: {e}"));
                }
                Some(d)
            }
        }
    }

    /// Recompute the shown lines from the row list and view state.
    pub(super) fn refresh_lines(&mut self) {
        if let Some(dd) = &self.dd {
            self.lines = drilldown::lines(dd, &self.view);
        }
        if let Some(s) = &mut self.search {
            s.matches = matches(self.dd.as_ref(), &self.lines, &s.input.text);
        }
        self.cursor = self.cursor.min(self.lines.len().saturating_sub(1));
        self.clamp_scroll();
        self.dirty = true;
    }

    pub(super) fn compute_folds(&mut self) {
        let h = self.table_height();
        if let Some(dd) = &self.dd {
            let folds = drilldown::folds(dd, h);
            if folds != self.view.folds {
                self.view.folds = folds;
                self.view.open_folds.clear();
            }
        }
    }

    /// Rebuild the row list. `reset` collapses every group and fold.
    pub(super) fn rebuild(&mut self, reset: bool) {
        let anchor = self.anchor(self.cursor);
        let screen = self.cursor.saturating_sub(self.top);
        let expanded_keys: Vec<Expanded> = match &self.dd {
            Some(dd) if !reset => self
                .view
                .expanded
                .iter()
                .filter_map(|&r| Expanded::of(dd, r))
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
                .filter(|&r| Expanded::of(dd, r).is_some_and(|e| expanded_keys.contains(&e)))
                .collect();
        }
        self.compute_folds();
        self.refresh_lines();
        if let Some(a) = anchor {
            self.relocate(&a, screen);
        }
    }
    pub(super) fn clamp_scroll(&mut self) {
        self.top = scroll_top(self.top, self.cursor, self.lines.len(), self.table_height());
    }

    pub(super) fn move_to(&mut self, to: usize) {
        self.cursor = to.min(self.lines.len().saturating_sub(1));
        self.clamp_scroll();
        self.dirty = true;
    }

    /// Cursor on the hottest source row (own plus children's samples),
    /// or summary row with rows under it (a program without line info has
    /// its samples there).
    pub(super) fn cursor_to_hottest(&mut self) {
        let Some(dd) = &self.dd else {
            return;
        };
        let mut best: Option<(u64, usize)> = None;
        for (i, r) in dd.rows.iter().enumerate() {
            match r.kind {
                RowKind::Source { .. } => {}
                RowKind::Summary if !r.children.is_empty() => {}
                _ => continue,
            }
            let own = if r.leaf {
                r.samples
            } else {
                // Mixed and native views: the instructions up to the next
                // source row.
                dd.rows[i + 1..]
                    .iter()
                    .take_while(|x| !matches!(x.kind, RowKind::Source { .. }))
                    .filter(|x| {
                        matches!(x.kind, RowKind::Instruction { .. } | RowKind::Native { .. })
                    })
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
}
