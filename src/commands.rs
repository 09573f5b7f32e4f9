//! One function per subcommand: collect from the kernel, render to a string.

use crate::activity;
use crate::cli::{Cli, Command, ProfileArgs};
use crate::error::{BrrError, Result};
use crate::inspect::compare::{self, ToolRow};
use crate::inspect::drilldown::DEVMODE_NOTHING;
use crate::inspect::insn;
use crate::kernel::{bpffs, lines, objects, stats::StatsGuard};
use crate::profile::{self, events, report};
use crate::render::listing::{self, ActivityRun};
use crate::render::{dump, Format};
use crate::session;

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
            session::attach_prog_pins(&mut progs, &cli.bpffs);
            listing::programs(&progs, cli.format, *stats, cli.extended)
        }
        Command::Map => {
            let mut maps = objects::maps()?;
            session::attach_map_pins(&mut maps, &cli.bpffs);
            listing::maps(&maps, cli.format, cli.extended)
        }
        Command::Link => {
            let mut links = objects::links()?;
            session::attach_link_pins(&mut links, &cli.bpffs);
            listing::links(&links, cli.format, cli.extended)
        }
        Command::Btf => listing::btfs(&objects::btfs()?, cli.format),
        Command::PerfEvents { frequency } => events::perf_events(*frequency, cli.format)?,
        Command::Profile(args) => return run_profile(cli, args),
        Command::Activity {
            duration,
            limit,
            all,
        } => {
            let mut window = session::measure(*duration)?;
            session::attach_prog_pins(&mut window.current, &cli.bpffs);
            let rows = activity::compute(&window.base, &window.current, *all, *limit);
            let run = ActivityRun {
                duration: *duration,
                measured: window.seconds,
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
                    let (mut tree, bare) = session::devmode_tree(dir);
                    let ctx = session::image_context(&image, &mut tree);
                    if bare && !ctx.any_resolved {
                        return Err(BrrError::Failed(DEVMODE_NOTHING.to_string()));
                    }
                    let dev = dump::Devmode {
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
    let profile = session::capture(&req)?;
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
            let (mut tree, _) = session::devmode_tree(dir);
            let by_program = report::listed(&profile, a.limit)
                .into_iter()
                .filter_map(|p| {
                    let image = lines::image_by_id(p.id as u64).ok()?;
                    Some((p.id, session::image_context(&image, &mut tree)))
                })
                .collect();
            report::SourceContexts {
                devdir: tree.dir().to_string_lossy().into_owned(),
                by_program,
            }
        });
    Ok((report::render(&profile, &view, contexts.as_ref()), code))
}
