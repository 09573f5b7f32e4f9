//! Command line: clap definitions (`args`) with typed values (`parsers`,
//! checked while clap reads the arguments), the post-parse rules (checked
//! in a fixed order, first failure wins, each reported by the root parser
//! with exit 2), the original's one-line error texts, completions and man
//! page.
//!
//! Every usage error is a single line on stderr, exit 2; texts the original's
//! users match (`brr activity: error: argument -d/--duration: ...`) are kept.

mod args;
mod docs;
mod parsers;

use std::ffi::OsString;
use std::path::PathBuf;

use clap::error::{ContextKind, ContextValue, ErrorKind};
use clap::parser::ValueSource;
use clap::{ArgMatches, CommandFactory, FromArgMatches};

use crate::error::BrrError;
pub(crate) use crate::export::Targets;
use crate::profile::{self, Invalid};
use crate::render::num::py_repr;
use crate::render::Format;
use crate::values;

pub use crate::values::MAX_SECONDS;
pub(crate) use args::VERSION_TEXT;

use args::{
    CaptureArgs, Devmode, ExportFlags, OutputFlags, ProfileCliArgs, RootArgs, Sub, TopArgs,
};
use parsers::{Dialect, InspectMode, Rejected};

fn targets(e: &ExportFlags) -> Targets {
    Targets {
        folded: e.folded.clone(),
        flamegraph: e.flamegraph.clone(),
        pprof: e.pprof.clone(),
    }
}

/// `top` (and bare `brr`) settings.
#[derive(Debug, Clone, PartialEq)]
pub struct TopOptions {
    pub delay: f64,
    pub limit: usize,
    /// None: 10 in textmode, unlimited in the TUI.
    pub line_limit: Option<usize>,
    pub source_limit: usize,
    pub textmode: bool,
    pub profile_top: bool,
    pub collapse_samples: bool,
    pub kernel_ip_detail: bool,
    pub program_id: Option<u32>,
    pub mixed: bool,
    /// `--inspect-mode native`.
    pub native: bool,
    /// `--annotate`: the `--profile-top` capture lists native instructions.
    pub annotate: bool,
    pub light: bool,
    /// Some(empty path) for a bare `--devmode`.
    pub devmode: Option<PathBuf>,
    pub fail_on_loss: bool,
    /// Files written from the `--profile-top` capture.
    pub exports: Targets,
    /// `--slow-ns`: the hot-and-slow hint's average run time threshold.
    pub slow_ns: u64,
    /// What `--profile-top` and the TUI's profiles capture: every program
    /// (they name one when they start); pinned paths come from the collector.
    pub profile: profile::Request,
}

/// The command to run, with its own options.
#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    Prog {
        stats: bool,
    },
    Activity {
        duration: f64,
        limit: usize,
        all: bool,
        /// `--interval`: a stream of windows of this many seconds.
        interval: Option<f64>,
        /// `--count`: windows in the stream; 0 = until Ctrl-C.
        count: u64,
    },
    Map,
    Link,
    Btf,
    Dump {
        prog_id: u32,
        /// Some(empty path) for a bare `--devmode`.
        devmode: Option<PathBuf>,
        /// `--jited`: the native JIT code too.
        jited: bool,
    },
    DumpCompare {
        prog_id: u32,
    },
    Top(TopOptions),
    PerfEvents {
        frequency: u64,
    },
    Profile(ProfileArgs),
    /// `brr cost`: what each program's capture request measures.
    Cost {
        request: profile::Request,
    },
    /// `brr exporter`.
    Exporter {
        listen: std::net::SocketAddr,
        stats: bool,
        /// `--serve-profiles` with its frequency and longest capture.
        profiles: Option<crate::serve::ProfileServing>,
        /// `--web-config`.
        web_config: Option<std::path::PathBuf>,
        /// `--profiles-auth-only`.
        auth_scope: crate::serve::AuthScope,
    },
    /// `brr doctor`.
    Doctor,
    /// `brr man --dir DIR`: the pages (file name, roff) to write there.
    ManPages {
        dir: PathBuf,
        pages: Vec<(String, String)>,
    },
    /// `brr mcp`.
    Mcp(crate::mcp::Mode),
    /// `brr serve-mcp`.
    ServeMcp(crate::mcp::SocketConfig),
}

