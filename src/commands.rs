//! One function per subcommand: collect from the kernel, render to a string.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::activity;
use crate::cli::{Cli, Command, ProfileArgs};
use crate::error::{BrrError, Result};
use crate::inspect::compare::{self, ToolRow};
use crate::inspect::drilldown::DEVMODE_NOTHING;
use crate::inspect::insn;
use crate::inspect::source::{self, SourceTree};
use crate::kernel::{bpffs, lines, objects, stats::StatsGuard};
use crate::model::Program;
use crate::profile::{self, aggregate, capture::StopSignal, events};
use crate::render::listing::{self, ActivityRun};
use crate::render::{dump, perf_events, profile as report, Format};
use crate::sys::signal::InterruptGuard;

/// Run a parsed command; returns stdout text (without the final newline)
/// and the exit status.
pub fn run(cli: &Cli) -> Result<(String, i32)> {
    let out = match &cli.command {
        Command::Prog { stats } => {
            let mut progs = {
                let _stats = if *stats {
                    Some(StatsGuard::enable()?)
                } else {
                    None
                };
                objects::programs()?
            };
            attach_prog_pins(&mut progs, &cli.bpffs);
            listing::programs(&progs, cli.format, *stats, cli.extended)
        }
        Command::Map => {
            let pins = bpffs::scan(&cli.bpffs);
            let mut maps = objects::maps()?;
            for m in &mut maps {
                m.pinned_paths = pins.for_map(m.id);
            }
            listing::maps(&maps, cli.format, cli.extended)
        }
        Command::Link => {
            let pins = bpffs::scan(&cli.bpffs);
            let mut links = objects::links()?;
            for l in &mut links {
                l.pinned_paths = pins.for_link(l.id);
            }
            listing::links(&links, cli.format, cli.extended)
        }
        Command::Btf => listing::btfs(&objects::btfs()?, cli.format),
        Command::PerfEvents { frequency } => {
            perf_events::render(&events::listing(*frequency)?, cli.format)
        }
        Command::Profile(args) => return run_profile(cli, args),
        Command::Activity {
            duration,
            limit,
            all,
        } => {
            let (base, mut current, measured) = measure_window(*duration)?;
            attach_prog_pins(&mut current, &cli.bpffs);
            let rows = activity::compute(&base, &current, *all, *limit);
            let run = ActivityRun {
                duration: *duration,
                measured,
                limit: *limit,
                all: *all,
            };
            listing::activity(&rows, run, cli.format, cli.cumulative, cli.extended)
        }
        Command::Dump { prog_id, devmode } => {
            let mut image = lines::image_by_id(*prog_id)?;
            image.program.pinned_paths = bpffs::scan(&cli.bpffs).for_prog(image.program.id);
            match devmode.as_deref().filter(|_| cli.format != Format::Csv) {
                None => dump::dump(&image, cli.format, None),
                Some(dir) => {
                    let (mut tree, bare) = devmode_tree(dir);
                    let ctx = image_context(&image, &mut tree);
                    if bare && !ctx.any_resolved {
                        return Err(BrrError::Failed(DEVMODE_NOTHING.to_string()));
                    }
                    let dev = dump::DumpDevmode {
                        devdir: tree.dir().to_string_lossy().into_owned(),
                        context: &ctx,
                    };
                    dump::dump(&image, cli.format, Some(&dev))
                }
            }
        }
        Command::DumpCompare { prog_id } => {
            let image = lines::image_by_id(*prog_id)?;
            let json = crate::bpftool::dump_json(*prog_id)?;
            let text = crate::bpftool::dump_text(*prog_id)?;
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
            let c = compare::compare(
                image.program.id,
                &insn::slots(&image.xlated),
                &image.lines,
                &rows,
            );
            let code = if c.passed() { 0 } else { 1 };
            return Ok((dump::compare(&c, cli.format), code));
        }
        Command::Top(t) => return crate::top::run(cli, t),
    };
    Ok((out, 0))
}

