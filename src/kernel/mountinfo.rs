//! The mounts of brr's mount namespace, from `/proc/self/mountinfo`: where
//! bpffs and cgroup2 are mounted (anywhere, and bpffs possibly more than
//! once).
//!
//! Each line is `ID PARENT MAJ:MIN ROOT MOUNT_POINT OPTIONS [OPTIONAL...] -
//! FSTYPE SOURCE SUPER_OPTIONS`; the optional fields (`shared:N`,
//! `master:N`, ...) vary in number, so the file system type is the field
//! after the lone `-` (searched from the seventh field on, so that a mount
//! point named `-` is not taken for it). ROOT and MOUNT_POINT escape space,
//! tab, newline and backslash as octal (`\040`).

use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;
use std::path::PathBuf;

/// One mount.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mount {
    /// The directory of the file system shown at the mount point (`/`
    /// unless a subtree was bind-mounted), as the file system names it.
    pub root: String,
    /// Where it is mounted, byte for byte (a mount point need not be UTF-8).
    pub point: PathBuf,
    pub fstype: String,
}

/// Every mount in mountinfo text, in mount order; malformed lines are
/// skipped.
pub(crate) fn parse(text: &str) -> Vec<Mount> {
    text.lines()
        .filter_map(|line| {
            let fields: Vec<&str> = line.split(' ').collect();
            let sep = fields.iter().skip(6).position(|f| *f == "-")? + 6;
            Some(Mount {
                root: unescape_lossy(fields.get(3)?),
                point: PathBuf::from(OsString::from_vec(unescape(fields.get(4)?))),
                fstype: fields.get(sep + 1)?.to_string(),
            })
        })
        .collect()
}

/// This process's mounts; none when mountinfo cannot be read.
pub fn read() -> Vec<Mount> {
    std::fs::read_to_string("/proc/self/mountinfo")
        .map(|t| parse(&t))
        .unwrap_or_default()
}

/// `\NNN` octal escapes decoded; anything else is kept as written.
pub(crate) fn unescape(s: &str) -> Vec<u8> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while let Some(&c) = b.get(i) {
        let oct = b
            .get(i + 1..i + 4)
            .filter(|d| d.iter().all(|c| (b'0'..=b'7').contains(c)));
        match (c, oct) {
            (b'\\', Some(d)) => {
                let v = d.iter().fold(0u32, |a, &c| a * 8 + u32::from(c - b'0'));
                out.push(u8::try_from(v).unwrap_or(b'?'));
                i += 4;
            }
            (c, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    out
}

/// [`unescape`] as text (bytes that are not UTF-8 replaced).
pub(crate) fn unescape_lossy(s: &str) -> String {
    String::from_utf8_lossy(&unescape(s)).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::ffi::OsStrExt;

    #[test]
    fn every_mount_with_its_type() {
        let text = "22 1 0:21 / /proc rw,nosuid,nodev,noexec,relatime shared:12 - proc proc rw\n\
                    42 23 0:39 / /sys/fs/bpf rw,relatime - bpf bpf rw\n\
                    43 23 0:13 / /sys/kernel/tracing rw,relatime shared:5 master:1 - tracefs tracefs rw\n\
                    50 23 0:40 /sub /mnt/my\\040bpf rw - bpf none rw\n\
                    garbage\n\
                    51 23 0:41 / /mnt/\\377 rw - bpf none rw\n\
                    70 20 0:38 / - rw - cgroup2 cgroup2 rw\n";
        let m = parse(text);
        let got: Vec<(&str, &[u8], &str)> = m
            .iter()
            .map(|m| {
                (
                    m.fstype.as_str(),
                    m.point.as_os_str().as_bytes(),
                    m.root.as_str(),
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                ("proc", &b"/proc"[..], "/"),
                ("bpf", b"/sys/fs/bpf", "/"),
                ("tracefs", b"/sys/kernel/tracing", "/"),
                ("bpf", b"/mnt/my bpf", "/sub"),
                ("bpf", b"/mnt/\xff", "/"),
                ("cgroup2", b"-", "/"),
            ]
        );
        assert!(parse("").is_empty());
        // /proc/self/mounts lines are not mountinfo.
        assert!(parse("bpf /sys/fs/bpf bpf rw 0 0\n").is_empty());
        assert_eq!(unescape_lossy("a\\134b\\011c\\9\\07"), "a\\b\tc\\9\\07");
        assert_eq!(unescape("\\"), b"\\");
    }

    #[test]
    fn this_process_sees_its_root() {
        // Every mount namespace has a root mount.
        assert!(read()
            .iter()
            .any(|m| m.point.as_os_str().as_bytes() == b"/"));
    }
}
