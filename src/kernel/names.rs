//! Kernel enum values to the names brr prints.

const PROG_TYPES: &[&str] = &[
    "unspec",
    "socket_filter",
    "kprobe",
    "sched_cls",
    "sched_act",
    "tracepoint",
    "xdp",
    "perf_event",
    "cgroup_skb",
    "cgroup_sock",
    "lwt_in",
    "lwt_out",
    "lwt_xmit",
    "sock_ops",
    "sk_skb",
    "cgroup_device",
    "sk_msg",
    "raw_tracepoint",
    "cgroup_sock_addr",
    "lwt_seg6local",
    "lirc_mode2",
    "sk_reuseport",
    "flow_dissector",
    "cgroup_sysctl",
    "raw_tracepoint_writable",
    "cgroup_sockopt",
    "tracing",
    "struct_ops",
    "ext",
    "lsm",
    "sk_lookup",
    "syscall",
    "netfilter",
];

const MAP_TYPES: &[&str] = &[
    "unspec",
    "hash",
    "array",
    "prog_array",
    "perf_event_array",
    "percpu_hash",
    "percpu_array",
    "stack_trace",
    "cgroup_array",
    "lru_hash",
    "lru_percpu_hash",
    "lpm_trie",
    "array_of_maps",
    "hash_of_maps",
    "devmap",
    "sockmap",
    "cpumap",
    "xskmap",
    "sockhash",
    "cgroup_storage",
    "reuseport_sockarray",
    "percpu_cgroup_storage",
    "queue",
    "stack",
    "sk_storage",
    "devmap_hash",
    "struct_ops",
    "ringbuf",
    "inode_storage",
    "task_storage",
    "bloom_filter",
    "user_ringbuf",
    "cgrp_storage",
    "arena",
];

const LINK_TYPES: &[&str] = &[
    "unspec",
    "raw_tracepoint",
    "tracing",
    "cgroup",
    "iter",
    "netns",
    "xdp",
    "perf_event",
    "kprobe_multi",
    "struct_ops",
    "netfilter",
    "tcx",
    "uprobe_multi",
    "netkit",
    "sockmap",
];

const ATTACH_TYPES: &[&str] = &[
    "cgroup_inet_ingress",
    "cgroup_inet_egress",
    "cgroup_inet_sock_create",
    "cgroup_sock_ops",
    "sk_skb_stream_parser",
    "sk_skb_stream_verdict",
    "cgroup_device",
    "sk_msg_verdict",
    "cgroup_inet4_bind",
    "cgroup_inet6_bind",
    "cgroup_inet4_connect",
    "cgroup_inet6_connect",
    "cgroup_inet4_post_bind",
    "cgroup_inet6_post_bind",
    "cgroup_udp4_sendmsg",
    "cgroup_udp6_sendmsg",
    "lirc_mode2",
    "flow_dissector",
    "cgroup_sysctl",
    "cgroup_udp4_recvmsg",
    "cgroup_udp6_recvmsg",
    "cgroup_getsockopt",
    "cgroup_setsockopt",
    "trace_raw_tp",
    "trace_fentry",
    "trace_fexit",
    "modify_return",
    "lsm_mac",
    "trace_iter",
    "cgroup_inet4_getpeername",
    "cgroup_inet6_getpeername",
    "cgroup_inet4_getsockname",
    "cgroup_inet6_getsockname",
    "xdp_devmap",
    "cgroup_inet_sock_release",
    "xdp_cpumap",
    "sk_lookup",
    "xdp",
    "sk_skb_verdict",
    "sk_reuseport_select",
    "sk_reuseport_select_or_migrate",
    "perf_event",
    "trace_kprobe_multi",
    "lsm_cgroup",
    "struct_ops",
    "netfilter",
    "tcx_ingress",
    "tcx_egress",
    "trace_uprobe_multi",
    "cgroup_unix_connect",
    "cgroup_unix_sendmsg",
    "cgroup_unix_recvmsg",
    "cgroup_unix_getpeername",
    "cgroup_unix_getsockname",
    "netkit_primary",
    "netkit_peer",
    "trace_kprobe_session",
    "trace_uprobe_session",
];

fn lookup(table: &[&str], n: u32) -> String {
    match table.get(n as usize) {
        Some(s) => (*s).to_string(),
        None => format!("unknown({n})"),
    }
}

pub(crate) fn prog_type(n: u32) -> String {
    lookup(PROG_TYPES, n)
}

pub(crate) fn map_type(n: u32) -> String {
    lookup(MAP_TYPES, n)
}

pub(crate) fn link_type(n: u32) -> String {
    lookup(LINK_TYPES, n)
}

pub(crate) fn attach_type(n: u32) -> String {
    lookup(ATTACH_TYPES, n)
}

/// A kernel object name: bytes up to the first NUL, lossy UTF-8, `-` if empty.
pub(crate) fn object_name(raw: &[u8]) -> String {
    let end = raw.iter().position(|&b| b == 0).unwrap_or(raw.len());
    if end == 0 {
        "-".to_string()
    } else {
        String::from_utf8_lossy(&raw[..end]).into_owned()
    }
}

pub(crate) fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(char::from(DIGITS[usize::from(b >> 4)]));
        s.push(char::from(DIGITS[usize::from(b & 0xf)]));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables() {
        assert_eq!(prog_type(8), "cgroup_skb");
        assert_eq!(prog_type(32), "netfilter");
        assert_eq!(map_type(33), "arena");
        assert_eq!(link_type(14), "sockmap");
        assert_eq!(attach_type(17), "flow_dissector");
        assert_eq!(attach_type(47), "tcx_egress");
        assert_eq!(attach_type(54), "netkit_primary");
        assert_eq!(attach_type(57), "trace_uprobe_session");
    }

    /// Numbers newer kernels may add keep their row, named by number, in
    /// every table alike.
    #[test]
    fn unknown_numbers() {
        assert_eq!(prog_type(33), "unknown(33)");
        assert_eq!(prog_type(u32::MAX), format!("unknown({})", u32::MAX));
        assert_eq!(map_type(34), "unknown(34)");
        assert_eq!(link_type(15), "unknown(15)");
        assert_eq!(link_type(99), "unknown(99)");
        assert_eq!(attach_type(58), "unknown(58)");
        assert_eq!(attach_type(u32::MAX), format!("unknown({})", u32::MAX));
    }

    #[test]
    fn names_and_tags() {
        assert_eq!(object_name(b"abc\0\0\0"), "abc");
        assert_eq!(object_name(&[0u8; 16]), "-");
        assert_eq!(object_name(b"0123456789abcdef"), "0123456789abcdef");
        assert_eq!(hex(&[0xd8, 0x12, 0x00]), "d81200");
    }
}
