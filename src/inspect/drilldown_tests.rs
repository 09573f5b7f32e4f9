//! Drilldown rows on synthetic programs: markers, modes, children, summary
//! rows, exact 100.00 %, folds, collapse, devmode (unit + insta snapshots).

use super::drilldown::*;
use super::native::{Arch, JitFunction, NativeImage, NativeInsn};
use super::profile::*;
use super::source::SourceTree;
use crate::model::image::{JitRange, LineRecord};
use crate::model::profile::KernelHotspot;
use crate::render::drilldown::{self as view, ViewState};
use crate::render::textmode;

const F: &str = "/b/prog.bpf.c";
const H: &str = "/b/./maps.bpf.h";

type Key = Option<(&'static str, u32, u32, &'static str)>;

/// A synthetic program: one entry per slot (opcode, imm, line key). A line
/// record starts wherever the key (column included) changes.
struct Prog {
    xlated: Vec<u8>,
    lines: Vec<LineRecord>,
    ranges: Vec<JitRange>,
}

fn program(slots: &[(u8, i32, Key)]) -> Prog {
    let mut xlated = Vec::new();
    let mut lines: Vec<LineRecord> = Vec::new();
    let mut prev: Option<Key> = None;
    for (i, &(op, imm, key)) in slots.iter().enumerate() {
        let mut raw = [0u8; 8];
        raw[0] = op;
        raw[4..].copy_from_slice(&imm.to_le_bytes());
        xlated.extend_from_slice(&raw);
        if prev != Some(key) && (key.is_some() || !lines.is_empty()) {
            lines.push(match key {
                Some((f, l, c, s)) => LineRecord {
                    insn_off: i as u32,
                    file: Some(f.into()),
                    line: (l != 0).then_some(l),
                    column: (c != 0).then_some(c),
                    source: (!s.is_empty()).then(|| s.to_string()),
                    jited_addr: None,
                },
                None => LineRecord {
                    insn_off: i as u32,
                    ..Default::default()
                },
            });
        }
        prev = Some(key);
    }
    Prog {
        xlated,
        lines,
        ranges: vec![JitRange {
            start: 0x1000,
            len: 0x400,
            func_index: 0,
            func_name: None,
        }],
    }
}

const L10: Key = Some((F, 10, 1, "int f(void *ctx)"));
const L12A: Key = Some((F, 12, 5, "\tx = 1;"));
const L12B: Key = Some((F, 12, 9, "\tx = 1;"));
const L15: Key = Some((H, 15, 2, "\tval = lookup(map, key);"));
const L11: Key = Some((F, 11, 3, "\ty = 2; /* a: b */"));
const L0: Key = Some((F, 0, 0, ""));
const L20: Key = Some((F, 20, 5, "\treturn 0;"));

/// Exercises every marker: same-line-cols (12), file-switch + header +
/// many-insns (15), split + backjump (11, 12), a line-0 record, an
/// unmapped slot, and one ld_imm64 (slots 4 and 5).
fn markers_program() -> Prog {
    let mut s = vec![(0xbf, 0, L10), (0xb7, 1, L12A), (0x07, 1, L12B)];
    s.push((0xbf, 0, L15));
    s.push((0x18, 7, L15));
    s.push((0x00, 0, L15));
    for _ in 0..6 {
        s.push((0x07, 4, L15));
    }
    s.extend([
        (0xb7, 2, L11),
        (0xb7, 1, L12A),
        (0x07, 2, L11),
        (0xb7, 0, L0),
        (0xb7, 0, None),
        (0x95, 0, L20),
    ]);
    program(&s)
}

fn data<'a>(p: &'a Prog, name: &'a str) -> ProgramData<'a> {
    ProgramData {
        id: 42,
        name,
        xlated: &p.xlated,
        lines: &p.lines,
        jit_ranges: &p.ranges,
    }
}

fn build(p: &Prog, profile: Option<&ProfileInput>, opts: &Options) -> Drilldown {
    Drilldown::build(data(p, "marker_prog"), profile, opts, None).unwrap()
}

fn text(dd: &Drilldown, collapse: bool) -> String {
    // Trailing pad spaces would make snapshots unreadable; layout widths are
    // checked separately.
    textmode::inspect(dd, collapse)
        .lines()
        .map(str::trim_end)
        .collect::<Vec<_>>()
        .join("\n")
}

fn mixed() -> Options {
    Options {
        mixed: true,
        ..Default::default()
    }
}

fn key(file: &str, line: u32, src: &str) -> (Option<String>, Option<u32>, Option<String>) {
    (
        Some(file.to_string()),
        (line != 0).then_some(line),
        (!src.is_empty()).then(|| src.to_string()),
    )
}

fn direct(samples: u64, off: Option<u64>, k: Key) -> DirectHotspot {
    let (file, line, source) = match k {
        Some((f, l, _, s)) => key(f, l, s),
        None => (None, None, None),
    };
    DirectHotspot {
        samples,
        jited_address: None,
        instruction_offset: off,
        file,
        line,
        column: None,
        source,
        function: None,
    }
}

