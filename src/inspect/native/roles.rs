//! What each native instruction of a JITed function is there for: the
//! code the JIT wraps around every function (its prologue and epilogue),
//! calls and jumps into the kernel's speculative-execution mitigation
//! thunks, and everything else, the program's own body.
//!
//! Read from the decoded text, not from line records: the kernel gives a
//! function's first line record the function's start address, so the
//! prologue shares the first source line with the first statement, and
//! the epilogue is the code of the `exit` instruction, which belongs to
//! the `return` line. The patterns are those the kernel's JITs emit
//! (`arch/x86/net/bpf_jit_comp.c`: `emit_prologue`, `push_callee_regs`,
//! the `BPF_EXIT` case and `emit_return`; `arch/arm64/net/bpf_jit_comp.c`:
//! `build_prologue`, `build_epilogue`).

use super::{Arch, JitFunction, NativeInsn};

/// What a native instruction does for its function.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Role {
    /// The program's own code.
    Body,
    /// Entering the function: patch sites, frame set-up, callee-saved
    /// registers, the tail-call counter.
    Prologue,
    /// Leaving it: restoring registers and the frame, returning.
    Epilogue,
    /// A call or jump into a mitigation thunk (a return thunk, a
    /// retpoline), which replaces a plain `ret` or indirect branch.
    Thunk,
}

impl Role {
    pub fn name(self) -> &'static str {
        match self {
            Role::Body => "body",
            Role::Prologue => "prologue",
            Role::Epilogue => "epilogue",
            Role::Thunk => "thunk",
        }
    }

    /// Not the program's own work: the price of entering, leaving and the
    /// mitigations.
    #[cfg(test)]
    pub(crate) fn is_overhead(self) -> bool {
        self != Role::Body
    }
}

/// Kernel symbols of the x86 speculative-execution mitigation thunks:
/// return thunks (retbleed, SRSO, ITS, call depth tracking) and
/// retpolines (indirect call and jump thunks).
const THUNK_PREFIXES: &[&str] = &[
    "__x86_return_thunk",
    "__x86_indirect_thunk_",
    "__x86_indirect_call_thunk_",
    "__x86_indirect_jump_thunk_",
    "__x86_indirect_its_thunk_",
    "__x86_indirect_alt_",
    "srso_",
    "retbleed_return_thunk",
    "its_return_thunk",
    "call_depth_return_thunk",
    "entry_untrain_ret",
    "__x86_return_skl",
];

/// Whether kernel symbol `name` is a mitigation thunk.
pub(crate) fn is_mitigation_thunk(name: &str) -> bool {
    let name = name.split('+').next().unwrap_or(name);
    THUNK_PREFIXES.iter().any(|p| name.starts_with(p))
}

/// What the roles read of a function's instructions, by position: a full
/// listing, or the text-light one a profile's annotation decodes.
pub(crate) trait Listing {
    fn count(&self) -> usize;
    /// The instruction's text; a direct branch's may stop before its
    /// destination, other text not named in [`roles`] may be empty.
    fn asm(&self, at: usize) -> &str;
    /// Where a call or jump goes, named as [`NativeInsn::target`] names
    /// it; a destination inside the function may be left out.
    fn target(&self, at: usize) -> Option<&str>;
}

impl Listing for [NativeInsn] {
    fn count(&self) -> usize {
        self.len()
    }
    fn asm(&self, at: usize) -> &str {
        self.get(at).map_or("", |i| i.asm.as_str())
    }
    fn target(&self, at: usize) -> Option<&str> {
        self.get(at).and_then(|i| i.target.as_deref())
    }
}

/// The destination leaves the function (it is not `+0x1a`).
fn leaves(l: &(impl Listing + ?Sized), at: usize) -> bool {
    l.target(at)
        .is_some_and(|t| !t.starts_with('+') && !t.starts_with('-'))
}

fn names_thunk(l: &(impl Listing + ?Sized), at: usize) -> bool {
    l.target(at).is_some_and(is_mitigation_thunk)
}

/// The role of every instruction of `f`, in order.
pub fn roles(arch: Arch, f: &JitFunction) -> Vec<Role> {
    roles_of(arch, &f.insns[..])
}

