//! Object context, the one collector of it for every view: who holds each
//! program, map and link (one owner scan, shared, whose maximum age each
//! caller states), where programs are attached, the memlock of their maps,
//! and what cannot change while an object lives (full names, memlock),
//! read once per object by views that walk the objects again and again.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use crate::error::Result;
use crate::kernel::objects::{self, KnownProg, MapReader, ProgramReader};
use crate::kernel::owners;
use crate::model::{
    AttachPoint, Holder, Keepers, Link, LinkFields, Map, MapFields, ProgFields, Program,
};

pub use crate::kernel::owners::{HeldKind, Owners};

/// The owner scan of a caller that wants one taken now (the CLI).
pub const SCAN_NOW: Duration = Duration::ZERO;

/// The last owner scan and when it was taken. It walks every fd of every
/// process (milliseconds on a busy host), so views that repeat accept one
/// a few seconds old; callers that find it stale at the same time wait
/// for one scan rather than run one each.
#[derive(Debug, Default)]
pub struct OwnerCache {
    last: Mutex<Option<(Instant, Arc<Owners>)>>,
}

impl OwnerCache {
    pub const fn new() -> OwnerCache {
        OwnerCache {
            last: Mutex::new(None),
        }
    }

    /// The owners as of at most `max_age` before `now`, running `scan`
    /// when the last scan is older or there is none ([`SCAN_NOW`]: always).
    /// A scan that cannot read /proc yields no owners, and is kept too.
    pub fn get(
        &self,
        now: Instant,
        max_age: Duration,
        scan: impl FnOnce() -> Owners,
    ) -> Arc<Owners> {
        let mut last = self.last.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((at, owners)) = &*last {
            // A clock read from before the last scan counts as fresh.
            if now.saturating_duration_since(*at) < max_age {
                return Arc::clone(owners);
            }
        }
        let owners = Arc::new(scan());
        *last = Some((now, Arc::clone(&owners)));
        owners
    }
}

/// The process's one owner scan.
static OWNERS: OwnerCache = OwnerCache::new();

/// Who holds each object, from a scan at most `max_age` old.
pub fn owners(max_age: Duration) -> Arc<Owners> {
    OWNERS.get(Instant::now(), max_age, owners::scan)
}

/// Map types whose memory is all allocated when the map is created, so
/// their memlock never changes (hash maps may grow; they are re-read).
const FIXED_SIZE_MAPS: [&str; 7] = [
    "array",
    "percpu_array",
    "prog_array",
    "perf_event_array",
    "cgroup_array",
    "array_of_maps",
    "bloom_filter",
];

/// What cannot change while an object lives, as the last walk of each
/// kind left it: a program's full name and memlock (fixed when it is
/// loaded) by id with its tag, and the memlock of fixed-size maps by id
/// with name and type, so that a reused ID is told apart. Reading BTF and
/// fdinfo is most of the cost of a walk, so a steady host costs only the
/// info calls that bring the counters.
#[derive(Debug, Default)]
pub struct Statics {
    progs: BTreeMap<u32, (String, KnownProg)>,
    maps: BTreeMap<u32, (String, String, u64)>,
}

impl Statics {
    pub const fn new() -> Statics {
        Statics {
            progs: BTreeMap::new(),
            maps: BTreeMap::new(),
        }
    }

    /// What is known of the program in `p` (its id and tag).
    pub fn program(&self, p: &Program) -> KnownProg {
        match self.progs.get(&p.id) {
            Some((tag, known)) if *tag == p.tag => known.clone(),
            _ => KnownProg::default(),
        }
    }

    /// The memlock of the map in `m` (its id, name and type), if known.
    pub fn map(&self, m: &Map) -> Option<u64> {
        match self.maps.get(&m.id) {
            Some((name, kind, b)) if *name == m.name && *kind == m.map_type => Some(*b),
            _ => None,
        }
    }

