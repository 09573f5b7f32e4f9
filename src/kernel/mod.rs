//! Safe, typed views of the kernel's BPF objects.

pub mod bpffs;
#[allow(dead_code)] // consumers (dump, profile) are being written
pub mod btf;
pub mod helper_syms;
pub mod kallsyms;
#[allow(dead_code)]
pub mod lines;
pub mod names;
pub mod objects;
pub mod stats;
