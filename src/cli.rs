//! Command-line grammar (argparse-compatible messages, see the CLI spec §2).
//!
//! A small table-driven parser rather than clap: users' scripts match the
//! exact `error:` lines of the original, including `brr activity: error:
//! argument -d/--duration: ...`, and global flags that may appear before or
//! after the subcommand with root-only "top options".

use std::collections::HashMap;

use crate::error::BrrError;
use crate::render::Format;

pub const VERSION_TEXT: &str =
    "brr 0.6.0 - eBPF Runtime Reporter and Profiler by Tanel Poder (tanelpoder.com).";
const DESCRIPTION: &str = "eBPF Runtime Reporter and Profiler by Tanel Poder (tanelpoder.com).";

/// How an option's value is checked and converted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Flag,
    PosFloat,
    PosInt,
    NonNegInt,
    Path,
    Event,
    CallGraph,
    InspectMode,
    PagesProfile,
    DrainProfile,
    PagesTop,
    DrainTop,
    /// `--devmode [DIR]`: takes the next token if it is not an option.
    OptionalPath,
}

#[derive(Debug, Clone, Copy)]
struct Opt {
    short: Option<&'static str>,
    long: &'static str,
    dest: &'static str,
    kind: Kind,
    metavar: &'static str,
    help: &'static str,
    hidden: bool,
}

const fn opt(
    short: Option<&'static str>,
    long: &'static str,
    dest: &'static str,
    kind: Kind,
    metavar: &'static str,
    help: &'static str,
) -> Opt {
    Opt {
        short,
        long,
        dest,
        kind,
        metavar,
        help,
        hidden: false,
    }
}

const JSON: Opt = opt(None, "--json", "json", Kind::Flag, "", "Print JSON.");
const CSV: Opt = opt(None, "--csv", "csv", Kind::Flag, "", "Print CSV.");
const PRETTY: Opt = opt(
    None,
    "--pretty",
    "pretty",
    Kind::Flag,
    "",
    "Indent JSON output (requires --json).",
);
const EXTENDED: Opt = opt(
    Some("-x"),
    "--extended",
    "extended",
    Kind::Flag,
    "",
    "Show extra columns such as TAG and PINNED.",
);
const EXTENDED_PINNED: Opt = opt(
    Some("-x"),
    "--extended",
    "extended",
    Kind::Flag,
    "",
    "Add the PINNED column.",
);
const CUMULATIVE: Opt = opt(
    Some("-c"),
    "--cumulative",
    "cumulative",
    Kind::Flag,
    "",
    "Show cumulative runtime columns and the NS_PER/s rate.",
);
const BPFFS: Opt = opt(
    None,
    "--bpffs",
    "bpffs",
    Kind::Path,
    "BPFFS",
    "bpffs root scanned for pinned paths (default /sys/fs/bpf).",
);
const VERSION: Opt = opt(
    Some("-V"),
    "--version",
    "version",
    Kind::Flag,
    "",
    "Print the version and exit.",
);
const STATS: Opt = opt(
    None,
    "--stats",
    "stats",
    Kind::Flag,
    "",
    "Enable runtime statistics while reading and show the cumulative RUN_CNT and RUN_TIME_NS counters (accumulated whenever statistics were enabled; this does not measure an interval).",
);
const DURATION: Opt = opt(
    Some("-d"),
    "--duration",
    "duration",
    Kind::PosFloat,
    "SECONDS",
    "Measurement window in seconds (default 5).",
);
const LIMIT: Opt = opt(
    None,
    "--limit",
    "limit",
    Kind::NonNegInt,
    "N",
    "Show at most N rows; 0 shows all (default 20).",
);
const ALL: Opt = opt(
    None,
    "--all",
    "all",
    Kind::Flag,
    "",
    "Also show programs that did not run during the window.",
);

const fn hidden(o: Opt) -> Opt {
    Opt { hidden: true, ..o }
}

const DELAY: Opt = opt(
    Some("-d"),
    "--delay",
    "delay",
    Kind::PosFloat,
    "SECONDS",
    "Length of each activity sampling window in seconds (default 1).",
);
const TOP_LIMIT: Opt = opt(
    None,
    "--limit",
    "limit",
    Kind::NonNegInt,
    "N",
    "Rows in the textmode activity table; 0 shows all (default 20).",
);
const EVENT: Opt = opt(
    None,
    "--event",
    "event",
    Kind::Event,
    "EVENT",
    "Perf event to sample (default auto; see 'brr perf-events').",
);
const PROFILE_DURATION: Opt = opt(
    None,
    "--profile-duration",
    "profile_duration",
    Kind::PosFloat,
    "SECONDS",
    "Profile length in seconds (default 5).",
);
const FREQUENCY: Opt = opt(
    Some("-F"),
    "--frequency",
    "frequency",
    Kind::PosInt,
    "HZ",
    "Sampling frequency in Hz (default 997).",
);
const LINE_LIMIT: Opt = opt(
    None,
    "--line-limit",
    "line_limit",
    Kind::NonNegInt,
    "N",
    "Detailed hotspot rows per bucket; 0 = unlimited (default 10 in textmode, unlimited in the TUI).",
);
const SOURCE_LIMIT: Opt = opt(
    None,
    "--source-limit",
    "source_limit",
    Kind::NonNegInt,
    "N",
    "Keep only the first N detail rows of the textmode inspect table; 0 = all.",
);
const TEXTMODE: Opt = opt(
    None,
    "--textmode",
    "textmode",
    Kind::Flag,
    "",
    "Print one text snapshot and exit.",
);
const PROFILE_TOP: Opt = opt(
    None,
    "--profile-top",
    "profile_top",
    Kind::Flag,
    "",
    "Profile the top program (or --program-id) in textmode.",
);
const COLLAPSE: Opt = opt(
    None,
    "--collapse-samples",
    "collapse_samples",
    Kind::Flag,
    "",
    "Fold helper/kernel rows into their source lines (textmode with --profile-top).",
);
const KERNEL_SAMPLES: Opt = opt(
    None,
    "--kernel-samples",
    "kernel_samples",
    Kind::Flag,
    "",
    "Capture callchains and attribute kernel time under eBPF programs.",
);
const KERNEL_IP_DETAIL: Opt = opt(
    None,
    "--kernel-ip-detail",
    "kernel_ip_detail",
    Kind::Flag,
    "",
    "Show exact kernel IPs instead of functions (requires --kernel-samples).",
);
const CALL_GRAPH: Opt = opt(
    None,
    "--call-graph",
    "call_graph",
    Kind::CallGraph,
    "{fp,lbr}",
    "Callchain source (default fp; lbr requires --kernel-samples).",
);
const PROGRAM_ID: Opt = opt(
    None,
    "--program-id",
    "program_id",
    Kind::PosInt,
    "PROG_ID",
    "Inspect this program instead of the top activity row.",
);
const INSPECT_MODE: Opt = opt(
    None,
    "--inspect-mode",
    "inspect_mode",
    Kind::InspectMode,
    "{source,mixed}",
    "Inspect view: source lines, or source lines with instructions (default source).",
);
const LIGHT: Opt = opt(
    None,
    "--light",
    "light",
    Kind::Flag,
    "",
    "Light colour theme.",
);
const DEVMODE: Opt = opt(
    None,
    "--devmode",
    "devmode",
    Kind::OptionalPath,
    "DIR",
    "Read source files under DIR (default: current directory) for context lines and missing BTF source text.",
);
const PAGES_TOP: Opt = opt(
    None,
    "--perf-buffer-pages",
    "perf_buffer_pages",
    Kind::PagesTop,
    "auto|PAGES",
    "Perf ring data pages per CPU: auto or a power of two.",
);
const DRAIN_TOP: Opt = opt(
    None,
    "--perf-drain-ms",
    "perf_drain_ms",
    Kind::DrainTop,
    "auto|MS",
    "Perf ring drain interval: auto or milliseconds.",
);
const FAIL_ON_LOSS: Opt = opt(
    None,
    "--fail-on-loss",
    "fail_on_loss",
    Kind::Flag,
    "",
    "Exit 1 when the profile is incomplete.",
);
const ALL_HIDDEN: Opt = hidden(ALL);

