//! Human-readable text for translated instructions, in the notation the
//! kernel verifier and bpftool use (`r1 = *(u32 *)(r2 +8)`,
//! `if r0 != 0x0 goto pc+2`, `call bpf_map_lookup_elem#1`, `r1 = map[id:7]`).
//!
//! Calls in an xlated image carry the helper's address relative to
//! `__bpf_call_base` (when the reader may see raw addresses); a [`CallNames`]
//! turns those into kernel symbol names. Without one, small immediates are
//! named from the helper ID table.

use std::collections::HashMap;

use super::insn::{Slot, LD_IMM64};

/// Helper function names by `enum bpf_func_id` value (without `bpf_`).
const HELPERS: &[&str] = &[
    "unspec",
    "map_lookup_elem",
    "map_update_elem",
    "map_delete_elem",
    "probe_read",
    "ktime_get_ns",
    "trace_printk",
    "get_prandom_u32",
    "get_smp_processor_id",
    "skb_store_bytes",
    "l3_csum_replace",
    "l4_csum_replace",
    "tail_call",
    "clone_redirect",
    "get_current_pid_tgid",
    "get_current_uid_gid",
    "get_current_comm",
    "get_cgroup_classid",
    "skb_vlan_push",
    "skb_vlan_pop",
    "skb_get_tunnel_key",
    "skb_set_tunnel_key",
    "perf_event_read",
    "redirect",
    "get_route_realm",
    "perf_event_output",
    "skb_load_bytes",
    "get_stackid",
    "csum_diff",
    "skb_get_tunnel_opt",
    "skb_set_tunnel_opt",
    "skb_change_proto",
    "skb_change_type",
    "skb_under_cgroup",
    "get_hash_recalc",
    "get_current_task",
    "probe_write_user",
    "current_task_under_cgroup",
    "skb_change_tail",
    "skb_pull_data",
    "csum_update",
    "set_hash_invalid",
    "get_numa_node_id",
    "skb_change_head",
    "xdp_adjust_head",
    "probe_read_str",
    "get_socket_cookie",
    "get_socket_uid",
    "set_hash",
    "setsockopt",
    "skb_adjust_room",
    "redirect_map",
    "sk_redirect_map",
    "sock_map_update",
    "xdp_adjust_meta",
    "perf_event_read_value",
    "perf_prog_read_value",
    "getsockopt",
    "override_return",
    "sock_ops_cb_flags_set",
    "msg_redirect_map",
    "msg_apply_bytes",
    "msg_cork_bytes",
    "msg_pull_data",
    "bind",
    "xdp_adjust_tail",
    "skb_get_xfrm_state",
    "get_stack",
    "skb_load_bytes_relative",
    "fib_lookup",
    "sock_hash_update",
    "msg_redirect_hash",
    "sk_redirect_hash",
    "lwt_push_encap",
    "lwt_seg6_store_bytes",
    "lwt_seg6_adjust_srh",
    "lwt_seg6_action",
    "rc_repeat",
    "rc_keydown",
    "skb_cgroup_id",
    "get_current_cgroup_id",
    "get_local_storage",
    "sk_select_reuseport",
    "skb_ancestor_cgroup_id",
    "sk_lookup_tcp",
    "sk_lookup_udp",
    "sk_release",
    "map_push_elem",
    "map_pop_elem",
    "map_peek_elem",
    "msg_push_data",
    "msg_pop_data",
    "rc_pointer_rel",
    "spin_lock",
    "spin_unlock",
    "sk_fullsock",
    "tcp_sock",
    "skb_ecn_set_ce",
    "get_listener_sock",
    "skc_lookup_tcp",
    "tcp_check_syncookie",
    "sysctl_get_name",
    "sysctl_get_current_value",
    "sysctl_get_new_value",
    "sysctl_set_new_value",
    "strtol",
    "strtoul",
    "sk_storage_get",
    "sk_storage_delete",
    "send_signal",
    "tcp_gen_syncookie",
    "skb_output",
    "probe_read_user",
    "probe_read_kernel",
    "probe_read_user_str",
    "probe_read_kernel_str",
    "tcp_send_ack",
    "send_signal_thread",
    "jiffies64",
    "read_branch_records",
    "get_ns_current_pid_tgid",
    "xdp_output",
    "get_netns_cookie",
    "get_current_ancestor_cgroup_id",
    "sk_assign",
    "ktime_get_boot_ns",
    "seq_printf",
    "seq_write",
    "sk_cgroup_id",
    "sk_ancestor_cgroup_id",
    "ringbuf_output",
    "ringbuf_reserve",
    "ringbuf_submit",
    "ringbuf_discard",
    "ringbuf_query",
    "csum_level",
    "skc_to_tcp6_sock",
    "skc_to_tcp_sock",
    "skc_to_tcp_timewait_sock",
    "skc_to_tcp_request_sock",
    "skc_to_udp6_sock",
    "get_task_stack",
    "load_hdr_opt",
    "store_hdr_opt",
    "reserve_hdr_opt",
    "inode_storage_get",
    "inode_storage_delete",
    "d_path",
    "copy_from_user",
    "snprintf_btf",
    "seq_printf_btf",
    "skb_cgroup_classid",
    "redirect_neigh",
    "per_cpu_ptr",
    "this_cpu_ptr",
    "redirect_peer",
    "task_storage_get",
    "task_storage_delete",
    "get_current_task_btf",
    "bprm_opts_set",
    "ktime_get_coarse_ns",
    "ima_inode_hash",
    "sock_from_file",
    "check_mtu",
    "for_each_map_elem",
    "snprintf",
    "sys_bpf",
    "btf_find_by_name_kind",
    "sys_close",
    "timer_init",
    "timer_set_callback",
    "timer_start",
    "timer_cancel",
    "get_func_ip",
    "get_attach_cookie",
    "task_pt_regs",
    "get_branch_snapshot",
    "trace_vprintk",
    "skc_to_unix_sock",
    "kallsyms_lookup_name",
    "find_vma",
    "loop",
    "strncmp",
    "get_func_arg",
    "get_func_ret",
    "get_func_arg_cnt",
    "get_retval",
    "set_retval",
    "xdp_get_buff_len",
    "xdp_load_bytes",
    "xdp_store_bytes",
    "copy_from_user_task",
    "skb_set_tstamp",
    "ima_file_hash",
    "kptr_xchg",
    "map_lookup_percpu_elem",
    "skc_to_mptcp_sock",
    "dynptr_from_mem",
    "ringbuf_reserve_dynptr",
    "ringbuf_submit_dynptr",
    "ringbuf_discard_dynptr",
    "dynptr_read",
    "dynptr_write",
    "dynptr_data",
    "tcp_raw_gen_syncookie_ipv4",
    "tcp_raw_gen_syncookie_ipv6",
    "tcp_raw_check_syncookie_ipv4",
    "tcp_raw_check_syncookie_ipv6",
    "ktime_get_tai_ns",
    "user_ringbuf_drain",
    "cgrp_storage_get",
    "cgrp_storage_delete",
];

