//! A program's native JIT code (`dump --jited`): every JITed function
//! decoded into machine instructions, each with the line record it falls
//! under and, for a call or jump, where it goes: an offset in the same
//! function, another function of the program, or a kernel symbol (helpers,
//! kfuncs, trampolines, mitigation thunks).

pub(crate) mod arm64;
pub(crate) mod roles;
pub(crate) mod sampled;
pub(crate) mod x86;
pub(crate) mod x86_jit;

use std::cell::{Cell, OnceCell};

use crate::error::{BrrError, Result};
use crate::kernel::kallsyms::Kallsyms;
use crate::model::image::{JitCode, JitRange, LineRecord, ProgramImage};
use crate::privilege::{self, CapSet, Operation};

/// An instruction set brr decodes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arch {
    X86_64,
    Aarch64,
}

impl Arch {
    /// The architecture of this host's BPF JIT (the kernel's, which brr
    /// shares); None where brr has no decoder.
    pub fn host() -> Option<Arch> {
        if cfg!(target_arch = "x86_64") {
            Some(Arch::X86_64)
        } else if cfg!(target_arch = "aarch64") {
            Some(Arch::Aarch64)
        } else {
            None
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Arch::X86_64 => "x86_64",
            Arch::Aarch64 => "aarch64",
        }
    }

    /// Decode one function's code.
    pub fn decode(self, code: &[u8]) -> Vec<Decoded> {
        self.decode_some(code, &|_| true)
    }

    /// Decode one function's code, with the text of the instructions
    /// `wanted` picks by offset and of those that say where the function
    /// starts and returns (its first instructions, calls, jumps, returns
    /// and what restores the caller's state); the others' text may be
    /// left empty. Formatting is most of the decoding cost.
    pub fn decode_some(self, code: &[u8], wanted: &dyn Fn(u32) -> bool) -> Vec<Decoded> {
        match self {
            Arch::X86_64 => x86::decode_some(code, wanted),
            // A fixed-width decoder that formats as it decodes.
            Arch::Aarch64 => arm64::decode(code),
        }
    }

    /// [`Arch::decode_some`], each instruction handed to `each` in order.
    pub(crate) fn decode_each(
        self,
        code: &[u8],
        wanted: &dyn Fn(u32) -> bool,
        each: &mut dyn FnMut(Decoded),
    ) {
        match self {
            Arch::X86_64 => x86::decode_each(code, wanted, each),
            Arch::Aarch64 => arm64::decode(code).into_iter().for_each(each),
        }
    }
}

/// One instruction as a decoder gives it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decoded {
    /// Bytes from the function's start.
    pub offset: u32,
    pub len: u32,
    /// The instruction; for a [`Dest::Relative`] branch the text stops
    /// where its destination operand goes.
    pub text: String,
    pub dest: Option<Dest>,
}

/// Where a call or jump goes, when the code says so.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dest {
    /// A direct branch: its destination in bytes from the function's start
    /// (outside `0..len` when it leaves the function).
    Relative(i64),
    /// A branch through a register the preceding instructions loaded with
    /// this address; the text is complete.
    Absolute(u64),
}

/// `+0x1a` / `-0x20`: an offset from a function's start.
pub(crate) fn offset_text(off: i64) -> String {
    if off < 0 {
        format!("-{:#x}", off.unsigned_abs())
    } else {
        format!("+{off:#x}")
    }
}

/// An instruction's bytes, held in place (x86-64 instructions have at most
/// 15, AArch64's 4): a program's listing has thousands of them.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct InsnBytes {
    len: u8,
    buf: [u8; 15],
}

impl InsnBytes {
    /// The first 15 bytes of `b` (no instruction is longer).
    pub fn new(b: &[u8]) -> InsnBytes {
        let mut buf = [0; 15];
        let len = b.len().min(buf.len());
        buf[..len].copy_from_slice(&b[..len]);
        InsnBytes {
            len: len as u8,
            buf,
        }
    }
}

impl std::ops::Deref for InsnBytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.buf[..usize::from(self.len)]
    }
}

impl std::fmt::Debug for InsnBytes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        (**self).fmt(f)
    }
}

impl From<Vec<u8>> for InsnBytes {
    fn from(b: Vec<u8>) -> InsnBytes {
        InsnBytes::new(&b)
    }
}

impl PartialEq<[u8]> for InsnBytes {
    fn eq(&self, other: &[u8]) -> bool {
        **self == *other
    }
}

