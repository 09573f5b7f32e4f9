//! Tests of sample attribution: ranges and lines, callchains, interrupts,
//! stacks and the KIND of kernel symbols, on built and recorded samples.

use super::interrupts::{interrupt_entry, is_interrupt_entry};
use super::*;
use crate::profile::image::tests::{line, range};
use crate::profile::records::{build, walk_bytes, ParseStats, Record};

/// Program 7: main at 0x1000..0x1100 ("main"), subprog at 0x2000..0x2080
/// ("sub"); lines at 0x1000 (l10), 0x1040 (l11), 0x2000 (l20), 0x2010 (l21).
pub(super) fn prog7() -> ProgMeta {
    ProgMeta {
        id: 7,
        prog_type: "socket_filter".into(),
        name: "p7".into(),
        tag: "00".into(),
        jited: true,
        funcs: vec![
            range(0x1000, 0x100, 0, "main"),
            range(0x2000, 0x80, 1, "sub"),
        ],
        lines: vec![
            line(0x1000, 0, "a.c", 10, "x = 1;"),
            line(0x1040, 4, "a.c", 11, "call();"),
            line(0x2000, 9, "a.c", 20, "y = 2;"),
            line(0x2010, 11, "a.c", 21, "return y;"),
        ],
    }
}

/// The sample type of records made by `build::sample` for a shape.
fn built(shape: Shape) -> u64 {
    shape.sample_type() | build::SAMPLE_FIELDS
}

fn feed(a: &mut Attributor, bytes: &[u8]) {
    let mut st = ParseStats::default();
    walk_bytes(bytes, built(a.shape), &mut st, |r| {
        if let Record::Sample(s) = r {
            a.sample(&s)
        }
    });
    assert_eq!(st.malformed_records, 0);
}

#[test]
fn direct_samples_follow_ranges_and_lines() {
    let mut a = Attributor::new(Shape::Direct);
    a.register(prog7());
    let mut s = Vec::new();
    for ip in [
        0x1041,
        0x1041,
        0x1000,
        0x2011,
        0x20ff,
        0x0fff,
        0xffff_ffff_8100_0000,
        0x10ff,
    ] {
        s.extend(build::sample(ip, 0, None));
    }
    feed(&mut a, &s);
    assert_eq!(a.counters.total_samples, 8);
    assert_eq!(a.counters.bpf_jit_samples, 5);
    assert_eq!(a.counters.non_bpf_samples, 3);
    let (progs, c, _) = a.finish(&Kallsyms::default(), |_| vec![]);
    assert_eq!(c.kernel_attributed_samples, 0);
    let p = &progs[0];
    assert_eq!((p.samples, p.kernel_samples), (5, 0));
    assert_eq!(p.full_name.as_deref(), Some("main"));
    let rows: Vec<(u64, Option<u32>, Option<&str>)> = p
        .hotspots
        .iter()
        .map(|h| (h.samples, h.line, h.function.as_deref()))
        .collect();
    // First-seen order; 0x10ff is still line 11 (no upper bound).
    assert_eq!(
        rows,
        vec![
            (3, Some(11), Some("main")),
            (1, Some(10), Some("main")),
            (1, Some(21), Some("sub"))
        ]
    );
    assert_eq!(p.hotspots[0].instruction_offset, Some(32));
    assert_eq!(p.hotspots[0].jited_address, Some(0x1040));
    assert_eq!(p.direct_source_mapped_samples, 5);
    // Every direct sample at its exact address, placed in its function.
    let native: Vec<String> = p
        .native
        .iter()
        .map(|n| {
            let f = n.function.as_deref().unwrap_or("-");
            let (i, off) = (n.func_index.unwrap_or(9), n.offset.unwrap_or(0));
            format!("{} {:#x} {i}:{f}+{off:#x}", n.samples, n.ip)
        })
        .collect();
    assert_eq!(
        native,
        [
            "2 0x1041 0:main+0x41",
            "1 0x1000 0:main+0x0",
            "1 0x10ff 0:main+0xff",
            "1 0x2011 1:sub+0x11",
        ]
    );
}