fn kernel(samples: u64, sym: &str, kind: &'static str, ips: usize, off: u64, k: Key) -> KernelRow {
    let (f, l, _, s) = k.unwrap();
    let (bpf_file, bpf_line, bpf_source) = key(f, l, s);
    KernelRow {
        row: KernelHotspot {
            samples,
            ip: 0xffff_0000 + off,
            symbol: Some(sym.to_string()),
            symbol_offset: Some(off),
            kind,
            bpf_jited_address: Some(0x1000),
            bpf_instruction_offset: Some(24),
            bpf_file,
            bpf_line,
            bpf_source,
            caller_mapped: true,
            ..Default::default()
        },
        ip_count: ips,
    }
}

const L99: Key = Some((F, 99, 1, "gone();"));

/// 35 inclusive samples: 22 direct (17 on rows, 1 unmapped retained, 4
/// omitted by the line limit, one of them unmapped), 12 under eBPF (7 on
/// rows, 2 on a caller line with no row, 3 omitted), 1 unaccounted.
fn profile() -> ProfileInput {
    ProfileInput {
        program: Some(DrillProfile {
            samples: 22,
            kernel_samples: 12,
            inclusive_samples: 35,
            inclusive_cpu_percent: 0.7021,
            direct_source_unmapped_samples: 2,
            under_bpf_caller_source_unmapped_samples: 0,
            direct_hotspot_samples_omitted_by_limit: 4,
            under_bpf_hotspot_samples_omitted_by_limit: 3,
            under_bpf_function_samples_omitted_by_limit: 3,
            unaccounted_samples: 1,
            hotspots: vec![
                direct(7, Some(17 * 8), L20),
                direct(5, Some(8), L12A),
                direct(3, Some(16), L12B),
                direct(2, Some(24), L15),
                direct(1, None, None),
            ],
            kernel_functions: vec![
                kernel(4, "htab_map_hash", "bpf_map", 3, 0, L15),
                kernel(2, "gone_fn", "kernel", 1, 0, L99),
                kernel(2, "memcmp", "kernel", 1, 0, L15),
                kernel(1, "bpf_get_current_pid_tgid", "bpf_helper", 1, 0, L10),
            ],
            kernel_ips: vec![
                kernel(2, "htab_map_hash", "bpf_map", 1, 0x10, L15),
                kernel(2, "memcmp", "kernel", 1, 0x5d, L15),
                kernel(2, "gone_fn", "kernel", 1, 0x8, L99),
                kernel(1, "bpf_get_current_pid_tgid", "bpf_helper", 1, 0, L10),
                kernel(1, "htab_map_hash", "bpf_map", 1, 0, L15),
                kernel(1, "htab_map_hash", "bpf_map", 1, 0x20, L15),
            ],
            native: vec![],
            interrupt_samples: 0,
            interrupts: Vec::new(),
            loaded_cpu_percent: None,
            unloaded_after: None,
        }),
        line_limit: 4,
        warnings: vec![],
        incomplete: false,
    }
}

/// Sum of the `%THIS` column in basis points.
fn this_total(out: &str) -> u64 {
    let mut lines = out.lines().skip_while(|l| !l.starts_with("%THIS"));
    let width = lines.next().and_then(|h| h.find("SAMPLES")).unwrap_or(0);
    lines
        .filter_map(|l| {
            let cell = l.get(..width)?.trim();
            let (a, b) = cell.split_once('.')?;
            Some(a.parse::<u64>().ok()? * 100 + b.parse::<u64>().ok()?)
        })
        .sum()
}

#[test]
fn source_rows_and_every_marker() {
    let p = markers_program();
    let dd = build(&p, None, &Options::default());
    let out = text(&dd, false);
    // Each mapping marker appears on the line that earns it.
    for marker in [
        "[split]",
        "[same-line-cols]",
        "[file-switch]",
        "[header]",
        "[many-insns]",
        "[backjump]",
    ] {
        assert!(out.contains(marker), "{marker} missing:\n{out}");
    }
    insta::assert_snapshot!(out);
}

#[test]
fn mixed_rows_keep_instruction_indexes_across_ld_imm64() {
    let p = markers_program();
    let dd = build(&p, None, &mixed());
    let out = text(&dd, false);
    insta::assert_snapshot!(out);
    // Every slot but the ld_imm64's upper half (slot 5) has exactly one
    // row, in index order, numbered by its index as bpftool does.
    let slots: Vec<usize> = dd
        .rows
        .iter()
        .filter_map(|r| match r.kind {
            RowKind::Instruction { slot } => Some(slot),
            _ => None,
        })
        .collect();
    let want: Vec<usize> = (0..p.xlated.len() / 8).filter(|&s| s != 5).collect();
    assert_eq!(slots, want);
    assert!(out.contains("     4: (18) r0 = 0x7\n"), "{out}");
    assert!(out.contains("     6: (07) r0 += 4\n"), "{out}");
}