const CAPTURE_DURATION: Opt = opt(
    Some("-d"),
    "--duration",
    "duration",
    Kind::PosFloat,
    "SECONDS",
    "Capture length in seconds (default 5).",
);
const PROFILE_LIMIT: Opt = opt(
    None,
    "--limit",
    "limit",
    Kind::NonNegInt,
    "N",
    "Show at most N programs; 0 shows all (default 20).",
);
const PROFILE_LINE_LIMIT: Opt = opt(
    None,
    "--line-limit",
    "line_limit",
    Kind::NonNegInt,
    "N",
    "Show at most N hotspot rows per program and list; 0 shows all (default 10).",
);
const PROFILE_PROGRAM_ID: Opt = opt(
    None,
    "--program-id",
    "program_id",
    Kind::PosInt,
    "PROG_ID",
    "Report only this program.",
);
const WIDE: Opt = opt(
    Some("-w"),
    "--wide",
    "wide",
    Kind::Flag,
    "",
    "Show addresses, full source paths and the SAMPLES column.",
);
const PERF_BUFFER_PAGES: Opt = opt(
    None,
    "--perf-buffer-pages",
    "perf_buffer_pages",
    Kind::PagesProfile,
    "auto|PAGES",
    "Data pages per CPU ring: auto or a power of two (default auto).",
);
const PERF_DRAIN_MS: Opt = opt(
    None,
    "--perf-drain-ms",
    "perf_drain_ms",
    Kind::DrainProfile,
    "auto|MS",
    "Longest interval between ring sweeps: auto or whole milliseconds (default auto).",
);
const PERF_EVENTS_OPTS: &[Opt] = &[JSON, CSV, PRETTY, FREQUENCY];
const PROFILE_OPTS: &[Opt] = &[
    JSON,
    CSV,
    PRETTY,
    EXTENDED,
    DEVMODE,
    CAPTURE_DURATION,
    FREQUENCY,
    EVENT,
    PROFILE_LIMIT,
    PROFILE_LINE_LIMIT,
    PROFILE_PROGRAM_ID,
    KERNEL_SAMPLES,
    KERNEL_IP_DETAIL,
    CALL_GRAPH,
    WIDE,
    PERF_BUFFER_PAGES,
    PERF_DRAIN_MS,
    FAIL_ON_LOSS,
];

/// `top` options in their documented order; `-x`/`-c` sit after
/// `--collapse-samples` in the subcommand and are general root options.
const TOP_OPTS: &[Opt] = &[
    DELAY,
    TOP_LIMIT,
    ALL_HIDDEN,
    EVENT,
    PROFILE_DURATION,
    FREQUENCY,
    LINE_LIMIT,
    SOURCE_LIMIT,
    TEXTMODE,
    PROFILE_TOP,
    COLLAPSE,
    EXTENDED,
    CUMULATIVE,
    KERNEL_SAMPLES,
    KERNEL_IP_DETAIL,
    CALL_GRAPH,
    PROGRAM_ID,
    INSPECT_MODE,
    LIGHT,
    DEVMODE,
    PAGES_TOP,
    DRAIN_TOP,
    FAIL_ON_LOSS,
];
const DUMP_OPTS: &[Opt] = &[JSON, CSV, PRETTY, DEVMODE];
const DUMP_COMPARE_OPTS: &[Opt] = &[JSON, CSV, PRETTY];

const PROG_OPTS: &[Opt] = &[JSON, CSV, PRETTY, EXTENDED, STATS];
const ACTIVITY_OPTS: &[Opt] = &[
    JSON, CSV, PRETTY, CUMULATIVE, EXTENDED, DURATION, LIMIT, ALL,
];
const MAP_LINK_OPTS: &[Opt] = &[JSON, CSV, PRETTY, EXTENDED_PINNED];
const BTF_OPTS: &[Opt] = &[JSON, CSV, PRETTY];

/// A subcommand: name, help line, options, positionals.
struct Sub {
    name: &'static str,
    help: &'static str,
    opts: &'static [Opt],
    positional: Option<&'static str>,
}

const SUBCOMMANDS: &[Sub] = &[
    Sub {
        name: "prog",
        help: "List loaded eBPF programs.",
        opts: PROG_OPTS,
        positional: None,
    },
    Sub {
        name: "activity",
        help: "Show eBPF program runtime deltas.",
        opts: ACTIVITY_OPTS,
        positional: None,
    },
    Sub {
        name: "top",
        help: "Show the live eBPF top TUI.",
        opts: TOP_OPTS,
        positional: None,
    },
    Sub {
        name: "map",
        help: "List loaded eBPF maps.",
        opts: MAP_LINK_OPTS,
        positional: None,
    },
    Sub {
        name: "link",
        help: "List loaded eBPF links.",
        opts: MAP_LINK_OPTS,
        positional: None,
    },
    Sub {
        name: "btf",
        help: "List loaded BTF objects.",
        opts: BTF_OPTS,
        positional: None,
    },
    Sub {
        name: "perf-events",
        help: "List brr-supported perf events openable on this host.",
        opts: PERF_EVENTS_OPTS,
        positional: None,
    },
    Sub {
        name: "dump",
        help: "Dump translated instructions and source-line metadata for a program.",
        opts: DUMP_OPTS,
        positional: Some("PROG_ID"),
    },
    Sub {
        name: "dump-compare",
        help: "Compare brr dump output with bpftool source-line metadata.",
        opts: DUMP_COMPARE_OPTS,
        positional: Some("PROG_ID"),
    },
    Sub {
        name: "profile",
        help: "Profile BPF JIT execution with native perf_event_open sampling.",
        opts: PROFILE_OPTS,
        positional: None,
    },
];

