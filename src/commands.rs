//! Dispatch: each subcommand asks the collector (`session`) and the
//! analysis layers, renders the result and writes it to the output it is
//! given.

use std::io::Write;
use std::ops::ControlFlow;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use crate::cli::{Cli, Command, ProfileArgs};
use crate::error::{BrrError, Result};
use crate::profile::{self, events};
use crate::render::json::Json;
use crate::render::listing::{self, ActivityRun, ListingKind, RowWriter};
use crate::render::{dump, perf_events, profile as report, Format};
use crate::session::{self, Collector};

/// What to say on stderr before any command runs (the parser reads no
/// files): a `--bpffs` directory that is not on a bpffs.
pub fn bpffs_warning(cli: &Cli) -> Option<String> {
    session::bpffs_warning(&cli.bpffs)
}

/// Run a parsed command, writing its output to `out` (as it goes for the
/// commands that stream, else once it is done, with one final newline),
/// with one [`Collector`] built from the command line.
pub fn run(cli: &Cli, out: &mut dyn Write) -> Result<Streamed> {
    let collector = Arc::new(Collector::new(&cli.bpffs, &cli.kubelet_logs));
    run_on(cli, &collector, out)
}

/// [`run`] with the collector `c`.
fn run_on(cli: &Cli, c: &Arc<Collector>, out: &mut dyn Write) -> Result<Streamed> {
    let x = cli.extended;
    if let Some(kind) = streamed_listing(cli) {
        return listing_stream(cli, c, kind, out);
    }
    let text = match &cli.command {
        Command::Prog { stats } => {
            let progs = c.programs(*stats, listing::program_fields(cli.format, x))?;
            listing::programs(&progs, cli.format, *stats, x)
        }
        Command::Map => {
            let maps = c.maps(listing::map_fields(cli.format, x))?;
            listing::maps(&maps, cli.format, x)
        }
        Command::Link => {
            let links = c.links(listing::link_fields(cli.format, x))?;
            listing::links(&links, cli.format, x)
        }
        Command::Btf => listing::btfs(&session::btfs(x)?, cli.format, x),
        Command::PerfEvents { frequency } => {
            perf_events::render(&events::listing(*frequency)?, cli.format)
        }
        Command::Activity {
            limit,
            all,
            interval: Some(interval),
            count,
            ..
        } => return activity_stream(cli, c, *interval, *count, *limit, *all, out),
        Command::Activity {
            duration,
            limit,
            all,
            ..
        } => activity(cli, c, *duration, *limit, *all)?,
        Command::Dump {
            prog_id,
            devmode,
            jited,
        } => dump(cli, c, *prog_id, devmode.as_deref(), *jited)?,
        Command::Doctor => crate::render::doctor::render(&crate::doctor::examine(), cli.format),
        Command::ManPages { dir, pages } => write_pages(dir, pages)?,
        Command::Exporter {
            listen,
            stats,
            profiles,
            web_config,
            auth_scope,
        } => {
            let config = crate::serve::ExporterConfig {
                listen: *listen,
                stats: *stats,
                profiles: *profiles,
                web_config: web_config.clone(),
                auth_scope: *auth_scope,
            };
            return exporter(config, c);
        }
        // These three say their own exit status.
        Command::Profile(args) => return written(out, run_profile(cli, args, c)?),
        Command::Cost { request } => {
            crate::render::cost::render(&session::cost::cost(request.clone(), c)?, cli.format)
        }
        Command::DumpCompare { prog_id } => return written(out, dump_compare(cli, *prog_id)?),
        Command::Top(t) => return written(out, crate::top::run(cli, t, c)?),
        Command::Mcp(mode) => return mcp(mode, c),
        Command::ServeMcp(config) => {
            crate::mcp::serve(config, Arc::new(Answers::new(Arc::clone(c))))?;
            return Ok(Streamed::Done(0));
        }
    };
    Ok(print(out, &text, 0))
}