/// [`roles`] of any listing.
pub(crate) fn roles_of(arch: Arch, f: &(impl Listing + ?Sized)) -> Vec<Role> {
    let n = f.count();
    let mut out = vec![Role::Body; n];
    let prologue: fn(&str) -> Step = match arch {
        Arch::X86_64 => x86_prologue,
        Arch::Aarch64 => arm64_prologue,
    };
    let epilogue: fn(&str) -> bool = match arch {
        Arch::X86_64 => x86_restores,
        Arch::Aarch64 => arm64_restores,
    };
    for r in out.iter_mut().take(prologue_len(f, prologue)) {
        *r = Role::Prologue;
    }
    for at in 0..n {
        if !is_return(arch, f, at) {
            continue;
        }
        // What restores the caller's state right before the return.
        let mut from = at;
        while from > 0 && out[from - 1] == Role::Body && epilogue(f.asm(from - 1)) {
            from -= 1;
        }
        for r in out.iter_mut().take(at).skip(from) {
            *r = Role::Epilogue;
        }
        out[at] = if names_thunk(f, at) {
            Role::Thunk
        } else {
            Role::Epilogue
        };
        // Straight-line speculation padding after the return.
        for (pad, r) in out.iter_mut().enumerate().skip(at + 1) {
            if f.asm(pad) != "int3" {
                break;
            }
            *r = Role::Epilogue;
        }
    }
    for (at, r) in out.iter_mut().enumerate() {
        if *r == Role::Body && names_thunk(f, at) {
            *r = Role::Thunk;
        }
    }
    out
}

/// How far the prologue goes: the leading run `step` accepts, once it
/// has seen the frame set up (else only the leading patch sites).
fn prologue_len(f: &(impl Listing + ?Sized), step: fn(&str) -> Step) -> usize {
    let mut framed = false;
    let mut pads = 0;
    for n in 0..f.count() {
        match (step(f.asm(n)), framed) {
            (Step::Pad | Step::Entry, false) => pads = n + 1,
            (Step::Frame, _) => framed = true,
            (Step::Pad | Step::Save, true) => {}
            _ => return if framed { n } else { pads },
        }
    }
    if framed {
        f.count()
    } else {
        pads
    }
}

/// What a prologue pattern says about one instruction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    /// A patch site or landing pad, before or after the frame.
    Pad,
    /// Set-up that only comes before the frame (the tail-call counter,
    /// the return address saved for a trampoline, pointer signing).
    Entry,
    /// The frame pointer set up.
    Frame,
    /// Stack space or a callee-saved register, after the frame.
    Save,
    /// The function's own code.
    End,
}

fn x86_prologue(t: &str) -> Step {
    if t.starts_with("nop") || t == "endbr64" || t == "xchg ax, ax" {
        Step::Pad
    } else if t == "xor rax, rax" {
        Step::Entry
    } else if matches!(t, "push rbp" | "mov rbp, rsp") {
        Step::Frame
    } else if t.starts_with("push ") || t.starts_with("sub rsp, ") {
        Step::Save
    } else {
        Step::End
    }
}

/// Restores registers or the frame before a return.
fn x86_restores(t: &str) -> bool {
    t == "leave" || t.starts_with("pop ")
}

fn arm64_prologue(t: &str) -> Step {
    if t == "nop" || t.starts_with("bti") || t.starts_with("hint") {
        Step::Pad
    } else if matches!(t, "mov x9, x30" | "paciasp") {
        Step::Entry
    } else if t.starts_with("stp x29, x30, [sp") || t == "mov x29, sp" {
        Step::Frame
    } else if (t.starts_with("stp x") && t.contains("[sp"))
        || t.starts_with("sub sp, sp,")
        || t == "mov x25, sp"
    {
        Step::Save
    } else {
        Step::End
    }
}

fn arm64_restores(t: &str) -> bool {
    (t.starts_with("ldp x") && t.contains("[sp"))
        || t.starts_with("add sp, sp,")
        || matches!(t, "autiasp" | "mov x0, x7" | "mov sp, x25")
}

