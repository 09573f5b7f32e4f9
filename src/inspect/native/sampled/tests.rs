//! The sampled instructions decoded without a listing, held to what the
//! full listing (`build_with` and the roles over every instruction) says.

use std::cell::Cell;

use super::*;
use crate::inspect::native::build_with;
use crate::model::image::{JitCode, JitRange};
use crate::model::objects::Program;

const MAIN: u64 = 0xffff_ffff_c000_1000;
const SUB: u64 = 0xffff_ffff_c000_2000;
const HELPER: u64 = 0xffff_ffff_8120_0000;
const THUNK: u64 = 0xffff_ffff_8200_0040;

fn ksyms() -> Kallsyms {
    Kallsyms::parse(&format!(
        "{HELPER:x} T bpf_map_lookup_elem\n{THUNK:x} T __x86_return_thunk\n"
    ))
}

/// `e8`/`e9` rel32 at `at` of a function starting at `start` to `dest`.
fn branch(op: u8, start: u64, at: usize, dest: u64) -> Vec<u8> {
    let rel = dest.wrapping_sub(start + at as u64 + 5) as i32;
    let mut v = vec![op];
    v.extend(rel.to_le_bytes());
    v
}

/// A main function as the x86 JIT lays one out (patch site, frame, saved
/// registers, a helper call, a subprogram call, a loop, restores, a
/// return through the return thunk, padding) and a subprogram that
/// returns with `ret`.
fn image() -> ProgramImage {
    let mut main: Vec<u8> = vec![0x0f, 0x1f, 0x44, 0x00, 0x00]; // nop5
    main.extend([0x55, 0x48, 0x89, 0xe5]); // push rbp; mov rbp, rsp
    main.extend([0x48, 0x83, 0xec, 0x10, 0x53]); // sub rsp, 0x10; push rbx
    main.extend([0xbb, 1, 0, 0, 0]); // mov ebx, 0x1
    let at = main.len();
    main.extend(branch(0xe8, MAIN, at, HELPER + 0x10));
    let at = main.len();
    main.extend(branch(0xe8, MAIN, at, SUB));
    main.extend([0x48, 0x83, 0xc3, 0x01]); // add rbx, 0x1
    main.extend([0x75, 0xfa]); // jne back to the add
    main.extend([0x5b, 0xc9]); // pop rbx; leave
    let at = main.len();
    main.extend(branch(0xe9, MAIN, at, THUNK));
    main.extend([0xcc, 0xcc]); // int3; int3
    let sub = [0x5b, 0xc3, 0xcc];
    let mut bytes = main.clone();
    bytes.extend(sub);
    ProgramImage {
        program: Program {
            id: 42,
            name: "p".into(),
            ..Default::default()
        },
        jit_ranges: vec![range(MAIN, main.len(), 0), range(SUB, sub.len(), 1)],
        jited: JitCode::Bytes(bytes),
        ..Default::default()
    }
}

fn range(start: u64, len: usize, i: usize) -> JitRange {
    JitRange {
        start,
        len: len as u32,
        func_index: i,
        func_name: None,
    }
}

/// Both ways with text for the first `texts` of `at`: the results, and
/// whether each read the symbol table.
fn both(
    img: &ProgramImage,
    arch: Arch,
    at: &[At],
    texts: usize,
) -> [(Vec<Option<Sampled>>, bool); 2] {
    let read = Cell::new(false);
    let load = || {
        read.set(true);
        ksyms()
    };
    let symbols = Symbols::new(load);
    let fast = decode(img, Some(arch), None, &symbols, at, texts).unwrap();
    let fast_read = read.replace(false);
    let picked: Vec<(usize, u32)> = at
        .iter()
        .take(texts)
        .filter_map(|a| {
            let (f, o) = (*a)?;
            Some((f, u32::try_from(o).ok()?))
        })
        .collect();
    let full = build_with(img, Some(arch), None, &Symbols::new(load), &|f, o| {
        picked.contains(&(f, o))
    })
    .unwrap();
    // Past the first `texts` only the role is made.
    let mut listed = from_image(&full, at);
    for s in listed.iter_mut().skip(texts).flatten() {
        s.asm.clear();
    }
    [(fast, fast_read), (listed, read.get())]
}