/// `bpf_<name>` for a helper ID, if known: the names of the kernel's
/// `enum bpf_func_id` (UAPI values, which never change once released).
pub(crate) fn helper_name(id: i32) -> Option<String> {
    usize::try_from(id)
        .ok()
        .filter(|&i| i > 0)
        .and_then(|i| HELPERS.get(i))
        .map(|n| format!("bpf_{n}"))
}

/// Kernel symbol names for helper-call targets of an xlated image.
#[derive(Debug, Clone, Default)]
pub(crate) struct CallNames {
    /// Address of `__bpf_call_base`.
    pub base: Option<u64>,
    /// Symbol name by exact address.
    pub names: HashMap<u64, String>,
    /// Kernel symbol of each JITed subprogram, by function index (the
    /// `imm` of a bpf-to-bpf call in a JITed image).
    pub subprogs: HashMap<i32, String>,
}

/// What a helper call (`call` with source 0 and immediate `imm`) calls:
/// the kernel function `resolve` names at its target (in a translated
/// image the immediate is the target's offset from `__bpf_call_base`; a
/// kallsyms lookup such as [`CallNames::resolve`] names it), else the
/// helper whose `enum bpf_func_id` value the immediate is (an image the
/// verifier has not rewritten). None when neither knows it: the caller
/// then shows the bare immediate.
pub(crate) fn helper_call_name<'a>(
    imm: i32,
    resolve: impl FnOnce(i32) -> Option<&'a str>,
) -> Option<String> {
    resolve(imm)
        .map(str::to_string)
        .or_else(|| helper_name(imm))
}

impl CallNames {
    /// The kernel symbol at a helper call's target, when kallsyms named it.
    pub(crate) fn resolve(&self, imm: i32) -> Option<&str> {
        let addr = self.base?.wrapping_add(imm as i64 as u64);
        self.names.get(&addr).map(String::as_str)
    }

