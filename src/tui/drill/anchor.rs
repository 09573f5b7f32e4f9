//! Keeping the cursor on "the same row" when the row list is rebuilt
//! (mode switch, profile, kernel IP detail) or folds change.

use super::Drill;
use crate::inspect::drilldown::{RowKind, SourceKey};

/// A row's identity, to find "the same row" after the list changes.
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct Anchor {
    key: Option<SourceKey>,
    slot: Option<usize>,
    /// Native instruction rows: function and offset.
    native: Option<(usize, u32)>,
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

impl Drill {
    pub(super) fn anchor(&self, line: usize) -> Option<Anchor> {
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
            RowKind::Native { func, offset } => Anchor {
                key: preceding_key(row),
                native: Some((func, offset)),
                ..Default::default()
            },
            // A child under a summary row (no source key) is known by its
            // text; the symbol alone would match any of its siblings.
            RowKind::Child => Anchor {
                key: r.parent.and_then(|p| match dd.rows[p].kind {
                    RowKind::Source { key } => Some(dd.keys[key].clone()),
                    _ => None,
                }),
                child: Some(child_symbol(&r.text)),
                text: Some(r.text.clone()),
                ..Default::default()
            },
            RowKind::Context | RowKind::Summary | RowKind::Function { .. } => Anchor {
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
                    if parent_key != a.key.as_ref() {
                        None
                    } else if a.text.as_ref() == Some(&r.text) {
                        Some(6)
                    } else {
                        (Some(child_symbol(&r.text)) == a.child).then_some(5)
                    }
                }
                RowKind::Instruction { slot } if Some(*slot) == a.slot => Some(5),
                RowKind::Native { func, offset } if Some((*func, *offset)) == a.native => Some(5),
                RowKind::Source { key } if a.key.as_ref() == Some(&dd.keys[*key]) => Some(4),
                RowKind::Source { key } => {
                    let k = &dd.keys[*key];
                    a.key
                        .as_ref()
                        .filter(|ak| ak.file == k.file && ak.line == k.line && k.line.is_some())
                        .map(|_| 2)
                }
                RowKind::Context | RowKind::Summary | RowKind::Function { .. }
                    if a.text.as_ref() == Some(&r.text) =>
                {
                    Some(4)
                }
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
    pub(super) fn line_of_row(&self, r: usize) -> Option<usize> {
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
    pub(super) fn relocate(&mut self, a: &Anchor, screen: usize) {
        if let Some(line) = self.find_row(a).and_then(|r| self.line_of_row(r)) {
            self.cursor = line;
            self.top = line.saturating_sub(screen);
            self.clamp_scroll();
        }
    }
}