/// `--devmode` source context of a program image: its mapped lines in
/// instruction order with context lines from the resolved files.
fn image_context(image: &lines::ProgramImage, tree: &mut SourceTree) -> source::DumpContext {
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

/// The `--devmode` tree: DIR (normalised) or, for a bare flag, the current
/// directory. Returns the tree and whether the flag was bare.
pub fn devmode_tree(dir: &str) -> (SourceTree, bool) {
    if dir.is_empty() {
        let cwd = std::env::current_dir().unwrap_or_else(|_| ".".into());
        (SourceTree::new(cwd), true)
    } else {
        (SourceTree::new(bpffs::normalise(dir)), false)
    }
}

/// `brr profile`: capture, render, and exit 1 with `--fail-on-loss` when
/// the capture was incomplete. The first Ctrl-C ends the capture early and
/// the partial profile is printed as usual; a second one exits with 130.
fn run_profile(cli: &Cli, a: &ProfileArgs) -> Result<(String, i32)> {
    let req = profile::Request {
        event: a.event.clone(),
        duration: a.duration,
        frequency: a.frequency,
        kernel_samples: a.kernel_samples,
        call_graph: a.call_graph,
        pages: a.perf_buffer_pages,
        drain_ms: a.perf_drain_ms,
        program_id: a.program_id,
        bpffs: cli.bpffs.clone(),
    };
    let profile = capture(&req)?;
    let view = report::View {
        limit: a.limit,
        line_limit: a.line_limit,
        wide: a.wide,
        extended: cli.extended,
        kernel_ip_detail: a.kernel_ip_detail,
        format: cli.format,
    };
    let code = if a.fail_on_loss && profile.telemetry.incomplete {
        1
    } else {
        0
    };
    // Source context for the listed programs that still exist (CSV has none).
    let contexts = a
        .devmode
        .as_deref()
        .filter(|_| cli.format != Format::Csv)
        .map(|dir| {
            let (mut tree, _) = devmode_tree(dir);
            let by_program = aggregate::listed(&profile, a.limit)
                .into_iter()
                .filter_map(|p| {
                    let image = lines::image_by_id(p.id as u64).ok()?;
                    Some((p.id, image_context(&image, &mut tree)))
                })
                .collect();
            report::SourceContexts {
                devdir: tree.dir().to_string_lossy().into_owned(),
                by_program,
            }
        });
    Ok((report::render(&profile, &view, contexts.as_ref()), code))
}

/// One capture in which the first Ctrl-C ends sampling early (the partial
/// profile is reported as usual) and a second one exits with 130.
pub fn capture(req: &profile::Request) -> Result<crate::model::profile::Profile> {
    // Blocked here, before any capture thread exists, so every thread
    // inherits the mask and only the watcher below ever receives SIGINT.
    let _blocked = InterruptGuard::block();
    let stop = Arc::new(StopSignal::new());
    let watcher_stop = Arc::clone(&stop);
    // Detached: it lives until the process exits.
    std::thread::spawn(move || {
        let guard = InterruptGuard::block();
        loop {
            if guard.wait(Duration::from_secs(3600)) {
                if watcher_stop.is_cancelled() {
                    std::process::exit(130);
                }
                watcher_stop.cancel();
            }
        }
    });
    profile::run(req, &stop, &mut |_| {})
}

pub fn attach_prog_pins(progs: &mut [Program], root: &str) {
    let pins = bpffs::scan(root);
    for p in progs {
        p.pinned_paths = pins.for_prog(p.id);
    }
}

/// Two program snapshots `duration` seconds apart with statistics enabled
/// only in between. Returns both and the measured window in seconds: the
/// time between the starts of the two enumerations. Ctrl-C ends the window
/// early; the rates then cover the shorter window.
pub fn measure_window(duration: f64) -> Result<(Vec<Program>, Vec<Program>, f64)> {
    let interrupt = InterruptGuard::block();
    let stats = StatsGuard::enable()?;
    let start = Instant::now();
    let base = objects::programs()?;
    crate::trace::ready("stats-window");
    let deadline = start + Duration::from_secs_f64(duration.min(1e9));
    loop {
        let now = Instant::now();
        if now >= deadline || interrupt.wait(deadline - now) {
            break;
        }
    }
    let measured = start.elapsed().as_secs_f64();
    let current = objects::programs()?;
    drop(stats);
    Ok((base, current, measured))
}
