//! `brr top --textmode`: one activity window, then optionally one program's
//! drilldown (profiled with `--profile-top`).

use std::path::PathBuf;
use std::sync::Arc;

use crate::cli::{Cli, TopOptions};
use crate::error::{BrrError, Result};
use crate::inspect::drilldown::{Devmode, Drilldown, Options, ProgramData};
use crate::inspect::profile::ProfileInput;
use crate::model::activity::ActivityRow;
use crate::model::profile::Hint;
use crate::model::report::Annotation;
use crate::model::ProgramImage;
use crate::profile;
use crate::profile::report::ReportOptions;
use crate::render::listing::{self, ActivityRun};
use crate::render::{textmode, Format};
use crate::session::{self, Collector};
use crate::tui;

/// Line limit when `--line-limit` is not given: 10 in textmode.
const TEXTMODE_LINE_LIMIT: usize = 10;

/// What a `--profile-top` capture gives textmode.
enum ProfileTop {
    /// The folded stacks, which go to stdout in place of the view.
    Folded {
        text: String,
        incomplete: bool,
        /// A file could not be written (said on stderr).
        write_failed: bool,
    },
    Profiled(Box<Profiled>),
}

/// A `--profile-top` capture of one program in textmode.
struct Profiled {
    input: ProfileInput,
    hints: Vec<Hint>,
    /// Its sampled native instructions (`--annotate`), under the
    /// heading `profile` gives them.
    annotation: Option<(String, Annotation)>,
    /// A file could not be written (said on stderr).
    write_failed: bool,
}

/// Profile program `id` with the top options (selected-program mode) and
/// write the export files.
fn profile_program(
    t: &TopOptions,
    c: &Arc<Collector>,
    id: u32,
    line_limit: usize,
) -> Result<ProfileTop> {
    let req = profile::Request {
        program_ids: vec![id],
        ..t.profile.clone()
    };
    // The native view places samples by instruction.
    let native = if t.annotate || t.native {
        session::Native::Printed
    } else {
        session::Native::Off
    };
    let report = session::ReportPlan {
        options: ReportOptions {
            limit: 0,
            line_limit,
            // The drilldown places each record's samples itself.
            merge_lines: false,
        },
        native,
        keep: None,
    };
    let mut done = session::profile_interruptible(
        session::Job {
            request: req,
            exports: t.exports.clone(),
            report: Some(report),
        },
        Arc::clone(c),
    )?;
    let incomplete = done.profile.telemetry.incomplete;
    let write_failed = crate::error::say_all(&done.write_failures);
    let report = match done.take_output()? {
        session::Output::Folded(text) => {
            return Ok(ProfileTop::Folded {
                text,
                incomplete,
                write_failed,
            })
        }
        session::Output::Report(report) => report,
    };
    let program = report.program(id);
    Ok(ProfileTop::Profiled(Box::new(Profiled {
        input: session::drilldown_input(&report, id),
        hints: program.map(|p| p.hints.clone()).unwrap_or_default(),
        annotation: program
            .and_then(|p| {
                let a = p.native.clone()?;
                Some((crate::render::profile::instructions_heading(p, &a), a))
            })
            .filter(|_| t.annotate),
        write_failed,
    })))
}

/// The interactive view's settings from the command line.
pub(crate) fn tui_config(cli: &Cli, t: &TopOptions) -> tui::Config {
    tui::Config {
        delay: t.delay,
        extended: cli.extended,
        cumulative: cli.cumulative,
        light: t.light,
        program_id: t.program_id,
        mixed: t.mixed,
        native: t.native,
        kernel_ip_detail: t.kernel_ip_detail,
        // The TUI keeps every hotspot row unless told otherwise.
        line_limit: t.line_limit.unwrap_or(0),
        devmode: t.devmode.as_ref().map(PathBuf::from),
        profile: t.profile.clone(),
        cpus: profile::events::online_cpus().len(),
    }
}

/// Hot and slow, from the activity window just measured.
fn activity_hints(rows: &[ActivityRow], id: u32, measured: f64, slow_ns: u64) -> Vec<Hint> {
    rows.iter()
        .find(|r| r.prog.id == id)
        .and_then(|r| profile::report::hot_and_slow(r, measured, slow_ns))
        .into_iter()
        .collect()
}

/// The `BRR INSPECT` section of `image` in the `--inspect-mode` view.
fn inspect_section(
    t: &TopOptions,
    image: &ProgramImage,
    profile: Option<&ProfileInput>,
) -> Result<String> {
    let opts = Options {
        mixed: t.mixed,
        exact_ips: t.kernel_ip_detail,
        source_limit: t.source_limit,
        // A program without line info lists its instructions in source
        // mode too.
        call_names: if t.mixed || image.lines.is_empty() {
            session::call_names(image)
        } else {
            Default::default()
        },
        native_view: t.native,
        native: if t.native {
            Some(Arc::new(session::image::native_image(image.program.id)?))
        } else {
            None
        },
    };
    let mut tree = t.devmode.as_deref().map(session::devmode_tree);
    let dev = tree
        .as_mut()
        .map(|(tree, bare)| Devmode { tree, bare: *bare });
    let dd = Drilldown::build(
        ProgramData {
            id: image.program.id,
            name: image.program.display_name(),
            xlated: &image.xlated,
            lines: &image.lines,
            jit_ranges: &image.jit_ranges,
        },
        profile,
        &opts,
        dev,
    )
    .map_err(BrrError::from)?;
    Ok(textmode::inspect(&dd, t.collapse_samples))
}

