//! Tests of the report: limits and Other rows, payers and workloads, hints,
//! interrupts and the `--annotate` rows.

use std::collections::HashMap;

use super::*;
use crate::inspect::native::sampled::Sampled;
use crate::inspect::native::{Arch, JitFunction, NativeImage, NativeInsn};
use crate::model::profile::{Frame, NativeSamples, Stack};
use crate::profile::aggregate::tests::profile;

/// The test profile with its program's samples and where they fell.
fn with_native<const N: usize>(samples: u64, at: [(u64, u64); N]) -> Profile {
    let mut prof = profile();
    prof.programs[0].samples = samples;
    prof.programs[0].native = at.iter().map(|&(ip, n)| sampled(ip, n)).collect();
    prof
}

fn sampled(ip: u64, samples: u64) -> NativeSamples {
    NativeSamples {
        samples,
        ip,
        func_index: Some(0),
        function: Some("main_fn".into()),
        offset: Some(ip),
    }
}

/// Program 98's code (its function starts at 0): a frame, the code of
/// lines 77, 107 and 16, and a return through the return thunk.
pub(crate) fn image98() -> NativeImage {
    let insn = |offset: u32, len: usize, asm: &str, target: Option<&str>| NativeInsn {
        offset,
        bytes: vec![0x90; len].into(),
        asm: asm.into(),
        target: target.map(String::from),
        line: None,
    };
    NativeImage {
        arch: Arch::X86_64,
        functions: vec![JitFunction {
            name: "main_fn".into(),
            index: 0,
            address: Some(0),
            length: 0x36,
            insns: vec![
                insn(0x0, 2, "nop ax", None),
                insn(0x2, 1, "push rbp", None),
                insn(0x3, 3, "mov rbp, rsp", None),
                insn(0x6, 10, "xor eax, eax", None),
                insn(0x10, 16, "mov eax, 0x1", None),
                insn(
                    0x20,
                    4,
                    "call bpf_map_lookup_elem",
                    Some("bpf_map_lookup_elem"),
                ),
                insn(0x24, 12, "add rax, 0x1", None),
                insn(0x30, 1, "leave", None),
                insn(
                    0x31,
                    5,
                    "jmp __x86_return_thunk",
                    Some("__x86_return_thunk"),
                ),
            ],
        }],
    }
}

/// What [`image98`] says of program 98's sampled instructions.
pub(crate) fn code98(prof: &Profile) -> Vec<Option<Sampled>> {
    let at = sampled_at(prof.program(98).unwrap());
    crate::inspect::native::sampled::from_image(&image98(), &at)
}

/// The fixture profile with program 98's 10 direct samples by
/// instruction (one below its first line record, so unmapped), and
/// its report annotated with [`image98`] (program 7's code withheld),
/// cut at `line_limit`.
pub(crate) fn annotated(line_limit: usize) -> (Profile, Report) {
    annotated_as(line_limit, NativeRows::All)
}

/// [`annotated`] keeping the rows `rows` says.
pub(crate) fn annotated_as(line_limit: usize, rows: NativeRows) -> (Profile, Report) {
    let mut prof = profile();
    prof.programs[0].native = vec![
        sampled(0x20, 3),
        sampled(0x10, 2),
        sampled(0x24, 2),
        sampled(0x2, 1),
        sampled(0x30, 1),
        sampled(0x31, 1),
    ];
    let mut r = build(&prof, &opts(0, line_limit));
    let mut code = HashMap::new();
    code.insert(98, Ok(code98(&prof)));
    code.insert(7, Err("the kernel withholds it".to_string()));
    annotate(&mut r, &prof, code, rows);
    (prof, r)
}

