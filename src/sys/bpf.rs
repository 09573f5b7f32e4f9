//! Raw `bpf()` commands used by brr (read-only: enumeration, info, stats).
//!
//! Info structs mirror the UAPI layouts up to the fields brr reads. The kernel
//! copies `min(our size, its size)` bytes, so an older kernel leaves the tail
//! zeroed and a newer one simply does not write what we did not ask for.

use std::ffi::CStr;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};

use super::Errno;

// enum bpf_cmd: the read-only commands brr issues.
const BPF_MAP_LOOKUP_ELEM: u32 = 1;
const BPF_OBJ_GET: u32 = 7;
const BPF_PROG_GET_NEXT_ID: u32 = 11;
const BPF_MAP_GET_NEXT_ID: u32 = 12;
const BPF_PROG_GET_FD_BY_ID: u32 = 13;
const BPF_MAP_GET_FD_BY_ID: u32 = 14;
const BPF_OBJ_GET_INFO_BY_FD: u32 = 15;
const BPF_BTF_GET_FD_BY_ID: u32 = 19;
const BPF_TASK_FD_QUERY: u32 = 20;
const BPF_BTF_GET_NEXT_ID: u32 = 23;
const BPF_LINK_GET_FD_BY_ID: u32 = 30;
const BPF_LINK_GET_NEXT_ID: u32 = 31;
const BPF_ENABLE_STATS: u32 = 32;
const BPF_STATS_RUN_TIME: u32 = 0;

/// The four kinds of kernel objects brr enumerates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ObjKind {
    Prog,
    Map,
    Link,
    Btf,
}

impl ObjKind {
    fn next_id_cmd(self) -> u32 {
        match self {
            ObjKind::Prog => BPF_PROG_GET_NEXT_ID,
            ObjKind::Map => BPF_MAP_GET_NEXT_ID,
            ObjKind::Link => BPF_LINK_GET_NEXT_ID,
            ObjKind::Btf => BPF_BTF_GET_NEXT_ID,
        }
    }
    fn fd_by_id_cmd(self) -> u32 {
        match self {
            ObjKind::Prog => BPF_PROG_GET_FD_BY_ID,
            ObjKind::Map => BPF_MAP_GET_FD_BY_ID,
            ObjKind::Link => BPF_LINK_GET_FD_BY_ID,
            ObjKind::Btf => BPF_BTF_GET_FD_BY_ID,
        }
    }
}

#[repr(C)]
#[derive(Default)]
struct NextIdAttr {
    start_id: u32,
    next_id: u32,
    open_flags: u32,
    token_fd: i32,
}

#[repr(C)]
#[derive(Default)]
struct FdByIdAttr {
    id: u32,
    open_flags: u32,
    token_fd: i32,
}

#[repr(C)]
#[derive(Default)]
struct InfoAttr {
    bpf_fd: u32,
    info_len: u32,
    info: u64,
}

#[repr(C)]
#[derive(Default)]
struct MapElemAttr {
    map_fd: u32,
    _pad: u32,
    key: u64,
    value: u64,
    flags: u64,
}

const _: () = assert!(std::mem::size_of::<MapElemAttr>() == 32);

#[repr(C)]
#[derive(Default)]
struct ObjGetAttr {
    pathname: u64,
    bpf_fd: u32,
    file_flags: u32,
    path_fd: i32,
    _pad: u32,
}

#[repr(C)]
#[derive(Default)]
struct EnableStatsAttr {
    kind: u32,
}

/// `bpf_attr.task_fd_query`.
#[repr(C)]
#[derive(Default)]
struct TaskFdQueryAttr {
    pid: u32,
    fd: u32,
    flags: u32,
    buf_len: u32,
    buf: u64,
    prog_id: u32,
    fd_type: u32,
    probe_offset: u64,
    probe_addr: u64,
}

const _: () = assert!(std::mem::size_of::<TaskFdQueryAttr>() == 48);
const _: () = assert!(std::mem::size_of::<NextIdAttr>() == 16);
const _: () = assert!(std::mem::size_of::<FdByIdAttr>() == 12);
const _: () = assert!(std::mem::size_of::<InfoAttr>() == 16);
const _: () = assert!(std::mem::size_of::<ObjGetAttr>() == 24);

