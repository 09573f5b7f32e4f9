//! Safe, typed views of the kernel's BPF objects.

pub mod bpffs;
pub mod btf;
pub mod cgroups;
pub mod fdinfo;
pub mod kallsyms;
pub mod lines;
pub mod link_target;
pub mod mountinfo;
pub mod names;
pub mod objects;
pub mod owners;
pub mod perf_attach;
pub mod prog_extra;
pub mod stats;