#[test]
fn annotation_lists_every_sampled_instruction() {
    let (prof, r) = annotated(2);
    let a = r.programs[0].native.as_ref().unwrap();
    // Every sampled instruction, most samples first, ties by address;
    // they add up to the program's direct samples.
    type Seen<'a> = (Option<u64>, u64, Option<&'a str>, &'a str, Option<u32>);
    let rows: Vec<Seen> = a
        .all
        .iter()
        .map(|n| (n.offset, n.samples, n.asm.as_deref(), n.role, n.line))
        .collect();
    assert_eq!(
        rows,
        vec![
            (
                Some(0x20),
                3,
                Some("call bpf_map_lookup_elem"),
                "body",
                Some(107)
            ),
            (Some(0x10), 2, Some("mov eax, 0x1"), "body", Some(77)),
            (Some(0x24), 2, Some("add rax, 0x1"), "body", Some(107)),
            (Some(0x2), 1, Some("push rbp"), "prologue", None),
            (Some(0x30), 1, Some("leave"), "epilogue", Some(16)),
            (
                Some(0x31),
                1,
                Some("jmp __x86_return_thunk"),
                "thunk",
                Some(16)
            ),
        ]
    );
    let total: u64 = a.all.iter().map(|n| n.samples).sum();
    assert_eq!(total, prof.programs[0].samples);
    assert_eq!(a.all[0].sample_percent, 30.0);
    assert_eq!(a.all[0].cpu_percent, 0.3);
    assert_eq!(a.all[4].file.as_deref(), Some("/src/dir/maps.bpf.h"));
    assert_eq!(a.all[4].source.as_deref(), Some("\tif (val)"));
    assert_eq!(a.all[0].function.as_deref(), Some("main_fn"));
    // The --line-limit view: two rows and the rest as Other.
    assert_eq!(a.shown_rows().len(), 2);
    assert_eq!(
        a.other,
        Some(Other {
            samples: 5,
            cpu_percent: 0.5
        })
    );
    assert_eq!(a.unavailable, None);
    // Program 7 has no instruction samples; its code was not read.
    let seven = r.programs[1].native.as_ref().unwrap();
    assert!(seven.all.is_empty() && seven.other.is_none());
    assert_eq!(
        seven.unavailable.as_deref(),
        Some("the kernel withholds it")
    );
    // No limit: every row shown, no Other.
    let (_, all) = annotated(0);
    let a = all.programs[0].native.as_ref().unwrap();
    assert_eq!((a.shown_rows().len(), a.other), (6, None));
    // Without --annotate there is no annotation.
    assert!(build(&prof, &opts(0, 2))
        .programs
        .iter()
        .all(|p| p.native.is_none()));
}

#[test]
fn annotation_without_code_keeps_samples_and_lines() {
    let mut prof = profile();
    prof.programs[0].native = vec![sampled(0x20, 6), sampled(0x7, 4)];
    let mut r = build(&prof, &opts(0, 0));
    let mut code = HashMap::new();
    code.insert(98, Err("no eBPF program with id 98".to_string()));
    annotate(&mut r, &prof, code, NativeRows::All);
    let a = r.programs[0].native.as_ref().unwrap();
    let rows: Vec<(u64, Option<&str>, &str, Option<u32>)> = a
        .all
        .iter()
        .map(|n| (n.samples, n.asm.as_deref(), n.role, n.line))
        .collect();
    assert_eq!(
        rows,
        vec![(6, None, "body", Some(107)), (4, None, "body", None)]
    );
    assert_eq!(a.unavailable.as_deref(), Some("no eBPF program with id 98"));
    // An offset inside an instruction gets no text.
    let mut r = build(&prof, &opts(0, 0));
    let mut code = HashMap::new();
    code.insert(98, Ok(code98(&prof)));
    annotate(&mut r, &prof, code, NativeRows::All);
    let a = r.programs[0].native.as_ref().unwrap();
    assert_eq!(a.all[1].asm, None, "0x7 is inside `xor eax, eax`");
    assert_eq!(a.all[0].asm.as_deref(), Some("call bpf_map_lookup_elem"));
}