/// Issue one bpf() command with `attr`; returns the non-negative result.
///
/// Safe to call only from this module, whose callers pass attrs whose
/// embedded pointers (if any) are valid for the command; others go through
/// [`command`].
fn bpf<T>(cmd: u32, attr: &mut T) -> Result<i64, Errno> {
    // SAFETY: `attr` is a live, exclusively borrowed value of exactly
    // size_of::<T>() bytes, so the kernel reads/writes at most that many
    // bytes of it; the pointers inside are valid (see above).
    let rc = unsafe {
        libc::syscall(
            libc::SYS_bpf,
            cmd as libc::c_long,
            attr as *mut T as *mut libc::c_void,
            std::mem::size_of::<T>() as libc::c_uint,
        )
    };
    if rc < 0 {
        Err(Errno::last())
    } else {
        Ok(rc)
    }
}

fn owned_fd(rc: i64) -> OwnedFd {
    // SAFETY: only called with the result of a successful fd-returning bpf()
    // command, a fresh fd that nothing else owns.
    unsafe { OwnedFd::from_raw_fd(rc as RawFd) }
}

/// `bpf(cmd, attr, sizeof(*attr))` for commands brr itself never issues
/// (the test fixtures load programs with it).
///
/// # Safety
/// `T` must be the `#[repr(C)]` attr layout of `cmd`, and every pointer
/// stored in `attr` (as a `u64`) must be zero or valid for the reads and
/// writes the kernel performs for `cmd` for the duration of the call.
pub unsafe fn command<T>(cmd: u32, attr: &mut T) -> Result<i64, Errno> {
    bpf(cmd, attr)
}

/// [`command`] for commands that return a new file descriptor.
///
/// # Safety
/// As for [`command`]; additionally a non-negative result of `cmd` must be
/// a newly created file descriptor.
pub unsafe fn command_fd<T>(cmd: u32, attr: &mut T) -> Result<OwnedFd, Errno> {
    bpf(cmd, attr).map(owned_fd)
}

/// The next ID after `start` of this kind, or `None` when the walk is over.
pub fn next_id(kind: ObjKind, start: u32) -> Result<Option<u32>, Errno> {
    let mut attr = NextIdAttr {
        start_id: start,
        ..Default::default()
    };
    match bpf(kind.next_id_cmd(), &mut attr) {
        Ok(_) if attr.next_id == 0 => Ok(None),
        Ok(_) => Ok(Some(attr.next_id)),
        Err(Errno(libc::ENOENT)) => Ok(None),
        Err(e) => Err(e),
    }
}

/// Open the object with this ID. ENOENT means it does not exist (any more).
pub fn fd_by_id(kind: ObjKind, id: u32) -> Result<OwnedFd, Errno> {
    let mut attr = FdByIdAttr {
        id,
        ..Default::default()
    };
    bpf(kind.fd_by_id_cmd(), &mut attr).map(owned_fd)
}

/// Open a pinned bpffs path (any object type).
pub fn obj_get(path: &CStr) -> Result<OwnedFd, Errno> {
    let mut attr = ObjGetAttr {
        pathname: path.as_ptr() as u64,
        ..Default::default()
    };
    bpf(BPF_OBJ_GET, &mut attr).map(owned_fd)
}

/// Read the element at `key` of a map whose keys and values are both u32
/// (a prog_array reads back program IDs). `None`: no element there. The
/// sizes are checked first, so the kernel never writes past `value`.
pub(crate) fn map_lookup_u32(fd: impl AsFd, key: u32) -> Result<Option<u32>, Errno> {
    let info = map_info(fd.as_fd())?;
    if info.key_size != 4 || info.value_size != 4 {
        return Err(Errno(libc::EINVAL));
    }
    let mut value = 0u32;
    let mut attr = MapElemAttr {
        map_fd: fd.as_fd().as_raw_fd() as u32,
        key: &key as *const u32 as u64,
        value: &mut value as *mut u32 as u64,
        ..Default::default()
    };
    match bpf(BPF_MAP_LOOKUP_ELEM, &mut attr) {
        Ok(_) => Ok(Some(value)),
        Err(Errno(libc::ENOENT)) => Ok(None),
        Err(e) => Err(e),
    }
}

