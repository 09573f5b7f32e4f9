//! Live tests of the profile hints: fixture programs built to show each
//! anti-pattern (and ones that must not show it), sampled with
//! `--kernel-samples` while BPF_PROG_TEST_RUN drives them.

// Test tooling: helpers outside #[test] functions fail the test by panicking,
// as the tests themselves do (clippy.toml only exempts #[test] code).
#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]

#[path = "support/run.rs"]
mod run;
mod support;

use std::os::fd::{AsFd, AsRawFd};
use std::process::{Command, Stdio};
use std::time::Duration;

use run::serial;
use serde_json::Value;
use support::btf::Linkage;
use support::insn::*;
use support::*;

const BPF_MAP_TYPE_HASH: u32 = 1;
const BPF_MAP_TYPE_RINGBUF: u32 = 27;
const BPF_FUNC_RINGBUF_OUTPUT: i32 = 130;
const CALLS: usize = 64;
const FILE: &str = "/src/brr-fixtures/hints.c";

/// A program whose hot line calls `helper(map, &key-or-data, ...)` CALLS
/// times; `args` sets r3/r4 after r1 = map and r2 = fp - 16.
fn calling_program(
    name: &str,
    map: &LoadedMap,
    helper: i32,
    text: &str,
    args: [Insn; 2],
) -> LoadedProg {
    let mut b = ProgBuilder::new();
    b.func(&format!("{name}_main"), Linkage::Global);
    b.line(FILE, 10, 5, "    __u64 v = 0;");
    b.emit(mov64_imm(R1, 0));
    b.emit(stx_mem(BPF_DW, R10, R1, -16));
    b.emit(stx_mem(BPF_DW, R10, R1, -8));
    b.line(FILE, 11, 9, text);
    for _ in 0..CALLS {
        b.emit_all(&ld_map_fd(R1, map.fd.as_raw_fd()));
        b.emit(mov64_reg(R2, R10));
        b.emit(alu64_imm(BPF_ADD, R2, -16));
        b.emit_all(&args);
        b.emit(call_helper(helper));
    }
    b.line(FILE, 12, 5, "    return 0;");
    b.emit(mov64_imm(R0, 0));
    b.emit(exit());
    load_program(sys::BPF_PROG_TYPE_SOCKET_FILTER, name, &b).expect("load hint fixture")
}

/// One hash-map key updated on every call (key and value both at fp-16;
/// r3 = the value pointer, r4 = BPF_ANY).
fn update_one_key() -> (LoadedMap, LoadedProg) {
    let map = create_map("brr_fx_hkey", BPF_MAP_TYPE_HASH, 8, 8, 16).expect("hash map");
    let prog = calling_program(
        "brr_fx_hupd",
        &map,
        BPF_FUNC_MAP_UPDATE_ELEM,
        "    bpf_map_update_elem(&counts, &key, &one, BPF_ANY);",
        [mov64_reg(R3, R2), mov64_imm(R4, 0)],
    );
    (map, prog)
}

fn ringbuf_output() -> (LoadedMap, LoadedProg) {
    let map = create_map("brr_fx_rb", BPF_MAP_TYPE_RINGBUF, 0, 0, 1 << 16).expect("ringbuf");
    let prog = calling_program(
        "brr_fx_rbout",
        &map,
        BPF_FUNC_RINGBUF_OUTPUT,
        "    bpf_ringbuf_output(&events, &e, sizeof(e), 0);",
        [mov64_imm(R3, 8), mov64_imm(R4, 0)],
    );
    (map, prog)
}

/// The hints brr gives for program `id` in a 2 s `--kernel-samples`
/// profile while `threads` threads run it.
fn hints_for(prog: &LoadedProg, threads: usize, repeat: u32) -> (Vec<Value>, String, String) {
    let load = LoadDriver::start(prog.fd(), threads, repeat).expect("load");
    std::thread::sleep(Duration::from_millis(200));
    let o = Command::new(env!("CARGO_BIN_EXE_brr"))
        .args([
            "profile",
            "--json",
            "-d",
            "2",
            "--kernel-samples",
            "--program-id",
        ])
        .arg(prog.id.to_string())
        .stdin(Stdio::null())
        .output()
        .expect("run brr");
    load.stop().expect("load threads");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let doc: Value = serde_json::from_slice(&o.stdout).expect("JSON");
    let p = &doc["items"][0];
    assert_eq!(p["id"].as_u64(), Some(u64::from(prog.id)));
    let summary = format!(
        "samples={} kernel={} kernel rows: {}",
        p["samples"],
        p["kernel_samples"],
        p["kernel_hotspots"]
            .as_array()
            .map(|k| k
                .iter()
                .take(8)
                .map(|r| format!("{}={}", r["symbol"], r["samples"]))
                .collect::<Vec<_>>()
                .join(" "))
            .unwrap_or_default()
    );
    let event = doc["metadata"]["selected_event"]
        .as_str()
        .unwrap_or("")
        .to_string();
    (
        p["hints"].as_array().cloned().unwrap_or_default(),
        summary,
        event,
    )
}

fn kinds(hints: &[Value]) -> Vec<&str> {
    hints.iter().filter_map(|h| h["kind"].as_str()).collect()
}