/// Every byte of both functions (instruction starts and inside ones) and
/// some outside.
fn every_offset(img: &ProgramImage) -> Vec<At> {
    let mut at: Vec<At> = img
        .jit_ranges
        .iter()
        .flat_map(|r| (0..u64::from(r.len) + 2).map(move |o| Some((r.func_index, o))))
        .collect();
    at.extend([None, Some((7, 0))]);
    at
}

#[test]
fn the_same_text_roles_and_symbol_reads_as_a_listing() {
    let img = image();
    let at = every_offset(&img);
    for texts in 0..=at.len() {
        let [fast, full] = both(&img, Arch::X86_64, &at, texts);
        assert_eq!(fast, full, "text for the first {texts}");
    }
    // The roles the layout has, so that the comparison covers them all.
    let [(fast, _), _] = both(&img, Arch::X86_64, &at, at.len());
    let role = |f: usize, off: u64| {
        let i = at.iter().position(|a| *a == Some((f, off))).unwrap();
        fast[i].as_ref().map(|s| (s.asm.as_str(), s.role))
    };
    assert_eq!(role(0, 5), Some(("push rbp", Role::Prologue)));
    assert_eq!(
        role(0, 19),
        Some(("call bpf_map_lookup_elem+0x10", Role::Body))
    );
    assert_eq!(role(0, 24), Some(("call p_subprog1", Role::Body)));
    assert_eq!(role(0, 33), Some(("jne +0x1d", Role::Body)));
    assert_eq!(role(0, 36), Some(("leave", Role::Epilogue)));
    assert_eq!(role(0, 37), Some(("jmp __x86_return_thunk", Role::Thunk)));
    assert_eq!(role(0, 42), Some(("int3", Role::Epilogue)));
    assert_eq!(role(0, 20), None, "inside the call");
    assert_eq!(role(1, 1), Some(("ret", Role::Epilogue)));
}

#[test]
fn unwanted_rows_keep_their_roles_but_get_no_text() {
    let img = image();
    let at = [Some((0, 29)), Some((0, 33)), Some((0, 35)), Some((0, 37))];
    let [(fast, read), full] = both(&img, Arch::X86_64, &at, 1);
    assert_eq!((&fast, read), (&full.0, full.1));
    let rows: Vec<(&str, Role)> = fast
        .iter()
        .map(|s| s.as_ref().map(|s| (s.asm.as_str(), s.role)).unwrap())
        .collect();
    // Text for the first only, the others' roles as the listing has them;
    // no wanted row leaves the program, so no symbol table.
    assert_eq!(
        rows,
        [
            ("add rbx, 0x1", Role::Body),
            ("", Role::Body),
            ("", Role::Epilogue),
            ("", Role::Epilogue),
        ]
    );
    assert!(!read);
}

#[test]
fn no_code_says_why_as_a_listing_does() {
    let mut img = image();
    img.jited = JitCode::NotJited;
    let symbols = Symbols::new(ksyms);
    let fast = decode(&img, Some(Arch::X86_64), None, &symbols, &[], 0).map_err(|e| e.message());
    let full = build_with(&img, Some(Arch::X86_64), None, &symbols, &|_, _| true);
    assert_eq!(fast.unwrap_err(), full.unwrap_err().message());
    let none = decode(&image(), None, None, &symbols, &[], 0).map_err(|e| e.message());
    assert!(none.unwrap_err().contains("decodes x86_64 and aarch64"));
}

proptest::proptest! {
    /// Any code, function table, sampled offsets and text cut: the same
    /// as the listing says, on both architectures.
    #[test]
    fn any_code_as_a_listing_says(
        code in proptest::collection::vec(proptest::num::u8::ANY, 0..300),
        lens in proptest::collection::vec(0u32..200, 0..4),
        offsets in proptest::collection::vec((0usize..4, 0u64..220), 0..40),
        texts in 0usize..40,
    ) {
        let mut img = image();
        img.jit_ranges = lens
            .iter()
            .enumerate()
            .map(|(i, &len)| range(MAIN + 0x1000 * i as u64, len as usize, i))
            .collect();
        img.jited = JitCode::Bytes(code);
        let at: Vec<At> = offsets.into_iter().map(Some).collect();
        for arch in [Arch::X86_64, Arch::Aarch64] {
            let [fast, full] = both(&img, arch, &at, texts);
            proptest::prop_assert_eq!(fast, full);
        }
    }
}