const ROOT_OPTS: &[Opt] = &[
    BPFFS,
    JSON,
    CSV,
    PRETTY,
    EXTENDED,
    CUMULATIVE,
    VERSION,
    DELAY,
    TOP_LIMIT,
    ALL_HIDDEN,
    EVENT,
    PROFILE_DURATION,
    FREQUENCY,
    LINE_LIMIT,
    SOURCE_LIMIT,
    TEXTMODE,
    PROFILE_TOP,
    COLLAPSE,
    KERNEL_SAMPLES,
    KERNEL_IP_DETAIL,
    CALL_GRAPH,
    PROGRAM_ID,
    INSPECT_MODE,
    LIGHT,
    DEVMODE,
    PAGES_TOP,
    DRAIN_TOP,
    FAIL_ON_LOSS,
];

/// Root options that belong to bare `brr`/`top` only.
fn is_top_only(dest: &str) -> bool {
    !matches!(
        dest,
        "bpffs" | "json" | "csv" | "pretty" | "extended" | "cumulative" | "version"
    )
}

/// `top` (and bare `brr`) settings.
#[derive(Debug, Clone, PartialEq)]
pub struct TopOptions {
    pub delay: f64,
    pub limit: usize,
    pub event: String,
    pub profile_duration: f64,
    pub frequency: u64,
    /// None: 10 in textmode, unlimited in the TUI.
    pub line_limit: Option<usize>,
    pub source_limit: usize,
    pub textmode: bool,
    pub profile_top: bool,
    pub collapse_samples: bool,
    pub kernel_samples: bool,
    pub kernel_ip_detail: bool,
    pub call_graph: String,
    pub program_id: Option<u64>,
    pub mixed: bool,
    pub light: bool,
    /// Some("") for a bare `--devmode`.
    pub devmode: Option<String>,
    /// 0 = auto.
    pub perf_buffer_pages: u64,
    /// 0 = auto.
    pub perf_drain_ms: u64,
    pub fail_on_loss: bool,
}

/// A parsed value.
#[derive(Debug, Clone, PartialEq)]
enum Val {
    Flag,
    Float(f64),
    Int(u64),
    Str(String),
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
    },
    Map,
    Link,
    Btf,
    Dump {
        prog_id: u64,
        /// Some("") for a bare `--devmode`.
        devmode: Option<String>,
    },
    DumpCompare {
        prog_id: u64,
    },
    Top(TopOptions),
    PerfEvents {
        frequency: u64,
    },
    Profile(ProfileArgs),
}

/// `brr profile` options.
#[derive(Debug, Clone, PartialEq)]
pub struct ProfileArgs {
    pub duration: f64,
    pub frequency: u64,
    pub event: String,
    pub limit: usize,
    pub line_limit: usize,
    pub program_id: Option<u64>,
    pub kernel_samples: bool,
    pub kernel_ip_detail: bool,
    /// `fp` or `lbr`.
    pub call_graph: &'static str,
    pub wide: bool,
    /// None = auto.
    pub perf_buffer_pages: Option<u64>,
    /// None = auto.
    pub perf_drain_ms: Option<u64>,
    pub fail_on_loss: bool,
    /// `--devmode [DIR]`: Some("") when given without a directory.
    pub devmode: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Cli {
    pub bpffs: String,
    pub format: Format,
    pub extended: bool,
    pub cumulative: bool,
    pub command: Command,
}

/// What a successful parse asks for.
#[derive(Debug, Clone, PartialEq)]
pub enum Parsed {
    Run(Cli),
    /// Print this text on stdout and exit 0 (`--help`, `--version`).
    Print(String),
}

/// Python `repr()` of a string, for `invalid choice: 'x'` style messages.
pub fn py_repr(s: &str) -> String {
    let quote = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
    let mut out = String::new();
    out.push(quote);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            c => out.push(c),
        }
    }
    out.push(quote);
    out
}

fn parse_int(s: &str) -> Option<i128> {
    let t = s.trim().replace('_', "");
    let t = t.strip_prefix('+').unwrap_or(&t);
    if t.is_empty() || t.starts_with('_') {
        return None;
    }
    t.parse::<i128>().ok()
}

pub fn parse_float(s: &str) -> Result<f64, &'static str> {
    let t = s.trim().replace('_', "");
    let v: f64 = t.parse().map_err(|_| "must be a number")?;
    if !v.is_finite() {
        return Err("must be a number");
    }
    Ok(v)
}

/// Longest accepted time value (about 115 days): anything longer is a typo,
/// and it keeps every deadline computation far from overflow.
pub const MAX_SECONDS: f64 = 1e7;

