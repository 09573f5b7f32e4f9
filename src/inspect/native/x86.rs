//! x86-64 machine code to Intel-syntax text: the BPF JIT's own subset
//! by hand ([`super::x86_jit`]), anything else with `iced-x86`.

use iced_x86::{
    Decoder, DecoderOptions, Formatter, FormatterOperandOptions, FormatterOptionsProvider,
    Instruction, IntelFormatter, MemorySizeOptions, Mnemonic, NumberFormattingOptions, OpKind,
};

use super::{x86_jit, Decoded, Dest};

/// Full 64-bit immediates (kernel addresses the JIT loads) read unsigned,
/// as addresses do; the sign-extended small ones stay signed.
struct Unsigned64;

impl FormatterOptionsProvider for Unsigned64 {
    fn operand_options(
        &mut self,
        insn: &Instruction,
        _operand: u32,
        insn_operand: Option<u32>,
        _options: &mut FormatterOperandOptions,
        number: &mut NumberFormattingOptions<'_>,
    ) {
        if insn_operand.is_some_and(|op| insn.op_kind(op) == OpKind::Immediate64) {
            number.signed_number = false;
        }
    }
}

fn formatter() -> IntelFormatter {
    let mut f = IntelFormatter::with_options(None, Some(Box::new(Unsigned64)));
    let o = f.options_mut();
    // The notation of `objdump -M intel` and the kernel's own dumps.
    o.set_hex_prefix("0x");
    o.set_hex_suffix("");
    o.set_uppercase_hex(false);
    o.set_space_after_operand_separator(true);
    o.set_show_branch_size(false);
    o.set_branch_leading_zeros(false);
    o.set_small_hex_numbers_in_decimal(false);
    // `add rsi, -0x4` for the stack offsets BPF code is full of.
    o.set_signed_immediate_operands(true);
    o.set_leading_zeros(false);
    // Every memory operand says how wide the access is, as objdump does.
    o.set_memory_size_options(MemorySizeOptions::Always);
    f
}

/// Instructions from a function's start whose text is always made: more
/// than any JIT prologue holds.
const LEADING: usize = 32;

/// Whether the roles need the text of `insn` wherever it is: returns,
/// what restores registers before them, padding after them.
fn structural(insn: &Instruction) -> bool {
    matches!(
        insn.mnemonic(),
        Mnemonic::Ret | Mnemonic::Leave | Mnemonic::Pop | Mnemonic::Int3
    )
}

/// Decode one function's code; addresses count from its first byte, so a
/// direct branch's destination is its offset from the function's start.
pub fn decode(code: &[u8]) -> Vec<Decoded> {
    decode_some(code, &|_| true)
}

/// iced-x86's decoder and formatter, made only when an instruction falls
/// outside the JIT's own subset ([`super::x86_jit`]): their tables cost
/// more to set up than a profile's whole annotation.
struct Iced<'a> {
    code: &'a [u8],
    decoder: Decoder<'a>,
    formatter: IntelFormatter,
    insn: Instruction,
}