/// The native code of `markers_program`: the main function's prologue and
/// epilogue under its first and last line records, a call under line 15,
/// an instruction without a record; a one-instruction subprogram.
fn native_image() -> NativeImage {
    let insn = |offset: u32, asm: &str, target: Option<&str>, line: Option<usize>| NativeInsn {
        offset,
        bytes: vec![0x90; 4].into(),
        asm: asm.into(),
        target: target.map(String::from),
        line,
    };
    NativeImage {
        arch: Arch::X86_64,
        functions: vec![
            JitFunction {
                name: "marker_main".into(),
                index: 0,
                address: Some(0x1000),
                length: 0x20,
                insns: vec![
                    insn(0, "nop dword ptr [rax+rax]", None, Some(0)),
                    insn(5, "push rbp", None, Some(0)),
                    insn(6, "mov rbp, rsp", None, Some(0)),
                    insn(9, "mov eax, 0x1", None, Some(1)),
                    insn(
                        14,
                        "call bpf_map_lookup_elem",
                        Some("bpf_map_lookup_elem"),
                        Some(3),
                    ),
                    insn(19, "add rax, 0x4", None, None),
                    insn(23, "leave", None, Some(9)),
                    insn(
                        24,
                        "jmp __x86_return_thunk",
                        Some("__x86_return_thunk"),
                        Some(9),
                    ),
                ],
            },
            JitFunction {
                name: "marker_sub".into(),
                index: 1,
                address: Some(0x2000),
                length: 1,
                insns: vec![insn(0, "ret", None, Some(4))],
            },
        ],
    }
}

fn sample(func: usize, offset: u64, samples: u64) -> NativeSample {
    NativeSample {
        samples,
        func_index: Some(func),
        offset: Some(offset),
        ..Default::default()
    }
}

#[test]
fn native_view_puts_instructions_under_their_lines() {
    let p = markers_program();
    let mut prof = profile();
    // 22 direct samples: all on instructions but one at an offset where
    // no instruction starts.
    prof.program.as_mut().unwrap().native = vec![
        sample(0, 14, 6),
        sample(0, 9, 5),
        sample(0, 24, 4),
        sample(0, 5, 3),
        sample(0, 19, 2),
        sample(1, 0, 1),
        sample(0, 7, 1),
    ];
    let opts = Options {
        native_view: true,
        native: Some(std::sync::Arc::new(native_image())),
        ..Default::default()
    };
    let dd = build(&p, Some(&prof), &opts);
    assert_eq!((dd.mode, dd.disasm.name()), (Mode::Native, "x86_64"));
    let out = text(&dd, false);
    assert_eq!(this_total(&out), 10_000, "{out}");
    insta::assert_snapshot!(out);
    // Children once, under the first source row of their line.
    assert_eq!(out.matches("-> bpf_map htab_map_hash").count(), 1);
    let rows: Vec<(&RowKind, u64)> = dd
        .rows
        .iter()
        .filter(|r| matches!(r.kind, RowKind::Native { .. }))
        .map(|r| (&r.kind, r.samples))
        .collect();
    assert_eq!(rows.len(), 9);
    assert_eq!(
        rows[4],
        (
            &RowKind::Native {
                func: 0,
                offset: 14
            },
            6
        )
    );
    // No native code: the source rows, in the native view.
    let none = build(
        &p,
        Some(&prof),
        &Options {
            native_view: true,
            ..Default::default()
        },
    );
    assert_eq!((none.mode, none.disasm), (Mode::Native, Disasm::Internal));
    assert!(none
        .rows
        .iter()
        .all(|r| !matches!(r.kind, RowKind::Native { .. })));
    assert_eq!(this_total(&text(&none, false)), 10_000);
}

#[test]
fn profiled_source_view_with_children_and_other_rows() {
    let p = markers_program();
    let prof = profile();
    let dd = build(&p, Some(&prof), &Options::default());
    let out = text(&dd, false);
    assert_eq!(this_total(&out), 10_000, "{out}");
    insta::assert_snapshot!(out);
    let collapsed = text(&dd, true);
    assert_eq!(this_total(&collapsed), 10_000, "{collapsed}");
    insta::assert_snapshot!("profiled_source_collapsed", collapsed);
}

/// The native view with interrupts and with the sampled instructions no
/// line record covers (which the other views list under the summary row):
/// each instruction holds only its own direct samples, listed once, and
/// the interrupts keep their row.
#[test]
fn native_view_keeps_interrupts_apart_and_lists_each_instruction_once() {
    let p = markers_program();
    let mut prof = profile();
    let q = prof.program.as_mut().unwrap();
    q.interrupt_samples = 5;
    q.direct_source_unmapped_samples = 3;
    q.native = vec![sample(0, 14, 6), sample(0, 5, 3), sample(0, 19, 2)];
    let unmapped = [NativeRow {
        ip: 0x1005,
        samples: 3,
        text: "  marker_main+0x5: push rbp".into(),
    }];
    let opts = Options {
        native_view: true,
        native: Some(std::sync::Arc::new(native_image())),
        ..Default::default()
    };
    let dd =
        Drilldown::build_with_native(data(&p, "marker_prog"), Some(&prof), &unmapped, &opts, None)
            .unwrap();
    let on = |offset: u32| {
        dd.rows
            .iter()
            .filter(|r| r.kind == RowKind::Native { func: 0, offset })
            .map(|r| r.samples)
            .collect::<Vec<u64>>()
    };
    assert_eq!(
        (on(14), on(5), on(19), on(0)),
        (vec![6], vec![3], vec![2], vec![0])
    );
    let out = text(&dd, false);
    assert_eq!(this_total(&out), 10_000, "{out}");
    assert!(
        !out.contains("eBPF samples without BTF/JIT source metadata"),
        "{out}"
    );
    assert!(!out.contains("marker_main+0x5"), "{out}");
    let irq: Vec<u64> = dd
        .rows
        .iter()
        .filter(|r| r.text == INTERRUPTS_ROW)
        .map(|r| r.samples)
        .collect();
    assert_eq!(irq, [5]);
    // Native rows hold direct samples only: no interrupt sample among them.
    let native: u64 = dd
        .rows
        .iter()
        .filter(|r| matches!(r.kind, RowKind::Native { .. }))
        .map(|r| r.samples)
        .sum();
    assert_eq!(native, 11);
}

