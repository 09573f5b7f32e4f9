//! The x86-64 BPF JIT's own instruction subset, decoded and written in the
//! same text as [`super::x86`]'s iced-x86 formatter, so that a profile's
//! annotation never pays iced-x86's per-process table setup. Anything
//! outside the subset is "not mine" (None) and goes to iced-x86, which
//! stays the reference the subset is tested against.

use std::fmt::Write as _;

const R64: [&str; 16] = [
    "rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi", "r8", "r9", "r10", "r11", "r12", "r13",
    "r14", "r15",
];
const R32: [&str; 16] = [
    "eax", "ecx", "edx", "ebx", "esp", "ebp", "esi", "edi", "r8d", "r9d", "r10d", "r11d", "r12d",
    "r13d", "r14d", "r15d",
];
const R16: [&str; 16] = [
    "ax", "cx", "dx", "bx", "sp", "bp", "si", "di", "r8w", "r9w", "r10w", "r11w", "r12w", "r13w",
    "r14w", "r15w",
];
const R8: [&str; 16] = [
    "al", "cl", "dl", "bl", "spl", "bpl", "sil", "dil", "r8b", "r9b", "r10b", "r11b", "r12b",
    "r13b", "r14b", "r15b",
];
/// Byte registers 4-7 without a REX prefix.
const R8_LEGACY: [&str; 4] = ["ah", "ch", "dh", "bh"];

const JCC: [&str; 16] = [
    "jo", "jno", "jb", "jae", "je", "jne", "jbe", "ja", "js", "jns", "jp", "jnp", "jl", "jge",
    "jle", "jg",
];
const ALU: [&str; 8] = ["add", "or", "adc", "sbb", "and", "sub", "xor", "cmp"];
/// `c1`/`d1`/`d3` by ModRM.reg; the JIT uses rol, ror, shl, shr and sar.
const SHIFT: [Option<&str>; 8] = [
    Some("rol"),
    Some("ror"),
    None,
    None,
    Some("shl"),
    Some("shr"),
    None,
    Some("sar"),
];
/// `f7` by ModRM.reg (`/1` is an undocumented alias of test).
const GROUP3: [Option<&str>; 8] = [
    Some("test"),
    None,
    Some("not"),
    Some("neg"),
    Some("mul"),
    Some("imul"),
    Some("div"),
    Some("idiv"),
];

/// One operand.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Operand {
    Reg(&'static str),
    /// `size` in bytes (0: the instruction has no access size, `lea`).
    Mem {
        size: u8,
        base: u8,
        index: Option<(u8, u8)>,
        disp: i64,
    },
    /// Sign-extended immediate, written signed.
    Imm(i64),
    /// A full 64-bit immediate (`movabs`), written unsigned.
    Imm64(u64),
    /// The implicit count of `shl r, 1`.
    One,
}

/// One instruction of the subset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Insn {
    len: u8,
    mnemonic: &'static str,
    lock: bool,
    ops: [Option<Operand>; 3],
    /// A direct branch's displacement from the next instruction.
    rel: Option<i64>,
}

impl Insn {
    pub(crate) fn length(&self) -> u32 {
        u32::from(self.len)
    }

    /// A direct call or jump's destination in bytes from the instruction's
    /// start.
    pub(crate) fn branch(&self) -> Option<i64> {
        self.rel.map(|r| r + i64::from(self.len))
    }

    /// Whether it returns, restores registers before a return or pads
    /// after one (what the roles read wherever it is).
    pub(crate) fn structural(&self) -> bool {
        matches!(self.mnemonic, "ret" | "leave" | "pop" | "int3")
    }

    /// The mnemonic with its prefix, and for a direct branch the space its
    /// destination follows.
    pub(crate) fn write_mnemonic(&self, out: &mut String) {
        if self.lock {
            out.push_str("lock ");
        }
        out.push_str(self.mnemonic);
        if self.rel.is_some() {
            out.push(' ');
        }
    }

    /// The whole text (a direct branch's ends where its destination goes).
    pub(crate) fn write(&self, out: &mut String) {
        self.write_mnemonic(out);
        for (i, op) in self.ops.iter().flatten().enumerate() {
            out.push_str(if i == 0 { " " } else { ", " });
            write_operand(*op, out);
        }
    }
}

fn hex(v: u64, out: &mut String) {
    let _ = write!(out, "{v:#x}");
}