/// What `BPF_TASK_FD_QUERY` says about a process's fd that a program is
/// attached through (a perf event fd, or a raw tracepoint's).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct TaskFdQuery {
    pub prog_id: u32,
    /// `enum bpf_task_fd_type`: raw_tracepoint 0, tracepoint 1, kprobe 2,
    /// kretprobe 3, uprobe 4, uretprobe 5.
    pub fd_type: u32,
    /// The tracepoint name, the kprobe's function or the uprobe's path
    /// (empty for a kprobe placed by address).
    pub name: Vec<u8>,
    pub probe_offset: u64,
    pub probe_addr: u64,
}

/// Ask which program is attached through fd `fd` of process `pid`, reusing
/// `buf` for the name. ENOENT: no program is attached through it (or the
/// process or fd is gone). A name longer than `buf` is cut to it.
pub(crate) fn task_fd_query(pid: u32, fd: u32, buf: &mut [u8]) -> Result<TaskFdQuery, Errno> {
    let mut attr = TaskFdQueryAttr {
        pid,
        fd,
        buf_len: u32::try_from(buf.len()).unwrap_or(u32::MAX),
        buf: buf.as_mut_ptr() as u64,
        ..Default::default()
    };
    // ENOSPC: the name did not fit; the kernel still filled the rest, with
    // the cut name NUL-terminated in `buf`.
    match bpf(BPF_TASK_FD_QUERY, &mut attr) {
        Ok(_) | Err(Errno(libc::ENOSPC)) => {}
        Err(e) => return Err(e),
    }
    let shown = buf
        .get(..buf.len().min(attr.buf_len as usize))
        .unwrap_or(&[]);
    let end = shown.iter().position(|&b| b == 0).unwrap_or(shown.len());
    Ok(TaskFdQuery {
        prog_id: attr.prog_id,
        fd_type: attr.fd_type,
        name: shown[..end].to_vec(),
        probe_offset: attr.probe_offset,
        probe_addr: attr.probe_addr,
    })
}

/// Turn on run-time statistics for as long as the returned fd stays open.
pub fn enable_stats() -> Result<OwnedFd, Errno> {
    let mut attr = EnableStatsAttr {
        kind: BPF_STATS_RUN_TIME,
    };
    bpf(BPF_ENABLE_STATS, &mut attr).map(owned_fd)
}

/// Plain-old-data info layouts: all-zero is valid and so is any byte
/// pattern the kernel writes.
///
/// # Safety
/// Implementors are #[repr(C)] and hold only integers, integer arrays and
/// unions of such.
pub(crate) unsafe trait Pod: Sized + Copy {
    fn zeroed() -> Self {
        // SAFETY: guaranteed by the trait contract.
        unsafe { std::mem::zeroed() }
    }

    /// A value from the first bytes of `raw`; missing bytes stay zero, as
    /// when an older kernel fills less of the struct.
    #[cfg(test)]
    fn from_prefix(raw: &[u8]) -> Self {
        let mut v = Self::zeroed();
        let n = raw.len().min(std::mem::size_of::<Self>());
        // SAFETY: `v` is a live Pod value of size_of::<Self>() bytes, n is
        // within both buffers, and any bytes are a valid Pod.
        unsafe {
            std::ptr::copy_nonoverlapping(raw.as_ptr(), &mut v as *mut Self as *mut u8, n);
        }
        v
    }
}

// SAFETY: #[repr(C)] with integer fields only.
unsafe impl Pod for ProgInfo {}
// SAFETY: #[repr(C)] with integer fields only.
unsafe impl Pod for MapInfo {}
// SAFETY: #[repr(C)] with integer fields only.
unsafe impl Pod for BtfInfo {}

/// `BPF_OBJ_GET_INFO_BY_FD`: fill `info` for `fd`; returns how many bytes
/// the kernel wrote (`min(size_of::<T>(), the kernel's struct size)`).
///
/// Any pointer fields set in `info` must point at live buffers of the
/// lengths set beside them for the duration of the call; every caller in
/// this layer keeps its buffers alive across the call.
pub(crate) fn get_info<T: Pod>(fd: impl AsFd, info: &mut T) -> Result<u32, Errno> {
    info_by_fd(fd, info)
}

