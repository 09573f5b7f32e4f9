//! The clap grammar. Values are typed here: each option's parser
//! (`super::parsers`) checks its text while clap reads the arguments, so
//! that each error names the parser that owns the option (`brr activity:
//! error: argument -d/--duration: ...`) exactly as the original did. The
//! rules between options are checked after parsing (`super::finish`).
//!
//! The settings every level takes (`--json`, `--csv`, `--pretty`, `-x`,
//! `-c`) are declared where each level shows them in its help, and read
//! once from all levels' matches (`super::Shared`); root and `top` values
//! merge through clap's own update, "last one wins" (`super::typed`). The
//! parse settings are the root's: clap passes them down (see
//! `super::command` for the one it does not).

use std::marker::PhantomData;
use std::net::SocketAddr;
use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use super::parsers::{self, checked, Auto, Dialect, InspectMode, ProfileDialect, TopDialect};
use crate::profile::{CallGraph, Event};
use crate::values;

/// What brr is, after its name in `--help` and its version in
/// `--version` (a macro so that `concat!` can take it).
macro_rules! about {
    () => {
        "eBPF Runtime Reporter and Profiler by Tanel Poder (tanelpoder.com)."
    };
}

pub(crate) const VERSION_TEXT: &str = concat!("brr ", env!("CARGO_PKG_VERSION"), " - ", about!());

/// The original's choice list, kept in the usage text users grep for.
const ROOT_USAGE: &str = "brr [OPTIONS] [COMMAND]
       brr [OPTIONS] {prog,activity,top,map,link,btf,perf-events,dump,
                      dump-compare,profile,exporter,mcp,serve-mcp,doctor,
                      completions,man} ...";

#[derive(Parser, Debug)]
#[command(
    name = "brr",
    bin_name = "brr",
    version = concat!(env!("CARGO_PKG_VERSION"), " - ", about!()),
    about = about!(),
    override_usage = ROOT_USAGE,
    disable_help_subcommand = true,
    args_override_self = true,
    infer_long_args = true,
    allow_negative_numbers = true
)]
pub(super) struct RootArgs {
    #[arg(
        long,
        value_name = "BPFFS",
        help = "Scan only this bpffs directory for pinned paths (default: every bpffs mount)."
    )]
    pub bpffs: Option<PathBuf>,
    #[arg(
        long,
        value_name = "DIR",
        help = "Where the kubelet's pods/ and containers/ log directories are, which name pods and containers (default /var/log)."
    )]
    pub kubelet_logs: Option<PathBuf>,
    #[command(flatten)]
    pub columns: Columns,
    #[command(flatten)]
    pub top: TopArgs,
    #[command(subcommand)]
    pub command: Option<Sub>,
}

/// `--json`, `--csv` and `--pretty`, declared at each level that prints
/// them; their values are read from all levels at once (`super::Shared`).
#[derive(Args, Debug, Clone, Copy, Default)]
pub(super) struct OutputFlags {
    #[arg(long, help = "Print JSON.")]
    pub json: bool,
    #[arg(long, help = "Print CSV.")]
    pub csv: bool,
    #[arg(long, help = "Indent JSON output (requires --json).")]
    pub pretty: bool,
}

/// The output flags with `-x` and `-c`, as the root and `top` take them
/// (read through `super::Shared`, like every level's).
#[derive(Args, Debug)]
pub(super) struct Columns {
    #[command(flatten)]
    pub out: OutputFlags,
    #[arg(short = 'x', long, help = EXTENDED)]
    pub extended: bool,
    #[arg(short = 'c', long, help = CUMULATIVE)]
    pub cumulative: bool,
}

const EXTENDED: &str = "Show extra columns such as TAG and PINNED.";
const CUMULATIVE: &str = "Show cumulative runtime columns and the NS_PER/s rate.";

impl OutputFlags {
    pub(super) fn any(&self) -> bool {
        self.json || self.csv || self.pretty
    }
}