impl PartialEq<Vec<u8>> for InsnBytes {
    fn eq(&self, other: &Vec<u8>) -> bool {
        **self == other[..]
    }
}

/// One native instruction of a JITed function.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NativeInsn {
    /// Bytes from the function's start.
    pub offset: u32,
    pub bytes: InsnBytes,
    /// The instruction, its destination named as in `target`.
    pub asm: String,
    /// Where a call or jump goes: `+0x1a` inside the same function, else
    /// a function of the program or a kernel symbol (`name+0x10` past its
    /// start), or the bare address when nothing is known there.
    pub target: Option<String>,
    /// The line record it falls under (an index into the image's `lines`):
    /// the one with the greatest JIT address at or below the instruction's.
    pub line: Option<usize>,
}

/// One JITed function: the main program or a BPF-to-BPF subprogram.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JitFunction {
    /// Its BTF name; without BTF, its kernel symbol (or the program's name).
    pub name: String,
    /// Its index in the kernel's `jited_ksyms` order (0 = the main program).
    pub index: usize,
    /// Its start; None when the kernel gave no function addresses.
    pub address: Option<u64>,
    pub length: u32,
    pub insns: Vec<NativeInsn>,
}

/// The decoded JIT image of one program, functions in `jited_ksyms` order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NativeImage {
    pub arch: Arch,
    pub functions: Vec<JitFunction>,
}

impl NativeImage {
    pub(crate) fn instruction_count(&self) -> usize {
        self.functions.iter().map(|f| f.insns.len()).sum()
    }

    pub fn byte_count(&self) -> u64 {
        self.functions.iter().map(|f| u64::from(f.length)).sum()
    }

    /// The function at `index` in `jited_ksyms` order.
    #[cfg(test)]
    pub(crate) fn function(&self, index: usize) -> Option<&JitFunction> {
        self.functions.iter().find(|f| f.index == index)
    }
}

impl JitFunction {
    /// The position of the instruction holding byte `offset`.
    pub fn position(&self, offset: u64) -> Option<usize> {
        let i = self
            .insns
            .partition_point(|n| u64::from(n.offset) <= offset)
            .checked_sub(1)?;
        let n = &self.insns[i];
        (offset < u64::from(n.offset) + n.bytes.len().max(1) as u64).then_some(i)
    }
}

/// Why an image has no native code to show, as brr's error.
fn unavailable(image: &ProgramImage, kptr_restrict: Option<u32>) -> BrrError {
    let id = image.program.id;
    match &image.jited {
        JitCode::Withheld if kptr_restrict == Some(2) => BrrError::Permission(format!(
            "permission denied while trying to read the JIT code of program {id}; \
             kernel.kptr_restrict=2 hides kernel addresses from everyone"
        )),
        JitCode::Withheld => BrrError::Permission(format!(
            "permission denied while trying to read the JIT code of program {id} \
             (the kernel hides kernel addresses from brr); {}",
            privilege::denial_hint(Operation::KernelAddresses, CapSet::current())
        )),
        JitCode::Offloaded => BrrError::Unsupported(format!(
            "program {id} is offloaded to a network device; its JIT code is the device's"
        )),
        JitCode::NotJited => BrrError::Unsupported(format!(
            "program {id} is not JIT-compiled (the kernel runs it in the interpreter, \
             net.core.bpf_jit_enable=0); there is no native code"
        )),
        JitCode::NotRead | JitCode::Bytes(_) => {
            BrrError::Failed(format!("the JIT code of program {id} was not read"))
        }
    }
}

/// Decode the image's native code for `arch` (the host's: None exits 3).
/// `kallsyms` is read only if a call or jump leaves the program.
pub fn build(
    image: &ProgramImage,
    arch: Option<Arch>,
    kptr_restrict: Option<u32>,
    kallsyms: impl FnOnce() -> Kallsyms,
) -> Result<NativeImage> {
    build_with(
        image,
        arch,
        kptr_restrict,
        &Symbols::new(kallsyms),
        &|_, _| true,
    )
}

/// The kernel symbol table, read at most once and only when a destination
/// first needs a name: it costs tens of milliseconds of kernel time, more
/// than reading and decoding a program's JIT code.
pub(crate) struct Symbols<F: FnOnce() -> Kallsyms> {
    table: OnceCell<Kallsyms>,
    load: Cell<Option<F>>,
}

