//! Live tests of `brr doctor` and of the profiler's up-front refusal when
//! no sample could be attributed (root, real kernel): the real binary is
//! run as root, with `kernel.kptr_restrict=2` set for a moment by the test,
//! and as an unprivileged user.
//!
//! Sysctls are changed only inside a guard that restores them, also when
//! an assertion fails; every test here takes one lock, so none sees
//! another's temporary setting.

// Test tooling: helpers outside #[test] functions fail the test by panicking,
// as the tests themselves do (clippy.toml only exempts #[test] code).
#![allow(clippy::expect_used, clippy::panic)]

mod support;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::Mutex;

use serde_json::Value;
use support::*;

static SYSCTLS: Mutex<()> = Mutex::new(());

fn lock() -> std::sync::MutexGuard<'static, ()> {
    SYSCTLS.lock().unwrap_or_else(|e| e.into_inner())
}

/// A sysctl set to a value for the guard's life; the old value is written
/// back on drop (also while unwinding from a failed assertion).
struct SysctlGuard {
    path: PathBuf,
    old: String,
}

impl SysctlGuard {
    fn set(path: &str, value: &str) -> std::io::Result<SysctlGuard> {
        let old = std::fs::read_to_string(path)?;
        std::fs::write(path, value)?;
        Ok(SysctlGuard {
            path: path.into(),
            old,
        })
    }
}

impl Drop for SysctlGuard {
    fn drop(&mut self) {
        if let Err(e) = std::fs::write(&self.path, self.old.trim()) {
            eprintln!("could not restore {}: {e}", self.path.display());
        }
    }
}

fn run(exe: &Path, args: &[&str]) -> Output {
    Command::new(exe)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("run brr")
}

fn brr(args: &[&str]) -> Output {
    run(Path::new(env!("CARGO_BIN_EXE_brr")), args)
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn doctor_json(o: &Output) -> Value {
    assert_eq!(o.status.code(), Some(0), "{}", stderr(o));
    serde_json::from_slice(&o.stdout).expect("doctor --json is JSON")
}

fn command<'a>(doc: &'a Value, name: &str) -> &'a Value {
    doc["commands"]
        .as_array()
        .expect("commands array")
        .iter()
        .find(|c| c["command"] == name)
        .unwrap_or_else(|| panic!("no command {name} in {doc}"))
}

fn check<'a>(doc: &'a Value, name: &str) -> &'a Value {
    doc["checks"]
        .as_array()
        .expect("checks array")
        .iter()
        .find(|c| c["name"] == name)
        .unwrap_or_else(|| panic!("no check {name} in {doc}"))
}

/// The documented shape: every check has exactly name, status, detail,
/// fix; every command exactly command, works, reason; the commands cover
/// brr's kernel-facing commands.
fn assert_shape(doc: &Value) {
    // serde_json's map is sorted by key.
    let keys = |v: &Value| -> Vec<String> {
        v.as_object()
            .expect("object")
            .keys()
            .cloned()
            .collect::<Vec<_>>()
    };
    assert_eq!(keys(doc), ["checks", "commands"]);
    let checks = doc["checks"].as_array().expect("checks");
    assert!(checks.len() >= 20, "{checks:?}");
    for c in checks {
        assert_eq!(keys(c), ["detail", "fix", "name", "status"], "{c}");
        assert!(c["name"].is_string() && c["detail"].is_string(), "{c}");
        assert!(c["fix"].is_string() || c["fix"].is_null(), "{c}");
        let status = c["status"].as_str().expect("status");
        assert!(["ok", "limited", "missing"].contains(&status), "{c}");
        assert_eq!(c["fix"].is_null(), status == "ok", "{c}");
    }
    for c in doc["commands"].as_array().expect("commands") {
        assert_eq!(keys(c), ["command", "reason", "works"], "{c}");
        assert!(c["works"].is_boolean(), "{c}");
        assert!(c["reason"].is_string() || c["reason"].is_null(), "{c}");
    }
    for name in [
        "prog", "map", "link", "btf", "activity", "profile", "cost", "dump", "top", "exporter",
    ] {
        command(doc, name);
    }
}

