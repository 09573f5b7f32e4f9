//! Object context, the one collector of it for every view: who holds each
//! program, map and link and in which container and pod each holder runs
//! (one owner scan, shared, whose maximum age each caller states), where
//! programs are attached, the memlock of their maps, and what cannot change
//! while an object lives (full names, memlock), read once per object by
//! views that walk the objects again and again. The caches are the
//! [`Collector`]'s; what reads through them is its methods here.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::ops::Deref;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::collector::{Aged, Collector};
use crate::error::Result;
use crate::kernel::cgroups::{self, Workloads};
use crate::kernel::objects::{self, KnownProg, MapReader, MapRecall, ProgRecall, ProgramReader};
use crate::kernel::owners;
use crate::model::container::Workload;
use crate::model::{
    AttachPoint, Holder, Keepers, Link, LinkFields, Map, MapFields, ProgFields, Program,
};

pub(crate) use crate::kernel::owners::{HeldKind, Owners};

/// The owner scan of a caller that wants one taken now (the CLI).
pub(crate) const SCAN_NOW: Duration = Duration::ZERO;

/// One owner scan: who holds each object, and where each holder runs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct OwnerScan {
    pub owners: Owners,
    /// Each holder's workload by pid, from its `/proc/PID/cgroup` (a
    /// holder that exited meanwhile has none).
    pub workloads: BTreeMap<u32, Workload>,
}

impl Deref for OwnerScan {
    type Target = Owners;
    fn deref(&self) -> &Owners {
        &self.owners
    }
}

impl From<Owners> for OwnerScan {
    fn from(owners: Owners) -> OwnerScan {
        OwnerScan {
            owners,
            workloads: BTreeMap::new(),
        }
    }
}

impl OwnerScan {
    /// Where the holder `pid` runs, when its cgroup was read.
    pub(crate) fn workload(&self, pid: u32) -> Option<&Workload> {
        self.workloads.get(&pid)
    }

    /// Who keeps one object loaded: its holders with their workloads, and
    /// `held_by` (for an object no process holds).
    pub(crate) fn keepers(&self, kind: HeldKind, id: u32, held_by: Option<Holder>) -> Keepers {
        let owners = self.of(kind, id).to_vec();
        let workloads = owners
            .iter()
            .filter_map(|o| Some((o.pid, self.workload(o.pid)?.clone())))
            .collect();
        Keepers {
            owners,
            held_by,
            workloads,
        }
    }
}

/// Scan the holders of every object, then read each holder's cgroup and
/// name its container and pod (the kubelet's logs under `kubelet_logs`
/// read at most once).
pub(crate) fn scan_owners(kubelet_logs: &Path) -> OwnerScan {
    let owners = owners::scan();
    let pids: BTreeSet<u32> = [&owners.progs, &owners.maps, &owners.links]
        .into_iter()
        .flat_map(|t| t.values().flatten().map(|o| o.pid))
        .collect();
    let mut names = Workloads::new(kubelet_logs);
    let workloads = cgroups::task_paths(pids, Path::new("/proc"))
        .into_iter()
        .map(|(pid, path)| (pid, names.of(&path)))
        .collect();
    OwnerScan { owners, workloads }
}

/// The IDs of the objects that existed when an owner scan was taken, per
/// kind, in ID order: an object not among them was never scanned for.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Covered {
    pub progs: Vec<u32>,
    pub maps: Vec<u32>,
    pub links: Vec<u32>,
}

impl Covered {
    pub(crate) fn of(progs: &[Program], maps: &[Map], links: &[Link]) -> Covered {
        let sorted = |mut v: Vec<u32>| {
            v.sort_unstable();
            v
        };
        Covered {
            progs: sorted(progs.iter().map(|p| p.id).collect()),
            maps: sorted(maps.iter().map(|m| m.id).collect()),
            links: sorted(links.iter().map(|l| l.id).collect()),
        }
    }

