//! Live tests of `brr profile` at the edges of a capture (root, real
//! kernel): interrupts that land on BPF code, tasks that exit before the
//! capture ends, programs unloaded during it, several programs or one
//! process's programs selected, and a capture cut short by Ctrl-C.

// Test tooling: helpers outside #[test] functions fail the test by panicking,
// as the tests themselves do (clippy.toml only exempts #[test] code).
#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]
// The short-lived task is forked with libc, and SIGINT reaches brr
// through libc::kill: both unsafe.
#![allow(unsafe_code)]

#[path = "support/run.rs"]
mod run;
mod support;
#[path = "support/traced.rs"]
mod traced;

use std::collections::BTreeSet;
use std::os::fd::BorrowedFd;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use run::{brr, profile_json, serial, stderr, stdout};
use serde_json::Value;
use support::*;
use traced::Traced;

fn items(doc: &Value) -> &Vec<Value> {
    doc["items"].as_array().expect("items")
}

fn program(doc: &Value, id: u32) -> Option<&Value> {
    items(doc)
        .iter()
        .find(|p| p["id"].as_u64() == Some(u64::from(id)))
}

fn num(v: &Value, key: &str) -> u64 {
    v[key].as_u64().unwrap_or_else(|| panic!("{key} in {v}"))
}

fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("brr-edges-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&d).expect("temp dir");
    d
}

/// The kernel's interrupt and exception entry symbols (x86 and arm64), by
/// this test's own reading of the kernel's entry code.
fn is_entry(sym: &str) -> bool {
    [
        "asm_sysvec_",
        "asm_exc_",
        "asm_common_interrupt",
        "asm_spurious_interrupt",
        "el1h_64_",
        "el1_interrupt",
        "call_on_irq_stack",
    ]
    .iter()
    .any(|p| sym.starts_with(p))
}

/// Block I/O that completes through device interrupts for `duration`:
/// direct writes (synchronous writes where the file system refuses
/// O_DIRECT) of a scratch file.
fn block_io(dir: &Path, duration: Duration) -> std::thread::JoinHandle<u32> {
    let file = dir.join("io");
    std::thread::spawn(move || {
        let deadline = Instant::now() + duration;
        let of = format!("of={}", file.display());
        let mut writes = 0;
        let mut flag = "oflag=direct";
        while Instant::now() < deadline {
            let ok = Command::new("dd")
                .args(["if=/dev/zero", &of, "bs=64k", "count=200", flag])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success());
            if !ok {
                assert_ne!(flag, "conv=fsync", "dd cannot write {of}");
                flag = "conv=fsync";
            }
            writes += 1;
        }
        let _ = std::fs::remove_file(&file);
        writes
    })
}