#[test]
fn native_samples_add_up_to_direct_samples() {
    let mut a = Attributor::new(Shape::Callchain);
    let mut m = prog7();
    m.lines.truncate(1);
    a.register(m);
    let ctx = 0xffff_ffff_ffff_ff80;
    let mut s = Vec::new();
    // Direct samples, mapped and unmapped (0x2005 is before the
    // subprogram's first record), on both functions.
    for (i, ip) in [0x1000u64, 0x1004, 0x2005, 0x1004, 0x207f, 0x1004]
        .into_iter()
        .enumerate()
    {
        s.extend(with_pid(build::sample(ip, 0, Some(&[ctx, ip])), i as u32));
    }
    // Kernel samples under a BPF caller are not native samples.
    let chain = [ctx, 0xffffffff81520044, 0x1055];
    s.extend(build::sample(0xffffffff81520044, 0, Some(&chain)));
    feed(&mut a, &s);
    let (progs, _, _) = a.finish(&Kallsyms::default(), |_| vec![]);
    let p = &progs[0];
    assert_eq!((p.samples, p.kernel_samples), (6, 1));
    let total: u64 = p.native.iter().map(|n| n.samples).sum();
    assert_eq!(total, p.samples);
    assert_eq!((p.native[0].ip, p.native[0].samples), (0x1004, 3));
    let sub: Vec<(u64, Option<u64>)> = p
        .native
        .iter()
        .filter(|n| n.function.as_deref() == Some("sub"))
        .map(|n| (n.ip, n.offset))
        .collect();
    assert_eq!(sub, vec![(0x2005, Some(5)), (0x207f, Some(0x7f))]);
}

#[test]
fn unmapped_program_and_ranges_lifecycle() {
    let mut a = Attributor::new(Shape::Direct);
    let mut m = prog7();
    m.lines.clear();
    a.register(m);
    feed(&mut a, &build::sample(0x1010, 0, None));
    // Unloaded: no longer matches.
    a.unregister_prog(7);
    feed(&mut a, &build::sample(0x1010, 0, None));
    // A new program reusing the memory takes over.
    let mut n = prog7();
    n.id = 8;
    n.funcs.truncate(1);
    a.register(n);
    feed(&mut a, &build::sample(0x1010, 0, None));
    // Re-registering a known program is harmless.
    a.register(prog7());
    a.unregister_addr(0x2000);
    feed(&mut a, &build::sample(0x2001, 0, None));
    let (progs, c, _) = a.finish(&Kallsyms::default(), |id| vec![format!("/pin/{id}")]);
    assert_eq!(c.total_samples, 4);
    assert_eq!(c.bpf_jit_samples, 2);
    let p7 = progs.iter().find(|p| p.id == 7).unwrap();
    assert_eq!(p7.samples, 1);
    assert_eq!(p7.direct_source_unmapped_samples, 1);
    assert!(p7.hotspots[0].is_unmapped());
    assert_eq!(p7.pinned_paths, vec!["/pin/7".to_string()]);
    assert_eq!(progs.iter().find(|p| p.id == 8).unwrap().samples, 1);
}

const KSYMS: &str = "\
ffffffff81000000 T _text
ffffffff81520040 T bpf_ktime_get_ns
ffffffff81520080 T ktime_get_mono_fast_ns
ffffffff81600000 t lookup_nulls_elem_raw
";

