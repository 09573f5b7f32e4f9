//! Live test of who pays: a fixture program run by two processes with a
//! known 3:1 split of its work; brr's per-task samples must show that
//! split, with each process's comm.

// Test tooling: helpers outside #[test] functions fail the test by panicking,
// as the tests themselves do (clippy.toml only exempts #[test] code).
#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]
// The two test processes are forked with libc, which is unsafe.
#![allow(unsafe_code)]

mod support;

use std::io::{BufRead, BufReader, Read};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;
use support::*;

fn kill(pid: i32) {
    // SAFETY: plain syscalls on our own child's pid.
    unsafe {
        libc::kill(pid, libc::SIGKILL);
        libc::waitpid(pid, std::ptr::null_mut(), 0);
    }
}

fn task(p: &Value, pid: i32) -> &Value {
    p["tasks"]
        .as_array()
        .and_then(|t| t.iter().find(|t| t["pid"].as_i64() == Some(i64::from(pid))))
        .unwrap_or_else(|| panic!("task {pid} in {p}"))
}

#[test]
fn task_shares_follow_the_work_each_process_did() {
    if !live() {
        return;
    }
    let fx = HotFixture::load().expect("load hot fixture");
    // Calibrate: enough calls for about 0.4 s of program time in the
    // smaller process.
    let t = Instant::now();
    sys::test_run(fx.prog.fd(), HOT_REPEAT).expect("test run");
    let per_call = t.elapsed().max(Duration::from_micros(50));
    let small = (Duration::from_millis(400).as_nanos() / per_call.as_nanos()).max(20) as u64;

    let mut brr = Command::new(env!("CARGO_BIN_EXE_brr"))
        .args(["profile", "--json", "-d", "6", "--program-id"])
        .arg(fx.prog.id.to_string())
        .env("BRR_TRACE_READY", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start brr");
    let mut out = brr.stdout.take().expect("stdout");
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = out.read_to_string(&mut s);
        s
    });
    let mut err = BufReader::new(brr.stderr.take().expect("stderr"));
    let mut line = String::new();
    while err.read_line(&mut line).expect("stderr") > 0 && line.trim() != "brr-trace: ready capture"
    {
        line.clear();
    }
    let big = fork_runner(fx.prog.fd(), 3 * small, None);
    let little = fork_runner(fx.prog.fd(), small, None);
    let comm = |pid: i32| {
        std::fs::read_to_string(format!("/proc/{pid}/comm"))
            .expect("child comm")
            .trim_end()
            .to_string()
    };
    let (big_comm, little_comm) = (comm(big), comm(little));
    let status = brr.wait().expect("brr finished");
    let mut rest = String::new();
    let _ = err.read_to_string(&mut rest);
    kill(big);
    kill(little);
    assert!(status.success(), "brr failed: {rest}");
    let doc: Value = serde_json::from_str(&reader.join().expect("stdout")).expect("JSON");
    let p = &doc["items"][0];
    assert_eq!(p["id"].as_u64(), Some(u64::from(fx.prog.id)));
    let (a, b) = (task(p, big), task(p, little));
    assert_eq!(a["comm"].as_str(), Some(big_comm.as_str()));
    assert_eq!(b["comm"].as_str(), Some(little_comm.as_str()));
    let (na, nb) = (
        a["samples"].as_u64().unwrap(),
        b["samples"].as_u64().unwrap(),
    );
    assert!(nb >= 50, "enough samples to judge: {na} and {nb}");
    let ratio = na as f64 / nb as f64;
    assert!(
        (2.4..=3.75).contains(&ratio),
        "3:1 work shows as {na}:{nb} = {ratio:.2}"
    );
    eprintln!("who pays: 3:1 work sampled as {na}:{nb} = {ratio:.3}");
    // Tasks add up to the program's inclusive samples.
    let sum: u64 = p["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["samples"].as_u64().unwrap())
        .sum();
    assert_eq!(sum, p["inclusive_samples"].as_u64().unwrap());
    // cgroup v2 hosts (5.7+) also name the children's cgroup.
    if let Ok(own) = std::fs::read_to_string("/proc/self/cgroup") {
        if let Some(path) = own.lines().find_map(|l| l.strip_prefix("0::")) {
            let cg = p["cgroups"].as_array().expect("cgroups array");
            if !cg.is_empty() {
                assert!(
                    cg.iter().any(|c| c["path"].as_str() == Some(path)),
                    "children's cgroup {path} in {cg:?}"
                );
            }
        }
    }
}