/// Check and convert one option value. Errors are the text after `argument X: `.
fn convert(kind: Kind, raw: &str) -> Result<Val, String> {
    let int = |raw: &str| {
        let v = parse_int(raw).ok_or_else(|| "must be an integer".to_string())?;
        if v > u64::MAX as i128 {
            Err(format!("must be at most {}", u64::MAX))
        } else {
            Ok(v)
        }
    };
    match kind {
        Kind::Flag => Ok(Val::Flag),
        Kind::Path | Kind::OptionalPath => Ok(Val::Str(raw.to_string())),
        Kind::PosFloat => {
            let v = parse_float(raw)?;
            if v <= 0.0 {
                Err("must be greater than 0".into())
            } else if v > MAX_SECONDS {
                Err(format!("must be at most {MAX_SECONDS}"))
            } else {
                Ok(Val::Float(v))
            }
        }
        Kind::PosInt => {
            let v = int(raw)?;
            if v <= 0 {
                Err("must be greater than 0".into())
            } else {
                Ok(Val::Int(v.min(u64::MAX as i128) as u64))
            }
        }
        Kind::NonNegInt => {
            let v = int(raw)?;
            if v < 0 {
                Err("must be 0 or greater".into())
            } else {
                Ok(Val::Int(v.min(u64::MAX as i128) as u64))
            }
        }
        Kind::Event => {
            if EVENT_NAMES.contains(&raw) {
                Ok(Val::Str(raw.to_string()))
            } else {
                Err(format!(
                    "unsupported perf event {}; run 'brr perf-events' to list openable events; expected one of: {}",
                    py_repr(raw),
                    EVENT_NAMES.join(", ")
                ))
            }
        }
        Kind::CallGraph => choice(raw, &["fp", "lbr"]),
        Kind::InspectMode => choice(raw, &["source", "mixed"]),
        Kind::PagesProfile => {
            if raw.trim().eq_ignore_ascii_case("auto") {
                return Ok(Val::Int(0));
            }
            let v = int(raw)?;
            if v <= 0 {
                Err("must be greater than 0".into())
            } else if (v as u128).is_power_of_two() && v <= u32::MAX as i128 {
                Ok(Val::Int(v as u64))
            } else {
                Err("must be 'auto' or a positive power of two".into())
            }
        }
        Kind::DrainProfile => {
            if raw.trim().eq_ignore_ascii_case("auto") {
                return Ok(Val::Int(0));
            }
            let v = int(raw)?;
            if v <= 0 {
                Err("must be greater than 0".into())
            } else {
                Ok(Val::Int(v.min(u32::MAX as i128) as u64))
            }
        }
        Kind::PagesTop => {
            let t = raw.trim();
            if t.is_empty() || t.eq_ignore_ascii_case("auto") {
                return Ok(Val::Int(0));
            }
            let v = parse_int(t).ok_or("perf buffer pages must be auto or an integer")?;
            if v > 0 && (v as u128).is_power_of_two() && v <= u32::MAX as i128 {
                Ok(Val::Int(v as u64))
            } else {
                Err("perf buffer pages must be auto or a positive power of two".into())
            }
        }
        Kind::DrainTop => {
            let t = raw.trim();
            if t.is_empty() || t.eq_ignore_ascii_case("auto") {
                return Ok(Val::Int(0));
            }
            let v = parse_int(t).ok_or("perf drain milliseconds must be auto or an integer")?;
            if v <= 0 {
                Err("perf drain milliseconds must be greater than zero".into())
            } else {
                Ok(Val::Int(v.min(u32::MAX as i128) as u64))
            }
        }
    }
}

fn choice(raw: &str, allowed: &[&str]) -> Result<Val, String> {
    if allowed.contains(&raw) {
        Ok(Val::Str(raw.to_string()))
    } else {
        let list: Vec<String> = allowed.iter().map(|a| py_repr(a)).collect();
        Err(format!(
            "invalid choice: {} (choose from {})",
            py_repr(raw),
            list.join(", ")
        ))
    }
}

pub use crate::profile::events::EVENT_NAMES;

fn opt_strings(o: &Opt) -> String {
    match o.short {
        Some(s) => format!("{s}/{}", o.long),
        None => o.long.to_string(),
    }
}

fn usage_line(prog: &str, opts: &[Opt], tail: &str) -> String {
    let mut parts = vec![format!("usage: {prog} [-h]")];
    for o in opts.iter().filter(|o| !o.hidden) {
        let name = o.short.unwrap_or(o.long);
        parts.push(match o.kind {
            Kind::Flag => format!("[{name}]"),
            Kind::OptionalPath => format!("[{name} [{}]]", o.metavar),
            _ => format!("[{name} {}]", o.metavar),
        });
    }
    if !tail.is_empty() {
        parts.push(tail.to_string());
    }
    // Wrap like argparse: continuation lines indented under the program name.
    let indent = " ".repeat(format!("usage: {prog} ").len());
    let mut lines = vec![String::new()];
    for p in parts {
        let cur = lines.last_mut().unwrap();
        if !cur.is_empty() && cur.len() + 1 + p.len() > 78 {
            lines.push(format!("{indent}{p}"));
        } else {
            if !cur.is_empty() {
                cur.push(' ');
            }
            cur.push_str(&p);
        }
    }
    lines.join("\n")
}

fn choices_text() -> String {
    let names: Vec<&str> = SUBCOMMANDS.iter().map(|s| s.name).collect();
    format!("{{{}}}", names.join(","))
}

fn root_usage() -> String {
    usage_line("brr", ROOT_OPTS, &format!("{} ...", choices_text()))
}

fn sub_usage(sub: &Sub) -> String {
    usage_line(
        &format!("brr {}", sub.name),
        sub.opts,
        sub.positional.unwrap_or(""),
    )
}

fn usage_error(usage: &str, prog: &str, msg: &str) -> BrrError {
    BrrError::Usage(format!("{usage}\n{prog}: error: {msg}"))
}

fn root_error(msg: &str) -> BrrError {
    usage_error(&root_usage(), "brr", msg)
}

fn options_help(opts: &[Opt]) -> String {
    let mut out = String::from("options:\n  -h, --help            show this help message and exit");
    for o in opts.iter().filter(|o| !o.hidden) {
        let mut names = String::new();
        if let Some(s) = o.short {
            names.push_str(s);
            names.push_str(", ");
        }
        names.push_str(o.long);
        match o.kind {
            Kind::Flag => {}
            Kind::OptionalPath => names.push_str(&format!(" [{}]", o.metavar)),
            _ => names.push_str(&format!(" {}", o.metavar)),
        }
        if names.len() <= 20 {
            out.push_str(&format!("\n  {names:<22}{}", o.help));
        } else {
            out.push_str(&format!("\n  {names}\n                        {}", o.help));
        }
    }
    out
}

fn root_help() -> String {
    let mut out = format!(
        "{}\n\n{DESCRIPTION}\n\npositional arguments:\n  {}\n",
        root_usage(),
        choices_text()
    );
    for s in SUBCOMMANDS {
        out.push_str(&format!("    {:<20}{}\n", s.name, s.help));
    }
    out.push('\n');
    out.push_str(&options_help(ROOT_OPTS));
    out
}

fn sub_help(sub: &Sub) -> String {
    let mut out = format!("{}\n\n{}\n\n", sub_usage(sub), sub.help);
    if let Some(p) = sub.positional {
        out.push_str(&format!(
            "positional arguments:\n  {p:<22}eBPF program ID\n\n"
        ));
    }
    out.push_str(&options_help(sub.opts));
    out
}