fn signed(v: i64, out: &mut String) {
    if v < 0 {
        out.push('-');
    }
    hex(v.unsigned_abs(), out);
}

fn write_operand(op: Operand, out: &mut String) {
    match op {
        Operand::Reg(r) => out.push_str(r),
        Operand::Imm(v) => signed(v, out),
        Operand::Imm64(v) => hex(v, out),
        Operand::One => out.push_str("0x1"),
        Operand::Mem {
            size,
            base,
            index,
            disp,
        } => {
            out.push_str(match size {
                1 => "byte ptr [",
                2 => "word ptr [",
                4 => "dword ptr [",
                8 => "qword ptr [",
                _ => "[",
            });
            out.push_str(R64[usize::from(base & 15)]);
            if let Some((i, scale)) = index {
                out.push('+');
                out.push_str(R64[usize::from(i & 15)]);
                if scale > 1 {
                    out.push('*');
                    out.push(char::from(b'0' + scale));
                }
            }
            if disp != 0 {
                out.push(if disp < 0 { '-' } else { '+' });
                hex(disp.unsigned_abs(), out);
            }
            out.push(']');
        }
    }
}

/// Prefixes the subset allows before the opcode.
#[derive(Debug, Clone, Copy, Default)]
struct Prefixes {
    osize: bool,
    lock: bool,
    rep: bool,
    /// The REX byte, when there is one.
    rex: Option<u8>,
}

impl Prefixes {
    fn w(self) -> bool {
        self.rex.is_some_and(|r| r & 8 != 0)
    }
    fn r(self) -> u8 {
        self.rex.map_or(0, |r| (r & 4) << 1)
    }
    fn x(self) -> u8 {
        self.rex.map_or(0, |r| (r & 2) << 2)
    }
    fn b(self) -> u8 {
        self.rex.map_or(0, |r| (r & 1) << 3)
    }
    /// The operand size of an instruction whose default is 32 bits.
    fn size(self) -> u8 {
        if self.w() {
            8
        } else if self.osize {
            2
        } else {
            4
        }
    }
    fn any(self) -> bool {
        self.osize || self.lock || self.rep || self.rex.is_some()
    }
}

fn reg(size: u8, n: u8, rex: bool) -> &'static str {
    let n = usize::from(n & 15);
    match size {
        8 => R64[n],
        4 => R32[n],
        2 => R16[n],
        _ if !rex && (4..8).contains(&n) => R8_LEGACY[n - 4],
        _ => R8[n],
    }
}

/// A decoded ModRM (and SIB and displacement).
struct ModRm {
    /// ModRM.reg with REX.R.
    reg: u8,
    /// The register of a `mod == 3` operand, with REX.B.
    rm_reg: Option<u8>,
    base: u8,
    index: Option<(u8, u8)>,
    disp: i64,
    /// Bytes it takes from the ModRM byte on.
    len: usize,
}

impl ModRm {
    fn read(code: &[u8], p: Prefixes) -> Option<ModRm> {
        let m = *code.first()?;
        let (md, reg, rm) = (m >> 6, ((m >> 3) & 7) | p.r(), m & 7);
        if md == 3 {
            return Some(ModRm {
                reg,
                rm_reg: Some(rm | p.b()),
                base: 0,
                index: None,
                disp: 0,
                len: 1,
            });
        }
        let mut len = 1;
        let (base, index) = if rm == 4 {
            let sib = *code.get(1)?;
            len = 2;
            let index = ((sib >> 3) & 7) | p.x();
            if md == 0 && sib & 7 == 5 {
                // No base register: an absolute address.
                return None;
            }
            let index = (index != 4).then_some((index, 1u8 << (sib >> 6)));
            ((sib & 7) | p.b(), index)
        } else if md == 0 && rm == 5 {
            // RIP-relative.
            return None;
        } else {
            (rm | p.b(), None)
        };
        let disp = match md {
            1 => i64::from(i8::from_le_bytes([*code.get(len)?])),
            2 => i64::from(i32::from_le_bytes(code.get(len..len + 4)?.try_into().ok()?)),
            _ => 0,
        };
        len += match md {
            1 => 1,
            2 => 4,
            _ => 0,
        };
        Some(ModRm {
            reg,
            rm_reg: None,
            base,
            index,
            disp,
            len,
        })
    }