/// `brr profile` options.
#[derive(Debug, Clone, PartialEq)]
pub struct ProfileArgs {
    /// What to capture (pinned paths come from the collector).
    pub request: profile::Request,
    pub limit: usize,
    pub line_limit: usize,
    pub kernel_ip_detail: bool,
    pub wide: bool,
    pub fail_on_loss: bool,
    /// `--devmode [DIR]`: Some(empty path) when given without a directory.
    pub devmode: Option<PathBuf>,
    /// Files written from the same capture.
    pub exports: Targets,
    /// `--annotate`: each program's sampled native instructions.
    pub annotate: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Cli {
    /// Where pinned paths are looked for: the `--bpffs` directory, or
    /// [`EVERY_MOUNT`] (empty) for every bpffs mount.
    pub bpffs: PathBuf,
    /// The directory holding the kubelet's `pods/` and `containers/` logs.
    pub kubelet_logs: PathBuf,
    pub format: Format,
    pub extended: bool,
    pub cumulative: bool,
    pub command: Command,
}

/// What a successful parse asks for.
#[derive(Debug, Clone, PartialEq)]
// Made once per process and moved once: boxing the large variant buys nothing.
#[allow(clippy::large_enum_variant)]
pub enum Parsed {
    Run(Cli),
    /// Print this text on stdout and exit 0 (`--help`, `--version`,
    /// `completions`, `man`).
    Print(String),
}

pub(crate) use crate::session::listings::EVERY_MOUNT;
const DEFAULT_KUBELET_LOGS: &str = "/var/log";

/// The whole grammar as a clap command (also used for completions and
/// man). Every level has argparse's "last one wins" for repeated options,
/// `brr dump -5` as a value and unique prefixes of long options, and there
/// is no `help` subcommand (the original has none): set once on the root
/// in `args.rs` and passed down by clap, except negative numbers as
/// values, which clap leaves to each command and so are set on each here.
pub(crate) fn command() -> clap::Command {
    RootArgs::command().mut_subcommands(|sub| sub.allow_negative_numbers(true))
}

/// Help wraps to the terminal, or to 80 columns when stdout is not one
/// (COLUMNS alone does not count: piped help should not depend on it).
fn help_width() -> usize {
    use std::io::IsTerminal;
    if std::io::stdout().is_terminal() {
        if let Ok((w, _)) = ratatui::crossterm::terminal::size() {
            if w >= 20 {
                return usize::from(w);
            }
        }
    }
    80
}

/// Parse the arguments after the program name. Never panics, whatever the
/// bytes: the result is a command, text to print, or a usage error.
pub fn parse(args: &[OsString]) -> Result<Parsed, BrrError> {
    // Scripts probe `brr --version` often; it needs none of the grammar,
    // whose construction is most of brr's start-up cost.
    if let [only] = args {
        if only == "-V" || only == "--version" {
            return Ok(Parsed::Print(VERSION_TEXT.to_string()));
        }
    }
    let mut cmd = command().term_width(help_width());
    let argv = std::iter::once(OsString::from("brr")).chain(args.iter().cloned());
    match cmd
        .try_get_matches_from_mut(argv)
        .and_then(|m| Ok((typed(&m)?, m)))
    {
        Ok((root, matches)) => finish(root, &matches),
        Err(e) => clap_outcome(&cmd, args, e),
    }
}

/// The typed arguments, with the `top` options given at the root under
/// those given to `top` itself: clap's update from what `top` was given
/// replaces just that, the later winning as in argparse.
fn typed(m: &ArgMatches) -> Result<RootArgs, clap::Error> {
    let mut root = RootArgs::from_arg_matches(m)?;
    if let (Some(Sub::Top { top, .. }), Some(given_to_top)) =
        (&mut root.command, m.subcommand_matches("top"))
    {
        *top = root.top.clone();
        top.update_from_arg_matches(&given(given_to_top))?;
    }
    Ok(root)
}

/// `m` without the values clap filled in from defaults (a flag's `false`),
/// so that an update from it changes only what was given.
fn given(m: &ArgMatches) -> ArgMatches {
    let mut given = m.clone();
    for id in m.ids() {
        if m.value_source(id.as_str()) != Some(ValueSource::CommandLine) {
            let _ = given.try_clear_id(id.as_str());
        }
    }
    given
}

/// The settings the root and the commands both take, given at either
/// level: `brr --json prog -x` is `brr prog --json -x`.
#[derive(Debug, Clone, Copy)]
struct Shared {
    out: OutputFlags,
    extended: bool,
    cumulative: bool,
}

impl Shared {
    /// What any of `levels` was given; a level without the flag (`prog`
    /// has no `-c`) has not been given it.
    fn of(levels: &[&ArgMatches]) -> Shared {
        let flag = |id: &str| {
            levels
                .iter()
                .any(|m| matches!(m.try_get_one::<bool>(id), Ok(Some(true))))
        };
        Shared {
            out: OutputFlags {
                json: flag("json"),
                csv: flag("csv"),
                pretty: flag("pretty"),
            },
            extended: flag("extended"),
            cumulative: flag("cumulative"),
        }
    }
}

fn context_text(e: &clap::Error, kind: ContextKind) -> Option<String> {
    match e.get(kind)? {
        ContextValue::String(s) => Some(s.clone()),
        ContextValue::StyledStr(s) => Some(s.to_string()),
        ContextValue::Strings(v) => Some(v.join(" ")),
        _ => None,
    }
}

fn context_list(e: &clap::Error, kind: ContextKind) -> Vec<String> {
    match e.get(kind) {
        Some(ContextValue::Strings(v)) => v.clone(),
        Some(ContextValue::String(s)) => vec![s.clone()],
        _ => Vec::new(),
    }
}

/// The subcommand level an error happened at, and its argparse name
/// (`brr activity`). clap's errors do not all say, so the arguments are
/// parsed again with errors ignored, which stops at the same level.
fn error_level(root: &clap::Command, args: &[OsString]) -> (clap::Command, String) {
    let mut cmd = root.clone();
    let mut prog = String::from("brr");
    let argv = std::iter::once(OsString::from("brr")).chain(args.iter().cloned());
    // Set on each command itself: what clap passes down would not stop at
    // the same level (`brr top -F -h`).
    let lenient = root
        .clone()
        .ignore_errors(true)
        .mut_subcommands(|sub| sub.ignore_errors(true));
    let Ok(matches) = lenient.try_get_matches_from(argv) else {
        return (cmd, prog);
    };
    let mut at = &matches;
    while let Some((name, sub_matches)) = at.subcommand() {
        let Some(sub) = cmd.find_subcommand(name).cloned() else {
            break;
        };
        prog.push(' ');
        prog.push_str(name);
        cmd = sub;
        at = sub_matches;
    }
    (cmd, prog)
}

/// The level a rejected value was given to. clap checks a value given as
/// a separate word only when the next option, or the end of its level,
/// comes, so `brr -d 0 top` fails after `top` has been read; the shortest
/// prefix of the arguments that fails the same way ends at the value and
/// stops at its level.
fn value_error_level(
    root: &clap::Command,
    args: &[OsString],
    e: &clap::Error,
) -> (clap::Command, String) {
    let key = |e: &clap::Error| {
        (
            context_text(e, ContextKind::InvalidArg),
            context_text(e, ContextKind::InvalidValue),
        )
    };
    let want = key(e);
    for n in 1..args.len() {
        let prefix = args.get(..n).unwrap_or(args);
        let argv = std::iter::once(OsString::from("brr")).chain(prefix.iter().cloned());
        if let Err(p) = root.clone().try_get_matches_from(argv) {
            if p.kind() == ErrorKind::ValueValidation && key(&p) == want {
                return error_level(root, prefix);
            }
        }
    }
    error_level(root, args)
}

/// argparse's name for an argument: `-d/--duration`, `--limit`, `PROG_ID`.
fn arg_label(cmd: &clap::Command, shown: &str) -> String {
    let word = shown.split_whitespace().next().unwrap_or(shown);
    let found = cmd.get_arguments().find(|a| {
        if let Some(long) = word.strip_prefix("--") {
            a.get_long() == Some(long)
        } else if let Some(short) = word.strip_prefix('-') {
            let mut cs = short.chars();
            matches!((cs.next(), cs.next()), (Some(c), None) if a.get_short() == Some(c))
        } else {
            a.is_positional()
                && a.get_value_names()
                    .and_then(|v| v.first())
                    .is_some_and(|n| word.trim_matches(BRACKETS) == n.as_str())
        }
    });
    match found {
        Some(a) if a.is_positional() => word.trim_matches(BRACKETS).to_string(),
        Some(a) => match (a.get_short(), a.get_long()) {
            (Some(s), Some(l)) => format!("-{s}/--{l}"),
            (Some(s), None) => format!("-{s}"),
            (None, Some(l)) => format!("--{l}"),
            (None, None) => word.to_string(),
        },
        None => word.trim_matches(BRACKETS).to_string(),
    }
}

/// What clap puts around a value name (`<PROG_ID>`, `[PROG_ID]`).
const BRACKETS: [char; 4] = ['<', '>', '[', ']'];

/// A usage error line; control characters from the arguments are escaped
/// so that it stays one line.
fn usage(prog: &str, msg: &str) -> BrrError {
    let mut line = format!("{prog}: error: ");
    for c in msg.chars() {
        if c.is_control() {
            line.extend(c.escape_default());
        } else {
            line.push(c);
        }
    }
    BrrError::Usage(line)
}

fn quoted_list<S: AsRef<str>>(items: &[S]) -> String {
    items
        .iter()
        .map(|s| py_repr(s.as_ref()))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Turn a clap outcome into ours: help and version are text to print,
/// everything else one error line in the original's words where it had them.
fn clap_outcome(
    root: &clap::Command,
    args: &[OsString],
    e: clap::Error,
) -> Result<Parsed, BrrError> {
    match e.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            return Ok(Parsed::Print(e.render().to_string().trim_end().to_string()));
        }
        ErrorKind::DisplayVersion => return Ok(Parsed::Print(VERSION_TEXT.to_string())),
        _ => {}
    }
    let (level, prog) = if e.kind() == ErrorKind::ValueValidation {
        value_error_level(root, args, &e)
    } else {
        error_level(root, args)
    };
    let arg = context_text(&e, ContextKind::InvalidArg).unwrap_or_default();
    let bad = context_text(&e, ContextKind::InvalidValue).unwrap_or_default();
    let label = arg_label(&level, &arg);
    let argument = |what: &str| usage(&prog, &format!("argument {label}: {what}"));
    if let Some(above) =
        std::error::Error::source(&e).and_then(|s| s.downcast_ref::<parsers::AboveSampleRate>())
    {
        return Err(BrrError::Unsupported(above.0.clone()));
    }
    Err(match (e.kind(), rejected(&e)) {
        (ErrorKind::UnknownArgument, _) => {
            if let Some(e) = unsupported_after(&prog, &arg) {
                return Err(e);
            }
            match ambiguous(&level, &arg) {
                Some(longs) => usage(
                    &prog,
                    &format!("ambiguous option: {arg} could match {}", longs.join(", ")),
                ),
                None => usage("brr", &format!("unrecognized arguments: {arg}")),
            }
        }
        (ErrorKind::InvalidSubcommand, _) => {
            let token = context_text(&e, ContextKind::InvalidSubcommand).unwrap_or_default();
            let names: Vec<&str> = root.get_subcommands().map(|s| s.get_name()).collect();
            usage(
                "brr",
                &format!(
                    "invalid command: {} (choose from {})",
                    py_repr(&token),
                    quoted_list(&names)
                ),
            )
        }
        (ErrorKind::ValueValidation, Some(reason)) => argument(&reason.0),
        (ErrorKind::InvalidValue, _) if bad.is_empty() => argument("expected one argument"),
        (ErrorKind::InvalidValue, _) => argument(&format!(
            "invalid choice: {} (choose from {})",
            py_repr(&bad),
            quoted_list(&context_list(&e, ContextKind::ValidValue))
        )),
        (ErrorKind::TooManyValues, _) => {
            argument(&format!("ignored explicit argument {}", py_repr(&bad)))
        }
        _ => {
            let text = e.to_string();
            let line = text.lines().next().unwrap_or("invalid arguments");
            usage(&prog, line.strip_prefix("error: ").unwrap_or(line))
        }
    })
}