/// With `--kernel-samples`, a sample taken in an interrupt that arrived
/// while a program ran is not charged to its line as a call: the kernel
/// rows hold no interrupt entry frame, the interrupts are counted apart
/// (JSON and folded stacks), and the task figures still add up.
#[test]
fn interrupts_are_not_a_lines_calls() {
    if !live() {
        return;
    }
    let _g = serial();
    let fx = SyscallHotFixture::load(std::process::id()).expect("load sys_enter fixture");
    let id = fx.prog.id.to_string();
    let dir = temp_dir("irq");
    let run = Duration::from_millis(3500);
    let io = block_io(&dir, run);
    let calls: Vec<_> = (0..2)
        .map(|_| SyscallHotFixture::spawn_syscalls(run))
        .collect();
    let folded = dir.join("stacks.folded");
    let doc = profile_json(&[
        "-d",
        "3",
        "--kernel-samples",
        "-F",
        "9999",
        "--line-limit",
        "0",
        "--program-id",
        &id,
        "--folded",
        folded.to_str().unwrap(),
    ]);
    assert!(io.join().expect("I/O thread") > 0);
    for c in calls {
        assert!(c.join().expect("syscall thread") > 0);
    }
    let p = program(&doc, fx.prog.id).expect("fixture profiled");
    assert!(num(p, "samples") >= 100, "{p}");
    // The hot line calls nothing: kernel code under it could only be an
    // interrupt's.
    for k in p["kernel_hotspots"].as_array().unwrap() {
        let sym = k["symbol"].as_str().unwrap_or("");
        assert!(!is_entry(sym), "interrupt entry {sym} among the calls: {k}");
        assert_ne!(
            k["bpf_line"].as_u64(),
            Some(u64::from(SyscallHotFixture::HOT_LINE)),
            "kernel code under a line without calls: {k}"
        );
    }
    let irq = num(p, "interrupt_samples");
    assert!(irq > 0, "no interrupt landed on the program: {p}");
    let rows = p["interrupts"].as_array().unwrap();
    assert_eq!(rows.iter().map(|r| num(r, "samples")).sum::<u64>(), irq);
    for r in rows {
        assert!(is_entry(r["entry"].as_str().unwrap()), "{r}");
        // The interrupted line; code before the first one (the JIT's
        // prologue) has none.
        let file = r["bpf_file"].as_str();
        assert!(file.is_none_or(|f| f == SyscallHotFixture::FILE), "{r}");
        assert_eq!(
            r["bpf_function"].as_str(),
            Some(SyscallHotFixture::FUNC_NAME),
            "{r}"
        );
    }
    let on_hot: u64 = rows
        .iter()
        .filter(|r| r["bpf_line"].as_u64() == Some(u64::from(SyscallHotFixture::HOT_LINE)))
        .map(|r| num(r, "samples"))
        .sum();
    assert!(
        on_hot * 2 > irq,
        "most interrupts land on the hot line: {on_hot} of {irq}"
    );
    assert_eq!(
        num(p, "inclusive_samples"),
        num(p, "samples") + num(p, "kernel_samples")
    );
    let tasks: u64 = p["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| num(t, "samples"))
        .sum();
    assert_eq!(tasks, num(p, "inclusive_samples"));
    assert!(num(&doc["metadata"], "interrupt_samples") >= irq);
    eprintln!(
        "interrupts: {irq} samples beside {} own and {} under eBPF",
        num(p, "samples"),
        num(p, "kernel_samples")
    );

    // Folded stacks: an entry frame only ever right under the program, as
    // `[interrupt] ENTRY`, never beneath a source line.
    let text = std::fs::read_to_string(&folded).expect("folded stacks");
    let _ = std::fs::remove_dir_all(&dir);
    let mut under_interrupts = 0;
    for l in text.lines() {
        let (stack, count) = l.rsplit_once(' ').unwrap();
        let frames: Vec<&str> = stack.split(';').collect();
        if let Some(entry) = frames[1].strip_prefix("[interrupt] ") {
            assert!(is_entry(entry), "{l}");
            under_interrupts += count.parse::<u64>().unwrap();
        }
        for f in &frames[1..] {
            assert!(!is_entry(f), "entry frame under a line: {l}");
        }
    }
    assert_eq!(under_interrupts, irq);
}

/// A forked child that renames itself (prctl PR_SET_NAME), runs `prog` for
/// about `run`, and exits.
fn short_lived(prog: BorrowedFd<'_>, name: &std::ffi::CStr, run: Duration) -> i32 {
    // SAFETY: the child only makes raw syscalls (prctl, BPF_PROG_TEST_RUN
    // with stack buffers, clock reads, _exit): nothing that takes a lock
    // another thread of the test process might have held at fork time.
    unsafe {
        let pid = libc::fork();
        assert!(pid >= 0, "fork: {}", std::io::Error::last_os_error());
        if pid == 0 {
            libc::prctl(libc::PR_SET_NAME, name.as_ptr());
            let deadline = Instant::now() + run;
            while Instant::now() < deadline {
                if sys::test_run(prog, HOT_REPEAT / 10).is_err() {
                    libc::_exit(1);
                }
            }
            libc::_exit(0);
        }
        pid
    }
}

fn reap(pid: i32) -> bool {
    let mut status = 0;
    // SAFETY: waiting for our own child.
    let rc = unsafe { libc::waitpid(pid, &mut status, 0) };
    rc == pid && libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0
}

fn comm_of(p: &Value, pid: u32) -> Option<&str> {
    p["tasks"]
        .as_array()?
        .iter()
        .find(|t| t["pid"].as_u64() == Some(u64::from(pid)))?["comm"]
        .as_str()
}

/// Processes that ran a program and exited before the capture ended keep
/// the names the kernel reported while it ran: one renamed with prctl,
/// one exec'd (bpftool, when installed, running the program itself).
#[test]
fn short_lived_tasks_keep_their_names() {
    if !live() {
        return;
    }
    let _g = serial();
    let fx = HotFixture::load().expect("load hot fixture");
    let id = fx.prog.id.to_string();
    let mut brr = Traced::spawn(&["profile", "--json", "-d", "3", "--program-id", &id], &[]);
    brr.wait_ready("capture");
    let child = short_lived(fx.prog.fd(), c"brr-shortlived", Duration::from_millis(700));
    assert!(reap(child), "short-lived child failed");
    let bpftool = Command::new("bpftool").arg("version").output().is_ok();
    let dir = temp_dir("comm");
    let exec_pid = bpftool.then(|| {
        let packet = dir.join("packet");
        std::fs::write(&packet, [0u8; 64]).expect("packet");
        let mut c = Command::new("bpftool")
            .args(["prog", "run", "id", &id, "data_in"])
            .arg(&packet)
            .args(["repeat", "100000"])
            .stdout(Stdio::null())
            .spawn()
            .expect("run bpftool");
        let pid = c.id();
        assert!(c.wait().expect("bpftool").success(), "bpftool prog run");
        pid
    });
    if !bpftool {
        assert!(
            std::env::var(REQUIRE_LIVE_ENV).as_deref() != Ok("1"),
            "{REQUIRE_LIVE_ENV}=1 but bpftool is not installed"
        );
        skip("the exec'd task's comm: bpftool is not installed (only the prctl-renamed task is checked)");
    }
    // Both are gone from /proc now: names read at the end would be `?`.
    assert!(!Path::new(&format!("/proc/{child}")).exists());
    let (o, _) = brr.finish();
    let _ = std::fs::remove_dir_all(&dir);
    assert!(o.status.success(), "{}", stderr(&o));
    let doc: Value = serde_json::from_str(&stdout(&o)).expect("valid JSON");
    let p = program(&doc, fx.prog.id).expect("fixture profiled");
    assert_eq!(comm_of(p, child as u32), Some("brr-shortlived"), "{p}");
    if let Some(pid) = exec_pid {
        assert_eq!(comm_of(p, pid), Some("bpftool"), "{p}");
    }
}

/// A program unloaded during the capture says when, and its CPU% over the
/// time it was loaded; `cpu_percent` stays over the whole capture.
#[test]
fn program_unloaded_during_the_capture_says_when() {
    if !live() {
        return;
    }
    let _g = serial();
    let fx = HotFixture::load().expect("load hot fixture");
    let id = fx.prog.id;
    let mut brr = Traced::spawn(&["profile", "--json", "-d", "3", "--limit", "0"], &[]);
    brr.wait_ready("capture");
    let ready = Instant::now();
    let stop = Arc::new(AtomicBool::new(false));
    let runs = {
        let fd = fx.prog.fd().try_clone_to_owned().expect("dup prog fd");
        let stop = Arc::clone(&stop);
        std::thread::spawn(move || {
            use std::os::fd::AsFd;
            drive_test_run(fd.as_fd(), HOT_REPEAT / 10, None, Some(&stop)).expect("test run")
        })
    };
    std::thread::sleep(Duration::from_millis(1000));
    stop.store(true, Ordering::Relaxed);
    assert!(runs.join().expect("load thread") > 0);
    let before = ready.elapsed().as_secs_f64();
    drop(fx);
    let after = ready.elapsed().as_secs_f64();
    let (o, _) = brr.finish();
    assert!(o.status.success(), "{}", stderr(&o));
    let doc: Value = serde_json::from_str(&stdout(&o)).expect("valid JSON");
    let p = program(&doc, id).expect("unloaded program still reported");
    let unloaded = p["unloaded_after_seconds"].as_f64().expect("unload time");
    // The capture started before the ready line reached the test; JSON
    // rounds the time to the millisecond, which may put it just before.
    assert!(
        unloaded >= before - 0.0005 && unloaded <= after + 1.0,
        "unloaded after {unloaded} s; dropped between {before} and {after} s after ready"
    );
    assert!(p["loaded_after_seconds"].is_null(), "{p}");
    let actual = doc["metadata"]["actual_duration"].as_f64().unwrap();
    let cpu = p["cpu_percent"].as_f64().unwrap();
    let loaded = p["loaded_cpu_percent"].as_f64().expect("loaded CPU%");
    assert!(cpu > 0.0, "{p}");
    let want = cpu * actual / unloaded;
    assert!(
        (loaded - want).abs() <= want * 0.01 + 0.001,
        "CPU% while loaded {loaded}, over the capture {cpu} × {actual} / {unloaded}"
    );
}

/// The programs this process holds file descriptors on.
fn held_programs() -> BTreeSet<u64> {
    let mut out = BTreeSet::new();
    for e in std::fs::read_dir("/proc/self/fd")
        .expect("fd dir")
        .flatten()
    {
        let is_prog =
            std::fs::read_link(e.path()).is_ok_and(|t| t.as_os_str() == "anon_inode:bpf-prog");
        let info = Path::new("/proc/self/fdinfo").join(e.file_name());
        if let (true, Ok(text)) = (is_prog, std::fs::read_to_string(info)) {
            let id = text
                .lines()
                .find_map(|l| l.strip_prefix("prog_id:"))
                .and_then(|v| v.trim().parse::<u64>().ok());
            out.extend(id);
        }
    }
    out
}

fn ids(v: &Value) -> BTreeSet<u64> {
    v.as_array()
        .expect("an array")
        .iter()
        .map(|x| x.as_u64().or_else(|| x["id"].as_u64()).expect("an id"))
        .collect()
}

/// `--program-id` repeated profiles each program given; `--pid` the ones
/// a process holds; both are checked before anything is sampled.
#[test]
fn several_programs_and_one_processes_programs() {
    if !live() {
        return;
    }
    let _g = serial();
    let hot = HotFixture::load().expect("load hot fixture");
    let sub = SubprogFixture::load().expect("load subprog fixture");
    let other = HelperFixture::load().expect("load helper fixture");
    let run = Duration::from_millis(2500);
    let loads = [
        hot.spawn_load(run),
        sub.spawn_load(run),
        other.spawn_load(run),
    ];
    let (a, b) = (hot.prog.id.to_string(), sub.prog.id.to_string());
    let doc = profile_json(&["-d", "2", "--program-id", &a, "--program-id", &b]);
    for l in loads {
        assert!(l.join().expect("load thread") > 0);
    }
    let want: BTreeSet<u64> = [hot.prog.id, sub.prog.id].map(u64::from).into();
    assert_eq!(ids(&doc["items"]), want, "{doc}");
    let meta = &doc["metadata"];
    assert_eq!(
        meta["program_ids"],
        serde_json::json!([hot.prog.id, sub.prog.id])
    );
    let direct: u64 = items(&doc).iter().map(|p| num(p, "samples")).sum();
    assert_eq!(num(meta, "selected_program_samples"), direct);
    assert_eq!(num(meta, "limit"), 2);

    // This process's programs: the fixtures it holds, and only those.
    let held = held_programs();
    assert!(held.contains(&u64::from(other.prog.id)));
    let me = std::process::id().to_string();
    let load = other.spawn_load(Duration::from_millis(1500));
    let doc = profile_json(&["-d", "1", "--pid", &me]);
    assert!(load.join().expect("load thread") > 0);
    let selected = ids(&doc["metadata"]["program_ids"]);
    assert!(selected.is_subset(&held) && selected.contains(&u64::from(other.prog.id)));
    assert!(ids(&doc["items"]).is_subset(&selected), "{doc}");
    assert!(program(&doc, other.prog.id).is_some(), "{doc}");
    assert_eq!(
        doc["metadata"]["pid"].as_u64(),
        Some(u64::from(std::process::id()))
    );

    // A process without programs, one that does not exist, a program that
    // does not exist: each a one-line error before sampling.
    let mut sleeper = Command::new("sleep").arg("30").spawn().expect("sleep");
    let pid = sleeper.id().to_string();
    let o = brr(&["profile", "-d", "0.2", "--pid", &pid]);
    let _ = sleeper.kill();
    let _ = sleeper.wait();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert_eq!(
        stderr(&o),
        format!("brr: process {pid} holds no eBPF programs (no file descriptor of it names a program)\n")
    );
    let o = brr(&["profile", "-d", "0.2", "--pid", "99999999"]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(stderr(&o), "brr: no process with pid 99999999\n");
    let o = brr(&[
        "profile",
        "-d",
        "0.2",
        "--program-id",
        &a,
        "--program-id",
        "4000000000",
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(stderr(&o), "brr: no eBPF program with id 4000000000\n");
    assert!(o.stdout.is_empty());
}

/// Ctrl-C ends the capture early, and the text report says so in the
/// words `activity` uses for its window.
#[test]
fn ctrl_c_text_says_the_capture_ended_early() {
    if !live() {
        return;
    }
    let _g = serial();
    let mut brr = Traced::spawn(&["profile", "-d", "30"], &[]);
    brr.wait_ready("capture");
    std::thread::sleep(Duration::from_millis(300));
    // SAFETY: signalling our own child by its pid.
    unsafe { libc::kill(brr.pid(), libc::SIGINT) };
    let (o, _) = brr.finish();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    let last = out.lines().last().unwrap_or_default();
    let secs = last
        .strip_prefix("capture ended early after ")
        .and_then(|r| r.strip_suffix(" s of 30 s"))
        .and_then(|s| s.parse::<f64>().ok())
        .unwrap_or_else(|| panic!("last line {last:?} of\n{out}"));
    assert!((0.3..5.0).contains(&secs), "{last}");
}

/// Short-lived processes keep their names: a shell loop starting
/// `/bin/true` over and over under a raw-tracepoint program on `sys_enter`
/// (as execsnoop's programs run), each process sampled between its fork
/// and its exec named after its parent, after it by its COMM record;
/// fewer than 1 % of the samples are left without a name (`?`).
#[test]
fn short_lived_processes_keep_their_names() {
    if !live() {
        return;
    }
    let _g = serial();
    let last: u32 = std::fs::read_to_string("/proc/sys/kernel/ns_last_pid")
        .expect("ns_last_pid")
        .trim()
        .parse()
        .expect("a pid");
    let fx = SyscallHotFixture::load_from(last + 1).expect("load sys_enter fixture");
    let id = fx.prog.id.to_string();
    let mut shell = std::process::Command::new("timeout")
        .args(["4", "sh", "-c", "while :; do /bin/true; done"])
        .spawn()
        .expect("shell loop");
    let doc = profile_json(&[
        "-d",
        "3",
        "--kernel-samples",
        "-F",
        "9999",
        "--program-id",
        &id,
    ]);
    let _ = shell.wait();
    let p = program(&doc, fx.prog.id).expect("fixture profiled");
    let tasks = p["tasks"].as_array().unwrap();
    let total: u64 = tasks.iter().map(|t| num(t, "samples")).sum();
    let unnamed: u64 = tasks
        .iter()
        .filter(|t| t["comm"] == "?")
        .map(|t| num(t, "samples"))
        .sum();
    assert!(total >= 100, "{p}");
    assert!(
        tasks.iter().any(|t| t["comm"] == "true"),
        "the exec'd processes: {p}"
    );
    assert!(
        unnamed * 100 < total,
        "{unnamed} of {total} samples unnamed: {p}"
    );
}
