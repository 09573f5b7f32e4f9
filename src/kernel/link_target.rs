//! Where a link is attached, decoded from its `bpf_link_info` per link type
//! and named the way bpftool's `link show` names it.
//!
//! The decoder is pure: names that need the system (interfaces, cgroup
//! paths, BTF function names) come through [`Resolve`], so recorded infos
//! decode the same anywhere. A short info from an older kernel decodes
//! whatever fields it covers; fields past its end are left out.

use std::collections::HashMap;
use std::os::fd::{AsFd, OwnedFd};
use std::path::Path;

use crate::kernel::btf::BtfData;
use crate::kernel::cgroups::{self, Cgroup2Mount};
use crate::kernel::kallsyms::Kallsyms;
use crate::kernel::names;
use crate::sys::bpf::{self, ObjKind};
use crate::sys::link_info::{self as li, BpfLinkInfo, FetchedLinkInfo};
use crate::sys::Errno;

/// A link's attach point: `attach_type` where the link type has one, and
/// the target (tracepoint, function, cgroup, interface, ...).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LinkTarget {
    pub attach_type: Option<String>,
    pub target: Option<String>,
    /// Every function a kprobe_multi link probes, in the kernel's order
    /// (empty for other links, or when the kernel gives no addresses).
    pub functions: Vec<String>,
}

/// System names the decoder asks for.
pub trait Resolve {
    /// The interface with this index (in brr's network namespace).
    fn ifname(&mut self, ifindex: u32) -> Option<String>;
    /// The cgroup2 path (relative to the cgroup2 root, starting with `/`).
    fn cgroup_path(&mut self, cgroup_id: u64) -> Option<String>;
    /// The BTF FUNC name of `btf_id` inside the object a tracing link
    /// targets: a kernel BTF object, or a program (freplace and fentry on a
    /// BPF program), both by `target_obj_id`.
    fn btf_func(&mut self, target_obj_id: u32, btf_id: u32) -> Option<String>;
    /// The kernel function a kprobe_multi link reports at `addr`.
    fn kprobe_multi_function(&mut self, addr: u64) -> Option<String>;
}

/// Resolves nothing: every target falls back to its numbers.
pub(crate) struct NoNames;

impl Resolve for NoNames {
    fn ifname(&mut self, _: u32) -> Option<String> {
        None
    }
    fn cgroup_path(&mut self, _: u64) -> Option<String> {
        None
    }
    fn btf_func(&mut self, _: u32, _: u32) -> Option<String> {
        None
    }
    fn kprobe_multi_function(&mut self, _: u64) -> Option<String> {
        None
    }
}

const TRACING: u32 = 2;
const CGROUP: u32 = 3;
const NETNS: u32 = 5;
const XDP: u32 = 6;
const KPROBE_MULTI: u32 = 8;
const STRUCT_OPS: u32 = 9;
const NETFILTER: u32 = 10;
const TCX: u32 = 11;
const NETKIT: u32 = 13;
const SOCKMAP: u32 = 14;

const KPROBE_MULTI_RETURN: u32 = 1;
const UPROBE_MULTI_RETURN: u32 = 1;
const NF_IP_DEFRAG: u32 = 1;

/// Union offsets (from the start of the struct) of fields added after the
/// union member first appeared; a shorter info does not have them.
const KPROBE_MULTI_MISSED_END: u32 = 16 + 24;
const PERF_KPROBE_MISSED_END: u32 = 16 + 8 + 32;

fn ifname_or_index(r: &mut dyn Resolve, ifindex: u32) -> String {
    r.ifname(ifindex)
        .unwrap_or_else(|| format!("ifindex {ifindex}"))
}

fn text(name: Option<&[u8]>) -> Option<String> {
    name.filter(|n| !n.is_empty())
        .map(|n| String::from_utf8_lossy(n).into_owned())
}

fn with_offset(base: Option<String>, offset: u32, fallback: impl FnOnce() -> String) -> String {
    match (base, offset) {
        (Some(b), 0) => b,
        (Some(b), off) => format!("{b}+{off:#x}"),
        (None, _) => fallback(),
    }
}

