//! Grammar tests on `parse`.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use super::*;

fn run(s: &str) -> Result<Parsed, BrrError> {
    let args: Vec<std::ffi::OsString> = s.split_whitespace().map(Into::into).collect();
    parse(&args)
}

fn cli(s: &str) -> Cli {
    match run(s) {
        Ok(Parsed::Run(c)) => c,
        other => panic!("{s}: {other:?}"),
    }
}

/// What is said on stderr before the command runs (not while parsing).
fn warnings(s: &str) -> Vec<String> {
    crate::commands::bpffs_warning(&cli(s))
        .into_iter()
        .collect()
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
    assert!(cli("btf -x").extended);
    assert_eq!(cli("--bpffs /tmp/x prog").bpffs, Path::new("/tmp/x"));
    assert_eq!(cli("--bpf=/y prog").bpffs, Path::new("/y"));
    // Without --bpffs: every bpffs mount, and nothing to warn about.
    assert_eq!(cli("prog").bpffs, Path::new(EVERY_MOUNT));
    assert!(warnings("prog").is_empty());
    // A directory that is not on a bpffs is warned about, whatever the
    // command (the warning is printed before it runs).
    let w = warnings("--bpffs /nonexistent/brr-bpffs map");
    assert_eq!(
        w,
        ["--bpffs /nonexistent/brr-bpffs: No such file or directory; no pinned paths are shown"]
    );
    let w = warnings("--bpffs /proc prog");
    assert_eq!(
        w,
        ["--bpffs /proc is not on a bpffs and no bpffs is mounted below it; no pinned paths are shown"]
    );
    assert_eq!(cli("prog").kubelet_logs, Path::new("/var/log"));
    let c = cli("--kubelet-logs /k --json exporter");
    assert_eq!(
        (c.kubelet_logs.as_path(), c.format),
        (Path::new("/k"), Format::Json { pretty: false })
    );
    assert_eq!(cli("--kubelet=/k2 prog -x").kubelet_logs, Path::new("/k2"));
    assert_eq!(
        err_line("prog --kubelet-logs /k"),
        "brr: error: unrecognized arguments: --kubelet-logs"
    );
}

#[test]
fn activity_values() {
    let c = cli("activity -d 2.5 --limit 3 --all -cx");
    assert_eq!(
        c.command,
        Command::Activity {
            duration: 2.5,
            limit: 3,
            all: true,
            interval: None,
            count: 0,
        }
    );
    assert!(c.cumulative && c.extended);
    assert_eq!(
        cli("activity --dur=1_0").command,
        Command::Activity {
            duration: 10.0,
            limit: 20,
            all: false,
            interval: None,
            count: 0,
        }
    );
    assert_eq!(
        cli("activity -d0.5").command,
        Command::Activity {
            duration: 0.5,
            limit: 20,
            all: false,
            interval: None,
            count: 0,
        }
    );
}

#[test]
fn exporter_values() {
    assert_eq!(
        cli("exporter").command,
        Command::Exporter {
            listen: "127.0.0.1:9435".parse().unwrap(),
            stats: true,
            profiles: None,
            web_config: None,
            auth_scope: crate::serve::AuthScope::Everything,
        }
    );
    assert_eq!(
        cli("exporter --listen [::1]:0 --no-stats").command,
        Command::Exporter {
            listen: "[::1]:0".parse().unwrap(),
            stats: false,
            profiles: None,
            web_config: None,
            auth_scope: crate::serve::AuthScope::Everything,
        }
    );
    let serving = |frequency, max_seconds| {
        Some(crate::serve::ProfileServing {
            frequency,
            max_seconds,
        })
    };
    let profiles = |args: &str| match cli(args).command {
        Command::Exporter { profiles, .. } => profiles,
        other => panic!("{other:?}"),
    };
    assert_eq!(profiles("exporter --serve-profiles"), serving(99, 60));
    assert_eq!(
        profiles("exporter --serve-profiles --profile-hz 49 --max-profile-seconds 120"),
        serving(49, 120)
    );
    for (args, line) in [
        (
            "exporter --profile-hz 49",
            "brr exporter: error: --profile-hz requires --serve-profiles",
        ),
        (
            "exporter --max-profile-seconds 9",
            "brr exporter: error: --max-profile-seconds requires --serve-profiles",
        ),
        (
            "exporter --serve-profiles --max-profile-seconds 3601",
            "brr exporter: error: argument --max-profile-seconds: must be at most 3600",
        ),
    ] {
        assert_eq!(err_line(args), line, "{args}");
    }
    let help = match parse(&["exporter".into(), "--help".into()]) {
        Ok(Parsed::Print(text)) => text,
        other => panic!("{other:?}"),
    };
    assert!(
        help.contains("82 ns per run") && help.contains("brr cost"),
        "{help}"
    );
}

