//! Expected failures, each with its one-line message and exit status.

use crate::privilege::{self, CapSet, Operation};
use crate::sys::Errno;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BrrError {
    /// Argument error; the text is the one stderr line (`brr: error: ...`).
    Usage(String),
    /// EPERM/EACCES: exit 2.
    Permission(String),
    /// Kernel or host lacks a feature: exit 3.
    Unsupported(String),
    /// The user named a program ID that does not exist: exit 1.
    NoProgram(u64),
    /// Any other expected failure (bpftool problems, ...): exit 1.
    Failed(String),
}

pub type Result<T> = std::result::Result<T, BrrError>;

impl BrrError {
    pub fn exit_code(&self) -> i32 {
        match self {
            BrrError::Usage(_) | BrrError::Permission(_) => 2,
            BrrError::Unsupported(_) => 3,
            BrrError::NoProgram(_) | BrrError::Failed(_) => 1,
        }
    }

    /// What goes to stderr (without the trailing newline).
    pub fn render(&self) -> String {
        match self {
            BrrError::Usage(text) => text.clone(),
            _ => format!("brr: {}", self.message()),
        }
    }

    /// Map a bpf() errno to brr's error for `action`: a permission denial
    /// with a privilege hint, missing kernel support, or a failure quoting
    /// the strerror text.
    pub fn bpf(action: &str, errno: Errno) -> BrrError {
        match errno.0 {
            libc::EPERM | libc::EACCES => BrrError::Permission(format!(
                "permission denied while trying to {action}; {}",
                privilege::denial_hint(Operation::BpfObjects, CapSet::current())
            )),
            libc::ENOSYS | libc::EOPNOTSUPP | libc::EINVAL | libc::ENOENT => BrrError::Unsupported(
                format!("kernel does not support required bpf() features to {action}"),
            ),
            _ => BrrError::Failed(format!("failed to {action}: {errno}")),
        }
    }

    /// The message without the `brr: ` prefix, for status lines that add
    /// their own.
    pub fn message(&self) -> String {
        match self {
            BrrError::Usage(text) => text.clone(),
            BrrError::Permission(m) | BrrError::Unsupported(m) | BrrError::Failed(m) => m.clone(),
            BrrError::NoProgram(id) => format!("no eBPF program with id {id}"),
        }
    }
}

impl std::fmt::Display for BrrError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.render())
    }
}

/// Say each of `errors` on stderr, one `brr:` line each, as brr says the
/// error it exits with (a command that still prints its output says those
/// it met on the way); whether there were any.
pub(crate) fn say_all(errors: &[BrrError]) -> bool {
    use std::io::Write;
    let mut err = std::io::stderr();
    for e in errors {
        let _ = writeln!(err, "{}", e.render());
    }
    !errors.is_empty()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn catalogue() {
        // The tail depends on this process's capabilities (see privilege.rs).
        let e = BrrError::bpf("list eBPF object IDs", Errno(libc::EPERM));
        assert!(e.render().starts_with(
            "brr: permission denied while trying to list eBPF object IDs; needs CAP_SYS_ADMIN"
        ));
        assert_eq!(e.exit_code(), 2);
        let e = BrrError::bpf("enable eBPF runtime statistics", Errno(libc::EINVAL));
        assert_eq!(e.exit_code(), 3);
        assert!(e
            .render()
            .contains("kernel does not support required bpf() features"));
        let e = BrrError::bpf("open eBPF object id 7", Errno(libc::ENOMEM));
        assert_eq!(e.exit_code(), 1);
        assert_eq!(
            e.render(),
            "brr: failed to open eBPF object id 7: Cannot allocate memory"
        );
        assert_eq!(BrrError::NoProgram(5).exit_code(), 1);
        assert_eq!(
            BrrError::NoProgram(5).render(),
            "brr: no eBPF program with id 5"
        );
    }
}
