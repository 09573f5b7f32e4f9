//! How the main table sorts by each of its columns (the columns
//! themselves are render's [`ActivityCol`]), and the fixed order that
//! breaks ties.

use std::cmp::Ordering;

use crate::activity::ActivityRow;
use crate::render::listing::ActivityCol;

/// Text columns sort ascending first, numbers descending.
pub(super) fn natural_desc(col: ActivityCol) -> bool {
    !matches!(
        col,
        ActivityCol::Id
            | ActivityCol::Type
            | ActivityCol::Name
            | ActivityCol::Tag
            | ActivityCol::Pinned
            | ActivityCol::Owners
            | ActivityCol::Attach
    )
}

/// How two rows compare under `col` (ascending): by the figure behind
/// the cell, not its text.
pub(super) fn compare(col: ActivityCol, a: &ActivityRow, b: &ActivityRow) -> Ordering {
    let (p, q) = (&a.prog, &b.prog);
    match col {
        ActivityCol::Id => p.id.cmp(&q.id),
        ActivityCol::Type => p.prog_type.cmp(&q.prog_type),
        ActivityCol::Name => p.display_name().cmp(q.display_name()),
        ActivityCol::Cpu | ActivityCol::NsPerSec | ActivityCol::TotalNs => {
            a.run_time_ns_delta.cmp(&b.run_time_ns_delta)
        }
        ActivityCol::ExecsPerSec | ActivityCol::ExecsDelta => {
            a.run_count_delta.cmp(&b.run_count_delta)
        }
        ActivityCol::AvgNs => a.avg_ns().cmp(&b.avg_ns()),
        ActivityCol::CumulAvgNs => a.cumulative_avg_ns().cmp(&b.cumulative_avg_ns()),
        ActivityCol::ExecsTotal => p.run_count.cmp(&q.run_count),
        ActivityCol::CumulNs => p.run_time_ns.cmp(&q.run_time_ns),
        ActivityCol::Xlat => p.xlated_size.cmp(&q.xlated_size),
        ActivityCol::Jit => p.jited_size.cmp(&q.jited_size),
        ActivityCol::Tag => p.tag.cmp(&q.tag),
        ActivityCol::Pinned => p.pinned_paths.cmp(&q.pinned_paths),
        ActivityCol::Misses => a.recursion_misses_delta.cmp(&b.recursion_misses_delta),
        ActivityCol::Owners => first_owner(p).cmp(&first_owner(q)),
        ActivityCol::Attach => p
            .attached
            .first()
            .map(|x| &x.target)
            .cmp(&q.attached.first().map(|x| &x.target)),
        ActivityCol::Memlock => p.memlock_bytes.cmp(&q.memlock_bytes),
        ActivityCol::MapsMem => p.maps_memlock_bytes.cmp(&q.maps_memlock_bytes),
    }
}

fn first_owner(p: &crate::model::Program) -> Option<(&str, u32)> {
    let o = p.keepers.as_ref()?.owners.first()?;
    Some((o.comm.as_str(), o.pid))
}

/// The order rows keep under any sort column, and among equal sort keys:
/// run-time delta, then run-count delta (both descending), then ID, so
/// that the busiest programs come first and equal rows never swap.
pub(super) fn default_order(a: &ActivityRow, b: &ActivityRow) -> Ordering {
    b.run_time_ns_delta
        .cmp(&a.run_time_ns_delta)
        .then(b.run_count_delta.cmp(&a.run_count_delta))
        .then(a.prog.id.cmp(&b.prog.id))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Sort {
    pub col: ActivityCol,
    pub desc: bool,
}
