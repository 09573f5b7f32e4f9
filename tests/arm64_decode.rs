//! brr's AArch64 decoding against LLVM: every instruction class the arm64
//! BPF JIT emits (arch/arm64/net/bpf_jit.h, bpf_jit_comp.c) is assembled by
//! `llvm-mc` at test time, and brr's listing of the bytes must read as
//! `llvm-objdump -d` prints them, up to spacing, number bases and the
//! branch notation (see `normalise`). Runs on any host: the decoder is
//! compiled everywhere.

// Test tooling: helpers outside #[test] functions fail the test by panicking.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::process::Command;

use brr::kallsyms::Kallsyms;
use brr::native::{self, Arch};
use brr::{JitCode, JitRange, ProgramImage};

/// What the JIT emits, one instruction per line, grouped as in its
/// headers: prologue/epilogue, moves, arithmetic, logic and shifts,
/// loads/stores of every size and addressing form, acquire/release,
/// exclusives and LSE atomics, branches, and the hints and barriers.
const SOURCE: &str = "
paciasp
bti c
bti j
bti jc
stp x29, x30, [sp, #-16]!
mov x29, sp
stp x19, x20, [sp, #-16]!
stp x27, x28, [sp, #16]
sub sp, sp, #64
add x9, sp, #32
sub x9, x29, #8
ldp x19, x20, [sp], #16
ldp x27, x28, [sp, #16]
autiasp
ret
mov x7, x1
mov w7, w1
movz x10, #0x1234, lsl #16
movk x10, #0x5678, lsl #32
movk x10, #0x9abc
movn x10, #0
movn w10, #0
movn x10, #0x7fff, lsl #32
mov w1, #16
add x1, x2, x3
add w1, w2, w3
sub x1, x2, x3
add x1, x2, #4095
sub w1, w2, #1
neg x1, x2
neg w1, w2
cmp x1, x2
cmp w1, #4
cmn x1, #4
subs x1, x2, x3
mul x1, x2, x3
mul w1, w2, w3
madd x1, x2, x3, x4
msub x1, x2, x3, x4
udiv x1, x2, x3
udiv w1, w2, w3
sdiv x1, x2, x3
sdiv w1, w2, w3
and x1, x2, x3
orr x1, x2, x3
eor w1, w2, w3
ands x1, x2, x3
tst x1, x2
mvn x1, x2
and x1, x2, #0xff
orr w1, w2, #0x1
eor x1, x2, #0xffff0000
ands w1, w2, #0x7
tst x1, #0x8
lsl x1, x2, #3
lsr x1, x2, #3
asr x1, x2, #3
lsl w1, w2, #31
lsr w1, w2, #1
asr w1, w2, #7
lsl x1, x2, x3
lsr x1, x2, x3
asr w1, w2, w3
uxtb w1, w2
uxth w1, w2
ubfx x1, x2, #0, #32
sxtb x1, w2
sxth x1, w2
sxtw x1, w2
sxtb w1, w2
rev16 w1, w2
rev32 x1, x2
rev x1, x2
rev w1, w2
ldr x1, [x2, #8]
ldr w1, [x2, #4]
ldrh w1, [x2, #2]
ldrb w1, [x2, #1]
str x1, [x2, #8]
str w1, [x2, #4]
strh w1, [x2, #2]
strb w1, [x2, #1]
ldr x1, [x2, x3]
ldr w1, [x2, x3]
ldrh w1, [x2, x3]
ldrb w1, [x2, x3]
str x1, [x2, x3]
str w1, [x2, x3]
strh w1, [x2, x3]
strb w1, [x2, x3]
ldur x1, [x2, #-8]
ldur w1, [x2, #-4]
stur x1, [x2, #-8]
sturb w1, [x2, #-1]
ldrsw x1, [x2, #8]
ldrsh x1, [x2, #2]
ldrsb x1, [x2, #1]
ldrsw x1, [x2, x3]
ldrsh x1, [x2, x3]
ldrsb x1, [x2, x3]
ldursw x1, [x2, #-4]
ldar x1, [x2]
ldar w1, [x2]
ldarh w1, [x2]
ldarb w1, [x2]
stlr x1, [x2]
stlr w1, [x2]
stlrh w1, [x2]
stlrb w1, [x2]
ldxr x1, [x2]
ldxr w1, [x2]
stxr w3, x1, [x2]
stlxr w3, x1, [x2]
stlxr w3, w1, [x2]
dmb ish
stadd x1, [x3]
stadd w1, [x3]
stclr x1, [x3]
stset w1, [x3]
steor x1, [x3]
ldadd x1, x2, [x3]
ldaddal x1, x2, [x3]
ldaddal w1, w2, [x3]
ldclral x1, x2, [x3]
ldsetal w1, w2, [x3]
ldeoral x1, x2, [x3]
swpal x1, x2, [x3]
swpal w1, w2, [x3]
casal x1, x2, [x3]
casal w1, w2, [x3]
b #16
bl #-64
b.eq #8
b.ne #8
b.hs #8
b.hi #8
b.ls #8
b.lo #8
b.ge #8
b.gt #8
b.le #8
b.lt #8
b.mi #8
cbz x1, #12
cbnz w1, #12
tbnz x1, #63, #16
tbz w1, #3, #16
blr x10
br x10
adr x9, #8
adr x9, #-16
mrs x10, tpidr_el1
mrs x10, tpidr_el2
mrs x10, sp_el0
sb
dsb nsh
isb
nop
brk #0x3e8
csel x1, x2, x3, eq
";

const MATTR: &str = "+lse,+v8.5a";

/// Whether llvm-mc and llvm-objdump run; without them the test skips,
/// unless BRR_REQUIRE_LIVE=1 (CI installs Debian's `llvm`).
fn llvm() -> bool {
    let ok = ["llvm-mc", "llvm-objdump"].iter().all(|t| {
        Command::new(t)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    });
    if !ok {
        if std::env::var("BRR_REQUIRE_LIVE").as_deref() == Ok("1") {
            panic!("BRR_REQUIRE_LIVE=1 but llvm-mc/llvm-objdump are not installed");
        }
        support::skip("llvm-mc/llvm-objdump not installed");
    }
    ok
}

fn run(cmd: &mut Command) -> String {
    let out = cmd.output().expect("run an llvm tool");
    assert!(
        out.status.success(),
        "{cmd:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Assemble `SOURCE`: the bytes (from `-show-encoding`) and llvm-objdump's
/// text of each instruction, in order.
fn assemble() -> (Vec<u8>, Vec<String>) {
    let dir = std::env::temp_dir().join(format!("brr-arm64-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (src, obj) = (dir.join("jit.s"), dir.join("jit.o"));
    std::fs::write(&src, SOURCE).unwrap();
    let mc = || {
        let mut c = Command::new("llvm-mc");
        c.args(["--triple=aarch64", &format!("-mattr={MATTR}")]);
        c
    };
    let listing = run(mc().arg("-show-encoding").arg(&src));
    let bytes: Vec<u8> = listing
        .lines()
        .filter_map(|l| l.split_once("encoding: [")?.1.split_once(']'))
        .flat_map(|(enc, _)| {
            enc.split(',')
                .map(|b| u8::from_str_radix(b.trim().trim_start_matches("0x"), 16).unwrap())
                .collect::<Vec<u8>>()
        })
        .collect();
    run(mc().args(["-filetype=obj", "-o"]).arg(&obj).arg(&src));
    let dump = run(Command::new("llvm-objdump")
        .args(["-d", "--no-show-raw-insn", &format!("--mattr={MATTR}")])
        .arg(&obj));
    std::fs::remove_dir_all(&dir).unwrap();
    let texts = dump
        .lines()
        .filter_map(|l| {
            let (addr, text) = l.split_once(':')?;
            u64::from_str_radix(addr.trim(), 16).ok()?;
            Some(text.trim().to_string())
        })
        .collect();
    (bytes, texts)
}

/// A number in either tool's notation: `#16`, `#0x10`, `#-0x10`, `0x174`
/// (llvm's branch destination), `+0x174` (brr's).
fn number(tok: &str) -> Option<i128> {
    let t = tok.trim_start_matches('#').trim_start_matches('+');
    let (neg, t) = match t.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, t),
    };
    let v = match t.strip_prefix("0x") {
        Some(h) => i128::from_str_radix(h, 16).ok()?,
        None => t.parse::<i128>().ok()?,
    };
    Some(if neg { -v } else { v })
}

/// One instruction's text with the differences between the two notations
/// taken out:
/// - case and runs of blanks (llvm prints `TPIDR_EL1`, tabs);
/// - number bases: every number becomes decimal;
/// - llvm's ` <$x.0+0x174>` symbol hints after branch destinations;
/// - `mov` immediates: llvm prints `#-1`, brr the register-width bit
///   pattern; both become the unsigned value at the register's width;
/// - `adr`: llvm prints the distance from the instruction, brr the offset
///   in the function; `at` (the instruction's offset) turns one into the
///   other.
fn normalise(text: &str, at: u64, llvm: bool) -> String {
    let text = text.split(" <").next().unwrap_or(text).to_ascii_lowercase();
    let words: Vec<&str> = text.split_whitespace().collect();
    let mnemonic = words.first().copied().unwrap_or("");
    let wide = words.get(1).is_some_and(|r| r.starts_with('x'));
    let mut out = Vec::new();
    for w in &words {
        let (core, comma) = match w.strip_suffix(',') {
            Some(c) => (c, ","),
            None => (*w, ""),
        };
        let (core, close) = match core.strip_suffix("]!") {
            Some(c) => (c, "]!"),
            None => match core.strip_suffix(']') {
                Some(c) => (c, "]"),
                None => (core, ""),
            },
        };
        let open = if core.starts_with('[') { "[" } else { "" };
        let core = core.trim_start_matches('[');
        let rendered = match number(core) {
            Some(v) if mnemonic == "mov" => {
                let v = if wide {
                    v as u64 as i128
                } else {
                    v as u32 as i128
                };
                v.to_string()
            }
            Some(v) if mnemonic == "adr" && llvm => (v + i128::from(at)).to_string(),
            Some(v) => v.to_string(),
            None => core.to_string(),
        };
        out.push(format!("{open}{rendered}{close}{comma}"));
    }
    out.join(" ")
}

#[test]
fn every_class_the_arm64_jit_emits_reads_as_llvm_objdump_prints_it() {
    if !llvm() {
        return;
    }
    let (bytes, expected) = assemble();
    let lines = SOURCE.lines().filter(|l| !l.trim().is_empty()).count();
    assert_eq!(bytes.len(), lines * 4, "one 4-byte encoding per line");
    assert_eq!(expected.len(), lines);
    // Through the same path as `dump --jited`: an image of one function.
    let image = ProgramImage {
        jit_ranges: vec![JitRange {
            start: 0xffff_8000_0800_0000,
            len: bytes.len() as u32,
            func_index: 0,
            func_name: Some("arm64_classes".into()),
        }],
        jited: JitCode::Bytes(bytes.clone()),
        ..Default::default()
    };
    let n = native::build(&image, Some(Arch::Aarch64), None, Kallsyms::default).unwrap();
    let insns = &n.functions[0].insns;
    assert_eq!(insns.len(), lines);
    let mut mismatches = Vec::new();
    for (i, (ours, theirs)) in insns.iter().zip(&expected).enumerate() {
        let at = (i * 4) as u64;
        assert_eq!(u64::from(ours.offset), at);
        assert_eq!(ours.bytes, bytes[i * 4..i * 4 + 4]);
        let (a, b) = (normalise(&ours.asm, at, false), normalise(theirs, at, true));
        if a != b {
            mismatches.push(format!("{at:#x}: brr `{}` llvm `{theirs}`", ours.asm));
        }
    }
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
    // In-function branches name their destination's offset.
    let b = &insns[SOURCE
        .lines()
        .filter(|l| !l.trim().is_empty())
        .position(|l| l == "b #16")
        .unwrap()];
    assert_eq!(
        b.target.as_deref(),
        Some(&*format!("+{:#x}", b.offset + 16))
    );
}

#[test]
fn normalising_keeps_real_differences() {
    assert_eq!(
        normalise("ldp\tx29, x30, [sp], #16", 0, true),
        normalise("ldp x29, x30, [sp], #0x10", 0, false)
    );
    assert_eq!(
        normalise("mov\tx1, #-1", 0, true),
        normalise("mov x1, #0xffffffffffffffff", 0, false)
    );
    assert_eq!(
        normalise("adr\tx9, #8", 0x20, true),
        normalise("adr x9, +0x28", 0x20, false)
    );
    assert_ne!(
        normalise("ldp\tx29, x30, [sp], #16", 0, true),
        normalise("ldp x29, x30, [sp], #0x20", 0, false)
    );
    assert_ne!(
        normalise("ldaddal x1, x2, [x3]", 0, true),
        normalise("ldadd x1, x2, [x3]", 0, false)
    );
    assert_ne!(
        normalise("b.hs 0x10", 0, true),
        normalise("b.lo +0x10", 0, false)
    );
}
