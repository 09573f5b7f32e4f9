//! The test binary's brr run to completion: its output, the checks most
//! tests make on it, and the lock that keeps captures from overlapping.
//!
//! Kept out of `support` (included with `#[path]`) because it names
//! `CARGO_BIN_EXE_brr`, which only integration tests have.
// Each test crate uses a different subset of these helpers.
#![allow(dead_code)]

use std::process::{Command, Output, Stdio};
use std::sync::{Mutex, MutexGuard};

use serde_json::Value;

/// One capture or measurement at a time within a test binary: tests that
/// run concurrently would share the CPUs and the kernel objects measured.
static SERIAL: Mutex<()> = Mutex::new(());

/// Holds [`SERIAL`] until dropped; a test that failed while holding it
/// does not fail the ones after it.
pub(crate) fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

/// `brr ARGS`, with stdin closed, run to completion.
pub(crate) fn brr(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_brr"))
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("run brr")
}

/// `brr ARGS`, which must succeed.
pub(crate) fn brr_ok(args: &[&str]) -> Output {
    let o = brr(args);
    assert!(o.status.success(), "brr {args:?}: {}", stderr(&o));
    o
}

/// `brr ARGS` run by uid/gid 65534 with only the capabilities `caps` (a
/// setpriv list such as `-all,+sys_admin`) inherited, ambient and bounding.
pub(crate) fn brr_as_nobody(caps: &str, args: &[&str]) -> Output {
    Command::new("setpriv")
        .args(["--reuid", "65534", "--regid", "65534", "--clear-groups"])
        .args([
            "--inh-caps",
            caps,
            "--ambient-caps",
            caps,
            "--bounding-set",
            caps,
        ])
        .arg(env!("CARGO_BIN_EXE_brr"))
        .args(args)
        .output()
        .expect("setpriv (util-linux) runs")
}

pub(crate) fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub(crate) fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// `brr profile --json ARGS`, which must succeed, as its JSON document.
pub(crate) fn profile_json(args: &[&str]) -> Value {
    let mut all = vec!["profile", "--json"];
    all.extend_from_slice(args);
    serde_json::from_str(&stdout(&brr_ok(&all))).expect("valid JSON")
}