/// bpftool's names for `nfproto` values and their hooks.
fn netfilter_target(nf: &li::Netfilter) -> String {
    let (family, hooks): (String, &[&str]) = match nf.pf {
        1 => (
            "inet".into(),
            &["prerouting", "input", "forward", "output", "postrouting"],
        ),
        2 => (
            "ipv4".into(),
            &["prerouting", "input", "forward", "output", "postrouting"],
        ),
        3 => ("arp".into(), &["input", "output", "forward"]),
        5 => ("netdev".into(), &["ingress", "egress"]),
        7 => (
            "bridge".into(),
            &["prerouting", "input", "forward", "output", "postrouting"],
        ),
        10 => (
            "ipv6".into(),
            &["prerouting", "input", "forward", "output", "postrouting"],
        ),
        n => (format!("pf {n}"), &[]),
    };
    let hook = hooks
        .get(nf.hooknum as usize)
        .map(|h| (*h).to_string())
        .unwrap_or_else(|| format!("hook {}", nf.hooknum));
    let mut s = format!("{family} {hook} prio {}", nf.priority);
    if nf.flags & NF_IP_DEFRAG != 0 {
        s.push_str(" ip_defrag");
    }
    s
}

/// perf_event_attr type/config of a plain perf event, named as `perf
/// list` does for the generic hardware and software events.
fn perf_event_name(type_: u32, config: u64) -> String {
    const HW: &[&str] = &[
        "cpu-cycles",
        "instructions",
        "cache-references",
        "cache-misses",
        "branch-instructions",
        "branch-misses",
        "bus-cycles",
        "stalled-cycles-frontend",
        "stalled-cycles-backend",
        "ref-cycles",
    ];
    const SW: &[&str] = &[
        "cpu-clock",
        "task-clock",
        "page-faults",
        "context-switches",
        "cpu-migrations",
        "minor-faults",
        "major-faults",
        "alignment-faults",
        "emulation-faults",
        "dummy",
        "bpf-output",
        "cgroup-switches",
    ];
    let table = match type_ {
        0 => Some(("hardware", HW)),
        1 => Some(("software", SW)),
        _ => None,
    };
    match table.and_then(|(t, names)| Some((t, *names.get(usize::try_from(config).ok()?)?))) {
        Some((t, n)) => format!("{t} {n}"),
        None => format!("type {type_} config {config:#x}"),
    }
}

/// Decode a fetched link info (`name` is the string its union points at,
/// fetched by the second pass) into its attach point.
pub(crate) fn decode(
    fetched: &FetchedLinkInfo,
    name: Option<&[u8]>,
    r: &mut dyn Resolve,
) -> LinkTarget {
    let i: &BpfLinkInfo = &fetched.info;
    let has = |end: u32| fetched.len >= end;
    let at = |n: u32| Some(names::attach_type(n));
    let mut functions = Vec::new();
    let (attach_type, target) = match i.type_ {
        li::LINK_RAW_TRACEPOINT => (None, text(name)),
        TRACING => tracing_target(i, r),
        CGROUP => {
            let c = i.cgroup();
            let path = r
                .cgroup_path(c.cgroup_id)
                .unwrap_or_else(|| format!("cgroup_id {}", c.cgroup_id));
            (at(c.attach_type), Some(path))
        }
        li::LINK_ITER => (None, Some(iter_target(i, name))),
        NETNS => {
            let n = i.netns();
            (at(n.attach_type), Some(format!("netns:[{}]", n.netns_ino)))
        }
        XDP => (None, Some(ifname_or_index(r, i.xdp().ifindex))),
        TCX => {
            let t = i.tcx();
            (at(t.attach_type), Some(ifname_or_index(r, t.ifindex)))
        }
        NETKIT => {
            let t = i.netkit();
            (at(t.attach_type), Some(ifname_or_index(r, t.ifindex)))
        }
        li::LINK_PERF_EVENT => perf_event(i, name, has(PERF_KPROBE_MISSED_END)),
        // Kernels before 6.6 fill no kprobe_multi info: count 0, which no
        // such link has, so there is nothing to tell (not "func_cnt 0").
        KPROBE_MULTI if i.kprobe_multi().count == 0 => (None, None),
        KPROBE_MULTI => {
            let k = i.kprobe_multi();
            let kind = if k.flags & KPROBE_MULTI_RETURN != 0 {
                "kretprobe_multi"
            } else {
                "kprobe_multi"
            };
            functions = kprobe_multi_functions(name, r);
            let mut t = match functions.as_slice() {
                [] => format!("func_cnt {}", k.count),
                [one] => one.clone(),
                [first, rest @ ..] => format!("{first} +{} more", rest.len()),
            };
            if has(KPROBE_MULTI_MISSED_END) {
                t.push_str(&format!(" missed {}", k.missed));
            }
            (Some(kind.into()), Some(t))
        }
        li::LINK_UPROBE_MULTI => {
            let u = i.uprobe_multi();
            let kind = if u.flags & UPROBE_MULTI_RETURN != 0 {
                "uretprobe_multi"
            } else {
                "uprobe_multi"
            };
            let mut t = text(name).unwrap_or_else(|| "?".into());
            t.push_str(&format!(" func_cnt {}", u.count));
            if u.pid != 0 {
                t.push_str(&format!(" pid {}", u.pid));
            }
            (Some(kind.into()), Some(t))
        }
        NETFILTER => (None, Some(netfilter_target(&i.netfilter()))),
        STRUCT_OPS => (None, Some(format!("map_id {}", i.struct_ops().map_id))),
        SOCKMAP => {
            let s = i.sockmap();
            (at(s.attach_type), Some(format!("map_id {}", s.netns_ino)))
        }
        n => (None, Some(format!("unknown({n})"))),
    };
    LinkTarget {
        attach_type,
        target,
        functions,
    }
}

