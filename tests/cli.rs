//! Command-line behaviour of the real binary that needs no BPF access.

// Test tooling: helpers outside #[test] functions fail the test by panicking,
// as the tests themselves do (clippy.toml only exempts #[test] code).
#![allow(clippy::expect_used)]

mod support;

use std::ffi::{OsStr, OsString};
use std::io::Write;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::process::{Command, Output, Stdio};

use support::{PinnedFixture, SocketFilterFixture};

fn brr(args: &[&str]) -> Output {
    brr_os(args.iter().map(OsStr::new))
}

fn brr_os<I: IntoIterator<Item = S>, S: AsRef<OsStr>>(args: I) -> Output {
    Command::new(env!("CARGO_BIN_EXE_brr"))
        .args(args)
        .output()
        .expect("run brr")
}

/// The whole of stderr, which must be exactly one line.
fn one_stderr_line(o: &Output) -> String {
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(
        err.ends_with('\n') && err.matches('\n').count() == 1,
        "not one line: {err:?}"
    );
    err.trim_end().to_string()
}

#[test]
fn version_is_one_line() {
    for args in [
        &["-V"][..],
        &["--version"],
        &["-V", "prog"],
        &["-V", "--json"],
    ] {
        let o = brr(args);
        assert_eq!(o.status.code(), Some(0));
        assert_eq!(
            String::from_utf8_lossy(&o.stdout),
            "brr 0.6.0 - eBPF Runtime Reporter and Profiler by Tanel Poder (tanelpoder.com).\n"
        );
    }
}

#[test]
fn help_lists_commands() {
    let o = brr(&["--help"]);
    assert_eq!(o.status.code(), Some(0));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("{prog,activity,"), "{out}");
    assert!(out.contains("List loaded eBPF programs."));
    assert!(out.contains("completions") && out.contains("Print the man page (roff)."));
    let o = brr(&["activity", "--help"]);
    assert_eq!(o.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&o.stdout).contains("--duration"));
}

