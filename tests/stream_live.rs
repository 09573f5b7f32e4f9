//! Live tests of `activity --interval` streams and of `top --textmode`
//! JSON/CSV, against fixture programs run with BPF_PROG_TEST_RUN between
//! windows. Other programs on the host are ignored.

// Test tooling: helpers outside #[test] functions fail the test by panicking,
// as the tests themselves do (clippy.toml only exempts #[test] code).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
// SIGINT and SIGTERM reach the child brr through libc::kill, which is unsafe.
#![allow(unsafe_code)]

mod support;

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::Duration;

use serde_json::Value;
use support::SocketFilterFixture;

const READY: &str = "brr-trace: ready stats-window";

/// A brr child with its stderr lines forwarded to a channel (so that the
/// readiness lines can be waited for while stdout is still open).
struct Stream {
    child: Child,
    stderr: Receiver<String>,
    /// stdout is read as brr writes it: a host with many programs fills
    /// the pipe within one window, and brr would block before its next
    /// readiness line.
    stdout: std::thread::JoinHandle<Vec<u8>>,
}

fn spawn(args: &[&str]) -> Stream {
    spawn_with(args, true)
}

/// `read_stdout` false closes stdout at once, as a reader that went away.
fn spawn_with(args: &[&str], read_stdout: bool) -> Stream {
    let mut child = Command::new(env!("CARGO_BIN_EXE_brr"))
        .args(args)
        .env("BRR_TRACE_READY", "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run brr");
    let err = child.stderr.take().expect("stderr");
    let out = child.stdout.take().expect("stdout");
    let stdout = std::thread::spawn(move || {
        let mut buf = Vec::new();
        if read_stdout {
            let mut out = out;
            let _ = std::io::Read::read_to_end(&mut out, &mut buf);
        }
        buf
    });
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(err).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    Stream {
        child,
        stderr: rx,
        stdout,
    }
}

impl Stream {
    /// Wait for the next window's readiness line; other stderr lines are
    /// collected into the panic message if it never comes.
    fn ready(&self) {
        let mut other = Vec::new();
        loop {
            match self.stderr.recv_timeout(Duration::from_secs(20)) {
                Ok(l) if l == READY => return,
                Ok(l) => other.push(l),
                Err(_) => panic!("no readiness line; stderr: {other:?}"),
            }
        }
    }

    /// Exit status and stdout; stderr without the readiness lines.
    fn finish(mut self) -> (Option<i32>, String, Vec<String>) {
        let status = self.child.wait().expect("wait");
        let stdout = self.stdout.join().expect("stdout reader");
        let rest: Vec<String> = self.stderr.try_iter().filter(|l| l != READY).collect();
        (
            status.code(),
            String::from_utf8(stdout).expect("utf-8"),
            rest,
        )
    }
}

/// `activity --interval INTERVAL --count COUNT --all --limit 0 --json`.
fn spawn_json_lines(interval: &str, count: &str) -> Stream {
    spawn(&[
        "activity",
        "--interval",
        interval,
        "--count",
        count,
        "--all",
        "--limit",
        "0",
        "--json",
    ])
}