impl<F: FnOnce() -> Kallsyms> Symbols<F> {
    pub(crate) fn new(load: F) -> Symbols<F> {
        Symbols {
            table: OnceCell::new(),
            load: Cell::new(Some(load)),
        }
    }

    pub(crate) fn get(&self) -> &Kallsyms {
        self.table
            .get_or_init(|| self.load.take().map_or_else(Kallsyms::default, |f| f()))
    }

    /// Whether the table has been read.
    pub(crate) fn is_read(&self) -> bool {
        self.table.get().is_some()
    }
}

/// [`build`] for the instructions `wanted` picks (by function index and
/// offset): only their calls and jumps that leave the program make
/// `symbols` read the symbol table; the others name a destination only
/// when the table has been read anyway, else show its address, and may
/// have no text unless [`roles`] needs it.
pub(crate) fn build_with(
    image: &ProgramImage,
    arch: Option<Arch>,
    kptr_restrict: Option<u32>,
    symbols: &Symbols<impl FnOnce() -> Kallsyms>,
    wanted: &dyn Fn(usize, u32) -> bool,
) -> Result<NativeImage> {
    let (arch, code) = code_of(image, arch, kptr_restrict)?;
    let parts = split(image, code);
    let decoded = decode_parts(arch, &parts, wanted);
    let empty = Kallsyms::default();
    let leaves = parts
        .iter()
        .zip(&decoded)
        .any(|(p, d)| p.wanted_leaves(d, &parts, wanted));
    let ksyms = symbols_for(leaves, symbols, &empty);
    let functions = parts
        .iter()
        .zip(decoded)
        .map(|(p, d)| p.function(d, &parts, &image.lines, ksyms))
        .collect();
    Ok(NativeImage { arch, functions })
}

/// The architecture and JIT code to decode, or why there are none.
fn code_of(
    image: &ProgramImage,
    arch: Option<Arch>,
    kptr_restrict: Option<u32>,
) -> Result<(Arch, &[u8])> {
    let Some(arch) = arch else {
        return Err(BrrError::Unsupported(format!(
            "dump --jited decodes x86_64 and aarch64 JIT code; this host is {}",
            std::env::consts::ARCH
        )));
    };
    match &image.jited {
        JitCode::Bytes(code) => Ok((arch, code)),
        _ => Err(unavailable(image, kptr_restrict)),
    }
}

/// Every function decoded, with the text `wanted` picks.
fn decode_parts(
    arch: Arch,
    parts: &[Part<'_>],
    wanted: &dyn Fn(usize, u32) -> bool,
) -> Vec<Vec<Decoded>> {
    parts
        .iter()
        .map(|p| arch.decode_some(p.code, &|off| wanted(p.index, off)))
        .collect()
}

/// The symbol table when a wanted call or jump leaves the program
/// (`leaves`) or it has been read anyway, else `empty`.
fn symbols_for<'a>(
    leaves: bool,
    symbols: &'a Symbols<impl FnOnce() -> Kallsyms>,
    empty: &'a Kallsyms,
) -> &'a Kallsyms {
    if leaves || symbols.is_read() {
        symbols.get()
    } else {
        empty
    }
}

/// One function's slice of the image.
struct Part<'a> {
    name: String,
    /// Its index in the kernel's `jited_ksyms` order.
    index: usize,
    start: Option<u64>,
    code: &'a [u8],
}

/// The image cut into its functions: `jited_ksyms` order, each as long as
/// its `jited_func_lens` entry. Without function addresses the whole image
/// is the main function.
fn split<'a>(image: &ProgramImage, code: &'a [u8]) -> Vec<Part<'a>> {
    if image.jit_ranges.is_empty() {
        return vec![Part {
            name: image.program.display_name().to_string(),
            index: 0,
            start: None,
            code,
        }];
    }
    let mut at = 0usize;
    image
        .jit_ranges
        .iter()
        .map(|r| {
            let from = at.min(code.len());
            at = at.saturating_add(r.len as usize);
            Part {
                name: function_name(image, r),
                index: r.func_index,
                start: Some(r.start),
                code: code.get(from..at.min(code.len())).unwrap_or_default(),
            }
        })
        .collect()
}

fn function_name(image: &ProgramImage, r: &JitRange) -> String {
    match &r.func_name {
        Some(n) => n.clone(),
        None if r.func_index == 0 => image.program.display_name().to_string(),
        None => format!("{}_subprog{}", image.program.name, r.func_index),
    }
}

