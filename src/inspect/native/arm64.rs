//! AArch64 machine code to text with `yaxpeax-arm`, in the notation of
//! `llvm-objdump` (preferred aliases such as `mov`, `cmp`, `lsl`, `stadd`).
//!
//! Compiled on every host: its tests decode byte sequences made by an
//! independent assembler.

use yaxpeax_arch::{Decoder, U8Reader};
use yaxpeax_arm::armv8::a64::{InstDecoder, Instruction, Opcode, Operand, SizeCode};

use super::{Decoded, Dest};

/// Names the decoder leaves generic, for the encodings the arm64 BPF JIT
/// emits: the BTI landing pads (hint #34/#36/#38) and the system registers
/// read for per-CPU data and the current task.
const RENAMES: &[(&str, &str)] = &[
    ("hint #0x22", "bti c"),
    ("hint #0x24", "bti j"),
    ("hint #0x26", "bti jc"),
    ("s3_0_c13_c0_4", "tpidr_el1"),
    ("s3_4_c13_c0_2", "tpidr_el2"),
    ("s3_0_c4_c1_0", "sp_el0"),
];

/// Decode one function's code (4-byte words; a trailing partial word is one
/// bad instruction). Offsets count from the function's start.
pub(crate) fn decode(code: &[u8]) -> Vec<Decoded> {
    let decoder = InstDecoder::default();
    let mut out: Vec<Decoded> = Vec::with_capacity(code.len() / 4 + 1);
    let mut insns: Vec<Option<Instruction>> = Vec::with_capacity(code.len() / 4 + 1);
    for (i, word) in code.chunks(4).enumerate() {
        let offset = (i * 4) as u32;
        let mut reader = U8Reader::new(word);
        let decoded = if word.len() == 4 {
            decoder.decode(&mut reader).ok()
        } else {
            None
        };
        let (text, dest) = match &decoded {
            Some(insn) => describe(insn, offset, &insns),
            None => ("(bad)".to_string(), None),
        };
        out.push(Decoded {
            offset,
            len: word.len() as u32,
            text,
            dest,
        });
        insns.push(decoded);
    }
    out
}

/// Text and destination of `insn` at `offset`; `before` holds the
/// instructions that precede it in the function.
fn describe(
    insn: &Instruction,
    offset: u32,
    before: &[Option<Instruction>],
) -> (String, Option<Dest>) {
    let mut text = insn.to_string();
    for (from, to) in RENAMES {
        if text.contains(from) {
            text = text.replace(from, to);
        }
    }
    let pc_offset = insn.operands.iter().find_map(|o| match o {
        Operand::PCOffset(d) => Some(*d),
        _ => None,
    });
    // The decoder prints a PC-relative operand as `$+0x10`; it is the last
    // operand, so everything before `$` is the rest of the instruction.
    if let (Some(delta), Some(cut)) = (pc_offset, text.find('$')) {
        let dest = i64::from(offset).wrapping_add(delta);
        text.truncate(cut);
        if is_direct_branch(insn.opcode) {
            return (text, Some(Dest::Relative(dest)));
        }
        // `adr`: an address, not a branch; shown as an offset in the function.
        text.push_str(&super::offset_text(dest));
        return (text, None);
    }
    let dest = match (insn.opcode, insn.operands[0]) {
        (Opcode::BLR | Opcode::BR, Operand::Register(SizeCode::X, reg)) => {
            loaded_value(reg, before).map(Dest::Absolute)
        }
        _ => None,
    };
    (text, dest)
}

fn is_direct_branch(op: Opcode) -> bool {
    matches!(
        op,
        Opcode::B
            | Opcode::BL
            | Opcode::Bcc(_)
            | Opcode::CBZ
            | Opcode::CBNZ
            | Opcode::TBZ
            | Opcode::TBNZ
    )
}

/// The value the run of `movz`/`movn`/`movk` right before a `blr`/`br`
/// wrote into `reg`: the JIT loads a helper's or kfunc's address that way
/// (`emit_a64_mov_i64`, `emit_addr_mov_i64`). None when the run does not
/// start with a `movz`/`movn` of `reg`.
fn loaded_value(reg: u16, before: &[Option<Instruction>]) -> Option<u64> {
    let mut run = Vec::new();
    for insn in before.iter().rev() {
        let insn = insn.as_ref()?;
        match (insn.opcode, insn.operands[0], insn.operands[1]) {
            (
                op @ (Opcode::MOVZ | Opcode::MOVN | Opcode::MOVK),
                Operand::Register(SizeCode::X, r),
                Operand::ImmShift(imm, shift),
            ) if r == reg && shift < 64 => {
                run.push((op, imm, shift));
                if op != Opcode::MOVK {
                    break;
                }
            }
            _ => return None,
        }
    }
    let mut steps = run.into_iter().rev();
    let (first, imm, shift) = steps.next()?;
    let mut value = match first {
        Opcode::MOVZ => u64::from(imm) << shift,
        Opcode::MOVN => !(u64::from(imm) << shift),
        _ => return None,
    };
    for (_, imm, shift) in steps {
        value = (value & !(0xffff_u64 << shift)) | (u64::from(imm) << shift);
    }
    Some(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(ws: &[u32]) -> Vec<u8> {
        ws.iter().flat_map(|w| w.to_le_bytes()).collect()
    }

    #[test]
    fn branches_are_function_relative() {
        // b.ne +8 at 0, bl -4 at 4, adr x1, +8 at 8 (encodings by llvm-mc).
        let d = decode(&words(&[0x54000041, 0x97ffffff, 0x10000041]));
        assert_eq!(
            (d[0].text.as_str(), d[0].dest),
            ("b.ne ", Some(Dest::Relative(8)))
        );
        assert_eq!(
            (d[1].text.as_str(), d[1].dest),
            ("bl ", Some(Dest::Relative(0)))
        );
        assert_eq!((d[2].text.as_str(), d[2].dest), ("adr x1, +0x10", None));
    }

    #[test]
    fn helper_address_loaded_before_blr() {
        // movn x10, #0x7fff, lsl #32; movk x10, #0x1234, lsl #16;
        // movk x10, #0x5678; blr x10 (encodings by llvm-mc)
        let code = words(&[0x92cfffea, 0xf2a2468a, 0xf28acf0a, 0xd63f0140]);
        let d = decode(&code);
        assert_eq!(d[3].text, "blr x10");
        assert_eq!(d[3].dest, Some(Dest::Absolute(0xffff_8000_1234_5678)));
        // A register loaded elsewhere is not known.
        let d = decode(&words(&[0xd63f0140]));
        assert_eq!(d[0].dest, None);
        let d = decode(&words(&[0xf28acf0a, 0xd63f0140]));
        assert_eq!(d[1].dest, None, "a movk alone does not say the value");
    }

    #[test]
    fn renames_and_bad_words() {
        // bti c, mrs x10, tpidr_el1, then a trailing half word.
        let mut code = words(&[0xd503245f, 0xd538d08a]);
        code.extend([0x1f, 0x20]);
        let d = decode(&code);
        assert_eq!(d[0].text, "bti c");
        assert_eq!(d[1].text, "mrs x10, tpidr_el1");
        assert_eq!((d[2].offset, d[2].len, d[2].text.as_str()), (8, 2, "(bad)"));
    }
}
