//! Two program snapshots -> per-program activity over the measured window.

use std::cmp::Reverse;
use std::collections::HashMap;

use crate::model::activity::Counters;
use crate::model::Program;

pub(crate) use crate::model::activity::ActivityRow;

/// What a window's deltas are taken from: a whole program (a one-shot
/// window's first snapshot) or only its counters (a stream's).
pub(crate) trait Counted {
    fn counters(&self) -> Counters;
}

impl Counted for Program {
    fn counters(&self) -> Counters {
        Counters::from(self)
    }
}

impl Counted for Counters {
    fn counters(&self) -> Counters {
        *self
    }
}

/// Deltas for every program in `current`: a program new in the window counts
/// from zero, one gone by the end is dropped. Sorted by time delta, count
/// delta (both descending) then ID; idle programs kept only with `all`;
/// `limit` 0 keeps every row.
pub(crate) fn compute(
    base: &[impl Counted],
    current: &[Program],
    all: bool,
    limit: usize,
) -> Vec<ActivityRow> {
    compute_owned(base, current.to_vec(), all, limit)
}

/// A program's run count, run time and recursion misses at the base.
type Before = (u64, u64, Option<u64>);

/// [`compute`] taking `current` over: the rows own its programs, so that
/// a window of thousands of programs is not copied once more.
pub(crate) fn compute_owned<B: Counted>(
    base: &[B],
    current: Vec<Program>,
    all: bool,
    limit: usize,
) -> Vec<ActivityRow> {
    let id = |b: &B| b.counters().id;
    let counters = |b: &B| {
        let c = b.counters();
        (c.run_count, c.run_time_ns, c.recursion_misses)
    };
    // Snapshots come in ID order: the base is then read in step with
    // `current`, front to back, with no table and no search.
    let by_id: Option<HashMap<u32, Before>> =
        (!base.is_sorted_by_key(id)).then(|| base.iter().map(|b| (id(b), counters(b))).collect());
    let mut at = 0usize;
    let mut before = |want: u32| match &by_id {
        Some(m) => m.get(&want).copied(),
        None => {
            if at > 0 && base.get(at - 1).is_some_and(|b| id(b) >= want) {
                // `current` went back: find the place again.
                at = base.partition_point(|b| id(b) < want);
            }
            while base.get(at).is_some_and(|b| id(b) < want) {
                at += 1;
            }
            base.get(at).filter(|b| id(b) == want).map(counters)
        }
    };
    let rows: Vec<ActivityRow> = current
        .into_iter()
        .map(|p| {
            let (c0, t0, m0) = before(p.id).unwrap_or((0, 0, None));
            ActivityRow {
                run_count_delta: p.run_count.saturating_sub(c0),
                run_time_ns_delta: p.run_time_ns.saturating_sub(t0),
                recursion_misses_delta: p
                    .recursion_misses
                    .map(|m| m.saturating_sub(m0.unwrap_or(0))),
                prog: p,
            }
        })
        .filter(|r| all || r.run_count_delta > 0 || r.run_time_ns_delta > 0)
        .collect();
    // Most run time first, then most runs, then by ID. Rows are large:
    // their keys are sorted and each row is then moved once, into place.
    let mut order: Vec<(Reverse<u64>, Reverse<u64>, u32, usize)> = rows
        .iter()
        .enumerate()
        .map(|(i, r)| {
            (
                Reverse(r.run_time_ns_delta),
                Reverse(r.run_count_delta),
                r.prog.id,
                i,
            )
        })
        .collect();
    order.sort_unstable();
    if limit > 0 {
        order.truncate(limit);
    }
    let mut slots: Vec<Option<ActivityRow>> = rows.into_iter().map(Some).collect();
    order
        .iter()
        .filter_map(|&(_, _, _, i)| slots.get_mut(i).and_then(Option::take))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(id: u32, cnt: u64, ns: u64) -> Program {
        Program {
            id,
            run_count: cnt,
            run_time_ns: ns,
            ..Default::default()
        }
    }

    #[test]
    fn deltas_new_and_gone_programs() {
        let base = [p(1, 10, 1000), p(2, 5, 500), p(3, 7, 70)];
        let cur = [p(1, 20, 3000), p(3, 7, 70), p(4, 2, 40)];
        let rows = compute(&base, &cur, false, 0);
        let got: Vec<(u32, u64, u64)> = rows
            .iter()
            .map(|r| (r.prog.id, r.run_count_delta, r.run_time_ns_delta))
            .collect();
        assert_eq!(got, vec![(1, 10, 2000), (4, 2, 40)]);
        let all = compute(&base, &cur, true, 0);
        assert_eq!(all.len(), 3);
        assert_eq!(all[2].prog.id, 3);
        assert_eq!(compute(&base, &cur, true, 1).len(), 1);
        // A stream's base keeps only the counters: the same deltas.
        let counters: Vec<Counters> = base.iter().map(Counters::from).collect();
        assert_eq!(compute(&counters, &cur, true, 0), all);
        // A base out of ID order gives the same deltas.
        let shuffled = [p(3, 7, 70), p(1, 10, 1000), p(2, 5, 500)];
        assert_eq!(compute(&shuffled, &cur, true, 0), all);
        // So does a current snapshot out of ID order, against either base.
        let back = [p(4, 2, 40), p(3, 7, 70), p(1, 20, 3000)];
        assert_eq!(compute(&base, &back, true, 0), all);
        assert_eq!(compute(&shuffled, &back, true, 0), all);
        let zigzag = [p(3, 7, 70), p(1, 20, 3000), p(4, 2, 40)];
        assert_eq!(compute(&base, &zigzag, true, 0), all);
    }

    #[test]
    fn counters_going_backwards_clamp_to_zero() {
        let rows = compute(&[p(1, 10, 100)], &[p(1, 5, 50)], true, 0);
        assert_eq!((rows[0].run_count_delta, rows[0].run_time_ns_delta), (0, 0));
    }

    #[test]
    fn ordering_ties() {
        let cur = [p(5, 3, 100), p(2, 3, 100), p(9, 4, 100), p(1, 1, 200)];
        let ids: Vec<u32> = compute(&[] as &[Counters], &cur, false, 0)
            .iter()
            .map(|r| r.prog.id)
            .collect();
        assert_eq!(ids, vec![1, 9, 2, 5]);
    }

    #[test]
    fn formulas() {
        let r = ActivityRow {
            prog: p(1, 35101434, 2807731032),
            run_count_delta: 3939893,
            run_time_ns_delta: 486420680,
            recursion_misses_delta: Some(0),
        };
        assert_eq!(format!("{:.4}", r.cpu_pct(2.0)), "24.3210");
        assert_eq!(r.execs_per_sec(2.0), 1969946.0);
        assert_eq!(r.avg_ns(), 123);
        assert_eq!(r.cumulative_avg_ns(), 79);
        assert_eq!(r.ns_per_sec(2.0), 243210340.0);
        let half = |n| ActivityRow {
            prog: p(1, 0, 0),
            run_count_delta: n,
            run_time_ns_delta: 0,
            recursion_misses_delta: Some(0),
        };
        // Round half to even: 1/2 -> 0, 3/2 -> 2, 5/2 -> 2.
        assert_eq!(half(1).execs_per_sec(2.0), 0.0);
        assert_eq!(half(3).execs_per_sec(2.0), 2.0);
        assert_eq!(half(5).execs_per_sec(2.0), 2.0);
        assert_eq!(half(0).avg_ns(), 0);
        assert_eq!(half(0).cumulative_avg_ns(), 0);
    }
}
