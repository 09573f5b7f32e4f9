//! Hand encoder for 8-byte eBPF instructions (`struct bpf_insn`).

/// One eBPF instruction: opcode, dst/src register nibbles, offset, immediate.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub(crate) struct Insn {
    pub code: u8,
    /// dst_reg in the low nibble, src_reg in the high nibble.
    pub regs: u8,
    pub off: i16,
    pub imm: i32,
}

const _: () = assert!(std::mem::size_of::<Insn>() == 8);

impl Insn {
    pub(crate) const fn new(code: u8, dst: u8, src: u8, off: i16, imm: i32) -> Insn {
        Insn {
            code,
            regs: (dst & 0x0f) | ((src & 0x0f) << 4),
            off,
            imm,
        }
    }
    pub(crate) fn dst(&self) -> u8 {
        self.regs & 0x0f
    }
    pub(crate) fn src(&self) -> u8 {
        self.regs >> 4
    }
}

// Registers.
pub(crate) const R0: u8 = 0;
pub(crate) const R1: u8 = 1;
pub(crate) const R2: u8 = 2;
pub(crate) const R3: u8 = 3;
pub(crate) const R4: u8 = 4;
pub(crate) const R5: u8 = 5;
pub(crate) const R6: u8 = 6;
pub(crate) const R7: u8 = 7;
pub(crate) const R8: u8 = 8;
pub(crate) const R9: u8 = 9;
pub(crate) const R10: u8 = 10;

// Instruction classes.
pub(crate) const BPF_LD: u8 = 0x00;
pub(crate) const BPF_LDX: u8 = 0x01;
pub(crate) const BPF_ST: u8 = 0x02;
pub(crate) const BPF_STX: u8 = 0x03;
pub(crate) const BPF_ALU: u8 = 0x04;
pub(crate) const BPF_JMP: u8 = 0x05;
pub(crate) const BPF_JMP32: u8 = 0x06;
pub(crate) const BPF_ALU64: u8 = 0x07;

// Memory access sizes.
pub(crate) const BPF_W: u8 = 0x00;
pub(crate) const BPF_H: u8 = 0x08;
pub(crate) const BPF_B: u8 = 0x10;
pub(crate) const BPF_DW: u8 = 0x18;

// Modes.
pub(crate) const BPF_IMM: u8 = 0x00;
pub(crate) const BPF_MEM: u8 = 0x60;

// Source operand.
pub(crate) const BPF_K: u8 = 0x00;
pub(crate) const BPF_X: u8 = 0x08;

// ALU operations.
pub(crate) const BPF_ADD: u8 = 0x00;
pub(crate) const BPF_SUB: u8 = 0x10;
pub(crate) const BPF_MUL: u8 = 0x20;
pub(crate) const BPF_DIV: u8 = 0x30;
pub(crate) const BPF_OR: u8 = 0x40;
pub(crate) const BPF_AND: u8 = 0x50;
pub(crate) const BPF_LSH: u8 = 0x60;
pub(crate) const BPF_RSH: u8 = 0x70;
pub(crate) const BPF_NEG: u8 = 0x80;
pub(crate) const BPF_MOD: u8 = 0x90;
pub(crate) const BPF_XOR: u8 = 0xa0;
pub(crate) const BPF_MOV: u8 = 0xb0;
pub(crate) const BPF_ARSH: u8 = 0xc0;

// Jump operations.
pub(crate) const BPF_JA: u8 = 0x00;
pub(crate) const BPF_JEQ: u8 = 0x10;
pub(crate) const BPF_JGT: u8 = 0x20;
pub(crate) const BPF_JGE: u8 = 0x30;
pub(crate) const BPF_JSET: u8 = 0x40;
pub(crate) const BPF_JNE: u8 = 0x50;
pub(crate) const BPF_JSGT: u8 = 0x60;
pub(crate) const BPF_JSGE: u8 = 0x70;
pub(crate) const BPF_CALL: u8 = 0x80;
pub(crate) const BPF_EXIT: u8 = 0x90;
pub(crate) const BPF_JLT: u8 = 0xa0;
pub(crate) const BPF_JLE: u8 = 0xb0;
pub(crate) const BPF_JSLT: u8 = 0xc0;
pub(crate) const BPF_JSLE: u8 = 0xd0;

/// src_reg of a `ld_imm64` whose imm is a map fd.
pub(crate) const BPF_PSEUDO_MAP_FD: u8 = 1;
/// src_reg of a call whose imm is a relative insn offset (bpf-to-bpf call).
pub(crate) const BPF_PSEUDO_CALL: u8 = 1;

// Helper ids (enum bpf_func_id).
pub(crate) const BPF_FUNC_MAP_LOOKUP_ELEM: i32 = 1;
pub(crate) const BPF_FUNC_MAP_UPDATE_ELEM: i32 = 2;
pub(crate) const BPF_FUNC_KTIME_GET_NS: i32 = 5;
pub(crate) const BPF_FUNC_GET_PRANDOM_U32: i32 = 7;