#[test]
fn contention_from_two_cpus_updating_one_key_but_not_from_one() {
    if !live() {
        return;
    }
    let _g = serial();
    let (_map, prog) = update_one_key();
    let (one, s1, _) = hints_for(&prog, 1, 1000);
    assert!(
        !kinds(&one).contains(&"hash_map_contention"),
        "one thread has no contention: {one:?} ({s1})"
    );
    // The map code outweighs the program's own instructions either way.
    let m = one
        .iter()
        .find(|h| h["kind"] == "map_access_dominates")
        .unwrap_or_else(|| panic!("map access hint: {one:?} ({s1})"));
    assert_eq!(
        (m["line"].as_u64(), m["file"].as_str()),
        (Some(11), Some(FILE))
    );
    assert!(m["figure"].as_f64().unwrap() > m["threshold"].as_f64().unwrap());
    let (two, s2, event) = hints_for(&prog, 2, 1000);
    if event == "cpu-clock" || event == "task-clock" {
        // A software clock event fires from a timer interrupt, and bucket
        // locks spin with interrupts disabled: the wait is sampled only
        // where interrupts come back on, inside htab_map_update_elem, mixed
        // with the uncontended critical section (see CONTENTION_SHARE).
        // Only a PMU event sees contention.
        skip(format!(
            "contention not observable with {event}: {:?} ({s2})",
            kinds(&two)
        ));
        return;
    }
    let c = two
        .iter()
        .find(|h| h["kind"] == "hash_map_contention")
        .unwrap_or_else(|| panic!("contention hint with two threads: {two:?} ({s2})"));
    assert_eq!(c["line"].as_u64(), Some(11), "{c}");
    assert!(c["figure"].as_f64().unwrap() > c["threshold"].as_f64().unwrap());
    assert!(c["fix"].as_str().unwrap().contains("per-CPU"));
}

#[test]
fn output_cost_from_ringbuf_output_but_not_from_arithmetic() {
    if !live() {
        return;
    }
    let _g = serial();
    let (_map, prog) = ringbuf_output();
    let (found, s, _) = hints_for(&prog, 1, 1000);
    let o = found
        .iter()
        .find(|h| h["kind"] == "output_cost")
        .unwrap_or_else(|| panic!("output hint: {found:?} ({s})"));
    assert_eq!(o["line"].as_u64(), Some(11));
    let hot = HotFixture::load().expect("hot fixture");
    let (none, s, _) = hints_for(&hot.prog, 1, HOT_REPEAT);
    assert!(
        none.is_empty(),
        "pure arithmetic gets no hint: {none:?} ({s})"
    );
}

const BPF_MAP_TYPE_PROG_ARRAY: u32 = 3;
const BPF_FUNC_TAIL_CALL: i32 = 12;

/// An entry program that does some work of its own, then tail-calls slot
/// 0 of a prog_array holding the hot fixture.
fn tail_calling(prog_array: &LoadedMap) -> LoadedProg {
    let mut b = ProgBuilder::new();
    b.func("brr_fx_tail_main", Linkage::Global);
    b.line(FILE, 20, 5, "    __u64 acc = 1;");
    b.emit(mov64_reg(R6, R1));
    b.emit(mov64_imm(R7, 1));
    b.line(FILE, 21, 9, "    acc = prelude(acc);");
    for i in 0..400 {
        b.emit(alu64_imm(BPF_MUL, R7, 31));
        b.emit(alu64_imm(BPF_ADD, R7, i));
    }
    b.line(FILE, 22, 5, "    bpf_tail_call(ctx, &jmp, 0);");
    b.emit(mov64_reg(R1, R6));
    b.emit_all(&ld_map_fd(R2, prog_array.fd.as_raw_fd()));
    b.emit(mov64_imm(R3, 0));
    b.emit(call_helper(BPF_FUNC_TAIL_CALL));
    b.line(FILE, 23, 5, "    return 0;");
    b.emit(mov64_imm(R0, 0));
    b.emit(exit());
    load_program(sys::BPF_PROG_TYPE_SOCKET_FILTER, "brr_fx_tail", &b).expect("load tail fixture")
}

#[test]
fn tail_calls_are_named_with_their_chain_and_plain_programs_are_not() {
    if !live() {
        return;
    }
    let _g = serial();
    let hot = HotFixture::load().expect("hot fixture");
    let jmp = create_map("brr_fx_jmp", BPF_MAP_TYPE_PROG_ARRAY, 4, 4, 4).expect("prog_array");
    let fd = hot.prog.fd().as_raw_fd() as u32;
    sys::map_update(jmp.fd.as_fd(), &0u32.to_ne_bytes(), &fd.to_ne_bytes()).expect("fill slot 0");
    let entry = tail_calling(&jmp);
    let (found, s, _) = hints_for(&entry, 1, 1000);
    let t = found
        .iter()
        .find(|h| h["kind"] == "tail_calls")
        .unwrap_or_else(|| panic!("tail-call hint: {found:?} ({s})"));
    assert_eq!(t["figure"].as_f64(), Some(1.0), "depth 1: {t}");
    assert!(
        t["evidence"]
            .as_str()
            .unwrap()
            .contains(HotFixture::PROG_NAME),
        "{t}"
    );
    assert!(t["fix"].as_str().unwrap().contains("BPF-to-BPF"));
    // The callee itself does not tail-call.
    let (none, s, _) = hints_for(&hot.prog, 1, HOT_REPEAT);
    assert!(none.is_empty(), "{none:?} ({s})");
}
