//! What `commands`, `top` and the TUI share: the measuring window, a capture
//! that Ctrl-C ends early, pinned paths, the `--devmode` source tree, and
//! the signals that end the interactive view.
//!
//! Signal handling lives here and nowhere above it, so that the way signals
//! are caught can change without touching the callers.

use std::collections::HashMap;
use std::ops::ControlFlow;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use crate::activity::{self, ActivityRow};
use crate::error::{BrrError, Result};
use crate::inspect::compare::{self, ToolRow};
use crate::inspect::drilldown::DEVMODE_NOTHING;
use crate::inspect::insn;
use crate::inspect::profile::{DrillProfile, KernelRow, ProfileInput};
use crate::inspect::source::{self, SourceTree};
use crate::kernel::owners::{self, HeldKind, Owners};
use crate::kernel::{bpffs, lines, objects, stats::StatsGuard};
use crate::model::profile as data;
use crate::model::{AttachPoint, Holder, Keepers, Link, Map, Program};
use crate::profile::{self, aggregate, capture::StopSignal};
use crate::render::profile::SourceContexts;
use crate::sys::signal::InterruptGuard;

/// Longest wait that is ever computed: keeps `Instant + Duration` from
/// overflowing (the CLI caps durations much lower).
const MAX_WAIT_SECONDS: f64 = 1e9;

/// `seconds` as a wait that can always be added to an `Instant`: negative
/// or NaN waits are zero, absurd ones capped.
pub fn wait_for(seconds: f64) -> Duration {
    if seconds.is_nan() {
        return Duration::ZERO;
    }
    Duration::from_secs_f64(seconds.clamp(0.0, MAX_WAIT_SECONDS))
}

/// How much of each program a window's snapshots read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Detail {
    /// Everything the listings show (map IDs, ...).
    Full,
    /// What activity rows need; cheaper, for windows that repeat.
    Brief,
}

fn snapshot(detail: Detail) -> Result<Vec<Program>> {
    match detail {
        Detail::Full => objects::programs(),
        Detail::Brief => objects::programs_brief(),
    }
}

/// An activity window in progress: statistics are on and the baseline has
/// been read. The window's clock starts when the baseline enumeration
/// starts, so the measured time is the one between the starts of the two
/// enumerations.
pub struct Window {
    stats: StatsGuard,
    detail: Detail,
    base: Vec<Program>,
    start: Instant,
    wall_start: SystemTime,
}

/// Two snapshots of one window and the seconds between them.
#[derive(Debug, Clone)]
pub struct Measurement {
    pub base: Vec<Program>,
    pub current: Vec<Program>,
    pub seconds: f64,
    /// Wall-clock times of the starts of the two enumerations, in Unix
    /// seconds: what streams print so that windows line up with other logs.
    pub wall_start: f64,
    pub wall_end: f64,
}