/// `--devmode [DIR]`, taken by `top`, `dump` and `profile`.
#[derive(Args, Debug, Clone, Default, PartialEq)]
pub(super) struct Devmode {
    #[arg(
        long,
        value_name = "DIR",
        num_args = 0..=1,
        help = "Read source files under DIR (default: current directory) for context lines and missing BTF source text."
    )]
    pub devmode: Option<Option<PathBuf>>,
}

/// `-F`, taken by the commands that sample and by `perf-events`.
#[derive(Args, Debug, Clone, Default, PartialEq)]
pub(super) struct Frequency {
    #[arg(
        short = 'F',
        long,
        value_name = "HZ",
        value_parser = parsers::frequency,
        help = "Sampling frequency in Hz (default 997)."
    )]
    pub frequency: Option<u64>,
}

/// Profile files written from the same capture as the report.
#[derive(Args, Debug, Clone, Default, PartialEq)]
pub(super) struct ExportFlags {
    #[arg(
        long,
        value_name = "FILE",
        help = "Also write folded stacks to FILE; - writes them to stdout in place of the report."
    )]
    pub folded: Option<PathBuf>,
    #[arg(
        long,
        value_name = "FILE.svg",
        help = "Also write a flame graph SVG to FILE.svg."
    )]
    pub flamegraph: Option<PathBuf>,
    #[arg(
        long,
        value_name = "FILE",
        help = "Also write a gzipped pprof profile (go tool pprof, Parca, Pyroscope) to FILE."
    )]
    pub pprof: Option<PathBuf>,
}

/// The capture options `top` (and bare `brr`) and `profile` share. The
/// capture length is not among them: `profile -d` is the capture length,
/// whereas `top -d` is the activity window and `top --profile-duration` the
/// capture length.
#[derive(Args, Debug, Clone, Default, PartialEq)]
pub(super) struct CaptureArgs<D: Dialect> {
    #[command(flatten)]
    pub hz: Frequency,
    #[arg(
        long,
        value_name = "EVENT",
        value_parser = parsers::event,
        help = "Perf event to sample (default auto; see 'brr perf-events')."
    )]
    pub event: Option<Event>,
    #[arg(
        long,
        help = "Capture callchains and attribute kernel time under eBPF programs."
    )]
    pub kernel_samples: bool,
    #[arg(
        long,
        help = "Show exact kernel IPs instead of functions (requires --kernel-samples)."
    )]
    pub kernel_ip_detail: bool,
    #[arg(
        long,
        value_name = "{fp,lbr}",
        value_parser = parsers::call_graph,
        help = "Callchain source (default fp; lbr requires --kernel-samples)."
    )]
    pub call_graph: Option<CallGraph>,
    #[arg(
        long,
        value_name = "auto|PAGES",
        value_parser = D::perf_pages,
        help = "Perf ring data pages per CPU: auto or a power of two (default auto)."
    )]
    pub perf_buffer_pages: Option<Auto>,
    #[arg(
        long,
        value_name = "auto|MS",
        value_parser = D::drain_ms,
        help = "Longest interval between perf ring sweeps: auto or whole milliseconds (default auto)."
    )]
    pub perf_drain_ms: Option<Auto>,
    #[arg(long, help = "Exit 1 when the profile is incomplete.")]
    pub fail_on_loss: bool,
    #[command(flatten)]
    pub exports: ExportFlags,
    #[arg(
        long,
        help = "Add each program's sampled native JIT instructions (reads their JIT code)."
    )]
    pub annotate: bool,
    #[arg(skip)]
    pub dialect: PhantomData<D>,
}

