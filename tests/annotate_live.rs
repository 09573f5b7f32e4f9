//! Live tests of `brr profile --annotate`: its samples per native
//! instruction against a concurrent `perf record` of the same program, its
//! text, CSV and `top --textmode` forms, the native inspect view, and the
//! JIT overhead hint on a program that does almost nothing per run.

// Test tooling: helpers outside #[test] functions fail the test by panicking.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "support/run.rs"]
mod run;
mod support;

use std::collections::BTreeMap;
use std::process::{Command, Stdio};
use std::time::Duration;

use run::{brr, serial, stderr, stdout};
use serde_json::Value;
use support::btf::Linkage;
use support::insn::*;
use support::*;

const FILE: &str = "/src/brr-fixtures/divloop.c";
const ROUNDS: i32 = 256;
const FREQ: &str = "997";

/// A socket filter whose time goes to a short loop: 256 rounds of a
/// multiply, a division and two adds, so that its samples fall on a
/// dozen native instructions with unequal shares.
fn loop_program() -> LoadedProg {
    let mut b = ProgBuilder::new();
    b.func("brr_fx_divloop_main", Linkage::Global);
    b.line(FILE, 10, 5, "    __u64 acc = 0;");
    b.emit(mov64_imm(R6, 0));
    b.emit(mov64_imm(R7, 0));
    let top = b.pc();
    b.line(FILE, 12, 13, "        acc += i * 0x45d9f3b / 7;");
    b.emit(mov64_reg(R3, R7));
    b.emit(alu64_imm(BPF_MUL, R3, 0x45d9f3b));
    b.emit(alu64_imm(BPF_DIV, R3, 7));
    b.emit(alu64_reg(BPF_ADD, R6, R3));
    b.line(FILE, 11, 23, "    for (int i = 0; i < 256; i++)");
    b.emit(alu64_imm(BPF_ADD, R7, 1));
    let back = b.pc();
    b.emit(jmp_imm(
        BPF_JLT,
        R7,
        ROUNDS,
        (top as i16) - (back as i16) - 1,
    ));
    b.line(FILE, 14, 5, "    return acc & 0;");
    b.emit(mov64_reg(R0, R6));
    b.emit(alu64_imm(BPF_AND, R0, 0));
    b.emit(exit());
    load_program(sys::BPF_PROG_TYPE_SOCKET_FILTER, "brr_fx_divloop", &b).expect("load loop")
}

/// `return 0`: every run is almost all entry and exit.
fn empty_program() -> LoadedProg {
    let mut b = ProgBuilder::new();
    b.func("brr_fx_empty_main", Linkage::Global);
    b.line("/src/brr-fixtures/empty.c", 3, 5, "    return 0;");
    b.emit(mov64_imm(R0, 0));
    b.emit(exit());
    load_program(sys::BPF_PROG_TYPE_SOCKET_FILTER, "brr_fx_empty", &b).expect("load empty")
}

/// The main function's JIT address and length, read with the test's own
/// bpf() request.
fn jit_range(p: &LoadedProg) -> (u64, u64) {
    let j = sys::prog_jited(p.fd()).expect("JIT image");
    let start = *j.ksyms.first().expect("JIT address");
    let len = u64::from(*j.func_lens.first().expect("JIT length"));
    assert!(start != 0 && len > 0, "JIT addresses hidden");
    (start, len)
}

/// Whether perf runs; without it the test skips unless BRR_REQUIRE_LIVE=1.
fn perf_available() -> bool {
    let ok = Command::new("perf")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        if std::env::var(REQUIRE_LIVE_ENV).as_deref() == Ok("1") {
            panic!("{REQUIRE_LIVE_ENV}=1 but perf is not installed");
        }
        skip("perf not installed");
    }
    ok
}

/// Samples per offset in `[start, start + len)` of the IPs `perf script`
/// prints for a recording.
fn perf_offsets(data: &std::path::Path, start: u64, len: u64) -> BTreeMap<u64, u64> {
    let out = Command::new("perf")
        .args(["script", "-F", "ip", "-i"])
        .arg(data)
        .output()
        .expect("perf script");
    assert!(out.status.success(), "perf script: {}", stderr(&out));
    let mut counts = BTreeMap::new();
    for ip in stdout(&out)
        .lines()
        .filter_map(|l| u64::from_str_radix(l.trim(), 16).ok())
        .filter(|ip| (start..start + len).contains(ip))
    {
        *counts.entry(ip - start).or_insert(0) += 1;
    }
    counts
}