/// Interrupts that arrived while the program ran get a row of their own,
/// not a place under a line, and `%THIS` still adds up.
#[test]
fn interrupts_have_a_row_of_their_own() {
    let p = markers_program();
    let mut prof = profile();
    if let Some(q) = prof.program.as_mut() {
        q.interrupt_samples = 5;
    }
    let dd = build(&p, Some(&prof), &Options::default());
    let rows: Vec<&Row> = dd
        .rows
        .iter()
        .filter(|r| r.text == INTERRUPTS_ROW)
        .collect();
    assert_eq!(rows.len(), 1);
    assert_eq!(
        (&rows[0].kind, rows[0].samples, rows[0].leaf, rows[0].parent),
        (&RowKind::Summary, 5, true, None)
    );
    // 5 of the 40 leaf samples (35 inclusive + 5): 12.50 %.
    assert_eq!(rows[0].bp, 1250);
    let out = text(&dd, false);
    assert_eq!(this_total(&out), 10_000, "{out}");
    assert!(out.contains(INTERRUPTS_ROW), "{out}");
    // Without interrupts, no such row.
    let dd = build(&p, Some(&profile()), &Options::default());
    assert!(dd.rows.iter().all(|r| r.text != INTERRUPTS_ROW));
}

/// The interrupts' row expands, as the helper rows do, to its entry points
/// and the lines they interrupted; the row keeps what the line limit left
/// out, and `%THIS` still adds up.
#[test]
fn interrupts_row_expands_to_entries_and_lines() {
    use crate::inspect::profile::InterruptRow;
    let p = markers_program();
    let mut prof = profile();
    if let Some(q) = prof.program.as_mut() {
        q.interrupt_samples = 5;
        q.interrupts = vec![
            InterruptRow {
                samples: 3,
                entry: "asm_sysvec_apic_timer_interrupt".into(),
                bpf_file: Some("/src/dir/x.bpf.c".into()),
                bpf_line: Some(107),
                bpf_source: Some("\t\tif (c)".into()),
                ..Default::default()
            },
            InterruptRow {
                samples: 1,
                entry: "asm_common_interrupt".into(),
                ..Default::default()
            },
        ];
    }
    let dd = build(&p, Some(&prof), &Options::default());
    let at = dd
        .rows
        .iter()
        .position(|r| r.text == INTERRUPTS_ROW)
        .unwrap();
    let row = &dd.rows[at];
    assert_eq!((row.samples, row.children.len()), (1, 2));
    let kids: Vec<(&str, u64, Option<usize>)> = row
        .children
        .iter()
        .map(|&c| {
            (
                dd.rows[c].text.as_str(),
                dd.rows[c].samples,
                dd.rows[c].parent,
            )
        })
        .collect();
    assert_eq!(
        kids,
        [
            (
                "asm_sysvec_apic_timer_interrupt at x.bpf.c:107: if (c)",
                3,
                Some(at)
            ),
            ("asm_common_interrupt at -", 1, Some(at)),
        ]
    );
    let out = text(&dd, false);
    assert_eq!(this_total(&out), 10_000, "{out}");
    assert!(
        out.contains("asm_sysvec_apic_timer_interrupt at x.bpf.c:107"),
        "{out}"
    );
}

#[test]
fn exact_ip_children() {
    let p = markers_program();
    let prof = profile();
    let opts = Options {
        exact_ips: true,
        ..Default::default()
    };
    let dd = build(&p, Some(&prof), &opts);
    let out = text(&dd, false);
    assert_eq!(this_total(&out), 10_000, "{out}");
    insta::assert_snapshot!(out);
}