/// A kprobe_multi link's functions from its address array (8 native-endian
/// bytes each); none when the kernel hid the addresses (all zero). An
/// address kallsyms does not name prints as the address.
fn kprobe_multi_functions(addrs: Option<&[u8]>, r: &mut dyn Resolve) -> Vec<String> {
    let addrs: Vec<u64> = addrs
        .unwrap_or_default()
        .chunks_exact(8)
        .map(|c| u64::from_ne_bytes(<[u8; 8]>::try_from(c).unwrap_or_default()))
        .collect();
    if addrs.iter().all(|&a| a == 0) {
        return Vec::new();
    }
    addrs
        .iter()
        .map(|&a| {
            r.kprobe_multi_function(a)
                .unwrap_or_else(|| format!("{a:#x}"))
        })
        .collect()
}

/// A tracing link's attach type and target function, named from BTF.
fn tracing_target(i: &BpfLinkInfo, r: &mut dyn Resolve) -> (Option<String>, Option<String>) {
    let t = i.tracing();
    let func = (t.target_btf_id != 0)
        .then(|| r.btf_func(t.target_obj_id, t.target_btf_id))
        .flatten();
    let target = match func {
        Some(f) => f,
        None if t.target_btf_id == 0 && t.target_obj_id == 0 => String::new(),
        None => format!(
            "target_obj_id {} target_btf_id {}",
            t.target_obj_id, t.target_btf_id
        ),
    };
    (
        Some(names::attach_type(t.attach_type)),
        Some(target).filter(|s| !s.is_empty()),
    )
}

/// An iterator link's target: its name and the object it walks.
fn iter_target(i: &BpfLinkInfo, name: Option<&[u8]>) -> String {
    let it = i.iter();
    let base = text(name).unwrap_or_else(|| "iter".into());
    if it.map_id != 0 {
        format!("{base} map_id {}", it.map_id)
    } else if base == "cgroup" && it.arg0 != 0 {
        format!("{base} cgroup_id {} order {}", it.arg0, it.arg1)
    } else if base.starts_with("task") && it.task_pid() != 0 {
        format!("{base} pid {}", it.task_pid())
    } else if base.starts_with("task") && it.task_tid() != 0 {
        format!("{base} tid {}", it.task_tid())
    } else {
        base
    }
}

fn perf_event(
    i: &BpfLinkInfo,
    name: Option<&[u8]>,
    has_missed: bool,
) -> (Option<String>, Option<String>) {
    let t = i.perf_event_type();
    match t {
        li::PERF_EVENT_UPROBE | li::PERF_EVENT_URETPROBE => {
            let u = i.perf_uprobe();
            let kind = if t == li::PERF_EVENT_UPROBE {
                "uprobe"
            } else {
                "uretprobe"
            };
            let target = with_offset(text(name), u.offset, || format!("offset {:#x}", u.offset));
            (Some(kind.into()), Some(target))
        }
        li::PERF_EVENT_KPROBE | li::PERF_EVENT_KRETPROBE => {
            let k = i.perf_kprobe();
            let kind = if t == li::PERF_EVENT_KPROBE {
                "kprobe"
            } else {
                "kretprobe"
            };
            let mut target = with_offset(text(name), k.offset, || format!("addr {:#x}", k.addr));
            if has_missed {
                target.push_str(&format!(" missed {}", k.missed));
            }
            (Some(kind.into()), Some(target))
        }
        li::PERF_EVENT_TRACEPOINT => (Some("tracepoint".into()), text(name)),
        li::PERF_EVENT_EVENT => {
            let e = i.perf_event_event();
            (
                Some("event".into()),
                Some(perf_event_name(e.type_, e.config)),
            )
        }
        // BPF_PERF_EVENT_UNSPEC: kernels before 6.6 fill no perf_event
        // link info at all, so there is nothing to tell, as for any link
        // whose target is not known.
        0 => (None, None),
        n => (Some(format!("unknown({n})")), None),
    }
}

