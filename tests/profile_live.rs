//! Live tests of `brr profile` (root, real kernel): fixture programs driven
//! with BPF_PROG_TEST_RUN while the real binary samples them.
//!
//! Only the fixtures' own programs are asserted on; the host may run other
//! BPF programs. The tests share two CPUs, so they run one at a time.

// Test tooling: helpers outside #[test] functions fail the test by panicking,
// as the tests themselves do (clippy.toml only exempts #[test] code).
#![allow(clippy::expect_used, clippy::panic)]
// SIGINT reaches the child brr through libc::kill, which is unsafe.
#![allow(unsafe_code)]

#[path = "support/run.rs"]
mod run;
mod support;
#[path = "support/traced.rs"]
mod traced;

use std::time::{Duration, Instant};

use run::{brr, profile_json, serial, stderr, stdout};
use serde_json::Value;
use support::btf::Linkage;
use support::insn::*;
use support::*;
use traced::Traced;

/// A 2 s `--kernel-samples` profile, unlimited, taken while `load` runs.
fn kernel_profile_while(load: std::thread::JoinHandle<u64>) -> Value {
    let doc = profile_json(&[
        "-d",
        "2",
        "--kernel-samples",
        "--limit",
        "0",
        "--line-limit",
        "0",
    ]);
    load.join().expect("load thread");
    doc
}

fn program(doc: &Value, id: u32) -> Option<&Value> {
    doc.get("items")?
        .as_array()?
        .iter()
        .find(|p| p.get("id").and_then(Value::as_u64) == Some(id as u64))
}

fn num(v: &Value, key: &str) -> u64 {
    v.get(key)
        .and_then(Value::as_u64)
        .unwrap_or_else(|| panic!("{key} in {v:?}"))
}

fn text<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

/// Nothing may be lost, malformed or discarded. The kernel may still throttle
/// sampling when the machine is busy (its interrupt-time budget is shared
/// with every other perf user); that alone marks the profile incomplete.
fn assert_complete_unless_throttled(meta: &Value) {
    for key in [
        "lost_samples",
        "perf_malformed_records",
        "perf_discarded_bytes",
    ] {
        assert_eq!(num(meta, key), 0, "{key}: {meta:?}");
    }
    let throttled = num(meta, "perf_throttle_events") > 0;
    assert_eq!(
        meta.get("incomplete").and_then(Value::as_bool),
        Some(throttled),
        "{meta:?}"
    );
}

#[test]
fn hot_line_ranks_first_with_file_line_and_text() {
    if !live() {
        return;
    }
    let _g = serial();
    let fx = HotFixture::load().expect("load hot fixture");
    let load = fx.spawn_load(Duration::from_millis(2500));
    let doc = profile_json(&["-d", "2", "--limit", "0", "--line-limit", "0"]);
    load.join().expect("load thread");
    let meta = doc.get("metadata").unwrap();
    assert_complete_unless_throttled(meta);
    let p = program(&doc, fx.prog.id).expect("hot fixture profiled");
    // Other programs on the host may run hot too, so the fixture's share
    // of all in-BPF samples is not asserted; its own count must show it ran.
    let bpf = num(meta, "bpf_jit_samples");
    let mine = num(p, "samples");
    assert!(mine <= bpf, "{mine} of {bpf}");
    assert!(mine >= 100, "enough samples to judge: {mine}");
    assert_eq!(text(p, "name"), Some(HotFixture::PROG_NAME));
    let top = &p.get("hotspots").unwrap().as_array().unwrap()[0];
    assert_eq!(text(top, "file"), Some(HotFixture::FILE));
    assert_eq!(
        top.get("line").and_then(Value::as_u64),
        Some(HotFixture::HOT_LINE as u64)
    );
    assert_eq!(text(top, "source"), Some(HotFixture::HOT_TEXT));
    assert!(
        num(top, "samples") * 10 >= mine * 9,
        "hot line holds ≥ 90 %: {top:?}"
    );
    // Every sample is in some row (no limits here).
    let rows: u64 = p
        .get("hotspots")
        .unwrap()
        .as_array()
        .unwrap()
        .iter()
        .map(|h| num(h, "samples"))
        .sum();
    assert_eq!(rows, mine);
}

