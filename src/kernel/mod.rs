//! Safe, typed views of the kernel's BPF objects.

pub(crate) mod bpffs;
pub(crate) mod btf;
pub(crate) mod cgroups;
pub(crate) mod fdinfo;
pub(crate) mod kallsyms;
pub(crate) mod lines;
pub(crate) mod link_target;
pub(crate) mod mountinfo;
pub(crate) mod names;
pub(crate) mod objects;
pub(crate) mod owners;
pub(crate) mod perf;
pub(crate) mod perf_attach;
pub(crate) mod proc_fds;
pub(crate) mod prog_extra;
pub(crate) mod prog_reads;
pub(crate) mod stats;

/// The error number a system call returned, which callers above this
/// layer match on (`ENOENT`: gone) and print.
pub(crate) use crate::sys::Errno;