    /// Addresses that helper calls in `slots` jump to (relative to `base`).
    pub(crate) fn targets(slots: &[Slot], base: u64) -> Vec<u64> {
        slots
            .iter()
            .filter(|s| s.opcode == 0x85 && s.src == 0)
            .map(|s| base.wrapping_add(s.imm as i64 as u64))
            .collect()
    }
}

const SIZES: [&str; 4] = ["u32", "u16", "u8", "u64"];

fn size_name(code: u8, signed: bool) -> String {
    let s = SIZES[((code >> 3) & 3) as usize];
    if signed {
        s.replacen('u', "s", 1)
    } else {
        s.to_string()
    }
}

fn mem(code: u8, reg: u8, off: i16, signed: bool) -> String {
    format!("*({} *)(r{reg} {off:+})", size_name(code, signed))
}

fn alu_op(op: u8, off: i16) -> Option<&'static str> {
    Some(match (op, off) {
        (0x00, _) => "+=",
        (0x10, _) => "-=",
        (0x20, _) => "*=",
        (0x30, 1) => "s/=",
        (0x30, _) => "/=",
        (0x40, _) => "|=",
        (0x50, _) => "&=",
        (0x60, _) => "<<=",
        (0x70, _) => ">>=",
        (0x90, 1) => "s%=",
        (0x90, _) => "%=",
        (0xa0, _) => "^=",
        (0xb0, _) => "=",
        (0xc0, _) => "s>>=",
        _ => return None,
    })
}

fn jmp_op(op: u8) -> Option<&'static str> {
    Some(match op {
        0x10 => "==",
        0x20 => ">",
        0x30 => ">=",
        0x40 => "&",
        0x50 => "!=",
        0x60 => "s>",
        0x70 => "s>=",
        0xa0 => "<",
        0xb0 => "<=",
        0xc0 => "s<",
        0xd0 => "s<=",
        _ => return None,
    })
}

fn atomic(s: &Slot) -> String {
    let w = if s.opcode & 0x18 == 0x18 { "64" } else { "" };
    let m = format!("({} *)(r{} {:+})", size_name(s.opcode, false), s.dst, s.off);
    // Load-acquire and store-release (6.15), as the kernel's disassembler
    // writes them: the load reads from the source register's address.
    match s.imm {
        0x100 => {
            let size = size_name(s.opcode, false);
            return format!(
                "r{} = load_acquire(({size} *)(r{} {:+}))",
                s.dst, s.src, s.off
            );
        }
        0x110 => return format!("store_release({m}, r{})", s.src),
        _ => {}
    }
    let fetch = s.imm & 1 != 0;
    let name = match s.imm & !1 {
        0x00 => "add",
        0x40 => "or",
        0x50 => "and",
        0xa0 => "xor",
        0xe0 => "xchg",
        0xf0 => "cmpxchg",
        _ => return format!("invalid atomic op 0x{:x}", s.imm),
    };
    match name {
        "xchg" => format!("r{} = atomic{w}_xchg({m}, r{})", s.src, s.src),
        "cmpxchg" => format!("r0 = atomic{w}_cmpxchg({m}, r0, r{})", s.src),
        _ if fetch => format!("r{} = atomic{w}_fetch_{name}({m}, r{})", s.src, s.src),
        _ => {
            let op = alu_op(s.imm as u8 & 0xf0, 0).unwrap_or("?=");
            format!("lock *{m} {op} r{}", s.src)
        }
    }
}

fn call(s: &Slot, names: &CallNames) -> String {
    match s.src {
        // The kernel zeroes helper-call targets for readers that may not
        // see kernel addresses; 0 itself is `__bpf_call_base`, never a
        // helper.
        0 if s.imm == 0 => "call ? (address hidden)".to_string(),
        1 => match names.subprogs.get(&s.imm) {
            Some(sym) => format!("call pc{:+}#{sym}", s.off),
            None => format!("call pc{:+}", s.off),
        },
        2 => format!("call kfunc#{}", s.imm),
        _ => match helper_call_name(s.imm, |imm| names.resolve(imm)) {
            Some(name) => format!("call {name}#{}", s.imm),
            None => format!("call #{}", s.imm),
        },
    }
}

