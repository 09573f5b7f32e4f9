//! `--annotate`: a report's listed programs given their sampled native
//! instructions, each with its text, role and line, and the JIT overhead
//! hint.

use std::collections::HashMap;
use std::sync::Arc;

use super::figures;
use crate::inspect::native::roles::Role;
use crate::inspect::native::sampled::{At, Sampled};
use crate::model::profile::{Hotspot, Profile, ProgramProfile};
use crate::model::report::{Annotation, NativeRow, Other, Report};
use crate::profile::hints;

/// What the JIT code of one listed program says of each of its sampled
/// instructions (in the order of [`sampled_at`]), or why it could not be
/// read.
pub(crate) type NativeCode = std::result::Result<Vec<Option<Sampled>>, String>;

/// Where each of a program's direct samples landed, in the engine's order:
/// what `--annotate` asks its JIT code about.
pub(crate) fn sampled_at(raw: &ProgramProfile) -> Vec<At> {
    raw.native
        .iter()
        .map(|n| n.func_index.zip(n.offset))
        .collect()
}

/// Which sampled instructions an annotation keeps as rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NativeRows {
    /// Every one: JSON and CSV list them, the drilldown places them.
    All,
    /// Those the `--line-limit` table prints, the rest counted in its
    /// Other row: a text report prints nothing more of them.
    Table,
}

/// `--annotate`: give every listed program its sampled native
/// instructions (from `code`, by program ID) and, when its JIT prologue,
/// epilogue and mitigation thunks take a large share, that hint.
pub(crate) fn annotate(
    report: &mut Report,
    profile: &Profile,
    mut code: HashMap<u32, NativeCode>,
    rows: NativeRows,
) {
    let line_limit = report.totals.line_limit;
    for p in &mut report.programs {
        let Some(raw) = profile.program(p.id) else {
            continue;
        };
        let (insns, unavailable) = match code.remove(&p.id) {
            Some(Ok(insns)) => (insns, None),
            Some(Err(why)) => (Vec::new(), Some(why)),
            None => (Vec::new(), Some("the JIT code was not read".to_string())),
        };
        let count = raw.native.len();
        let shown = if line_limit > 0 && count > line_limit {
            line_limit
        } else {
            count
        };
        let listed_row = |i: usize| rows == NativeRows::All || i < shown;
        // Past the table, a cut report makes only the rows the hint reads:
        // the few that are not the program's own body.
        let keep = |i: usize, role: Role| listed_row(i) || role != Role::Body;
        let mut listed = Vec::with_capacity(if rows == NativeRows::All {
            count
        } else {
            shown
        });
        let mut overhead = Vec::new();
        let mut figure = figures(profile, raw.samples, |r: &NativeRow| r.samples);
        for (i, row) in native_rows(raw, insns, keep) {
            if listed_row(i) {
                listed.push(figure(row));
            } else {
                overhead.push(row);
            }
        }
        let hint_rows = listed.iter().map(|r| &r.row).chain(&overhead);
        if let Some(h) = hints::jit_overhead(raw, hint_rows) {
            p.hints.push(h);
        }
        let rest: u64 = raw.native.iter().skip(shown).map(|n| n.samples).sum();
        let other = (shown < count).then(|| Other {
            samples: rest,
            cpu_percent: profile.cpu_percent(rest),
        });
        p.native = Some(Annotation {
            all: Arc::new(listed),
            shown,
            other,
            unavailable,
        });
    }
}

/// A string the rows share.
type Shared = Option<Arc<str>>;

/// Every direct sample of `raw` by instruction, in the engine's order
/// (most samples first, ties by address) and with its position in it,
/// that `keep` keeps by position and role: with the instruction's text
/// and role from `code` (by position, taken from it) and the line its
/// samples went to.
fn native_rows<'a>(
    raw: &'a ProgramProfile,
    mut code: Vec<Option<Sampled>>,
    keep: impl Fn(usize, Role) -> bool + 'a,
) -> impl Iterator<Item = (usize, NativeRow)> + 'a {
    // Each line's file and source made once, for all the rows under it.
    let mut lines: Vec<(&Hotspot, Shared, Shared)> = raw
        .hotspots
        .iter()
        .filter(|h| h.jited_address.is_some())
        .map(|h| {
            (
                h,
                h.file.as_deref().map(Arc::from),
                h.source.as_deref().map(Arc::from),
            )
        })
        .collect();
    lines.sort_by_key(|(h, _, _)| h.jited_address);
    let mut functions: Vec<Arc<str>> = Vec::new();
    raw.native.iter().enumerate().filter_map(move |(row, n)| {
        let role = code
            .get(row)
            .and_then(Option::as_ref)
            .map_or(Role::Body, |i| i.role);
        if !keep(row, role) {
            return None;
        }
        // The line record a sample is counted under is the one with the
        // greatest JIT address at or below it, so it has a row.
        let at = lines
            .partition_point(|(h, _, _)| h.jited_address.is_some_and(|a| a <= n.ip))
            .checked_sub(1)
            .and_then(|i| lines.get(i));
        let insn = code.get_mut(row).and_then(Option::take);
        let function = n.function.as_deref().map(|name| {
            if let Some(f) = functions.iter().find(|f| f.as_ref() == name) {
                return Arc::clone(f);
            }
            let f: Arc<str> = Arc::from(name);
            functions.push(Arc::clone(&f));
            f
        });
        let row_of = NativeRow {
            samples: n.samples,
            ip: n.ip,
            func_index: n.func_index,
            function,
            offset: n.offset,
            file: at.and_then(|(_, file, _)| file.clone()),
            line: at.and_then(|(h, _, _)| h.line),
            source: at.and_then(|(_, _, source)| source.clone()),
            role: role.name(),
            // Text left out by the decoder (a row a text report does
            // not print) is no text.
            asm: insn.map(|i| i.asm).filter(|a| !a.is_empty()),
        };
        Some((row, row_of))
    })
}