/// Read and decode one link.
pub fn read(fd: &OwnedFd, r: &mut dyn Resolve) -> Result<LinkTarget, Errno> {
    let (fetched, name) = li::link_info_with_name(fd.as_fd())?;
    Ok(decode(&fetched, name.as_deref(), r))
}

/// Resolve names from this system, caching what it reads for the life of
/// one listing.
#[derive(Default)]
pub struct SystemNames {
    ifnames: Option<HashMap<u32, String>>,
    cgroups: Option<HashMap<u64, String>>,
    btfs: HashMap<u32, Option<BtfData>>,
    cgroup_mount: Option<Cgroup2Mount>,
    kallsyms: Option<Kallsyms>,
}

impl SystemNames {
    pub fn new() -> SystemNames {
        SystemNames::default()
    }

    /// Walk a different cgroup2 root (tests).
    #[cfg(test)]
    pub(crate) fn with_cgroup_root(root: &Path) -> SystemNames {
        SystemNames {
            cgroup_mount: Some(Cgroup2Mount {
                mount_point: root.to_path_buf(),
                root: "/".into(),
            }),
            ..Default::default()
        }
    }

    fn btf(&mut self, obj_id: u32) -> Option<&BtfData> {
        self.btfs
            .entry(obj_id)
            .or_insert_with(|| {
                let fd = bpf::fd_by_id(ObjKind::Btf, obj_id).ok()?;
                let (info, _, data) = bpf::btf_info(&fd, true).ok()?;
                // Split (module) BTF numbers its types after vmlinux's;
                // the parser numbers from 1, so only standalone blobs and
                // vmlinux itself name correctly.
                let split = info.kernel_btf != 0 && obj_id != vmlinux_btf_id()?;
                (!split).then(|| BtfData::parse(&data))
            })
            .as_ref()
    }
}

/// The id of the vmlinux BTF object: the first kernel BTF named `vmlinux`.
fn vmlinux_btf_id() -> Option<u32> {
    let mut id = 0;
    while let Ok(Some(next)) = bpf::next_id(ObjKind::Btf, id) {
        id = next;
        let Ok(fd) = bpf::fd_by_id(ObjKind::Btf, id) else {
            continue;
        };
        if let Ok((info, name, _)) = bpf::btf_info(&fd, false) {
            if info.kernel_btf != 0 && name == "vmlinux" {
                return Some(id);
            }
        }
    }
    None
}

/// Interface index -> name from `/sys/class/net/*/ifindex`.
pub fn read_ifnames(class_net: &Path) -> HashMap<u32, String> {
    let mut out = HashMap::new();
    let Ok(dir) = std::fs::read_dir(class_net) else {
        return out;
    };
    for e in dir.flatten() {
        let Ok(text) = std::fs::read_to_string(e.path().join("ifindex")) else {
            continue;
        };
        if let Ok(idx) = text.trim().parse::<u32>() {
            out.insert(idx, e.file_name().to_string_lossy().into_owned());
        }
    }
    out
}

impl Resolve for SystemNames {
    fn ifname(&mut self, ifindex: u32) -> Option<String> {
        self.ifnames
            .get_or_insert_with(|| read_ifnames(Path::new("/sys/class/net")))
            .get(&ifindex)
            .cloned()
    }

    fn cgroup_path(&mut self, cgroup_id: u64) -> Option<String> {
        let mount = self.cgroup_mount.clone();
        self.cgroups
            .get_or_insert_with(|| match mount.or_else(cgroups::cgroup2_mount) {
                Some(m) => cgroups::paths_by_id(&m, None),
                None => HashMap::new(),
            })
            .get(&cgroup_id)
            .cloned()
    }

    fn btf_func(&mut self, target_obj_id: u32, btf_id: u32) -> Option<String> {
        if let Some(name) = self.btf(target_obj_id).and_then(|b| b.func_name(btf_id)) {
            return Some(name);
        }
        // freplace and fentry-on-program targets name a program id.
        let fd = bpf::fd_by_id(ObjKind::Prog, target_obj_id).ok()?;
        let d = bpf::prog_detail(&fd, bpf::ProgWant::default()).ok()?;
        let prog_btf = d.info.btf_id;
        if prog_btf == 0 {
            return None;
        }
        let fd = bpf::fd_by_id(ObjKind::Btf, prog_btf).ok()?;
        let (_, _, data) = bpf::btf_info(&fd, true).ok()?;
        BtfData::parse(&data).func_name(btf_id)
    }