/// How a command ended, its output written.
#[derive(Debug)]
pub enum Streamed {
    /// Everything was written; exit with this status.
    Done(i32),
    /// A write to the output failed (the command's status beside it); the
    /// caller reports it as for any output (a closed pipe quietly).
    WriteFailed(std::io::Error, i32),
}

/// `brr dump-compare`: the comparison, and exit 1 when it failed.
fn dump_compare(cli: &Cli, prog_id: u32) -> Result<(String, i32)> {
    let cmp = session::compare_with_bpftool(prog_id)?;
    let code = if cmp.passed() { 0 } else { 1 };
    Ok((dump::compare(&cmp, cli.format), code))
}

/// [`print`] of a command's output and exit status.
fn written(out: &mut dyn Write, (text, code): (String, i32)) -> Result<Streamed> {
    Ok(print(out, &text, code))
}

/// Write a command's whole output (or the text the command line asked
/// for: help, version) and one final newline.
pub fn print(out: &mut dyn Write, text: &str, code: i32) -> Streamed {
    let written = out
        .write_all(text.as_bytes())
        .and_then(|()| out.write_all(b"\n"))
        .and_then(|()| out.flush());
    match written {
        Ok(()) => Streamed::Done(code),
        Err(e) => Streamed::WriteFailed(e, code),
    }
}

/// The listing `cli` asks for when it is written row by row: `prog`,
/// `map` and `link` in JSON or CSV.
fn streamed_listing(cli: &Cli) -> Option<ListingKind> {
    match &cli.command {
        _ if cli.format == Format::Text => None,
        Command::Prog { .. } => Some(ListingKind::Programs),
        Command::Map => Some(ListingKind::Maps),
        Command::Link => Some(ListingKind::Links),
        _ => None,
    }
}

/// `brr activity` without `--interval`: one window.
fn activity(cli: &Cli, c: &Collector, duration: f64, limit: usize, all: bool) -> Result<String> {
    let fields = listing::activity_fields(cli.format, cli.extended);
    let (rows, measured) = c.activity_with(duration, all, limit, fields)?;
    let run = ActivityRun {
        duration,
        measured,
        limit,
        all,
        window: None,
    };
    Ok(listing::activity(
        &rows,
        run,
        cli.format,
        cli.cumulative,
        cli.extended,
    ))
}

/// `brr dump`: one program's translated or (`jited`) native listing.
fn dump(
    cli: &Cli,
    c: &Collector,
    prog_id: u32,
    devmode: Option<&std::path::Path>,
    jited: bool,
) -> Result<String> {
    // The translated listing prints with --jited only in JSON; --devmode
    // reads it for the source context (which CSV has not).
    let xlated = match cli.format {
        Format::Json { .. } => true,
        Format::Text => devmode.is_some(),
        Format::Csv => false,
    };
    let (mut image, native) = session::dump_image(prog_id, jited.then_some(xlated))?;
    c.attach_prog_pins(std::slice::from_mut(&mut image.program));
    // CSV has no source context.
    let dev = devmode
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
        kptr_restrict: session::kptr_restrict(),
    };
    Ok(dump::dump(
        &image,
        cli.format,
        dev.as_ref(),
        native.as_ref(),
        &calls,
    ))
}

/// `brr exporter`: serves until a terminating signal; writes no output of
/// its own.
fn exporter(config: crate::serve::ExporterConfig, c: &Arc<Collector>) -> Result<Streamed> {
    crate::serve::run(config, Arc::clone(c)).map(|()| Streamed::Done(0))
}

/// `brr activity --interval`: back-to-back windows, each written as it
/// ends.
fn activity_stream(
    cli: &Cli,
    c: &Collector,
    interval: f64,
    count: u64,
    limit: usize,
    all: bool,
    out: &mut dyn Write,
) -> Result<Streamed> {
    let mut first = true;
    let mut failed = None;
    let fields = listing::activity_fields(cli.format, cli.extended);
    c.activity_stream(interval, count, all, limit, fields, &mut |w| {
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
        Some(e) => Streamed::WriteFailed(e, 0),
        None => Streamed::Done(0),
    })
}

