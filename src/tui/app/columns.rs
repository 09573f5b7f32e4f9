//! The main table's columns, how each sorts, and the fixed order that
//! breaks ties.

use std::cmp::Ordering;

use crate::activity::ActivityRow;

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
    Misses,
    Owners,
    Attach,
    Memlock,
    MapsMem,
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
            "MISSES" => Col::Misses,
            "OWNERS" => Col::Owners,
            "ATTACH" => Col::Attach,
            "MEMLOCK" => Col::Memlock,
            "MAPS_MEM" => Col::MapsMem,
            _ => Col::Pinned,
        }
    }

    pub fn left_aligned(self) -> bool {
        matches!(
            self,
            Col::Type | Col::Name | Col::Tag | Col::Pinned | Col::Owners | Col::Attach
        )
    }

    /// Text columns sort ascending first, numbers descending.
    pub(super) fn natural_desc(self) -> bool {
        !matches!(
            self,
            Col::Id | Col::Type | Col::Name | Col::Tag | Col::Pinned | Col::Owners | Col::Attach
        )
    }

    pub(super) fn cmp(self, a: &ActivityRow, b: &ActivityRow) -> Ordering {
        let (p, q) = (&a.prog, &b.prog);
        match self {
            Col::Id => p.id.cmp(&q.id),
            Col::Type => p.prog_type.cmp(&q.prog_type),
            Col::Name => p.display_name().cmp(q.display_name()),
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
            Col::Misses => a.recursion_misses_delta.cmp(&b.recursion_misses_delta),
            Col::Owners => first_owner(p).cmp(&first_owner(q)),
            Col::Attach => p
                .attached
                .first()
                .map(|x| &x.target)
                .cmp(&q.attached.first().map(|x| &x.target)),
            Col::Memlock => p.memlock_bytes.cmp(&q.memlock_bytes),
            Col::MapsMem => p.maps_memlock_bytes.cmp(&q.maps_memlock_bytes),
        }
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
pub struct Sort {
    pub col: Col,
    pub desc: bool,
}