    /// Keep what a walk read of `programs` (every program it saw, in ID
    /// order, with what it read: `fields`) beside what was known of the
    /// same program; programs the walk did not see are forgotten. Entries
    /// are updated in place, so that a steady host allocates nothing here.
    pub fn keep_programs(&mut self, fields: ProgFields, programs: &[Program]) {
        self.progs
            .retain(|id, _| programs.binary_search_by_key(id, |p| p.id).is_ok());
        for p in programs {
            let entry = self
                .progs
                .entry(p.id)
                .or_insert_with(|| (p.tag.clone(), KnownProg::default()));
            if entry.0 != p.tag {
                *entry = (p.tag.clone(), KnownProg::default());
            }
            let known = &mut entry.1;
            if fields.full_name && known.full_name.is_none() {
                known.full_name = Some(p.full_name.clone());
            }
            // A memlock that could not be read is tried again next time.
            if fields.memlock && known.memlock.is_none() {
                known.memlock = p.memlock_bytes;
            }
        }
    }

    /// Keep the memlock of the fixed-size maps among `maps` (every map a
    /// walk saw, in ID order); maps it did not see are forgotten.
    pub fn keep_maps(&mut self, maps: &[Map]) {
        self.maps
            .retain(|id, _| maps.binary_search_by_key(id, |m| m.id).is_ok());
        for m in maps {
            let Some(b) = m.memlock_bytes else {
                continue;
            };
            if !FIXED_SIZE_MAPS.contains(&m.map_type.as_str()) {
                continue;
            }
            let same = |e: &(String, String, u64)| e.0 == m.name && e.1 == m.map_type;
            if !self.maps.get(&m.id).is_some_and(same) {
                self.maps
                    .insert(m.id, (m.name.clone(), m.map_type.clone(), b));
            }
        }
    }
}

/// The process's one record of what cannot change.
static STATICS: Mutex<Statics> = Mutex::new(Statics::new());

fn statics() -> MutexGuard<'static, Statics> {
    STATICS.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Every program with `fields` (`full_name`, `map_ids`, `memlock`), in ID
/// order, recalling the full names and memlock earlier walks of this
/// process read and keeping what this one read: for views that walk the
/// programs again and again (windows, the TUI, the exporter).
pub fn programs_recalled(fields: ProgFields) -> Result<Vec<Program>> {
    let mut out = Vec::new();
    ProgramReader::new(fields).each_known(
        |p| statics().program(p),
        |p| {
            out.push(p);
            Ok(())
        },
    )?;
    statics().keep_programs(fields, &out);
    Ok(out)
}

/// Every map with `fields`, in ID order, recalling the memlock of
/// fixed-size maps (their `frozen` is then not read).
pub fn maps_recalled(fields: MapFields) -> Result<Vec<Map>> {
    let mut out = Vec::new();
    MapReader::new(fields).each_known(
        |m| statics().map(m),
        |m| {
            out.push(m);
            Ok(())
        },
    )?;
    if fields.fdinfo {
        statics().keep_maps(&out);
    }
    Ok(out)
}

/// The objects and holders one exporter scrape serves.
#[derive(Debug, Clone, Default)]
pub struct Inventory {
    pub programs: Vec<Program>,
    pub maps: Vec<Map>,
    pub links: Vec<Link>,
    pub owners: Arc<Owners>,
}

