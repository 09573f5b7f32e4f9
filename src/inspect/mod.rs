//! Inside one program: instruction slots and their source lines, readable
//! instruction text, `--devmode` source context, and the drilldown rows
//! shared by `top --textmode` and the TUI, and the native JIT code.

pub(crate) mod compare;
pub(crate) mod disasm;
pub(crate) mod drilldown;
pub(crate) mod helper_syms;
pub(crate) mod insn;
pub(crate) mod native;
pub(crate) mod profile;
pub(crate) mod source;

#[cfg(test)]
mod drilldown_tests;