#[test]
fn subprogram_name_is_shown() {
    if !live() {
        return;
    }
    let _g = serial();
    let fx = SubprogFixture::load().expect("load subprog fixture");
    let load = fx.spawn_load(Duration::from_millis(3500));
    let doc = profile_json(&["-d", "1.5", "--limit", "0"]);
    let o = brr(&["profile", "-d", "1", "--limit", "0"]);
    load.join().expect("load thread");
    let p = program(&doc, fx.prog.id).expect("subprog fixture profiled");
    let top = &p.get("hotspots").unwrap().as_array().unwrap()[0];
    assert_eq!(
        top.get("line").and_then(Value::as_u64),
        Some(SubprogFixture::HOT_LINE as u64)
    );
    assert_eq!(text(top, "function"), Some(SubprogFixture::SUB_FUNC));
    // The 15-byte kernel name stays in `name`; `full_name` is the BTF name
    // of the main function, which is longer than 15 bytes.
    assert_eq!(text(p, "name"), Some(SubprogFixture::PROG_NAME));
    assert!(SubprogFixture::MAIN_FUNC.len() > 15);
    assert_eq!(text(p, "full_name"), Some(SubprogFixture::MAIN_FUNC));
    let out = stdout(&o);
    let row = out
        .lines()
        .find(|l| l.contains(SubprogFixture::HOT_TEXT.trim()))
        .unwrap_or_else(|| panic!("hot line in text output:\n{out}"));
    assert!(row.contains(SubprogFixture::SUB_FUNC), "{row}");
    assert!(out.contains("FUNCTION"), "{out}");
}

#[test]
fn helper_samples_sit_under_the_hot_line() {
    if !live() {
        return;
    }
    let _g = serial();
    let fx = HelperFixture::load().expect("load helper fixture");
    // A raw tracepoint fired meanwhile: its hook's dispatch is tied to it.
    let renamed = support::renamed::RenameFixture::start("brr_pt_dispatch").expect("raw tp");
    // The raw tracepoint's program is two instructions, and under
    // emulation (the kernel matrix's guests) the helper fixture's thread
    // gets little CPU: a 2 s profile can miss the one or sample the other
    // too little, so up to three captures are taken until both show.
    let enough = |doc: &Value| {
        program(doc, renamed.prog.id).is_some()
            && program(doc, fx.prog.id).is_some_and(|p| num(p, "kernel_samples") >= 100)
    };
    let mut doc = kernel_profile_while(fx.spawn_load(Duration::from_millis(2500)));
    for _ in 1..3 {
        if enough(&doc) {
            break;
        }
        doc = kernel_profile_while(fx.spawn_load(Duration::from_millis(2500)));
    }
    if let Some(r) = program(&doc, renamed.prog.id) {
        let d = num(r, "dispatch_samples");
        println!(
            "raw tracepoint fixture: {} own, {d} dispatch samples",
            r["inclusive_samples"]
        );
        assert!(r["dispatch_cpu_percent"].is_f64(), "{r}");
    } else {
        panic!("raw tracepoint fixture {} not sampled", renamed.prog.id);
    }
    let id = renamed.prog.id.to_string();
    let table = brr(&[
        "profile",
        "-d",
        "1",
        "--kernel-samples",
        "--program-id",
        &id,
    ]);
    drop(renamed);
    let out = stdout(&table);
    assert!(
        out.lines()
            .any(|l| l.trim_start().starts_with("ID ") && l.contains("DISPATCH_CPU%")),
        "{out}{}",
        stderr(&table)
    );
    let p = program(&doc, fx.prog.id).unwrap_or_else(|| {
        // Say what the profile did see, so that a kernel where this fails
        // tells why (no samples at all, or samples given to other code).
        let seen: Vec<String> = doc["items"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|p| format!("{} {} {}", p["id"], p["name"], p["samples"]))
            .collect();
        panic!(
            "helper fixture {} profiled; programs seen: {seen:?}; metadata: {}",
            fx.prog.id, doc["metadata"]
        )
    });
    let under = num(p, "kernel_samples");
    assert!(under >= 100, "kernel samples under the program: {under}");
    let rows = p.get("kernel_hotspots").unwrap().as_array().unwrap();
    let on_hot: u64 = rows
        .iter()
        .filter(|k| {
            k.get("bpf_line").and_then(Value::as_u64) == Some(HelperFixture::HOT_LINE as u64)
                && text(k, "bpf_source") == Some(HelperFixture::HOT_TEXT)
                && text(k, "bpf_file") == Some(HelperFixture::FILE)
        })
        .map(|k| num(k, "samples"))
        .sum();
    assert!(
        on_hot * 10 >= under * 9,
        "{on_hot} of {under} under the hot line"
    );
    let helper: Vec<&Value> = rows
        .iter()
        .filter(|k| text(k, "symbol") == Some("bpf_ktime_get_ns"))
        .collect();
    assert!(!helper.is_empty(), "bpf_ktime_get_ns sampled: {rows:?}");
    for k in helper {
        assert_eq!(text(k, "symbol_kind"), Some("bpf_helper"));
        assert_eq!(
            k.get("bpf_line").and_then(Value::as_u64),
            Some(HelperFixture::HOT_LINE as u64)
        );
    }
    let meta = doc.get("metadata").unwrap();
    assert!(num(meta, "kernel_symbolized_samples") >= under);
    assert!(p["dispatch_samples"].is_u64(), "{p}");
}

