//! A loaded program's translated image and its source metadata, as read
//! from `bpf()` and the program's BTF.

use super::objects::Program;

/// One `line_info` record resolved through the BTF string table.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LineRecord {
    /// Index into the xlated instruction stream (8-byte units).
    pub insn_off: u32,
    pub file: Option<String>,
    pub line: Option<u32>,
    pub column: Option<u32>,
    pub source: Option<String>,
    /// Where this record's code starts in the JIT image (None if hidden/absent).
    pub jited_addr: Option<u64>,
}

/// One JITed function: index 0 is the main program, then subprograms.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JitRange {
    pub start: u64,
    pub len: u32,
    pub func_index: usize,
    /// Full name from BTF `func_info` (kernel names stop at 15 bytes).
    pub func_name: Option<String>,
}

impl JitRange {
    pub fn end(&self) -> u64 {
        self.start + self.len as u64
    }
}

/// A subprogram entry from `func_info`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FuncRecord {
    pub insn_off: u32,
    pub name: Option<String>,
}

/// A program's native JIT code, read only when it was asked for.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum JitCode {
    /// Not asked for.
    #[default]
    NotRead,
    /// The program has no JIT image: it runs in the interpreter.
    NotJited,
    /// The program runs on a network device; its image is the device's code.
    Offloaded,
    /// The kernel has an image but withholds it from this reader: kernel
    /// addresses are hidden from it (CAP_SYSLOG, `kernel.kptr_restrict`).
    Withheld,
    /// Every function's code, concatenated in `jited_ksyms` order.
    Bytes(Vec<u8>),
}

#[derive(Debug, Clone, Default)]
pub struct ProgramImage {
    pub program: Program,
    pub xlated: Vec<u8>,
    pub lines: Vec<LineRecord>,
    pub jit_ranges: Vec<JitRange>,
    /// The native code, when the reader asked for it.
    pub jited: JitCode,
}