/// Whether instruction `at` returns from the function: `ret`, or on x86
/// the jump into a return thunk that replaces it (right after `leave`,
/// or naming a thunk).
fn is_return(arch: Arch, f: &(impl Listing + ?Sized), at: usize) -> bool {
    if at >= f.count() {
        return false;
    }
    let asm = f.asm(at);
    if asm == "ret" {
        return true;
    }
    match arch {
        Arch::X86_64 => {
            let after_leave = at.checked_sub(1).is_some_and(|p| f.asm(p) == "leave");
            asm.starts_with("jmp ") && leaves(f, at) && (after_leave || names_thunk(f, at))
        }
        Arch::Aarch64 => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn insn(offset: u32, asm: &str, target: Option<&str>) -> NativeInsn {
        NativeInsn {
            offset,
            bytes: Vec::new().into(),
            asm: asm.into(),
            target: target.map(String::from),
            line: None,
        }
    }

    fn function(asm: &[(&str, Option<&str>)]) -> JitFunction {
        JitFunction {
            name: "f".into(),
            index: 0,
            address: None,
            length: asm.len() as u32,
            insns: asm
                .iter()
                .enumerate()
                .map(|(i, (a, t))| insn(i as u32, a, *t))
                .collect(),
        }
    }

    fn short(roles: &[Role]) -> String {
        roles
            .iter()
            .map(|r| match r {
                Role::Body => 'b',
                Role::Prologue => 'p',
                Role::Epilogue => 'e',
                Role::Thunk => 't',
            })
            .collect()
    }

    #[test]
    fn x86_frame_saves_body_restores_and_return_thunk() {
        // The code of the hot fixture as the 6.18 JIT emits it.
        let f = function(&[
            ("nop dword ptr [rax+rax]", None),
            ("nop dword ptr [rax]", None),
            ("push rbp", None),
            ("mov rbp, rsp", None),
            ("sub rsp, 0x10", None),
            ("push rbx", None),
            ("push r13", None),
            ("mov ebx, 0x1", None),
            ("push rbx", None), // body: not in the leading run
            ("call bpf_ktime_get_ns", Some("bpf_ktime_get_ns")),
            ("mov rax, rbx", None),
            ("pop r13", None),
            ("pop rbx", None),
            ("leave", None),
            (
                "jmp srso_alias_return_thunk",
                Some("srso_alias_return_thunk"),
            ),
        ]);
        assert_eq!(short(&roles(Arch::X86_64, &f)), "pppppppbbbbeeet");
    }

    #[test]
    fn x86_plain_ret_unnamed_thunk_and_retpolines() {
        let f = function(&[
            ("endbr64", None),
            ("nop dword ptr [rax+rax]", None),
            ("xor rax, rax", None),
            ("push rbp", None),
            ("mov rbp, rsp", None),
            ("xor eax, eax", None),
            (
                "jmp __x86_indirect_thunk_rcx",
                Some("__x86_indirect_thunk_rcx"),
            ),
            ("jne +0x3", Some("+0x3")),
            ("leave", None),
            ("ret", None),
            ("int3", None),
            ("leave", None),
            // Kernel symbols hidden: the jump after `leave` is the return.
            ("jmp 0xffffffff822057f0", Some("0xffffffff822057f0")),
        ]);
        assert_eq!(short(&roles(Arch::X86_64, &f)), "pppppbtbeeeee");
        // A jump out of the function elsewhere is the program's own.
        let f = function(&[
            ("mov eax, 0x1", None),
            ("jmp bpf_prog_x", Some("bpf_prog_x")),
            ("pop rbx", None),
            ("ret", None),
        ]);
        assert_eq!(short(&roles(Arch::X86_64, &f)), "bbee");
    }

    #[test]
    fn x86_without_a_frame_only_the_pads() {
        let f = function(&[
            ("nop dword ptr [rax+rax]", None),
            ("push rbx", None),
            ("mov eax, 0x1", None),
        ]);
        assert_eq!(short(&roles(Arch::X86_64, &f)), "pbb");
        assert!(roles(Arch::X86_64, &function(&[])).is_empty());
    }

    #[test]
    fn arm64_prologue_and_epilogue() {
        let f = function(&[
            ("bti c", None),
            ("mov x9, x30", None),
            ("nop", None),
            ("paciasp", None),
            ("stp x29, x30, [sp, #-0x10]!", None),
            ("mov x29, sp", None),
            ("stp x19, x20, [sp, #-0x10]!", None),
            ("mov x25, sp", None),
            ("sub sp, sp, #0x10", None),
            ("mov x7, #0x1", None),
            ("add sp, sp, #0x10", None),
            ("ldp x19, x20, [sp], #0x10", None),
            ("ldp x29, x30, [sp], #0x10", None),
            ("autiasp", None),
            ("mov x0, x7", None),
            ("ret", None),
        ]);
        assert_eq!(short(&roles(Arch::Aarch64, &f)), "pppppppppbeeeeee");
    }

    #[test]
    fn thunk_names() {
        for n in [
            "__x86_return_thunk",
            "srso_alias_return_thunk",
            "srso_return_thunk+0x5",
            "__x86_indirect_thunk_r11",
            "__x86_indirect_its_thunk_rax",
            "retbleed_return_thunk",
            "its_return_thunk",
            "call_depth_return_thunk",
        ] {
            assert!(is_mitigation_thunk(n), "{n}");
        }
        for n in ["bpf_map_lookup_elem", "x86_return", "__bpf_call_base", ""] {
            assert!(!is_mitigation_thunk(n), "{n}");
        }
        assert_eq!(Role::Thunk.name(), "thunk");
        assert!(Role::Prologue.is_overhead() && !Role::Body.is_overhead());
    }
}