/// [`get_info`] for any info layout, for the test fixtures' own requests.
///
/// # Safety
/// `T` must be the info struct of `fd`'s object type (or a prefix of it),
/// and every non-zero pointer field in `info` must be valid for writes of
/// the length given by its companion length/count field.
pub unsafe fn obj_info<T>(fd: impl AsFd, info: &mut T) -> Result<(), Errno> {
    info_by_fd(fd, info).map(|_| ())
}

/// The one `BPF_OBJ_GET_INFO_BY_FD` call; its callers vouch for `info`.
fn info_by_fd<T>(fd: impl AsFd, info: &mut T) -> Result<u32, Errno> {
    let mut attr = InfoAttr {
        bpf_fd: fd.as_fd().as_raw_fd() as u32,
        info_len: std::mem::size_of::<T>() as u32,
        info: info as *mut T as u64,
    };
    bpf(BPF_OBJ_GET_INFO_BY_FD, &mut attr)?;
    Ok(attr.info_len)
}

/// A program's info with at most its first `func_info` record
/// `(insn_off, type_id)`, in one call: the kernel copies
/// `min(asked, has)` records, so asking for one needs no size probe.
pub fn prog_info_first_func(fd: impl AsFd) -> Result<(ProgInfo, Option<(u32, u32)>), Errno> {
    prog_info_listing(fd, false).map(|l| (l.info, l.first_func))
}

/// What [`prog_info_listing`] reads.
#[derive(Debug, Clone)]
pub(crate) struct ListingInfo {
    pub info: ProgInfo,
    /// The bytes of `info` the kernel filled (see [`filled`]).
    pub len: u32,
    /// The first `func_info` record `(insn_off, type_id)`, if any.
    pub first_func: Option<(u32, u32)>,
    pub map_ids: Vec<u32>,
}

/// [`prog_info_first_func`] plus, with `map_ids`, up to [`MAX_MAP_IDS`] map
/// IDs: everything a listing row reads from the info struct, in one call.
pub(crate) fn prog_info_listing(fd: impl AsFd, map_ids: bool) -> Result<ListingInfo, Errno> {
    let mut rec = [0u32; 2];
    let mut ids = buffer::<u32>(if map_ids { MAX_MAP_IDS as usize } else { 0 })?;
    let mut info = ProgInfo {
        nr_func_info: 1,
        func_info_rec_size: 8,
        func_info: rec.as_mut_ptr() as u64,
        ..Default::default()
    };
    if map_ids {
        info.nr_map_ids = MAX_MAP_IDS;
        info.map_ids = ids.as_mut_ptr() as u64;
    }
    // `rec` and `ids` live until the end of this function, with the
    // lengths given above.
    let len = get_info(fd, &mut info)?;
    // nr_func_info now holds the program's own count; 0 means no BTF funcs.
    let first = (info.nr_func_info > 0).then_some((rec[0], rec[1]));
    ids.truncate((info.nr_map_ids as usize).min(ids.len()));
    info.func_info = 0;
    info.map_ids = 0;
    Ok(ListingInfo {
        info,
        len,
        first_func: first,
        map_ids: ids,
    })
}

/// `struct bpf_prog_info` through `attach_btf_id` (232 bytes).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct ProgInfo {
    pub prog_type: u32,
    pub id: u32,
    pub tag: [u8; 8],
    pub jited_prog_len: u32,
    pub xlated_prog_len: u32,
    pub jited_prog_insns: u64,
    pub xlated_prog_insns: u64,
    pub load_time: u64,
    pub created_by_uid: u32,
    pub nr_map_ids: u32,
    pub map_ids: u64,
    pub name: [u8; 16],
    pub ifindex: u32,
    pub gpl_compatible: u32,
    pub netns_dev: u64,
    pub netns_ino: u64,
    pub nr_jited_ksyms: u32,
    pub nr_jited_func_lens: u32,
    pub jited_ksyms: u64,
    pub jited_func_lens: u64,
    pub btf_id: u32,
    pub func_info_rec_size: u32,
    pub func_info: u64,
    pub nr_func_info: u32,
    pub nr_line_info: u32,
    pub line_info: u64,
    pub jited_line_info: u64,
    pub nr_jited_line_info: u32,
    pub line_info_rec_size: u32,
    pub jited_line_info_rec_size: u32,
    pub nr_prog_tags: u32,
    pub prog_tags: u64,
    pub run_time_ns: u64,
    pub run_cnt: u64,
    pub recursion_misses: u64,
    pub verified_insns: u32,
    pub attach_btf_obj_id: u32,
    pub attach_btf_id: u32,
    _pad: u32,
}
const _: () = assert!(std::mem::size_of::<ProgInfo>() == 232);
const _: () = assert!(std::mem::offset_of!(ProgInfo, btf_id) == 128);
const _: () = assert!(std::mem::offset_of!(ProgInfo, run_time_ns) == 192);