/// brr's samples per offset of the main function.
fn brr_offsets(item: &Value, function: &str) -> BTreeMap<u64, u64> {
    let mut counts = BTreeMap::new();
    for n in item["native"].as_array().expect("native list") {
        assert_eq!(n["function"].as_str(), Some(function), "{n}");
        let off = n["offset"].as_u64().expect("offset");
        *counts.entry(off).or_insert(0) += n["samples"].as_u64().expect("samples");
    }
    counts
}

/// Total variation distance between two sample distributions.
fn distance(a: &BTreeMap<u64, u64>, b: &BTreeMap<u64, u64>) -> f64 {
    let (ta, tb) = (
        a.values().sum::<u64>() as f64,
        b.values().sum::<u64>() as f64,
    );
    let keys: std::collections::BTreeSet<&u64> = a.keys().chain(b.keys()).collect();
    keys.into_iter()
        .map(|k| {
            let pa = *a.get(k).unwrap_or(&0) as f64 / ta;
            let pb = *b.get(k).unwrap_or(&0) as f64 / tb;
            (pa - pb).abs()
        })
        .sum::<f64>()
        / 2.0
}

/// The offsets, most samples first.
fn ranked(c: &BTreeMap<u64, u64>) -> Vec<u64> {
    let mut v: Vec<(u64, u64)> = c.iter().map(|(&o, &n)| (o, n)).collect();
    v.sort_by_key(|&(o, n)| (std::cmp::Reverse(n), o));
    v.into_iter().map(|(o, _)| o).collect()
}

/// Both tools sample the same program at the same rate at the same time,
/// each with its own cpu-clock timer: two independent draws from one
/// distribution over the loop's instructions. With a few hundred samples
/// or more on a dozen instructions, sampling noise alone gives a total
/// variation distance of about 0.05; 0.2 leaves room for a busy machine,
/// while reading offsets from the wrong base, the wrong function or one
/// instruction off moves most of the mass and gives 0.5 or more.
const MAX_DISTANCE: f64 = 0.2;
/// Fewer samples than this say the machine was too busy to compare.
const MIN_SAMPLES: u64 = 200;