    /// The r/m operand, `size` bytes wide.
    fn rm(&self, size: u8, p: Prefixes) -> Operand {
        match self.rm_reg {
            Some(r) => Operand::Reg(reg(size, r, p.rex.is_some())),
            None => Operand::Mem {
                size,
                base: self.base,
                index: self.index,
                disp: self.disp,
            },
        }
    }

    fn reg(&self, size: u8, p: Prefixes) -> Operand {
        Operand::Reg(reg(size, self.reg, p.rex.is_some()))
    }

    fn is_mem(&self) -> bool {
        self.rm_reg.is_none()
    }
}

/// A little-endian immediate of `size` bytes, sign-extended.
fn imm(code: &[u8], size: u8) -> Option<i64> {
    Some(match size {
        1 => i64::from(i8::from_le_bytes([*code.first()?])),
        2 => i64::from(i16::from_le_bytes(code.get(..2)?.try_into().ok()?)),
        _ => i64::from(i32::from_le_bytes(code.get(..4)?.try_into().ok()?)),
    })
}

/// Decode the instruction at the start of `code` if it is one of the
/// subset; None for anything else (iced-x86 decodes it).
pub(crate) fn decode(code: &[u8]) -> Option<Insn> {
    let mut p = Prefixes::default();
    let mut at = 0;
    loop {
        match *code.get(at)? {
            0x66 if !p.osize => p.osize = true,
            0xf0 if !p.lock => p.lock = true,
            0xf3 if !p.rep => p.rep = true,
            _ => break,
        }
        at += 1;
    }
    if let b @ 0x40..=0x4f = *code.get(at)? {
        p.rex = Some(b);
        at += 1;
    }
    let op = *code.get(at)?;
    let rest = code.get(at + 1..)?;
    let (mut insn, used) = if op == 0x0f {
        two_byte(rest.get(1..)?, *rest.first()?, p).map(|(i, n)| (i, n + 1))?
    } else if op == 0xc4 && !p.any() {
        vex(rest)?
    } else {
        one_byte(rest, op, p)?
    };
    if p.lock != insn.lock || (p.rep && insn.mnemonic != "endbr64") {
        return None;
    }
    let len = at + 1 + used;
    insn.len = u8::try_from(len).ok()?;
    (len <= 15).then_some(insn)
}

/// The length [`decode`] gives the first instruction of `code` when it is
/// one of the subset's common plain forms: no prefix but REX, not a
/// branch, not one the roles read by its text. Found without building
/// operands, for the instructions of a large program whose text nobody
/// prints; None means "ask [`decode`]", never "not an instruction".
pub(crate) fn skim(code: &[u8]) -> Option<u32> {
    let (w, at) = match *code.first()? {
        b @ 0x40..=0x4f => (b & 8 != 0, 1),
        _ => (false, 0),
    };
    let op = *code.get(at)?;
    let rest = code.get(at + 1..)?;
    // The ModRM byte's reg field picks the form of these.
    let reg = || rest.first().map(|m| m >> 3 & 7);
    let used = match op {
        0x01 | 0x09 | 0x21 | 0x29 | 0x31 | 0x39 | 0x03 | 0x0b | 0x23 | 0x2b | 0x33 | 0x3b
        | 0x85 | 0x87 | 0x88 | 0x89 | 0x8b => modrm_len(rest)?,
        0x63 if w => modrm_len(rest)?,
        0x8d if rest.first()? >> 6 != 3 => modrm_len(rest)?,
        0x69 | 0x81 => modrm_len(rest)? + 4,
        0x6b | 0x83 => modrm_len(rest)? + 1,
        0xc6 if reg()? == 0 => modrm_len(rest)? + 1,
        0xc7 if reg()? == 0 => modrm_len(rest)? + 4,
        0xc1 if SHIFT[usize::from(reg()?)].is_some() => modrm_len(rest)? + 1,
        0xd1 | 0xd3 if SHIFT[usize::from(reg()?)].is_some() => modrm_len(rest)?,
        0xb8..=0xbf if w => 8,
        0xb8..=0xbf => 4,
        0x0f => match *rest.first()? {
            0xaf | 0xb6 | 0xb7 | 0xbe | 0xbf => 1 + modrm_len(rest.get(1..)?)?,
            0x1f if rest.get(1)? >> 3 & 7 == 0 => 1 + modrm_len(rest.get(1..)?)?,
            _ => return None,
        },
        _ => return None,
    };
    let len = at + 1 + used;
    (len <= 15 && len <= code.len()).then_some(len as u32)
}