#[test]
fn doctor_as_root_reports_what_works() {
    if !live() {
        return;
    }
    let _l = lock();
    // A statistics fd held by this process: doctor names it.
    let stats = StatsGuard::enable().expect("enable stats");
    let fx = HotFixture::load().expect("load hot fixture");
    let doc = doctor_json(&brr(&["doctor", "--json"]));
    assert_shape(&doc);
    for name in ["prog", "map", "link", "btf", "activity", "dump", "exporter"] {
        let c = command(&doc, name);
        assert_eq!(c["works"], true, "{c}");
        assert!(c["reason"].is_null(), "{c}");
    }
    let kptr = std::fs::read_to_string("/proc/sys/kernel/kptr_restrict").expect("kptr_restrict");
    if kptr.trim() != "2" {
        assert_eq!(command(&doc, "profile")["works"], true, "{doc}");
    }
    assert_eq!(check(&doc, "CAP_SYS_ADMIN")["status"], "ok");
    assert_eq!(check(&doc, "vmlinux BTF")["status"], "ok");
    let jit = check(&doc, "net.core.bpf_jit_enable")["detail"]
        .as_str()
        .expect("detail")
        .to_string();
    assert!(jit.contains("loaded programs JIT-compiled"), "{jit}");
    let held = check(&doc, "statistics");
    assert_eq!(held["status"], "limited", "{held}");
    let detail = held["detail"].as_str().expect("detail");
    assert!(
        detail.contains(&format!("({})", std::process::id())),
        "{detail}"
    );
    drop((stats, fx));

    // The text form: a header, a row per check, then the command table.
    let o = brr(&["doctor"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = String::from_utf8(o.stdout).expect("utf-8");
    assert!(text.starts_with("CHECK "), "{text}");
    assert!(text.contains("\n\nCOMMAND "), "{text}");
    assert!(text
        .lines()
        .any(|l| l.starts_with("prog ") && l.contains(" yes ")));
    // --pretty indents; --csv is refused as a usage error.
    let pretty = brr(&["doctor", "--json", "--pretty"]);
    assert!(String::from_utf8_lossy(&pretty.stdout).starts_with("{\n  \"checks\": [\n"));
    let csv = brr(&["doctor", "--csv"]);
    assert_eq!(csv.status.code(), Some(2));
    assert!(stderr(&csv).starts_with("brr: error: --csv is not supported by doctor"));
}

#[test]
fn hidden_jit_addresses_fail_profile_up_front() {
    if !live() {
        return;
    }
    let _l = lock();
    let fx = HotFixture::load().expect("load hot fixture");
    let id = fx.prog.id.to_string();
    let expected =
        "brr: BPF JIT addresses are hidden by kernel.kptr_restrict=2; set it to 1 and run brr as root\n";
    let (doc, profile, top) = {
        let _k = SysctlGuard::set("/proc/sys/kernel/kptr_restrict", "2")
            .expect("set kernel.kptr_restrict=2");
        (
            doctor_json(&brr(&["doctor", "--json"])),
            brr(&["profile", "-d", "1"]),
            brr(&[
                "top",
                "--textmode",
                "--profile-top",
                "--program-id",
                &id,
                "-d",
                "0.1",
                "--profile-duration",
                "1",
            ]),
        )
    };
    let p = command(&doc, "profile");
    assert_eq!(p["works"], false, "{p}");
    assert!(
        p["reason"]
            .as_str()
            .expect("reason")
            .contains("kptr_restrict"),
        "{p}"
    );
    assert_eq!(check(&doc, "kernel.kptr_restrict")["status"], "missing");
    assert_eq!(command(&doc, "prog")["works"], true);
    for o in [&profile, &top] {
        assert_eq!(o.status.code(), Some(3), "{}", stderr(o));
        assert_eq!(stderr(o), expected);
        assert!(
            o.stdout.is_empty(),
            "{}",
            String::from_utf8_lossy(&o.stdout)
        );
    }
    // Restored: the same profile works again.
    let kptr = std::fs::read_to_string("/proc/sys/kernel/kptr_restrict").expect("kptr_restrict");
    if kptr.trim() != "2" {
        let o = brr(&["profile", "-d", "0.2", "--program-id", &id]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    }
}

/// `dump` under `kernel.kptr_restrict=2`: the kernel zeroes every helper
/// call's target, and brr says why instead of listing calls to 0.
#[test]
fn dump_says_when_kernel_addresses_are_hidden() {
    if !live() {
        return;
    }
    let _l = lock();
    let fx = HelperFixture::load().expect("load helper fixture");
    let id = fx.prog.id.to_string();
    let (text, json) = {
        let _k = SysctlGuard::set("/proc/sys/kernel/kptr_restrict", "2")
            .expect("set kernel.kptr_restrict=2");
        (brr(&["dump", &id]), brr(&["dump", &id, "--json"]))
    };
    let warning = "every helper call reads IMM 0 and cannot be named: kernel addresses are hidden by kernel.kptr_restrict=2, even from root";
    assert_eq!(text.status.code(), Some(0), "{}", stderr(&text));
    let out = String::from_utf8(text.stdout).expect("utf-8");
    assert!(
        out.trim_end().ends_with(&format!("Warning: {warning}.")),
        "{out}"
    );
    let calls: Vec<&str> = out
        .lines()
        .filter(|l| l.contains("(address hidden)"))
        .collect();
    assert_eq!(calls.len(), fx.helper_calls, "{out}");
    let doc: Value = serde_json::from_slice(&json.stdout).expect("json");
    assert_eq!(doc["metadata"]["warnings"], serde_json::json!([warning]));
    let hidden = doc["items"]
        .as_array()
        .expect("items")
        .iter()
        .filter(|i| i["opcode"] == 0x85)
        .inspect(|i| assert_eq!(i["imm"], 0, "{i}"))
        .count();
    assert_eq!(hidden, fx.helper_calls);
    // Restored: the calls are named again, without a warning.
    let kptr = std::fs::read_to_string("/proc/sys/kernel/kptr_restrict").expect("kptr_restrict");
    if kptr.trim() != "2" {
        let o = brr(&["dump", &id]);
        let out = String::from_utf8(o.stdout).expect("utf-8");
        assert!(!out.contains("Warning:"), "{out}");
        assert!(out.contains("call bpf_ktime_get_ns#"), "{out}");
    }
}

#[test]
fn interpreted_program_fails_profile_up_front() {
    if !live() {
        return;
    }
    let _l = lock();
    let fx = {
        let Ok(_jit) = SysctlGuard::set("/proc/sys/net/core/bpf_jit_enable", "0") else {
            // CONFIG_BPF_JIT_ALWAYS_ON: nothing can be interpreted here
            // (the classification is unit-tested).
            skip("net.core.bpf_jit_enable cannot be 0 on this kernel (CONFIG_BPF_JIT_ALWAYS_ON); nothing to interpret");
            return;
        };
        HotFixture::load().expect("load hot fixture")
    };
    let id = fx.prog.id;
    let o = brr(&["profile", "-d", "1", "--program-id", &id.to_string()]);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    assert!(
        stderr(&o).starts_with(&format!("brr: eBPF program {id} is not JIT-compiled: ")),
        "{}",
        stderr(&o)
    );
    assert_eq!(stderr(&o).lines().count(), 1);
}

/// The test binary's brr, copied where uid 65534 may run it.
struct NobodyCopy {
    dir: PathBuf,
    exe: PathBuf,
}

impl NobodyCopy {
    fn new() -> NobodyCopy {
        let dir = std::env::temp_dir().join(format!("brr-doctor-live-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        let exe = dir.join("brr");
        std::fs::copy(env!("CARGO_BIN_EXE_brr"), &exe).expect("copy brr");
        std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        NobodyCopy { dir, exe }
    }

    fn run(&self, args: &[&str]) -> Output {
        Command::new("setpriv")
            .args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
            .arg(&self.exe)
            .args(args)
            .current_dir(&self.dir)
            .stdin(Stdio::null())
            .output()
            .expect("run setpriv (util-linux)")
    }
}

impl Drop for NobodyCopy {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

#[test]
fn doctor_as_an_unprivileged_user() {
    if !live() {
        return;
    }
    let _l = lock();
    let nobody = NobodyCopy::new();
    let doc = doctor_json(&nobody.run(&["doctor", "--json"]));
    assert_shape(&doc);
    let p = command(&doc, "prog");
    assert_eq!(p["works"], false, "{p}");
    assert!(
        p["reason"]
            .as_str()
            .expect("reason")
            .contains("CAP_SYS_ADMIN"),
        "{p}"
    );
    assert_eq!(command(&doc, "profile")["works"], false);
    assert_eq!(check(&doc, "CAP_SYS_ADMIN")["status"], "missing");
    // What doctor predicts is what the command does.
    let o = nobody.run(&["prog"]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        stderr(&o).trim_end(),
        format!("brr: {}", p["reason"].as_str().expect("reason"))
    );
    let o = nobody.run(&["doctor"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

/// Every command doctor says fails for uid 65534 fails in doctor's words:
/// activity, top and exporter on statistics, dump on opening the object.
#[test]
fn doctor_words_are_the_commands_own_as_nobody() {
    if !live() {
        return;
    }
    let _l = lock();
    let nobody = NobodyCopy::new();
    let doc = doctor_json(&nobody.run(&["doctor", "--json"]));
    for (name, args) in [
        ("prog", &["prog"][..]),
        ("map", &["map"]),
        ("link", &["link"]),
        ("btf", &["btf"]),
        ("activity", &["activity", "-d", "0.1"]),
        ("top", &["top", "--textmode", "-d", "0.1"]),
        ("profile", &["profile", "-d", "0.1"]),
        ("cost", &["cost", "-d", "0.1"]),
        ("perf-events", &["perf-events"]),
        ("dump", &["dump", "1"]),
        ("dump-compare", &["dump-compare", "1"]),
        ("exporter", &["exporter"]),
    ] {
        let v = command(&doc, name);
        assert_eq!(v["works"], false, "{v}");
        let reason = v["reason"].as_str().expect("reason");
        let o = nobody.run(args);
        assert_eq!(o.status.code(), Some(2), "{name}: {}", stderr(&o));
        assert_eq!(
            stderr(&o).trim_end(),
            format!("brr: {}", reason.replace("object id ID", "object id 1")),
            "{name}"
        );
    }
}