/// `top` options, accepted at root level (bare `brr`) and by `brr top`.
#[derive(Args, Debug, Clone, Default, PartialEq)]
pub(super) struct TopArgs {
    #[arg(
        short = 'd',
        long,
        value_name = "SECONDS",
        value_parser = checked(values::seconds),
        help = "Length of each activity sampling window in seconds (default 1)."
    )]
    pub delay: Option<f64>,
    #[arg(
        long,
        value_name = "N",
        value_parser = checked(values::non_negative_int),
        help = "Rows in the textmode activity table; 0 shows all (default 20)."
    )]
    pub limit: Option<u64>,
    #[arg(long, hide = true)]
    pub all: bool,
    #[arg(
        long,
        value_name = "SECONDS",
        value_parser = checked(values::seconds),
        help = "Profile length in seconds (default 5)."
    )]
    pub profile_duration: Option<f64>,
    #[arg(
        long,
        value_name = "N",
        value_parser = checked(values::non_negative_int),
        help = "Detailed hotspot rows per bucket; 0 = unlimited (default 10 in textmode, unlimited in the TUI)."
    )]
    pub line_limit: Option<u64>,
    #[arg(
        long,
        value_name = "N",
        value_parser = checked(values::non_negative_int),
        help = "Keep only the N hottest detail rows of the textmode inspect table; 0 = all."
    )]
    pub source_limit: Option<u64>,
    #[arg(long, help = "Print one text snapshot and exit.")]
    pub textmode: bool,
    #[arg(long, help = "Profile the top program (or --program-id) in textmode.")]
    pub profile_top: bool,
    #[arg(
        long,
        help = "Fold helper/kernel rows into their source lines (textmode with --profile-top)."
    )]
    pub collapse_samples: bool,
    #[arg(
        long,
        value_name = "PROG_ID",
        value_parser = checked(values::object_id),
        help = "Inspect this program instead of the top activity row."
    )]
    pub program_id: Option<u32>,
    #[arg(
        long,
        value_name = "{source,mixed,native}",
        value_parser = parsers::inspect_mode,
        help = "Inspect view: source lines, with translated instructions, or with native instructions (default source)."
    )]
    pub inspect_mode: Option<InspectMode>,
    #[arg(long, help = "Light colour theme.")]
    pub light: bool,
    #[command(flatten)]
    pub devmode: Devmode,
    #[command(flatten)]
    pub capture: CaptureArgs<TopDialect>,
    #[arg(
        long,
        value_name = "NS",
        value_parser = checked(values::positive_int),
        help = "Hot-and-slow hint: average run time above NS nanoseconds (textmode; default 300)."
    )]
    pub slow_ns: Option<u64>,
}

