//! What a program on `sys_enter`/`sys_exit` compares its events with,
//! read from its translated instructions: the syscall id (at offset 8 of
//! the context of a raw tracepoint, a tp_btf program and a classic
//! `raw_syscalls` tracepoint alike) against a constant, and the result of
//! `bpf_get_current_pid_tgid` against a constant or a global. A program
//! that keeps one syscall or one process still puts every syscall of the
//! host on the tracing slow path; the `syscall_slow_path` hint says so.
//!
//! The walk is straight-line: a register keeps what it holds across
//! jumps, and a value spilled to the stack is forgotten. It can miss a
//! comparison; what it reports was seen in the instructions.

use crate::inspect::insn::{self, Slot};
use crate::kernel::kallsyms::Kallsyms;
use crate::kernel::prog_reads;

/// `bpf_get_current_pid_tgid` (enum bpf_func_id): a dump shows a helper
/// call with this ID before the verifier fixed it up; after, with the
/// target's offset from `__bpf_call_base` (or 0 to a reader that may not
/// see kernel addresses).
const GET_CURRENT_PID_TGID: i32 = 14;
const PID_TGID_FN: &str = "bpf_get_current_pid_tgid";
/// The syscall id's offset in the context (`args[1]` of a raw tracepoint
/// and tp_btf program; `id` of `trace_event_raw_sys_enter` after the
/// 8-byte common header).
const SYSCALL_ID_OFF: i16 = 8;
/// `BPF_PSEUDO_MAP_VALUE`: an `ld_imm64` of an address inside a map's
/// value (a global variable); dumps put the map's ID in its imm.
const PSEUDO_MAP_VALUE: u8 = 2;

/// What a register holds, as far as the walk knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Val {
    Unknown,
    Ctx,
    SyscallId,
    PidTgid,
    /// The pid_tgid shifted left by 32: its low half on top.
    PidUp,
    Tgid,
    Pid,
    /// An address in map `id`'s value.
    MapValue(u32),
    /// A value loaded from map `id`'s value.
    Global(u32),
}

/// What a process comparison is held against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Against {
    Constant(i64),
    /// A global variable in map `id`.
    Global(u32),
}

/// The comparisons found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Narrowing {
    /// Constants the syscall id is compared with for equality.
    pub syscalls: Vec<i64>,
    /// (`"tgid"` or `"pid"`, what it is compared with).
    pub process: Vec<(&'static str, Against)>,
}

impl Narrowing {
    /// The facts in words, for a hint's evidence; empty when none.
    pub(crate) fn describe(&self) -> Vec<String> {
        let mut out = Vec::new();
        if let [one] = self.syscalls[..] {
            out.push(format!(
                "its instructions compare the syscall id with {one} and no other value"
            ));
        } else if !self.syscalls.is_empty() {
            let ids: Vec<String> = self.syscalls.iter().map(i64::to_string).collect();
            out.push(format!(
                "its instructions compare the syscall id with {} only",
                ids.join(", ")
            ));
        }
        for (what, against) in &self.process {
            out.push(match against {
                Against::Constant(v) => format!(
                    "its instructions compare the current {what} (bpf_get_current_pid_tgid) with {v}"
                ),
                Against::Global(map) => format!(
                    "its instructions compare the current {what} (bpf_get_current_pid_tgid) with a global of map {map}"
                ),
            });
        }
        out
    }

    /// The syscall the program keeps, when it compares the id with one.
    pub(crate) fn one_syscall(&self) -> Option<i64> {
        match self.syscalls[..] {
            [one] => Some(one),
            _ => None,
        }
    }

    #[cfg(test)]
    pub(crate) fn is_empty(&self) -> bool {
        self.syscalls.is_empty() && self.process.is_empty()
    }
}

/// The comparison an equality jump makes, if any: (register, what the
/// other side is).
fn compared(op: u8) -> Option<bool> {
    // BPF_JMP or BPF_JMP32 with BPF_JEQ (0x10) or BPF_JNE (0x50); the
    // source bit (0x08) says register (true) or constant.
    let class = op & 0x07;
    let code = op & 0xf0;
    (matches!(class, 0x05 | 0x06) && matches!(code, 0x10 | 0x50)).then_some(op & 0x08 != 0)
}

/// Which helper-call immediates are `bpf_get_current_pid_tgid`: its ID,
/// and its offset from `__bpf_call_base` when both addresses are known.
pub(crate) fn pid_tgid_calls([base, helper]: [Option<u64>; 2]) -> Vec<i32> {
    let mut out = vec![GET_CURRENT_PID_TGID];
    if let (Some(base), Some(f)) = (base, helper) {
        if let Ok(off) = i32::try_from(f.wrapping_sub(base) as i64) {
            out.push(off);
        }
    }
    out
}