/// The bytes of a ModRM byte and what it brings (SIB, displacement), for
/// the forms [`ModRm::read`] accepts.
fn modrm_len(code: &[u8]) -> Option<usize> {
    let m = *code.first()?;
    let (md, rm) = (m >> 6, m & 7);
    if md == 3 {
        return Some(1);
    }
    let sib = if rm == 4 {
        if md == 0 && code.get(1)? & 7 == 5 {
            return None;
        }
        1
    } else if md == 0 && rm == 5 {
        return None;
    } else {
        0
    };
    Some(1 + sib + [0, 1, 4][usize::from(md)])
}

fn insn(mnemonic: &'static str, ops: [Option<Operand>; 3]) -> Insn {
    Insn {
        len: 0,
        mnemonic,
        lock: false,
        ops,
        rel: None,
    }
}

fn branch(mnemonic: &'static str, rel: i64) -> Insn {
    Insn {
        rel: Some(rel),
        ..insn(mnemonic, [None, None, None])
    }
}

/// Two operands from a ModRM: `(r/m, reg)` or `(reg, r/m)`.
fn pair(
    code: &[u8],
    p: Prefixes,
    mnemonic: &'static str,
    size: u8,
    reg_first: bool,
) -> Option<(Insn, usize)> {
    let m = ModRm::read(code, p)?;
    let (rm, reg) = (m.rm(size, p), m.reg(size, p));
    let ops = if reg_first { [reg, rm] } else { [rm, reg] };
    Some((insn(mnemonic, [Some(ops[0]), Some(ops[1]), None]), m.len))
}

/// Opcodes without a 0f escape.
fn one_byte(code: &[u8], op: u8, p: Prefixes) -> Option<(Insn, usize)> {
    let size = p.size();
    let plain = !p.any();
    match op {
        0x01 | 0x09 | 0x21 | 0x29 | 0x31 | 0x39 | 0x03 | 0x0b | 0x23 | 0x2b | 0x33 | 0x3b => {
            alu(code, op, p)
        }
        0x05 | 0x0d | 0x25 | 0x2d | 0x35 | 0x3d | 0x81 | 0x83 => alu(code, op, p),
        0x50..=0x5f if !p.osize && !p.lock => {
            let name = if op < 0x58 { "push" } else { "pop" };
            let r = Operand::Reg(R64[usize::from((op & 7) | p.b())]);
            Some((insn(name, [Some(r), None, None]), 0))
        }
        0x63 if p.w() && !p.osize => {
            let m = ModRm::read(code, p)?;
            let ops = [Some(m.reg(8, p)), Some(m.rm(4, p)), None];
            Some((insn("movsxd", ops), m.len))
        }
        0x69 | 0x6b => {
            let m = ModRm::read(code, p)?;
            let width = if op == 0x6b { 1 } else { size.min(4) };
            let v = imm(code.get(m.len..)?, width)?;
            let (dst, src) = (m.reg(size, p), m.rm(size, p));
            // Intel's two-operand form when source and destination agree.
            let ops = if dst == src {
                [Some(dst), Some(Operand::Imm(v)), None]
            } else {
                [Some(dst), Some(src), Some(Operand::Imm(v))]
            };
            Some((insn("imul", ops), m.len + usize::from(width)))
        }
        0x70..=0x7f if plain => Some((branch(JCC[usize::from(op & 15)], imm(code, 1)?), 1)),
        0x85 => pair(code, p, "test", size, false),
        0x87 => pair(code, p, "xchg", size, false),
        0x88 if !p.osize => pair(code, p, "mov", 1, false),
        0x89 => pair(code, p, "mov", size, false),
        0x8b => pair(code, p, "mov", size, true),
        0x8d => {
            let m = ModRm::read(code, p)?;
            m.is_mem().then_some(())?;
            let ops = [Some(m.reg(size, p)), Some(m.rm(0, p)), None];
            Some((insn("lea", ops), m.len))
        }
        // `xchg eax, eax` is nop; the 16- and 64-bit forms are not.
        0x90 if p.b() == 0 && !p.lock && size == 4 => Some((insn("nop", [None; 3]), 0)),
        0x90 if p.b() == 0 && !p.lock => {
            let r = Some(Operand::Reg(reg(size, 0, false)));
            Some((insn("xchg", [r, r, None]), 0))
        }
        0x99 if !p.lock => {
            let name = match size {
                8 => "cqo",
                4 => "cdq",
                _ => "cwd",
            };
            Some((insn(name, [None; 3]), 0))
        }
        0xb8..=0xbf if !p.lock => {
            let r = Operand::Reg(reg(size, (op & 7) | p.b(), false));
            if p.w() {
                let v = u64::from_le_bytes(code.get(..8)?.try_into().ok()?);
                return Some((insn("mov", [Some(r), Some(Operand::Imm64(v)), None]), 8));
            }
            let v = imm(code, size)?;
            Some((
                insn("mov", [Some(r), Some(Operand::Imm(v)), None]),
                usize::from(size),
            ))
        }
        0xc1 | 0xd1 | 0xd3 => shift(code, op, p),
        0xc3 if plain => Some((insn("ret", [None; 3]), 0)),
        0xc9 if plain => Some((insn("leave", [None; 3]), 0)),
        0xcc if plain => Some((insn("int3", [None; 3]), 0)),
        0xc6 | 0xc7 => {
            let m = ModRm::read(code, p)?;
            let width = if op == 0xc6 { 1 } else { size };
            (m.reg & 7 == 0 && !(op == 0xc6 && p.osize)).then_some(())?;
            let v = imm(code.get(m.len..)?, width.min(4))?;
            let ops = [Some(m.rm(width, p)), Some(Operand::Imm(v)), None];
            Some((insn("mov", ops), m.len + usize::from(width.min(4))))
        }
        0xe8 | 0xe9 if plain => {
            let name = if op == 0xe8 { "call" } else { "jmp" };
            Some((branch(name, imm(code, 4)?), 4))
        }
        0xeb if plain => Some((branch("jmp", imm(code, 1)?), 1)),
        0xf7 | 0xff => group(code, op, p),
        _ => None,
    }
}

