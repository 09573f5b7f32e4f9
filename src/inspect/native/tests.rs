//! Unit tests of the JIT image listing: function split, line records,
//! call and jump targets, and the reasons there is no code.

use super::*;
use crate::model::objects::Program;

const MAIN: u64 = 0xffff_ffff_c000_1000;
const SUB: u64 = 0xffff_ffff_c000_2000;
const HELPER: u64 = 0xffff_ffff_8120_0000;
const THUNK: u64 = 0xffff_ffff_8200_0040;

/// `call rel32` at `at` (function-relative) to `dest` (absolute), in a
/// function starting at `start`.
fn call(start: u64, at: u64, dest: u64) -> Vec<u8> {
    let rel = dest.wrapping_sub(start + at + 5) as i32;
    let mut v = vec![0xe8];
    v.extend(rel.to_le_bytes());
    v
}

fn line(addr: u64, insn: u32, ln: u32) -> LineRecord {
    LineRecord {
        insn_off: insn,
        file: Some("/src/p.c".into()),
        line: Some(ln),
        column: Some(1),
        source: Some(format!("line {ln}")),
        jited_addr: Some(addr),
    }
}

/// main: nop5; call helper; jne +0 (to 0); call sub; call thunk+0 via jmp;
/// sub: ret.
fn image() -> ProgramImage {
    let mut main = vec![0x0f, 0x1f, 0x44, 0x00, 0x00];
    main.extend(call(MAIN, 5, HELPER + 0x10));
    main.extend([0x75, 0xf4]); // jne -> offset 0 (at 10, len 2: 12 - 12)
    main.extend(call(MAIN, 12, SUB));
    let at = main.len() as u64;
    let rel = THUNK.wrapping_sub(MAIN + at + 5) as i32;
    main.push(0xe9);
    main.extend(rel.to_le_bytes());
    let sub = vec![0xc3];
    let mut bytes = main.clone();
    bytes.extend(&sub);
    ProgramImage {
        program: Program {
            id: 42,
            name: "p".into(),
            full_name: "p_full".into(),
            ..Default::default()
        },
        lines: vec![
            line(MAIN, 0, 10),
            // Produced no code: shares its address with the next record.
            line(MAIN + 5, 2, 11),
            line(MAIN + 5, 3, 12),
            line(MAIN + 12, 6, 13),
            line(SUB, 9, 20),
            line(0, 10, 21),
        ],
        jit_ranges: vec![
            JitRange {
                start: MAIN,
                len: main.len() as u32,
                func_index: 0,
                func_name: Some("main_func".into()),
            },
            JitRange {
                start: SUB,
                len: sub.len() as u32,
                func_index: 1,
                func_name: None,
            },
        ],
        jited: JitCode::Bytes(bytes),
        ..Default::default()
    }
}

fn ksyms() -> Kallsyms {
    Kallsyms::parse(&format!(
        "{HELPER:x} T bpf_map_lookup_elem\n{THUNK:x} T __x86_return_thunk\n"
    ))
}

#[test]
fn functions_targets_and_lines() {
    let img = image();
    let n = build(&img, Some(Arch::X86_64), Some(0), ksyms).unwrap();
    assert_eq!(n.functions.len(), 2);
    let main = &n.functions[0];
    assert_eq!(
        (main.name.as_str(), main.address, main.length),
        ("main_func", Some(MAIN), 22)
    );
    let rows: Vec<(u32, &str, Option<&str>, Option<usize>)> = main
        .insns
        .iter()
        .map(|i| (i.offset, i.asm.as_str(), i.target.as_deref(), i.line))
        .collect();
    assert_eq!(
        rows,
        vec![
            (0, "nop dword ptr [rax+rax]", None, Some(0)),
            (
                5,
                "call bpf_map_lookup_elem+0x10",
                Some("bpf_map_lookup_elem+0x10"),
                Some(2)
            ),
            (10, "jne +0x0", Some("+0x0"), Some(2)),
            (12, "call p_subprog1", Some("p_subprog1"), Some(3)),
            (
                17,
                "jmp __x86_return_thunk",
                Some("__x86_return_thunk"),
                Some(3)
            ),
        ]
    );
    assert_eq!(main.insns[1].bytes, call(MAIN, 5, HELPER + 0x10));
    let sub = &n.functions[1];
    assert_eq!((sub.name.as_str(), sub.address), ("p_subprog1", Some(SUB)));
    assert_eq!(
        (sub.insns[0].asm.as_str(), sub.insns[0].line),
        ("ret", Some(4))
    );
    assert_eq!((n.instruction_count(), n.byte_count()), (6, 23));
}

