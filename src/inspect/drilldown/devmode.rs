//! `--devmode` in the drilldown: the local source lines around each mapped
//! row (context rows) and the `[source-mismatch]` marker where BTF's
//! snippet differs from the file.

use std::collections::HashMap;

use super::{Drilldown, Marker, Row, RowKind};
use crate::error::BrrError;
use crate::inspect::source::{self, Mapped, Placed, SourceTree};

/// `--devmode` input: the tree and whether DIR was left to default.
pub(crate) struct Devmode<'a> {
    pub tree: &'a mut SourceTree,
    pub bare: bool,
}

pub(crate) const DEVMODE_NOTHING: &str = "devmode did not resolve any source files from the current directory; pass --devmode DIR to point at the matching source tree";

/// A bare `--devmode` resolved no source row to a local file. The TUI shows
/// it as a warning; `top --textmode` fails with it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct NoDevmodeSource;

impl std::fmt::Display for NoDevmodeSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(DEVMODE_NOTHING)
    }
}

impl From<NoDevmodeSource> for BrrError {
    fn from(_: NoDevmodeSource) -> BrrError {
        BrrError::Failed(DEVMODE_NOTHING.to_string())
    }
}

impl Drilldown {
    /// Insert `--devmode` context rows and `[source-mismatch]` markers.
    pub(super) fn enrich(&mut self, dev: Devmode<'_>) -> Result<(), NoDevmodeSource> {
        let tree = dev.tree;
        let mut mapped = Vec::new();
        let mut mapped_rows = Vec::new();
        let mut any_resolved = false;
        for (i, r) in self.rows.iter().enumerate() {
            if let RowKind::Source { key } = r.kind {
                let k = &self.keys[key];
                if let (Some(file), Some(line)) = (&k.file, k.line) {
                    any_resolved |= tree.resolve(file).resolved().is_some();
                    mapped.push(Mapped {
                        file: file.clone(),
                        line,
                    });
                    mapped_rows.push(i);
                }
            }
        }
        if dev.bare && !any_resolved {
            return Err(NoDevmodeSource);
        }
        for (&i, m) in mapped_rows.iter().zip(&mapped) {
            let RowKind::Source { key } = self.rows[i].kind else {
                continue;
            };
            if let Some(src) = self.keys[key].source.clone() {
                if source::mismatch(tree, &m.file, m.line, &src).is_some() {
                    self.rows[i].markers.insert(0, Marker::SourceMismatch);
                }
            }
        }
        let placed = source::with_context(&mapped, tree);
        // Context rows go before the mapped row they precede; the tail goes
        // after the last mapped row's block (its children/instructions).
        let mut before: HashMap<usize, Vec<Row>> = HashMap::new();
        let mut pending = Vec::new();
        for p in placed {
            match p {
                Placed::Mapped(j) => {
                    if !pending.is_empty() {
                        before.insert(mapped_rows[j], std::mem::take(&mut pending));
                    }
                }
                Placed::Context {
                    file, line, text, ..
                } => {
                    let src = if text.is_empty() { "-" } else { text.as_str() };
                    pending.push(Row::new(
                        RowKind::Context,
                        format!("{}:{line}: {src}", source::basename(&file)),
                    ));
                }
            }
        }
        let tail_at = mapped_rows.last().map(|&last| {
            (last + 1..self.rows.len())
                .find(|&i| matches!(self.rows[i].kind, RowKind::Source { .. }))
                .unwrap_or(self.rows.len())
        });
        let old = std::mem::take(&mut self.rows);
        let n = old.len();
        for (i, r) in old.into_iter().enumerate() {
            if tail_at == Some(i) {
                self.rows.append(&mut pending);
            }
            if let Some(mut ctx) = before.remove(&i) {
                self.rows.append(&mut ctx);
            }
            self.rows.push(r);
        }
        if tail_at == Some(n) {
            self.rows.append(&mut pending);
        }
        Ok(())
    }
}