/// The commands. Each takes the root's parse settings, which clap passes
/// down.
#[derive(Subcommand, Debug)]
pub(super) enum Sub {
    #[command(about = "List loaded eBPF programs.")]
    Prog {
        #[command(flatten)]
        out: OutputFlags,
        #[arg(short = 'x', long, help = EXTENDED)]
        extended: bool,
        #[arg(
            long,
            help = "Enable runtime statistics while reading and show the cumulative RUN_CNT and RUN_TIME_NS counters (accumulated whenever statistics were enabled; this does not measure an interval)."
        )]
        stats: bool,
    },
    #[command(about = "Show eBPF program runtime deltas.")]
    Activity(ActivityArgs),
    #[command(about = "Show the live eBPF top TUI.")]
    Top {
        #[command(flatten)]
        top: TopArgs,
        #[command(flatten)]
        columns: Columns,
    },
    #[command(
        about = "List loaded eBPF maps.",
        mut_arg("extended", |a| a.help("Add the PINNED, OWNERS and MEMLOCK columns."))
    )]
    Map(MapLinkArgs),
    #[command(
        about = "List loaded eBPF links.",
        mut_arg("extended", |a| a.help("Add the PINNED and OWNERS columns."))
    )]
    Link(MapLinkArgs),
    #[command(about = "List loaded BTF objects.")]
    Btf {
        #[command(flatten)]
        out: OutputFlags,
        #[arg(
            short = 'x',
            long,
            help = "Add the PROGS and MAPS columns: the programs and maps that use each BTF object."
        )]
        extended: bool,
    },
    #[command(about = "List brr-supported perf events openable on this host.")]
    PerfEvents {
        #[command(flatten)]
        out: OutputFlags,
        #[command(flatten)]
        hz: Frequency,
    },
    // PROG_ID is optional to clap only so that `dump --devmode 42` can be
    // read as the ID (see `split_devmode_id`); it is required.
    #[command(
        about = "Dump translated instructions and source-line metadata for a program.",
        override_usage = "brr dump [OPTIONS] PROG_ID"
    )]
    Dump(DumpArgs),
    #[command(
        about = "Compare brr dump output with bpftool source-line metadata.",
        override_usage = "brr dump-compare [OPTIONS] PROG_ID"
    )]
    DumpCompare(DumpCompareArgs),
    #[command(about = "Profile BPF JIT execution with native perf_event_open sampling.")]
    Profile(ProfileCliArgs),
    #[command(
        about = "Show what eBPF costs this host: program, dispatch and statistics.",
        long_about = COST_ABOUT
    )]
    Cost(CostCliArgs),
    #[command(
        about = "Serve per-program eBPF metrics in the Prometheus text format.",
        long_about = "Serve per-program eBPF metrics in the Prometheus text format on GET /metrics, read from the kernel at each scrape. Runs until SIGTERM or SIGINT.\n\nThe kernel counts program runs and run time only while some process holds BPF_ENABLE_STATS, so the exporter holds it for its whole life: that adds two clock reads and a counter update to every run of every eBPF program on the host: 82 ns per run measured on a KVM guest, less where the clock is cheaper; `brr cost` measures it on this host (its STATS part). --no-stats avoids that cost and serves everything except the run counters."
    )]
    Exporter(ExporterArgs),
    #[command(
        about = "Serve the read-only tools to AI agents over MCP on stdin and stdout.",
        long_about = "Serve brr's answers as Model Context Protocol tools on stdin and stdout, for an agent's MCP client to start: list_programs, list_maps, list_links, activity, profile, dump and doctor, each returning the JSON document of the matching command with --json. Loads nothing and changes nothing; captures are at most 60 s and one at a time. Needs the privileges the tools need, or --connect to a root brr serve-mcp."
    )]
    Mcp(McpArgs),
    #[command(
        about = "Serve the MCP tools on a Unix socket, for brr mcp --connect.",
        long_about = "Serve the same MCP tools as brr mcp on a Unix socket, so that an agent's brr mcp --connect, run as an ordinary user, reaches a server that runs as root. Whoever may connect (the socket's mode and group) may use every tool. Runs until SIGTERM or SIGINT, then removes the socket."
    )]
    ServeMcp(ServeMcpArgs),
    #[command(
        about = "Show what brr can do on this host, and why not.",
        long_about = "Show what brr can do on this host, and why not: one row per check (kernel features, BTF, the JIT, kernel.kptr_restrict, perf settings and events, capabilities, mounts, the fd limit, who holds runtime statistics on) with ok, limited or missing, the detail and the fix; then every command with whether it works here. Needs no privilege, loads nothing, enables no statistics and changes no setting."
    )]
    Doctor {
        #[arg(long, help = "Print JSON.")]
        json: bool,
        // Accepted only to be refused with a reason (see `finish`).
        #[arg(long, hide = true)]
        csv: bool,
        #[arg(long, help = "Indent JSON output (requires --json).")]
        pretty: bool,
    },
    #[command(about = "Print a shell completion script.")]
    Completions {
        #[arg(value_name = "SHELL", value_enum, help = "Shell to complete for.")]
        shell: clap_complete::Shell,
    },
    #[command(about = "Print the man page (roff).")]
    Man {
        #[arg(
            long,
            value_name = "DIR",
            help = "Write one page per command (brr.1, brr-prog.1, ...) into DIR instead, and print their paths."
        )]
        dir: Option<PathBuf>,
    },
}

