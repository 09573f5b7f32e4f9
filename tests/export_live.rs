//! Live tests of the profile exports (root, real kernel): folded stacks,
//! flame graph and pprof written from one capture of a fixture program,
//! read back with the formats' own rules and, for pprof, with `go tool
//! pprof` itself.

// Test tooling: helpers outside #[test] functions fail the test by panicking,
// as the tests themselves do (clippy.toml only exempts #[test] code).
#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]

#[path = "support/run.rs"]
mod run;
mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use run::{brr, serial};
use serde_json::Value;
use support::*;

fn out_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("brr-export-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&d).expect("temp dir");
    d
}

/// `(frames, count)` of every folded line, checked to be well formed as
/// inferno reads it: the count after the last space, no empty frame.
fn folded_lines(text: &str) -> Vec<(Vec<String>, u64)> {
    text.lines()
        .map(|l| {
            let (stack, count) = l.rsplit_once(' ').unwrap_or_else(|| panic!("{l:?}"));
            let frames: Vec<String> = stack.split(';').map(String::from).collect();
            assert!(frames.iter().all(|f| !f.is_empty()), "{l:?}");
            (frames, count.parse().unwrap_or_else(|_| panic!("{l:?}")))
        })
        .collect()
}

fn program(doc: &Value, id: u32) -> &Value {
    doc["items"]
        .as_array()
        .and_then(|a| a.iter().find(|p| p["id"].as_u64() == Some(id as u64)))
        .unwrap_or_else(|| panic!("program {id} in the report"))
}

fn pprof_top(file: &Path) -> String {
    let o = Command::new("go")
        .args(["tool", "pprof", "-top", "-lines"])
        .arg(file)
        .env("HOME", std::env::temp_dir())
        .env("PPROF_TMPDIR", std::env::temp_dir())
        .stdin(Stdio::null())
        .output()
        .expect("run go tool pprof");
    assert!(
        o.status.success(),
        "go tool pprof failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn one_capture_gives_report_folded_flamegraph_and_pprof() {
    if !live() {
        return;
    }
    let _g = serial();
    let fx = HotFixture::load().expect("load hot fixture");
    let dir = out_dir("all");
    let (folded, svg, pb) = (dir.join("p.folded"), dir.join("p.svg"), dir.join("p.pb.gz"));
    let load = fx.spawn_load(Duration::from_millis(2500));
    let o = brr(&[
        "profile",
        "--json",
        "-d",
        "2",
        "--limit",
        "0",
        "--folded",
        folded.to_str().unwrap(),
        "--flamegraph",
        svg.to_str().unwrap(),
        "--pprof",
        pb.to_str().unwrap(),
    ]);
    load.join().expect("load thread");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let doc: Value = serde_json::from_slice(&o.stdout).expect("the JSON report as usual");
    let p = program(&doc, fx.prog.id);
    let samples = p["samples"].as_u64().unwrap() + p["kernel_samples"].as_u64().unwrap_or(0);
    assert!(samples >= 100, "enough samples: {samples}");

    let text = std::fs::read_to_string(&folded).expect("folded file");
    let lines = folded_lines(&text);
    let root = format!("{} [prog {}]", HotFixture::FUNC_NAME, fx.prog.id);
    let mine: Vec<&(Vec<String>, u64)> = lines.iter().filter(|(f, _)| f[0] == root).collect();
    let total: u64 = mine.iter().map(|(_, n)| n).sum();
    assert_eq!(
        total, samples,
        "folded counts add up to the report's samples"
    );
    let hot = format!(
        "hot.c:{} acc = acc * 31 + i； /* hot */",
        HotFixture::HOT_LINE
    );
    let hot_n: u64 = mine
        .iter()
        .filter(|(f, _)| f.get(1) == Some(&hot))
        .map(|(_, n)| n)
        .sum();
    assert!(
        hot_n * 10 >= total * 9,
        "hot line {hot_n} of {total}:\n{text}"
    );
    // Every program's counts add up to the attributed samples.
    let all: u64 = lines.iter().map(|(_, n)| n).sum();
    let meta = &doc["metadata"];
    let attributed = meta["bpf_jit_samples"].as_u64().unwrap()
        + meta["kernel_attributed_samples"].as_u64().unwrap_or(0);
    assert_eq!(all, attributed);

    let svg = std::fs::read_to_string(&svg).expect("svg file");
    assert!(
        svg.contains("<svg") && svg.contains(&root),
        "flame graph names the program"
    );
    assert!(svg.contains("brr profile: "), "titled");

    let gz = std::fs::read(&pb).expect("pprof file");
    assert_eq!(&gz[..2], &[0x1f, 0x8b], "gzipped");
    if go_available() {
        let top = pprof_top(&pb);
        let want = format!(
            "{} {}:{}",
            HotFixture::FUNC_NAME,
            HotFixture::FILE,
            HotFixture::HOT_LINE
        );
        assert!(top.contains(&want), "go tool pprof shows {want:?}:\n{top}");
        let first = top
            .lines()
            .skip_while(|l| !l.trim_start().starts_with("flat"))
            .nth(1)
            .unwrap_or("");
        assert!(first.contains(&want), "hot line ranks first:\n{top}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn folded_to_stdout_replaces_the_report_also_from_top_textmode() {
    if !live() {
        return;
    }
    let _g = serial();
    let fx = HotFixture::load().expect("load hot fixture");
    let id = fx.prog.id.to_string();
    let root = format!("{} [prog {}]", HotFixture::FUNC_NAME, fx.prog.id);
    let load = fx.spawn_load(Duration::from_millis(4000));
    let o = brr(&["profile", "-d", "1", "--program-id", &id, "--folded", "-"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8(o.stdout).unwrap();
    let lines = folded_lines(&text);
    assert!(!lines.is_empty());
    assert!(
        lines.iter().all(|(f, _)| f[0] == root),
        "only the program:\n{text}"
    );

    let dir = out_dir("top");
    let svg = dir.join("top.svg");
    let o = brr(&[
        "top",
        "--textmode",
        "--profile-top",
        "--program-id",
        &id,
        "-d",
        "0.3",
        "--profile-duration",
        "1",
        "--flamegraph",
        svg.to_str().unwrap(),
    ]);
    load.join().expect("load thread");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(!o.stdout.is_empty(), "the textmode report is still printed");
    let s = std::fs::read_to_string(&svg).expect("svg from top");
    assert!(s.contains(&root));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_file_that_fails_after_the_capture_still_gets_the_report() {
    if !live() {
        return;
    }
    let _g = serial();
    let fx = HotFixture::load().expect("load hot fixture");
    let id = fx.prog.id.to_string();
    let dir = out_dir("full");
    let folded = dir.join("ok.folded");
    let load = fx.spawn_load(Duration::from_millis(2500));
    // /dev/full opens, and every write to it fails with ENOSPC.
    let o = brr(&[
        "profile",
        "-d",
        "1",
        "--program-id",
        &id,
        "--pprof",
        "/dev/full",
        "--folded",
        folded.to_str().unwrap(),
    ]);
    load.join().expect("load thread");
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        run::stderr(&o),
        "brr: cannot write pprof profile to /dev/full: No space left on device (os error 28)\n"
    );
    let text = run::stdout(&o);
    assert!(
        text.contains(&format!("Breakdown of program {id} (")),
        "the report is printed:\n{text}"
    );
    let lines = folded_lines(&std::fs::read_to_string(&folded).expect("folded file"));
    assert!(!lines.is_empty(), "the other file is written");
    let _ = std::fs::remove_dir_all(&dir);
}