/// Whether a kernel that filled `len` bytes of an info struct has the
/// field at `offset` of `size` bytes. The kernel copies (and reports)
/// `min(asked, its own struct size)`, so a field past its size is one that
/// kernel does not have, not a zero.
pub(crate) const fn filled(len: u32, offset: usize, size: usize) -> bool {
    len as usize >= offset + size
}

impl ProgInfo {
    /// `recursion_misses` (5.12) when a kernel that filled `len` bytes has it.
    pub fn recursion_misses_in(&self, len: u32) -> Option<u64> {
        filled(len, std::mem::offset_of!(ProgInfo, recursion_misses), 8)
            .then_some(self.recursion_misses)
    }

    /// `verified_insns` (5.16) when a kernel that filled `len` bytes has it.
    pub fn verified_insns_in(&self, len: u32) -> Option<u32> {
        filled(len, std::mem::offset_of!(ProgInfo, verified_insns), 4)
            .then_some(self.verified_insns)
    }
}

/// `struct bpf_map_info` through `map_extra` (88 bytes).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct MapInfo {
    pub map_type: u32,
    pub id: u32,
    pub key_size: u32,
    pub value_size: u32,
    pub max_entries: u32,
    pub map_flags: u32,
    pub name: [u8; 16],
    pub ifindex: u32,
    pub btf_vmlinux_value_type_id: u32,
    pub netns_dev: u64,
    pub netns_ino: u64,
    pub btf_id: u32,
    pub btf_key_type_id: u32,
    pub btf_value_type_id: u32,
    pub btf_vmlinux_id: u32,
    pub map_extra: u64,
}
const _: () = assert!(std::mem::size_of::<MapInfo>() == 88);

/// `struct bpf_btf_info` (32 bytes).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct BtfInfo {
    pub btf: u64,
    pub btf_size: u32,
    pub id: u32,
    pub name: u64,
    pub name_len: u32,
    pub kernel_btf: u32,
}
const _: () = assert!(std::mem::size_of::<BtfInfo>() == 32);

/// Which variable-length arrays to fetch with a program's info.
#[derive(Debug, Clone, Copy, Default)]
pub struct ProgWant {
    pub map_ids: bool,
    pub xlated: bool,
    pub jit_ranges: bool,
    pub line_info: bool,
    pub func_info: bool,
}

/// A program's info struct plus the arrays that were asked for.
#[derive(Debug, Clone)]
pub struct ProgDetail {
    pub info: ProgInfo,
    /// The bytes of `info` the kernel filled (see [`filled`]).
    pub info_len: u32,
    pub map_ids: Vec<u32>,
    pub xlated: Vec<u8>,
    pub jited_ksyms: Vec<u64>,
    pub jited_func_lens: Vec<u32>,
    /// Raw line_info records, `line_info_rec_size` bytes each.
    pub line_info: Vec<u8>,
    pub line_info_rec_size: u32,
    pub jited_line_info: Vec<u64>,
    /// Raw func_info records, `func_info_rec_size` bytes each.
    pub func_info: Vec<u8>,
    pub func_info_rec_size: u32,
}

/// Maximum number of map IDs reported per program (as the original).
pub(crate) const MAX_MAP_IDS: u32 = 256;