/// Unix seconds of `t`; a clock before 1970 counts as 0.
fn unix_seconds(t: SystemTime) -> f64 {
    t.duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

impl Window {
    /// Enable statistics and read the baseline.
    pub fn start(detail: Detail) -> Result<Window> {
        let stats = StatsGuard::enable()?;
        let start = Instant::now();
        let wall_start = SystemTime::now();
        let base = snapshot(detail)?;
        Ok(Window {
            stats,
            detail,
            base,
            start,
            wall_start,
        })
    }

    /// When the baseline enumeration started.
    pub fn started(&self) -> Instant {
        self.start
    }

    /// The baseline snapshot.
    pub fn base(&self) -> &[Program] {
        &self.base
    }

    /// When a window of `seconds` ends.
    pub fn deadline(&self, seconds: f64) -> Instant {
        self.start + wait_for(seconds)
    }

    /// The second snapshot, when its enumeration started, and the seconds
    /// since the baseline's started.
    fn second(&self) -> Result<(Vec<Program>, Instant, SystemTime, f64)> {
        let at = Instant::now();
        let wall = SystemTime::now();
        let current = snapshot(self.detail)?;
        Ok((
            current,
            at,
            wall,
            at.duration_since(self.start).as_secs_f64(),
        ))
    }

    /// Read the second snapshot; statistics go off right after it.
    pub fn finish(self) -> Result<Measurement> {
        let (current, _, wall, seconds) = self.second()?;
        drop(self.stats);
        Ok(Measurement {
            base: self.base,
            current,
            seconds,
            wall_start: unix_seconds(self.wall_start),
            wall_end: unix_seconds(wall),
        })
    }

    /// Read the second snapshot and keep statistics on: the returned window
    /// starts from that snapshot, so back-to-back windows leave no
    /// unmeasured gap and cost one enumeration each.
    pub fn finish_and_continue(self) -> Result<(Measurement, Window)> {
        let (current, at, wall, seconds) = self.second()?;
        let next = Window {
            stats: self.stats,
            detail: self.detail,
            base: current.clone(),
            start: at,
            wall_start: wall,
        };
        let m = Measurement {
            base: self.base,
            current,
            seconds,
            wall_start: unix_seconds(self.wall_start),
            wall_end: unix_seconds(wall),
        };
        Ok((m, next))
    }
}

/// One activity window of `duration` seconds over full snapshots, with
/// statistics enabled only in between. Ctrl-C ends the window early; the
/// rates then cover the shorter window.
pub fn measure(duration: f64) -> Result<Measurement> {
    let interrupt = InterruptGuard::block();
    let window = Window::start(Detail::Full)?;
    crate::trace::ready("stats-window");
    let deadline = window.deadline(duration);
    loop {
        let now = Instant::now();
        if now >= deadline || interrupt.wait(deadline - now) {
            break;
        }
    }
    window.finish()
}

/// One window of a stream, as [`activity_stream`] hands it on.
#[derive(Debug, Clone)]
pub struct StreamWindow {
    pub rows: Vec<ActivityRow>,
    /// Seconds actually measured (shorter than asked when Ctrl-C ended it).
    pub seconds: f64,
    pub wall_start: f64,
    pub wall_end: f64,
    /// Ctrl-C ended this window; it is the last one.
    pub interrupted: bool,
}

/// Back-to-back activity windows of `interval` seconds on one held
/// statistics fd, each handed to `emit` as it ends; `count` 0 runs until
/// Ctrl-C (which ends the current window early, hands it on, and stops) or
/// until `emit` breaks. Pins are read at every window end, so programs
/// pinned meanwhile show their paths.
pub fn activity_stream(
    interval: f64,
    count: u64,
    bpffs: &Path,
    all: bool,
    limit: usize,
    emit: &mut dyn FnMut(StreamWindow) -> ControlFlow<()>,
) -> Result<()> {
    let interrupt = InterruptGuard::block();
    let mut window = Window::start(Detail::Full)?;
    let mut done = 0u64;
    loop {
        crate::trace::ready("stats-window");
        let deadline = window.deadline(interval);
        let mut interrupted = false;
        loop {
            let now = Instant::now();
            if now >= deadline {
                break;
            }
            if interrupt.wait(deadline - now) {
                interrupted = true;
                break;
            }
        }
        done = done.saturating_add(1);
        let last = interrupted || (count > 0 && done >= count);
        let (mut m, next) = if last {
            (window.finish()?, None)
        } else {
            let (m, next) = window.finish_and_continue()?;
            (m, Some(next))
        };
        attach_prog_pins(&mut m.current, bpffs);
        let flow = emit(StreamWindow {
            rows: activity::compute(&m.base, &m.current, all, limit),
            seconds: m.seconds,
            wall_start: m.wall_start,
            wall_end: m.wall_end,
            interrupted,
        });
        match next {
            Some(next) if flow.is_continue() => window = next,
            _ => return Ok(()),
        }
    }
}

/// Activity rows of one [`measure`] window, with pinned paths under
/// `bpffs`, and the measured seconds (`all` and `limit` as in
/// [`activity::compute`]); with `extended`, who holds each program, where
/// it is attached and its memlock.
pub fn activity(
    duration: f64,
    bpffs: impl AsRef<Path>,
    all: bool,
    limit: usize,
    extended: bool,
) -> Result<(Vec<ActivityRow>, f64)> {
    let mut m = measure(duration)?;
    attach_prog_pins(&mut m.current, bpffs);
    if extended {
        ProgContext::read()?.apply(&mut m.current);
    }
    Ok((
        activity::compute(&m.base, &m.current, all, limit),
        m.seconds,
    ))
}

/// One capture in which the first Ctrl-C ends sampling early (the partial
/// profile is reported as usual) and a second one exits with 130.
pub fn capture(req: &profile::Request) -> Result<data::Profile> {
    // Caught from here on, so a Ctrl-C before the watcher runs is not lost.
    let guard = InterruptGuard::block();
    let stop = Arc::new(StopSignal::new());
    let watcher_stop = Arc::clone(&stop);
    // Detached: it lives until the process exits.
    std::thread::spawn(move || loop {
        if guard.wait(Duration::from_secs(3600)) {
            if watcher_stop.is_cancelled() {
                std::process::exit(130);
            }
            watcher_stop.cancel();
        }
    });
    let profile = profile::run(req, &stop, &mut |_| {});
    // The capture is over and the watcher keeps catching Ctrl-C: let the
    // next one end brr at once, as an uncaught SIGINT would.
    stop.cancel();
    profile
}

/// Programs as `brr prog` lists them, in ID order, with their pins; with
/// `stats`, statistics are on while they
/// are read, so the run counters are current; with `extended`, who holds
/// each, where it is attached and the memlock of its maps.
pub fn programs(stats: bool, extended: bool, bpffs: impl AsRef<Path>) -> Result<Vec<Program>> {
    let mut out = Vec::new();
    programs_each(stats, extended, bpffs, |p| {
        out.push(p);
        Ok(())
    })?;
    Ok(out)
}

/// [`programs`] one at a time, each handed to `each` as soon as it is
/// read, so that a listing holds one program at a time. What a row needs
/// from other objects is read first and kept small: pins, and with
/// `extended` each map's memlock, how many programs use each map (one
/// brief pass over the programs), the links and the owner scan.
pub fn programs_each(
    stats: bool,
    extended: bool,
    bpffs: impl AsRef<Path>,
    mut each: impl FnMut(Program) -> Result<()>,
) -> Result<()> {
    let _stats = stats.then(StatsGuard::enable).transpose()?;
    let pins = bpffs::scan(bpffs);
    // Maps' memlock and users take a walk over every map and program
    // before the rows: `-x` work, like the owner scan.
    let context = if extended {
        let mut memlock: HashMap<u32, Option<u64>> = HashMap::new();
        objects::MapReader::new().each(|m| {
            memlock.insert(m.id, m.memlock_bytes);
            Ok(())
        })?;
        let mut users: HashMap<u32, u32> = HashMap::new();
        objects::program_maps_each(|_, mut ids| {
            ids.sort_unstable();
            ids.dedup();
            for id in ids {
                *users.entry(id).or_default() += 1;
            }
            Ok(())
        })?;
        Some((memlock, users, objects::links()?, owners::scan()))
    } else {
        None
    };
    objects::ProgramReader::new(true).each(|mut p| {
        p.pinned_paths = pins.for_prog(p.id);
        if let Some((memlock, users, links, owners)) = &context {
            add_map_memlock(&mut p, memlock, users);
            add_prog_keepers(std::slice::from_mut(&mut p), links, owners);
        }
        each(p)
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
fn add_map_memlock(
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

/// Maps as `brr map` lists them, with their pins; with `extended`, who
/// holds each (a process, else the first program using it).
pub fn maps(extended: bool, bpffs: impl AsRef<Path>) -> Result<Vec<Map>> {
    let mut out = Vec::new();
    maps_each(extended, bpffs, |m| {
        out.push(m);
        Ok(())
    })?;
    Ok(out)
}

/// [`maps`] one at a time, in ID order.
pub fn maps_each(
    extended: bool,
    bpffs: impl AsRef<Path>,
    mut each: impl FnMut(Map) -> Result<()>,
) -> Result<()> {
    let pins = bpffs::scan(bpffs);
    let keepers = if extended {
        let mut user: HashMap<u32, u32> = HashMap::new();
        objects::program_maps_each(|prog, ids| {
            for id in ids {
                user.entry(id).or_insert(prog);
            }
            Ok(())
        })?;
        Some((user, owners::scan()))
    } else {
        None
    };
    objects::MapReader::new().each(|mut m| {
        m.pinned_paths = pins.for_map(m.id);
        if let Some((user, owners)) = &keepers {
            m.keepers = Some(Keepers {
                owners: owners.of(HeldKind::Map, m.id).to_vec(),
                held_by: user.get(&m.id).map(|&id| Holder::Prog(id)),
            });
        }
        each(m)
    })
}

/// Links as `brr link` lists them, with their pins; with `extended`, who
/// holds each.
pub fn links(extended: bool, bpffs: impl AsRef<Path>) -> Result<Vec<Link>> {
    let mut out = Vec::new();
    links_each(extended, bpffs, |l| {
        out.push(l);
        Ok(())
    })?;
    Ok(out)
}

/// [`links`] one at a time, in ID order.
pub fn links_each(
    extended: bool,
    bpffs: impl AsRef<Path>,
    mut each: impl FnMut(Link) -> Result<()>,
) -> Result<()> {
    let pins = bpffs::scan(bpffs);
    let owners = extended.then(owners::scan);
    objects::LinkReader::new().each(|mut l| {
        l.pinned_paths = pins.for_link(l.id);
        if let Some(owners) = &owners {
            l.keepers = Some(Keepers {
                owners: owners.of(HeldKind::Link, l.id).to_vec(),
                held_by: None,
            });
        }
        each(l)
    })
}

/// The signals that end the interactive view: SIGINT (`kill -INT`; in raw
/// mode Ctrl-C is a key), SIGTERM and SIGHUP (a closed terminal).
pub struct Terminations(());

impl Terminations {
    /// Catch the terminating signals from now on; they no longer kill the
    /// process, so the caller must act on [`Terminations::wait`].
    pub fn catch() -> Result<Terminations> {
        crate::sys::signal::block_terminating();
        Ok(Terminations(()))
    }

    /// Block until one of the signals arrives; returns its number.
    pub fn wait(&mut self) -> i32 {
        crate::sys::signal::wait_terminating()
    }
}

pub fn attach_prog_pins(progs: &mut [Program], root: impl AsRef<Path>) {
    let pins = bpffs::scan(root);
    for p in progs {
        p.pinned_paths = pins.for_prog(p.id);
    }
}

pub fn attach_map_pins(maps: &mut [Map], root: impl AsRef<Path>) {
    let pins = bpffs::scan(root);
    for m in maps {
        m.pinned_paths = pins.for_map(m.id);
    }
}

pub fn attach_link_pins(links: &mut [Link], root: impl AsRef<Path>) {
    let pins = bpffs::scan(root);
    for l in links {
        l.pinned_paths = pins.for_link(l.id);
    }
}

/// The `--devmode` tree: DIR (normalised) or, for a bare flag (an empty
/// path), the current directory. Returns the tree and whether the flag was
/// bare.
pub fn devmode_tree(dir: impl AsRef<Path>) -> (SourceTree, bool) {
    let dir = dir.as_ref();
    if dir.as_os_str().is_empty() {
        let cwd = std::env::current_dir().unwrap_or_else(|_| ".".into());
        (SourceTree::new(cwd), true)
    } else {
        (SourceTree::new(bpffs::normalise(dir)), false)
    }
}

/// `--devmode` source context of a program image: its mapped lines in
/// instruction order with context lines from the resolved files.
pub fn image_context(image: &lines::ProgramImage, tree: &mut SourceTree) -> source::DumpContext {
    let slots = insn::slots(&image.xlated);
    let rec = insn::match_lines(slots.len(), &image.lines);
    source::dump_context(
        rec.iter().map(|r| {
            let r = r.map(|i| &image.lines[i]);
            (
                r.and_then(|r| r.file.as_deref()),
                r.and_then(|r| r.line),
                r.and_then(|r| r.source.as_deref()),
            )
        }),
        tree,
    )
}

/// `brr dump --devmode`: the directory searched and the program's source
/// context. A bare flag that resolves no file at all is an error, since the
/// current directory was only a guess.
pub fn dump_devmode(
    image: &lines::ProgramImage,
    dir: impl AsRef<Path>,
) -> Result<(String, source::DumpContext)> {
    let (mut tree, bare) = devmode_tree(dir);
    let ctx = image_context(image, &mut tree);
    if bare && !ctx.any_resolved {
        return Err(BrrError::Failed(DEVMODE_NOTHING.to_string()));
    }
    Ok((tree.dir().to_string_lossy().into_owned(), ctx))
}

/// `brr profile --devmode`: source context for the programs the report
/// lists (`limit` as in the report) that still exist.
pub fn profile_contexts(
    prof: &data::Profile,
    limit: usize,
    dir: impl AsRef<Path>,
) -> SourceContexts {
    let (mut tree, _) = devmode_tree(dir);
    let by_program = aggregate::listed(prof, limit)
        .into_iter()
        .filter_map(|p| {
            let image = lines::image_by_id(p.id as u64).ok()?;
            Some((p.id, image_context(&image, &mut tree)))
        })
        .collect();
    SourceContexts {
        devdir: tree.dir().to_string_lossy().into_owned(),
        by_program,
    }
}

/// `brr dump-compare`: brr's instruction-to-line mapping of a program
/// against bpftool's text and JSON dumps of it.
pub fn compare_with_bpftool(prog_id: u32) -> Result<compare::Comparison> {
    let prog_id = u64::from(prog_id);
    let image = lines::image_by_id(prog_id)?;
    let json = crate::bpftool::dump_json(prog_id)?;
    let text = crate::bpftool::dump_text(prog_id)?;
    if json.len() != text.len() {
        return Err(BrrError::Failed(format!(
            "bpftool dump returned inconsistent text and JSON instruction counts ({} text, {} JSON)",
            text.len(),
            json.len()
        )));
    }
    let rows: Vec<ToolRow> = text
        .into_iter()
        .zip(json)
        .map(|(index, e)| ToolRow {
            index,
            file: e.file,
            line: e.line_num,
            column: e.line_col,
            source: e.src,
        })
        .collect();
    Ok(compare::compare(
        image.program.id,
        &insn::slots(&image.xlated),
        &image.lines,
        &rows,
    ))
}

/// The engine's result for one program, cut by `line_limit` in the
/// profiler's order, as the drilldown's plain input.
pub fn drilldown_input(prof: &data::Profile, id: u32, line_limit: usize) -> ProfileInput {
    let program = prof.program(id).map(|p| {
        let view = aggregate::ProgramView::new(p, line_limit);
        DrillProfile {
            samples: p.samples,
            kernel_samples: p.kernel_samples,
            inclusive_samples: p.inclusive_samples(),
            inclusive_cpu_percent: prof.cpu_percent(p.inclusive_samples()),
            direct_source_unmapped_samples: p.direct_source_unmapped_samples,
            under_bpf_caller_source_unmapped_samples: p.under_bpf_caller_source_unmapped_samples,
            direct_hotspot_samples_omitted_by_limit: view.direct_omitted,
            under_bpf_hotspot_samples_omitted_by_limit: view.kernel_omitted,
            under_bpf_function_samples_omitted_by_limit: view.groups_omitted,
            unaccounted_samples: 0,
            hotspots: view.hotspots.clone(),
            kernel_ips: view
                .kernel
                .iter()
                .map(|k| KernelRow {
                    row: k.clone(),
                    ip_count: 1,
                })
                .collect(),
            kernel_functions: view.groups.clone(),
        }
    });
    ProfileInput {
        program,
        line_limit,
        warnings: prof.telemetry.warnings.clone(),
        incomplete: prof.telemetry.incomplete,
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

    fn kh(samples: u64, sym: &str, off: u64, line: u32) -> data::KernelHotspot {
        data::KernelHotspot {
            samples,
            ip: 0x1000 + off,
            symbol: Some(sym.into()),
            symbol_offset: Some(off),
            kind: "kernel",
            bpf_file: Some("/p.c".into()),
            bpf_line: Some(line),
            caller_mapped: true,
            ..Default::default()
        }
    }

    #[test]
    fn engine_result_to_drilldown_input() {
        let hs = |samples, line| data::Hotspot {
            samples,
            jited_address: Some(0x10),
            instruction_offset: Some(8),
            file: Some("/p.c".into()),
            line: Some(line),
            ..Default::default()
        };
        let prof = data::Profile {
            duration: 2.0,
            frequency: 100,
            programs: vec![data::ProgramProfile {
                id: 9,
                samples: 10,
                kernel_samples: 6,
                hotspots: vec![hs(1, 3), hs(7, 4), hs(2, 5)],
                kernel_hotspots: vec![
                    kh(3, "memcmp", 4, 4),
                    kh(2, "memcmp", 8, 4),
                    kh(1, "a", 0, 5),
                ],
                ..Default::default()
            }],
            telemetry: data::Telemetry {
                warnings: vec!["w".into()],
                incomplete: true,
                ..Default::default()
            },
            ..Default::default()
        };
        let input = drilldown_input(&prof, 9, 1);
        let p = input.program.unwrap();
        assert_eq!(
            (p.samples, p.kernel_samples, p.inclusive_samples),
            (10, 6, 16)
        );
        assert_eq!(p.inclusive_cpu_percent, 8.0);
        // The line limit keeps the hottest row of each list.
        assert_eq!(p.hotspots.len(), 1);
        assert_eq!(p.hotspots[0].samples, 7);
        assert_eq!(p.direct_hotspot_samples_omitted_by_limit, 3);
        assert_eq!(p.kernel_ips.len(), 1);
        assert_eq!(p.under_bpf_hotspot_samples_omitted_by_limit, 3);
        assert_eq!(p.kernel_functions[0].ip_count, 2);
        assert_eq!(p.kernel_functions[0].samples, 5);
        assert_eq!(p.under_bpf_function_samples_omitted_by_limit, 1);
        assert_eq!((input.line_limit, input.incomplete), (1, true));
        assert!(drilldown_input(&prof, 8, 1).program.is_none());
    }

    #[test]
    fn waits_are_always_addable() {
        assert_eq!(wait_for(1.5), Duration::from_millis(1500));
        assert_eq!(wait_for(-1.0), Duration::ZERO);
        assert_eq!(wait_for(f64::NAN), Duration::ZERO);
        assert_eq!(wait_for(f64::INFINITY), Duration::from_secs(1_000_000_000));
        let _ = Instant::now() + wait_for(f64::MAX);
    }

    #[test]
    fn bare_devmode_is_the_current_directory() {
        let (tree, bare) = devmode_tree("");
        assert!(bare);
        assert_eq!(tree.dir(), std::env::current_dir().unwrap().as_path());
        let (tree, bare) = devmode_tree("src//tui/");
        assert!(!bare);
        assert_eq!(tree.dir(), Path::new("src/tui"));
    }
}