/// The reason one of our value parsers gave.
fn rejected(e: &clap::Error) -> Option<&Rejected> {
    std::error::Error::source(e)?.downcast_ref::<Rejected>()
}

/// The long options a `--prefix` token could mean, when more than one.
fn ambiguous(cmd: &clap::Command, token: &str) -> Option<Vec<String>> {
    let name = token.strip_prefix("--")?;
    let name = name.split('=').next().unwrap_or(name);
    if name.is_empty() {
        return None;
    }
    let mut args: Vec<&clap::Arg> = cmd.get_arguments().filter(|a| !a.is_hide_set()).collect();
    // Declaration order, as the original lists them.
    args.sort_by_key(|a| a.get_display_order());
    let hits: Vec<String> = args
        .iter()
        .filter_map(|a| a.get_long())
        .chain(std::iter::once("help"))
        .filter(|l| l.starts_with(name))
        .map(|l| format!("--{l}"))
        .collect();
    (hits.len() > 1).then_some(hits)
}

fn usize_of(n: u64) -> usize {
    usize::try_from(n).unwrap_or(usize::MAX)
}

impl Devmode {
    /// `--devmode` as the commands take it: Some(empty) for the bare flag.
    fn path(self) -> Option<PathBuf> {
        self.devmode.map(Option::unwrap_or_default)
    }
}