/// `dst = imm` (64-bit, sign-extended).
pub(crate) const fn mov64_imm(dst: u8, imm: i32) -> Insn {
    Insn::new(BPF_ALU64 | BPF_MOV | BPF_K, dst, 0, 0, imm)
}

/// `dst = src` (64-bit).
pub(crate) const fn mov64_reg(dst: u8, src: u8) -> Insn {
    Insn::new(BPF_ALU64 | BPF_MOV | BPF_X, dst, src, 0, 0)
}

/// `dst op= imm` (64-bit), op one of `BPF_ADD`, `BPF_MUL`, ...
pub(crate) const fn alu64_imm(op: u8, dst: u8, imm: i32) -> Insn {
    Insn::new(BPF_ALU64 | op | BPF_K, dst, 0, 0, imm)
}

/// `dst op= src` (64-bit).
pub(crate) const fn alu64_reg(op: u8, dst: u8, src: u8) -> Insn {
    Insn::new(BPF_ALU64 | op | BPF_X, dst, src, 0, 0)
}

/// `dst op= imm` (32-bit, zero-extends the result).
pub(crate) const fn alu32_imm(op: u8, dst: u8, imm: i32) -> Insn {
    Insn::new(BPF_ALU | op | BPF_K, dst, 0, 0, imm)
}

/// `dst = imm64` (two instruction slots).
pub(crate) const fn ld_imm64(dst: u8, imm: u64) -> [Insn; 2] {
    ld_imm64_raw(dst, 0, imm)
}

/// `ld_imm64` with an explicit src_reg (pseudo) marker.
pub(crate) const fn ld_imm64_raw(dst: u8, src: u8, imm: u64) -> [Insn; 2] {
    [
        Insn::new(BPF_LD | BPF_DW | BPF_IMM, dst, src, 0, imm as u32 as i32),
        Insn::new(0, 0, 0, 0, (imm >> 32) as u32 as i32),
    ]
}

/// `dst = map` by fd (`BPF_PSEUDO_MAP_FD`); the kernel rewrites it to the
/// map address (and reports the map id in the translated image).
pub(crate) const fn ld_map_fd(dst: u8, map_fd: i32) -> [Insn; 2] {
    ld_imm64_raw(dst, BPF_PSEUDO_MAP_FD, map_fd as u32 as u64)
}

/// `dst = *(size *)(src + off)`.
pub(crate) const fn ldx_mem(size: u8, dst: u8, src: u8, off: i16) -> Insn {
    Insn::new(BPF_LDX | size | BPF_MEM, dst, src, off, 0)
}

/// `*(size *)(dst + off) = src`.
pub(crate) const fn stx_mem(size: u8, dst: u8, src: u8, off: i16) -> Insn {
    Insn::new(BPF_STX | size | BPF_MEM, dst, src, off, 0)
}

/// `*(size *)(dst + off) = imm`.
pub(crate) const fn st_mem(size: u8, dst: u8, off: i16, imm: i32) -> Insn {
    Insn::new(BPF_ST | size | BPF_MEM, dst, 0, off, imm)
}

/// `if dst op imm goto pc + 1 + off`.
pub(crate) const fn jmp_imm(op: u8, dst: u8, imm: i32, off: i16) -> Insn {
    Insn::new(BPF_JMP | op | BPF_K, dst, 0, off, imm)
}

/// `if dst op src goto pc + 1 + off`.
pub(crate) const fn jmp_reg(op: u8, dst: u8, src: u8, off: i16) -> Insn {
    Insn::new(BPF_JMP | op | BPF_X, dst, src, off, 0)
}

/// `goto pc + 1 + off`.
pub(crate) const fn ja(off: i16) -> Insn {
    Insn::new(BPF_JMP | BPF_JA, 0, 0, off, 0)
}

/// Call helper `id`.
pub(crate) const fn call_helper(id: i32) -> Insn {
    Insn::new(BPF_JMP | BPF_CALL, 0, 0, 0, id)
}

/// bpf-to-bpf call: target is `pc + 1 + rel`.
pub(crate) const fn call_pseudo(rel: i32) -> Insn {
    Insn::new(BPF_JMP | BPF_CALL, 0, BPF_PSEUDO_CALL, 0, rel)
}

/// `return r0`.
pub(crate) const fn exit() -> Insn {
    Insn::new(BPF_JMP | BPF_EXIT, 0, 0, 0, 0)
}

/// Serialize instructions to the little-endian byte layout the kernel uses.
pub(crate) fn to_bytes(insns: &[Insn]) -> Vec<u8> {
    let mut out = Vec::with_capacity(insns.len() * 8);
    for i in insns {
        out.push(i.code);
        out.push(i.regs);
        out.extend_from_slice(&i.off.to_le_bytes());
        out.extend_from_slice(&i.imm.to_le_bytes());
    }
    out
}