/// The instruction after each helper call starts the next source line, so
/// the return address belongs to that line: helper time must still go to
/// the line of the call (lookup at return address − 1).
#[test]
fn helper_time_goes_to_the_line_of_the_call_not_the_next() {
    if !live() {
        return;
    }
    let _g = serial();
    const FILE: &str = "/src/brr-profile-tests/call_site.c";
    const CALL_TEXT: &str = "    t = bpf_ktime_get_ns();";
    let mut b = ProgBuilder::new();
    b.func("brr_pt_call_site_main", Linkage::Global);
    b.line(FILE, 10, 5, "    __u64 t = 0;");
    b.emit(mov64_imm(R6, 0));
    for _ in 0..300 {
        b.line(FILE, 11, 9, CALL_TEXT);
        b.emit(call_helper(BPF_FUNC_KTIME_GET_NS));
        b.line(FILE, 12, 9, "    acc ^= t;");
        b.emit(mov64_reg(R6, R0));
    }
    b.line(FILE, 13, 5, "    return 0;");
    b.emit(mov64_imm(R0, 0));
    b.emit(exit());
    let prog = load_program(sys::BPF_PROG_TYPE_SOCKET_FILTER, "brr_pt_callsite", &b)
        .expect("load call-site program");
    let load = spawn_test_run_load(prog.fd(), 1000, Duration::from_millis(2500));
    let doc = kernel_profile_while(load);
    let p = program(&doc, prog.id).expect("call-site program profiled");
    let under = num(p, "kernel_samples");
    assert!(under >= 100, "kernel samples under the program: {under}");
    let on_line = |line: u64| -> u64 {
        p.get("kernel_hotspots")
            .unwrap()
            .as_array()
            .unwrap()
            .iter()
            .filter(|k| k.get("bpf_line").and_then(Value::as_u64) == Some(line))
            .map(|k| num(k, "samples"))
            .sum()
    };
    let (call, next) = (on_line(11), on_line(12));
    assert!(
        call * 100 >= under * 95,
        "line 11 (call) {call}, line 12 {next}, of {under}"
    );
    let k = &p.get("kernel_hotspots").unwrap().as_array().unwrap()[0];
    assert_eq!(text(k, "bpf_source"), Some(CALL_TEXT));
}

