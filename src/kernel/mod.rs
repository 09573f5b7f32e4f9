//! Safe, typed views of the kernel's BPF objects.

pub mod bpffs;
pub mod kallsyms;
pub mod names;
pub mod objects;
pub mod stats;