    /// Whether every object in `now` was there when `self` was taken.
    pub(crate) fn covers(&self, now: &Covered) -> bool {
        let within = |old: &[u32], new: &[u32]| new.iter().all(|id| old.binary_search(id).is_ok());
        within(&self.progs, &now.progs)
            && within(&self.maps, &now.maps)
            && within(&self.links, &now.links)
    }
}

/// The last owner scan and when it was taken. It walks every fd of every
/// process (milliseconds on a busy host), so views that repeat accept one
/// a few seconds old; callers that find it stale at the same time wait
/// for one scan rather than run one each. A scan an inventory asked for
/// notes which objects existed then.
#[derive(Debug, Default)]
pub(crate) struct OwnerCache {
    scans: Aged<OwnerScan, Covered>,
}

impl OwnerCache {
    pub(crate) const fn new() -> OwnerCache {
        OwnerCache { scans: Aged::new() }
    }

    /// The owners as of at most `max_age` before `now`, running `scan`
    /// when the last scan is older or there is none ([`SCAN_NOW`]: always).
    /// A scan that cannot read /proc yields no owners, and is kept too.
    pub(crate) fn get(
        &self,
        now: Instant,
        max_age: Duration,
        scan: impl FnOnce() -> OwnerScan,
    ) -> Arc<OwnerScan> {
        self.scans.get(now, max_age, scan)
    }

    /// [`OwnerCache::get`] for the objects in `objects`: a scan younger
    /// than `max_age` is taken only if it was made when all of them
    /// existed; one that was not (a new object) is replaced, unless it is
    /// younger than `new_object_gap`, which bounds how often loads and
    /// unloads can force a scan.
    pub(crate) fn get_covering(
        &self,
        now: Instant,
        max_age: Duration,
        new_object_gap: Duration,
        objects: Covered,
        scan: impl FnOnce() -> OwnerScan,
    ) -> Arc<OwnerScan> {
        let keep = |age: Duration, old: Option<&Covered>, now: Option<&Covered>| {
            let known = old.zip(now).is_some_and(|(old, now)| old.covers(now));
            known || age < new_object_gap
        };
        self.scans.get_if(now, max_age, Some(objects), keep, scan)
    }
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

/// Whether `m`'s memlock cannot change while it lives.
fn fixed_size(m: &Map) -> bool {
    FIXED_SIZE_MAPS.contains(&m.map_type.as_str())
}

/// What cannot change while an object lives, as the last walk of each
/// kind left it: a program's full name and memlock (fixed when it is
/// loaded) by id with its tag, and the memlock of fixed-size maps by id
/// with name and type, so that a reused ID is told apart. Reading BTF and
/// fdinfo is most of the cost of a walk, so a steady host costs only the
/// info calls that bring the counters.
#[derive(Debug, Default)]
pub(crate) struct Statics {
    progs: BTreeMap<u32, (String, KnownProg)>,
    maps: BTreeMap<u32, (String, String, u64)>,
}

impl Statics {
    pub(crate) const fn new() -> Statics {
        Statics {
            progs: BTreeMap::new(),
            maps: BTreeMap::new(),
        }
    }

    /// What is known of the program in `p` (its id and tag).
    pub(crate) fn program(&self, p: &Program) -> KnownProg {
        match self.progs.get(&p.id) {
            Some((tag, known)) if *tag == p.tag => known.clone(),
            _ => KnownProg::default(),
        }
    }

    /// The memlock of the map in `m` (its id, name and type), if known.
    pub(crate) fn map(&self, m: &Map) -> Option<u64> {
        match self.maps.get(&m.id) {
            Some((name, kind, b)) if *name == m.name && *kind == m.map_type => Some(*b),
            _ => None,
        }
    }

