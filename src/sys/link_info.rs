//! `struct bpf_link_info` with its complete per-type union (UAPI
//! include/uapi/linux/bpf.h, 6.x), and a fetch that fills the name
//! buffers the union points at.

use std::os::fd::{AsFd, BorrowedFd};

use super::bpf::{get_info, Pod};
use super::Errno;

#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct RawTracepoint {
    pub tp_name: u64,
    pub tp_name_len: u32,
    pub _pad: u32,
    pub cookie: u64,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct Tracing {
    pub attach_type: u32,
    /// The target program's id for freplace, otherwise a BTF object id.
    pub target_obj_id: u32,
    pub target_btf_id: u32,
    pub _pad: u32,
    pub cookie: u64,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct Cgroup {
    pub cgroup_id: u64,
    pub attach_type: u32,
    pub _pad: u32,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct Iter {
    pub target_name: u64,
    pub target_name_len: u32,
    /// `map.map_id` for map element iterators.
    pub map_id: u32,
    /// `cgroup.cgroup_id` / (`task.tid`, `task.pid`) share these bytes.
    pub arg0: u64,
    /// `cgroup.order`.
    pub arg1: u32,
    pub _pad: u32,
}

impl Iter {
    pub(crate) fn task_tid(&self) -> u32 {
        self.arg0 as u32
    }
    pub(crate) fn task_pid(&self) -> u32 {
        (self.arg0 >> 32) as u32
    }
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct Netns {
    pub netns_ino: u32,
    pub attach_type: u32,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct Ifindex {
    pub ifindex: u32,
    /// Present for tcx and netkit; xdp has only the ifindex.
    pub attach_type: u32,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct StructOps {
    pub map_id: u32,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct Netfilter {
    pub pf: u32,
    pub hooknum: u32,
    pub priority: i32,
    pub flags: u32,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct KprobeMulti {
    pub addrs: u64,
    pub count: u32,
    pub flags: u32,
    pub missed: u64,
    pub cookies: u64,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct UprobeMulti {
    pub path: u64,
    pub offsets: u64,
    pub ref_ctr_offsets: u64,
    pub cookies: u64,
    pub path_size: u32,
    pub count: u32,
    pub flags: u32,
    pub pid: u32,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct PerfUprobe {
    pub file_name: u64,
    pub name_len: u32,
    pub offset: u32,
    pub cookie: u64,
    pub ref_ctr_offset: u64,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct PerfKprobe {
    pub func_name: u64,
    pub name_len: u32,
    pub offset: u32,
    pub addr: u64,
    pub missed: u64,
    pub cookie: u64,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct PerfTracepoint {
    pub tp_name: u64,
    pub name_len: u32,
    pub _pad: u32,
    pub cookie: u64,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct PerfEventEvent {
    pub config: u64,
    pub type_: u32,
    pub _pad: u32,
    pub cookie: u64,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub(crate) union PerfEventUnion {
    uprobe: PerfUprobe,
    kprobe: PerfKprobe,
    tracepoint: PerfTracepoint,
    event: PerfEventEvent,
}

#[repr(C)]
#[derive(Clone, Copy)]
struct PerfEvent {
    /// `enum bpf_perf_event_type`.
    type_: u32,
    _pad: u32,
    u: PerfEventUnion,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub(crate) union LinkUnion {
    raw_tracepoint: RawTracepoint,
    tracing: Tracing,
    cgroup: Cgroup,
    iter: Iter,
    netns: Netns,
    xdp: Ifindex,
    struct_ops: StructOps,
    netfilter: Netfilter,
    kprobe_multi: KprobeMulti,
    uprobe_multi: UprobeMulti,
    perf_event: PerfEvent,
    tcx: Ifindex,
    netkit: Ifindex,
    /// `sockmap {map_id, attach_type}`.
    sockmap: Netns,
    raw: [u64; 6],
}

/// `struct bpf_link_info`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct BpfLinkInfo {
    pub type_: u32,
    pub id: u32,
    pub prog_id: u32,
    pub _pad: u32,
    /// Private: a union value built outside would leave bytes of the larger
    /// members uninitialised, and every view here reads all of its bytes.
    u: LinkUnion,
}

const _: () = assert!(std::mem::size_of::<RawTracepoint>() == 24);
const _: () = assert!(std::mem::size_of::<Tracing>() == 24);
const _: () = assert!(std::mem::size_of::<Cgroup>() == 16);
const _: () = assert!(std::mem::size_of::<Iter>() == 32);
const _: () = assert!(std::mem::size_of::<Netfilter>() == 16);
const _: () = assert!(std::mem::size_of::<KprobeMulti>() == 32);
const _: () = assert!(std::mem::size_of::<UprobeMulti>() == 48);
const _: () = assert!(std::mem::size_of::<PerfUprobe>() == 32);
const _: () = assert!(std::mem::size_of::<PerfKprobe>() == 40);
const _: () = assert!(std::mem::size_of::<PerfTracepoint>() == 24);
const _: () = assert!(std::mem::size_of::<PerfEventEvent>() == 24);
const _: () = assert!(std::mem::size_of::<PerfEvent>() == 48);
const _: () = assert!(std::mem::size_of::<LinkUnion>() == 48);
const _: () = assert!(std::mem::size_of::<BpfLinkInfo>() == 64);
const _: () = assert!(std::mem::offset_of!(BpfLinkInfo, u) == 16);

// SAFETY: #[repr(C)]; integers, integer arrays and unions of such only.
unsafe impl Pod for BpfLinkInfo {}

/// Accessors for the union's views. Every view is plain integers, so
/// reading any of them is sound whatever the link type; which one is
/// meaningful is the caller's business (by `type_`).
impl BpfLinkInfo {
    pub fn zeroed() -> BpfLinkInfo {
        Pod::zeroed()
    }

    /// The struct from the first bytes of `raw` (a recorded or short read);
    /// what is missing reads as zero.
    #[cfg(test)]
    pub(crate) fn from_bytes(raw: &[u8]) -> BpfLinkInfo {
        Pod::from_prefix(raw)
    }

    /// The raw bytes, for recording infos as test inputs.
    pub fn to_bytes(self) -> [u8; 64] {
        // SAFETY: BpfLinkInfo is 64 bytes of plain integers (size-asserted
        // above), so its bytes are initialised and any [u8; 64] view is valid.
        unsafe { std::mem::transmute_copy(&self) }
    }

    #[cfg(test)]
    pub(crate) fn new(type_: u32, id: u32, prog_id: u32) -> BpfLinkInfo {
        let mut i = BpfLinkInfo::zeroed();
        i.type_ = type_;
        i.id = id;
        i.prog_id = prog_id;
        i
    }
}

macro_rules! views {
    ($($get:ident, $set:ident: $field:ident => $t:ty;)*) => {
        impl BpfLinkInfo {
            $(
                pub fn $get(&self) -> $t {
                    // SAFETY: all union views are integer-only Pod structs.
                    unsafe { self.u.$field }
                }
                pub fn $set(&mut self, v: $t) {
                    self.u.$field = v;
                }
            )*
        }
    };
}

views! {
    raw_tracepoint, set_raw_tracepoint: raw_tracepoint => RawTracepoint;
    tracing, set_tracing: tracing => Tracing;
    cgroup, set_cgroup: cgroup => Cgroup;
    iter, set_iter: iter => Iter;
    netns, set_netns: netns => Netns;
    xdp, set_xdp: xdp => Ifindex;
    struct_ops, set_struct_ops: struct_ops => StructOps;
    netfilter, set_netfilter: netfilter => Netfilter;
    kprobe_multi, set_kprobe_multi: kprobe_multi => KprobeMulti;
    uprobe_multi, set_uprobe_multi: uprobe_multi => UprobeMulti;
    tcx, set_tcx: tcx => Ifindex;
    netkit, set_netkit: netkit => Ifindex;
    sockmap, set_sockmap: sockmap => Netns;
}

impl BpfLinkInfo {
    pub(crate) fn perf_event_type(&self) -> u32 {
        // SAFETY: integer-only union view.
        unsafe { self.u.perf_event.type_ }
    }
    pub(crate) fn perf_uprobe(&self) -> PerfUprobe {
        // SAFETY: integer-only union view.
        unsafe { self.u.perf_event.u.uprobe }
    }
    pub(crate) fn perf_kprobe(&self) -> PerfKprobe {
        // SAFETY: integer-only union view.
        unsafe { self.u.perf_event.u.kprobe }
    }
    pub(crate) fn perf_tracepoint(&self) -> PerfTracepoint {
        // SAFETY: integer-only union view.
        unsafe { self.u.perf_event.u.tracepoint }
    }
    pub(crate) fn perf_event_event(&self) -> PerfEventEvent {
        // SAFETY: integer-only union view.
        unsafe { self.u.perf_event.u.event }
    }
    // The setters assign one member in place, so the union's other bytes
    // keep their (initialised) values.
    pub(crate) fn set_perf_uprobe(&mut self, type_: u32, v: PerfUprobe) {
        self.u.perf_event.type_ = type_;
        self.u.perf_event.u.uprobe = v;
    }
    pub(crate) fn set_perf_kprobe(&mut self, type_: u32, v: PerfKprobe) {
        self.u.perf_event.type_ = type_;
        self.u.perf_event.u.kprobe = v;
    }
    pub(crate) fn set_perf_tracepoint(&mut self, v: PerfTracepoint) {
        self.u.perf_event.type_ = PERF_EVENT_TRACEPOINT;
        self.u.perf_event.u.tracepoint = v;
    }
    #[cfg(test)]
    pub(crate) fn set_perf_event_event(&mut self, v: PerfEventEvent) {
        self.u.perf_event.type_ = PERF_EVENT_EVENT;
        self.u.perf_event.u.event = v;
    }
    /// Only the perf event type (an unknown one has no member to set).
    #[cfg(test)]
    pub(crate) fn set_perf_event_type(&mut self, type_: u32) {
        self.u.perf_event.type_ = type_;
    }
}

pub(crate) const LINK_RAW_TRACEPOINT: u32 = 1;
pub(crate) const LINK_ITER: u32 = 4;
pub(crate) const LINK_PERF_EVENT: u32 = 7;
pub(crate) const LINK_KPROBE_MULTI: u32 = 8;
pub(crate) const LINK_UPROBE_MULTI: u32 = 12;

pub(crate) const PERF_EVENT_UPROBE: u32 = 1;
pub(crate) const PERF_EVENT_URETPROBE: u32 = 2;
pub(crate) const PERF_EVENT_KPROBE: u32 = 3;
pub(crate) const PERF_EVENT_KRETPROBE: u32 = 4;
pub(crate) const PERF_EVENT_TRACEPOINT: u32 = 5;
pub(crate) const PERF_EVENT_EVENT: u32 = 6;

/// A link's info as the kernel filled it.
#[derive(Clone, Copy)]
pub struct FetchedLinkInfo {
    pub info: BpfLinkInfo,
    /// Bytes of `info` the kernel wrote: less than 64 on older kernels.
    pub len: u32,
}

/// A link's info in one call, without the names its union points at
/// (enough for its id, type and program).
pub fn link_info(fd: impl AsFd) -> Result<FetchedLinkInfo, Errno> {
    let mut info = BpfLinkInfo::zeroed();
    let len = get_info(fd, &mut info)?;
    Ok(FetchedLinkInfo { info, len })
}

/// Longest name fetched: PATH_MAX, for uprobe paths.
const NAME_MAX: usize = 4096;
/// Most kprobe_multi addresses fetched (8 MiB); a link with more keeps
/// its count only.
const ADDRS_MAX: usize = 1 << 20;

/// A kprobe_multi link's info again with room for its `count` addresses:
/// the addresses in native byte order, 8 bytes each (all zero when the
/// kernel hides addresses from this user, as /proc/kallsyms does).
fn kprobe_multi_addrs(
    fd: BorrowedFd<'_>,
    first: FetchedLinkInfo,
) -> Result<(FetchedLinkInfo, Option<Vec<u8>>), Errno> {
    let count = first.info.kprobe_multi().count as usize;
    if count == 0 || count > ADDRS_MAX {
        return Ok((first, None));
    }
    let mut buf = vec![0u64; count];
    let mut again = BpfLinkInfo::zeroed();
    again.set_kprobe_multi(KprobeMulti {
        addrs: buf.as_mut_ptr() as u64,
        count: count as u32,
        ..Default::default()
    });
    // `buf` outlives the call and holds `count` addresses, as told to the
    // kernel.
    let Ok(len) = get_info(fd, &mut again) else {
        return Ok((first, None));
    };
    if again.type_ != LINK_KPROBE_MULTI || again.kprobe_multi().count as usize != count {
        return Ok((first, None));
    }
    let bytes = buf.iter().flat_map(|a| a.to_ne_bytes()).collect();
    Ok((
        FetchedLinkInfo {
            info: clear_pointers(again),
            len,
        },
        Some(bytes),
    ))
}

/// Read a link's info, then for the types whose union points at a string
/// (raw_tracepoint and perf_event tracepoint names, the iterator target,
/// the uprobe path, the kprobe function) a second call with a buffer for
/// it. Returns the info of the second call when there is one and the name
/// (without its NUL); a second call that fails (the link went, or the
/// kernel refuses the buffer) leaves the name out rather than failing.
/// For a kprobe_multi link the "name" is its address array (see
/// [`kprobe_multi_addrs`]).
pub fn link_info_with_name(
    fd: BorrowedFd<'_>,
) -> Result<(FetchedLinkInfo, Option<Vec<u8>>), Errno> {
    let mut info = BpfLinkInfo::zeroed();
    let len = get_info(fd, &mut info)?;
    let first = FetchedLinkInfo { info, len };
    let want = match info.type_ {
        LINK_RAW_TRACEPOINT => info.raw_tracepoint().tp_name_len as usize,
        LINK_ITER => info.iter().target_name_len as usize,
        LINK_UPROBE_MULTI => info.uprobe_multi().path_size as usize,
        LINK_KPROBE_MULTI => return kprobe_multi_addrs(fd, first),
        LINK_PERF_EVENT => match info.perf_event_type() {
            PERF_EVENT_UPROBE | PERF_EVENT_URETPROBE => info.perf_uprobe().name_len as usize,
            PERF_EVENT_KPROBE | PERF_EVENT_KRETPROBE => info.perf_kprobe().name_len as usize,
            PERF_EVENT_TRACEPOINT => info.perf_tracepoint().name_len as usize,
            _ => return Ok((first, None)),
        },
        _ => return Ok((first, None)),
    };
    // Kernels that do not report the length on a NULL buffer get a
    // generous one; the length includes the NUL.
    let size = if want == 0 {
        512
    } else {
        want.saturating_add(1)
    }
    .min(NAME_MAX);
    let mut buf = vec![0u8; size];
    let ptr = buf.as_mut_ptr() as u64;
    let n = size as u32;
    let mut again = BpfLinkInfo::zeroed();
    match info.type_ {
        LINK_RAW_TRACEPOINT => again.set_raw_tracepoint(RawTracepoint {
            tp_name: ptr,
            tp_name_len: n,
            ..Default::default()
        }),
        LINK_ITER => again.set_iter(Iter {
            target_name: ptr,
            target_name_len: n,
            ..Default::default()
        }),
        LINK_UPROBE_MULTI => again.set_uprobe_multi(UprobeMulti {
            path: ptr,
            path_size: n,
            ..Default::default()
        }),
        _ => match info.perf_event_type() {
            t @ (PERF_EVENT_UPROBE | PERF_EVENT_URETPROBE) => again.set_perf_uprobe(
                t,
                PerfUprobe {
                    file_name: ptr,
                    name_len: n,
                    ..Default::default()
                },
            ),
            t @ (PERF_EVENT_KPROBE | PERF_EVENT_KRETPROBE) => again.set_perf_kprobe(
                t,
                PerfKprobe {
                    func_name: ptr,
                    name_len: n,
                    ..Default::default()
                },
            ),
            _ => again.set_perf_tracepoint(PerfTracepoint {
                tp_name: ptr,
                name_len: n,
                ..Default::default()
            }),
        },
    }
    // `buf` outlives the call and is `n` bytes long, as told to the kernel.
    let Ok(len2) = get_info(fd, &mut again) else {
        return Ok((first, None));
    };
    if again.type_ != info.type_ {
        return Ok((first, None));
    }
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    buf.truncate(end);
    Ok((
        FetchedLinkInfo {
            info: clear_pointers(again),
            len: len2,
        },
        Some(buf),
    ))
}

/// Pointers into our buffers would dangle once returned.
fn clear_pointers(mut i: BpfLinkInfo) -> BpfLinkInfo {
    match i.type_ {
        LINK_RAW_TRACEPOINT => {
            let mut r = i.raw_tracepoint();
            r.tp_name = 0;
            i.set_raw_tracepoint(r);
        }
        LINK_ITER => {
            let mut r = i.iter();
            r.target_name = 0;
            i.set_iter(r);
        }
        LINK_UPROBE_MULTI => {
            let mut r = i.uprobe_multi();
            r.path = 0;
            i.set_uprobe_multi(r);
        }
        LINK_KPROBE_MULTI => {
            let mut r = i.kprobe_multi();
            r.addrs = 0;
            r.cookies = 0;
            i.set_kprobe_multi(r);
        }
        LINK_PERF_EVENT => match i.perf_event_type() {
            t @ (PERF_EVENT_UPROBE | PERF_EVENT_URETPROBE) => {
                let v = PerfUprobe {
                    file_name: 0,
                    ..i.perf_uprobe()
                };
                i.set_perf_uprobe(t, v);
            }
            t @ (PERF_EVENT_KPROBE | PERF_EVENT_KRETPROBE) => {
                let v = PerfKprobe {
                    func_name: 0,
                    ..i.perf_kprobe()
                };
                i.set_perf_kprobe(t, v);
            }
            PERF_EVENT_TRACEPOINT => {
                let v = PerfTracepoint {
                    tp_name: 0,
                    ..i.perf_tracepoint()
                };
                i.set_perf_tracepoint(v);
            }
            _ => {}
        },
        _ => {}
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_bytes_leave_the_tail_zero() {
        let mut raw = vec![0u8; 40];
        raw[0] = 8; // kprobe_multi
        raw[4] = 3;
        raw[16 + 8] = 5; // count
        raw[16 + 12] = 1; // flags
        let i = BpfLinkInfo::from_bytes(&raw);
        assert_eq!((i.type_, i.id), (8, 3));
        let k = i.kprobe_multi();
        assert_eq!((k.count, k.flags, k.missed), (5, 1, 0));
        let big = BpfLinkInfo::from_bytes(&[0xffu8; 200]);
        assert_eq!(big.type_, u32::MAX);
        assert_eq!(BpfLinkInfo::from_bytes(&[]).type_, 0);
    }

    #[test]
    fn views_share_the_union_bytes() {
        let mut i = BpfLinkInfo::new(11, 1, 2);
        i.set_tcx(Ifindex {
            ifindex: 7,
            attach_type: 46,
        });
        assert_eq!(i.netkit().ifindex, 7);
        assert_eq!(i.xdp().ifindex, 7);
        let mut t = BpfLinkInfo::new(4, 1, 2);
        t.set_iter(Iter {
            arg0: (9u64 << 32) | 4,
            ..Default::default()
        });
        assert_eq!((t.iter().task_tid(), t.iter().task_pid()), (4, 9));
        let p = clear_pointers({
            let mut p = BpfLinkInfo::new(LINK_PERF_EVENT, 1, 1);
            p.set_perf_kprobe(
                PERF_EVENT_KPROBE,
                PerfKprobe {
                    func_name: 0xdead,
                    offset: 4,
                    ..Default::default()
                },
            );
            p
        });
        // A smaller member set after a larger one keeps the larger one's
        // tail bytes (all initialised).
        let mut u = BpfLinkInfo::new(LINK_PERF_EVENT, 1, 1);
        u.set_perf_kprobe(
            PERF_EVENT_KPROBE,
            PerfKprobe {
                cookie: 7,
                ..Default::default()
            },
        );
        u.set_perf_uprobe(PERF_EVENT_UPROBE, PerfUprobe::default());
        assert_eq!(u.perf_kprobe().cookie, 7);
        assert_eq!(u.to_bytes()[16], PERF_EVENT_UPROBE as u8);
        assert_eq!((p.perf_kprobe().func_name, p.perf_kprobe().offset), (0, 4));
    }
}