/// The ALU operations: `op r/m, reg`, `op reg, r/m`, `op rAX, imm` and the
/// `81`/`83` immediate group.
fn alu(code: &[u8], op: u8, p: Prefixes) -> Option<(Insn, usize)> {
    let size = p.size();
    match op {
        // add/or/and/sub/xor/cmp r/m, reg (locked when writing memory).
        0x01 | 0x09 | 0x21 | 0x29 | 0x31 | 0x39 => {
            let (mut i, n) = pair(code, p, ALU[usize::from(op >> 3)], size, false)?;
            let lockable = matches!(op, 0x01 | 0x09 | 0x21 | 0x31);
            i.lock = p.lock && lockable && matches!(i.ops[0], Some(Operand::Mem { .. }));
            Some((i, n))
        }
        0x03 | 0x0b | 0x23 | 0x2b | 0x33 | 0x3b => {
            pair(code, p, ALU[usize::from(op >> 3)], size, true)
        }
        // The same with rAX and an immediate.
        0x05 | 0x0d | 0x25 | 0x2d | 0x35 | 0x3d => {
            let width = size.min(4);
            let v = imm(code, width)?;
            let i = insn(
                ALU[usize::from(op >> 3)],
                [
                    Some(Operand::Reg(reg(size, 0, false))),
                    Some(Operand::Imm(v)),
                    None,
                ],
            );
            Some((i, usize::from(width)))
        }
        0x81 | 0x83 => {
            let m = ModRm::read(code, p)?;
            let width = if op == 0x83 { 1 } else { size.min(4) };
            let v = imm(code.get(m.len..)?, width)?;
            let ops = [Some(m.rm(size, p)), Some(Operand::Imm(v)), None];
            Some((
                insn(ALU[usize::from(m.reg & 7)], ops),
                m.len + usize::from(width),
            ))
        }
        _ => None,
    }
}

/// `f7` (test, not, neg, mul, imul, div, idiv) and `ff` (register calls
/// and jumps).
fn group(code: &[u8], op: u8, p: Prefixes) -> Option<(Insn, usize)> {
    let size = p.size();
    match op {
        0xf7 => {
            let m = ModRm::read(code, p)?;
            let name = GROUP3[usize::from(m.reg & 7)]?;
            if name == "test" {
                let v = imm(code.get(m.len..)?, size.min(4))?;
                let ops = [Some(m.rm(size, p)), Some(Operand::Imm(v)), None];
                return Some((insn(name, ops), m.len + usize::from(size.min(4))));
            }
            Some((insn(name, [Some(m.rm(size, p)), None, None]), m.len))
        }
        0xff if !p.osize => {
            let m = ModRm::read(code, p)?;
            let name = match m.reg & 7 {
                2 => "call",
                4 => "jmp",
                _ => return None,
            };
            (!m.is_mem()).then_some(())?;
            Some((insn(name, [Some(m.rm(8, p)), None, None]), m.len))
        }
        _ => None,
    }
}