#[test]
fn mixed_children_once_and_samples_on_instructions() {
    let p = markers_program();
    let mut prof = profile();
    // One hotspot known only by its JIT address: range start + 0x18 is the
    // offset of slot 3.
    prof.program.as_mut().unwrap().hotspots[3] = DirectHotspot {
        instruction_offset: None,
        jited_address: Some(0x1000 + 0x18),
        ..direct(2, None, L15)
    };
    let mut opts = mixed();
    opts.call_names = Default::default();
    let dd = build(&p, Some(&prof), &opts);
    let out = text(&dd, false);
    assert_eq!(this_total(&out), 10_000, "{out}");
    // Line 12 appears twice (split) but its children only once: here none;
    // line 15's children appear once.
    assert_eq!(out.matches("-> bpf_map htab_map_hash").count(), 1);
    // A line's samples are its source row's, labelled as its total; its
    // instructions carry none (the native view has them by instruction).
    assert!(
        out.contains("22.86        8  prog.bpf.c:12: \tx = 1;  (line total)"),
        "{out}"
    );
    assert!(
        out.contains("\n                     1: (b7) r0 = 1\n"),
        "{out}"
    );
    insta::assert_snapshot!(out);
    let collapsed = text(&dd, true);
    assert_eq!(this_total(&collapsed), 10_000, "{collapsed}");
    insta::assert_snapshot!("mixed_collapsed", collapsed);
}

#[test]
fn source_limit_moves_cut_rows_to_other_rows() {
    let p = markers_program();
    let prof = profile();
    let opts = Options {
        source_limit: 4,
        ..Default::default()
    };
    let dd = build(&p, Some(&prof), &opts);
    let out = text(&dd, false);
    assert_eq!(this_total(&out), 10_000, "{out}");
    // The hottest rows stay (8, 7 and 4 samples, the helper row with its
    // source line); the idle first lines go.
    assert!(out.contains("22.86        8  prog.bpf.c:12:"), "{out}");
    assert!(out.contains("20.00        7  prog.bpf.c:20:"), "{out}");
    assert!(out.contains("-> bpf_map htab_map_hash (3 IPs)"), "{out}");
    assert!(!out.contains("int f(void *ctx)"), "{out}");
    assert!(!out.contains("Other eBPF source rows not shown"), "{out}");
    // The hottest rows stay (8, 7 and 4 samples, the helper row with its
    // source line); the idle first lines go.
    assert!(out.contains("22.86        8  prog.bpf.c:12:"), "{out}");
    assert!(out.contains("20.00        7  prog.bpf.c:20:"), "{out}");
    assert!(out.contains("-> bpf_map htab_map_hash (3 IPs)"), "{out}");
    assert!(!out.contains("int f(void *ctx)"), "{out}");
    assert!(!out.contains("Other eBPF source rows not shown"), "{out}");
    insta::assert_snapshot!(out);
}

#[test]
fn basis_points_total_exactly_10000_under_rounding() {
    assert_eq!(
        largest_remainder(10_000, &[1, 1, 1], 3),
        vec![3334, 3333, 3333]
    );
    assert_eq!(
        largest_remainder(10_000, &[6, 6, 372], 384),
        vec![156, 156, 9688]
    );
    assert_eq!(largest_remainder(10_000, &[0, 5, 0], 5), vec![0, 10_000, 0]);
    // Deterministic pseudo-random counts: the total is always exact and
    // every share is within one basis point of the true value.
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    for _ in 0..500 {
        let n = (seed % 40 + 1) as usize;
        let counts: Vec<u64> = (0..n)
            .map(|_| {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                seed % 1000
            })
            .collect();
        let total: u64 = counts.iter().sum();
        if total == 0 {
            continue;
        }
        let bp = largest_remainder(10_000, &counts, total);
        assert_eq!(bp.iter().sum::<u64>(), 10_000, "{counts:?}");
        for (c, b) in counts.iter().zip(&bp) {
            let exact = *c as f64 * 10_000.0 / total as f64;
            assert!((*b as f64 - exact).abs() < 1.0, "{c} {b} {exact}");
        }
    }
}

#[test]
fn broken_invariant_rounds_each_row() {
    let p = markers_program();
    let mut prof = profile();
    // The hotspots hold more than the program's direct count: no exact split.
    let q = prof.program.as_mut().unwrap();
    q.samples = 10;
    q.inclusive_samples = 23;
    let dd = build(&p, Some(&prof), &Options::default());
    let row = dd.rows.iter().find(|r| r.text.contains(":20:")).unwrap();
    // 7 / 23 = 30.43 %.
    assert_eq!(row.bp, 3043);
    assert!(!dd
        .rows
        .iter()
        .any(|r| r.kind == RowKind::Summary && r.text.starts_with("Other eBPF")));
}

#[test]
fn header_lines() {
    let p = markers_program();
    let mut prof = profile();
    let dd = build(&p, Some(&prof), &Options::default());
    // 0.7021 % split 22 : 12 : 1 of 35 -> 0.4413 + 0.2407 + 0.0201.
    assert_eq!(
        view::header_lines(&dd),
        ["CPU: 0.7021% total = 0.4413% eBPF + 0.2407% under eBPF + 0.0201% unaccounted (100% = one CPU)"]
    );
    prof.warnings = vec!["perf dropped 3 samples; CPU percentages are lower bounds".into()];
    prof.incomplete = true;
    let dd = build(&p, Some(&prof), &Options::default());
    assert_eq!(
        view::header_lines(&dd)[1],
        "Warning: perf dropped 3 samples; CPU percentages are lower bounds"
    );
    prof.warnings.clear();
    prof.program = None;
    let dd = build(&p, Some(&prof), &Options::default());
    assert_eq!(
        view::header_lines(&dd),
        [
            "CPU: 0.0000% total; no samples attributed to this program (100% = one CPU)",
            "Warning: profile capture is incomplete"
        ]
    );
    assert!(view::header_lines(&build(&p, None, &Options::default())).is_empty());
}