/// CLOCK_BOOTTIME in ns: the clock of a program's `load_time`.
fn boottime_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec we own.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_BOOTTIME, &mut ts) };
    assert_eq!(rc, 0, "clock_gettime(CLOCK_BOOTTIME)");
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

fn unix_ns() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock after 1970")
        .as_nanos() as u64
}

/// `key=N` from brr's startup trace line.
fn trace_field(trace: &[String], key: &str) -> u64 {
    let prefix = format!("{key}=");
    trace
        .iter()
        .flat_map(|l| l.split_whitespace())
        .find_map(|w| w.strip_prefix(&prefix))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no {key} in brr's trace: {trace:?}"))
}

#[test]
fn program_loaded_during_the_capture_is_attributed() {
    if !live() {
        return;
    }
    let _g = serial();
    let listed = brr(&["prog", "--json"]);
    assert!(listed.status.success(), "{}", stderr(&listed));
    let listed: Value = serde_json::from_str(&stdout(&listed)).expect("valid JSON");
    let newest_before = listed["items"]
        .as_array()
        .expect("items")
        .iter()
        .filter_map(|p| p["id"].as_u64())
        .max()
        .unwrap_or(0);

    let mut brr = Traced::spawn(
        &["profile", "--json", "-d", "3", "--limit", "0"],
        &[("BRR_TRACE_STARTUP", "1")],
    );
    brr.wait_ready("capture");
    let (ready_boot, ready_unix) = (boottime_ns(), unix_ns());
    let fx = HotFixture::load().expect("load hot fixture");
    let load_time = fx.prog.info().expect("fixture info").load_time;
    let runs = fx
        .spawn_load(Duration::from_millis(1500))
        .join()
        .expect("load thread");
    assert!(runs > 0);
    let (o, trace) = brr.finish();
    assert!(o.status.success(), "{}", stderr(&o));

    // The fixture is new: the kernel hands out increasing IDs, and its load
    // time (same clock) is after brr said its perf events were enabled.
    assert!(
        u64::from(fx.prog.id) > newest_before,
        "fixture id {} not above {newest_before}, the newest before the capture",
        fx.prog.id
    );
    assert!(
        load_time > ready_boot,
        "loaded at {load_time} ns, ready seen at {ready_boot} ns (boot time)"
    );
    // brr's own record of when it enabled the events agrees: at or before
    // the ready line reached the test (1 ms allows for converting clocks).
    let enabled = trace_field(&trace, "enabled_unix_ns");
    assert!(
        enabled > 0 && enabled <= ready_unix + 1_000_000,
        "events enabled at {enabled} ns, ready seen at {ready_unix} ns (unix)"
    );

    let doc = serde_json::from_str::<Value>(&stdout(&o)).expect("valid JSON");
    let p = program(&doc, fx.prog.id).expect("program loaded mid-capture is in the report");
    assert!(num(p, "samples") >= 100, "{p:?}");
    let top = &p.get("hotspots").unwrap().as_array().unwrap()[0];
    assert_eq!(
        top.get("line").and_then(Value::as_u64),
        Some(HotFixture::HOT_LINE as u64)
    );
}

#[test]
fn ctrl_c_stops_early_and_reports() {
    if !live() {
        return;
    }
    let _g = serial();
    let mut brr = Traced::spawn(&["profile", "--json", "-d", "30"], &[]);
    brr.wait_ready("capture");
    // The capture started before brr reported ready and ends after the
    // signal, so it covers at least this span.
    let started = Instant::now();
    // Taken before the signal, so a descheduled test thread cannot make the
    // span longer than the capture.
    let span = started.elapsed().as_secs_f64();
    // SAFETY: signalling our own child by its pid.
    unsafe { libc::kill(brr.pid(), libc::SIGINT) };
    let (o, trace) = brr.finish();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(trace, ["brr-trace: ready capture"]);
    let doc = serde_json::from_str::<Value>(&stdout(&o)).expect("partial profile printed");
    let meta = doc.get("metadata").unwrap();
    let actual = meta.get("actual_duration").and_then(Value::as_f64).unwrap();
    assert!(
        actual >= span && actual < 5.0,
        "actual_duration {actual}: at least {span}, far below the 30 s asked for"
    );
    assert_eq!(meta.get("duration").and_then(Value::as_f64), Some(30.0));
}