/// A zeroed buffer of `count` elements for the kernel to fill. The byte size
/// is computed in `usize` with checked arithmetic: a count the kernel
/// reports that cannot be a buffer is EOVERFLOW, one that cannot be
/// allocated ENOMEM, never a panic or a wrapped size.
fn buffer<T: Copy + Default>(count: usize) -> Result<Vec<T>, Errno> {
    count
        .checked_mul(std::mem::size_of::<T>())
        .filter(|&bytes| bytes <= isize::MAX as usize)
        .ok_or(Errno(libc::EOVERFLOW))?;
    let mut v = Vec::new();
    v.try_reserve_exact(count)
        .map_err(|_| Errno(libc::ENOMEM))?;
    v.resize(count, T::default());
    Ok(v)
}

/// `count` records of `rec_size` bytes each.
fn records(count: u32, rec_size: u32) -> Result<Vec<u8>, Errno> {
    let bytes = (count as usize)
        .checked_mul(rec_size as usize)
        .ok_or(Errno(libc::EOVERFLOW))?;
    buffer(bytes)
}

/// Keep the first `reported` records of a buffer of `rec_size`-byte records
/// (never more than the buffer holds).
fn keep_records(buf: &mut Vec<u8>, reported: u32, rec_size: u32) {
    if rec_size == 0 {
        buf.clear();
        return;
    }
    let n = (reported as usize).min(buf.len() / rec_size as usize);
    buf.truncate(n * rec_size as usize);
}

/// Read a program's info. Map IDs alone take one call with a fixed buffer;
/// the other arrays need a first call to learn their sizes.
pub fn prog_detail(fd: impl AsFd, want: ProgWant) -> Result<ProgDetail, Errno> {
    read_detail(fd.as_fd(), want, false).map(|(d, _)| d)
}

/// A program's native JIT code, as far as the kernel gave it out.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct JitedInsns {
    /// The kernel's length of the image (every function's code, in
    /// `jited_ksyms` order); 0 when the program is not JIT-compiled.
    pub len: u32,
    /// The image; empty when withheld or not JIT-compiled.
    pub bytes: Vec<u8>,
    /// The kernel has an image but did not copy it out: kernel addresses
    /// are hidden from this reader (`bpf_dump_raw_ok`).
    pub withheld: bool,
}

/// [`prog_detail`] plus the program's native JIT image, read in the same
/// call (the image is only ever copied when a caller asks for it).
pub(crate) fn prog_detail_jited(
    fd: impl AsFd,
    want: ProgWant,
) -> Result<(ProgDetail, JitedInsns), Errno> {
    read_detail(fd.as_fd(), want, true)
}

/// The buffers one info call fills, with the counts handed to the kernel.
#[derive(Default)]
struct Arrays {
    map_ids: Vec<u32>,
    xlated: Vec<u8>,
    jited: Vec<u8>,
    ksyms: Vec<u64>,
    func_lens: Vec<u32>,
    line_info: Vec<u8>,
    jited_line_info: Vec<u64>,
    func_info: Vec<u8>,
    line_rec: u32,
    func_rec: u32,
}