impl<D: Dialect> CaptureArgs<D> {
    /// The request these options describe, with the capture length and
    /// program each command takes in its own way.
    fn request(
        &self,
        duration: Option<f64>,
        program_ids: Vec<u32>,
        pid: Option<u32>,
    ) -> profile::Request {
        profile::Request {
            event: self.event.unwrap_or_default(),
            duration: duration.unwrap_or(profile::Request::DEFAULT_DURATION),
            frequency: self
                .hz
                .frequency
                .unwrap_or(profile::Request::DEFAULT_FREQUENCY),
            kernel_samples: self.kernel_samples,
            call_graph: self.call_graph.unwrap_or_default(),
            pages: self.perf_buffer_pages.and_then(|p| p.0),
            drain_ms: self.perf_drain_ms.and_then(|d| d.0),
            program_ids,
            pid,
        }
    }
}

fn top_options(t: TopArgs) -> TopOptions {
    let c = &t.capture;
    TopOptions {
        delay: t.delay.unwrap_or(1.0),
        limit: usize_of(t.limit.unwrap_or(20)),
        line_limit: t.line_limit.map(usize_of),
        source_limit: usize_of(t.source_limit.unwrap_or(0)),
        textmode: t.textmode,
        profile_top: t.profile_top,
        collapse_samples: t.collapse_samples,
        kernel_ip_detail: c.kernel_ip_detail,
        program_id: t.program_id,
        mixed: t.inspect_mode == Some(InspectMode::Mixed),
        native: t.inspect_mode == Some(InspectMode::Native),
        annotate: c.annotate,
        light: t.light,
        devmode: t.devmode.path(),
        fail_on_loss: c.fail_on_loss,
        exports: targets(&c.exports),
        slow_ns: t.slow_ns.unwrap_or(profile::hints::SLOW_AVG_NS as u64),
        profile: c.request(t.profile_duration, Vec::new(), None),
    }
}