/// `c1` (by an immediate), `d1` (by one), `d3` (by `cl`).
fn shift(code: &[u8], op: u8, p: Prefixes) -> Option<(Insn, usize)> {
    let m = ModRm::read(code, p)?;
    let name = SHIFT[usize::from(m.reg & 7)]?;
    let dst = Some(m.rm(p.size(), p));
    let (count, extra) = match op {
        0xc1 => (Operand::Imm(imm(code.get(m.len..)?, 1)?), 1),
        0xd1 => (Operand::One, 0),
        _ => (Operand::Reg("cl"), 0),
    };
    Some((insn(name, [dst, Some(count), None]), m.len + extra))
}

/// Opcodes after a 0f escape; `code` follows the second opcode byte.
fn two_byte(code: &[u8], op: u8, p: Prefixes) -> Option<(Insn, usize)> {
    let size = p.size();
    let plain = !p.any();
    match op {
        0x1e if p.rep && !p.osize && !p.lock && p.rex.is_none() => {
            (*code.first()? == 0xfa).then_some(())?;
            Some((insn("endbr64", [None; 3]), 1))
        }
        0x1f if !p.lock => {
            let m = ModRm::read(code, p)?;
            (m.reg & 7 == 0).then_some(())?;
            Some((insn("nop", [Some(m.rm(size, p)), None, None]), m.len))
        }
        0x80..=0x8f if plain => Some((branch(JCC[usize::from(op & 15)], imm(code, 4)?), 4)),
        0xae if plain => {
            (*code.first()? == 0xe8).then_some(())?;
            Some((insn("lfence", [None; 3]), 1))
        }
        0xaf => pair(code, p, "imul", size, true),
        0xb1 | 0xc1 => {
            let name = if op == 0xb1 { "cmpxchg" } else { "xadd" };
            let (mut i, n) = pair(code, p, name, size, false)?;
            i.lock = p.lock && matches!(i.ops[0], Some(Operand::Mem { .. }));
            Some((i, n))
        }
        0xb6 | 0xb7 | 0xbe | 0xbf if !p.osize => {
            let m = ModRm::read(code, p)?;
            let name = if op < 0xb8 { "movzx" } else { "movsx" };
            let from = if op & 1 == 0 { 1 } else { 2 };
            let ops = [Some(m.reg(size, p)), Some(m.rm(from, p)), None];
            Some((insn(name, ops), m.len))
        }
        0xc8..=0xcf if !p.osize && !p.lock => {
            let r = Operand::Reg(reg(size, (op & 7) | p.b(), false));
            Some((insn("bswap", [Some(r), None, None]), 0))
        }
        _ => None,
    }
}

/// The three-byte VEX forms of BMI2's `shlx`/`sarx`/`shrx`; `code` follows
/// the c4 byte.
fn vex(code: &[u8]) -> Option<(Insn, usize)> {
    let (b1, b2, op) = (*code.first()?, *code.get(1)?, *code.get(2)?);
    if b1 & 0x1f != 2 || op != 0xf7 || b2 & 4 != 0 {
        return None;
    }
    let name = match b2 & 3 {
        1 => "shlx",
        2 => "sarx",
        3 => "shrx",
        _ => return None,
    };
    // R, X, B and vvvv are stored inverted.
    let rex = 0x40 | (!b1 >> 5 & 7) | if b2 & 0x80 != 0 { 8 } else { 0 };
    let p = Prefixes {
        rex: Some(rex),
        ..Prefixes::default()
    };
    let size = if p.w() { 8 } else { 4 };
    let m = ModRm::read(code.get(3..)?, p)?;
    let v = Operand::Reg(reg(size, !b2 >> 3 & 15, true));
    let ops = [Some(m.reg(size, p)), Some(m.rm(size, p)), Some(v)];
    Some((insn(name, ops), 3 + m.len))
}

#[cfg(test)]
mod tests {
    use super::super::x86;

