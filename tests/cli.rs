//! Command-line behaviour of the real binary that needs no BPF access.

mod support;

use std::process::{Command, Output};

fn brr(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_brr"))
        .args(args)
        .output()
        .expect("run brr")
}

fn stderr_last_line(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr)
        .lines()
        .last()
        .unwrap_or("")
        .to_string()
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
    let o = brr(&["activity", "--help"]);
    assert_eq!(o.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&o.stdout).contains("--duration"));
}

#[test]
fn usage_errors_exit_2_with_exact_lines() {
    let cases: &[(&[&str], &str)] = &[
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
        (&["prog", "-c"], "brr: error: unrecognized arguments: -c"),
        (
            &["prog", "extra"],
            "brr: error: unrecognized arguments: extra",
        ),
    ];
    for (args, line) in cases {
        let o = brr(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert_eq!(stderr_last_line(&o), *line, "{args:?}");
        assert!(o.stdout.is_empty(), "{args:?}");
        assert!(!String::from_utf8_lossy(&o.stderr).contains("panicked"));
    }
    let o = brr(&["nosuch"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr_last_line(&o).starts_with(
        "brr: error: argument object_type: invalid choice: 'nosuch' (choose from 'prog', 'activity'"
    ));
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
        assert_eq!(stderr_last_line(&o), line);
    }
}

#[test]
fn closed_stdout_is_quiet() {
    for args in [&["-V"][..], &["--help"]] {
        support::assert_quiet_on_closed_stdout(env!("CARGO_BIN_EXE_brr"), args);
    }
}
