//! Fuzz the two native decoders (x86-64 with iced-x86, AArch64 with
//! yaxpeax-arm) and the JIT image listing built on them: any bytes decode
//! without panicking into instructions that tile the code exactly, a
//! branch inside the function names its offset, and every instruction of
//! the listing gets exactly one role; decoding with part of the text left
//! out finds the same instructions.
#![no_main]

use libfuzzer_sys::fuzz_target;

use brr::kallsyms::Kallsyms;
use brr::native::{self, Arch, Dest};
use brr::{JitCode, JitRange, LineRecord, ProgramImage};

/// Where the fuzzed image's two functions start.
const MAIN: u64 = 0xffff_ffff_c000_0000;
const SUB: u64 = 0xffff_ffff_c000_8000;

fuzz_target!(|data: &[u8]| {
    let Some((&selector, code)) = data.split_first() else {
        return;
    };
    for arch in [Arch::X86_64, Arch::Aarch64] {
        let decoded = arch.decode(code);
        let mut at = 0u32;
        for d in &decoded {
            assert_eq!(d.offset, at, "{arch:?}: instructions tile the code");
            assert!(d.len > 0 && !d.text.is_empty(), "{arch:?}: {d:?}");
            if let Some(Dest::Relative(_)) = d.dest {
                // The destination text is appended by the listing.
                assert!(d.text.ends_with(' '), "{arch:?}: {d:?}");
            }
            at += d.len;
        }
        assert_eq!(at as usize, code.len(), "{arch:?}: every byte decoded");
        // Leaving text out never moves a boundary or a destination.
        let some = arch.decode_some(code, &|off| off % 3 == 0);
        let shape = |v: &[native::Decoded]| -> Vec<(u32, u32, Option<Dest>)> {
            v.iter().map(|d| (d.offset, d.len, d.dest)).collect()
        };
        assert_eq!(shape(&some), shape(&decoded), "{arch:?}");
    }
    // The same bytes as a two-function image, cut where the selector says,
    // with line records spread over it.
    let cut = (usize::from(selector) * code.len() / 255).min(code.len());
    let ranges = vec![
        JitRange {
            start: MAIN,
            len: cut as u32,
            func_index: 0,
            func_name: Some("main".into()),
        },
        JitRange {
            start: SUB,
            len: (code.len() - cut) as u32,
            func_index: 1,
            func_name: None,
        },
    ];
    let lines = (0..4u64)
        .map(|i| LineRecord {
            insn_off: i as u32,
            line: Some(i as u32 + 1),
            jited_addr: Some(MAIN + i * u64::from(selector)),
            ..Default::default()
        })
        .collect();
    let image = ProgramImage {
        lines,
        jit_ranges: ranges,
        jited: JitCode::Bytes(code.to_vec()),
        ..Default::default()
    };
    let ksyms = || Kallsyms::parse("ffffffff81000000 T __x86_return_thunk\n");
    for arch in [Arch::X86_64, Arch::Aarch64] {
        let Ok(n) = native::build(&image, Some(arch), None, ksyms) else {
            panic!("{arch:?}: bytes always list");
        };
        assert_eq!(n.byte_count(), code.len() as u64);
        for f in &n.functions {
            let r = native::roles(arch, f);
            assert_eq!(r.len(), f.insns.len());
            for i in &f.insns {
                assert_eq!(
                    f.position(u64::from(i.offset)),
                    f.insns.iter().position(|x| x.offset == i.offset)
                );
                if let Some(t) = i.target.as_deref().filter(|t| t.starts_with('+')) {
                    assert!(i.asm.ends_with(t), "{i:?}");
                }
            }
        }
    }
});