fn prog_id(prog: &str, id: Option<u32>) -> Result<u32, BrrError> {
    id.ok_or_else(|| usage(prog, "the following arguments are required: PROG_ID"))
}

/// `brr dump --devmode 632`: the optional DIR took the program ID. With no
/// other PROG_ID given, a number there is the ID and DIR is the default.
fn split_devmode_id(
    prog: &str,
    id: Option<u32>,
    devmode: Option<Option<PathBuf>>,
) -> Result<(Option<u32>, Option<Option<PathBuf>>), BrrError> {
    if id.is_none() {
        if let Some(Some(dir)) = &devmode {
            if let Some(digits) = dir
                .to_str()
                .filter(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()))
            {
                let id = values::object_id(digits)
                    .map_err(|e| usage(prog, &format!("argument PROG_ID: {e}")))?;
                return Ok((Some(id), Some(None)));
            }
        }
    }
    Ok((id, devmode))
}

/// `top` prints JSON or CSV only as a `--textmode` activity snapshot.
fn top_output_rules(t: &TopOptions, out: &OutputFlags) -> Result<(), BrrError> {
    if !out.any() {
        return Ok(());
    }
    if !t.textmode {
        return Err(usage(
            "brr",
            "--json, --csv, and --pretty are not supported by top without --textmode",
        ));
    }
    if t.profile_top || t.program_id.is_some() {
        return Err(usage(
            "brr",
            "--json and --csv with top --textmode print the activity snapshot only; they cannot be used with --profile-top or --program-id",
        ));
    }
    Ok(())
}

/// `-x` and `-c`, with the commands that take them before or after their
/// name in the order the refusal lists them (bare `brr` is `top`).
const COLUMN_FLAGS: [(&str, &[&str]); 2] = [
    (
        "-x/--extended",
        &["prog", "map", "link", "btf", "activity", "profile", "top"],
    ),
    ("-c/--cumulative", &["activity", "top"]),
];