#[derive(Args, Debug)]
pub(super) struct ActivityArgs {
    #[command(flatten)]
    pub out: OutputFlags,
    #[arg(short = 'c', long, help = CUMULATIVE)]
    pub cumulative: bool,
    #[arg(short = 'x', long, help = EXTENDED)]
    pub extended: bool,
    #[arg(
        short = 'd',
        long,
        value_name = "SECONDS",
        value_parser = checked(values::seconds),
        help = "Measurement window in seconds (default 5)."
    )]
    pub duration: Option<f64>,
    #[arg(
        long,
        value_name = "N",
        value_parser = checked(values::non_negative_int),
        help = "Show at most N rows; 0 shows all (default 20)."
    )]
    pub limit: Option<u64>,
    #[arg(long, help = "Also show programs that did not run during the window.")]
    pub all: bool,
    #[arg(
        long,
        value_name = "SECONDS",
        value_parser = checked(values::seconds),
        help = "Stream back-to-back windows of SECONDS each, printing every window as it ends (JSON Lines with --json) until Ctrl-C or --count."
    )]
    pub interval: Option<f64>,
    #[arg(
        long,
        value_name = "N",
        value_parser = checked(values::positive_int),
        help = "Stop after N windows (requires --interval)."
    )]
    pub count: Option<u64>,
}

#[derive(Args, Debug)]
pub(super) struct MapLinkArgs {
    #[command(flatten)]
    pub out: OutputFlags,
    // Each command names the columns it adds (`Sub::Map`, `Sub::Link`).
    #[arg(short = 'x', long)]
    pub extended: bool,
}

#[derive(Args, Debug)]
pub(super) struct DumpArgs {
    #[command(flatten)]
    pub target: DumpCompareArgs,
    #[command(flatten)]
    pub devmode: Devmode,
    #[arg(
        long,
        help = "Disassemble the native JIT code of every function of the program under its source lines."
    )]
    pub jited: bool,
}

/// The program `dump` and `dump-compare` read, and their output flags.
#[derive(Args, Debug)]
pub(super) struct DumpCompareArgs {
    #[arg(
        value_name = "PROG_ID",
        value_parser = checked(values::object_id),
        help = "eBPF program ID"
    )]
    pub prog_id: Option<u32>,
    #[command(flatten)]
    pub out: OutputFlags,
}

/// The capture length and the programs reported, as `profile` and `cost`
/// take them.
#[derive(Args, Debug)]
pub(super) struct CaptureTarget {
    #[arg(
        short = 'd',
        long,
        value_name = "SECONDS",
        value_parser = checked(values::seconds),
        help = "Capture length in seconds (default 5)."
    )]
    pub duration: Option<f64>,
    #[arg(
        long,
        value_name = "PROG_ID",
        value_parser = checked(values::object_id),
        action = clap::ArgAction::Append,
        help = "Report only this program; repeat it for several."
    )]
    pub program_id: Vec<u32>,
}

#[derive(Args, Debug)]
pub(super) struct ProfileCliArgs {
    #[command(flatten)]
    pub out: OutputFlags,
    #[arg(short = 'x', long, help = EXTENDED)]
    pub extended: bool,
    #[command(flatten)]
    pub devmode: Devmode,
    #[command(flatten)]
    pub target: CaptureTarget,
    #[arg(
        long,
        value_name = "PID",
        value_parser = checked(values::object_id),
        help = "Report only the programs process PID holds file descriptors on."
    )]
    pub pid: Option<u32>,
    #[command(flatten)]
    pub capture: CaptureArgs<ProfileDialect>,
    #[arg(
        long,
        value_name = "N",
        value_parser = checked(values::non_negative_int),
        help = "Show at most N programs; 0 shows all (default 20)."
    )]
    pub limit: Option<u64>,
    #[arg(
        long,
        value_name = "N",
        value_parser = checked(values::non_negative_int),
        help = "Show at most N hotspot rows per program and list; 0 shows all (default 10)."
    )]
    pub line_limit: Option<u64>,
    #[arg(
        short = 'w',
        long,
        help = "One row per line record (not per source line), with addresses, full source paths and the SAMPLES column."
    )]
    pub wide: bool,
}