#[test]
fn instruction_samples_match_a_concurrent_perf_record() {
    if !live() || !perf_available() {
        return;
    }
    let _serial = serial();
    let prog = loop_program();
    let (start, len) = jit_range(&prog);
    let load = LoadDriver::start(prog.fd(), 1, 64).expect("load");
    std::thread::sleep(Duration::from_millis(300));
    let dir = std::env::temp_dir().join(format!("brr-annotate-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let data = dir.join("perf.data");
    let perf = Command::new("perf")
        .args(["record", "-q", "--no-buildid", "-a", "-e", "cpu-clock:k"])
        .args(["-F", FREQ, "-o"])
        .arg(&data)
        .args(["--", "sleep", "5"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("perf record");
    std::thread::sleep(Duration::from_millis(300));
    let id = prog.id.to_string();
    let o = brr(&[
        "profile",
        "--annotate",
        "--json",
        "-F",
        FREQ,
        "-d",
        "4",
        "--program-id",
        &id,
    ]);
    let recorded = perf.wait_with_output().expect("perf record");
    load.stop().expect("load threads");
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        recorded.status.success(),
        "perf record: {}",
        stderr(&recorded)
    );
    let doc: Value = serde_json::from_slice(&o.stdout).expect("JSON");
    let item = &doc["items"][0];
    let ours = brr_offsets(item, "brr_fx_divloop_main");
    let theirs = perf_offsets(&data, start, len);
    let _ = std::fs::remove_dir_all(&dir);
    let (n_ours, n_theirs) = (ours.values().sum::<u64>(), theirs.values().sum::<u64>());
    // Every direct sample is on some instruction.
    assert_eq!(n_ours, item["samples"].as_u64().unwrap());
    assert!(
        n_ours >= MIN_SAMPLES && n_theirs >= MIN_SAMPLES,
        "too few samples to compare: brr {n_ours}, perf {n_theirs}"
    );
    let d = distance(&ours, &theirs);
    let (top_ours, top_theirs) = (ranked(&ours), ranked(&theirs));
    let report = format!(
        "distance {d:.3}; brr ({n_ours}): {:?}; perf ({n_theirs}): {:?}",
        top_ours
            .iter()
            .take(8)
            .map(|o| (o, ours[o]))
            .collect::<Vec<_>>(),
        top_theirs
            .iter()
            .take(8)
            .map(|o| (o, theirs[o]))
            .collect::<Vec<_>>(),
    );
    eprintln!("{report}");
    assert!(d < MAX_DISTANCE, "{report}");
    assert!(
        top_theirs.iter().take(3).any(|&o| o == top_ours[0]),
        "{report}"
    );
    // The loop holds the time, and it is the program's own code.
    assert!(item["hints"]
        .as_array()
        .unwrap()
        .iter()
        .all(|h| h["kind"] != "jit_overhead"));
}

/// `brr dump --jited --json`'s instruction text at each offset of the main
/// function.
fn dumped_asm(id: &str) -> BTreeMap<u64, String> {
    let o = brr(&["dump", id, "--jited", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    doc["jited_functions"][0]["insns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            (
                i["offset"].as_u64().unwrap(),
                i["asm"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn text_csv_and_textmode_forms() {
    if !live() {
        return;
    }
    let _serial = serial();
    let prog = loop_program();
    let id = prog.id.to_string();
    let asm = dumped_asm(&id);
    let load = LoadDriver::start(prog.fd(), 1, 64).expect("load");
    std::thread::sleep(Duration::from_millis(200));
    let common = [
        "--annotate",
        "-d",
        "1",
        "--program-id",
        &id,
        "--line-limit",
        "3",
    ];
    let text = brr(&[&["profile"][..], &common].concat());
    let csv = brr(&[&["profile", "--csv"][..], &common].concat());
    let top = brr(&[
        "top",
        "--textmode",
        "-d",
        "0.2",
        "--profile-top",
        "--annotate",
        "--profile-duration",
        "1",
        "--program-id",
        &id,
        "--line-limit",
        "3",
        "--inspect-mode",
        "native",
    ]);
    load.stop().expect("load threads");
    for o in [&text, &csv, &top] {
        assert!(o.status.success(), "{}", stderr(o));
    }
    // Text: the table after the line breakdown, three rows and Other,
    // each instruction as `dump --jited` shows it at that offset.
    let text = stdout(&text);
    // Under the program's full name, like the other titles.
    let heading = format!("Instructions of program {id} (brr_fx_divloop_main):\n\n");
    let (_, table) = text.split_once(&heading).expect(&text);
    let rows: Vec<&str> = table.lines().take_while(|l| !l.is_empty()).collect();
    assert!(rows[0].starts_with("SAMPLES  %THIS  FUNCTION"), "{text}");
    assert_eq!(rows.len(), 5, "{text}");
    assert!(rows[4].contains("Other native instructions not shown (--line-limit=3)"));
    for r in &rows[1..4] {
        let off = r
            .split_whitespace()
            .find_map(|c| c.strip_prefix("+0x"))
            .and_then(|h| u64::from_str_radix(h, 16).ok())
            .expect(r);
        assert!(r.contains(&asm[&off]), "{r} vs {}", asm[&off]);
        assert!(r.contains("divloop.c:"), "{r}");
    }
    // CSV: native rows carry the instruction in the appended columns.
    check_csv(&stdout(&csv), &asm);
    // top --textmode: the native inspect view and the same table.
    let top = stdout(&top);
    assert!(
        top.contains(&format!(
            "BRR INSPECT program={id} name=brr_fx_divloop_main mode=native profiled=yes instructions=x86_64"
        )),
        "{top}"
    );
    assert!(
        top.lines().any(|l| l.trim() == "brr_fx_divloop_main:"),
        "{top}"
    );
    assert!(top.contains("  [prologue]"), "{top}");
    assert!(top.contains(&heading), "{top}");
    // The inspect rows' %THIS column adds up to 100 %.
    let inspect = top
        .split_once("%THIS  SAMPLES  CODE")
        .and_then(|(_, t)| t.split_once('\n'))
        .map(|(_, t)| t.split_once("\n\n").map_or(t, |(a, _)| a))
        .expect(&top);
    let total: f64 = inspect
        .lines()
        .filter_map(|l| l.split_whitespace().next()?.parse::<f64>().ok())
        .sum();
    assert!((total - 100.0).abs() < 0.011, "{total}\n{top}");
}

/// The CSV of `profile --annotate`: the native columns after every other
/// one, and on each `native` row the instruction `dump --jited` shows at
/// its offset.
fn check_csv(csv: &str, asm: &BTreeMap<u64, String>) {
    // The appended columns come after every other one.
    let mut lines = csv.lines();
    let header = csv_fields(lines.next().unwrap());
    let n = header.len();
    assert_eq!(
        header[n - 4..],
        ["pid", "native_function", "native_offset", "native_asm"]
    );
    let at = |name: &str| header.iter().position(|c| c == name).unwrap();
    let rows: Vec<Vec<String>> = lines.map(csv_fields).collect();
    let native: Vec<&Vec<String>> = rows
        .iter()
        .filter(|r| r[at("hotspot_kind")] == "native")
        .collect();
    assert!(!native.is_empty(), "{csv}");
    for r in &native {
        assert_eq!(r.len(), n, "{r:?}");
        assert_eq!(r[at("full_name")], "brr_fx_divloop_main");
        assert_eq!(r[at("native_function")], "brr_fx_divloop_main");
        let off: u64 = r[at("native_offset")].parse().expect("offset");
        // Only the printed instructions have text in a text report; CSV
        // lists every one with its text.
        assert_eq!(r[at("native_asm")], asm[&off], "{r:?}");
    }
}

#[test]
fn an_empty_program_gets_the_jit_overhead_hint() {
    if !live() {
        return;
    }
    let _serial = serial();
    let prog = empty_program();
    let id = prog.id.to_string();
    let load = LoadDriver::start(prog.fd(), 1, 10_000).expect("load");
    std::thread::sleep(Duration::from_millis(200));
    let o = brr(&[
        "profile",
        "--annotate",
        "--json",
        "-d",
        "3",
        "--program-id",
        &id,
    ]);
    let plain = brr(&["profile", "--json", "-d", "1", "--program-id", &id]);
    load.stop().expect("load threads");
    assert!(o.status.success(), "{}", stderr(&o));
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    let item = &doc["items"][0];
    let native = item["native"].as_array().unwrap();
    let summary: Vec<String> = native
        .iter()
        .map(|n| format!("{}={} {}", n["offset"], n["samples"], n["asm"]))
        .collect();
    let hint = item["hints"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["kind"] == "jit_overhead")
        .unwrap_or_else(|| panic!("no jit_overhead hint: {summary:?} {}", item["hints"]));
    assert!(hint["figure"].as_f64().unwrap() > hint["threshold"].as_f64().unwrap());
    assert_eq!(hint["unit"], "%");
    assert!(
        hint["evidence"]
            .as_str()
            .unwrap()
            .contains("prologues and epilogues"),
        "{hint}"
    );
    // Without --annotate the JIT code is not read: no hint, no list.
    assert!(plain.status.success(), "{}", stderr(&plain));
    let doc: Value = serde_json::from_slice(&plain.stdout).unwrap();
    assert!(doc["items"][0].get("native").is_none());
    assert!(doc["items"][0]["hints"]
        .as_array()
        .unwrap()
        .iter()
        .all(|h| h["kind"] != "jit_overhead"));
}

/// brr's own CPU time (task-clock, ms) for one run of `args`, measured by
/// `perf stat`, and its stdout.
fn task_clock(bin: &str, args: &[&str]) -> (f64, String) {
    let o = Command::new("perf")
        .args(["stat", "-x", ",", "-e", "task-clock", "--", bin])
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("perf stat");
    assert!(o.status.success(), "{}", stderr(&o));
    let ms = stderr(&o)
        .lines()
        .find(|l| l.contains("task-clock"))
        .and_then(|l| l.split(',').next()?.parse::<f64>().ok())
        .expect("task-clock figure");
    (ms, stdout(&o))
}

/// Whether a sampled instruction's text names a destination outside its
/// program (so the kernel symbol table was read to print it).
fn names_a_symbol(doc: &str) -> bool {
    let doc: Value = serde_json::from_str(doc).unwrap();
    doc["items"][0]["native"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|n| n["asm"].as_str())
        .any(|a| {
            (a.starts_with("call ") || a.starts_with("jmp "))
                && !a.contains(" +0x")
                && !a.contains(" 0x")
        })
}

/// The CPU `--annotate` adds to a profile, for the README: interleaved
/// 5 s profiles of the hot fixture (the program `fixture hot` drives) with
/// and without it. `cargo test --release --test annotate_live --
/// --ignored --nocapture annotate_cost` (`BRR_BENCH_BIN` picks the brr
/// binary, e.g. a release build; `BRR_BENCH_ROUNDS` the rounds, 9).
///
/// The binary runs from a copy in a tmpfs when there is one, so that a
/// page cache under memory pressure does not add disk reads to some runs.
/// Besides each form's median and lowest, it prints the median of the
/// rounds' paired differences (each round runs the four forms back to
/// back), which a slow drift of the machine does not move.
#[test]
#[ignore]
fn annotate_cost() {
    if !live() || !perf_available() {
        return;
    }
    let _serial = serial();
    let fx = HotFixture::load().expect("load the hot fixture");
    let id = fx.prog.id.to_string();
    let given = std::env::var("BRR_BENCH_BIN").unwrap_or(env!("CARGO_BIN_EXE_brr").into());
    let shm = std::path::Path::new("/dev/shm");
    let copy = shm
        .is_dir()
        .then(|| shm.join(format!("brr-annotate-cost-{}", std::process::id())))
        .filter(|c| std::fs::copy(&given, c).is_ok());
    let bin = copy
        .as_ref()
        .map_or(given.clone(), |c| c.display().to_string());
    let load = LoadDriver::start(fx.prog.fd(), 1, HOT_REPEAT).expect("load");
    std::thread::sleep(Duration::from_millis(300));
    let profile = ["profile", "--program-id", &id];
    let variants: [&[&str]; 4] = [&[], &["--annotate"], &["--json"], &["--json", "--annotate"]];
    let runs = std::env::var("BRR_BENCH_ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(9usize)
        .max(1);
    let mut cpu: [Vec<f64>; 4] = Default::default();
    let mut named = 0;
    for _ in 0..runs {
        for (v, extra) in variants.iter().enumerate() {
            let (ms, out) = task_clock(&bin, &[&profile[..], extra].concat());
            cpu[v].push(ms);
            if v == 3 {
                named += usize::from(names_a_symbol(&out));
            }
        }
    }
    load.stop().expect("load threads");
    if let Some(c) = &copy {
        let _ = std::fs::remove_file(c);
    }
    let (kallsyms, _) = task_clock("cat", &["/proc/kallsyms"]);
    let median = |v: &[f64]| {
        let mut v = v.to_vec();
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let lowest = |v: &[f64]| v.iter().copied().fold(f64::INFINITY, f64::min);
    eprintln!("{runs} interleaved 5 s profiles of program {id} from {bin}");
    eprintln!(
        "{:26} {:>8} {:>9} {:>7}   {:>8} {:>9} {:>7}   {:>15}",
        "task-clock", "median", "", "", "lowest", "", "", "paired median"
    );
    for (v, extra) in variants.iter().enumerate() {
        let name = format!("profile {}", extra.join(" "));
        let base = v - v % 2;
        let (m, mb) = (median(&cpu[v]), median(&cpu[base]));
        let (l, lb) = (lowest(&cpu[v]), lowest(&cpu[base]));
        let paired: Vec<f64> = cpu[v].iter().zip(&cpu[base]).map(|(a, b)| a - b).collect();
        let p = median(&paired);
        eprintln!(
            "{name:26} {m:8.2} ms {:+7.2} ms {:+6.1} %   {l:8.2} ms {:+7.2} ms {:+6.1} %   {p:+7.2} ms {:+6.1} %",
            m - mb,
            (m / mb - 1.0) * 100.0,
            l - lb,
            (l / lb - 1.0) * 100.0,
            p / mb * 100.0,
        );
    }
    eprintln!("  {named} of {runs} --json --annotate runs named a call or jump target (read /proc/kallsyms)");
    eprintln!("cat /proc/kallsyms  {kallsyms:8.2} ms");
}
