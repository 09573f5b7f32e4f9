//! `e`/`c`/`E`/`C`: opening and closing child groups (helper and kernel
//! rows under a BPF line) and folds (runs of cold rows).

use super::Drill;

impl Drill {
    pub(super) fn expand_one(&mut self) {
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

    pub(super) fn collapse_one(&mut self) {
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
    pub(super) fn set_all(&mut self, open: bool) {
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
}