/// The one refusal of `-x` or `-c` given to a command without such
/// columns, wherever it was given.
fn unsupported_flag((label, takers): (&str, &[&str]), sub: &str) -> BrrError {
    let (last, rest) = takers.split_last().unwrap_or((&"", &[]));
    let list = rest.join(", ");
    usage(
        "brr",
        &format!("{label} is not supported by {sub} (only by {list} and {last})"),
    )
}

/// Root-level `-x`/`-c` (`given`, in that order) before a command that
/// does not take them.
fn column_rules(sub: &str, given: [bool; 2]) -> Result<(), BrrError> {
    for (flag, given) in COLUMN_FLAGS.into_iter().zip(given) {
        if given && !flag.1.contains(&sub) {
            return Err(unsupported_flag(flag, sub));
        }
    }
    Ok(())
}

/// `-x`/`-c` after a command that does not take them, as clap reports it
/// (an unknown argument at that command's level), in the same words as
/// before it.
fn unsupported_after(prog: &str, token: &str) -> Option<BrrError> {
    let sub = prog.strip_prefix("brr ")?;
    let word = token.split('=').next().unwrap_or(token);
    let flag = COLUMN_FLAGS
        .into_iter()
        .find(|(label, _)| label.split('/').any(|w| w == word))?;
    Some(unsupported_flag(flag, sub))
}

/// The post-parse rules in their fixed order (values were checked while
/// parsing); the first failure wins.
fn finish(root: RootArgs, m: &ArgMatches) -> Result<Parsed, BrrError> {
    let bpffs = root.bpffs.unwrap_or_else(|| PathBuf::from(EVERY_MOUNT));
    let kubelet_logs = root
        .kubelet_logs
        .unwrap_or_else(|| PathBuf::from(DEFAULT_KUBELET_LOGS));
    let levels: Vec<&ArgMatches> = std::iter::once(m)
        .chain(m.subcommand().map(|(_, sub)| sub))
        .collect();
    let at_root = Shared::of(&[m]);
    let shared = Shared::of(&levels);
    // The later `-F`, for the commands that sample (bare `brr`, `top`,
    // `profile` and `perf-events`); a default is the capture's to check.
    let frequency = levels
        .iter()
        .rev()
        .find_map(|l| l.try_get_one::<u64>("frequency").ok().flatten().copied());
    let command = match root.command {
        None => {
            if at_root.out.any() {
                return Err(usage(
                    "brr",
                    "--json, --csv, and --pretty require a subcommand; use 'brr prog --json' to list programs",
                ));
            }
            Command::Top(top_options(root.top))
        }
        Some(sub) => {
            let sub_name = m.subcommand_name().unwrap_or_default();
            column_rules(sub_name, [at_root.extended, at_root.cumulative])?;
            let prog = format!("brr {sub_name}");
            let command = match sub_command(&prog, sub, shared.out.pretty)? {
                Ok(command) => command,
                Err(text) => return Ok(Parsed::Print(text)),
            };
            if sub_name != "top" && root.top != TopArgs::default() {
                return Err(usage(
                    "brr",
                    "top options may only be used with bare 'brr' or the 'top' command",
                ));
            }
            if let Command::Top(t) = &command {
                top_output_rules(t, &shared.out)?;
            }
            command
        }
    };
    let out = shared.out;
    if out.json && out.csv {
        return Err(usage("brr", "--json and --csv are mutually exclusive"));
    }
    if out.pretty && !out.json {
        return Err(usage("brr", "--pretty requires --json"));
    }
    if matches!(command, Command::Doctor) && out.csv {
        return Err(usage(
            "brr",
            "--csv is not supported by doctor (its checks and commands are two tables); use --json",
        ));
    }
    capture_rules(&command)?;
    if let Command::Top(t) = &command {
        textmode_profile_rules(t)?;
    }
    if let Some(hz) = frequency {
        frequency_rule(hz, profile::events::max_sample_rate())?;
    }
    let format = if out.json {
        Format::Json { pretty: out.pretty }
    } else if out.csv {
        Format::Csv
    } else {
        Format::Text
    };
    Ok(Parsed::Run(Cli {
        bpffs,
        kubelet_logs,
        format,
        extended: shared.extended,
        cumulative: shared.cumulative,
        command,
    }))
}