#[test]
fn doctor_formats() {
    assert_eq!(cli("doctor").command, Command::Doctor);
    assert_eq!(cli("doctor").format, Format::Text);
    assert_eq!(
        cli("doctor --json --pretty").format,
        Format::Json { pretty: true }
    );
    assert_eq!(cli("--json doctor").format, Format::Json { pretty: false });
    let refused = "brr: error: --csv is not supported by doctor (its checks and commands are two tables); use --json";
    assert_eq!(err_line("doctor --csv"), refused);
    assert_eq!(err_line("--csv doctor"), refused);
    assert_eq!(
        err_line("doctor --pretty"),
        "brr: error: --pretty requires --json"
    );
    assert_eq!(
        err_line("doctor -d 1"),
        "brr: error: unrecognized arguments: -d"
    );
    let help = match run("doctor --help") {
        Ok(Parsed::Print(text)) => text,
        other => panic!("{other:?}"),
    };
    assert!(help.contains("--json") && !help.contains("--csv"), "{help}");
}

/// `-x` names the columns each listing really adds (see
/// `render::listing::{maps, links}`).
#[test]
fn extended_help_names_the_columns() {
    for (cmd, words) in [
        ("map", "Add the PINNED, OWNERS and MEMLOCK columns."),
        ("link", "Add the PINNED and OWNERS columns."),
    ] {
        let help = match run(&format!("{cmd} --help")) {
            Ok(Parsed::Print(text)) => text,
            other => panic!("{other:?}"),
        };
        assert!(help.contains(&format!("-x, --extended  {words}")), "{help}");
    }
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
    for bad in ["nan", "inf", "abc", "1e999", "1__0"] {
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
        err_line("prog --bpffs /x"),
        "brr: error: unrecognized arguments: --bpffs"
    );
    assert_eq!(
        err_line("prog -V"),
        "brr: error: unrecognized arguments: -V"
    );
    assert!(err_line("foo")
        .starts_with("brr: error: invalid command: 'foo' (choose from 'prog', 'activity'"));
    assert!(err_line("list").contains("invalid command: 'list'"));
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
    assert!(matches!(run("activity -h").unwrap(), Parsed::Print(t) if t.contains("--duration")));
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
            devmode: None,
            jited: false,
        }
    );
    assert_eq!(
        cli("dump 632 --devmode").command,
        Command::Dump {
            prog_id: 632,
            devmode: Some(PathBuf::new()),
            jited: false,
        }
    );
    assert_eq!(
        cli("dump --devmode=/src 632 --json").command,
        Command::Dump {
            prog_id: 632,
            devmode: Some("/src".into()),
            jited: false,
        }
    );
    // The optional DIR never swallows the program ID.
    assert_eq!(
        cli("dump --devmode 632").command,
        Command::Dump {
            prog_id: 632,
            devmode: Some(PathBuf::new()),
            jited: false,
        }
    );
    assert_eq!(
        cli("dump --devmode 17 632").command,
        Command::Dump {
            prog_id: 632,
            devmode: Some("17".into()),
            jited: false,
        }
    );
    assert_eq!(
        cli("dump --devmode --jited 632 --json").command,
        Command::Dump {
            prog_id: 632,
            devmode: Some(PathBuf::new()),
            jited: true,
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
    // Kernel object IDs are u32: larger ones are rejected, never truncated.
    assert_eq!(
        cli("dump-compare 4294967295 --csv").command,
        Command::DumpCompare { prog_id: u32::MAX }
    );
    for s in ["dump 4294967296", "dump-compare 4294967296"] {
        assert!(
            err_line(s).ends_with("error: argument PROG_ID: must be at most 4294967295"),
            "{s}"
        );
    }
    assert_eq!(
        err_line("--program-id 4294967296"),
        "brr: error: argument --program-id: must be at most 4294967295"
    );
    assert_eq!(
        err_line("profile --program-id 4294967296"),
        "brr profile: error: argument --program-id: must be at most 4294967295"
    );
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
        (t.profile.pages, t.profile.drain_ms, t.profile.frequency),
        (None, Some(50), 99)
    );
    assert!(t.kernel_ip_detail && t.fail_on_loss);
    assert_eq!(
        (t.profile.event.name(), t.profile.call_graph.name()),
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
    for s in ["--json top", "--pretty top", "top --csv"] {
        assert_eq!(
            err_line(s),
            "brr: error: --json, --csv, and --pretty are not supported by top without --textmode",
            "{s}"
        );
    }
    for s in [
        "top --textmode --json --profile-top",
        "--csv top --textmode --program-id 5",
    ] {
        assert_eq!(
            err_line(s),
            "brr: error: --json and --csv with top --textmode print the activity snapshot only; they cannot be used with --profile-top or --program-id",
            "{s}"
        );
    }
    assert_eq!(
        cli("top --textmode --json").format,
        Format::Json { pretty: false }
    );
    assert_eq!(cli("--csv top --textmode").format, Format::Csv);
    assert_eq!(
        err_line("top --textmode --pretty"),
        "brr: error: --pretty requires --json"
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
        "brr top: error: argument --inspect-mode: invalid choice: 'x' (choose from 'source', 'mixed', 'native')"
    );
    assert_eq!(
        err_line("top --perf-buffer-pages 3"),
        "brr top: error: argument --perf-buffer-pages: perf buffer pages must be auto or a positive power of two"
    );
    assert_eq!(
        err_line("--p"),
        "brr: error: ambiguous option: --p could match --pretty, --profile-duration, --profile-top, --program-id, --perf-buffer-pages, --perf-drain-ms, --pprof"
    );
    assert!(
        matches!(run("top -h").unwrap(), Parsed::Print(t) if t.contains("--inspect-mode") && !t.contains("--all"))
    );
}

/// `--annotate` lists instructions under a printed profile (the TUI's
/// profiles always carry them); `--inspect-mode native` picks the native
/// view.
#[test]
fn annotate_and_native_view_grammar() {
    assert_eq!(
        err_line("--annotate"),
        "brr: error: --annotate requires --textmode and --profile-top"
    );
    assert_eq!(
        err_line("top --textmode --annotate"),
        "brr: error: --annotate requires --textmode and --profile-top"
    );
    let t = top("top --textmode --profile-top --annotate --inspect-mode native");
    assert!(t.annotate && t.native && !t.mixed);
    assert!(!top("top --inspect-mode mixed").native);
    assert!(profile("profile --annotate").annotate);
    assert!(!profile("profile").annotate);
}

fn profile(s: &str) -> ProfileArgs {
    match cli(s).command {
        Command::Profile(p) => p,
        other => panic!("{s}: {other:?}"),
    }
}

/// `top` and `profile` share one set of capture options and build the same
/// typed request from them.
#[test]
fn capture_options_typed_once() {
    use crate::profile::{CallGraph, Event, Request};
    let flags = "-F 99 --event cpu-clock --kernel-samples --call-graph lbr --perf-buffer-pages 8 --perf-drain-ms auto";
    let want = Request {
        event: Event::from_name("cpu-clock").unwrap(),
        duration: 2.0,
        frequency: 99,
        kernel_samples: true,
        call_graph: CallGraph::Lbr,
        pages: Some(8),
        drain_ms: None,
        program_ids: Vec::new(),
        pid: None,
    };
    let p = profile(&format!("--bpffs /b profile -d 2 {flags}"));
    assert_eq!(p.request, want);
    let t = top(&format!("--bpffs /b top --profile-duration 2 {flags}"));
    assert_eq!(t.profile, want);
    let p = profile("profile --program-id 7");
    assert_eq!(
        (
            &p.request.program_ids[..],
            p.request.event,
            p.request.duration
        ),
        (&[7][..], Event::Auto, 5.0)
    );
    // Repeated: every program, in the order given; --pid adds a process's.
    let p = profile("profile --program-id 7 --program-id 3 --program-id=9 --pid 42");
    assert_eq!(
        (&p.request.program_ids[..], p.request.pid),
        (&[7, 3, 9][..], Some(42))
    );
    assert_eq!(
        err_line("profile --pid 0"),
        "brr profile: error: argument --pid: must be greater than 0"
    );
    assert_eq!(p.request.call_graph, CallGraph::Fp);
    // Root options and `top`'s merge, the later winning.
    let t = top("--event cpu-clock -F 5 --perf-drain-ms 9 top -F 7 --perf-drain-ms auto");
    assert_eq!(t.profile.event.name(), "cpu-clock");
    assert_eq!((t.profile.frequency, t.profile.drain_ms), (7, None));
    // `top` also reads an empty ring setting as auto; `profile` does not.
    assert_eq!(
        top("top --perf-buffer-pages= --perf-drain-ms=")
            .profile
            .pages,
        None
    );
    assert_eq!(
        err_line("profile --perf-buffer-pages="),
        "brr profile: error: argument --perf-buffer-pages: must be an integer"
    );
}

/// Values are checked as clap reads them, as argparse did: the first bad
/// value in the arguments wins, and it is reported by the level it was
/// given to even when a subcommand follows it.
#[test]
fn value_errors_name_their_level() {
    for (args, line) in [
        (
            "-d 0 top",
            "brr: error: argument -d/--delay: must be greater than 0",
        ),
        (
            "-d 0 top -d 5",
            "brr: error: argument -d/--delay: must be greater than 0",
        ),
        (
            "top -d 5 -d 0",
            "brr top: error: argument -d/--delay: must be greater than 0",
        ),
        (
            "--call-graph x top",
            "brr: error: argument --call-graph: invalid choice: 'x' (choose from 'fp', 'lbr')",
        ),
        (
            "top --call-graph=",
            "brr top: error: argument --call-graph: invalid choice: '' (choose from 'fp', 'lbr')",
        ),
        (
            "activity --limit 1.5 -d 0",
            "brr activity: error: argument --limit: must be an integer",
        ),
        (
            "dump --devmode 0",
            "brr dump: error: argument PROG_ID: must be greater than 0",
        ),
        (
            "exporter --listen localhost:80",
            "brr exporter: error: argument --listen: must be ADDRESS:PORT with a numeric address, e.g. 127.0.0.1:9435 or [::1]:9435",
        ),
    ] {
        assert_eq!(err_line(args), line, "{args}");
    }
    assert!(err_line("--event bogus top --event cpu-clock")
        .starts_with("brr: error: argument --event: unsupported perf event 'bogus';"));
}

#[test]
fn non_ascii_and_non_utf8_arguments_are_usage_errors() {
    use std::os::unix::ffi::OsStringExt;
    for args in [
        vec![OsString::from("-é")],
        vec!["prog".into(), "-xé".into()],
        vec!["activity".into(), "-dé".into()],
        vec!["--é".into()],
        vec![OsString::from_vec(b"-\xff".to_vec())],
        vec!["prog".into(), OsString::from_vec(b"\xff\xfe".to_vec())],
        vec![
            "activity".into(),
            "-d".into(),
            OsString::from_vec(b"1\xff".to_vec()),
        ],
    ] {
        match parse(&args) {
            Err(BrrError::Usage(line)) => assert!(!line.contains('\n'), "{args:?}: {line}"),
            other => panic!("{args:?}: {other:?}"),
        }
    }
    assert_eq!(err_line("-é"), "brr: error: unrecognized arguments: -é");
    assert_eq!(
        err_line("prog -xé"),
        "brr: error: unrecognized arguments: -é"
    );
}

#[test]
fn non_utf8_paths_are_kept() {
    use std::os::unix::ffi::{OsStrExt, OsStringExt};
    let raw = b"/tmp/brr-\xff".to_vec();
    let args = vec![
        OsString::from("--bpffs"),
        OsString::from_vec(raw.clone()),
        OsString::from("dump"),
        OsString::from("7"),
        OsString::from("--devmode"),
        OsString::from_vec(raw.clone()),
    ];
    match parse(&args) {
        Ok(Parsed::Run(c)) => {
            assert_eq!(c.bpffs.as_os_str().as_bytes(), raw.as_slice());
            assert_eq!(
                c.command,
                Command::Dump {
                    prog_id: 7,
                    devmode: Some(PathBuf::from(OsString::from_vec(raw.clone()))),
                    jited: false,
                }
            );
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn completions_and_man_print_text() {
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        match run(&format!("completions {shell}")) {
            Ok(Parsed::Print(t)) => {
                assert!(t.contains("brr") && t.contains("perf-events"), "{shell}")
            }
            other => panic!("{shell}: {other:?}"),
        }
    }
    match run("man") {
        Ok(Parsed::Print(t)) => {
            assert!(
                t.starts_with(".ie") || t.contains(".TH"),
                "{}",
                t.get(..80).unwrap_or(&t)
            );
            for name in [
                "prog",
                "activity",
                "top",
                "dump-compare",
                "profile",
                "completions",
            ] {
                assert!(
                    t.contains(&format!("brr\\-{}", name.replace('-', "\\-"))),
                    "{name}"
                );
            }
        }
        other => panic!("{other:?}"),
    }
    assert!(err_line("completions tcsh").starts_with(
        "brr completions: error: argument SHELL: invalid choice: 'tcsh' (choose from 'bash'"
    ));
}

#[test]
fn missing_values_and_flag_values() {
    assert_eq!(
        err_line("-d"),
        "brr: error: argument -d/--delay: expected one argument"
    );
    assert_eq!(
        err_line("top --inspect-mode"),
        "brr top: error: argument --inspect-mode: expected one argument"
    );
    assert_eq!(
        err_line("prog --json=1"),
        "brr prog: error: argument --json: ignored explicit argument '1'"
    );
    assert_eq!(
        err_line("profile --event bogus"),
        "brr profile: error: argument --event: unsupported perf event 'bogus'; run 'brr perf-events' to list openable events; expected one of: auto, cycles:ppp, cycles:pp, cycles:p, cycles, cpu-clock, instructions, cache-references, cache-misses, branches, branch-misses, bus-cycles, stalled-cycles-frontend, stalled-cycles-backend, ref-cycles"
    );
    assert_eq!(
        err_line("profile --perf-buffer-pages 3"),
        "brr profile: error: argument --perf-buffer-pages: must be 'auto' or a positive power of two"
    );
    assert_eq!(
        err_line("profile --perf-drain-ms x"),
        "brr profile: error: argument --perf-drain-ms: must be an integer"
    );
    assert_eq!(
        err_line("--perf-drain-ms 0"),
        "brr: error: argument --perf-drain-ms: perf drain milliseconds must be greater than zero"
    );
    assert_eq!(
        err_line("perf-events -F 0"),
        "brr perf-events: error: argument -F/--frequency: must be greater than 0"
    );
}

mod random_argv {
    use std::ffi::OsString;
    use std::os::unix::ffi::OsStringExt;

    use proptest::prelude::*;

    use super::super::{command, parse, Command, Parsed};
    use crate::error::BrrError;

    /// Every option and subcommand name the grammar knows, at any level.
    fn names() -> Vec<String> {
        fn walk(cmd: &clap::Command, out: &mut Vec<String>) {
            for a in cmd.get_arguments() {
                if let Some(l) = a.get_long() {
                    out.push(format!("--{l}"));
                }
                if let Some(s) = a.get_short() {
                    out.push(format!("-{s}"));
                }
            }
            for s in cmd.get_subcommands() {
                out.push(s.get_name().to_string());
                walk(s, out);
            }
        }
        let mut out = Vec::new();
        walk(&command(), &mut out);
        out
    }

    fn token() -> impl Strategy<Value = OsString> {
        let names = names();
        prop_oneof![
            3 => proptest::sample::select(names).prop_map(OsString::from),
            2 => "-?-?[a-zé=_.0-9]{0,6}".prop_map(OsString::from),
            1 => any::<String>().prop_map(OsString::from),
            1 => proptest::collection::vec(any::<u8>(), 0..8).prop_map(OsString::from_vec),
            1 => (any::<char>(), any::<char>()).prop_map(|(a, b)| OsString::from(format!("-x{a}{b}"))),
            1 => any::<i128>().prop_map(|n| OsString::from(n.to_string())),
            1 => Just(OsString::from("auto")),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(400))]
        #[test]
        fn parse_never_panics(args in proptest::collection::vec(token(), 0..7)) {
            match parse(&args) {
                // What the parser accepts, the capture engine accepts.
                Ok(Parsed::Run(c)) => match &c.command {
                    Command::Top(t) => prop_assert_eq!(t.profile.validate(), Ok(())),
                    Command::Profile(p) => prop_assert_eq!(p.request.validate(), Ok(())),
                    _ => {}
                },
                Ok(Parsed::Print(_)) => {}
                Err(BrrError::Usage(line)) => {
                    prop_assert!(!line.contains('\n'), "{args:?}: {line}");
                    prop_assert!(line.starts_with("brr"), "{args:?}: {line}");
                }
                // A -F above any integer is above the sysctl's limit too.
                Err(BrrError::Unsupported(line))
                    if line.starts_with("requested perf sample frequency ") => {}
                Err(other) => prop_assert!(false, "{args:?}: {other:?}"),
            }
        }
    }
}

/// The TUI's profile form and delay dialog take numbers through the same
/// parsers as the command line: the same texts pass and fail in both.
#[test]
fn tui_form_and_cli_agree() {
    use crate::tui::drill::Form;
    use crate::tui::text::Input;

    let form = |i: usize, text: &str| {
        let mut fields = ["5", "997", "auto", "fp", "auto", "auto"].map(Input::new);
        fields[i] = Input::new(text);
        Form {
            fields,
            kernel: true,
            focus: 0,
        }
        .request(1)
        .is_ok()
    };
    let accepts = |s: &str| matches!(run_args(s), Ok(Parsed::Run(_)));
    for text in [
        "1_0",
        "1__0",
        "_1",
        "1_",
        "1_.5",
        " 5 ",
        "+2",
        "2.5",
        "0",
        "-1",
        "nan",
        "inf",
        "1e400",
        "1e300",
        "abc",
        "",
        "99999999999999999999999",
        "64",
        "3",
        "auto",
        " AUTO ",
    ] {
        for (i, option) in [
            (0, "--profile-duration"),
            (1, "--frequency"),
            (4, "--perf-buffer-pages"),
            (5, "--perf-drain-ms"),
        ] {
            assert_eq!(
                form(i, text),
                accepts(&format!("{option}={text}")),
                "{option}={text:?}"
            );
        }
        assert_eq!(
            crate::values::seconds(text).is_ok(),
            accepts(&format!("--delay={text}")),
            "--delay={text:?}"
        );
    }
}

fn run_args(joined: &str) -> Result<Parsed, BrrError> {
    parse(&[OsString::from(joined)])
}

/// `-x` and `-c` are taken before or after the commands that have such
/// columns, and refused in both places, in the same words, by the others.
#[test]
fn extended_and_cumulative_in_either_place_or_neither() {
    let takes_x = ["prog", "map", "link", "btf", "activity", "profile", "top"];
    for sub in takes_x {
        assert!(cli(&format!("-x {sub}")).extended, "{sub}");
        assert!(cli(&format!("{sub} -x")).extended, "{sub}");
        assert!(cli(&format!("{sub} --extended")).extended, "{sub}");
    }
    for sub in ["activity", "top"] {
        for args in [
            format!("-c {sub}"),
            format!("{sub} -c"),
            format!("{sub} -xc"),
        ] {
            let c = cli(&args);
            assert!(c.cumulative, "{args}");
        }
    }
    assert!(cli("-xc").cumulative, "bare brr is top");
    let no_x = "brr: error: -x/--extended is not supported by SUB (only by prog, map, link, btf, activity, profile and top)";
    let no_c = "brr: error: -c/--cumulative is not supported by SUB (only by activity and top)";
    for (sub, args) in [
        ("perf-events", "perf-events"),
        ("dump", "dump 5"),
        ("dump-compare", "dump-compare 5"),
        ("exporter", "exporter"),
        ("doctor", "doctor"),
        ("completions", "completions bash"),
        ("man", "man"),
    ] {
        let want = no_x.replace("SUB", sub);
        assert_eq!(err_line(&format!("-x {args}")), want, "{args}");
        assert_eq!(err_line(&format!("{args} -x")), want, "{args}");
        assert_eq!(err_line(&format!("{args} --extended")), want, "{args}");
        let want = no_c.replace("SUB", sub);
        assert_eq!(err_line(&format!("-c {args}")), want, "{args}");
        assert_eq!(err_line(&format!("{args} --cumulative")), want, "{args}");
    }
    for sub in ["prog", "map", "link", "btf", "profile"] {
        let want = no_c.replace("SUB", sub);
        assert_eq!(err_line(&format!("-c {sub}")), want, "{sub}");
        assert_eq!(err_line(&format!("{sub} -c")), want, "{sub}");
        assert_eq!(err_line(&format!("{sub} -xc")), want, "{sub}");
    }
    // Other unknown arguments keep argparse's words.
    assert_eq!(
        err_line("dump 5 --ext"),
        "brr: error: unrecognized arguments: --ext"
    );
}

/// `-F` above `kernel.perf_event_max_sample_rate` is a usage error naming
/// the sysctl and its value, for every command that samples; the default
/// frequency is left to the capture, which says the same at run time.
#[test]
fn frequency_above_the_kernels_maximum_is_a_usage_error() {
    assert!(frequency_rule(100_000, Some(100_000)).is_ok());
    assert!(frequency_rule(5, None).is_ok());
    assert!(frequency_rule(5, Some(0)).is_ok());
    assert!(frequency_rule(5, Some(-1)).is_ok());
    match frequency_rule(100_001, Some(100_000)) {
        Err(BrrError::Usage(line)) => assert_eq!(
            line,
            "brr: error: argument -F/--frequency: 100001 Hz is above kernel.perf_event_max_sample_rate (100000); use -F 100000 or lower, or raise that sysctl"
        ),
        other => panic!("{other:?}"),
    }
    // This host's own limit, through the parser.
    let Some(max) = profile::events::max_sample_rate().filter(|&m| m > 0 && m < 1_000_000) else {
        return;
    };
    let above = max + 1;
    for args in [
        format!("profile -F {above}"),
        format!("-F {above}"),
        format!("top -F {above}"),
        format!("-F {above} top --textmode"),
        format!("perf-events -F {above}"),
        format!("perf-events --frequency={above}"),
    ] {
        assert_eq!(
            err_line(&args),
            format!("brr: error: argument -F/--frequency: {above} Hz is above kernel.perf_event_max_sample_rate ({max}); use -F {max} or lower, or raise that sysctl"),
            "{args}"
        );
    }
    assert!(matches!(
        run(&format!("profile -F {max}")),
        Ok(Parsed::Run(_))
    ));
}