/// [`pid_tgid_calls`] on this kernel: the two addresses from the start of
/// `/proc/kallsyms` (not the whole table).
pub(crate) fn pid_tgid_calls_here() -> Vec<i32> {
    pid_tgid_calls(Kallsyms::addresses_of(["__bpf_call_base", PID_TGID_FN]))
}

/// Read `xlated` (the kernel's dump of translated instructions); a helper
/// call whose immediate is in `pid_tgid` is `bpf_get_current_pid_tgid`.
pub(crate) fn narrowing(xlated: &[u8], pid_tgid: &[i32]) -> Narrowing {
    let mut regs = [Val::Unknown; 11];
    regs[1] = Val::Ctx;
    let mut out = Narrowing::default();
    let slots = insn::slots(xlated);
    let mut it = slots.iter();
    while let Some(&Slot {
        opcode: op,
        dst,
        src,
        off,
        imm,
        ..
    }) = it.next()
    {
        let (dst, src) = (usize::from(dst), usize::from(src));
        if dst > 10 || src > 10 {
            continue;
        }
        match op {
            // ld_imm64: a map value's address, or anything else.
            insn::LD_IMM64 => {
                regs[dst] = if src == usize::from(PSEUDO_MAP_VALUE) {
                    Val::MapValue(imm as u32)
                } else {
                    Val::Unknown
                };
                // Its second slot holds the address's upper half.
                it.next();
            }
            // ldx (any size) from memory.
            0x61 | 0x69 | 0x71 | 0x79 => {
                regs[dst] = match regs[src] {
                    Val::Ctx if off == SYSCALL_ID_OFF && op != 0x71 && op != 0x69 => Val::SyscallId,
                    Val::MapValue(map) => Val::Global(map),
                    _ => Val::Unknown,
                };
            }
            // mov64 reg, mov32 reg (a 32-bit copy keeps the low half).
            0xbf => regs[dst] = regs[src],
            0xbc => {
                regs[dst] = match regs[src] {
                    Val::PidTgid => Val::Pid,
                    v => v,
                }
            }
            // `>> 32` keeps the tgid; `<< 32` then `>> 32` the pid.
            0x67 if imm == 32 && regs[dst] == Val::PidTgid => regs[dst] = Val::PidUp,
            0x77 if imm == 32 && regs[dst] == Val::PidTgid => regs[dst] = Val::Tgid,
            0x77 if imm == 32 && regs[dst] == Val::PidUp => regs[dst] = Val::Pid,
            // A helper call: r0 is its result, r1-r5 are clobbered.
            0x85 => {
                regs[0] = if src == 0 && imm != 0 && pid_tgid.contains(&imm) {
                    Val::PidTgid
                } else {
                    Val::Unknown
                };
                regs[1..=5].fill(Val::Unknown);
            }
            _ => {
                if let Some(by_reg) = compared(op) {
                    let wide = op & 0x07 == 0x05;
                    note(&mut out, regs[dst], by_reg.then(|| regs[src]), imm, wide);
                } else if !matches!(op & 0x07, 0x02 | 0x03 | 0x05 | 0x06) {
                    // Any other ALU or load writes dst with something else.
                    regs[dst] = Val::Unknown;
                }
            }
        }
    }
    out.syscalls.sort_unstable();
    out.syscalls.dedup();
    out.process.dedup();
    out
}

/// Record an equality comparison of `left` with `right` (a register's
/// value) or the constant `imm`; `wide` for a 64-bit comparison.
fn note(out: &mut Narrowing, left: Val, right: Option<Val>, imm: i32, wide: bool) {
    let against = match right {
        None => Against::Constant(i64::from(imm)),
        Some(Val::Global(map)) => Against::Global(map),
        Some(_) => return,
    };
    match (left, against) {
        (Val::SyscallId, Against::Constant(v)) => out.syscalls.push(v),
        (Val::Tgid, a) => out.process.push(("tgid", a)),
        (Val::Pid, a) => out.process.push(("pid", a)),
        // A 32-bit comparison of the whole value looks at its low half.
        (Val::PidTgid, a) if !wide => out.process.push(("pid", a)),
        _ => {}
    }
}