fn ld_imm64(s: &Slot, next: Option<&Slot>) -> String {
    let hi = next.map(|n| n.imm as u32).unwrap_or(0);
    let value = ((hi as u64) << 32) | s.imm as u32 as u64;
    match s.src {
        1 => format!("r{} = map[id:{}]", s.dst, s.imm),
        2 => format!("r{} = map[id:{}][0]+{}", s.dst, s.imm, hi),
        3 => format!("r{} = btf_id:{}", s.dst, s.imm),
        4 => format!("r{} = func pc{:+}", s.dst, s.imm),
        5 => format!("r{} = map[idx:{}]", s.dst, s.imm),
        6 => format!("r{} = map[idx:{}][0]+{}", s.dst, s.imm, hi),
        _ => format!("r{} = 0x{value:x}", s.dst),
    }
}

/// Readable text for `s`; `next` is the following slot (the upper half of
/// an `ld_imm64`); helper calls are named through `names`.
pub(crate) fn text(s: &Slot, next: Option<&Slot>, names: &CallNames) -> String {
    let code = s.opcode;
    let class = code & 0x07;
    let op = code & 0xf0;
    let x = code & 0x08 != 0;
    match class {
        // LD
        0 => match code & 0xe0 {
            0x00 if code == LD_IMM64 => ld_imm64(s, next),
            0x20 => format!("r0 = *({} *)skb[{}]", size_name(code, false), s.imm),
            0x40 => format!(
                "r0 = *({} *)skb[r{} + {}]",
                size_name(code, false),
                s.src,
                s.imm
            ),
            _ => invalid(code),
        },
        // LDX
        1 => match code & 0xe0 {
            0x60 => format!("r{} = {}", s.dst, mem(code, s.src, s.off, false)),
            0x80 => format!("r{} = {}", s.dst, mem(code, s.src, s.off, true)),
            _ => invalid(code),
        },
        // ST
        2 if code & 0xe0 == 0x60 => format!("{} = {}", mem(code, s.dst, s.off, false), s.imm),
        // STX
        3 => match code & 0xe0 {
            0x60 => format!("{} = r{}", mem(code, s.dst, s.off, false), s.src),
            0xc0 => atomic(s),
            _ => invalid(code),
        },
        // ALU (32-bit, w registers) and ALU64
        4 | 7 => {
            let r = if class == 7 { 'r' } else { 'w' };
            if op == 0x80 {
                return format!("{r}{} = -{r}{}", s.dst, s.dst);
            }
            if op == 0xd0 {
                let kind = match (class, x) {
                    (7, _) => "bswap",
                    (_, true) => "be",
                    _ => "le",
                };
                return format!("r{} = {kind}{} r{}", s.dst, s.imm, s.dst);
            }
            let Some(sym) = alu_op(op, s.off) else {
                return invalid(code);
            };
            let rhs = if x {
                match (op, s.off) {
                    (0xb0, 8 | 16 | 32) => format!("(s{}){r}{}", s.off, s.src),
                    _ => format!("{r}{}", s.src),
                }
            } else {
                s.imm.to_string()
            };
            format!("{r}{} {sym} {rhs}", s.dst)
        }
        // JMP and JMP32
        5 | 6 => {
            let r = if class == 5 { 'r' } else { 'w' };
            match op {
                0x00 if class == 6 => format!("gotol pc{:+}", s.imm),
                0x00 => format!("goto pc{:+}", s.off),
                0x80 if class == 5 => call(s, names),
                0x90 if class == 5 => "exit".to_string(),
                0xe0 => format!("may_goto pc{:+}", s.off),
                _ => match jmp_op(op) {
                    Some(sym) => {
                        let rhs = if x {
                            format!("{r}{}", s.src)
                        } else {
                            format!("0x{:x}", s.imm)
                        };
                        format!("if {r}{} {sym} {rhs} goto pc{:+}", s.dst, s.off)
                    }
                    None => invalid(code),
                },
            }
        }
        _ => invalid(code),
    }
}

fn invalid(code: u8) -> String {
    format!("invalid opcode 0x{code:02x}")
}

/// The text of every slot of an image, in kernel notation; `None` for the
/// upper half of an `ld_imm64`, which the lower half's text covers.
pub(crate) fn listing(slots: &[Slot], names: &CallNames) -> Vec<Option<String>> {
    let second = super::insn::second_halves(slots);
    slots
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let upper = second.get(i).copied().unwrap_or(false);
            (!upper).then(|| text(s, slots.get(i + 1), names))
        })
        .collect()
}