/// Each line of `out` as a JSON document.
fn json_lines(out: &str) -> Vec<Value> {
    out.lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

fn item_with_id(doc: &Value, id: u32) -> Option<Value> {
    doc["items"]
        .as_array()
        .expect("items")
        .iter()
        .find(|i| i["id"] == id)
        .cloned()
}

#[test]
fn json_lines_count_exact_runs_per_window() {
    if !support::live() {
        return;
    }
    let fx = SocketFilterFixture::load().expect("load fixture");
    let runs = [1_234u32, 0, 4_321];
    let s = spawn_json_lines("1.5", "3");
    for &n in &runs {
        s.ready();
        if n > 0 {
            fx.prog.test_run(n).expect("test run");
        }
    }
    let (code, out, err) = s.finish();
    assert_eq!(code, Some(0), "{err:?}");
    assert!(err.is_empty(), "{err:?}");
    let docs = json_lines(&out);
    assert_eq!(docs.len(), 3, "{out}");
    let mut last_end = None;
    let first = item_with_id(&docs[0], fx.prog.id).expect("fixture listed with --all");
    for (i, (doc, &n)) in docs.iter().zip(&runs).enumerate() {
        assert_eq!(doc["kind"], "program_activity");
        let item = item_with_id(doc, fx.prog.id).expect("fixture listed with --all");
        assert_eq!(item["run_count_delta"], n, "{doc}");
        // Later windows copy the row the first one read: the same names,
        // tag and sizes, with the counters of their own window.
        for key in ["type", "name", "tag", "full_name", "jited_size_bytes"] {
            assert_eq!(item[key], first[key], "{key}: {doc}");
        }
        assert_eq!(item["type"], "socket_filter");
        assert!(
            item["tag"].as_str().is_some_and(|t| t.len() == 16),
            "{item}"
        );
        let total = |v: &Value| v["run_count_total"].as_u64().expect("run_count_total");
        let since_first: u64 = runs[1..=i].iter().map(|&r| u64::from(r)).sum();
        assert_eq!(total(&item) - total(&first), since_first, "{doc}");
        let md = &doc["metadata"];
        assert_eq!(md["duration"], 1.5);
        let (start, end) = (
            md["window_start"].as_f64().expect("window_start"),
            md["window_end"].as_f64().expect("window_end"),
        );
        let measured = md["measured_duration"].as_f64().expect("measured");
        assert!((1.5..2.5).contains(&measured), "{measured}");
        assert!((end - start - measured).abs() < 0.1, "{doc}");
        // Back to back: each window starts where the previous one ended.
        if let Some(prev) = last_end {
            assert_eq!(start, prev);
        }
        last_end = Some(end);
    }
}

#[test]
fn csv_has_one_header_and_window_columns() {
    if !support::live() {
        return;
    }
    let fx = SocketFilterFixture::load().expect("load fixture");
    let s = spawn(&[
        "activity",
        "--interval",
        "1",
        "--count",
        "2",
        "--csv",
        "--limit",
        "0",
    ]);
    s.ready();
    fx.prog.test_run(50).expect("test run");
    s.ready();
    fx.prog.test_run(70).expect("test run");
    let (code, out, err) = s.finish();
    assert_eq!(code, Some(0), "{err:?}");
    let lines: Vec<&str> = out.lines().collect();
    let header: Vec<&str> = lines[0].split(',').collect();
    // Exactly the one-shot columns, then the window.
    let one_shot = Command::new(env!("CARGO_BIN_EXE_brr"))
        .args(["activity", "-d", "0.1", "--all", "--csv"])
        .output()
        .expect("run brr");
    assert_eq!(one_shot.status.code(), Some(0));
    let one_shot = String::from_utf8(one_shot.stdout).expect("utf-8");
    let mut expected: Vec<&str> = one_shot
        .lines()
        .next()
        .expect("header")
        .split(',')
        .collect();
    expected.extend(["window_start", "window_end"]);
    assert_eq!(header, expected);
    assert_eq!(header[..3], ["duration", "limit", "include_all"]);
    assert_eq!(
        lines.iter().filter(|l| l.starts_with("duration,")).count(),
        1
    );
    let id = fx.prog.id.to_string();
    let counts: Vec<&str> = lines[1..]
        .iter()
        .map(|l| l.split(',').collect::<Vec<_>>())
        .filter(|f| f[3] == id)
        .map(|f| {
            assert_eq!(f.len(), header.len());
            f[9]
        })
        .collect();
    assert_eq!(counts, ["50", "70"], "{out}");
}

#[test]
fn text_windows_have_timestamp_lines_and_ctrl_c_ends_the_stream() {
    if !support::live() {
        return;
    }
    let fx = SocketFilterFixture::load().expect("load fixture");
    let s = spawn(&["activity", "--interval", "30", "--all", "--limit", "0"]);
    s.ready();
    fx.prog.test_run(777).expect("test run");
    std::thread::sleep(Duration::from_millis(400));
    // SAFETY: plain kill(2) on our own child.
    unsafe { libc::kill(s.child.id() as i32, libc::SIGINT) };
    let (code, out, err) = s.finish();
    assert_eq!(code, Some(0), "{err:?}");
    let heading = out.lines().next().expect("a heading");
    assert!(
        heading.contains("Z window ") && heading.contains(" s (from "),
        "{heading}"
    );
    let row: Vec<&str> = out
        .lines()
        .find(|l| l.split_whitespace().next() == Some(&fx.prog.id.to_string()))
        .expect("fixture row")
        .split_whitespace()
        .collect();
    assert_eq!(row[1], "socket_filter");
    let last = out.lines().last().expect("lines");
    assert!(
        last.starts_with("window ended early after ") && last.ends_with(" s of 30 s"),
        "{out}"
    );
    assert_eq!(out.lines().filter(|l| l.contains("Z window ")).count(), 1);
}

#[test]
fn single_text_window_cut_short_says_so() {
    if !support::live() {
        return;
    }
    let s = spawn(&["activity", "-d", "30"]);
    s.ready();
    std::thread::sleep(Duration::from_millis(300));
    // SAFETY: plain kill(2) on our own child.
    unsafe { libc::kill(s.child.id() as i32, libc::SIGINT) };
    let (code, out, err) = s.finish();
    assert_eq!(code, Some(0), "{err:?}");
    let last = out.lines().last().expect("lines");
    let secs: f64 = last
        .strip_prefix("window ended early after ")
        .and_then(|r| r.strip_suffix(" s of 30 s"))
        .unwrap_or_else(|| panic!("{out}"))
        .parse()
        .expect("seconds");
    assert!(secs > 0.2 && secs < 10.0, "{secs}");
}

#[test]
fn closed_pipe_stops_quietly() {
    if !support::live() {
        return;
    }
    let s = spawn_with(&["activity", "--interval", "0.2", "--all", "--json"], false);
    s.ready();
    let (code, _, err) = s.finish();
    assert_eq!(code, Some(0));
    assert!(err.is_empty(), "{err:?}");
}

#[test]
fn full_output_is_a_write_error() {
    if !support::live() {
        return;
    }
    let full = std::fs::File::create("/dev/full").expect("/dev/full");
    let o = Command::new(env!("CARGO_BIN_EXE_brr"))
        .args(["activity", "--interval", "0.2", "--all", "--json"])
        .stdout(full)
        .output()
        .expect("run brr");
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&o.stderr),
        "brr: write error: No space left on device\n"
    );
}

