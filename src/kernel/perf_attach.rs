//! Where a program attached through a perf event fd is attached, from
//! `BPF_TASK_FD_QUERY` on the fd of the process that holds it: bpftrace,
//! BCC and libbpf on kernels without perf-event links attach tracepoints,
//! kprobes and uprobes with `PERF_EVENT_IOC_SET_BPF`, which makes no link.
//! Targets are written as a perf-event link's are (`kernel::link_target`),
//! so that both ways of attaching read alike.

pub(crate) use crate::sys::bpf::TaskFdQuery;

/// `enum bpf_task_fd_type`.
const RAW_TRACEPOINT: u32 = 0;
const TRACEPOINT: u32 = 1;
const KPROBE: u32 = 2;
const KRETPROBE: u32 = 3;
const UPROBE: u32 = 4;
const URETPROBE: u32 = 5;

/// Ask the kernel which program is attached through `fd` of `pid`; None
/// when none is (or the process or fd is gone, or brr may not ask).
pub(crate) fn query(pid: u32, fd: u32, buf: &mut [u8]) -> Option<TaskFdQuery> {
    crate::sys::bpf::task_fd_query(pid, fd, buf)
        .ok()
        .filter(|q| q.prog_id != 0)
}

/// The attach type and target of one answer: `tracepoint` and
/// `sched_switch`, `kprobe` and `do_sys_openat2+0x10` (or `addr 0x...` for
/// a probe placed by address), `uprobe` and `/usr/bin/bash+0x4a2f0`.
pub(crate) fn describe(q: &TaskFdQuery) -> (String, String) {
    let name = String::from_utf8_lossy(&q.name).into_owned();
    let with_offset = |name: String| match q.probe_offset {
        0 => name,
        off => format!("{name}+{off:#x}"),
    };
    let kind = match q.fd_type {
        RAW_TRACEPOINT => "raw_tracepoint",
        TRACEPOINT => "tracepoint",
        KPROBE => "kprobe",
        KRETPROBE => "kretprobe",
        UPROBE => "uprobe",
        URETPROBE => "uretprobe",
        n => return (format!("unknown({n})"), name),
    };
    let target = match q.fd_type {
        KPROBE | KRETPROBE if name.is_empty() => match q.probe_addr {
            // The kernel zeroes the address for readers that may not see
            // kernel addresses.
            0 => "addr hidden".to_string(),
            addr => format!("addr {addr:#x}"),
        },
        KPROBE | KRETPROBE | UPROBE | URETPROBE => with_offset(name),
        _ => name,
    };
    (kind.to_string(), target)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(fd_type: u32, name: &str, probe_offset: u64, probe_addr: u64) -> TaskFdQuery {
        TaskFdQuery {
            prog_id: 7,
            fd_type,
            name: name.as_bytes().to_vec(),
            probe_offset,
            probe_addr,
        }
    }

    fn d(q: TaskFdQuery) -> (String, String) {
        describe(&q)
    }

    fn s(a: &str, b: &str) -> (String, String) {
        (a.to_string(), b.to_string())
    }

    /// The answers bpftool perf prints for bpftrace-style attachments.
    #[test]
    fn every_fd_type_is_named() {
        assert_eq!(
            d(q(TRACEPOINT, "sys_enter_openat", 0, 0)),
            s("tracepoint", "sys_enter_openat")
        );
        assert_eq!(
            d(q(RAW_TRACEPOINT, "sched_switch", 0, 0)),
            s("raw_tracepoint", "sched_switch")
        );
        // A kprobe on a function: the kernel reports the resolved address
        // too, but the function and offset are what was asked for.
        assert_eq!(
            d(q(KPROBE, "do_sys_openat2", 0, 0xffffffff8142a0c0)),
            s("kprobe", "do_sys_openat2")
        );
        assert_eq!(
            d(q(KRETPROBE, "vfs_read", 0x10, 0)),
            s("kretprobe", "vfs_read+0x10")
        );
        // Placed by address, seen with and without CAP_SYSLOG.
        assert_eq!(
            d(q(KPROBE, "", 0, 0xffffffff8142a0c0)),
            s("kprobe", "addr 0xffffffff8142a0c0")
        );
        assert_eq!(d(q(KRETPROBE, "", 0, 0)), s("kretprobe", "addr hidden"));
        assert_eq!(
            d(q(UPROBE, "/usr/lib/x86_64-linux-gnu/libc.so.6", 0x9c0a0, 0)),
            s("uprobe", "/usr/lib/x86_64-linux-gnu/libc.so.6+0x9c0a0")
        );
        assert_eq!(
            d(q(URETPROBE, "/usr/bin/bash", 0x4a2f0, 0)),
            s("uretprobe", "/usr/bin/bash+0x4a2f0")
        );
        assert_eq!(d(q(9, "x", 0, 0)), s("unknown(9)", "x"));
        assert_eq!(
            d(q(UPROBE, "/a\u{fffd}", 0, 0)).1,
            "/a\u{fffd}",
            "paths that are not UTF-8 are shown lossily"
        );
    }
}