#[test]
fn a_table_annotation_keeps_the_printed_rows_and_the_same_other_and_hints() {
    for line_limit in [0, 1, 2, 5, 6, 7] {
        let (_, all) = annotated_as(line_limit, NativeRows::All);
        let (_, table) = annotated_as(line_limit, NativeRows::Table);
        for (a, t) in all.programs.iter().zip(&table.programs) {
            let (na, nt) = (a.native.as_ref().unwrap(), t.native.as_ref().unwrap());
            assert_eq!(na.shown_rows(), &nt.all[..], "{line_limit}");
            assert_eq!(
                (na.shown, na.other, &na.unavailable),
                (nt.shown, nt.other, &nt.unavailable)
            );
            assert_eq!(a.hints, t.hints, "{line_limit}");
        }
    }
    // The frame and the thunk past a one-row table still make the hint.
    let prof = with_native(40, [(0x20, 15), (0x2, 10), (0x30, 10), (0x31, 5)]);
    let hints = |rows| {
        let mut r = build(&prof, &opts(0, 1));
        let mut code = HashMap::new();
        code.insert(98, Ok(code98(&prof)));
        annotate(&mut r, &prof, code, rows);
        r.programs[0].hints.clone()
    };
    let table = hints(NativeRows::Table);
    assert_eq!(
        table.iter().map(|h| h.kind).collect::<Vec<_>>(),
        ["jit_overhead"]
    );
    assert_eq!(table, hints(NativeRows::All));
}

#[test]
fn annotation_adds_the_jit_overhead_hint() {
    // 40 of 49 inclusive samples in the frame and the return thunk.
    let prof = with_native(40, [(0x2, 15), (0x30, 10), (0x31, 10), (0x20, 5)]);
    let mut r = build(&prof, &opts(0, 0));
    let mut code = HashMap::new();
    code.insert(98, Ok(code98(&prof)));
    annotate(&mut r, &prof, code, NativeRows::All);
    let kinds: Vec<&str> = r.programs[0].hints.iter().map(|h| h.kind).collect();
    assert_eq!(kinds, vec!["jit_overhead"]);
    assert_eq!(r.hints().count(), 1);
}

fn opts(limit: usize, line_limit: usize) -> ReportOptions {
    ReportOptions {
        limit,
        line_limit,
        merge_lines: false,
    }
}

fn sum<T>(rows: &Rows<T>, samples: impl Fn(&T) -> u64) -> u64 {
    rows.rows.iter().map(|r| samples(&r.row)).sum::<u64>() + rows.other.samples
}

#[test]
fn other_rows_keep_every_sample() {
    let prof = profile();
    for line_limit in 0..7 {
        let r = build(&prof, &opts(0, line_limit));
        for (p, raw) in r.programs.iter().zip(&prof.programs) {
            assert_eq!(sum(&p.direct, |h| h.samples), raw.samples);
            assert_eq!(sum(&p.kernel_ips, |k| k.samples), raw.kernel_samples);
            assert_eq!(sum(&p.kernel_functions, |g| g.samples), raw.kernel_samples);
            let tasks: u64 = p.tasks.shown_rows().iter().map(|t| t.samples).sum();
            let rest = p.tasks.other.map_or(0, |o| o.samples);
            assert_eq!(tasks + rest, raw.inclusive_samples(), "{line_limit}");
            if line_limit > 0 {
                assert!(p.direct.rows.len() <= line_limit);
                assert!(p.tasks.shown_rows().len() <= line_limit);
            }
        }
    }
}