/// The comparisons of program `id` (none when it cannot be read).
pub(crate) fn of_program(id: u32, pid_tgid: &[i32]) -> Narrowing {
    prog_reads::name_code_and_maps(id)
        .map(|(_, xlated, _)| narrowing(&xlated, pid_tgid))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes(hex: &str) -> Vec<u8> {
        hex.split_whitespace()
            .map(|b| u8::from_str_radix(b, 16).unwrap())
            .collect()
    }

    /// `if (ctx->args[1] != 257) return 0;` as clang -O2 builds it for a
    /// raw tracepoint and the kernel dumps it:
    /// r2 = *(u64 *)(r1 + 8); if r2 != 257 goto +2; r0 = 1; exit; r0 = 0; exit.
    #[test]
    fn one_syscall_from_the_context() {
        let x = bytes(
            "79 12 08 00 00 00 00 00  55 02 02 00 01 01 00 00
             b7 00 00 00 01 00 00 00  95 00 00 00 00 00 00 00
             b7 00 00 00 00 00 00 00  95 00 00 00 00 00 00 00",
        );
        let n = narrowing(&x, &[GET_CURRENT_PID_TGID]);
        assert_eq!(n.syscalls, vec![257]);
        assert_eq!(n.one_syscall(), Some(257));
        assert!(n.process.is_empty());
        assert_eq!(
            n.describe(),
            vec!["its instructions compare the syscall id with 257 and no other value"]
        );
    }

    /// `if (bpf_get_current_pid_tgid() >> 32 != target_tgid) return 0;`
    /// with `const volatile u32 target_tgid` in .rodata (map 42):
    /// call 14; r0 >>= 32; r1 = map_value(42)+0 (ld_imm64);
    /// r1 = *(u32 *)(r1 + 0); if r0 != r1 goto +1; ...
    #[test]
    fn one_process_against_a_global() {
        let x = bytes(
            "85 00 00 00 0e 00 00 00  77 00 00 00 20 00 00 00
             18 21 00 00 2a 00 00 00  00 00 00 00 00 00 00 00
             61 11 00 00 00 00 00 00  5d 10 01 00 00 00 00 00
             b7 00 00 00 00 00 00 00  95 00 00 00 00 00 00 00",
        );
        let n = narrowing(&x, &[GET_CURRENT_PID_TGID]);
        assert_eq!(n.process, vec![("tgid", Against::Global(42))]);
        assert!(n.syscalls.is_empty());
        assert!(
            n.describe()[0].ends_with("with a global of map 42"),
            "{n:?}"
        );
    }

    /// The low half compared by a 32-bit jump, against a constant; and a
    /// copy of the context keeps being the context.
    #[test]
    fn pid_by_jmp32_and_ctx_copies() {
        let x = bytes(
            "bf 16 00 00 00 00 00 00  85 00 00 00 0e 00 00 00
             56 00 03 00 d2 04 00 00  79 62 08 00 00 00 00 00
             15 02 01 00 00 00 00 00  15 02 00 00 01 00 00 00
             b7 00 00 00 00 00 00 00  95 00 00 00 00 00 00 00",
        );
        let n = narrowing(&x, &[GET_CURRENT_PID_TGID]);
        assert_eq!(n.process, vec![("pid", Against::Constant(1234))]);
        assert_eq!(n.syscalls, vec![0, 1]);
        assert_eq!(n.one_syscall(), None);
        assert!(n.describe()[0].ends_with("with 0, 1 only"), "{n:?}");
    }

    /// The kernel's own dump (`bpftool prog dump xlated id N file F`) of
    /// the program tests/cost_live.rs loads, on Linux 6.18 x86-64: the
    /// helper call carries bpf_get_current_pid_tgid's offset from
    /// `__bpf_call_base` (0x44b60 there), the tgid was 0x3772.
    #[test]
    fn a_dump_of_the_kernel_with_the_call_fixed_up() {
        let x = bytes(
            "79 16 08 00 00 00 00 00 85 00 00 00 60 4b 04 00 77 00 00 00 20 00 00 00
             55 00 02 00 72 37 00 00 55 06 01 00 01 01 00 00 b7 07 00 00 01 00 00 00
             b7 00 00 00 00 00 00 00 95 00 00 00 00 00 00 00",
        );
        let calls = pid_tgid_calls([Some(0xffffffff81300000), Some(0xffffffff81344b60)]);
        assert_eq!(calls, vec![14, 0x44b60]);
        let n = narrowing(&x, &calls);
        assert_eq!(n.syscalls, vec![257]);
        assert_eq!(n.process, vec![("tgid", Against::Constant(0x3772))]);
        // Without the symbols, the fixed-up call is not recognised.
        assert!(narrowing(&x, &[GET_CURRENT_PID_TGID]).process.is_empty());
    }

    /// A helper call clobbers r1-r5, so the context is not read after it;
    /// comparisons of other values are not reported.
    #[test]
    fn nothing_from_clobbered_or_other_values() {
        let x = bytes(
            "85 00 00 00 05 00 00 00  79 12 08 00 00 00 00 00
             55 02 00 00 01 01 00 00  55 00 00 00 07 00 00 00
             b7 00 00 00 00 00 00 00  95 00 00 00 00 00 00 00",
        );
        assert!(narrowing(&x, &[GET_CURRENT_PID_TGID]).is_empty());
        assert!(narrowing(&[0x79, 0x12], &[GET_CURRENT_PID_TGID]).is_empty());
    }
}