    /// Displacement and immediate bytes the enumeration cycles through:
    /// zero, small, the sign boundaries and all ones of every width.
    const TAILS: [[u8; 10]; 8] = [
        [0; 10],
        [1, 0, 0, 0, 0, 0, 0, 0, 0, 0],
        [0x7f, 0xff, 0xff, 0x7f, 1, 2, 3, 4, 5, 6],
        [0x80, 0, 0, 0x80, 0, 0, 0, 0x80, 0, 0],
        [0xff; 10],
        [0x78, 0x56, 0x34, 0x12, 0xf0, 0xde, 0xbc, 0x9a, 0x11, 0x22],
        [0xf8, 0x7f, 0x80, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff],
        [0x08, 0x80, 0x00, 0x00, 0x00, 0x88, 0xff, 0xff, 0x00, 0x01],
    ];

    /// Whether the subset answers for `bytes`; if it does, it must answer
    /// as iced-x86 does.
    fn agrees(bytes: &[u8]) -> bool {
        skim_agrees(bytes);
        let Some(ours) = x86::subset(bytes) else {
            return false;
        };
        let theirs = x86::reference(bytes);
        assert_eq!(
            (ours.len, &ours.text, ours.dest),
            (theirs.len, &theirs.text, theirs.dest),
            "{bytes:02x?}"
        );
        true
    }

    /// Whatever [`super::skim`] measures, [`super::decode`] decodes to
    /// the same length, as a plain instruction (no destination, not read
    /// by the roles).
    fn skim_agrees(bytes: &[u8]) -> bool {
        let Some(len) = super::skim(bytes) else {
            return false;
        };
        let full = super::decode(bytes);
        let full = full.unwrap_or_else(|| panic!("{bytes:02x?} skimmed, not decoded"));
        assert_eq!(len, full.length(), "{bytes:02x?}");
        assert!(
            full.branch().is_none() && !full.structural(),
            "{bytes:02x?}"
        );
        true
    }

    fn case(head: &[u8], modrm: u8, sib: u8, tail: usize) -> Vec<u8> {
        let mut b = head.to_vec();
        b.push(modrm);
        b.push(sib);
        b.extend(TAILS[tail % TAILS.len()]);
        b
    }

    /// Every opcode after every prefix and REX combination the subset
    /// might accept, with every ModRM byte (SIB and tail bytes cycling).
    #[test]
    fn every_opcode_and_modrm_agrees_with_iced() {
        let prefixes: [&[u8]; 7] = [
            &[],
            &[0x66],
            &[0xf0],
            &[0xf3],
            &[0x66, 0xf0],
            &[0xf0, 0x66],
            &[0x66, 0x66],
        ];
        let rexes: Vec<Option<u8>> = std::iter::once(None)
            .chain((0x40..=0x4f).map(Some))
            .collect();
        let mut n = 0usize;
        let mut accepted = 0usize;
        for pre in prefixes {
            for rex in &rexes {
                for op in 0..=0x1ffu16 {
                    let mut head = pre.to_vec();
                    head.extend(*rex);
                    if op > 0xff {
                        head.extend([0x0f, op as u8]);
                    } else {
                        head.push(op as u8);
                    }
                    for modrm in 0..=255u8 {
                        n += 1;
                        let sib = (n * 37 % 256) as u8;
                        accepted += usize::from(agrees(&case(&head, modrm, sib, n)));
                    }
                }
            }
        }
        assert!(accepted > 100_000, "{accepted} of {n}");
    }

    /// Every SIB byte under every ModRM that has one, for each kind of
    /// memory operand the subset writes.
    #[test]
    fn every_sib_agrees_with_iced() {
        let heads: [&[u8]; 9] = [
            &[0x8b],
            &[0x88],
            &[0x0f, 0xb6],
            &[0x8d],
            &[0xc7],
            &[0x0f, 0x1f],
            &[0xf0, 0x0f, 0xc1],
            &[0x81],
            &[0x66, 0x89],
        ];
        let mut n = 0usize;
        for head in heads {
            for rex in [
                None,
                Some(0x41),
                Some(0x42),
                Some(0x43),
                Some(0x44),
                Some(0x48),
                Some(0x4f),
            ] {
                // REX goes right before the opcode (after 66 and f0).
                let split = head.iter().take_while(|b| matches!(b, 0x66 | 0xf0)).count();
                let mut h = head[..split].to_vec();
                h.extend(rex);
                h.extend(&head[split..]);
                for md in 0..3u8 {
                    for sib in 0..=255u8 {
                        n += 1;
                        assert!(agrees(&case(&h, md << 6 | 4, sib, n)) || sib & 7 == 5 && md == 0);
                    }
                }
            }
        }
    }