#[test]
fn kallsyms_is_read_only_for_code_that_leaves_the_program() {
    let mut img = image();
    // Only the subprogram's `ret`, and a main function that calls it.
    let main = call(MAIN, 0, SUB);
    let mut bytes = main.clone();
    bytes.push(0xc3);
    img.jit_ranges[0].len = main.len() as u32;
    img.jited = JitCode::Bytes(bytes);
    let n = build(&img, Some(Arch::X86_64), None, || {
        panic!("kallsyms read for a program that stays inside itself")
    })
    .unwrap();
    assert_eq!(
        n.functions[0].insns[0].target.as_deref(),
        Some("p_subprog1")
    );
    // Unknown kernel addresses read as themselves.
    let n = build(&image(), Some(Arch::X86_64), None, Kallsyms::default).unwrap();
    let t = n.functions[0].insns[1].target.clone();
    assert_eq!(t, Some(format!("{:#x}", HELPER + 0x10)));
}

#[test]
fn without_function_addresses_the_image_is_one_function() {
    let mut img = image();
    img.jit_ranges.clear();
    let n = build(&img, Some(Arch::X86_64), None, ksyms).unwrap();
    assert_eq!(n.functions.len(), 1);
    let f = &n.functions[0];
    assert_eq!((f.name.as_str(), f.address, f.length), ("p_full", None, 23));
    // Destinations stay relative to the function; no line is known.
    assert_eq!(f.insns[3].target.as_deref(), Some("+0x1000"));
    assert!(f.insns.iter().all(|i| i.line.is_none()));
}

#[test]
fn a_short_image_never_reads_past_its_end() {
    let mut img = image();
    img.jit_ranges[1].len = 100;
    img.jit_ranges.push(JitRange {
        start: SUB + 0x1000,
        len: 8,
        func_index: 2,
        func_name: Some("gone".into()),
    });
    let n = build(&img, Some(Arch::Aarch64), None, Kallsyms::default).unwrap();
    assert_eq!(n.functions[1].length, 1);
    assert_eq!(n.functions[2].length, 0);
    assert!(n.functions[2].insns.is_empty());
    assert_eq!(n.functions[1].insns[0].asm, "(bad)");
}

#[test]
fn reasons_without_code() {
    let mut img = image();
    let err =
        |img: &ProgramImage, arch, kptr| build(img, arch, kptr, Kallsyms::default).unwrap_err();
    let e = err(&img, None, None);
    assert_eq!(e.exit_code(), 3);
    assert!(e
        .message()
        .starts_with("dump --jited decodes x86_64 and aarch64"));
    img.jited = JitCode::Withheld;
    let e = err(&img, Some(Arch::X86_64), Some(2));
    assert_eq!(e.exit_code(), 2);
    assert_eq!(
        e.message(),
        "permission denied while trying to read the JIT code of program 42; \
         kernel.kptr_restrict=2 hides kernel addresses from everyone"
    );
    let e = err(&img, Some(Arch::X86_64), Some(1));
    assert_eq!(e.exit_code(), 2);
    assert!(e.message().contains("needs CAP_SYSLOG"), "{}", e.message());
    img.jited = JitCode::NotJited;
    let e = err(&img, Some(Arch::X86_64), None);
    assert_eq!(e.exit_code(), 3);
    assert!(e.message().starts_with("program 42 is not JIT-compiled"));
    img.jited = JitCode::Offloaded;
    assert_eq!(err(&img, Some(Arch::X86_64), None).exit_code(), 3);
    img.jited = JitCode::NotRead;
    assert_eq!(err(&img, Some(Arch::X86_64), None).exit_code(), 1);
}

#[test]
fn offsets_read_both_ways() {
    assert_eq!(offset_text(0x1a), "+0x1a");
    assert_eq!(offset_text(-0x20), "-0x20");
    assert_eq!(offset_text(0), "+0x0");
}

proptest::proptest! {
    /// Any bytes decode without a panic into instructions that tile the
    /// input: contiguous from 0, none empty, together exactly its length.
    #[test]
    fn decoders_tile_any_bytes(code in proptest::collection::vec(proptest::num::u8::ANY, 0..600)) {
        for arch in [Arch::X86_64, Arch::Aarch64] {
            let d = arch.decode(&code);
            let mut at = 0u32;
            for i in &d {
                proptest::prop_assert_eq!(i.offset, at);
                proptest::prop_assert!(i.len > 0);
                at += i.len;
            }
            proptest::prop_assert_eq!(at as usize, code.len());
        }
    }

    /// Any image and function table builds a listing without a panic, and
    /// no function reads past the image.
    #[test]
    fn any_image_lists(
        code in proptest::collection::vec(proptest::num::u8::ANY, 0..300),
        lens in proptest::collection::vec(0u32..200, 0..4),
    ) {
        let mut img = image();
        img.jit_ranges = lens
            .iter()
            .enumerate()
            .map(|(i, &len)| JitRange {
                start: MAIN + 0x1000 * i as u64,
                len,
                func_index: i,
                func_name: None,
            })
            .collect();
        img.jited = JitCode::Bytes(code.clone());
        for arch in [Arch::X86_64, Arch::Aarch64] {
            let n = build(&img, Some(arch), None, ksyms).unwrap();
            proptest::prop_assert!(n.byte_count() <= code.len() as u64);
        }
    }
}