const COST_ABOUT: &str = "Show what eBPF costs this host. Samples every CPU with kernel callchains for the window while holding runtime statistics on, and splits each program's CPU into three parts: PROGRAM, the samples in its JIT code and what it calls (helpers, maps); DISPATCH, the samples in its hook's path from the kernel to the program and back with no program above them (the syscall tracepoint slow path, bpf_trace_run, trace_call_bpf, kprobe and fprobe handlers, trampolines, XDP, tc, cgroup and socket filter dispatchers); STATS, the clock reads and counter updates that runtime statistics add to every run while any process holds them on. A hook's dispatch goes to the programs attached there that ran, split by their runs; what brr cannot tie to a program is reported as unattributed dispatch. NS/RUN divides each part by the runs counted in the same window. Needs what `brr profile --kernel-samples` needs.";

/// `brr cost` options.
#[derive(Args, Debug)]
pub(super) struct CostCliArgs {
    #[command(flatten)]
    pub out: OutputFlags,
    #[command(flatten)]
    pub target: CaptureTarget,
    #[command(flatten)]
    pub hz: Frequency,
}

#[derive(Args, Debug)]
pub(super) struct ExporterArgs {
    #[arg(
        long,
        value_name = "ADDR:PORT",
        value_parser = checked(values::listen_address),
        help = "Address to listen on (default 127.0.0.1:9435; a non-loopback address serves the network)."
    )]
    pub listen: Option<SocketAddr>,
    #[arg(
        long,
        help = "Do not enable runtime statistics (saves the statistics' cost on every program run, 82 ns on a KVM guest; brr cost measures it here); run counters are not served."
    )]
    pub no_stats: bool,
    #[arg(
        long,
        help = "Also serve GET /debug/pprof/profile?seconds=N (default 30): a CPU profile of every eBPF program, with the helper and kernel frames under each source line, as gzipped pprof for Parca, Grafana Alloy or go tool pprof. One capture at a time; nothing is sampled between requests."
    )]
    pub serve_profiles: bool,
    #[arg(
        long,
        value_name = "HZ",
        value_parser = checked(values::positive_int),
        help = "Sampling frequency of served profiles (default 99; requires --serve-profiles)."
    )]
    pub profile_hz: Option<u64>,
    #[arg(
        long,
        value_name = "S",
        value_parser = checked(values::positive_int),
        help = "Longest profile a request may ask for, in seconds (default 60, at most 3600; requires --serve-profiles)."
    )]
    pub max_profile_seconds: Option<u64>,
    #[arg(
        long,
        value_name = "FILE",
        help = "Serve over TLS and/or behind basic auth as FILE says, in the Prometheus exporter-toolkit's web-config format (tls_server_config, basic_auth_users, http_server_config)."
    )]
    pub web_config: Option<std::path::PathBuf>,
    #[arg(
        long,
        help = "Ask for basic_auth_users' passwords on /debug/pprof/profile only; /metrics and / need none (requires --web-config and --serve-profiles)."
    )]
    pub profiles_auth_only: bool,
}

#[derive(Args, Debug)]
pub(super) struct McpArgs {
    #[arg(
        long,
        value_name = "PATH",
        help = "Relay to the brr serve-mcp socket at PATH instead of answering in this process."
    )]
    pub connect: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub(super) struct ServeMcpArgs {
    #[arg(long, value_name = "PATH", help = "The Unix socket to create.")]
    pub socket: PathBuf,
    #[arg(
        long,
        value_name = "MODE",
        value_parser = parsers::socket_mode,
        help = "The socket's mode, in octal (default 0660: root and the socket's group)."
    )]
    pub socket_mode: Option<u32>,
    #[arg(
        long,
        value_name = "GROUP",
        help = "The group that may connect (a name or a number)."
    )]
    pub socket_group: Option<String>,
}