#[test]
fn callchains_credit_the_nearest_bpf_caller_line() {
    let mut a = Attributor::new(Shape::Callchain);
    a.register(prog7());
    let ctx_kernel = 0xffff_ffff_ffff_ff80;
    let mut s = Vec::new();
    // helper called from line 11 (call insn at 0x1050, returns to 0x1055)
    s.extend(build::sample(
        0xffffffff81520044,
        0,
        Some(&[ctx_kernel, 0xffffffff81520044, 0x1055, 0xffffffff81000100]),
    ));
    // deeper chain, return address equals the start of the next line
    // record (0x2010): must be credited to line 20, not 21.
    s.extend(build::sample(
        0xffffffff81520090,
        0,
        Some(&[
            ctx_kernel,
            0xffffffff81520090,
            0xffffffff81520050,
            0x2010,
            0x1055,
        ]),
    ));
    // no BPF frame at all
    s.extend(build::sample(
        0xffffffff81000010,
        0,
        Some(&[ctx_kernel, 0xffffffff81000010, 0xffffffff81000200]),
    ));
    // direct sample with a chain is still direct
    s.extend(build::sample(0x1001, 0, Some(&[ctx_kernel, 0x1001])));
    feed(&mut a, &s);
    let k = Kallsyms::parse(KSYMS);
    let (progs, c, _) = a.finish(&k, |_| vec![]);
    assert_eq!(c.total_samples, 4);
    assert_eq!(c.callchain_samples, 4);
    assert_eq!(c.kernel_attributed_samples, 2);
    assert_eq!(c.kernel_unattributed_samples, 1);
    assert_eq!(c.kernel_symbolized_samples, 2);
    let p = &progs[0];
    assert_eq!(
        (p.samples, p.kernel_samples, p.inclusive_samples()),
        (1, 2, 3)
    );
    let k0 = &p.kernel_hotspots[0];
    assert_eq!(k0.symbol.as_deref(), Some("bpf_ktime_get_ns"));
    assert_eq!((k0.symbol_offset, k0.kind), (Some(4), "bpf_helper"));
    assert_eq!(
        (k0.bpf_line, k0.bpf_jited_address),
        (Some(11), Some(0x1040))
    );
    assert_eq!(k0.bpf_function.as_deref(), Some("main"));
    let k1 = &p.kernel_hotspots[1];
    assert_eq!(k1.symbol.as_deref(), Some("ktime_get_mono_fast_ns"));
    assert_eq!((k1.kind, k1.bpf_line), ("kernel", Some(20)));
    assert_eq!(k1.bpf_function.as_deref(), Some("sub"));
    assert_eq!(p.under_bpf_caller_source_mapped_samples, 2);
}

/// A sample record from `build::sample` with its pid replaced.
fn with_pid(mut rec: Vec<u8>, pid: u32) -> Vec<u8> {
    rec[16..20].copy_from_slice(&pid.to_ne_bytes());
    rec
}

#[test]
fn stacks_keep_task_subprogram_and_kernel_frames_outermost_first() {
    let mut a = Attributor::new(Shape::Callchain);
    a.register(prog7());
    let ctx = 0xffff_ffff_ffff_ff80;
    let chain = [ctx, 0xffffffff81520090, 0xffffffff81520050, 0x2015, 0x1055];
    let mut s = Vec::new();
    for pid in [40, 40, 41] {
        s.extend(with_pid(
            build::sample(0xffffffff81520090, 0, Some(&chain)),
            pid,
        ));
    }
    s.extend(with_pid(build::sample(0x2011, 0, Some(&[ctx, 0x2011])), 40));
    s.extend(with_pid(build::sample(0x1001, 0, Some(&[ctx, 0x1001])), 41));
    feed(&mut a, &s);
    let (progs, _, _) = a.finish(&Kallsyms::parse(KSYMS), |_| vec![]);
    let p = &progs[0];
    let total: u64 = p.stacks.iter().map(|s| s.samples).sum();
    assert_eq!(total, p.inclusive_samples());
    let top = &p.stacks[0];
    assert_eq!((top.samples, top.pid, top.line), (2, 40, Some(21)));
    assert_eq!(top.subprogram.as_deref(), Some("sub"));
    let frames: Vec<Option<&str>> = top.kernel.iter().map(|f| f.symbol.as_deref()).collect();
    assert_eq!(
        frames,
        vec![Some("bpf_ktime_get_ns"), Some("ktime_get_mono_fast_ns")],
        "outermost first"
    );
    let pids: Vec<(u32, u64, usize)> = p
        .stacks
        .iter()
        .map(|s| (s.pid, s.samples, s.kernel.len()))
        .collect();
    assert_eq!(pids, vec![(40, 2, 2), (41, 1, 0), (40, 1, 0), (41, 1, 2)]);
    let main_line = p.stacks.iter().find(|s| s.line == Some(10)).unwrap();
    assert_eq!(
        main_line.subprogram, None,
        "the main function is the program"
    );
}

