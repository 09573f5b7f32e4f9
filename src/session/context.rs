//! Object context: who holds each program, where it is attached, and the
//! memlock of its maps.

use std::collections::HashMap;

use crate::error::Result;
use crate::kernel::objects;
use crate::kernel::owners::{self, HeldKind, Owners};
use crate::model::{AttachPoint, Holder, Keepers, Link, Map, Program};

/// Each program's maps' memlock, every map once, and how many of its maps
/// other programs use as well.
pub fn add_maps_memlock(progs: &mut [Program], maps: &[Map]) {
    let memlock: HashMap<u32, Option<u64>> = maps.iter().map(|m| (m.id, m.memlock_bytes)).collect();
    let mut users: HashMap<u32, u32> = HashMap::new();
    for p in progs.iter() {
        let mut ids = p.map_ids.clone();
        ids.sort_unstable();
        ids.dedup();
        for id in ids {
            *users.entry(id).or_default() += 1;
        }
    }
    for p in progs.iter_mut() {
        add_map_memlock(p, &memlock, &users);
    }
}

/// One program's share of [`add_maps_memlock`], from map id -> memlock
/// and map id -> number of programs using it.
pub(super) fn add_map_memlock(
    p: &mut Program,
    memlock: &HashMap<u32, Option<u64>>,
    users: &HashMap<u32, u32>,
) {
    let mut ids = p.map_ids.clone();
    ids.sort_unstable();
    ids.dedup();
    let known: Vec<u64> = ids
        .iter()
        .filter_map(|id| memlock.get(id).copied().flatten())
        .collect();
    p.maps_memlock_bytes = (!known.is_empty()).then(|| known.iter().sum());
    let shared = ids
        .iter()
        .filter(|id| users.get(id).copied().unwrap_or(0) > 1)
        .count();
    p.shared_maps = Some(u32::try_from(shared).unwrap_or(u32::MAX));
}

/// Owners, the link that holds each program, and the programs' attach
/// points through their links.
pub fn add_prog_keepers(progs: &mut [Program], links: &[Link], owners: &Owners) {
    let mut by_prog: HashMap<u32, Vec<&Link>> = HashMap::new();
    for l in links {
        by_prog.entry(l.prog_id).or_default().push(l);
    }
    for p in progs {
        let own = by_prog.get(&p.id).map(Vec::as_slice).unwrap_or(&[]);
        p.attached = own
            .iter()
            .map(|l| AttachPoint {
                link_id: l.id,
                attach_type: l.attach_type.clone(),
                target: l.target.clone(),
            })
            .collect();
        p.keepers = Some(Keepers {
            owners: owners.of(HeldKind::Prog, p.id).to_vec(),
            held_by: own.first().map(|l| Holder::Link(l.id)),
        });
    }
}

/// Who holds each program, where it is attached and its memlock: what
/// `-x` adds to activity rows. It costs an owner scan, so views that repeat
/// read it on their own slower cadence and apply the latest to each window.
#[derive(Debug, Clone, Default)]
pub struct ProgContext {
    by_id: HashMap<u32, Known>,
}

/// What [`ProgContext`] knows about one program.
#[derive(Debug, Clone, Default)]
struct Known {
    keepers: Keepers,
    attached: Vec<AttachPoint>,
    memlock: Option<u64>,
    maps_memlock: Option<u64>,
    shared_maps: Option<u32>,
}

impl ProgContext {
    /// Read it now (programs, links and an owner scan).
    pub fn read() -> Result<ProgContext> {
        let mut progs = objects::programs()?;
        add_maps_memlock(&mut progs, &objects::maps()?);
        let links = objects::links()?;
        add_prog_keepers(&mut progs, &links, &owners::scan());
        Ok(ProgContext::from_programs(progs))
    }

    pub fn from_programs(progs: Vec<Program>) -> ProgContext {
        let by_id = progs
            .into_iter()
            .map(|p| {
                let known = Known {
                    keepers: p.keepers.unwrap_or_default(),
                    attached: p.attached,
                    memlock: p.memlock_bytes,
                    maps_memlock: p.maps_memlock_bytes,
                    shared_maps: p.shared_maps,
                };
                (p.id, known)
            })
            .collect();
        ProgContext { by_id }
    }

    /// Fill the rows' programs it knows; the others keep theirs.
    pub fn apply(&self, progs: &mut [Program]) {
        for p in progs {
            if let Some(k) = self.by_id.get(&p.id) {
                p.keepers = Some(k.keepers.clone());
                p.attached = k.attached.clone();
                p.memlock_bytes = p.memlock_bytes.or(k.memlock);
                p.maps_memlock_bytes = k.maps_memlock;
                p.shared_maps = k.shared_maps;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_memlock_counts_each_map_once_and_says_which_are_shared() {
        let prog = |id, map_ids: Vec<u32>| Program {
            id,
            map_ids,
            ..Default::default()
        };
        let map = |id, memlock| Map {
            id,
            memlock_bytes: memlock,
            ..Default::default()
        };
        let mut progs = vec![
            prog(1, vec![10, 11, 10]),
            prog(2, vec![11]),
            prog(3, vec![12]),
        ];
        add_maps_memlock(
            &mut progs,
            &[map(10, Some(100)), map(11, Some(1000)), map(12, None)],
        );
        let got: Vec<(Option<u64>, Option<u32>)> = progs
            .iter()
            .map(|p| (p.maps_memlock_bytes, p.shared_maps))
            .collect();
        assert_eq!(
            got,
            vec![
                (Some(1100), Some(1)),
                (Some(1000), Some(1)),
                (None, Some(0))
            ]
        );
    }

    #[test]
    fn programs_are_held_by_their_first_link() {
        let mut progs = vec![
            Program {
                id: 5,
                ..Default::default()
            },
            Program {
                id: 6,
                ..Default::default()
            },
        ];
        let link = Link {
            id: 70,
            prog_id: 5,
            target: Some("sched_switch".into()),
            ..Default::default()
        };
        let mut agg = owners::Aggregator::default();
        agg.add(HeldKind::Prog, 6, 42);
        agg.set_comm(42, "loader".into());
        add_prog_keepers(&mut progs, &[link], &agg.finish());
        let k0 = progs[0].keepers.clone().unwrap();
        assert_eq!((k0.owners.len(), k0.held_by), (0, Some(Holder::Link(70))));
        assert_eq!(progs[0].attached[0].target.as_deref(), Some("sched_switch"));
        let k1 = progs[1].keepers.clone().unwrap();
        assert_eq!(k1.owners[0].comm, "loader");
        assert_eq!((k1.held_by, progs[1].attached.len()), (None, 0));
    }
}