    fn kprobe_multi_function(&mut self, addr: u64) -> Option<String> {
        self.kallsyms
            .get_or_insert_with(Kallsyms::load)
            .kprobe_multi_function(addr)
            .map(str::to_string)
    }
}

#[cfg(test)]
#[allow(clippy::string_slice)] // hex digits of recorded inputs
mod tests {
    use super::*;
    use crate::kernel::btf::tests::blob;
    use crate::sys::link_info::*;
    use std::os::unix::fs::MetadataExt;

    /// Names from fixed tables, as a recorded system would give them.
    #[derive(Default)]
    struct Fixed {
        ifs: HashMap<u32, String>,
        cgroups: HashMap<u64, String>,
        btf: Option<BtfData>,
        kallsyms: Option<Kallsyms>,
    }

    impl Resolve for Fixed {
        fn ifname(&mut self, i: u32) -> Option<String> {
            self.ifs.get(&i).cloned()
        }
        fn cgroup_path(&mut self, id: u64) -> Option<String> {
            self.cgroups.get(&id).cloned()
        }
        fn btf_func(&mut self, obj: u32, id: u32) -> Option<String> {
            (obj == 1)
                .then(|| self.btf.as_ref()?.func_name(id))
                .flatten()
        }
        fn kprobe_multi_function(&mut self, addr: u64) -> Option<String> {
            let k = self.kallsyms.as_ref()?;
            k.kprobe_multi_function(addr).map(str::to_string)
        }
    }

    fn full(info: BpfLinkInfo) -> FetchedLinkInfo {
        FetchedLinkInfo { info, len: 64 }
    }

    fn dec(
        info: BpfLinkInfo,
        name: Option<&[u8]>,
        r: &mut dyn Resolve,
    ) -> (Option<String>, Option<String>) {
        let t = decode(&full(info), name, r);
        (t.attach_type, t.target)
    }

    fn s(v: &str) -> Option<String> {
        Some(v.to_string())
    }

    /// The 64 bytes this kernel returned for the fixture's raw_tracepoint
    /// link (its name comes from the second pass).
    #[test]
    fn raw_tracepoint_recorded() {
        let mut raw = [0u8; 64];
        raw[0] = 1;
        raw[4] = 90;
        raw[8..12].copy_from_slice(&1108u32.to_ne_bytes());
        raw[24] = 13; // tp_name_len, NUL included
        let i = BpfLinkInfo::from_bytes(&raw);
        assert_eq!(
            dec(i, Some(b"sched_switch"), &mut NoNames),
            (None, s("sched_switch"))
        );
        assert_eq!(dec(i, None, &mut NoNames), (None, None));
    }