/// Find the option a token names: exact short, exact long, or a unique prefix
/// of a long option.
fn lookup<'a>(opts: &'a [Opt], name: &str) -> Result<Option<&'a Opt>, String> {
    if let Some(o) = opts
        .iter()
        .find(|o| o.long == name || o.short == Some(name))
    {
        return Ok(Some(o));
    }
    if !name.starts_with("--") || name.len() < 3 {
        return Ok(None);
    }
    let hits: Vec<&Opt> = opts.iter().filter(|o| o.long.starts_with(name)).collect();
    let mut longs: Vec<&str> = hits.iter().map(|o| o.long).collect();
    longs.dedup();
    match longs.len() {
        0 => Ok(None),
        1 => Ok(Some(hits[0])),
        _ => Err(format!(
            "ambiguous option: {name} could match {}",
            longs.join(", ")
        )),
    }
}

/// A token argparse treats as a value even though it starts with `-`.
fn looks_negative_number(tok: &str) -> bool {
    tok.len() > 1 && tok.starts_with('-') && tok[1..].parse::<f64>().is_ok()
}

fn is_option_token(tok: &str) -> bool {
    tok.starts_with('-') && tok != "-" && !looks_negative_number(tok)
}

/// Outcome of parsing one level's tokens.
struct Level {
    values: HashMap<&'static str, Val>,
    positionals: Vec<String>,
    unknown: Vec<String>,
    help: bool,
    /// Index of the token where parsing stopped (root: the subcommand).
    stop: usize,
}

/// Parse `tokens` against `opts`. For the root level (`stop_at_positional`)
/// parsing stops at the first positional (the subcommand name).
fn parse_level(
    tokens: &[String],
    opts: &[Opt],
    prog: &str,
    usage: &str,
    stop_at_positional: bool,
) -> Result<Level, BrrError> {
    let mut lv = Level {
        values: HashMap::new(),
        positionals: Vec::new(),
        unknown: Vec::new(),
        help: false,
        stop: tokens.len(),
    };
    let mut i = 0;
    let mut only_positionals = false;
    while i < tokens.len() {
        let tok = &tokens[i];
        if only_positionals || !is_option_token(tok) {
            if stop_at_positional {
                lv.stop = i;
                return Ok(lv);
            }
            lv.positionals.push(tok.clone());
            i += 1;
            continue;
        }
        if tok == "--" {
            only_positionals = true;
            i += 1;
            continue;
        }
        let help_prefix = tok.starts_with("--h") && "--help".starts_with(tok.as_str());
        if tok == "-h" || help_prefix {
            lv.help = true;
            i += 1;
            continue;
        }
        // Split `--opt=value` and `-dVALUE`.
        let (name, inline): (String, Option<String>) = if tok.starts_with("--") {
            match tok.split_once('=') {
                Some((n, v)) => (n.to_string(), Some(v.to_string())),
                None => (tok.clone(), None),
            }
        } else if tok.len() > 2 {
            (tok[..2].to_string(), Some(tok[2..].to_string()))
        } else {
            (tok.clone(), None)
        };
        let found = lookup(opts, &name).map_err(|m| usage_error(usage, prog, &m))?;
        let Some(o) = found else {
            lv.unknown.push(tok.clone());
            i += 1;
            continue;
        };
        let label = opt_strings(o);
        if o.kind == Kind::Flag {
            if let Some(v) = inline {
                if tok.starts_with("--") {
                    return Err(usage_error(
                        usage,
                        prog,
                        &format!(
                            "argument {label}: ignored explicit argument {}",
                            py_repr(&v)
                        ),
                    ));
                }
                // `-xc`: a cluster of short flags.
                lv.values.insert(o.dest, Val::Flag);
                let mut rest = v.as_str();
                while !rest.is_empty() {
                    let short = format!("-{}", &rest[..1]);
                    match lookup(opts, &short).ok().flatten() {
                        Some(o2) if o2.kind == Kind::Flag => {
                            lv.values.insert(o2.dest, Val::Flag);
                            rest = &rest[1..];
                        }
                        Some(o2) => {
                            let val = convert(o2.kind, &rest[1..]).map_err(|m| {
                                usage_error(
                                    usage,
                                    prog,
                                    &format!("argument {}: {m}", opt_strings(o2)),
                                )
                            })?;
                            lv.values.insert(o2.dest, val);
                            rest = "";
                        }
                        None => {
                            lv.unknown.push(tok.clone());
                            rest = "";
                        }
                    }
                }
            } else {
                lv.values.insert(o.dest, Val::Flag);
            }
            i += 1;
            continue;
        }
        let raw = if let Some(v) = inline {
            i += 1;
            Some(v)
        } else if o.kind == Kind::OptionalPath {
            match tokens.get(i + 1) {
                Some(next) if !is_option_token(next) => {
                    i += 2;
                    Some(next.clone())
                }
                _ => {
                    i += 1;
                    None
                }
            }
        } else {
            match tokens.get(i + 1) {
                Some(next) if !is_option_token(next) => {
                    i += 2;
                    Some(next.clone())
                }
                _ => {
                    return Err(usage_error(
                        usage,
                        prog,
                        &format!("argument {label}: expected one argument"),
                    ))
                }
            }
        };
        let val = match raw {
            Some(r) => convert(o.kind, &r)
                .map_err(|m| usage_error(usage, prog, &format!("argument {label}: {m}")))?,
            None => Val::Str(String::new()),
        };
        lv.values.insert(o.dest, val);
    }
    Ok(lv)
}

fn flag(v: &HashMap<&str, Val>, k: &str) -> bool {
    matches!(v.get(k), Some(Val::Flag))
}

fn float_or(v: &HashMap<&str, Val>, k: &str, d: f64) -> f64 {
    match v.get(k) {
        Some(Val::Float(f)) => *f,
        _ => d,
    }
}

fn int_or(v: &HashMap<&str, Val>, k: &str, d: u64) -> u64 {
    match v.get(k) {
        Some(Val::Int(i)) => *i,
        _ => d,
    }
}