#[test]
fn top_textmode_prints_json_and_csv() {
    if !support::live() {
        return;
    }
    let fx = SocketFilterFixture::load().expect("load fixture");
    let s = spawn(&["top", "--textmode", "-d", "1", "--json", "--limit", "0"]);
    s.ready();
    fx.prog.test_run(99).expect("test run");
    let (code, out, err) = s.finish();
    assert_eq!(code, Some(0), "{err:?}");
    let doc: Value = serde_json::from_str(&out).expect("one JSON document");
    assert_eq!(doc["kind"], "program_activity");
    assert_eq!(doc["metadata"]["include_all"], true);
    let item = item_with_id(&doc, fx.prog.id).expect("top lists every program");
    assert_eq!(item["run_count_delta"], 99);

    let s = spawn(&["--csv", "top", "--textmode", "-d", "0.2", "--limit", "0"]);
    let (code, out, err) = s.finish();
    assert_eq!(code, Some(0), "{err:?}");
    assert!(out.starts_with("duration,limit,include_all,id,"));
    let id = fx.prog.id.to_string();
    assert!(out.lines().any(|l| l.split(',').nth(3) == Some(&id)));
}

#[test]
fn programs_loaded_and_unloaded_between_windows_are_followed() {
    // A continued window opens the programs it saw by ID and asks the
    // kernel only for greater IDs: one loaded meanwhile must still show,
    // one unloaded meanwhile must be gone.
    if !support::live() {
        return;
    }
    let stays = SocketFilterFixture::load().expect("load fixture");
    let goes = SocketFilterFixture::load().expect("load fixture");
    let (stays_id, goes_id) = (stays.prog.id, goes.prog.id);
    let s = spawn_json_lines("1", "3");
    s.ready();
    drop(goes);
    let comes = SocketFilterFixture::load().expect("load fixture");
    s.ready();
    comes.prog.test_run(77).expect("test run");
    stays.prog.test_run(5).expect("test run");
    s.ready();
    let (code, out, err) = s.finish();
    assert_eq!(code, Some(0), "{err:?}");
    let docs = json_lines(&out);
    assert_eq!(docs.len(), 3, "{out}");
    assert!(
        item_with_id(&docs[0], goes_id).is_none(),
        "unloaded in window 1"
    );
    assert!(
        item_with_id(&docs[0], comes.prog.id).is_some(),
        "loaded in window 1"
    );
    for doc in &docs[1..] {
        assert!(item_with_id(doc, goes_id).is_none());
        assert!(item_with_id(doc, stays_id).is_some());
    }
    let comes_row = item_with_id(&docs[1], comes.prog.id).expect("listed in window 2");
    assert_eq!(comes_row["run_count_delta"], 77, "{}", docs[1]);
    assert_eq!(
        item_with_id(&docs[1], stays_id).expect("stays")["run_count_delta"],
        5
    );
}
