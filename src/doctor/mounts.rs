//! The mounts brr cares about (bpffs for pinned paths, cgroup2 for cgroup
//! names, tracefs), read from `/proc/self/mountinfo`.

/// One mount: its filesystem type and where it is mounted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mount {
    pub fstype: String,
    pub point: String,
}

/// A mountinfo path field with its `\ooo` octal escapes (space, tab,
/// newline, backslash) decoded.
fn unescape(field: &str) -> String {
    let b = field.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let octal = b
            .get(i + 1..i + 4)
            .filter(|d| b[i] == b'\\' && d.iter().all(|c| (b'0'..=b'7').contains(c)));
        match octal {
            Some(d) => {
                let v = d.iter().fold(0u32, |a, c| a * 8 + u32::from(c - b'0'));
                out.push(u8::try_from(v).unwrap_or(b'?'));
                i += 4;
            }
            None => {
                out.push(b[i]);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Every mount in mountinfo text; malformed lines are skipped. The format:
/// `ID PARENT MAJ:MIN ROOT POINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPER`.
pub fn parse(text: &str) -> Vec<Mount> {
    text.lines()
        .filter_map(|line| {
            let fields: Vec<&str> = line.split(' ').collect();
            let sep = fields.iter().skip(6).position(|f| *f == "-")? + 6;
            Some(Mount {
                point: unescape(fields.get(4)?),
                fstype: fields.get(sep + 1)?.to_string(),
            })
        })
        .collect()
}

/// Where filesystems of type `fstype` are mounted, in mount order.
pub fn points<'a>(mounts: &'a [Mount], fstype: &str) -> Vec<&'a str> {
    mounts
        .iter()
        .filter(|m| m.fstype == fstype)
        .map(|m| m.point.as_str())
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
        assert_eq!(unescape("a\\134b\\011c\\9"), "a\\b\tc\\9");
    }
}