#[test]
fn limits_cut_rows_and_keep_figures() {
    let prof = profile();
    let r = build(&prof, &opts(20, 2));
    assert_eq!((r.totals.limit, r.totals.line_limit), (20, 2));
    assert_eq!(r.programs.len(), 2);
    let p = &r.programs[0];
    assert_eq!((p.id, p.inclusive_samples), (98, 19));
    assert_eq!(
        (p.sample_percent, p.cpu_percent, p.inclusive_cpu_percent),
        (5.0, 1.0, 1.9)
    );
    let lines: Vec<Option<u32>> = p.direct.rows.iter().map(|h| h.line).collect();
    assert_eq!(lines, vec![Some(107), Some(16)]);
    assert_eq!(
        (
            p.direct.rows[0].sample_percent,
            p.direct.rows[0].cpu_percent
        ),
        (50.0, 0.5)
    );
    // Other: 3 of the 10 direct samples, 3 / 10 of the program's 1.0 %.
    assert_eq!(
        p.direct.other,
        Other {
            samples: 3,
            cpu_percent: 0.3
        }
    );
    assert_eq!(p.kernel_ips.other.samples, 4);
    assert_eq!(p.kernel_ips.rows[0].sample_percent, 33.33);
    assert_eq!(p.kernel_functions.other.samples, 1);
    assert_eq!(p.kernel_functions.rows[0].ip_count, 3);
    // The first `limit` programs only.
    assert_eq!(build(&prof, &opts(1, 2)).programs.len(), 1);
    // Report-wide figures: every program's direct samples.
    assert_eq!(
        (
            r.totals.source_mapped_samples,
            r.totals.source_unmapped_samples
        ),
        (10, 1)
    );
    assert_eq!(
        (
            r.totals.max_ring_occupancy_percent,
            r.totals.running_percent
        ),
        (2.64, 100.0)
    );
    assert_eq!(r.capture.telemetry, prof.telemetry);
}

#[test]
fn program_mode_lists_the_selected_program_only() {
    let mut prof = profile();
    prof.program_ids = vec![7];
    let r = build(&prof, &opts(20, 2));
    let ids: Vec<u32> = r.programs.iter().map(|p| p.id).collect();
    assert_eq!(ids, vec![7]);
    assert_eq!(r.totals.limit, 1);
    assert_eq!(
        (
            r.totals.selected_program_samples,
            r.totals.other_bpf_samples,
            r.totals.source_mapped_samples
        ),
        (1, 10, 1)
    );
    assert!(r.program(7).is_some() && r.program(98).is_none());
    prof.program_ids = vec![12345];
    assert!(build(&prof, &opts(20, 2)).programs.is_empty());
}

#[test]
fn payers_cut_with_an_other_row_and_keep_the_full_list() {
    let mut prof = profile();
    prof.comms.insert(207, "worker".into());
    prof.programs[0].stacks[0].cgroup = 5;
    prof.cgroups.insert(5, "/system.slice/x.service".into());
    let r = build(&prof, &opts(0, 2));
    let t = &r.programs[0].tasks;
    assert_eq!(t.all.len(), 5);
    assert_eq!(t.shown_rows().len(), 2);
    let named: Vec<(u64, &str, u64)> = t
        .shown_rows()
        .iter()
        .map(|p| (p.id, p.name.as_str(), p.samples))
        .collect();
    assert_eq!(named, vec![(7, "?", 9), (207, "worker", 5)]);
    assert_eq!(
        t.other,
        Some(Other {
            samples: 5,
            cpu_percent: 0.5
        })
    );
    assert_eq!(
        (t.all[0].cpu_percent, t.all[0].sample_percent),
        (0.9, 47.37)
    );
    let c = &r.programs[0].cgroups;
    assert_eq!(c.all.len(), 2);
    assert_eq!(c.other, None, "two cgroups fit a limit of two");
    // Program 7 has no cgroup IDs; a limit of 0 shows every task.
    assert!(r.programs[1].cgroups.is_empty());
    let all = build(&prof, &opts(0, 0));
    assert_eq!(all.programs[0].tasks.shown_rows().len(), 5);
    assert_eq!(all.programs[0].tasks.other, None);
}