#[test]
fn missing_program_id_is_an_error() {
    if !live() {
        return;
    }
    let o = brr(&["profile", "-d", "0.1", "--program-id", "4000000000"]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(stderr(&o), "brr: no eBPF program with id 4000000000\n");
    assert!(o.stdout.is_empty());
}

#[test]
fn selected_program_without_samples_keeps_csv_telemetry() {
    if !live() {
        return;
    }
    let _g = serial();
    let fx = HotFixture::load().expect("load hot fixture");
    let id = fx.prog.id.to_string();
    let o = brr(&["profile", "--csv", "-d", "0.3", "--program-id", &id]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 2, "{out}");
    assert!(lines[0].starts_with("requested_event,selected_event,duration,"));
    assert!(lines[1].starts_with("auto,"), "{}", lines[1]);
    assert_eq!(lines[1].split(',').count(), lines[0].split(',').count());
    let o = brr(&["profile", "-d", "0.3", "--program-id", &id]);
    assert!(
        stdout(&o).ends_with("No BPF JIT samples captured.\n"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn perf_events_lists_an_auto_event() {
    if !live() {
        return;
    }
    let o = brr(&["perf-events", "--csv"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.starts_with("name,type,config,precise_ip,selected_by_auto\n"));
    assert_eq!(out.matches(",true").count(), 1, "{out}");
}

#[test]
fn argument_errors() {
    for (args, code, line) in [
        (
            vec!["profile", "--kernel-ip-detail"],
            2,
            "brr: error: --kernel-ip-detail requires --kernel-samples",
        ),
        (
            vec!["profile", "--call-graph", "lbr"],
            2,
            "brr: error: --call-graph lbr requires --kernel-samples",
        ),
        (
            vec!["profile", "--perf-buffer-pages", "3"],
            2,
            "brr profile: error: argument --perf-buffer-pages: must be 'auto' or a positive power of two",
        ),
        (
            vec!["profile", "--perf-drain-ms", "2.5"],
            2,
            "brr profile: error: argument --perf-drain-ms: must be an integer",
        ),
        (
            vec!["profile", "--event", "bogus"],
            2,
            "brr profile: error: argument --event: unsupported perf event 'bogus'; run 'brr perf-events' to list openable events; expected one of: auto, cycles:ppp, cycles:pp, cycles:p, cycles, cpu-clock, instructions, cache-references, cache-misses, branches, branch-misses, bus-cycles, stalled-cycles-frontend, stalled-cycles-backend, ref-cycles",
        ),
        (
            vec!["perf-events", "-F", "0"],
            2,
            "brr perf-events: error: argument -F/--frequency: must be greater than 0",
        ),
    ] {
        let o = brr(&args);
        assert_eq!(o.status.code(), Some(code), "{args:?}");
        assert_eq!(stderr(&o).lines().last(), Some(line), "{args:?}");
    }
    // Above the kernel's limit (when it can be read).
    if let Some(max) = std::fs::read_to_string("/proc/sys/kernel/perf_event_max_sample_rate")
        .ok()
        .and_then(|s| s.trim().parse::<u64>().ok())
    {
        // A usage error, before anything is opened, for every command
        // that samples.
        let f = (max + 1).to_string();
        for args in [
            vec!["profile", "-F", &f, "-d", "0.1"],
            vec!["perf-events", "-F", &f],
            vec!["top", "--textmode", "-F", &f],
        ] {
            let o = brr(&args);
            assert_eq!(o.status.code(), Some(2), "{args:?}");
            assert_eq!(
                stderr(&o),
                format!("brr: error: argument -F/--frequency: {f} Hz is above kernel.perf_event_max_sample_rate ({max}); use -F {max} or lower, or raise that sysctl\n"),
                "{args:?}"
            );
            assert!(o.stdout.is_empty());
        }
    }
}