#[test]
fn export_flags_usage_errors() {
    let cases: &[(&[&str], &str)] = &[
        (
            &["top", "--folded", "-"],
            "brr: error: --folded requires --textmode and --profile-top",
        ),
        (
            &["--textmode", "--pprof", "x.pb.gz"],
            "brr: error: --pprof requires --textmode and --profile-top",
        ),
        (
            &["--flamegraph", "f.svg", "--profile-top"],
            "brr: error: --flamegraph requires --textmode and --profile-top",
        ),
        (
            &["profile", "--folded"],
            "brr profile: error: argument --folded: expected one argument",
        ),
        (
            &["top", "--slow-ns", "0"],
            "brr top: error: argument --slow-ns: must be greater than 0",
        ),
        (
            &["--slow-ns", "x"],
            "brr: error: argument --slow-ns: must be an integer",
        ),
    ];
    for (args, line) in cases {
        let o = brr(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert_eq!(one_stderr_line(&o), *line, "{args:?}");
        assert!(o.stdout.is_empty(), "{args:?}");
    }
}

#[test]
fn usage_errors_exit_2_with_exact_lines() {
    let no_x = "brr: error: -x/--extended is not supported by dump (only by prog, map, link, btf, activity, profile and top)";
    let no_c = "brr: error: -c/--cumulative is not supported by prog (only by activity and top)";
    let cases: &[(&[&str], &str)] = &[
        // -x and -c: the same words before and after the command.
        (&["-x", "dump", "5"], no_x),
        (&["dump", "5", "-x"], no_x),
        (&["-c", "prog"], no_c),
        (&["prog", "-c"], no_c),
        (&["prog", "--cumulative"], no_c),
        (
            &["activity", "-d", "0"],
            "brr activity: error: argument -d/--duration: must be greater than 0",
        ),
        (
            &["activity", "-d", "nan"],
            "brr activity: error: argument -d/--duration: must be a number",
        ),
        (
            &["activity", "-d", "inf"],
            "brr activity: error: argument -d/--duration: must be a number",
        ),
        (
            &["activity", "-d", "-3"],
            "brr activity: error: argument -d/--duration: must be greater than 0",
        ),
        (
            &["activity", "-d", "1e400"],
            "brr activity: error: argument -d/--duration: must be a number",
        ),
        (
            &["activity", "--limit", "x"],
            "brr activity: error: argument --limit: must be an integer",
        ),
        (
            &["activity", "--limit", "-1"],
            "brr activity: error: argument --limit: must be 0 or greater",
        ),
        (
            &["prog", "--pretty"],
            "brr: error: --pretty requires --json",
        ),
        (
            &["--json", "prog", "--csv"],
            "brr: error: --json and --csv are mutually exclusive",
        ),
        (
            &["prog", "extra"],
            "brr: error: unrecognized arguments: extra",
        ),
        (&["-é"], "brr: error: unrecognized arguments: -é"),
        (&["prog", "-xé"], "brr: error: unrecognized arguments: -é"),
        (
            &["activity", "-d"],
            "brr activity: error: argument -d/--duration: expected one argument",
        ),
        (
            &["dump", "--devmode", "src"],
            "brr dump: error: the following arguments are required: PROG_ID",
        ),
        (
            &["dump", "4294967296"],
            "brr dump: error: argument PROG_ID: must be at most 4294967295",
        ),
        (
            &["dump-compare", "4294967296"],
            "brr dump-compare: error: argument PROG_ID: must be at most 4294967295",
        ),
        (
            &["--program-id", "4294967296"],
            "brr: error: argument --program-id: must be at most 4294967295",
        ),
        (
            &["profile", "--program-id", "4294967296"],
            "brr profile: error: argument --program-id: must be at most 4294967295",
        ),
        (
            &["-d", "10", "activity"],
            "brr: error: top options may only be used with bare 'brr' or the 'top' command",
        ),
        (
            &["--p"],
            "brr: error: ambiguous option: --p could match --pretty, --profile-duration, --profile-top, --program-id, --perf-buffer-pages, --perf-drain-ms, --pprof",
        ),
    ];
    for (args, line) in cases {
        let o = brr(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert_eq!(one_stderr_line(&o), *line, "{args:?}");
        assert!(o.stdout.is_empty(), "{args:?}");
        assert!(!String::from_utf8_lossy(&o.stderr).contains("panicked"));
    }
}

/// An unknown or empty command word lists the commands.
#[test]
fn unknown_command_lists_the_commands() {
    for (arg, shown) in [("nosuch", "'nosuch'"), ("", "''")] {
        let o = brr(&[arg]);
        assert_eq!(o.status.code(), Some(2));
        let line = one_stderr_line(&o);
        assert!(
            line.starts_with(&format!(
                "brr: error: invalid command: {shown} (choose from 'prog', 'activity'"
            )),
            "{line}"
        );
    }
}

#[test]
fn huge_values_are_usage_errors() {
    for (args, line) in [
        (
            &["activity", "-d", "99999999999999999999999999999"][..],
            "brr activity: error: argument -d/--duration: must be at most 10000000",
        ),
        (
            &["activity", "--limit", "99999999999999999999999999999"],
            "brr activity: error: argument --limit: must be at most 18446744073709551615",
        ),
    ] {
        let o = brr(args);
        assert_eq!(o.status.code(), Some(2));
        assert_eq!(one_stderr_line(&o), line);
    }
}

/// `-F` above what any integer holds is above the kernel's sample rate
/// limit too: the sysctl's message and exit code, not an integer bound.
#[test]
fn huge_frequency_names_the_sysctl() {
    let Some(max) = std::fs::read_to_string("/proc/sys/kernel/perf_event_max_sample_rate")
        .ok()
        .and_then(|t| t.trim().parse::<u64>().ok())
    else {
        eprintln!("skipped: kernel.perf_event_max_sample_rate is not readable");
        return;
    };
    for args in [
        &["perf-events", "-F", "99999999999999999999"][..],
        &["profile", "-d", "1", "-F", "99999999999999999999"],
    ] {
        let o = brr(args);
        assert_eq!(o.status.code(), Some(3), "{args:?}");
        assert_eq!(
            one_stderr_line(&o),
            format!(
                "brr: requested perf sample frequency 99999999999999999999 Hz exceeds current kernel.perf_event_max_sample_rate {max} Hz; lower -F/--frequency or raise /proc/sys/kernel/perf_event_max_sample_rate"
            ),
            "{args:?}"
        );
    }
}

#[test]
fn closed_stdout_is_quiet() {
    for args in [&["-V"][..], &["--help"], &["man"], &["completions", "bash"]] {
        support::assert_quiet_on_closed_stdout(env!("CARGO_BIN_EXE_brr"), args);
    }
}

#[test]
fn bad_output_path_fails_before_sampling() {
    let dir = std::env::temp_dir().join(format!("brr-cli-out-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let missing = dir.join("no-such-dir/out");
    let missing = missing.to_str().expect("utf-8 path");
    let d = dir.to_str().expect("utf-8 path");
    let folded = dir.join("ok.folded");
    for (flag, what, path) in [
        ("--pprof", "pprof profile", missing),
        ("--folded", "folded stacks", missing),
        ("--flamegraph", "flame graph", d),
    ] {
        for cmd in [&["profile"][..], &["top", "--textmode", "--profile-top"]] {
            // A long capture that must never start: the failure is the file's.
            let mut args = cmd.to_vec();
            args.extend(["-d", "30", flag, path]);
            if flag != "--folded" {
                args.extend(["--folded", folded.to_str().expect("utf-8 path")]);
            }
            let o = Command::new(env!("CARGO_BIN_EXE_brr"))
                .args(&args)
                .env("BRR_TRACE_READY", "1")
                .output()
                .expect("run brr");
            assert_eq!(o.status.code(), Some(1), "{args:?}");
            let line = one_stderr_line(&o);
            assert!(
                line.starts_with(&format!("brr: cannot write {what} to {path}: ")),
                "{args:?}: {line}"
            );
            assert!(o.stdout.is_empty(), "{args:?}");
            // The file opened before the bad one is not left behind.
            assert!(!folded.exists(), "{args:?}");
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Run brr with stdout on /dev/full: every write fails with ENOSPC.
fn brr_to_full(args: &[&str]) -> Output {
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .expect("open /dev/full");
    Command::new(env!("CARGO_BIN_EXE_brr"))
        .args(args)
        .stdout(Stdio::from(full))
        .output()
        .expect("run brr")
}

fn assert_write_error(args: &[&str]) {
    let o = brr_to_full(args);
    assert_eq!(o.status.code(), Some(1), "{args:?}");
    assert_eq!(
        one_stderr_line(&o),
        "brr: write error: No space left on device",
        "{args:?}"
    );
}

#[test]
fn full_stdout_is_a_write_error() {
    for args in [
        &["-V"][..],
        &["--version"],
        &["--help"],
        &["dump", "--help"],
        &["man"],
    ] {
        assert_write_error(args);
    }
}

#[test]
fn full_stdout_is_a_write_error_live() {
    if !support::live() {
        return;
    }
    let fx = SocketFilterFixture::load().expect("load socket filter fixture");
    let id = fx.prog.id.to_string();
    for args in [
        &["prog"][..],
        &["dump", &id],
        &["activity", "-d", "0.2"],
        &["profile", "-d", "0.2"],
    ] {
        assert_write_error(args);
    }
}

#[test]
fn non_utf8_argv_never_panics() {
    for args in [
        vec![OsString::from_vec(b"-\xff".to_vec())],
        vec![OsString::from("prog"), OsString::from_vec(b"\xc3".to_vec())],
        vec![
            OsString::from("activity"),
            OsString::from("-d"),
            OsString::from_vec(b"\xff".to_vec()),
        ],
    ] {
        let o = brr_os(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        let line = one_stderr_line(&o);
        assert!(line.starts_with("brr"), "{line}");
    }
}

#[test]
fn help_fits_80_columns_when_piped() {
    let mut all = vec![vec!["--help".to_string()]];
    for sub in [
        "prog",
        "activity",
        "top",
        "map",
        "link",
        "btf",
        "perf-events",
        "dump",
        "dump-compare",
        "profile",
        "completions",
        "man",
    ] {
        all.push(vec![sub.to_string(), "--help".to_string()]);
    }
    for args in all {
        // COLUMNS must not widen help that does not go to a terminal.
        let o = Command::new(env!("CARGO_BIN_EXE_brr"))
            .args(&args)
            .env("COLUMNS", "200")
            .output()
            .expect("run brr");
        assert_eq!(o.status.code(), Some(0), "{args:?}");
        let out = String::from_utf8(o.stdout).expect("utf-8 help");
        assert!(out.lines().count() > 3, "{args:?}");
        for line in out.lines() {
            assert!(line.chars().count() <= 80, "{args:?}: {line:?}");
        }
    }
}

#[test]
fn bash_completion_completes_subcommands() {
    let o = brr(&["completions", "bash"]);
    assert_eq!(o.status.code(), Some(0));
    let dir = std::env::temp_dir().join(format!("brr-completion-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let script = dir.join("brr.bash");
    std::fs::write(&script, &o.stdout).unwrap();
    let probe = format!(
        "source '{}' && COMP_WORDS=(brr pr) && COMP_CWORD=1 && _brr brr pr brr && printf '%s\\n' \"${{COMPREPLY[@]}}\"",
        script.display()
    );
    let r = Command::new("bash")
        .args(["--norc", "--noprofile", "-c", &probe])
        .output()
        .expect("run bash");
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let mut words: Vec<String> = String::from_utf8_lossy(&r.stdout)
        .split_whitespace()
        .map(String::from)
        .collect();
    words.sort();
    assert_eq!(words, ["profile", "prog"]);
    for shell in ["zsh", "fish", "elvish", "powershell"] {
        let o = brr(&["completions", shell]);
        assert_eq!(o.status.code(), Some(0), "{shell}");
        assert!(
            String::from_utf8_lossy(&o.stdout).contains("dump-compare"),
            "{shell}"
        );
    }
}

#[test]
fn man_page_renders_every_subcommand() {
    let o = brr(&["man"]);
    assert_eq!(o.status.code(), Some(0));
    // `man -l -` reads the page from stdin: no file to clean up.
    let child = Command::new("man")
        .args(["-l", "-"])
        .env("MANWIDTH", "80")
        .env("MANPAGER", "cat")
        .env("PAGER", "cat")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn();
    let mut child = match child {
        Ok(c) => c,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            assert!(
                std::env::var_os(support::REQUIRE_LIVE_ENV).is_none(),
                "man is not installed (Debian package man-db)"
            );
            return support::skip("man is not installed (Debian package man-db)");
        }
        Err(e) => panic!("run man: {e}"),
    };
    let mut stdin = child.stdin.take().unwrap();
    let page = o.stdout.clone();
    let writer = std::thread::spawn(move || stdin.write_all(&page));
    let r = child.wait_with_output().expect("run man");
    writer.join().unwrap().expect("page written to man");
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    assert!(
        r.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&r.stderr)
    );
    let text = String::from_utf8_lossy(&r.stdout);
    assert!(text.contains("eBPF Runtime Reporter and Profiler"));
    for sub in [
        "prog",
        "activity",
        "top",
        "map",
        "link",
        "btf",
        "perf-events",
        "dump",
        "dump-compare",
        "profile",
        "completions",
        "man",
    ] {
        assert!(text.contains(&format!("brr-{sub}")), "{sub}");
    }
    assert!(text.contains("--perf-buffer-pages"));
}

/// `brr man --dir`: one page per command, each rendered by man-db without
/// a warning, every page a SEE ALSO or COMMANDS section names written
/// beside it, and the sections clap cannot know present.
#[test]
fn man_pages_render_and_every_referenced_page_exists() {
    if Command::new("man").arg("-w").output().is_err() {
        assert!(
            std::env::var_os(support::REQUIRE_LIVE_ENV).is_none(),
            "man is not installed (Debian package man-db)"
        );
        return support::skip("man is not installed (Debian package man-db)");
    }
    let dir = std::env::temp_dir().join(format!("brr-man-{}", std::process::id()));
    let o = brr(&["man", "--dir", dir.to_str().unwrap()]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let written: Vec<String> = String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(String::from)
        .collect();
    assert!(written.contains(&dir.join("brr.1").display().to_string()));
    assert!(written.contains(&dir.join("brr-profile.1").display().to_string()));
    let mut rendered = std::collections::BTreeMap::new();
    for path in &written {
        let r = Command::new("man")
            .args(["-l", path])
            .env("MANWIDTH", "80")
            .env("MANPAGER", "cat")
            .env("PAGER", "cat")
            .output()
            .expect("run man");
        assert!(r.status.success(), "{path}");
        assert!(
            r.stderr.is_empty(),
            "{path}: {}",
            String::from_utf8_lossy(&r.stderr)
        );
        rendered.insert(
            path.clone(),
            String::from_utf8_lossy(&r.stdout).into_owned(),
        );
    }
    // Every NAME(1) a page's body mentions is one of the pages written (the
    // first and last lines are man's header and footer).
    let mut referenced = 0;
    for (path, text) in &rendered {
        let lines: Vec<&str> = text.trim_end().lines().collect();
        let body = lines[1..lines.len() - 1].join("\n");
        for word in body.split(|c: char| c.is_whitespace() || c == ',') {
            if let Some(name) = word.strip_suffix("(1)") {
                referenced += 1;
                assert!(
                    dir.join(format!("{name}.1")).is_file(),
                    "{path} refers to {word}, which was not written"
                );
            }
        }
    }
    assert!(referenced > written.len(), "{referenced}");
    let root = &rendered[&dir.join("brr.1").display().to_string()];
    for heading in ["EXIT STATUS", "PRIVILEGES", "KEYS", "EXAMPLES", "SEE ALSO"] {
        assert!(root.lines().any(|l| l == heading), "brr.1 lacks {heading}");
    }
    let top = &rendered[&dir.join("brr-top.1").display().to_string()];
    assert!(top.contains("Inspect program") && top.contains("Search source"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn non_utf8_bpffs_root_reports_its_pins() {
    if !support::live() {
        return;
    }
    let fx = PinnedFixture::load().expect("load pinned fixture");
    // A directory whose name is not UTF-8, holding the map's pin.
    let mut raw = fx.path().as_os_str().as_bytes().to_vec();
    raw.extend_from_slice(b"/dir-\xff");
    let odd = std::path::PathBuf::from(OsString::from_vec(raw));
    std::fs::create_dir(&odd).expect("mkdir on bpffs");
    let moved = odd.join("map");
    std::fs::rename(&fx.map_a, &moved).expect("rename pin");
    let o = brr_os([
        OsStr::new("--bpffs"),
        odd.as_os_str(),
        OsStr::new("map"),
        OsStr::new("--json"),
    ]);
    // Put things back first so that the fixture cleans up whatever happened.
    std::fs::rename(&moved, &fx.map_a).expect("rename pin back");
    std::fs::remove_dir(&odd).expect("rmdir");
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    let item = v["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["id"] == fx.map.id)
        .expect("fixture map listed")
        .clone();
    assert_eq!(
        item["pinned_paths"],
        serde_json::json!([moved.to_string_lossy()])
    );
}