/// Every program, map and link with the fields asked for, and the owners
/// from a scan at most `owners_max_age` old.
pub fn inventory(
    progs: ProgFields,
    maps: MapFields,
    links: LinkFields,
    owners_max_age: Duration,
) -> Result<Inventory> {
    Ok(Inventory {
        programs: programs_recalled(progs)?,
        maps: maps_recalled(maps)?,
        links: objects::links(links)?,
        owners: owners(owners_max_age),
    })
}

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
/// points: through their links, then through perf event fds (the owner
/// scan's); a perf event that a perf-event link also holds is shown once,
/// as the link.
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
                link_id: Some(l.id),
                attach_type: l.attach_type.clone(),
                target: l.target.clone(),
                perf_event: None,
            })
            .collect();
        let through_links = p.attached.len();
        for a in owners.perf_attached(p.id) {
            let same = |l: &AttachPoint| (&l.attach_type, &l.target) == (&a.attach_type, &a.target);
            if !p.attached[..through_links].iter().any(same) {
                p.attached.push(a.clone());
            }
        }
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
    /// Read it now: programs and maps (their memlock recalled where it
    /// cannot have changed), links, and owners from a scan at most
    /// `owners_max_age` old.
    pub fn read(owners_max_age: Duration) -> Result<ProgContext> {
        let mut progs = programs_recalled(ProgFields {
            map_ids: true,
            memlock: true,
            ..ProgFields::default()
        })?;
        let maps = maps_recalled(MapFields {
            fdinfo: true,
            ..MapFields::default()
        })?;
        add_maps_memlock(&mut progs, &maps);
        let links = objects::links(LinkFields {
            target_names: true,
            ..LinkFields::default()
        })?;
        add_prog_keepers(&mut progs, &links, &owners(owners_max_age));
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

    fn held(pid: u32) -> Owners {
        let mut agg = owners::Aggregator::default();
        agg.add(HeldKind::Prog, 1, pid);
        agg.finish()
    }

    fn first_pid(o: &Owners) -> u32 {
        o.of(HeldKind::Prog, 1)[0].pid
    }

    #[test]
    fn each_caller_states_how_old_a_scan_it_accepts() {
        const TUI: Duration = Duration::from_secs(5);
        const EXPORTER: Duration = Duration::from_secs(10);
        let cache = OwnerCache::new();
        let t0 = Instant::now();
        let scans = std::cell::Cell::new(0);
        let at = |after: Duration, max_age: Duration, pid: u32| {
            first_pid(&cache.get(t0 + after, max_age, || {
                scans.set(scans.get() + 1);
                held(pid)
            }))
        };
        assert_eq!(at(Duration::ZERO, EXPORTER, 10), 10);
        // 4 s later the TUI and the exporter both take that scan ...
        let s4 = Duration::from_secs(4);
        assert_eq!((at(s4, TUI, 20), at(s4, EXPORTER, 21)), (10, 10));
        assert_eq!(scans.get(), 1);
        // ... the CLI never does ...
        assert_eq!(at(s4, SCAN_NOW, 30), 30);
        assert_eq!(scans.get(), 2);
        // ... and at 4 s + 5 s the TUI wants a new one, the exporter not.
        let s9 = s4 + TUI;
        assert_eq!(at(s9, EXPORTER, 40), 30);
        assert_eq!(at(s9, TUI, 41), 41);
        assert_eq!(scans.get(), 3);
        // A clock read from before the last scan does not force a new one.
        assert_eq!(at(Duration::ZERO, TUI, 50), 41);
        assert_eq!(scans.get(), 3);
        // A scan that found nothing (/proc unreadable) is kept too.
        let empty = OwnerCache::new();
        assert!(empty.get(t0, TUI, Owners::default).progs.is_empty());
        assert!(empty.get(t0, TUI, || held(1)).progs.is_empty());
    }

    #[test]
    fn callers_that_find_the_scan_stale_together_share_one() {
        let cache = OwnerCache::new();
        let scans = std::sync::atomic::AtomicU32::new(0);
        let now = Instant::now();
        let got: Vec<Arc<Owners>> = std::thread::scope(|s| {
            let threads: Vec<_> = (0..4)
                .map(|i| {
                    let (cache, scans) = (&cache, &scans);
                    s.spawn(move || {
                        cache.get(now, Duration::from_secs(5), || {
                            scans.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                            // Long enough for the others to wait for it.
                            std::thread::sleep(Duration::from_millis(50));
                            held(100 + i)
                        })
                    })
                })
                .collect();
            threads.into_iter().map(|t| t.join().unwrap()).collect()
        });
        assert_eq!(scans.load(std::sync::atomic::Ordering::SeqCst), 1);
        assert!(got.iter().all(|o| Arc::ptr_eq(o, &got[0])));
    }

    #[test]
    fn statics_keep_only_what_cannot_change_of_what_the_last_walk_saw() {
        let prog = |id, tag: &str, name: &str, memlock| Program {
            id,
            tag: tag.into(),
            full_name: name.into(),
            memlock_bytes: memlock,
            ..Default::default()
        };
        let names = ProgFields {
            full_name: true,
            ..ProgFields::default()
        };
        let memlock = ProgFields {
            memlock: true,
            ..ProgFields::default()
        };
        let mut c = Statics::new();
        c.keep_programs(names, &[prog(1, "aa", "long_name", None)]);
        // A walk that read memlock but not names keeps the name it knew.
        c.keep_programs(
            memlock,
            &[prog(1, "aa", "", Some(4096)), prog(2, "bb", "", None)],
        );
        let known = c.program(&prog(1, "aa", "", None));
        assert_eq!(known.full_name.as_deref(), Some("long_name"));
        assert_eq!(known.memlock, Some(4096));
        // Unread memlock is read again; a reused ID (another tag) is new.
        assert_eq!(c.program(&prog(2, "bb", "", None)), KnownProg::default());
        assert_eq!(c.program(&prog(1, "cc", "", None)), KnownProg::default());
        // Programs gone from the last walk are forgotten.
        c.keep_programs(names, &[prog(2, "bb", "x", None)]);
        assert_eq!(c.program(&prog(1, "aa", "", None)), KnownProg::default());
        let map = |id, ty: &str, memlock| Map {
            id,
            map_type: ty.into(),
            name: "m".into(),
            memlock_bytes: memlock,
            ..Default::default()
        };
        c.keep_maps(&[
            map(3, "array", Some(8192)),
            map(4, "hash", Some(100)),
            map(5, "array", None),
        ]);
        assert_eq!(c.map(&map(3, "array", None)), Some(8192));
        assert_eq!(c.map(&map(4, "hash", None)), None, "hash maps can grow");
        assert_eq!(c.map(&map(5, "array", None)), None);
        assert_eq!(c.map(&map(3, "percpu_array", None)), None, "reused ID");
        c.keep_maps(&[]);
        assert_eq!(c.map(&map(3, "array", None)), None);
    }

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

    #[test]
    fn perf_event_attachments_follow_links_and_are_not_repeated() {
        let query = |prog_id, name: &str| crate::kernel::perf_attach::TaskFdQuery {
            prog_id,
            fd_type: 1,
            name: name.as_bytes().to_vec(),
            ..Default::default()
        };
        let mut agg = owners::Aggregator::default();
        // Program 5's perf-event link holds the event its loader holds too.
        agg.add_perf(42, 3, &query(5, "sched_switch"));
        agg.add_perf(42, 4, &query(5, "sys_enter_openat"));
        agg.add_perf(43, 9, &query(6, "sched_switch"));
        let owners = agg.finish();
        let link = Link {
            id: 70,
            prog_id: 5,
            attach_type: Some("tracepoint".into()),
            target: Some("sched_switch".into()),
            ..Default::default()
        };
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
        add_prog_keepers(&mut progs, &[link], &owners);
        let shown = |p: &Program| -> Vec<(Option<u32>, Option<String>)> {
            p.attached
                .iter()
                .map(|a| (a.link_id, a.target.clone()))
                .collect()
        };
        assert_eq!(
            shown(&progs[0]),
            [
                (Some(70), Some("sched_switch".into())),
                (None, Some("sys_enter_openat".into()))
            ]
        );
        assert_eq!(shown(&progs[1]), [(None, Some("sched_switch".into()))]);
        let holder = progs[1].keepers.clone().unwrap().owners;
        assert_eq!(holder[0].pid, 43, "the perf fd's holder owns the program");
        assert_eq!(
            progs[1].attached[0].perf_event,
            Some(crate::model::PerfEventFd { pid: 43, fd: 9 })
        );
        // The context the TUI and `activity -x` read carries them.
        let mut rows = vec![Program {
            id: 6,
            ..Default::default()
        }];
        ProgContext::from_programs(progs).apply(&mut rows);
        assert_eq!(shown(&rows[0]), [(None, Some("sched_switch".into()))]);
    }
}
