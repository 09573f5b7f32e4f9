//! The mounts doctor reports (bpffs for pinned paths, cgroup2 for cgroup
//! names, tracefs), from the one `/proc/self/mountinfo` reader that the
//! bpffs scan and the cgroup2 lookup use ([`crate::kernel::mountinfo`]).

pub(crate) use crate::kernel::mountinfo::{parse, Mount};

/// Where file systems of type `fstype` are mounted, in mount order, as
/// text (bytes that are not UTF-8 replaced).
pub(crate) fn points(mounts: &[Mount], fstype: &str) -> Vec<String> {
    mounts
        .iter()
        .filter(|m| m.fstype == fstype)
        .map(|m| m.point.to_string_lossy().into_owned())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mountinfo_lines() {
        let text = "22 1 0:21 / /proc rw,nosuid,nodev,noexec,relatime shared:12 - proc proc rw\n\
                    42 23 0:39 / /sys/fs/bpf rw,relatime - bpf bpf rw\n\
                    43 23 0:13 / /sys/kernel/tracing rw,relatime shared:5 master:1 - tracefs tracefs rw\n\
                    50 23 0:40 / /mnt/my\\040bpf rw - bpf none rw\n\
                    garbage\n\
                    51 23 0:41 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw,nsdelegate\n";
        let m = parse(text);
        assert_eq!(m.len(), 5);
        assert_eq!(points(&m, "bpf"), vec!["/sys/fs/bpf", "/mnt/my bpf"]);
        assert_eq!(points(&m, "tracefs"), vec!["/sys/kernel/tracing"]);
        assert_eq!(points(&m, "cgroup2"), vec!["/sys/fs/cgroup/unified"]);
        assert!(points(&m, "debugfs").is_empty());
    }
}
