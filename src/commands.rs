//! Dispatch: each subcommand collects through the kernel, session and
//! analysis layers and renders the result to a string.

use std::io::Write;
use std::ops::ControlFlow;

use crate::cli::{Cli, Command, ProfileArgs};
use crate::error::{BrrError, Result};
use crate::inspect::native;
use crate::kernel::kallsyms::Kallsyms;
use crate::kernel::lines;
use crate::profile::{self, events};
use crate::render::json::Json;
use crate::render::listing::{self, ActivityRun, ListingKind, RowWriter};
use crate::render::{dump, perf_events, profile as report, Format};
use crate::session;

/// What to say on stderr before any command runs (the parser reads no
/// files): a `--bpffs` directory that is not on a bpffs.
pub fn bpffs_warning(cli: &Cli) -> Option<String> {
    session::bpffs_warning(&cli.bpffs)
}

/// Run a parsed command; returns stdout text (without the final newline)
/// and the exit status.
pub fn run(cli: &Cli) -> Result<(String, i32)> {
    session::set_kubelet_logs(&cli.kubelet_logs);
    let out = match &cli.command {
        Command::Prog { stats } => {
            let fields = listing::program_fields(cli.format, cli.extended);
            let progs = session::programs(*stats, fields, &cli.bpffs)?;
            listing::programs(&progs, cli.format, *stats, cli.extended)
        }
        Command::Map => {
            let fields = listing::map_fields(cli.format, cli.extended);
            let maps = session::maps(fields, &cli.bpffs)?;
            listing::maps(&maps, cli.format, cli.extended)
        }
        Command::Link => {
            let fields = listing::link_fields(cli.format, cli.extended);
            let links = session::links(fields, &cli.bpffs)?;
            listing::links(&links, cli.format, cli.extended)
        }
        Command::Btf => listing::btfs(&session::btfs(cli.extended)?, cli.format, cli.extended),
        Command::PerfEvents { frequency } => {
            perf_events::render(&events::listing(*frequency)?, cli.format)
        }
        Command::Profile(args) => return run_profile(cli, args),
        Command::Activity {
            duration,
            limit,
            all,
            ..
        } => {
            let fields = listing::activity_fields(cli.format, cli.extended);
            let (rows, measured) =
                session::activity_with(*duration, &cli.bpffs, *all, *limit, fields)?;
            let run = ActivityRun {
                duration: *duration,
                measured,
                limit: *limit,
                all: *all,
                window: None,
            };
            listing::activity(&rows, run, cli.format, cli.cumulative, cli.extended)
        }
        Command::Dump {
            prog_id,
            devmode,
            jited,
        } => {
            let id = u64::from(*prog_id);
            let mut image = if *jited {
                // The translated listing prints only in JSON; --devmode
                // reads it for the source context (which CSV has not).
                let xlated = match cli.format {
                    Format::Json { .. } => true,
                    Format::Text => devmode.is_some(),
                    Format::Csv => false,
                };
                lines::jited_image_by_id(id, xlated)?
            } else {
                lines::image_by_id(id)?
            };
            let native = jited
                .then(|| {
                    native::build(
                        &image,
                        native::Arch::host(),
                        lines::kptr_restrict(),
                        Kallsyms::load,
                    )
                })
                .transpose()?;
            session::attach_prog_pins(std::slice::from_mut(&mut image.program), &cli.bpffs);
            // CSV has no source context.
            let dev = devmode
                .as_deref()
                .filter(|_| cli.format != Format::Csv)
                .map(|dir| session::dump_devmode(&image, dir))
                .transpose()?;
            let dev = dev.as_ref().map(|(devdir, context)| dump::DumpDevmode {
                devdir: devdir.clone(),
                context,
            });
            // --jited text and CSV list only the native code.
            let names = (native.is_none() || matches!(cli.format, Format::Json { .. }))
                .then(|| session::call_names(&image));
            let calls = dump::Calls {
                names: names.as_ref(),
                kptr_restrict: lines::kptr_restrict(),
            };
            dump::dump(&image, cli.format, dev.as_ref(), native.as_ref(), &calls)
        }
        Command::DumpCompare { prog_id } => {
            let c = session::compare_with_bpftool(*prog_id)?;
            let code = if c.passed() { 0 } else { 1 };
            return Ok((dump::compare(&c, cli.format), code));
        }
        Command::Top(t) => return crate::top::run(cli, t),
        Command::Doctor => crate::render::doctor::render(&crate::doctor::examine(), cli.format),
        // Served by `stream`; reaching here is a dispatch mistake, not input.
        Command::Exporter { .. } => {
            return Err(crate::error::BrrError::Failed(
                "the exporter writes no output of its own".into(),
            ))
        }
    };
    Ok((out, 0))
}

/// How a command that writes its output as it goes ended.
#[derive(Debug)]
pub enum Streamed {
    /// Everything was written; exit with this status.
    Done(i32),
    /// A write to the output failed; the caller reports it as for any
    /// output (a closed pipe quietly).
    WriteFailed(std::io::Error),
}