    /// BMI2's shifts under every VEX byte pair.
    #[test]
    fn every_vex_shift_agrees_with_iced() {
        let mut accepted = 0;
        for b1 in 0..=255u8 {
            for b2 in 0..=255u8 {
                let modrm = b1 ^ b2.rotate_left(3);
                let bytes = case(&[0xc4, b1, b2, 0xf7], modrm, b1, usize::from(b2));
                accepted += usize::from(agrees(&bytes));
            }
        }
        assert!(accepted > 700, "{accepted}");
    }

    /// The JIT's usual prologue, body and epilogue, and what the subset
    /// leaves to iced-x86.
    #[test]
    fn jit_sequences() {
        for bytes in [
            &[0xf3, 0x0f, 0x1e, 0xfa][..],
            &[0x0f, 0x1f, 0x44, 0x00, 0x00],
            &[0x66, 0x90],
            &[0x55],
            &[0x48, 0x89, 0xe5],
            &[0x48, 0x81, 0xec, 0x10, 0x00, 0x00, 0x00],
            &[0x41, 0x55],
            &[0x48, 0x6b, 0xdb, 0x1f],
            &[0xc4, 0xe2, 0xf9, 0xf7, 0xc7],
            &[0xf0, 0x48, 0x0f, 0xc1, 0x47, 0x08],
            &[0x66, 0xc1, 0xc0, 0x08],
            &[0x0f, 0xae, 0xe8],
            &[0x48, 0x99],
            &[0xe8, 0x10, 0x00, 0x00, 0x00],
            &[0x0f, 0x84, 0x10, 0x00, 0x00, 0x00],
            &[0xc9],
            &[0xc3],
            &[0xcc],
        ] {
            let mut b = bytes.to_vec();
            b.extend([0; 8]);
            assert!(agrees(&b), "{bytes:02x?} is in the subset");
        }
        // RIP-relative, absolute, segment-prefixed, truncated: iced's.
        for bytes in [
            &[0x48, 0x8b, 0x05, 0, 0, 0, 0][..],
            &[0x65, 0x48, 0x03, 0x04, 0x25, 0, 0, 0, 0],
            &[0x48, 0x8b, 0x04, 0x25, 0, 0, 0, 0],
            &[0x48, 0x8b],
            &[0x0f, 0x0b],
        ] {
            assert_eq!(x86::subset(bytes), None, "{bytes:02x?}");
            assert_eq!(super::skim(bytes), None, "{bytes:02x?}");
        }
    }

    /// The body's common forms are measured without their operands;
    /// what the roles read, branches and other prefixes are decoded.
    #[test]
    fn skim_measures_the_common_plain_forms_only() {
        for (bytes, len) in [
            (&[0x48, 0x89, 0xe5][..], 3),
            (&[0x48, 0x81, 0xec, 0x10, 0x00, 0x00, 0x00], 7),
            (&[0x48, 0x8b, 0x7c, 0x24, 0x08], 5),
            (&[0x48, 0x6b, 0xdb, 0x1f], 4),
            (&[0x0f, 0x1f, 0x44, 0x00, 0x00], 5),
            (&[0x48, 0x0f, 0xb6, 0x47, 0x10], 5),
            (&[0x49, 0xbb, 1, 2, 3, 4, 5, 6, 7, 8], 10),
            (&[0xc7, 0x45, 0xf8, 1, 0, 0, 0], 7),
            (&[0x48, 0xc1, 0xe7, 0x20], 4),
        ] {
            assert_eq!(super::skim(bytes), Some(len), "{bytes:02x?}");
            assert!(skim_agrees(bytes));
        }
        for bytes in [
            &[0xe8, 0x10, 0x00, 0x00, 0x00][..],
            &[0x0f, 0x84, 0x10, 0x00, 0x00, 0x00],
            &[0x75, 0xf5],
            &[0x41, 0x5d],
            &[0xc9],
            &[0xc3],
            &[0xcc],
            &[0x66, 0x89, 0x47, 0x08],
            &[0xf0, 0x48, 0x01, 0x47, 0x08],
            &[0x48, 0x8d, 0xc0],
            &[0x49, 0xbb, 1, 2, 3],
        ] {
            assert_eq!(super::skim(bytes), None, "{bytes:02x?}");
        }
    }
}