#[test]
fn unmapped_callers_keep_the_raw_address_and_lbr_uses_branches() {
    let mut a = Attributor::new(Shape::Lbr);
    let mut m = prog7();
    m.lines.clear();
    a.register(m);
    let mut p = build::sample(0xffffffff81600010, 0, None)[8..].to_vec();
    p.extend(build::u64s(&[
        2,
        0xffffffff81000000,
        0xffffffff81600000,
        0,
        0x1055,
        0xffffffff81600000,
        0,
    ]));
    let rec = build::record(crate::profile::records::RECORD_SAMPLE, &p);
    feed(&mut a, &rec);
    let (progs, c, _) = a.finish(&Kallsyms::default(), |_| vec![]);
    assert_eq!(c.kernel_attributed_samples, 1);
    let k = &progs[0].kernel_hotspots[0];
    assert_eq!(
        k.bpf_jited_address,
        Some(0x1055),
        "raw caller address, LBR not adjusted"
    );
    assert_eq!((k.bpf_line, k.caller_mapped), (None, false));
    assert_eq!((k.symbol.as_deref(), k.kind), (None, "unknown"));
    assert_eq!(progs[0].under_bpf_caller_source_unmapped_samples, 1);
}

/// Kernel callchains recorded on this kernel (see the file's header).
const RECORDED: &str = include_str!("../testdata/kernel_callchains.txt");

/// Each recorded chain: what it is (`call` or `interrupt:<entry>`)
/// and its frames, leaf first.
fn recorded() -> Vec<(&'static str, Vec<&'static str>)> {
    RECORDED
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(|l| {
            let (kind, frames) = l.split_once('\t').unwrap();
            (kind, frames.split(';').collect())
        })
        .collect()
}

fn is_bpf_prog(frame: &str) -> bool {
    let tag = frame.strip_prefix("bpf_prog_").unwrap_or("").as_bytes();
    tag.len() > 17 && tag[16] == b'_' && tag[..16].iter().all(u8::is_ascii_hexdigit)
}

/// A sample with a recorded chain: every kernel symbol at an address
/// of its own (the text for a kallsyms), the first BPF frame at
/// program 7's line 11 (a return address after its call).
fn replay(frames: &[&str], names: &mut Vec<String>) -> Vec<u8> {
    let mut chain = vec![0xffff_ffff_ffff_ff80];
    for (i, f) in frames.iter().enumerate() {
        if is_bpf_prog(f) && !chain.contains(&0x1055) {
            chain.push(0x1055);
            continue;
        }
        let n = match names.iter().position(|n| n == f) {
            Some(n) => n,
            None => {
                names.push(f.to_string());
                names.len() - 1
            }
        };
        // The leaf is the sampled IP itself; the others return
        // addresses just after a call.
        let base = 0xffff_ffff_8100_0000 + n as u64 * 0x1000;
        chain.push(base + if i == 0 { 0x8 } else { 0x10 });
    }
    build::sample(chain[1], 0, Some(&chain))
}

fn ksyms_of(names: &[String]) -> Kallsyms {
    let text: String = names
        .iter()
        .enumerate()
        .map(|(n, name)| {
            format!(
                "{:x} T {name}\n",
                0xffff_ffff_8100_0000u64 + n as u64 * 0x1000
            )
        })
        .collect();
    Kallsyms::parse(&text)
}