impl<'a> Iced<'a> {
    fn new(code: &'a [u8]) -> Iced<'a> {
        Iced {
            code,
            decoder: Decoder::with_ip(64, code, 0, DecoderOptions::NONE),
            formatter: formatter(),
            insn: Instruction::default(),
        }
    }

    /// The instruction at `offset`, with its text when `text` says so.
    fn decode_at(&mut self, offset: usize, text: &dyn Fn(&Instruction) -> bool) -> Decoded {
        let mut out = Decoded {
            offset: offset as u32,
            len: 1,
            text: String::new(),
            dest: None,
        };
        if self.decoder.set_position(offset).is_err() {
            out.text.push_str("(bad)");
            return out;
        }
        self.decoder.set_ip(offset as u64);
        self.decoder.decode_out(&mut self.insn);
        let insn = &self.insn;
        if insn.is_invalid() {
            // One byte, then decoding starts over at the next, as objdump
            // does: the decoder may have consumed more, hiding what follows.
            out.text.push_str("(bad)");
            return out;
        }
        out.len = (insn.len() as u32).max(1);
        if let Some(bytes) = self.code.get(offset..offset + insn.len()) {
            for _ in 0..unused_operand_size_prefixes(bytes) {
                out.text.push_str("data16 ");
            }
        }
        if is_direct_branch(insn) {
            self.formatter.format_mnemonic(insn, &mut out.text);
            out.text.push(' ');
            out.dest = Some(Dest::Relative(insn.near_branch_target() as i64));
        } else if text(insn) {
            self.formatter.format(insn, &mut out.text);
        }
        out
    }
}

/// The first instruction of `code` as iced-x86 decodes and writes it:
/// the reference the JIT subset is held to.
pub fn reference(code: &[u8]) -> Decoded {
    Iced::new(code).decode_at(0, &|_| true)
}

/// [`decode`] by iced-x86 alone, instruction by instruction: what the
/// subset's decoding of a whole function is held to.
pub fn reference_all(code: &[u8]) -> Vec<Decoded> {
    let mut iced = Iced::new(code);
    let mut out = Vec::new();
    let mut at = 0usize;
    while at < code.len() {
        let d = iced.decode_at(at, &|_| true);
        at += d.len as usize;
        out.push(d);
    }
    out
}

/// The first instruction of `code` if the JIT subset decodes it, written
/// as [`decode`] writes it.
pub fn subset(code: &[u8]) -> Option<Decoded> {
    let insn = x86_jit::decode(code)?;
    Some(subset_decoded(&insn, 0, true))
}

fn subset_decoded(insn: &x86_jit::Insn, offset: usize, text: bool) -> Decoded {
    let mut out = Decoded {
        offset: offset as u32,
        len: insn.length(),
        text: String::new(),
        dest: None,
    };
    if let Some(to) = insn.branch() {
        insn.write_mnemonic(&mut out.text);
        out.dest = Some(Dest::Relative(offset as i64 + to));
    } else if text || insn.structural() {
        insn.write(&mut out.text);
    }
    out
}

/// [`decode`], with text only for the instructions `wanted` picks by
/// offset, the first [`LEADING`], branches and [`structural`] ones.
pub(crate) fn decode_some(code: &[u8], wanted: &dyn Fn(u32) -> bool) -> Vec<Decoded> {
    // JIT code averages four to five bytes an instruction: one allocation,
    // not a chain of doublings that each touch fresh pages.
    let mut out = Vec::with_capacity(code.len() / 3 + 1);
    decode_each(code, wanted, &mut |d| out.push(d));
    out
}

/// [`decode_some`], each instruction handed to `each` in order rather
/// than collected: for a caller that keeps only a few.
pub(crate) fn decode_each(
    code: &[u8],
    wanted: &dyn Fn(u32) -> bool,
    each: &mut dyn FnMut(Decoded),
) {
    let mut iced: Option<Iced<'_>> = None;
    let mut at = 0usize;
    let mut n = 0usize;
    while let Some(rest) = code.get(at..).filter(|r| !r.is_empty()) {
        let text = n < LEADING || wanted(at as u32);
        // Most of a large program's instructions are plain and unprinted:
        // their length is all that is needed of them.
        let skimmed = (!text).then(|| x86_jit::skim(rest)).flatten();
        let d = match skimmed {
            Some(len) => Decoded {
                offset: at as u32,
                len,
                text: String::new(),
                dest: None,
            },
            None => match x86_jit::decode(rest) {
                Some(insn) => subset_decoded(&insn, at, text),
                None => iced
                    .get_or_insert_with(|| Iced::new(code))
                    .decode_at(at, &|i| text || structural(i)),
            },
        };
        at += d.len as usize;
        n += 1;
        each(d);
    }
}

/// Operand-size prefixes (0x66) before the one that sets the operand size,
/// which objdump writes as `data16` each and iced-x86 leaves out: 5.10's
/// JIT pads with the five-byte nop `66 66 66 66 90`, objdump's
/// `data16 data16 data16 xchg ax,ax`.
fn unused_operand_size_prefixes(bytes: &[u8]) -> usize {
    bytes
        .iter()
        .take_while(|b| {
            matches!(
                b,
                0x26 | 0x2e | 0x36 | 0x3e | 0x64 | 0x65 | 0x66 | 0x67 | 0xf0 | 0xf2 | 0xf3
            )
        })
        .filter(|&&b| b == 0x66)
        .count()
        .saturating_sub(1)
}

/// `call`, `jmp`, `jcc`, `loop`, `jrcxz`, `xbegin` with an immediate
/// destination (its only operand).
fn is_direct_branch(insn: &Instruction) -> bool {
    insn.op_count() == 1
        && matches!(
            insn.op0_kind(),
            OpKind::NearBranch16 | OpKind::NearBranch32 | OpKind::NearBranch64
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn boundaries_text_and_branches() {
        let code = [
            0x0f, 0x1f, 0x44, 0x00, 0x00, // nop dword ptr [rax+rax]
            0x48, 0x8b, 0x47, 0x08, // mov rax, [rdi+8]
            0x75, 0xf5, // jne 0x0 (back to the start)
            0xe8, 0x10, 0x00, 0x00, 0x00, // call +0x20
            0x48, 0xb8, 1, 0, 0, 0, 0, 0, 0, 0, // mov rax, 1 (movabs)
            0xff, 0xd0, // call rax
            0x48, 0x83, 0xc6, 0xfc, // add rsi, -0x4
            0xc3, // ret
        ];
        let d = decode(&code);
        let offs: Vec<(u32, u32)> = d.iter().map(|i| (i.offset, i.len)).collect();
        assert_eq!(
            offs,
            vec![
                (0, 5),
                (5, 4),
                (9, 2),
                (11, 5),
                (16, 10),
                (26, 2),
                (28, 4),
                (32, 1)
            ]
        );
        assert_eq!(d[0].text, "nop dword ptr [rax+rax]");
        assert_eq!(d[1].text, "mov rax, qword ptr [rdi+0x8]");
        // 5.10's five-byte nop, spelled as objdump spells it.
        let nop5 = decode(&[0x66, 0x66, 0x66, 0x66, 0x90, 0x66, 0x90]);
        let texts: Vec<&str> = nop5.iter().map(|i| i.text.as_str()).collect();
        assert_eq!(texts, ["data16 data16 data16 xchg ax, ax", "xchg ax, ax"]);
        let cs_nop = [0x66, 0x66, 0x2e, 0x0f, 0x1f, 0x84, 0, 0, 0, 0, 0];
        assert!(decode(&cs_nop)[0].text.starts_with("data16 nop word ptr"));
        assert_eq!(decode(&[0x66, 0x66, 0x90])[0].text, "data16 xchg ax, ax");
        assert_eq!(
            (d[2].text.as_str(), d[2].dest),
            ("jne ", Some(Dest::Relative(0)))
        );
        assert_eq!(
            (d[3].text.as_str(), d[3].dest),
            ("call ", Some(Dest::Relative(0x20)))
        );
        assert_eq!(d[4].text, "mov rax, 0x1");
        let addr = decode(&[0x48, 0xbf, 0, 0x18, 0x3e, 4, 0x81, 0x88, 0xff, 0xff]);
        assert_eq!(addr[0].text, "mov rdi, 0xffff8881043e1800", "an address");
        assert_eq!((d[5].text.as_str(), d[5].dest), ("call rax", None));
        assert_eq!(d[6].text, "add rsi, -0x4");
        assert_eq!(d[7].text, "ret");
    }

    #[test]
    fn unwanted_text_is_left_out_but_not_what_roles_read() {
        // 40 `add rbx, 0x1`, then `pop rbx; leave; ret; int3`.
        let mut code: Vec<u8> = [0x48, 0x83, 0xc3, 0x01].repeat(40);
        code.extend([0x5b, 0xc9, 0xc3, 0xcc]);
        let d = decode_some(&code, &|off| off == 36 * 4);
        let texts: Vec<&str> = d.iter().map(|i| i.text.as_str()).collect();
        assert!(texts[..LEADING].iter().all(|t| *t == "add rbx, 0x1"));
        assert_eq!(texts[LEADING], "");
        assert_eq!(texts[36], "add rbx, 0x1", "wanted");
        assert_eq!(&texts[40..], ["pop rbx", "leave", "ret", "int3"]);
        // Boundaries do not depend on the text.
        let all = decode(&code);
        let at = |v: &[Decoded]| v.iter().map(|i| (i.offset, i.len)).collect::<Vec<_>>();
        assert_eq!(at(&d), at(&all));
    }

    #[test]
    fn backward_calls_are_negative_and_bad_bytes_advance() {
        // call -0x100 from offset 0: destination 5 - 0x100.
        let d = decode(&[0xe8, 0x00, 0xff, 0xff, 0xff, 0x06, 0xc3]);
        assert_eq!(d[0].dest, Some(Dest::Relative(5 - 0x100)));
        // 0x06 (push es) does not exist in 64-bit mode.
        assert_eq!((d[1].offset, d[1].len, d[1].text.as_str()), (5, 1, "(bad)"));
        assert_eq!(d[2].text, "ret");
        // A truncated instruction at the end: one bad byte at a time.
        let d = decode(&[0x48, 0x8b]);
        assert_eq!(d.len(), 2);
        assert!(d.iter().all(|i| i.text == "(bad)" && i.len == 1));
        assert!(decode(&[]).is_empty());
    }
}