/// `brr top`: the interactive view, or with `--textmode` its text, read
/// through `c`.
pub(crate) fn run(cli: &Cli, t: &TopOptions, c: &Arc<Collector>) -> Result<(String, i32)> {
    if !t.textmode {
        return tui::run(tui_config(cli, t), Arc::clone(c));
    }
    // A program the user named is checked before anything is measured.
    let named = t.program_id.map(session::program_image).transpose()?;
    // So are the profile's files, before the window is measured.
    if t.profile_top {
        t.exports.check()?;
    }
    let (all_rows, measured) = c.activity(t.delay, true, 0, cli.extended)?;
    let shown = if t.limit > 0 && all_rows.len() > t.limit {
        &all_rows[..t.limit]
    } else {
        &all_rows[..]
    };
    if cli.format != Format::Text {
        // The CLI allows JSON and CSV only for the snapshot alone, in the
        // schema of `activity --json`.
        let run = ActivityRun {
            duration: t.delay,
            measured,
            limit: t.limit,
            all: true,
            window: None,
        };
        let out = listing::activity(shown, run, cli.format, cli.cumulative, cli.extended);
        return Ok((out, 0));
    }
    let mut sections = vec![textmode::activity(
        shown,
        t.delay,
        measured,
        cli.cumulative,
        cli.extended,
    )];
    let mut code = 0;
    let image = match named {
        Some(img) => Some(img),
        None if t.profile_top => match all_rows.first() {
            Some(r) => Some(session::program_image(r.prog.id)?),
            None => {
                sections.push(textmode::no_program());
                None
            }
        },
        None => None,
    };
    if let Some(image) = image {
        let line_limit = t.line_limit.unwrap_or(TEXTMODE_LINE_LIMIT);
        let mut hints = activity_hints(&all_rows, image.program.id, measured, t.slow_ns);
        let mut annotation = None;
        let profile = if t.profile_top {
            let p = match profile_program(t, c, image.program.id, line_limit)? {
                ProfileTop::Profiled(p) => *p,
                ProfileTop::Folded {
                    text,
                    incomplete,
                    write_failed,
                } => {
                    let code = i32::from(t.fail_on_loss && incomplete || write_failed);
                    return Ok((text.trim_end_matches('\n').to_string(), code));
                }
            };
            hints.extend(p.hints);
            annotation = p.annotation;
            if p.write_failed {
                code = 1;
            }
            Some(p.input)
        } else {
            None
        };
        if t.fail_on_loss && profile.as_ref().is_some_and(|p| p.incomplete) {
            code = 1;
        }
        sections.push(inspect_section(t, &image, profile.as_ref())?);
        if let Some((heading, a)) = annotation.filter(|(_, a)| !a.all.is_empty()) {
            sections.push(heading);
            sections.push(crate::render::profile::instructions_table(
                &a, false, line_limit,
            ));
        }
        if !hints.is_empty() {
            sections.push(crate::render::profile::hints_text(&hints));
        }
    }
    Ok((sections.join("\n\n"), code))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::{self, Command, Parsed};

    fn config(args: &str) -> tui::Config {
        let a: Vec<std::ffi::OsString> = args.split_whitespace().map(Into::into).collect();
        match cli::parse(&a) {
            Ok(Parsed::Run(c)) => match &c.command {
                Command::Top(t) => tui_config(&c, t),
                _ => panic!("not top: {args}"),
            },
            _ => panic!("bad args {args}"),
        }
    }

    #[test]
    fn tui_config_from_the_command_line() {
        let c = config("");
        assert_eq!(c.cpus, profile::events::online_cpus().len());
        let c = tui::Config {
            cpus: crate::tui::tests::config().cpus,
            ..c
        };
        assert_eq!(c, crate::tui::tests::config());
        assert_eq!(
            (c.delay, c.extended, c.cumulative, c.light),
            (1.0, false, false, false)
        );
        assert_eq!((c.program_id, c.line_limit, c.devmode), (None, 0, None));
        assert_eq!((c.profile.pages, c.profile.drain_ms), (None, None));
        assert_eq!(c.profile.call_graph, profile::CallGraph::Fp);
        assert!(c.profile.program_ids.is_empty());

        let c = config(
            "-x -c --bpffs /tmp/b top -d 2.5 --light --program-id 7 --inspect-mode mixed \
             --line-limit 3 --devmode src --perf-buffer-pages 8 --perf-drain-ms 50 \
             -F 99 --event cpu-clock --kernel-samples --call-graph lbr",
        );
        assert_eq!(
            (c.delay, c.extended, c.cumulative, c.light),
            (2.5, true, true, true)
        );
        assert_eq!((c.program_id, c.mixed, c.line_limit), (Some(7), true, 3));
        assert_eq!(c.devmode, Some(PathBuf::from("src")));
        assert_eq!((c.profile.pages, c.profile.drain_ms), (Some(8), Some(50)));
        assert_eq!(
            (c.profile.frequency, c.profile.event.name()),
            (99, "cpu-clock")
        );
        assert_eq!(c.profile.call_graph, profile::CallGraph::Lbr);
    }

    #[test]
    fn bare_devmode_is_an_empty_path() {
        assert_eq!(config("top --devmode").devmode, Some(PathBuf::new()));
    }
}