/// Every recorded chain on its own: a call stays under the line that
/// made it; an interrupt is counted apart, with its entry, and its
/// frames end at that entry.
#[test]
fn recorded_callchains_tell_interrupts_from_calls() {
    let chains = recorded();
    assert!(chains.len() >= 10, "{} chains", chains.len());
    for (kind, frames) in &chains {
        let mut a = Attributor::new(Shape::Callchain);
        a.register(prog7());
        let mut names = Vec::new();
        feed(&mut a, &replay(frames, &mut names));
        let (progs, c, _) = a.finish(&ksyms_of(&names), |_| vec![]);
        let p = &progs[0];
        let bpf = frames.iter().position(|f| is_bpf_prog(f)).unwrap();
        let below: Vec<&str> = frames[..bpf].iter().rev().copied().collect();
        let stack = &p.stacks[0];
        let got: Vec<&str> = stack
            .kernel
            .iter()
            .filter_map(|f| f.symbol.as_deref())
            .collect();
        match kind.strip_prefix("interrupt:") {
            Some(entry) => {
                assert_eq!(
                    (p.kernel_samples, p.interrupt_samples),
                    (0, 1),
                    "{frames:?}"
                );
                assert_eq!((c.kernel_attributed_samples, c.interrupt_samples), (0, 1));
                assert!(p.kernel_hotspots.is_empty(), "{frames:?}");
                let row = &p.interrupts[0];
                assert_eq!(row.entry, entry);
                assert_eq!(
                    (row.bpf_line, row.bpf_function.as_deref()),
                    (Some(11), Some("main"))
                );
                assert_eq!(stack.interrupt.as_deref(), Some(entry));
                // The interrupt's frames, from its entry down to the leaf.
                let at = below.iter().position(|f| f == &entry).unwrap();
                assert_eq!(got, below[at..], "{frames:?}");
            }
            None => {
                assert_eq!(*kind, "call");
                assert_eq!(
                    (p.kernel_samples, p.interrupt_samples),
                    (1, 0),
                    "{frames:?}"
                );
                assert_eq!((c.kernel_attributed_samples, c.interrupt_samples), (1, 0));
                assert!(p.interrupts.is_empty());
                assert_eq!(stack.interrupt, None);
                assert_eq!(got, below, "{frames:?}");
                assert_eq!(p.kernel_hotspots[0].bpf_line, Some(11));
            }
        }
        assert_eq!(p.inclusive_samples() + p.interrupt_samples, 1);
    }
}

/// All of them in one capture: the counts split, every sample stays in
/// some stack, and the kernel rows hold only the calls.
#[test]
fn recorded_callchains_together() {
    let chains = recorded();
    let mut a = Attributor::new(Shape::Callchain);
    a.register(prog7());
    let mut names = Vec::new();
    for (_, frames) in &chains {
        feed(&mut a, &replay(frames, &mut names));
    }
    let (progs, c, _) = a.finish(&ksyms_of(&names), |_| vec![]);
    let irq = chains
        .iter()
        .filter(|(k, _)| k.starts_with("interrupt:"))
        .count() as u64;
    let calls = chains.len() as u64 - irq;
    assert!(irq >= 5 && calls >= 4, "{irq} interrupts, {calls} calls");
    let p = &progs[0];
    assert_eq!((p.kernel_samples, p.interrupt_samples), (calls, irq));
    assert_eq!(
        (c.kernel_attributed_samples, c.interrupt_samples),
        (calls, irq)
    );
    assert_eq!(
        (
            p.under_bpf_caller_source_mapped_samples,
            p.under_bpf_caller_source_unmapped_samples
        ),
        (calls, 0)
    );
    let rows: u64 = p.kernel_hotspots.iter().map(|k| k.samples).sum();
    assert_eq!(rows, calls);
    let by_entry: u64 = p.interrupts.iter().map(|r| r.samples).sum();
    assert_eq!(by_entry, irq);
    let entries: std::collections::BTreeSet<&str> =
        p.interrupts.iter().map(|r| r.entry.as_str()).collect();
    assert_eq!(
        entries,
        ["asm_common_interrupt", "asm_sysvec_apic_timer_interrupt"].into()
    );
    let stacks: u64 = p.stacks.iter().map(|s| s.samples).sum();
    assert_eq!(stacks, calls + irq);
    for k in &p.kernel_hotspots {
        let sym = k.symbol.as_deref().unwrap_or("");
        assert!(!is_interrupt_entry(sym), "{sym} among the calls");
    }
}

