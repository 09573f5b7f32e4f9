//! Inside one program: instruction slots and their source lines, readable
//! instruction text, `--devmode` source context, and the drilldown rows
//! shared by `top --textmode` and the TUI, and the native JIT code.

pub mod compare;
pub mod disasm;
pub mod drilldown;
pub mod helper_syms;
pub mod insn;
pub mod native;
pub mod profile;
pub mod source;

#[cfg(test)]
mod drilldown_tests;