/// `prog`, `map` and `link` in JSON or CSV, written to `out` row by row as
/// the objects are read, so that memory does not grow with their number
/// (text needs every row for its column widths).
/// A failed write stops the walk there.
fn listing_stream(
    cli: &Cli,
    c: &Collector,
    kind: ListingKind,
    out: &mut dyn Write,
) -> Result<Streamed> {
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
                c.programs_each(*stats, fields, |p| put(listing::program_items(&p, x, csv)))
            }
            Command::Map => {
                let fields = listing::map_fields(format, x);
                c.maps_each(fields, |m| put(listing::map_items(&m, x, csv)))
            }
            _ => {
                let fields = listing::link_fields(format, x);
                c.links_each(fields, |l| put(listing::link_items(&l, x, csv)))
            }
        }
    };
    if let Some(e) = failed {
        return Ok(Streamed::WriteFailed(e, 0));
    }
    walked?;
    let end = w
        .finish()
        .and_then(|()| buf.write_all(b"\n"))
        .and_then(|()| buf.flush());
    Ok(match end {
        Ok(()) => Streamed::Done(0),
        Err(e) => Streamed::WriteFailed(e, 0),
    })
}

/// `brr profile`: capture, render, and exit 1 with `--fail-on-loss` when
/// the capture was incomplete. The first Ctrl-C ends the capture early and
/// the partial profile is printed as usual; a second one exits with 130.
fn run_profile(cli: &Cli, a: &ProfileArgs, c: &Arc<Collector>) -> Result<(String, i32)> {
    let mut done = session::profile_interruptible(profile_job(cli, a), Arc::clone(c))?;
    let answer = profile_output(cli, a, &mut done);
    // brr exits once this is printed, and the kernel takes the memory
    // back at once: freeing the profile's stacks (thousands with
    // --annotate) one by one would only add to what brr costs.
    std::mem::forget(done);
    answer
}

/// The job `brr profile` runs.
fn profile_job(cli: &Cli, a: &ProfileArgs) -> session::Job {
    // Text prints only the --line-limit rows of each table.
    let native = match (a.annotate, cli.format) {
        (false, _) => session::Native::Off,
        (true, Format::Text) => session::Native::Table,
        (true, _) => session::Native::Every,
    };
    let report = session::ReportPlan {
        options: profile::report::ReportOptions {
            limit: a.limit,
            line_limit: a.line_limit,
            merge_lines: !a.wide,
        },
        native,
        keep: None,
    };
    session::Job {
        request: a.request.clone(),
        exports: a.exports.clone(),
        report: Some(report),
    }
}

/// What `brr profile` prints of a finished job, and its exit status.
fn profile_output(
    cli: &Cli,
    a: &ProfileArgs,
    done: &mut session::Profiled,
) -> Result<(String, i32)> {
    let mut code = i32::from(a.fail_on_loss && done.profile.telemetry.incomplete);
    if crate::error::say_all(&done.write_failures) {
        code = 1;
    }
    let built = match done.take_output()? {
        session::Output::Folded(text) => {
            return Ok((text.trim_end_matches('\n').to_string(), code))
        }
        session::Output::Report(built) => built,
    };
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
    Ok((text, code))
}

/// `brr man --dir DIR`: each page into DIR (created if missing); the
/// paths written, one a line.
fn write_pages(dir: &std::path::Path, pages: &[(String, String)]) -> Result<String> {
    let failed = |path: &std::path::Path, e: std::io::Error| {
        crate::error::BrrError::Failed(format!("cannot write {}: {e}", path.display()))
    };
    std::fs::create_dir_all(dir).map_err(|e| failed(dir, e))?;
    let mut written = Vec::new();
    for (name, page) in pages {
        let path = dir.join(name);
        std::fs::write(&path, format!("{page}\n")).map_err(|e| failed(&path, e))?;
        written.push(path.display().to_string());
    }
    Ok(written.join("\n"))
}