    /// Keep what a walk read of `programs` (every program it saw, in ID
    /// order, with what it read: `fields`) beside what was known of the
    /// same program; programs the walk did not see are forgotten. Entries
    /// are updated in place, so that a steady host allocates nothing here.
    pub(crate) fn keep_programs(&mut self, fields: ProgFields, programs: &[Program]) {
        self.progs
            .retain(|id, _| programs.binary_search_by_key(id, |p| p.id).is_ok());
        for p in programs {
            let entry = self
                .progs
                .entry(p.id)
                .or_insert_with(|| (p.tag.to_string(), KnownProg::default()));
            if entry.0 != p.tag {
                *entry = (p.tag.to_string(), KnownProg::default());
            }
            let known = &mut entry.1;
            if fields.full_name && known.full_name.is_none() {
                known.full_name = Some(p.full_name.to_string());
            }
            // A memlock that could not be read is tried again next time.
            if fields.memlock && known.memlock.is_none() {
                known.memlock = p.memlock_bytes;
            }
        }
    }

    /// Keep the memlock of the fixed-size maps among `maps` (every map a
    /// walk saw, in ID order); maps it did not see are forgotten.
    pub(crate) fn keep_maps(&mut self, maps: &[Map]) {
        self.maps
            .retain(|id, _| maps.binary_search_by_key(id, |m| m.id).is_ok());
        for m in maps {
            let Some(b) = m.memlock_bytes else {
                continue;
            };
            if !fixed_size(m) {
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

impl Collector {
    /// Every program with `fields` (`full_name`, `map_ids`, `memlock`), in
    /// ID order, recalling the full names and memlock earlier walks of this
    /// collector read and keeping what this one read: for views that walk
    /// the programs again and again (windows, the TUI, the exporter).
    pub(crate) fn programs_recalled(&self, fields: ProgFields) -> Result<Vec<Program>> {
        let out = ProgramReader::new(fields).collect_known(|p| self.statics().program(p))?;
        self.statics().keep_programs(fields, &out);
        Ok(out)
    }

    /// [`Collector::programs_recalled`] for a stream of windows: the rows
    /// of the programs `recall` holds from the last walk are copied rather
    /// than read again (see [`ProgramReader::collect_recalled`]); with
    /// `full` every ID is asked of the kernel, else only those above the
    /// last walk's.
    pub(crate) fn programs_recalling(
        &self,
        fields: ProgFields,
        recall: &mut ProgRecall,
        full: bool,
    ) -> Result<Vec<Program>> {
        ProgramReader::new(fields).collect_recalled(recall, full, |p| self.statics().program(p))
    }

    /// Every map with `fields`, in ID order, recalling the memlock of
    /// fixed-size maps (their `frozen` is then not read).
    pub(crate) fn maps_recalled(&self, fields: MapFields) -> Result<Vec<Map>> {
        let out = MapReader::new(fields).collect_known(|m| self.statics().map(m))?;
        if fields.fdinfo {
            self.statics().keep_maps(&out);
        }
        Ok(out)
    }

    /// [`Collector::maps_recalled`] for a stream of walks: the maps
    /// `recall` holds are not opened (see [`MapReader::collect_recalled`]);
    /// those whose every field is fixed (with fdinfo, the fixed-size maps
    /// whose memlock is known) are kept there for the next walk. With
    /// `full` every map is read again.
    pub(crate) fn maps_recalling(
        &self,
        fields: MapFields,
        recall: &mut MapRecall,
        full: bool,
    ) -> Result<Vec<Map>> {
        let out = MapReader::new(fields).collect_recalled(
            recall,
            full,
            |m| self.statics().map(m),
            |m| !fields.fdinfo || (m.memlock_bytes.is_some() && fixed_size(m)),
        )?;
        if fields.fdinfo {
            self.statics().keep_maps(&out);
        }
        Ok(out)
    }

    /// Every program, map and link with the fields asked for, and the
    /// owners from a scan at most `owners_max_age` old that was taken when
    /// every one of these objects existed: an object never scanned for
    /// forces a new scan, so that its holders are known before it is first
    /// served, unless the last scan is younger than `new_object_gap`.
    pub(crate) fn inventory(
        &self,
        fields: (ProgFields, MapFields, LinkFields),
        owners_max_age: Duration,
        new_object_gap: Duration,
        recall: &mut InventoryRecall,
    ) -> Result<Inventory> {
        let (progs, maps, links) = fields;
        let full = recall.since_full == 0;
        recall.since_full = (recall.since_full + 1) % FULL_INVENTORY_EVERY;
        let programs = self.programs_recalling(progs, &mut recall.progs, full)?;
        let maps = self.maps_recalling(maps, &mut recall.maps, full)?;
        let links = objects::links(links)?;
        let objects = Covered::of(&programs, &maps, &links);
        let owners = self.owner_cache().get_covering(
            Instant::now(),
            owners_max_age,
            new_object_gap,
            objects,
            || scan_owners(self.kubelet_logs()),
        );
        Ok(Inventory {
            programs,
            maps,
            links,
            owners,
        })
    }

    /// Who holds each program, where it is attached and its memlock, read
    /// now: programs and maps (their memlock recalled where it cannot have
    /// changed), links, and owners from a scan at most `owners_max_age`
    /// old.
    pub(crate) fn prog_context(&self, owners_max_age: Duration) -> Result<ProgContext> {
        let mut progs = self.programs_recalled(ProgFields {
            map_ids: true,
            memlock: true,
            ..ProgFields::default()
        })?;
        let maps = self.maps_recalled(MapFields {
            fdinfo: true,
            ..MapFields::default()
        })?;
        add_maps_memlock(&mut progs, &maps);
        let links = objects::links(LinkFields {
            target_names: true,
            ..LinkFields::default()
        })?;
        add_prog_keepers(&mut progs, &links, &self.owners(owners_max_age));
        Ok(ProgContext::from_programs(progs))
    }
}

/// How often a stream of inventories reads every object again instead of
/// copying the rows of those it read before: a program whose ID came
/// after the kernel's ID space wrapped shows within this many.
const FULL_INVENTORY_EVERY: u32 = 60;

/// What a stream of inventories carries from one to the next: the rows of
/// the programs and of the maps that cannot change (see
/// [`Collector::maps_recalling`]), so that a steady host costs one info
/// call per program and one GET_NEXT_ID per map.
#[derive(Debug, Default)]
pub(crate) struct InventoryRecall {
    progs: ProgRecall,
    maps: MapRecall,
    /// Inventories since every object was last read.
    since_full: u32,
}

/// The objects and holders one exporter scrape serves.
#[derive(Debug, Clone, Default)]
pub(crate) struct Inventory {
    pub programs: Vec<Program>,
    pub maps: Vec<Map>,
    pub links: Vec<Link>,
    pub owners: Arc<OwnerScan>,
}

/// Each program's maps' memlock, every map once, and how many of its maps
/// other programs use as well.
pub(crate) fn add_maps_memlock(progs: &mut [Program], maps: &[Map]) {
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

/// Owners (with their workloads), the link that holds each program, and
/// the programs' attach points: through their links, then through perf
/// event fds (the owner scan's); a perf event that a perf-event link also
/// holds is shown once, as the link.
pub(crate) fn add_prog_keepers(progs: &mut [Program], links: &[Link], owners: &OwnerScan) {
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
        let held_by = own.first().map(|l| Holder::Link(l.id));
        p.keepers = Some(owners.keepers(HeldKind::Prog, p.id, held_by));
    }
}

/// Who holds each program, where it is attached and its memlock: what
/// `-x` adds to activity rows. It costs an owner scan, so views that repeat
/// read it on their own slower cadence and apply the latest to each window.
#[derive(Debug, Clone, Default)]
pub(crate) struct ProgContext {
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
    pub(crate) fn from_programs(progs: Vec<Program>) -> ProgContext {
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
    pub(crate) fn apply(&self, progs: &mut [Program]) {
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

    fn held(pid: u32) -> OwnerScan {
        let mut agg = owners::Aggregator::default();
        agg.add(HeldKind::Prog, 1, pid);
        agg.finish().into()
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
        assert!(empty.get(t0, TUI, OwnerScan::default).progs.is_empty());
        assert!(empty.get(t0, TUI, || held(1)).progs.is_empty());
    }

    #[test]
    fn callers_that_find_the_scan_stale_together_share_one() {
        let cache = OwnerCache::new();
        let scans = std::sync::atomic::AtomicU32::new(0);
        let now = Instant::now();
        let got: Vec<Arc<OwnerScan>> = std::thread::scope(|s| {
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
        let mut scan = OwnerScan::from(agg.finish());
        let docker = format!("/docker/{}", "ab".repeat(32));
        scan.workloads
            .insert(42, crate::kernel::cgroups::workload(&docker));
        add_prog_keepers(&mut progs, &[link], &scan);
        let k0 = progs[0].keepers.clone().unwrap();
        assert_eq!((k0.owners.len(), k0.held_by), (0, Some(Holder::Link(70))));
        assert_eq!(progs[0].attached[0].target.as_deref(), Some("sched_switch"));
        let k1 = progs[1].keepers.clone().unwrap();
        assert_eq!(k1.owners[0].comm, "loader");
        assert_eq!((k1.held_by, progs[1].attached.len()), (None, 0));
        // The holder's workload travels with it.
        let c = k1.workloads.get(&42).and_then(|w| w.container.clone());
        assert_eq!(c.map(|c| c.id), Some("ab".repeat(32)));
        assert!(k0.workloads.is_empty());
    }

    #[test]
    fn an_object_never_scanned_for_forces_a_scan_at_most_every_gap() {
        const AGE: Duration = Duration::from_secs(10);
        const GAP: Duration = Duration::from_secs(2);
        let cache = OwnerCache::new();
        let t0 = Instant::now();
        let scans = std::cell::Cell::new(0);
        let ids = |progs: &[u32]| Covered {
            progs: progs.to_vec(),
            ..Covered::default()
        };
        let at = |after: u64, objects: Covered| {
            first_pid(&cache.get_covering(
                t0 + Duration::from_millis(after),
                AGE,
                GAP,
                objects,
                || {
                    scans.set(scans.get() + 1);
                    held(scans.get())
                },
            ))
        };
        assert_eq!(at(0, ids(&[1, 2])), 1);
        // The same objects, or fewer: the scan serves its max age.
        assert_eq!(at(5_000, ids(&[2])), 1);
        // A new object 5 s on: scanned now, not 5 s later.
        assert_eq!(at(5_000, ids(&[2, 3])), 2);
        assert_eq!(at(6_000, ids(&[2, 3])), 2);
        // Churn: new objects within the gap share the last scan ...
        assert_eq!(at(6_500, ids(&[2, 3, 4])), 2);
        assert_eq!(at(6_900, ids(&[2, 3, 4, 5])), 2);
        // ... and force the next one once the gap has passed.
        assert_eq!(at(7_000, ids(&[2, 3, 4, 5])), 3);
        assert_eq!(scans.get(), 3);
        // Past the max age a scan is taken whatever the objects.
        assert_eq!(at(17_000, ids(&[])), 4);
        // A scan taken by another caller covers nothing known: a new one.
        cache.get(t0 + Duration::from_secs(18), SCAN_NOW, || held(99));
        assert_eq!(at(18_000, ids(&[])), 99, "younger than the gap");
        assert_eq!(at(20_000, ids(&[])), 5);
        let c = Covered::of(
            &[Program {
                id: 9,
                ..Default::default()
            }],
            &[],
            &[],
        );
        assert!(c.covers(&Covered::default()) && c.covers(&c.clone()));
        assert!(!Covered::default().covers(&c));
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
        let owners = OwnerScan::from(agg.finish());
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