#[test]
fn workloads_of_cgroups_and_tasks_named_from_the_kubelet_logs() {
    let uid = "0123abcd-0000-4000-8000-000000000001";
    let cid = "c1".repeat(32);
    let logs = std::env::temp_dir().join(format!("brr-report-kubelet-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&logs);
    std::fs::create_dir_all(logs.join(format!("pods/payments_checkout-x2k4p_{uid}"))).unwrap();
    std::fs::create_dir_all(logs.join("containers")).unwrap();
    std::fs::write(
        logs.join(format!(
            "containers/checkout-x2k4p_payments_server-{cid}.log"
        )),
        "",
    )
    .unwrap();
    let pod = format!(
        "/kubepods.slice/kubepods-pod{}.slice/cri-containerd-{cid}.scope",
        uid.replace('-', "_")
    );
    let mut prof = profile();
    // pid 7 ran in the pod 5 samples and in a service once; pid 207
    // carried no cgroup ID (cgroup v1): its /proc path names it.
    let pids: Vec<u32> = prof.programs[0].stacks.iter().map(|s| s.pid).collect();
    let first7 = pids.iter().position(|&p| p == 7).unwrap();
    for s in prof.programs[0].stacks.iter_mut().filter(|s| s.pid == 7) {
        s.cgroup = 5;
    }
    prof.programs[0].stacks[first7].cgroup = 6;
    prof.programs[0].stacks[first7].samples = 1;
    prof.cgroups.insert(5, pod.clone());
    prof.cgroups.insert(6, "/system.slice/x.service".into());
    prof.task_cgroups.insert(207, format!("/docker/{cid}"));
    let w = workloads(&prof, &logs);
    std::fs::remove_dir_all(&logs).unwrap();
    let c5 = &w.cgroups[&5];
    assert_eq!(c5.path, pod);
    let c = c5.container.as_ref().unwrap();
    assert_eq!(
        (c.id.as_str(), c.name.as_deref()),
        (cid.as_str(), Some("server"))
    );
    let p = c5.pod.as_ref().unwrap();
    assert_eq!(
        (p.uid.as_str(), p.namespace.as_deref(), p.name.as_deref()),
        (uid, Some("payments"), Some("checkout-x2k4p"))
    );
    assert_eq!(w.cgroups[&6].service.as_deref(), Some("x.service"));
    assert_eq!(w.tasks[&7], *c5, "the cgroup it ran in most");
    let docker = w.tasks[&207].container.as_ref().unwrap();
    assert_eq!(
        (docker.runtime.as_str(), docker.name.as_deref()),
        ("docker", None)
    );
    // Tasks whose cgroup is unknown have none.
    assert!(!w.tasks.contains_key(&116));
    assert_eq!(w.of_sample(7, 6), Some(&w.cgroups[&6]));
    assert_eq!(w.of_sample(7, 0), Some(c5));
    assert_eq!(
        w.of_sample(207, 99),
        w.tasks.get(&207),
        "a gone cgroup: the task's"
    );
    // The report's payers carry them.
    let r = build_with(&prof, &opts(0, 0), &w);
    let p98 = &r.programs[0];
    assert_eq!(p98.tasks.workload(7), Some(c5));
    assert_eq!(p98.cgroups.workload(5), Some(c5));
    assert_eq!(p98.tasks.workload(116), None);
}

fn lock_stack(samples: u64) -> Stack {
    let frame = |sym: &str| Frame {
        ip: 1,
        symbol: Some(sym.into()),
        kind: crate::profile::attribute::classify(Some(sym), None),
        ..Default::default()
    };
    Stack {
        samples,
        file: Some("/s/x.c".into()),
        line: Some(9),
        kernel: vec![frame("htab_map_update_elem"), frame("_raw_spin_lock")],
        ..Default::default()
    }
}

#[test]
fn hints_from_samples_and_from_the_kernel() {
    let mut prof = profile();
    let p = &mut prof.programs[1];
    p.kernel_samples += 40;
    p.stacks.push(lock_stack(40));
    prof.kernel_hints.push(Hint {
        kind: "tail_calls",
        program_id: 7,
        ..Default::default()
    });
    prof.kernel_hints.push(Hint {
        kind: "tail_calls",
        program_id: 555,
        ..Default::default()
    });
    let r = build(&prof, &opts(0, 0));
    let kinds: Vec<&str> = r.program(7).map_or(Vec::new(), |p| {
        p.hints.iter().map(|h| h.kind).collect::<Vec<_>>()
    });
    assert_eq!(
        kinds,
        vec!["hash_map_contention", "map_access_dominates", "tail_calls"]
    );
    assert!(r.program(98).is_some_and(|p| p.hints.is_empty()));
    assert_eq!(r.hints().count(), 3, "only the listed programs' hints");
}

/// Interrupts: their own rows, not the line's work (no hint, no
/// payer); a program unloaded early: CPU% over its loaded time.
#[test]
fn interrupts_apart_and_cpu_while_loaded() {
    use crate::model::profile::InterruptHotspot;
    let mut prof = profile();
    let p = &mut prof.programs[1];
    // 40 samples of a hash-map update's lock... taken in interrupts.
    let mut irq = lock_stack(40);
    irq.interrupt = Some("asm_sysvec_apic_timer_interrupt".into());
    p.stacks.push(irq);
    p.interrupt_samples = 40;
    p.interrupts = vec![
        InterruptHotspot {
            samples: 10,
            entry: "asm_common_interrupt".into(),
            ..Default::default()
        },
        InterruptHotspot {
            samples: 30,
            entry: "asm_sysvec_apic_timer_interrupt".into(),
            ..Default::default()
        },
    ];
    p.loaded_after = Some(0.25);
    p.unloaded_after = Some(0.5);
    let r = build(&prof, &opts(0, 1));
    let q = r.program(7).unwrap();
    assert!(q.hints.is_empty(), "{:?}", q.hints);
    assert_eq!((q.interrupt_samples, q.interrupt_cpu_percent), (40, 4.0));
    let rows: Vec<(&str, u64, f64)> = q
        .interrupts
        .rows
        .iter()
        .map(|r| (r.entry.as_str(), r.samples, r.sample_percent))
        .collect();
    assert_eq!(rows, vec![("asm_sysvec_apic_timer_interrupt", 30, 75.0)]);
    assert_eq!(q.interrupts.other.samples, 10);
    // Payers add up to the inclusive samples, interrupts aside.
    let tasks: u64 = q.tasks.all.iter().map(|t| t.samples).sum();
    assert_eq!(tasks, q.inclusive_samples);
    // 1 sample over the 0.25 s it was loaded at 1000 Hz: 0.4 % of a CPU.
    assert_eq!((q.cpu_percent, q.loaded_cpu_percent), (0.1, Some(0.4)));
    assert_eq!(q.loaded_inclusive_cpu_percent, Some(0.4));
    assert_eq!(r.program(98).unwrap().loaded_cpu_percent, None);
}

/// Several selected programs: each listed, the totals over all of them.
#[test]
fn several_selected_programs() {
    let mut prof = profile();
    prof.program_ids = vec![7, 98, 555];
    prof.pid = Some(31);
    let r = build(&prof, &opts(1, 2));
    let ids: Vec<u32> = r.programs.iter().map(|p| p.id).collect();
    assert_eq!(ids, vec![98, 7], "every sampled one, not cut by --limit");
    assert_eq!(
        (
            r.capture.program_id,
            &r.capture.program_ids[..],
            r.capture.pid
        ),
        (Some(7), &[7, 98, 555][..], Some(31))
    );
    assert_eq!(
        (
            r.totals.limit,
            r.totals.selected_program_samples,
            r.totals.other_bpf_samples,
            r.totals.source_mapped_samples
        ),
        (3, 11, 0, 10)
    );
}

#[test]
fn hot_and_slow_from_an_activity_row() {
    let row = ActivityRow {
        prog: crate::model::Program {
            id: 5,
            name: "p".into(),
            ..Default::default()
        },
        run_count_delta: 1_000_000,
        run_time_ns_delta: 400_000_000,
        recursion_misses_delta: Some(0),
    };
    let h = hot_and_slow(&row, 1.0, 300);
    assert_eq!(h.map(|h| (h.kind, h.program_id)), Some(("hot_and_slow", 5)));
    assert!(hot_and_slow(&row, 1.0, 500).is_none());
}