/// Parse the arguments after the program name.
pub fn parse(args: &[String]) -> Result<Parsed, BrrError> {
    let root_usage_text = root_usage();
    let root = parse_level(args, ROOT_OPTS, "brr", &root_usage_text, true)?;
    if flag(&root.values, "version") {
        return Ok(Parsed::Print(VERSION_TEXT.to_string()));
    }
    if root.help {
        return Ok(Parsed::Print(root_help()));
    }
    let Some(name) = args.get(root.stop) else {
        if !root.unknown.is_empty() {
            return Err(root_error(&format!(
                "unrecognized arguments: {}",
                root.unknown.join(" ")
            )));
        }
        if ["json", "csv", "pretty"]
            .iter()
            .any(|k| flag(&root.values, k))
        {
            return Err(root_error("--json, --csv, and --pretty require a subcommand; use 'brr prog --json' to list programs"));
        }
        return finish(root.values.clone(), "top", None);
    };
    let Some(sub) = SUBCOMMANDS.iter().find(|s| s.name == name) else {
        let list: Vec<String> = SUBCOMMANDS.iter().map(|s| py_repr(s.name)).collect();
        return Err(root_error(&format!(
            "argument object_type: invalid choice: {} (choose from {})",
            py_repr(name),
            list.join(", ")
        )));
    };
    let prog = format!("brr {}", sub.name);
    let usage = sub_usage(sub);
    let rest = &args[root.stop + 1..];
    let lv = parse_level(rest, sub.opts, &prog, &usage, false)?;
    if lv.help {
        return Ok(Parsed::Print(sub_help(sub)));
    }
    let mut unknown = root.unknown.clone();
    unknown.extend(lv.unknown.iter().cloned());
    let mut positionals = lv.positionals.clone();
    let mut sub_values = lv.values.clone();
    let mut positional = match sub.positional {
        None => None,
        Some(_) if positionals.is_empty() => None,
        Some(_) => Some(positionals.remove(0)),
    };
    // `brr dump --devmode 632`: the optional DIR took the program ID. With
    // no other PROG_ID given, a number there is the ID and DIR is the default.
    if sub.name == "dump" && positional.is_none() {
        if let Some(Val::Str(dir)) = sub_values.get("devmode") {
            if !dir.is_empty() && dir.bytes().all(|b| b.is_ascii_digit()) {
                positional = Some(dir.clone());
                sub_values.insert("devmode", Val::Str(String::new()));
            }
        }
    }
    unknown.append(&mut positionals);
    if !unknown.is_empty() {
        return Err(root_error(&format!(
            "unrecognized arguments: {}",
            unknown.join(" ")
        )));
    }
    if sub.name != "top" && root.values.keys().any(|k| is_top_only(k)) {
        return Err(root_error(
            "top options may only be used with bare 'brr' or the 'top' command",
        ));
    }
    if sub.name == "top"
        && ["json", "csv", "pretty"]
            .iter()
            .any(|k| flag(&root.values, k))
    {
        return Err(root_error(
            "--json, --csv, and --pretty are not supported by top",
        ));
    }
    let prog_id = match (sub.positional, positional) {
        (None, _) => 0,
        (Some(label), None) => {
            return Err(usage_error(
                &usage,
                &prog,
                &format!("the following arguments are required: {label}"),
            ))
        }
        (Some(label), Some(raw)) => match convert(Kind::PosInt, &raw) {
            Ok(Val::Int(id)) => id,
            Ok(_) => 0,
            Err(m) => {
                return Err(usage_error(
                    &usage,
                    &prog,
                    &format!("argument {label}: {m}"),
                ))
            }
        },
    };
    // Root values first, subcommand values override (last one wins).
    let mut v = root.values.clone();
    v.extend(sub_values);
    finish(v, sub.name, Some(prog_id))
}

fn str_or(v: &HashMap<&str, Val>, k: &str, d: &str) -> String {
    match v.get(k) {
        Some(Val::Str(s)) => s.clone(),
        _ => d.to_string(),
    }
}

fn usize_of(n: u64) -> usize {
    n.min(usize::MAX as u64) as usize
}