/// The capture's own rules ([`profile::Request::validate`]) in the command
/// line's words, then `--kernel-ip-detail`'s.
fn capture_rules(command: &Command) -> Result<(), BrrError> {
    let (req, ip_detail, duration) = match command {
        Command::Top(t) => (&t.profile, t.kernel_ip_detail, "--profile-duration"),
        Command::Profile(p) => (&p.request, p.kernel_ip_detail, "-d/--duration"),
        Command::Cost { request } => (request, false, "-d/--duration"),
        _ => return Ok(()),
    };
    // The value parsers already hold every value to these ranges; only the
    // rule between options can fail here.
    let value =
        |label: &str, e: values::ValueError| usage("brr", &format!("argument {label}: {e}"));
    req.validate().map_err(|e| match e {
        Invalid::LbrWithoutKernelSamples => {
            usage("brr", "--call-graph lbr requires --kernel-samples")
        }
        Invalid::Duration(e) => value(duration, e),
        Invalid::Frequency(e) => value("-F/--frequency", e),
        Invalid::Pages(e) => value("--perf-buffer-pages", e),
        Invalid::DrainMs(e) => value("--perf-drain-ms", e),
    })?;
    if ip_detail && !req.kernel_samples {
        return Err(usage("brr", "--kernel-ip-detail requires --kernel-samples"));
    }
    Ok(())
}

/// `-F` above `kernel.perf_event_max_sample_rate` (`max`, as read now) is
/// refused before anything runs: the kernel would refuse every event.
fn frequency_rule(hz: u64, max: Option<i64>) -> Result<(), BrrError> {
    match max.and_then(|m| u64::try_from(m).ok()) {
        Some(m) if m > 0 && hz > m => Err(usage(
            "brr",
            &format!(
                "argument -F/--frequency: {hz} Hz is above kernel.perf_event_max_sample_rate ({m}); use -F {m} or lower, or raise that sysctl"
            ),
        )),
        _ => Ok(()),
    }
}

/// Options that only a `--textmode --profile-top` capture uses.
fn textmode_profile_rules(t: &TopOptions) -> Result<(), BrrError> {
    if t.textmode && t.profile_top {
        return Ok(());
    }
    let flag = if t.collapse_samples {
        Some("--collapse-samples")
    } else if t.annotate {
        Some("--annotate")
    } else {
        t.exports.first_flag()
    };
    match flag {
        Some(flag) => Err(usage(
            "brr",
            &format!("{flag} requires --textmode and --profile-top"),
        )),
        None => Ok(()),
    }
}

/// `brr activity`'s stream rules; `pretty` is whether `--pretty` was given
/// at any level.
fn activity_command(prog: &str, a: &args::ActivityArgs, pretty: bool) -> Result<Command, BrrError> {
    if a.interval.is_some() && a.duration.is_some() {
        return Err(usage(
            prog,
            "--interval and -d/--duration cannot be used together; --interval sets each window's length",
        ));
    }
    if a.count.is_some() && a.interval.is_none() {
        return Err(usage(prog, "--count requires --interval"));
    }
    if a.interval.is_some() && pretty {
        return Err(usage(
            prog,
            "--pretty cannot be used with --interval (JSON Lines are one object per line)",
        ));
    }
    Ok(Command::Activity {
        duration: a.interval.or(a.duration).unwrap_or(5.0),
        limit: usize_of(a.limit.unwrap_or(20)),
        all: a.all,
        interval: a.interval,
        count: a.count.unwrap_or(0),
    })
}