#[test]
fn entry_points_of_both_architectures() {
    let at = |names: &[&str]| interrupt_entry(names.iter().map(|n| Some(*n)));
    for entry in [
        "asm_sysvec_apic_timer_interrupt",
        "asm_sysvec_call_function_single",
        "asm_common_interrupt",
        "asm_spurious_interrupt",
        "asm_exc_page_fault",
        "asm_exc_int3",
        "asm_fred_entrypoint_kernel",
        "el1h_64_irq",
        "el1h_64_sync",
        "el1_interrupt",
        "call_on_irq_stack",
    ] {
        assert!(is_interrupt_entry(entry), "{entry}");
    }
    for other in [
        "entry_SYSCALL_64_after_hwframe",
        "asm_load_gs_index",
        "common_interrupt",
        "sysvec_apic_timer_interrupt",
        "handle_softirqs",
        "el0t_64_sync",
        "bpf_ktime_get_ns",
    ] {
        assert!(!is_interrupt_entry(other), "{other}");
    }
    // arm64, as the unwinder reports an IRQ on the IRQ stack: the
    // entry nearest the interrupted code is the vector's.
    assert_eq!(
        at(&[
            "rcu_core",
            "handle_softirqs",
            "__irq_exit_rcu",
            "call_on_irq_stack",
            "el1_interrupt",
            "el1h_64_irq_handler",
            "el1h_64_irq",
        ]),
        Some(6)
    );
    // An interrupt arriving inside another one's handler.
    assert_eq!(
        at(&[
            "x",
            "asm_sysvec_apic_timer_interrupt",
            "y",
            "asm_common_interrupt"
        ]),
        Some(3)
    );
    assert_eq!(at(&["bpf_ktime_get_ns", "ktime_get_mono_fast_ns"]), None);
    assert_eq!(interrupt_entry([None, Some("read_tsc")]), None);
}

/// Throughput of parse + attribution (run with `cargo test --release
/// -- --ignored per_sample_cost --nocapture`).
#[test]
#[ignore]
fn per_sample_cost() {
    let mut a = Attributor::new(Shape::Direct);
    a.register(prog7());
    let mut ring = Vec::new();
    for i in 0..10_000u64 {
        let ip = if i % 4 == 0 {
            0xffff_ffff_8100_0000 + i
        } else {
            0x1000 + i % 0x80
        };
        ring.extend(build::sample(ip, 0, None));
    }
    let rounds = 200;
    let t = std::time::Instant::now();
    let mut scratch = Vec::new();
    let mut st = ParseStats::default();
    for r in 0..rounds {
        let cut = (r * 4099) % ring.len();
        crate::profile::records::walk(
            &ring[..cut],
            &ring[cut..],
            built(a.shape),
            &mut scratch,
            &mut st,
            |rec| {
                if let Record::Sample(s) = rec {
                    a.sample(&s)
                }
            },
        );
    }
    let n = a.counters.total_samples;
    eprintln!(
        "{:.1} ns per sample ({n} samples)",
        t.elapsed().as_nanos() as f64 / n as f64
    );
}

#[test]
fn kinds_without_substring_misclassification() {
    let k = |n: &str| classify(Some(n), None);
    assert_eq!(classify(None, None), "unknown");
    assert_eq!(k(""), "unknown");
    assert_eq!(k("bpf_map_lookup_elem"), "bpf_map");
    assert_eq!(k("htab_map_hash"), "bpf_map");
    assert_eq!(k("__htab_map_lookup_elem"), "bpf_map");
    assert_eq!(k("lookup_nulls_elem_raw"), "bpf_map");
    assert_eq!(k("array_map_lookup_elem"), "bpf_map");
    assert_eq!(k("foo_map_update_elem"), "bpf_map");
    assert_eq!(k("cpu_map_update_elem.cold"), "bpf_map");
    assert_eq!(k("__pte_offset_map_lock"), "kernel");
    assert_eq!(k("filemap_map_pages"), "kernel");
    assert_eq!(k("kvm_irq_map_gsi"), "kernel");
    assert_eq!(k("bpf_ktime_get_ns"), "bpf_helper");
    assert_eq!(k("____bpf_probe_read_kernel"), "bpf_helper");
    assert_eq!(k("__bpf_get_stack"), "bpf_helper");
    assert_eq!(k("BPF_Get_Current_Pid_Tgid"), "bpf_helper");
    assert_eq!(k("bpf_prog_0123456789abcdef_sys_exit"), "kernel");
    assert_eq!(classify(Some("bpf_trampoline_6442"), Some("bpf")), "kernel");
    assert_eq!(k("ktime_get_mono_fast_ns"), "kernel");
    assert_eq!(k("my_bpf_helper_thing"), "kernel");
}
