//! The only place with `unsafe`: raw syscalls and the kernel ABI structs they use.

pub mod bpf;
pub mod info;
pub mod link_info;
pub mod perf;
pub mod signal;

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
        // std appends " (os error N)"; the catalogue wants the bare strerror text.
        match s.rfind(" (os error") {
            Some(i) => s[..i].to_string(),
            None => s,
        }
    }
}

impl std::fmt::Display for Errno {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text())
    }
}