/// A program unloaded mid-capture: the CPU line is over the time it was
/// loaded, as the text report says it, and says why its instructions have
/// no text.
#[test]
fn unloaded_program_is_figured_while_loaded() {
    let p = markers_program();
    let mut prof = profile();
    let q = prof.program.as_mut().unwrap();
    q.loaded_cpu_percent = Some(41.2);
    q.unloaded_after = Some(2.31);
    let dd = build(&p, Some(&prof), &Options::default());
    let head = crate::render::drilldown::header_lines(&dd);
    assert_eq!(
        head,
        [
            "CPU: 41.2000% total while loaded = 25.8972% eBPF + 14.1257% under eBPF + 1.1771% unaccounted (100% = one CPU)",
            "Unloaded 2.31 s into the capture: its code was gone before it could be read, so its sampled instructions have no text.",
        ]
    );
}

#[test]
fn program_without_line_info_lists_instructions() {
    let p = program(&[(0x61, 0, None), (0xb7, 1, None), (0x95, 0, None)]);
    let dd = build(&p, None, &Options::default());
    assert_eq!(dd.mode, Mode::Source);
    insta::assert_snapshot!(text(&dd, false));
    let empty = program(&[]);
    let dd = build(&empty, None, &mixed());
    assert_eq!(
        text(&dd, false).lines().last(),
        Some("No source-line metadata or translated eBPF instructions available.")
    );
}

#[test]
fn folds_keep_hot_context_and_skip_single_rows() {
    // 12 lines in order; samples on the first and the last line.
    let keys: Vec<Key> = (1..=12u32)
        .map(|l| {
            let text: &'static str = Box::leak(format!("s{l};").into_boxed_str());
            Some((F, l, 1, text))
        })
        .collect();
    let slots: Vec<(u8, i32, Key)> = keys.iter().map(|k| (0xb7, 0, *k)).collect();
    let p = program(&slots);
    let prof = ProfileInput {
        program: Some(DrillProfile {
            samples: 3,
            inclusive_samples: 3,
            inclusive_cpu_percent: 0.06,
            hotspots: vec![direct(2, Some(0), keys[0]), direct(1, Some(88), keys[11])],
            ..Default::default()
        }),
        ..Default::default()
    };
    let dd = build(&p, Some(&prof), &Options::default());
    assert!(view::folds(&dd, 20).is_empty(), "fits the viewport");
    assert!(view::folds(&build(&p, None, &Options::default()), 5).is_empty());
    let folds = view::folds(&dd, 5);
    assert_eq!(folds, vec![3..9]);
    let mut state = ViewState {
        folds,
        ..Default::default()
    };
    let codes = |st: &ViewState| -> Vec<String> {
        view::lines(&dd, st).into_iter().map(|l| l.code).collect()
    };
    assert_eq!(
        codes(&state),
        [
            "prog.bpf.c:1: s1;",
            "prog.bpf.c:2: s2;",
            "prog.bpf.c:3: s3;",
            "...",
            "prog.bpf.c:10: s10;",
            "prog.bpf.c:11: s11;",
            "prog.bpf.c:12: s12;"
        ]
    );
    state.open_folds.insert(0);
    assert_eq!(codes(&state).len(), 12);
    // Hot rows 2 apart leave a 1-row gap, which is not worth a fold.
    let prof2 = ProfileInput {
        program: Some(DrillProfile {
            samples: 2,
            inclusive_samples: 2,
            hotspots: vec![direct(1, Some(0), keys[0]), direct(1, Some(48), keys[6])],
            ..Default::default()
        }),
        ..Default::default()
    };
    let dd2 = build(&p, Some(&prof2), &Options::default());
    assert_eq!(view::folds(&dd2, 5), vec![9..12]);
    let mixed_dd = build(&p, Some(&prof), &mixed());
    assert!(
        view::folds(&mixed_dd, 5).is_empty(),
        "no folds in mixed mode"
    );
}

#[test]
fn collapse_keeps_numbers_of_every_row() {
    let p = markers_program();
    let prof = profile();
    let dd = build(&p, Some(&prof), &Options::default());
    let parent = dd
        .parents()
        .find(|&i| dd.rows[i].text.contains(":15:"))
        .unwrap();
    let mut state = ViewState::textmode(&dd, true);
    let collapsed = view::lines(&dd, &state);
    let line = collapsed.iter().find(|l| l.row == Some(parent)).unwrap();
    // Own 2 + children 4 + 2 samples.
    assert_eq!(line.samples, "8");
    assert!(line.code.starts_with("+ "));
    state.expanded.insert(parent);
    let expanded = view::lines(&dd, &state);
    let line = expanded.iter().find(|l| l.row == Some(parent)).unwrap();
    assert_eq!(line.samples, "2");
    assert!(line.code.starts_with("- "));
    assert_eq!(expanded.len(), collapsed.len() + 2);
}

