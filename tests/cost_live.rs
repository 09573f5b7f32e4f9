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

/// A program that only returns 0, loaded as `name` and attached as a raw
/// tracepoint on `task_rename` (which only the test's loop fires).
fn minimal_on_task_rename(name: &str) -> (LoadedProg, std::os::fd::OwnedFd) {
    let mut b = ProgBuilder::new();
    b.emit(mov64_imm(R0, 0));
    b.emit(exit());
    let prog = load_program(sys::BPF_PROG_TYPE_RAW_TRACEPOINT, name, &b)
        .expect("load the raw tracepoint program");
    let link = sys::raw_tracepoint_open(prog.fd(), "task_rename").expect("attach to task_rename");
    (prog, link)
}

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
    let (prog, _link) = minimal_on_task_rename("brr_fx_cost");
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

/// The hints of `doc` (brr cost --json) for program `id`.
fn hints_of(doc: &Value, id: u32) -> Vec<Value> {
    doc["hints"]
        .as_array()
        .expect("hints")
        .iter()
        .filter(|h| h["program_id"].as_u64() == Some(u64::from(id)))
        .cloned()
        .collect()
}

/// A raw tracepoint on `sys_enter` that acts only for syscall 257
/// (openat) of this process: `r6 = ctx->args[1]; r0 = pid_tgid >> 32;
/// if r0 != TGID goto out; if r6 != 257 goto out; r0 = 0; out: exit`.
#[test]
fn a_sys_enter_program_that_keeps_one_syscall_and_one_process_is_named_so() {
    if !live() {
        return;
    }
    let _serial = serial();
    let tgid = std::process::id() as i32;
    let mut b = ProgBuilder::new();
    b.emit(ldx_mem(BPF_DW, R6, R1, 8));
    b.emit(call_helper(14));
    b.emit(alu64_imm(BPF_RSH, R0, 32));
    b.emit(jmp_imm(BPF_JNE, R0, tgid, 2));
    b.emit(jmp_imm(BPF_JNE, R6, 257, 1));
    b.emit(mov64_imm(R7, 1));
    b.emit(mov64_imm(R0, 0));
    b.emit(exit());
    let prog = load_program(sys::BPF_PROG_TYPE_RAW_TRACEPOINT, "brr_fx_sysfilt", &b)
        .expect("load the sys_enter program");
    let _link = sys::raw_tracepoint_open(prog.fd(), SYS_ENTER_TP).expect("attach to sys_enter");
    let stop = Arc::new(AtomicBool::new(false));
    let s = Arc::clone(&stop);
    // Cheap syscalls, every one of them on the slow path while attached.
    let looping = std::thread::spawn(move || {
        while !s.load(Ordering::Relaxed) {
            for _ in 0..1000 {
                std::hint::black_box(rustix::process::getppid());
            }
        }
    });
    let id = prog.id.to_string();
    let out = brr_ok(&["cost", "--json", "-d", "3", "--program-id", &id]);
    stop.store(true, Ordering::Relaxed);
    looping.join().expect("loop thread");
    let doc: Value = serde_json::from_str(&stdout(&out)).expect("valid JSON");
    let hints = hints_of(&doc, prog.id);
    let slow = hints
        .iter()
        .find(|h| h["kind"] == "syscall_slow_path")
        .unwrap_or_else(|| panic!("no syscall_slow_path hint: {doc}"));
    let evidence = slow["evidence"].as_str().expect("evidence");
    for want in [
        "its instructions compare the syscall id with 257 and no other value".to_string(),
        format!("compare the current tgid (bpf_get_current_pid_tgid) with {tgid}"),
        "it acts for syscall 257 alone while every syscall of the host takes the slow path".into(),
    ] {
        assert!(evidence.contains(&want), "{want:?} not in {evidence:?}");
    }
    assert!(
        slow["fix"].as_str().is_some_and(|f| f.contains("fentry")),
        "{slow}"
    );
    assert!(f(slow, &["figure"]) > 1.0, "{slow}");
}

/// Fork a child that holds `BPF_ENABLE_STATS` until killed; returns its
/// pid once it holds it.
fn stats_holding_child() -> i32 {
    let mut fds = [0i32; 2];
    // SAFETY: pipe writes two fds into the live array; the child makes
    // only raw syscalls (bpf, write, pause, _exit), nothing that takes a
    // lock another thread of the test might have held at fork time.
    unsafe {
        assert_eq!(libc::pipe(fds.as_mut_ptr()), 0, "pipe");
        let pid = libc::fork();
        assert!(pid >= 0, "fork: {}", std::io::Error::last_os_error());
        if pid == 0 {
            let ok = sys::enable_stats().map(std::mem::forget).is_ok();
            let byte = [u8::from(ok)];
            libc::write(fds[1], byte.as_ptr().cast(), 1);
            loop {
                libc::pause();
            }
        }
        libc::close(fds[1]);
        let mut byte = [0u8; 1];
        let n = libc::read(fds[0], byte.as_mut_ptr().cast(), 1);
        libc::close(fds[0]);
        assert!(
            n == 1 && byte[0] == 1,
            "the child could not enable statistics"
        );
        pid
    }
}

#[test]
fn statistics_held_by_another_process_are_named_in_the_hint() {
    if !live() {
        return;
    }
    let _serial = serial();
    let child = stats_holding_child();
    let (prog, _link) = minimal_on_task_rename("brr_fx_statheld");
    let stop = Arc::new(AtomicBool::new(false));
    let looping = rename_loop(Arc::clone(&stop));
    let id = prog.id.to_string();
    let brr = std::process::Command::new(env!("CARGO_BIN_EXE_brr"))
        .args(["cost", "--json", "-d", "3", "--program-id", &id])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run brr");
    let brr_pid = brr.id();
    let out = brr.wait_with_output().expect("brr cost");
    stop.store(true, Ordering::Relaxed);
    looping.join().expect("loop thread");
    // SAFETY: kill and waitpid on the child forked above.
    unsafe {
        libc::kill(child, libc::SIGKILL);
        libc::waitpid(child, std::ptr::null_mut(), 0);
    }
    assert!(out.status.success(), "brr cost: {}", run::stderr(&out));
    let doc: Value = serde_json::from_str(&stdout(&out)).expect("valid JSON");
    let hints = hints_of(&doc, prog.id);
    let st = hints
        .iter()
        .find(|h| h["kind"] == "stats_over_run")
        .unwrap_or_else(|| panic!("no stats_over_run hint: {doc}"));
    let evidence = st["evidence"].as_str().expect("evidence");
    assert!(
        evidence.contains(&format!("pid {child} (")) && evidence.contains("running for"),
        "the child {child} is not named: {evidence}"
    );
    assert!(
        !evidence.contains(&format!("pid {brr_pid} (")),
        "brr's own statistics fd is named: {evidence}"
    );
    assert!(
        st["fix"]
            .as_str()
            .is_some_and(|f| f.starts_with("the processes named")),
        "{st}"
    );
}