/// `brr mcp`: answer on stdio, or relay to a `brr serve-mcp` socket.
fn mcp(mode: &crate::mcp::Mode, c: &Arc<Collector>) -> Result<Streamed> {
    match mode {
        crate::mcp::Mode::Stdio => crate::mcp::serve_stdio(Arc::new(Answers::new(Arc::clone(c)))),
        crate::mcp::Mode::Connect(path) => crate::mcp::relay(path)?,
    }
    Ok(Streamed::Done(0))
}

/// The MCP tools' answers: each a command line run as the CLI runs it,
/// with one collector and one profile job at a time for every client.
struct Answers {
    collector: Arc<Collector>,
    profiling: session::Profiling,
}

impl Answers {
    fn new(collector: Arc<Collector>) -> Answers {
        let profiling = session::Profiling::new(Arc::clone(&collector));
        Answers {
            collector,
            profiling,
        }
    }

    /// A cancel that came while the capture was being set up found no job
    /// to stop: stop it now that it runs. (One that comes later stops it
    /// itself.)
    fn stop_if_cancelled(&self, cancelled: &AtomicBool) {
        if cancelled.load(Ordering::SeqCst) {
            self.profiling.cancel();
        }
    }

    /// A capture that was cancelled is only writing up what it sampled: a
    /// new request waits for it (a few seconds at most) rather than being
    /// refused as busy.
    fn wait_for_a_cancelled_job(&self) {
        self.profiling
            .wait_while_ending(std::time::Duration::from_secs(10));
    }

    fn answer_cli(&self, cli: &Cli, cancelled: &AtomicBool) -> Result<String> {
        let text = match &cli.command {
            Command::Profile(a) => {
                self.wait_for_a_cancelled_job();
                let started = self
                    .profiling
                    .start(profile_job(cli, a), |_| {}, |done| done);
                let ticket = started.map_err(refusal)?;
                self.stop_if_cancelled(cancelled);
                let mut done = ticket.finish()??;
                profile_output(cli, a, &mut done)?.0
            }
            Command::Cost { request } => {
                self.wait_for_a_cancelled_job();
                let started = session::cost::start_cost(
                    &self.profiling,
                    &self.collector,
                    request.clone(),
                    |_| {},
                    |done| done,
                );
                let ticket = started.map_err(refusal)?;
                self.stop_if_cancelled(cancelled);
                let cost = ticket.finish()??;
                crate::render::cost::render(&cost, cli.format)
            }
            _ => {
                let mut out = Vec::new();
                match run_on(cli, &self.collector, &mut out)? {
                    Streamed::Done(_) => String::from_utf8_lossy(&out).into_owned(),
                    Streamed::WriteFailed(e, _) => return Err(BrrError::Failed(e.to_string())),
                }
            }
        };
        Ok(text.trim_end().to_string())
    }
}

/// Why a capture did not start, as a tool error.
fn refusal(refused: session::Refused) -> BrrError {
    match refused {
        session::Refused::Busy(b) => BrrError::Failed(format!(
            "another profile is running; its capture ends in {} s",
            b.ends
                .saturating_duration_since(std::time::Instant::now())
                .as_secs()
                + 1
        )),
        session::Refused::Failed(e) => e,
    }
}

impl crate::mcp::Tools for Answers {
    fn answer(
        &self,
        argv: &[String],
        cancelled: &AtomicBool,
    ) -> std::result::Result<String, String> {
        let args: Vec<std::ffi::OsString> = argv.iter().map(Into::into).collect();
        let answered = match crate::cli::parse(&args) {
            Ok(crate::cli::Parsed::Run(cli)) => self.answer_cli(&cli, cancelled),
            Ok(crate::cli::Parsed::Print(text)) => Ok(text),
            Err(e) => Err(e),
        };
        answered.map_err(|e| e.render())
    }

    fn cancel(&self) -> bool {
        self.profiling.cancel()
    }
}