#[test]
fn devmode_context_rows_and_mismatch_marker() {
    let dir = std::env::temp_dir().join(format!("brr-dd-dev-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let src: Vec<String> = (1..=25)
        .map(|i| match i {
            10 => "int f(void *ctx)".to_string(),
            11 => "\ty = 2; /* a: b */".to_string(),
            12 => "\tx = 1; // edited".to_string(),
            15 => String::new(),
            21 => "}".to_string(),
            _ => format!("// line {i}"),
        })
        .collect();
    std::fs::write(dir.join("prog.bpf.c"), src.join("\n")).unwrap();
    let p = program(&[
        (0xbf, 0, L10),
        (0xb7, 1, L12A),
        (0x07, 2, L11),
        (0x95, 0, L20),
    ]);
    let mut tree = SourceTree::new(&dir);
    let dev = Devmode {
        tree: &mut tree,
        bare: false,
    };
    let dd = Drilldown::build(data(&p, "dev"), None, &Options::default(), Some(dev)).unwrap();
    // 12 -> 11 jumps back: no context until a line >= 12 (20 ends the
    // stretch without context) and no tail. Line 11's text contains ": "
    // and matches the file (no false mismatch, D8).
    insta::assert_snapshot!(text(&dd, false));
    // Forward steps get the lines in between, and the tail runs to `}`.
    let p2 = program(&[(0xbf, 0, L10), (0xb7, 1, L12A), (0x95, 0, L20)]);
    let mut tree = SourceTree::new(&dir);
    let dev = Devmode {
        tree: &mut tree,
        bare: false,
    };
    let opts = Options {
        mixed: true,
        ..Default::default()
    };
    let dd = Drilldown::build(data(&p2, "dev"), None, &opts, Some(dev)).unwrap();
    insta::assert_snapshot!("devmode_mixed_context", text(&dd, false));
    let mut empty = SourceTree::new(dir.join("nothing-here"));
    let err = Drilldown::build(
        data(&p, "dev"),
        None,
        &Options::default(),
        Some(Devmode {
            tree: &mut empty,
            bare: true,
        }),
    )
    .unwrap_err();
    assert_eq!(err, NoDevmodeSource);
    assert_eq!(err.to_string(), DEVMODE_NOTHING);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn textmode_columns_are_padded() {
    let p = markers_program();
    let prof = profile();
    let dd = build(&p, Some(&prof), &Options::default());
    let out = textmode::inspect(&dd, false);
    let rows: Vec<&str> = out.lines().skip(2).collect();
    let width = rows[0].chars().count();
    assert!(rows.iter().all(|r| r.chars().count() == width));
    assert!(rows[0].starts_with("%THIS  SAMPLES  CODE"));
    // SAMPLES right-aligned, %THIS left-aligned.
    assert!(
        rows.iter().any(|r| r.starts_with("20.00        7  ")),
        "{out}"
    );
}

#[test]
fn child_row_texts() {
    let mut k = kernel(3, "memcmp", "kernel", 5, 0x5d, L15);
    assert_eq!(child_text(&k, false), "  -> kernel memcmp (5 IPs)");
    assert_eq!(child_text(&k, true), "  -> kernel memcmp+0x5d");
    k.ip_count = 1;
    k.row.module = Some("nf_tables".into());
    assert_eq!(child_text(&k, false), "  -> kernel memcmp [nf_tables]");
    k.row.symbol_offset = Some(0);
    assert_eq!(child_text(&k, true), "  -> kernel memcmp [nf_tables]");
    k.row.symbol = None;
    k.row.module = None;
    k.row.kind = "unknown";
    k.row.ip = 0xffffffffa0001234;
    assert_eq!(child_text(&k, true), "  -> unknown 0xffffffffa0001234");
}

/// A kernel row called from where no line record is (a program without
/// line info).
fn uncalled(samples: u64, sym: &str, kind: &'static str, ips: usize) -> KernelRow {
    KernelRow {
        row: KernelHotspot {
            samples,
            ip: 0xffff_0000,
            symbol: Some(sym.to_string()),
            kind,
            bpf_jited_address: Some(0x1010),
            ..Default::default()
        },
        ip_count: ips,
    }
}

#[test]
fn native_rows_name_the_sampled_instructions() {
    use super::native::{Arch, JitFunction, NativeImage, NativeInsn};
    use crate::model::profile::NativeSamples;
    let insn = |offset: u32, asm: &str| NativeInsn {
        offset,
        bytes: vec![0x90].into(),
        asm: asm.into(),
        target: None,
        line: None,
    };
    let code = NativeImage {
        arch: Arch::X86_64,
        functions: vec![JitFunction {
            name: "no_lines".into(),
            index: 0,
            address: Some(0x1000),
            length: 0x20,
            insns: vec![
                insn(0, "push rbp"),
                insn(0x4, "add rbx, 0x7"),
                insn(0x8, "imul rbx, 0x3"),
            ],
        }],
    };
    let s = |samples, ip: u64, function: Option<&str>| NativeSamples {
        samples,
        ip,
        func_index: Some(0),
        function: function.map(String::from),
        offset: Some(ip - 0x1000),
    };
    let samples = [
        s(5, 0x1008, None),
        s(2, 0x1004, None),
        s(1, 0x1006, Some("main_fn")),
    ];
    let rows = native_rows(&samples, Some(&code));
    let texts: Vec<&str> = rows.iter().map(|r| r.text.as_str()).collect();
    assert_eq!(
        texts,
        [
            "  no_lines+0x8: imul rbx, 0x3",
            "  no_lines+0x4: add rbx, 0x7",
            // An address between decoded instructions keeps its offset.
            "  no_lines+0x6",
        ]
    );
    assert_eq!((rows[0].ip, rows[0].samples), (0x1008, 5));
    // Without the code: the BTF name when there is one, else the offset.
    let bare: Vec<String> = native_rows(&samples, None)
        .into_iter()
        .map(|r| r.text)
        .collect();
    assert_eq!(bare, ["  +0x8", "  +0x4", "  main_fn+0x6"]);
}

#[test]
fn unmapped_summary_rows_expand_into_instructions_and_kernel_functions() {
    // Without line info: every sample lands on the two summary rows.
    let p = program(&[(0xb7, 0, None), (0x85, 5, None), (0x95, 0, None)]);
    let kernel = vec![
        uncalled(3, "read_tsc", "kernel", 2),
        uncalled(1, "bpf_ktime_get_ns", "bpf_helper", 1),
    ];
    let prof = ProfileInput {
        program: Some(DrillProfile {
            samples: 7,
            kernel_samples: 5,
            inclusive_samples: 12,
            inclusive_cpu_percent: 1.2,
            direct_source_unmapped_samples: 7,
            under_bpf_caller_source_unmapped_samples: 5,
            // One under-eBPF sample is in a row the line limit left out.
            under_bpf_function_samples_omitted_by_limit: 1,
            under_bpf_hotspot_samples_omitted_by_limit: 1,
            hotspots: vec![direct(7, None, None)],
            kernel_functions: kernel.clone(),
            kernel_ips: kernel,
            ..Default::default()
        }),
        line_limit: 2,
        ..Default::default()
    };
    let native = vec![
        NativeRow {
            ip: 0x1008,
            samples: 4,
            text: "  p+0x8: imul rbx, 0x3".into(),
        },
        NativeRow {
            ip: 0x1004,
            samples: 3,
            text: "  p+0x4: add rbx, 0x7".into(),
        },
    ];
    let opts = Options::default();
    let with = |native: &[NativeRow]| {
        Drilldown::build_with_native(data(&p, "marker_prog"), Some(&prof), native, &opts, None)
            .unwrap()
    };
    let dd = with(&native);
    let parents: Vec<&str> = dd.parents().map(|r| dd.rows[r].text.as_str()).collect();
    assert_eq!(
        parents,
        [
            "eBPF samples without BTF/JIT source metadata",
            "under-eBPF samples without BPF caller source metadata"
        ]
    );
    let out = text(&dd, false);
    assert_eq!(this_total(&out), 10_000, "{out}");
    insta::assert_snapshot!(out);
    // Collapsed, each summary row carries all its samples.
    let collapsed = text(&dd, true);
    assert_eq!(this_total(&collapsed), 10_000, "{collapsed}");
    assert!(
        collapsed.contains(" 7  + eBPF samples without"),
        "{collapsed}"
    );
    assert!(
        collapsed.contains(" 5  + under-eBPF samples without"),
        "{collapsed}"
    );

    // Rows that would count more than the summary row holds are not
    // listed under it.
    let mut too_many = native.clone();
    too_many[0].samples = 40;
    let dd = with(&too_many);
    assert_eq!(dd.parents().count(), 1);
    assert_eq!(this_total(&text(&dd, false)), 10_000);
}

#[test]
fn only_addresses_below_every_line_record_are_unmapped_instructions() {
    let mut p = markers_program();
    for (i, l) in p.lines.iter_mut().enumerate() {
        l.jited_addr = Some(0x1010 + 8 * i as u64);
    }
    let mut prof = profile();
    let q = prof.program.as_mut().unwrap();
    q.direct_source_unmapped_samples = 2;
    let row = |ip, samples| NativeRow {
        ip,
        samples,
        text: format!("  p+{:#x}", ip - 0x1000),
    };
    // The prologue before the first record, and an address under a record.
    let native = [row(0x1004, 2), row(0x1020, 9)];
    let dd = Drilldown::build_with_native(
        data(&p, "marker_prog"),
        Some(&prof),
        &native,
        &Options::default(),
        None,
    )
    .unwrap();
    let listed: Vec<&str> = dd
        .rows
        .iter()
        .filter(|r| r.text.starts_with("  p+"))
        .map(|r| r.text.as_str())
        .collect();
    assert_eq!(listed, ["  p+0x4"]);
}