    fn recorded(hex: &str) -> FetchedLinkInfo {
        let bytes: Vec<u8> = (0..hex.len() / 2)
            .map(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).unwrap())
            .collect();
        FetchedLinkInfo {
            info: BpfLinkInfo::from_bytes(&bytes),
            len: bytes.len() as u32,
        }
    }

    /// `bpf_link_info` bytes (after the second pass) recorded on this
    /// machine from the live tests' links.
    #[test]
    fn recorded_infos() {
        let mut r = Fixed::default();
        r.ifs.insert(1, "lo".into());
        r.cgroups.insert(177, "/brr-objects-11279".into());
        // (info bytes, second-pass name, attach type, target)
        type Case<'a> = (&'a str, Option<&'a [u8]>, Option<&'a str>, &'a str);
        let cases: &[Case] = &[
            (
                "03000000f0000000f9ca0e0000000000b1000000000000000000000000000000\
                 0000000000000000000000000000000000000000000000000000000000000000",
                None,
                Some("cgroup_inet_ingress"),
                "/brr-objects-11279",
            ),
            (
                "07000000f3000000feca0e000000000005000000000000000000000000000000\
                 0d00000000000000000000000000000000000000000000000000000000000000",
                Some(b"sched_switch"),
                Some("tracepoint"),
                "sched_switch",
            ),
            (
                "07000000f4000000ffca0e000000000001000000000000000000000000000000\
                 1d00000040000000000000000000000000000000000000000000000000000000",
                Some(b"/tmp/brr-uprobe-target-11279"),
                Some("uprobe"),
                "/tmp/brr-uprobe-target-11279+0x40",
            ),
            (
                "0e000000ea000000f2ca0e000000000000c80e00260000000000000000000000\
                 0000000000000000000000000000000000000000000000000000000000000000",
                None,
                Some("sk_skb_verdict"),
                "map_id 968704",
            ),
            (
                "0c000000f700000004cb0e000000000000000000000000000000000000000000\
                 000000000000000000000000000000001e00000001000000000000000f2c0000",
                Some(b"/tmp/brr-upmulti-target-11279"),
                Some("uprobe_multi"),
                "/tmp/brr-upmulti-target-11279 func_cnt 1 pid 11279",
            ),
            (
                "06000000ec000000f4ca0e000000000001000000000000000000000000000000\
                 0000000000000000000000000000000000000000000000000000000000000000",
                None,
                None,
                "lo",
            ),
            (
                "05000000ed000000f5ca0e0000000000510100f0110000000000000000000000\
                 0000000000000000000000000000000000000000000000000000000000000000",
                None,
                Some("flow_dissector"),
                "netns:[4026532177]",
            ),
            (
                "0b000000fa00000007cb0e0000000000010000002e0000000000000000000000\
                 0000000000000000000000000000000000000000000000000000000000000000",
                None,
                Some("tcx_ingress"),
                "lo",
            ),
            (
                "0a000000fb00000008cb0e000000000002000000010000009cffffff00000000\
                 0000000000000000000000000000000000000000000000000000000000000000",
                None,
                None,
                "ipv4 input prio -100",
            ),
        ];
        for (hex, name, attach, target) in cases {
            let hex: String = hex.split_whitespace().collect();
            let t = decode(&recorded(&hex), *name, &mut r);
            assert_eq!(t.attach_type.as_deref(), *attach, "{hex}");
            assert_eq!(t.target.as_deref(), Some(*target), "{hex}");
        }
    }

    #[test]
    fn tracing_names_the_function_from_btf() {
        let (data, _) = blob("tcp_v4_connect", &[]);
        let mut r = Fixed {
            btf: Some(BtfData::parse(&data)),
            ..Default::default()
        };
        let mut i = BpfLinkInfo::new(2, 5, 6);
        i.set_tracing(Tracing {
            attach_type: 24,
            target_obj_id: 1,
            target_btf_id: 3,
            ..Default::default()
        });
        assert_eq!(
            dec(i, None, &mut r),
            (s("trace_fentry"), s("tcp_v4_connect"))
        );
        let mut unnamed = i.tracing();
        unnamed.target_obj_id = 2;
        i.set_tracing(unnamed);
        assert_eq!(
            dec(i, None, &mut r),
            (s("trace_fentry"), s("target_obj_id 2 target_btf_id 3"))
        );
    }

    #[test]
    fn cgroup_netns_and_interfaces() {
        let mut r = Fixed::default();
        r.ifs.insert(1, "lo".into());
        r.cgroups.insert(4242, "/brr-test".into());
        let mut c = BpfLinkInfo::new(3, 1, 1);
        c.set_cgroup(Cgroup {
            cgroup_id: 4242,
            attach_type: 1,
            ..Default::default()
        });
        assert_eq!(
            dec(c, None, &mut r),
            (s("cgroup_inet_egress"), s("/brr-test"))
        );
        c.set_cgroup(Cgroup {
            cgroup_id: 7,
            attach_type: 1,
            ..Default::default()
        });
        assert_eq!(dec(c, None, &mut r).1, s("cgroup_id 7"));
        let mut n = BpfLinkInfo::new(5, 1, 1);
        n.set_netns(Netns {
            netns_ino: 4026531840,
            attach_type: 17,
        });
        assert_eq!(
            dec(n, None, &mut r),
            (s("flow_dissector"), s("netns:[4026531840]"))
        );
        let mut x = BpfLinkInfo::new(6, 1, 1);
        x.set_xdp(Ifindex {
            ifindex: 1,
            attach_type: 0,
        });
        assert_eq!(dec(x, None, &mut r), (None, s("lo")));
        x.set_xdp(Ifindex {
            ifindex: 9,
            attach_type: 0,
        });
        assert_eq!(dec(x, None, &mut r), (None, s("ifindex 9")));
        let mut t = BpfLinkInfo::new(11, 1, 1);
        t.set_tcx(Ifindex {
            ifindex: 1,
            attach_type: 47,
        });
        assert_eq!(dec(t, None, &mut r), (s("tcx_egress"), s("lo")));
        let mut k = BpfLinkInfo::new(13, 1, 1);
        k.set_netkit(Ifindex {
            ifindex: 1,
            attach_type: 55,
        });
        assert_eq!(dec(k, None, &mut r), (s("netkit_peer"), s("lo")));
        // An attach type past the table keeps its row as `unknown(N)`.
        let mut u = BpfLinkInfo::new(11, 1, 1);
        u.set_tcx(Ifindex {
            ifindex: 1,
            attach_type: 200,
        });
        assert_eq!(dec(u, None, &mut r), (s("unknown(200)"), s("lo")));
    }

    /// A kprobe_multi link's address array names its functions through
    /// kallsyms, at the symbol (no IBT) or 4 past it (IBT), in the kernel's
    /// order; TARGET shows the first and how many more.
    #[test]
    fn kprobe_multi_functions_from_addresses() {
        let mut r = Fixed {
            kallsyms: Some(Kallsyms::parse(
                "ffffffff81000100 T vfs_read\nffffffff81000200 T vfs_write\n",
            )),
            ..Default::default()
        };
        let mut k = BpfLinkInfo::new(8, 1, 1);
        k.set_kprobe_multi(KprobeMulti {
            count: 3,
            missed: 2,
            ..Default::default()
        });
        let addrs: Vec<u8> = [
            0xffffffff81000104u64,
            0xffffffff81000200,
            0xffffffff81000150,
        ]
        .iter()
        .flat_map(|a| a.to_ne_bytes())
        .collect();
        let t = decode(&full(k), Some(&addrs), &mut r);
        assert_eq!(t.attach_type, s("kprobe_multi"));
        assert_eq!(t.target, s("vfs_read +2 more missed 2"));
        assert_eq!(t.functions, ["vfs_read", "vfs_write", "0xffffffff81000150"]);
        // One function: its name alone.
        k.set_kprobe_multi(KprobeMulti {
            count: 1,
            ..Default::default()
        });
        let t = decode(&full(k), Some(&addrs[8..16]), &mut r);
        assert_eq!(t.target, s("vfs_write missed 0"));
        // Addresses hidden from this user (all zero): the count only.
        let t = decode(&full(k), Some(&[0u8; 8]), &mut r);
        assert_eq!((t.target, t.functions), (s("func_cnt 1 missed 0"), vec![]));
    }

    #[test]
    fn probes_and_events() {
        let mut k = BpfLinkInfo::new(8, 1, 1);
        k.set_kprobe_multi(KprobeMulti {
            count: 3,
            flags: 1,
            missed: 12,
            ..Default::default()
        });
        assert_eq!(
            dec(k, None, &mut NoNames),
            (s("kretprobe_multi"), s("func_cnt 3 missed 12"))
        );
        let mut u = BpfLinkInfo::new(12, 1, 1);
        u.set_uprobe_multi(UprobeMulti {
            count: 2,
            pid: 77,
            ..Default::default()
        });
        assert_eq!(
            dec(u, Some(b"/usr/bin/bash"), &mut NoNames),
            (s("uprobe_multi"), s("/usr/bin/bash func_cnt 2 pid 77"))
        );
        let mut p = BpfLinkInfo::new(7, 1, 1);
        p.set_perf_kprobe(
            PERF_EVENT_KRETPROBE,
            PerfKprobe {
                offset: 0x10,
                missed: 1,
                ..Default::default()
            },
        );
        assert_eq!(
            dec(p, Some(b"do_sys_openat2"), &mut NoNames),
            (s("kretprobe"), s("do_sys_openat2+0x10 missed 1"))
        );
        p.set_perf_uprobe(
            PERF_EVENT_UPROBE,
            PerfUprobe {
                offset: 0x1234,
                ..Default::default()
            },
        );
        assert_eq!(
            dec(p, Some(b"/lib/libc.so.6"), &mut NoNames),
            (s("uprobe"), s("/lib/libc.so.6+0x1234"))
        );
        p.set_perf_tracepoint(PerfTracepoint::default());
        assert_eq!(
            dec(p, Some(b"sys_enter_openat"), &mut NoNames),
            (s("tracepoint"), s("sys_enter_openat"))
        );
        p.set_perf_event_event(PerfEventEvent {
            config: 0,
            type_: 1,
            ..Default::default()
        });
        assert_eq!(dec(p, None, &mut NoNames).1, s("software cpu-clock"));
        p.set_perf_event_event(PerfEventEvent {
            config: 0x1c2,
            type_: 8,
            ..Default::default()
        });
        assert_eq!(dec(p, None, &mut NoNames).1, s("type 8 config 0x1c2"));
        p.set_perf_event_type(9);
        assert_eq!(dec(p, None, &mut NoNames), (s("unknown(9)"), None));
        // A 6.1 kernel leaves the union zero: no attach type, no target.
        p.set_perf_event_type(0);
        assert_eq!(dec(p, None, &mut NoNames), (None, None));
    }

    #[test]
    fn netfilter_struct_ops_sockmap_iter_unknown() {
        let mut n = BpfLinkInfo::new(10, 1, 1);
        n.set_netfilter(Netfilter {
            pf: 2,
            hooknum: 0,
            priority: -128,
            flags: 1,
        });
        assert_eq!(
            dec(n, None, &mut NoNames),
            (None, s("ipv4 prerouting prio -128 ip_defrag"))
        );
        n.set_netfilter(Netfilter {
            pf: 99,
            hooknum: 9,
            priority: 5,
            flags: 0,
        });
        assert_eq!(dec(n, None, &mut NoNames).1, s("pf 99 hook 9 prio 5"));
        let mut so = BpfLinkInfo::new(9, 1, 0);
        so.set_struct_ops(StructOps { map_id: 33 });
        assert_eq!(dec(so, None, &mut NoNames), (None, s("map_id 33")));
        let mut sm = BpfLinkInfo::new(14, 1, 1);
        sm.set_sockmap(Netns {
            netns_ino: 4,
            attach_type: 38,
        });
        assert_eq!(
            dec(sm, None, &mut NoNames),
            (s("sk_skb_verdict"), s("map_id 4"))
        );
        let mut it = BpfLinkInfo::new(4, 1, 1);
        it.set_iter(Iter {
            map_id: 12,
            ..Default::default()
        });
        assert_eq!(
            dec(it, Some(b"bpf_map_elem"), &mut NoNames).1,
            s("bpf_map_elem map_id 12")
        );
        it.set_iter(Iter::default());
        assert_eq!(dec(it, Some(b"task"), &mut NoNames).1, s("task"));
        assert_eq!(
            dec(BpfLinkInfo::new(99, 1, 1), None, &mut NoNames),
            (None, s("unknown(99)"))
        );
        assert_eq!(
            dec(BpfLinkInfo::new(0, 1, 1), None, &mut NoNames),
            (None, s("unknown(0)"))
        );
    }

    /// An info cut short (an older kernel's struct) decodes the fields it
    /// has and leaves out those past its end.
    #[test]
    fn truncated_infos() {
        let mut k = BpfLinkInfo::new(8, 1, 1);
        k.set_kprobe_multi(KprobeMulti {
            count: 4,
            missed: 9,
            ..Default::default()
        });
        let short = FetchedLinkInfo { info: k, len: 32 };
        assert_eq!(decode(&short, None, &mut NoNames).target, s("func_cnt 4"));
        let mut p = BpfLinkInfo::new(7, 1, 1);
        p.set_perf_kprobe(PERF_EVENT_KPROBE, PerfKprobe::default());
        let short = FetchedLinkInfo { info: p, len: 48 };
        assert_eq!(
            decode(&short, Some(b"vfs_read"), &mut NoNames).target,
            s("vfs_read")
        );
        for n in 0..=64usize {
            let mut raw = [0xa5u8; 64];
            for t in 0..16u8 {
                raw[0] = t;
                let info = BpfLinkInfo::from_bytes(&raw[..n]);
                let _ = decode(
                    &FetchedLinkInfo {
                        info,
                        len: n as u32,
                    },
                    Some(&raw[..n]),
                    &mut NoNames,
                );
            }
        }
    }

    #[test]
    fn system_tables() {
        let root = std::env::temp_dir().join(format!("brr-cg-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(root.join("a/b")).unwrap();
        let ino = std::fs::metadata(root.join("a/b")).unwrap().ino();
        let mut r = SystemNames::with_cgroup_root(&root);
        assert_eq!(r.cgroup_path(ino).as_deref(), Some("/a/b"));
        let _ = std::fs::remove_dir_all(&root);
        let ifs = read_ifnames(Path::new("/sys/class/net"));
        if Path::new("/sys/class/net/lo").exists() {
            assert!(ifs.values().any(|n| n == "lo"));
        }
        assert!(read_ifnames(Path::new("/nonexistent-brr")).is_empty());
    }
}