/// Run `cli` if it is a command that writes while it runs (`activity
/// --interval`, and `prog`, `map`, `link` in JSON or CSV); None for every
/// other command, which [`run`] handles.
pub fn stream(cli: &Cli, out: &mut dyn Write) -> Option<Result<Streamed>> {
    session::set_kubelet_logs(&cli.kubelet_logs);
    let listing = match &cli.command {
        _ if cli.format == Format::Text => None,
        Command::Prog { .. } => Some(ListingKind::Programs),
        Command::Map => Some(ListingKind::Maps),
        Command::Link => Some(ListingKind::Links),
        _ => None,
    };
    if let Some(kind) = listing {
        return Some(listing_stream(cli, kind, out));
    }
    match &cli.command {
        Command::Activity {
            limit,
            all,
            interval: Some(interval),
            count,
            ..
        } => Some(activity_stream(cli, *interval, *count, *limit, *all, out)),
        Command::Exporter {
            listen,
            stats,
            profiles,
        } => Some(
            crate::serve::run(crate::serve::ExporterConfig {
                listen: *listen,
                stats: *stats,
                profiles: *profiles,
                bpffs: cli.bpffs.clone(),
            })
            .map(|()| Streamed::Done(0)),
        ),
        _ => None,
    }
}

fn activity_stream(
    cli: &Cli,
    interval: f64,
    count: u64,
    limit: usize,
    all: bool,
    out: &mut dyn Write,
) -> Result<Streamed> {
    let mut first = true;
    let mut failed = None;
    let fields = listing::activity_fields(cli.format, cli.extended);
    session::activity_stream(interval, count, &cli.bpffs, all, limit, fields, &mut |w| {
        let run = ActivityRun {
            duration: interval,
            measured: w.seconds,
            limit,
            all,
            window: Some((w.wall_start, w.wall_end)),
        };
        let chunk = listing::activity_window(
            &w.rows,
            run,
            cli.format,
            cli.cumulative,
            cli.extended,
            first,
        );
        first = false;
        match out.write_all(chunk.as_bytes()).and_then(|()| out.flush()) {
            Ok(()) => ControlFlow::Continue(()),
            Err(e) => {
                failed = Some(e);
                ControlFlow::Break(())
            }
        }
    })?;
    Ok(match failed {
        Some(e) => Streamed::WriteFailed(e),
        None => Streamed::Done(0),
    })
}

/// `prog`, `map` and `link` in JSON or CSV, written to `out` row by row as
/// the objects are read, so that memory does not grow with their number
/// (text needs every row for its column widths and goes through [`run`]).
/// A failed write stops the walk there.
fn listing_stream(cli: &Cli, kind: ListingKind, out: &mut dyn Write) -> Result<Streamed> {
    let x = cli.extended;
    let mut buf = std::io::BufWriter::with_capacity(64 * 1024, out);
    let Some(mut w) = RowWriter::new(&mut buf, cli.format, kind, x) else {
        return Err(BrrError::Failed("text listings are not streamed".into()));
    };
    let csv = w.csv();
    let mut failed = None;
    let walked = {
        let mut put = |item: Vec<(&'static str, Json)>| match w.row_fields(item) {
            Ok(()) => Ok(()),
            Err(e) => {
                failed = Some(e);
                // Ends the walk; `failed` says why.
                Err(BrrError::Failed(String::new()))
            }
        };
        let format = cli.format;
        match &cli.command {
            Command::Prog { stats } => {
                let fields = listing::program_fields(format, x);
                session::programs_each(*stats, fields, &cli.bpffs, |p| {
                    put(listing::program_items(&p, x, csv))
                })
            }
            Command::Map => {
                let fields = listing::map_fields(format, x);
                session::maps_each(fields, &cli.bpffs, |m| put(listing::map_items(&m, x, csv)))
            }
            _ => {
                let fields = listing::link_fields(format, x);
                session::links_each(fields, &cli.bpffs, |l| put(listing::link_items(&l, x, csv)))
            }
        }
    };
    if let Some(e) = failed {
        return Ok(Streamed::WriteFailed(e));
    }
    walked?;
    let end = w
        .finish()
        .and_then(|()| buf.write_all(b"\n"))
        .and_then(|()| buf.flush());
    Ok(match end {
        Ok(()) => Streamed::Done(0),
        Err(e) => Streamed::WriteFailed(e),
    })
}

/// `brr profile`: capture, render, and exit 1 with `--fail-on-loss` when
/// the capture was incomplete. The first Ctrl-C ends the capture early and
/// the partial profile is printed as usual; a second one exits with 130.
fn run_profile(cli: &Cli, a: &ProfileArgs) -> Result<(String, i32)> {
    let profile = session::capture(&a.request)?;
    // Containers and pods named once, for the report and the pprof labels.
    let workloads = session::workloads(&profile);
    let folded = crate::export::write_with(&profile, &a.exports, &workloads)?;
    let code = if a.fail_on_loss && profile.telemetry.incomplete {
        1
    } else {
        0
    };
    if let Some(text) = folded {
        return Ok((text.trim_end_matches('\n').to_string(), code));
    }
    let opts = profile::report::ReportOptions {
        limit: a.limit,
        line_limit: a.line_limit,
    };
    // Text prints only the --line-limit rows of each table.
    let native = match (a.annotate, cli.format) {
        (false, _) => session::Native::Off,
        (true, Format::Text) => session::Native::Table,
        (true, _) => session::Native::Every,
    };
    let built = session::report(&profile, &opts, &workloads, native);
    let view = report::View {
        wide: a.wide,
        extended: cli.extended,
        kernel_ip_detail: a.kernel_ip_detail,
        format: cli.format,
    };
    // CSV has no source context.
    let contexts = a
        .devmode
        .as_deref()
        .filter(|_| cli.format != Format::Csv)
        .map(|dir| session::profile_contexts(&built, dir));
    let text = report::render(&built, &view, contexts.as_ref());
    // brr exits once this is printed, and the kernel takes the memory
    // back at once: freeing the profile's stacks and the report's rows one
    // by one (thousands with --annotate) would only add to what brr costs.
    std::mem::forget((profile, built));
    Ok((text, code))
}
