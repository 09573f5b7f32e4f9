//! The only place with `unsafe`: raw syscalls and the kernel ABI structs they
//! use. Where rustix, signal-hook or perf-event-open-sys cover a call or a
//! layout, they are used instead of hand-written code.

// The syscalls and ABI layouts below exist on Linux only, and the
// perf_event_attr and ring-header layouts come from perf-event-open-sys,
// which has bindings for these architectures; nothing else in brr depends
// on the architecture. A clear error here beats a missing-item error deep
// inside a dependency.
#[cfg(not(target_os = "linux"))]
compile_error!(
    "brr reads Linux eBPF objects through bpf() and perf_event_open(): build it for a Linux target"
);
#[cfg(not(any(
    target_arch = "x86_64",
    target_arch = "aarch64",
    target_arch = "x86",
    target_arch = "riscv64",
    target_arch = "powerpc64",
    target_arch = "loongarch64",
    target_arch = "s390x"
)))]
compile_error!("brr's perf sampling uses perf-event-open-sys, which has kernel ABI bindings for x86_64, aarch64, x86, riscv64, powerpc64, loongarch64 and s390x only");

pub(crate) mod alloc;
pub(crate) mod bpf;
pub(crate) mod fds;
pub(crate) mod link_info;
pub(crate) mod perf;
pub(crate) mod signal;

use std::io;

/// An errno captured from a failed syscall.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Errno(pub i32);

impl Errno {
    pub fn last() -> Errno {
        Errno(
            io::Error::last_os_error()
                .raw_os_error()
                .unwrap_or(libc::EIO),
        )
    }

    /// The C library's text for this errno, e.g. "No such file or directory".
    pub fn text(self) -> String {
        let s = io::Error::from_raw_os_error(self.0).to_string();
        // std appends " (os error N)"; brr's messages quote the bare strerror
        // text, as the original's do.
        match s.rsplit_once(" (os error") {
            Some((text, _)) => text.to_string(),
            None => s,
        }
    }
}

impl From<rustix::io::Errno> for Errno {
    fn from(e: rustix::io::Errno) -> Errno {
        Errno(e.raw_os_error())
    }
}

impl From<Errno> for io::Error {
    fn from(e: Errno) -> io::Error {
        io::Error::from_raw_os_error(e.0)
    }
}

impl std::fmt::Display for Errno {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text())
    }
}