impl Arrays {
    /// Allocate what `want` (and `jited`) asks for, sized from `sizes`, and
    /// point `info` at it.
    fn prepare(
        &mut self,
        info: &mut ProgInfo,
        sizes: &ProgInfo,
        want: ProgWant,
        jited: bool,
    ) -> Result<(), Errno> {
        let s = sizes;
        if want.xlated && s.xlated_prog_len > 0 {
            self.xlated = buffer::<u8>(s.xlated_prog_len as usize)?;
            info.xlated_prog_len = s.xlated_prog_len;
            info.xlated_prog_insns = self.xlated.as_mut_ptr() as u64;
        }
        if jited && s.jited_prog_len > 0 {
            self.jited = buffer::<u8>(s.jited_prog_len as usize)?;
            info.jited_prog_len = s.jited_prog_len;
            info.jited_prog_insns = self.jited.as_mut_ptr() as u64;
        }
        if want.jit_ranges {
            self.ksyms = buffer::<u64>(s.nr_jited_ksyms as usize)?;
            self.func_lens = buffer::<u32>(s.nr_jited_func_lens as usize)?;
            info.nr_jited_ksyms = s.nr_jited_ksyms;
            info.jited_ksyms = self.ksyms.as_mut_ptr() as u64;
            info.nr_jited_func_lens = s.nr_jited_func_lens;
            info.jited_func_lens = self.func_lens.as_mut_ptr() as u64;
        }
        if want.line_info && s.nr_line_info > 0 {
            self.line_rec = if s.line_info_rec_size == 0 {
                16
            } else {
                s.line_info_rec_size
            };
            self.line_info = records(s.nr_line_info, self.line_rec)?;
            info.nr_line_info = s.nr_line_info;
            info.line_info_rec_size = self.line_rec;
            info.line_info = self.line_info.as_mut_ptr() as u64;
            if s.nr_jited_line_info > 0 {
                self.jited_line_info = buffer::<u64>(s.nr_jited_line_info as usize)?;
                info.nr_jited_line_info = s.nr_jited_line_info;
                info.jited_line_info_rec_size = 8;
                info.jited_line_info = self.jited_line_info.as_mut_ptr() as u64;
            }
        }
        if want.func_info && s.nr_func_info > 0 {
            self.func_rec = if s.func_info_rec_size == 0 {
                8
            } else {
                s.func_info_rec_size
            };
            self.func_info = records(s.nr_func_info, self.func_rec)?;
            info.nr_func_info = s.nr_func_info;
            info.func_info_rec_size = self.func_rec;
            info.func_info = self.func_info.as_mut_ptr() as u64;
        }
        Ok(())
    }
}

fn read_detail(
    fd: BorrowedFd<'_>,
    want: ProgWant,
    jited: bool,
) -> Result<(ProgDetail, JitedInsns), Errno> {
    let needs_sizes = jited || want.xlated || want.jit_ranges || want.line_info || want.func_info;
    let sizes = if needs_sizes {
        let mut first = ProgInfo::default();
        get_info(fd, &mut first)?;
        Some(first)
    } else {
        None
    };

    let mut info = ProgInfo::default();
    let mut a = Arrays {
        map_ids: buffer::<u32>(if want.map_ids {
            MAX_MAP_IDS as usize
        } else {
            0
        })?,
        ..Default::default()
    };
    if want.map_ids {
        info.nr_map_ids = MAX_MAP_IDS;
        info.map_ids = a.map_ids.as_mut_ptr() as u64;
    }
    if let Some(s) = &sizes {
        a.prepare(&mut info, s, want, jited)?;
    }
    let asked_jited = info.jited_prog_insns != 0;
    // Every pointer set above refers to a Vec in `a`, which lives until the
    // end of this function, and the count beside it matches its length.
    let info_len = get_info(fd, &mut info)?;

    // The kernel reports its own counts; never trust them past our buffers.
    a.map_ids
        .truncate((info.nr_map_ids as usize).min(a.map_ids.len()));
    a.xlated
        .truncate((info.xlated_prog_len as usize).min(a.xlated.len()));
    a.ksyms
        .truncate((info.nr_jited_ksyms as usize).min(a.ksyms.len()));
    a.func_lens
        .truncate((info.nr_jited_func_lens as usize).min(a.func_lens.len()));
    keep_records(&mut a.line_info, info.nr_line_info, a.line_rec);
    a.jited_line_info
        .truncate((info.nr_jited_line_info as usize).min(a.jited_line_info.len()));
    keep_records(&mut a.func_info, info.nr_func_info, a.func_rec);
    // The kernel clears the image pointer instead of copying when the
    // reader may not see kernel addresses.
    let withheld = asked_jited && info.jited_prog_insns == 0;
    if withheld {
        a.jited.clear();
    } else {
        a.jited
            .truncate((info.jited_prog_len as usize).min(a.jited.len()));
    }
    let code = JitedInsns {
        len: info.jited_prog_len,
        bytes: a.jited,
        withheld,
    };
    // Pointers in the returned struct would dangle; clear them.
    info.map_ids = 0;
    info.xlated_prog_insns = 0;
    info.jited_prog_insns = 0;
    info.jited_ksyms = 0;
    info.jited_func_lens = 0;
    info.line_info = 0;
    info.jited_line_info = 0;
    info.func_info = 0;
    let detail = ProgDetail {
        info,
        info_len,
        map_ids: a.map_ids,
        xlated: a.xlated,
        jited_ksyms: a.ksyms,
        jited_func_lens: a.func_lens,
        line_info: a.line_info,
        line_info_rec_size: a.line_rec,
        jited_line_info: a.jited_line_info,
        func_info: a.func_info,
        func_info_rec_size: a.func_rec,
    };
    Ok((detail, code))
}

