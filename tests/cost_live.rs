//! Live test of `brr cost` (root, real kernel): a raw tracepoint program
//! on `task_rename`, which nothing else uses, fired by a loop of
//! prctl(PR_SET_NAME) while brr samples every CPU with callchains.
//!
//! Only the test's own program is asserted on; the host may run others.

// Test tooling: helpers outside #[test] functions fail the test by panicking,
// as the tests themselves do (clippy.toml only exempts #[test] code).
#![allow(clippy::expect_used, clippy::panic)]
// prctl(PR_SET_NAME) is reached through libc, which is unsafe.
#![allow(unsafe_code)]

#[path = "support/run.rs"]
mod run;
mod support;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

use run::{brr_ok, serial, stdout};
use serde_json::Value;
use support::insn::*;
use support::*;

/// Rename this thread in a loop until `stop`; joins to (calls, seconds).
fn rename_loop(stop: Arc<AtomicBool>) -> std::thread::JoinHandle<(u64, f64)> {
    std::thread::spawn(move || {
        let names = [c"brr-cost-a", c"brr-cost-b"];
        let start = Instant::now();
        let mut calls = 0u64;
        while !stop.load(Ordering::Relaxed) {
            for name in names {
                // SAFETY: PR_SET_NAME reads a NUL-terminated string that
                // outlives the call.
                unsafe { libc::prctl(libc::PR_SET_NAME, name.as_ptr()) };
            }
            calls += 2;
        }
        (calls, start.elapsed().as_secs_f64())
    })
}

fn f(v: &Value, path: &[&str]) -> f64 {
    path.iter()
        .try_fold(v, |v, k| v.get(k))
        .and_then(Value::as_f64)
        .unwrap_or_else(|| panic!("{path:?} in {v}"))
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 0.02 + 1e-6 * a.abs().max(b.abs())
}

#[test]
fn a_raw_tracepoint_program_costs_its_run_its_dispatch_and_statistics() {
    if !live() {
        return;
    }
    let _serial = serial();
    let mut b = ProgBuilder::new();
    b.emit(mov64_imm(R0, 0));
    b.emit(exit());
    let prog = load_program(sys::BPF_PROG_TYPE_RAW_TRACEPOINT, "brr_fx_cost", &b)
        .expect("load the raw tracepoint program");
    let _link = sys::raw_tracepoint_open(prog.fd(), "task_rename").expect("attach to task_rename");
    let stop = Arc::new(AtomicBool::new(false));
    let looping = rename_loop(Arc::clone(&stop));
    let id = prog.id.to_string();
    let out = brr_ok(&["cost", "--json", "-d", "2", "--program-id", &id]);
    stop.store(true, Ordering::Relaxed);
    let (calls, secs) = looping.join().expect("loop thread");
    let doc: Value = serde_json::from_str(&stdout(&out)).expect("valid JSON");
    let items = doc["items"].as_array().expect("items");
    assert_eq!(items.len(), 1, "only the selected program: {doc}");
    let p = &items[0];
    assert_eq!(p["id"].as_u64(), Some(u64::from(prog.id)));
    assert!(
        p["hook"]
            .as_str()
            .is_some_and(|h| h.contains("task_rename")),
        "{p}"
    );

    // The loop ran for the whole window, so its rate is the program's.
    let rate = calls as f64 / secs;
    let runs = f(p, &["runs_per_sec"]);
    assert!(
        runs > 0.5 * rate && runs < 1.5 * rate,
        "runs/s {runs} vs loop {rate}"
    );

    assert!(p["samples"]["dispatch"].as_u64().unwrap_or(0) > 0, "{p}");
    assert!(p["samples"]["stats"].as_u64().is_some(), "{p}");
    for part in ["cpu_percent", "ns_per_run"] {
        let sum: f64 = ["program", "dispatch", "stats"]
            .iter()
            .map(|k| f(p, &[part, k]))
            .sum();
        assert!(close(sum, f(p, &[part, "total"])), "{part}: {p}");
    }
    assert!(f(p, &["ns_per_run", "total"]) > 0.0);

    let host = &doc["metadata"]["host_total"];
    let parts: f64 = [
        "program_cpu_percent",
        "dispatch_cpu_percent",
        "stats_cpu_percent",
        "unattributed_dispatch_cpu_percent",
    ]
    .iter()
    .map(|k| f(host, &[k]))
    .sum();
    assert!(close(parts, f(host, &["cpu_percent"])), "{host}");
    for (mine, all) in [
        ("program", "program_cpu_percent"),
        ("dispatch", "dispatch_cpu_percent"),
        ("stats", "stats_cpu_percent"),
    ] {
        assert!(
            f(p, &["cpu_percent", mine]) <= f(host, &[all]) + 1e-9,
            "{mine}: {p} {host}"
        );
    }
    assert!(host["cpus"].as_u64().unwrap_or(0) >= 1, "{host}");
}