fn exporter_command(a: &args::ExporterArgs) -> Result<Command, BrrError> {
    let listen = match a.listen {
        Some(listen) => listen,
        None => crate::serve::DEFAULT_LISTEN
            .parse()
            .map_err(|_| BrrError::Failed("the default listen address does not parse".into()))?,
    };
    let prog = "brr exporter";
    for (given, flag) in [
        (a.profile_hz.is_some(), "--profile-hz"),
        (a.max_profile_seconds.is_some(), "--max-profile-seconds"),
        (a.profiles_auth_only, "--profiles-auth-only"),
    ] {
        if given && !a.serve_profiles {
            return Err(usage(prog, &format!("{flag} requires --serve-profiles")));
        }
    }
    if a.profiles_auth_only && a.web_config.is_none() {
        return Err(usage(prog, "--profiles-auth-only requires --web-config"));
    }
    let limit = crate::serve::profiles::MAX_SECONDS_LIMIT;
    if a.max_profile_seconds.is_some_and(|s| s > limit) {
        return Err(usage(
            prog,
            &format!("argument --max-profile-seconds: must be at most {limit}"),
        ));
    }
    let defaults = crate::serve::ProfileServing::default();
    let profiles = a.serve_profiles.then(|| crate::serve::ProfileServing {
        frequency: a.profile_hz.unwrap_or(defaults.frequency),
        max_seconds: a.max_profile_seconds.unwrap_or(defaults.max_seconds),
    });
    Ok(Command::Exporter {
        listen,
        stats: !a.no_stats,
        profiles,
        web_config: a.web_config.clone(),
        auth_scope: if a.profiles_auth_only {
            crate::serve::AuthScope::ProfilesOnly
        } else {
            crate::serve::AuthScope::Everything
        },
    })
}

/// One subcommand's command and rules (the settings every level takes are
/// read from all levels at once, `Shared`); `completions` and `man` give
/// their text instead. `pretty` is whether `--pretty` was given at any
/// level.
fn sub_command(prog: &str, sub: Sub, pretty: bool) -> Result<Result<Command, String>, BrrError> {
    Ok(Ok(match sub {
        Sub::Prog { stats, .. } => Command::Prog { stats },
        Sub::Activity(a) => activity_command(prog, &a, pretty)?,
        Sub::Top { top, .. } => Command::Top(top_options(top)),
        Sub::Map(_) => Command::Map,
        Sub::Link(_) => Command::Link,
        Sub::Btf { .. } => Command::Btf,
        Sub::PerfEvents { hz, .. } => Command::PerfEvents {
            frequency: hz.frequency.unwrap_or(profile::Request::DEFAULT_FREQUENCY),
        },
        Sub::Dump(a) => {
            let (id, devmode) = split_devmode_id(prog, a.target.prog_id, a.devmode.devmode)?;
            Command::Dump {
                prog_id: prog_id(prog, id)?,
                devmode: Devmode { devmode }.path(),
                jited: a.jited,
            }
        }
        Sub::DumpCompare(a) => Command::DumpCompare {
            prog_id: prog_id(prog, a.prog_id)?,
        },
        Sub::Profile(a) => Command::Profile(profile_args(a)),
        Sub::Cost(a) => Command::Cost {
            request: profile::Request {
                event: profile::Event::Auto,
                duration: a
                    .target
                    .duration
                    .unwrap_or(profile::Request::DEFAULT_DURATION),
                frequency: a
                    .hz
                    .frequency
                    .unwrap_or(profile::Request::DEFAULT_FREQUENCY),
                kernel_samples: true,
                call_graph: profile::CallGraph::Fp,
                pages: None,
                drain_ms: None,
                program_ids: a.target.program_id,
                pid: None,
            },
        },
        Sub::Exporter(a) => exporter_command(&a)?,
        Sub::Doctor { .. } => Command::Doctor,
        Sub::Mcp(a) => Command::Mcp(match a.connect {
            Some(path) => crate::mcp::Mode::Connect(path),
            None => crate::mcp::Mode::Stdio,
        }),
        Sub::ServeMcp(a) => Command::ServeMcp(crate::mcp::SocketConfig {
            path: a.socket,
            mode: a.socket_mode.unwrap_or(crate::mcp::socket::DEFAULT_MODE),
            group: a.socket_group,
        }),
        Sub::Completions { shell } => return Ok(Err(docs::completions(shell))),
        Sub::Man { dir: None } => return Ok(Err(docs::man_page())),
        Sub::Man { dir: Some(dir) } => Command::ManPages {
            dir,
            pages: docs::man_pages(),
        },
    }))
}

fn profile_args(a: ProfileCliArgs) -> ProfileArgs {
    let c = &a.capture;
    ProfileArgs {
        request: c.request(a.target.duration, a.target.program_id, a.pid),
        limit: usize_of(a.limit.unwrap_or(20)),
        line_limit: usize_of(a.line_limit.unwrap_or(10)),
        kernel_ip_detail: c.kernel_ip_detail,
        wide: a.wide,
        fail_on_loss: c.fail_on_loss,
        devmode: a.devmode.path(),
        exports: targets(&c.exports),
        annotate: c.annotate,
    }
}

#[cfg(test)]
mod tests;