impl Part<'_> {
    fn len(&self) -> u64 {
        self.code.len() as u64
    }

    /// Whether one of `insns` (this function's) that `wanted` picks calls
    /// or jumps out of the program.
    fn wanted_leaves<'d>(
        &self,
        insns: impl IntoIterator<Item = &'d Decoded>,
        parts: &[Part<'_>],
        wanted: &dyn Fn(usize, u32) -> bool,
    ) -> bool {
        insns.into_iter().any(|i| {
            wanted(self.index, i.offset)
                && i.dest.is_some_and(|t| self.absolute(t, parts).is_some())
        })
    }

    /// The destination as an address, when it leaves this function and the
    /// function's address is known.
    fn absolute(&self, dest: Dest, parts: &[Part<'_>]) -> Option<u64> {
        let abs = match dest {
            Dest::Relative(rel) if rel >= 0 && (rel as u64) < self.len() => return None,
            Dest::Relative(rel) => self.start?.wrapping_add(rel as u64),
            Dest::Absolute(a) => a,
        };
        // Calls into the program's own functions need no symbol table.
        let own = parts
            .iter()
            .any(|p| p.start.is_some_and(|s| abs >= s && abs - s < p.len()));
        (!own).then_some(abs)
    }

    /// What a destination is called.
    fn target(&self, dest: Dest, parts: &[Part<'_>], ksyms: &Kallsyms) -> String {
        let abs = match dest {
            Dest::Relative(rel) if rel >= 0 && (rel as u64) < self.len() => {
                return offset_text(rel)
            }
            Dest::Relative(rel) => match self.start {
                Some(s) => s.wrapping_add(rel as u64),
                None => return offset_text(rel),
            },
            Dest::Absolute(a) => a,
        };
        let own = parts.iter().find_map(|p| {
            let s = p.start?;
            (abs >= s && abs - s < p.len()).then(|| (p.name.as_str(), abs - s))
        });
        let named = own.or_else(|| ksyms.resolve(abs).map(|s| (s.name, abs - s.start)));
        match named {
            Some((name, 0)) => name.to_string(),
            Some((name, off)) => format!("{name}+{off:#x}"),
            None => format!("{abs:#x}"),
        }
    }

    fn function(
        &self,
        decoded: Vec<Decoded>,
        parts: &[Part<'_>],
        lines: &[LineRecord],
        ksyms: &Kallsyms,
    ) -> JitFunction {
        let records = self.records(lines);
        let insns = decoded
            .into_iter()
            .map(|d| {
                let target = d.dest.map(|t| self.target(t, parts, ksyms));
                let asm = asm(d.text, d.dest, target.as_deref());
                let from = d.offset as usize;
                let bytes = InsnBytes::new(
                    self.code
                        .get(from..from.saturating_add(d.len as usize))
                        .unwrap_or_default(),
                );
                NativeInsn {
                    offset: d.offset,
                    bytes,
                    asm,
                    target,
                    line: covering(&records, u64::from(d.offset)),
                }
            })
            .collect();
        JitFunction {
            name: self.name.clone(),
            index: self.index,
            address: self.start,
            length: self.code.len() as u32,
            insns,
        }
    }

    /// This function's line records as (offset in the function, index in
    /// `lines`), by offset; equal offsets keep kernel order, so the last
    /// one covers the code there (the earlier ones produced none).
    fn records(&self, lines: &[LineRecord]) -> Vec<(u64, usize)> {
        let Some(start) = self.start else {
            return Vec::new();
        };
        let mut recs: Vec<(u64, usize)> = lines
            .iter()
            .enumerate()
            .filter_map(|(i, l)| {
                let off = l.jited_addr?.checked_sub(start)?;
                (off < self.len()).then_some((off, i))
            })
            .collect();
        recs.sort_by_key(|&(off, _)| off);
        recs
    }
}

/// An instruction's text with a direct branch's destination named.
fn asm(text: String, dest: Option<Dest>, target: Option<&str>) -> String {
    match (dest, target) {
        (Some(Dest::Relative(_)), Some(t)) => text + t,
        _ => text,
    }
}

/// The record with the greatest offset at or below `off`.
fn covering(records: &[(u64, usize)], off: u64) -> Option<usize> {
    let i = records.partition_point(|&(o, _)| o <= off);
    records.get(i.checked_sub(1)?).map(|&(_, idx)| idx)
}

#[cfg(test)]
mod tests;