pub fn map_info(fd: impl AsFd) -> Result<MapInfo, Errno> {
    let mut info = MapInfo::default();
    get_info(fd, &mut info)?;
    Ok(info)
}

/// Room for a BTF object's name (the kernel's names are far shorter).
const BTF_NAME_BUF: usize = 512;

/// A BTF object's info, its name, and optionally its raw bytes.
pub fn btf_info(fd: impl AsFd, with_data: bool) -> Result<(BtfInfo, String, Vec<u8>), Errno> {
    let fd = fd.as_fd();
    let mut name = buffer::<u8>(BTF_NAME_BUF)?;
    let mut info = BtfInfo {
        name: name.as_mut_ptr() as u64,
        name_len: BTF_NAME_BUF as u32,
        ..Default::default()
    };
    match get_info(fd, &mut info) {
        // Before 5.11 the kernel's bpf_btf_info ends after `id`, and it
        // refuses a longer struct whose tail is not zero: ask again
        // without the name (such a kernel names no BTF object, and gives
        // its own vmlinux BTF no ID at all: the commit that added the name
        // fields also gave vmlinux BTF its ID, so there is nothing to name).
        Err(Errno(libc::E2BIG)) => {
            name.fill(0);
            info = BtfInfo::default();
            get_info(fd, &mut info)?;
        }
        other => {
            other?;
        }
    }
    let mut data = Vec::new();
    if with_data && info.btf_size > 0 {
        data = buffer::<u8>(info.btf_size as usize)?;
        let mut again = BtfInfo {
            btf: data.as_mut_ptr() as u64,
            btf_size: info.btf_size,
            ..Default::default()
        };
        get_info(fd, &mut again)?;
        data.truncate((again.btf_size as usize).min(data.len()));
    }
    info.name = 0;
    info.btf = 0;
    let end = name.iter().position(|&b| b == 0).unwrap_or(name.len());
    Ok((
        info,
        String::from_utf8_lossy(&name[..end]).into_owned(),
        data,
    ))
}

/// What kind of BPF object an fd refers to, from the fd's anon-inode name.
/// (GET_INFO_BY_FD dispatches on the fd's type, so probing with a program
/// info struct "succeeds" for maps and links as well.)
pub(crate) fn fd_object_kind(fd: impl AsFd) -> Option<ObjKind> {
    let link = std::fs::read_link(format!("/proc/self/fd/{}", fd.as_fd().as_raw_fd())).ok()?;
    match link.to_str()? {
        "anon_inode:bpf-prog" => Some(ObjKind::Prog),
        "anon_inode:bpf-map" => Some(ObjKind::Map),
        "anon_inode:bpf_link" | "anon_inode:bpf-link" => Some(ObjKind::Link),
        "anon_inode:btf" => Some(ObjKind::Btf),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_counts_that_cannot_be_buffers_are_errors() {
        // (2^32 - 1)^2 does not wrap in usize but is far past isize::MAX
        // on 32-bit targets, and past any allocation on 64-bit ones.
        assert_eq!(
            records(u32::MAX, u32::MAX).unwrap_err(),
            Errno(libc::EOVERFLOW)
        );
        assert_eq!(
            buffer::<u64>(usize::MAX / 4).unwrap_err(),
            Errno(libc::EOVERFLOW)
        );
        assert_eq!(records(3, 16).unwrap(), vec![0u8; 48]);
        assert_eq!(buffer::<u64>(2).unwrap(), vec![0u64; 2]);
    }

    #[test]
    fn reported_record_counts_never_reach_past_the_buffer() {
        let mut v = vec![1u8; 48];
        keep_records(&mut v, 2, 16);
        assert_eq!(v.len(), 32);
        keep_records(&mut v, 100, 16);
        assert_eq!(v.len(), 32);
        keep_records(&mut v, 1, 0);
        assert!(v.is_empty());
    }
}