/// Post-parse validation (spec §2.7 steps 3–8) and the command value.
fn finish(
    v: HashMap<&'static str, Val>,
    name: &str,
    prog_id: Option<u64>,
) -> Result<Parsed, BrrError> {
    let json = flag(&v, "json");
    let csv = flag(&v, "csv");
    let pretty = flag(&v, "pretty");
    if json && csv {
        return Err(root_error("--json and --csv are mutually exclusive"));
    }
    if pretty && !json {
        return Err(root_error("--pretty requires --json"));
    }
    let format = if json {
        Format::Json { pretty }
    } else if csv {
        Format::Csv
    } else {
        Format::Text
    };
    let kernel_samples = flag(&v, "kernel_samples");
    if str_or(&v, "call_graph", "fp") == "lbr" && !kernel_samples {
        return Err(root_error("--call-graph lbr requires --kernel-samples"));
    }
    if flag(&v, "kernel_ip_detail") && !kernel_samples {
        return Err(root_error("--kernel-ip-detail requires --kernel-samples"));
    }
    let prog_id = prog_id.unwrap_or(0);
    let command = match name {
        "prog" => Command::Prog {
            stats: flag(&v, "stats"),
        },
        "activity" => Command::Activity {
            duration: float_or(&v, "duration", 5.0),
            limit: usize_of(int_or(&v, "limit", 20)),
            all: flag(&v, "all"),
        },
        "map" => Command::Map,
        "link" => Command::Link,
        "btf" => Command::Btf,
        "dump" => Command::Dump {
            prog_id,
            devmode: v.contains_key("devmode").then(|| str_or(&v, "devmode", "")),
        },
        "dump-compare" => Command::DumpCompare { prog_id },
        "perf-events" => Command::PerfEvents {
            frequency: int_or(&v, "frequency", 997),
        },
        "profile" => Command::Profile(ProfileArgs {
            duration: float_or(&v, "duration", 5.0),
            frequency: int_or(&v, "frequency", 997),
            event: str_or(&v, "event", "auto"),
            limit: usize_of(int_or(&v, "limit", 20)),
            line_limit: usize_of(int_or(&v, "line_limit", 10)),
            program_id: match v.get("program_id") {
                Some(Val::Int(i)) => Some(*i),
                _ => None,
            },
            kernel_samples,
            kernel_ip_detail: flag(&v, "kernel_ip_detail"),
            call_graph: if str_or(&v, "call_graph", "fp") == "lbr" {
                "lbr"
            } else {
                "fp"
            },
            wide: flag(&v, "wide"),
            perf_buffer_pages: Some(int_or(&v, "perf_buffer_pages", 0)).filter(|&p| p > 0),
            perf_drain_ms: Some(int_or(&v, "perf_drain_ms", 0)).filter(|&p| p > 0),
            fail_on_loss: flag(&v, "fail_on_loss"),
            devmode: v.contains_key("devmode").then(|| str_or(&v, "devmode", "")),
        }),
        _ => {
            let t = TopOptions {
                delay: float_or(&v, "delay", 1.0),
                limit: usize_of(int_or(&v, "limit", 20)),
                event: str_or(&v, "event", "auto"),
                profile_duration: float_or(&v, "profile_duration", 5.0),
                frequency: int_or(&v, "frequency", 997),
                line_limit: match v.get("line_limit") {
                    Some(Val::Int(n)) => Some(usize_of(*n)),
                    _ => None,
                },
                source_limit: usize_of(int_or(&v, "source_limit", 0)),
                textmode: flag(&v, "textmode"),
                profile_top: flag(&v, "profile_top"),
                collapse_samples: flag(&v, "collapse_samples"),
                kernel_samples: flag(&v, "kernel_samples"),
                kernel_ip_detail: flag(&v, "kernel_ip_detail"),
                call_graph: str_or(&v, "call_graph", "fp"),
                program_id: match v.get("program_id") {
                    Some(Val::Int(n)) => Some(*n),
                    _ => None,
                },
                mixed: str_or(&v, "inspect_mode", "source") == "mixed",
                light: flag(&v, "light"),
                devmode: v.contains_key("devmode").then(|| str_or(&v, "devmode", "")),
                perf_buffer_pages: int_or(&v, "perf_buffer_pages", 0),
                perf_drain_ms: int_or(&v, "perf_drain_ms", 0),
                fail_on_loss: flag(&v, "fail_on_loss"),
            };
            if t.collapse_samples && !(t.textmode && t.profile_top) {
                return Err(root_error(
                    "--collapse-samples requires --textmode and --profile-top",
                ));
            }
            Command::Top(t)
        }
    };
    Ok(Parsed::Run(Cli {
        bpffs: match v.get("bpffs") {
            Some(Val::Str(s)) => s.clone(),
            _ => "/sys/fs/bpf".to_string(),
        },
        format,
        extended: flag(&v, "extended"),
        cumulative: flag(&v, "cumulative"),
        command,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(s: &str) -> Result<Parsed, BrrError> {
        let args: Vec<String> = s.split_whitespace().map(String::from).collect();
        parse(&args)
    }

    fn cli(s: &str) -> Cli {
        match run(s) {
            Ok(Parsed::Run(c)) => c,
            other => panic!("{s}: {other:?}"),
        }
    }

    fn err_line(s: &str) -> String {
        match run(s) {
            Err(BrrError::Usage(t)) => t.lines().last().unwrap().to_string(),
            other => panic!("{s}: {other:?}"),
        }
    }

    #[test]
    fn globals_before_or_after() {
        assert_eq!(cli("--csv map").format, Format::Csv);
        assert_eq!(
            cli("--json prog --pretty").format,
            Format::Json { pretty: true }
        );
        assert_eq!(
            cli("--pretty prog --json").format,
            Format::Json { pretty: true }
        );
        assert!(cli("-x prog").extended);
        assert!(cli("-x btf").extended);
        assert_eq!(cli("--bpffs /tmp/x prog").bpffs, "/tmp/x");
        assert_eq!(cli("--bpf=/y prog").bpffs, "/y");
    }

    #[test]
    fn activity_values() {
        let c = cli("activity -d 2.5 --limit 3 --all -cx");
        assert_eq!(
            c.command,
            Command::Activity {
                duration: 2.5,
                limit: 3,
                all: true
            }
        );
        assert!(c.cumulative && c.extended);
        assert_eq!(
            cli("activity --dur=1_0").command,
            Command::Activity {
                duration: 10.0,
                limit: 20,
                all: false
            }
        );
        assert_eq!(
            cli("activity -d0.5").command,
            Command::Activity {
                duration: 0.5,
                limit: 20,
                all: false
            }
        );
    }

    #[test]
    fn value_errors() {
        assert_eq!(
            err_line("activity -d 0"),
            "brr activity: error: argument -d/--duration: must be greater than 0"
        );
        assert_eq!(
            err_line("activity -d -1"),
            "brr activity: error: argument -d/--duration: must be greater than 0"
        );
        for bad in ["nan", "inf", "-inf", "abc", "1e999"] {
            assert_eq!(
                err_line(&format!("activity -d {bad}")),
                "brr activity: error: argument -d/--duration: must be a number",
                "{bad}"
            );
        }
        assert_eq!(
            err_line("activity --limit -1"),
            "brr activity: error: argument --limit: must be 0 or greater"
        );
        assert_eq!(
            err_line("activity --limit 1.5"),
            "brr activity: error: argument --limit: must be an integer"
        );
        assert_eq!(
            err_line("activity -d"),
            "brr activity: error: argument -d/--duration: expected one argument"
        );
        assert_eq!(
            err_line("activity --limit 99999999999999999999999"),
            "brr activity: error: argument --limit: must be at most 18446744073709551615"
        );
        assert_eq!(
            err_line("activity -d 1e300"),
            "brr activity: error: argument -d/--duration: must be at most 10000000"
        );
        assert!(matches!(
            cli("activity --limit 18446744073709551615").command,
            Command::Activity { .. }
        ));
    }

    #[test]
    fn post_parse_validation() {
        assert_eq!(
            err_line("--json"),
            "brr: error: --json, --csv, and --pretty require a subcommand; use 'brr prog --json' to list programs"
        );
        assert_eq!(
            err_line("prog --pretty"),
            "brr: error: --pretty requires --json"
        );
        assert_eq!(
            err_line("--pretty prog"),
            "brr: error: --pretty requires --json"
        );
        assert_eq!(
            err_line("prog --json --csv"),
            "brr: error: --json and --csv are mutually exclusive"
        );
        assert_eq!(
            err_line("--json prog --csv"),
            "brr: error: --json and --csv are mutually exclusive"
        );
        assert_eq!(
            err_line("prog --csv --pretty"),
            "brr: error: --pretty requires --json"
        );
    }

    #[test]
    fn unknown_things() {
        assert_eq!(
            err_line("prog -c"),
            "brr: error: unrecognized arguments: -c"
        );
        assert_eq!(
            err_line("prog --bpffs /x"),
            "brr: error: unrecognized arguments: --bpffs /x"
        );
        assert_eq!(
            err_line("prog -V"),
            "brr: error: unrecognized arguments: -V"
        );
        assert!(err_line("foo").starts_with(
            "brr: error: argument object_type: invalid choice: 'foo' (choose from 'prog', 'activity'"
        ));
        assert!(err_line("list").contains("invalid choice: 'list'"));
    }

    #[test]
    fn version_and_help() {
        assert_eq!(run("-V prog").unwrap(), Parsed::Print(VERSION_TEXT.into()));
        assert_eq!(
            run("-V --json").unwrap(),
            Parsed::Print(VERSION_TEXT.into())
        );
        match run("--help").unwrap() {
            Parsed::Print(t) => {
                assert!(t.contains("{prog,activity,"));
                assert!(!t.contains("list"));
            }
            other => panic!("{other:?}"),
        }
        assert!(
            matches!(run("activity -h").unwrap(), Parsed::Print(t) if t.contains("--duration"))
        );
    }

    #[test]
    fn ambiguous_prefix() {
        assert_eq!(
            err_line("--c prog"),
            "brr: error: ambiguous option: --c could match --csv, --cumulative, --collapse-samples, --call-graph"
        );
        assert!(cli("--ext prog").extended);
        assert!(cli("prog --st").command == Command::Prog { stats: true });
    }

    fn top(s: &str) -> TopOptions {
        match cli(s).command {
            Command::Top(t) => t,
            other => panic!("{s}: {other:?}"),
        }
    }

    #[test]
    fn dump_grammar() {
        assert_eq!(
            cli("dump 632").command,
            Command::Dump {
                prog_id: 632,
                devmode: None
            }
        );
        assert_eq!(
            cli("dump 632 --devmode").command,
            Command::Dump {
                prog_id: 632,
                devmode: Some(String::new())
            }
        );
        assert_eq!(
            cli("dump --devmode=/src 632 --json").command,
            Command::Dump {
                prog_id: 632,
                devmode: Some("/src".into())
            }
        );
        // The optional DIR never swallows the program ID.
        assert_eq!(
            cli("dump --devmode 632").command,
            Command::Dump {
                prog_id: 632,
                devmode: Some(String::new())
            }
        );
        assert_eq!(
            cli("dump --devmode 17 632").command,
            Command::Dump {
                prog_id: 632,
                devmode: Some("17".into())
            }
        );
        assert_eq!(
            err_line("dump --devmode src"),
            "brr dump: error: the following arguments are required: PROG_ID"
        );
        assert_eq!(
            err_line("dump"),
            "brr dump: error: the following arguments are required: PROG_ID"
        );
        assert_eq!(
            err_line("dump abc"),
            "brr dump: error: argument PROG_ID: must be an integer"
        );
        assert_eq!(
            err_line("dump -5"),
            "brr dump: error: argument PROG_ID: must be greater than 0"
        );
        assert_eq!(
            err_line("dump 5 6"),
            "brr: error: unrecognized arguments: 6"
        );
        // IDs past 32 bits are kept, not truncated.
        assert_eq!(
            cli("dump-compare 4294967296 --csv").command,
            Command::DumpCompare {
                prog_id: 4294967296
            }
        );
        assert!(cli("-x dump 5").extended);
        assert_eq!(
            err_line("--program-id 5 dump 632"),
            "brr: error: top options may only be used with bare 'brr' or the 'top' command"
        );
    }

    #[test]
    fn top_grammar() {
        let t = top("");
        assert_eq!(
            (t.delay, t.limit, t.line_limit, t.textmode),
            (1.0, 20, None, false)
        );
        assert_eq!(top("-d 10").delay, 10.0);
        assert_eq!(top("-d 4 top -d 9").delay, 9.0);
        assert_eq!(top("-d 4 top").delay, 4.0);
        let t = top("top --textmode --profile-top --collapse-samples --program-id 7 --inspect-mode mixed --line-limit 0 --source-limit 5 --kernel-samples --kernel-ip-detail --fail-on-loss --perf-buffer-pages auto --perf-drain-ms 50 -F 99 --event cpu-clock --call-graph lbr");
        assert!(t.textmode && t.profile_top && t.collapse_samples && t.mixed);
        assert_eq!(t.program_id, Some(7));
        assert_eq!((t.line_limit, t.source_limit), (Some(0), 5));
        assert_eq!(
            (t.perf_buffer_pages, t.perf_drain_ms, t.frequency),
            (0, 50, 99)
        );
        assert!(t.kernel_ip_detail && t.fail_on_loss);
        assert_eq!(
            (t.event.as_str(), t.call_graph.as_str()),
            ("cpu-clock", "lbr")
        );
        assert!(cli("top -xc").extended && cli("-c top").cumulative);
        assert_eq!(
            err_line("-d 10 activity"),
            "brr: error: top options may only be used with bare 'brr' or the 'top' command"
        );
        assert_eq!(
            err_line("--kernel-ip-detail prog"),
            "brr: error: top options may only be used with bare 'brr' or the 'top' command"
        );
        for s in ["--json top", "--csv top --textmode", "--pretty top"] {
            assert_eq!(
                err_line(s),
                "brr: error: --json, --csv, and --pretty are not supported by top",
                "{s}"
            );
        }
        assert_eq!(
            err_line("top --json"),
            "brr: error: unrecognized arguments: --json"
        );
        assert_eq!(
            err_line("--json --textmode"),
            "brr: error: --json, --csv, and --pretty require a subcommand; use 'brr prog --json' to list programs"
        );
        assert_eq!(
            err_line("--collapse-samples"),
            "brr: error: --collapse-samples requires --textmode and --profile-top"
        );
        assert_eq!(
            err_line("top --textmode --kernel-ip-detail"),
            "brr: error: --kernel-ip-detail requires --kernel-samples"
        );
        assert_eq!(
            err_line("--call-graph lbr"),
            "brr: error: --call-graph lbr requires --kernel-samples"
        );
        assert_eq!(
            err_line("top -d 0"),
            "brr top: error: argument -d/--delay: must be greater than 0"
        );
        assert_eq!(
            err_line("-d nan"),
            "brr: error: argument -d/--delay: must be a number"
        );
        assert_eq!(
            err_line("top --inspect-mode x"),
            "brr top: error: argument --inspect-mode: invalid choice: 'x' (choose from 'source', 'mixed')"
        );
        assert_eq!(
            err_line("top --perf-buffer-pages 3"),
            "brr top: error: argument --perf-buffer-pages: perf buffer pages must be auto or a positive power of two"
        );
        assert_eq!(
            err_line("--p"),
            "brr: error: ambiguous option: --p could match --pretty, --profile-duration, --profile-top, --program-id, --perf-buffer-pages, --perf-drain-ms"
        );
        assert!(
            matches!(run("top -h").unwrap(), Parsed::Print(t) if t.contains("--inspect-mode") && !t.contains("--all"))
        );
    }

    #[test]
    fn repr_quoting() {
        assert_eq!(py_repr("xyz"), "'xyz'");
        assert_eq!(py_repr("it's"), "\"it's\"");
        assert_eq!(py_repr("a'\"b"), "'a\\'\"b'");
    }
}