/// Whether the image's helper calls had their targets zeroed because the
/// reader may not see kernel addresses (`kernel.kptr_restrict`, or no
/// CAP_SYSLOG): the kernel writes 0 in every helper call's `imm` then.
pub(crate) fn call_targets_hidden(slots: &[Slot]) -> bool {
    let second = super::insn::second_halves(slots);
    slots
        .iter()
        .zip(second)
        .any(|(s, upper)| !upper && s.opcode == 0x85 && s.src == 0 && s.imm == 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ins(opcode: u8, dst: u8, src: u8, off: i16, imm: i32) -> Slot {
        let mut raw = [0u8; 8];
        raw[0] = opcode;
        raw[1] = (src << 4) | dst;
        raw[2..4].copy_from_slice(&off.to_le_bytes());
        raw[4..].copy_from_slice(&imm.to_le_bytes());
        Slot::from_bytes(0, raw)
    }

    fn t(s: Slot) -> String {
        text(&s, None, &CallNames::default())
    }

    #[test]
    fn every_class() {
        assert_eq!(t(ins(0xbf, 8, 1, 0, 0)), "r8 = r1");
        assert_eq!(t(ins(0xb7, 0, 0, 0, 1)), "r0 = 1");
        assert_eq!(t(ins(0xb4, 0, 0, 0, -1)), "w0 = -1");
        assert_eq!(t(ins(0x07, 2, 0, 0, -4)), "r2 += -4");
        assert_eq!(t(ins(0x77, 1, 0, 0, 31)), "r1 >>= 31");
        assert_eq!(t(ins(0xc7, 1, 0, 0, 3)), "r1 s>>= 3");
        assert_eq!(t(ins(0x3f, 1, 2, 1, 0)), "r1 s/= r2");
        assert_eq!(t(ins(0xbf, 1, 2, 16, 0)), "r1 = (s16)r2");
        assert_eq!(t(ins(0x87, 3, 0, 0, 0)), "r3 = -r3");
        assert_eq!(t(ins(0xdc, 1, 0, 0, 16)), "r1 = be16 r1");
        assert_eq!(t(ins(0xd7, 1, 0, 0, 32)), "r1 = bswap32 r1");
        assert_eq!(t(ins(0x79, 1, 8, 24, 0)), "r1 = *(u64 *)(r8 +24)");
        assert_eq!(t(ins(0x91, 1, 2, -2, 0)), "r1 = *(s8 *)(r2 -2)");
        assert_eq!(t(ins(0x63, 10, 1, -4, 0)), "*(u32 *)(r10 -4) = r1");
        assert_eq!(t(ins(0x62, 10, 0, -8, 7)), "*(u32 *)(r10 -8) = 7");
        assert_eq!(t(ins(0xdb, 0, 1, 0, 0)), "lock *(u64 *)(r0 +0) += r1");
        assert_eq!(
            t(ins(0xdb, 0, 1, 0, 1)),
            "r1 = atomic64_fetch_add((u64 *)(r0 +0), r1)"
        );
        assert_eq!(
            t(ins(0xc3, 2, 3, 4, 0xf1)),
            "r0 = atomic_cmpxchg((u32 *)(r2 +4), r0, r3)"
        );
        // BPF_ATOMIC_OP(BPF_DW, BPF_LOAD_ACQ, BPF_REG_0, BPF_REG_1, 0) and
        // BPF_ATOMIC_OP(BPF_W, BPF_STORE_REL, BPF_REG_10, BPF_REG_1, -8),
        // as bytes: BPF_STX|BPF_ATOMIC|size, src<<4|dst, off, imm.
        let raw = |b: [u8; 8]| t(Slot::from_bytes(0, b));
        assert_eq!(
            raw([0xdb, 0x10, 0, 0, 0x00, 0x01, 0, 0]),
            "r0 = load_acquire((u64 *)(r1 +0))"
        );
        assert_eq!(
            raw([0xc3, 0x1a, 0xf8, 0xff, 0x10, 0x01, 0, 0]),
            "store_release((u32 *)(r10 -8), r1)"
        );
        assert_eq!(
            raw([0xd3, 0x21, 0x02, 0x00, 0x00, 0x01, 0, 0]),
            "r1 = load_acquire((u8 *)(r2 +2))"
        );
        // An atomic op the kernel may add later is named, not guessed.
        assert_eq!(t(ins(0xdb, 0, 1, 0, 0x120)), "invalid atomic op 0x120");
        assert_eq!(t(ins(0x15, 1, 0, 54, -1)), "if r1 == 0xffffffff goto pc+54");
        assert_eq!(t(ins(0x5d, 1, 2, -3, 0)), "if r1 != r2 goto pc-3");
        assert_eq!(t(ins(0x16, 1, 0, 2, 5)), "if w1 == 0x5 goto pc+2");
        assert_eq!(t(ins(0x05, 0, 0, 4, 0)), "goto pc+4");
        assert_eq!(t(ins(0x06, 0, 0, 0, 9)), "gotol pc+9");
        assert_eq!(t(ins(0x95, 0, 0, 0, 0)), "exit");
        assert_eq!(t(ins(0x30, 0, 0, 0, 12)), "r0 = *(u8 *)skb[12]");
        assert_eq!(t(ins(0xff, 0, 0, 0, 0)), "invalid opcode 0xff");
    }

    /// One text per slot; the upper half of an ld_imm64 has none.
    #[test]
    fn listing_covers_every_slot() {
        let slots = [
            ins(0x18, 1, 0, 0, 7),
            ins(0, 0, 0, 0, 1),
            ins(0x61, 1, 2, 0, 0),
            ins(0x85, 0, 0, 0, 1),
            ins(0x05, 0, 0, 3, 0),
            ins(0x95, 0, 0, 0, 0),
        ];
        let got = listing(&slots, &CallNames::default());
        assert_eq!(
            got,
            [
                Some("r1 = 0x100000007".to_string()),
                None,
                Some("r1 = *(u32 *)(r2 +0)".to_string()),
                Some("call bpf_map_lookup_elem#1".to_string()),
                Some("goto pc+3".to_string()),
                Some("exit".to_string()),
            ]
        );
        assert!(listing(&[], &CallNames::default()).is_empty());
    }

    #[test]
    fn calls_and_maps() {
        assert_eq!(t(ins(0x85, 0, 0, 0, 1)), "call bpf_map_lookup_elem#1");
        assert_eq!(t(ins(0x85, 0, 0, 0, 269712)), "call #269712");
        assert_eq!(t(ins(0x85, 0, 1, 2, 1)), "call pc+2");
        let mut names = CallNames {
            base: Some(0x1000),
            ..Default::default()
        };
        names.names.insert(0x1010, "bpf_get_current_uid_gid".into());
        names.subprogs.insert(1, "bpf_prog_75_sub".into());
        assert_eq!(
            text(&ins(0x85, 0, 1, 2, 1), None, &names),
            "call pc+2#bpf_prog_75_sub"
        );
        let call = ins(0x85, 0, 0, 0, 0x10);
        assert_eq!(CallNames::targets(&[call], 0x1000), vec![0x1010]);
        assert_eq!(text(&call, None, &names), "call bpf_get_current_uid_gid#16");
        let lo = ins(0x18, 1, 1, 0, 193);
        assert_eq!(text(&lo, None, &names), "r1 = map[id:193]");
        let value = ins(0x18, 1, 2, 0, 68);
        let hi = ins(0, 0, 0, 0, 16);
        assert_eq!(text(&value, Some(&hi), &names), "r1 = map[id:68][0]+16");
        let c = ins(0x18, 3, 0, 0, -1);
        let hi = ins(0, 0, 0, 0, 0x12);
        assert_eq!(text(&c, Some(&hi), &names), "r3 = 0x12ffffffff");
        assert_eq!(helper_name(211).as_deref(), Some("bpf_cgrp_storage_delete"));
        // Targets the kernel hid from this reader.
        let hidden = ins(0x85, 0, 0, 0, 0);
        assert_eq!(text(&hidden, None, &names), "call ? (address hidden)");
        assert!(call_targets_hidden(&[ins(0xb7, 1, 0, 0, 0), hidden]));
        assert!(!call_targets_hidden(&[call, ins(0x85, 0, 1, 0, 0)]));
        // An ld_imm64 whose upper half looks like a call with imm 0.
        let upper = ins(0x85, 0, 0, 0, 0);
        assert!(!call_targets_hidden(&[ins(0x18, 1, 0, 0, 5), upper]));
        // The resolver first; the helper ID table only when it knows nothing.
        assert_eq!(
            helper_call_name(1, |_| Some("__htab_map_lookup_elem")).as_deref(),
            Some("__htab_map_lookup_elem")
        );
        assert_eq!(
            helper_call_name(1, |_| None).as_deref(),
            Some("bpf_map_lookup_elem")
        );
        assert_eq!(helper_call_name(330_864, |_| None), None);
        assert_eq!(
            helper_call_name(0x10, |imm| names.resolve(imm)).as_deref(),
            Some("bpf_get_current_uid_gid")
        );
        assert_eq!(helper_name(0), None);
        assert_eq!(helper_name(-1), None);
    }
}
