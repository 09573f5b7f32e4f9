//! Raw `bpf(2)` syscall layer: command numbers, `#[repr(C)]` attribute
//! structs (each one a prefix of the kernel's `union bpf_attr` member for the
//! command) and thin safe wrappers that return `OwnedFd`s.
//!
//! Layouts follow include/uapi/linux/bpf.h; the offsets that matter are
//! checked at compile time at the bottom of this file.

use std::ffi::CString;
use std::io;
use std::mem::size_of;
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd};

// ---- commands (enum bpf_cmd) ----
pub const BPF_MAP_CREATE: u32 = 0;
pub const BPF_MAP_LOOKUP_ELEM: u32 = 1;
pub const BPF_MAP_UPDATE_ELEM: u32 = 2;
pub const BPF_PROG_LOAD: u32 = 5;
pub const BPF_OBJ_PIN: u32 = 6;
pub const BPF_OBJ_GET: u32 = 7;
pub const BPF_PROG_TEST_RUN: u32 = 10;
pub const BPF_PROG_GET_NEXT_ID: u32 = 11;
pub const BPF_MAP_GET_NEXT_ID: u32 = 12;
pub const BPF_PROG_GET_FD_BY_ID: u32 = 13;
pub const BPF_MAP_GET_FD_BY_ID: u32 = 14;
pub const BPF_OBJ_GET_INFO_BY_FD: u32 = 15;
pub const BPF_RAW_TRACEPOINT_OPEN: u32 = 17;
pub const BPF_BTF_LOAD: u32 = 18;
pub const BPF_BTF_GET_FD_BY_ID: u32 = 19;
pub const BPF_LINK_GET_FD_BY_ID: u32 = 30;
pub const BPF_LINK_GET_NEXT_ID: u32 = 31;
pub const BPF_ENABLE_STATS: u32 = 32;

// ---- program / map / link types ----
pub const BPF_PROG_TYPE_SOCKET_FILTER: u32 = 1;
pub const BPF_PROG_TYPE_RAW_TRACEPOINT: u32 = 17;
pub const BPF_MAP_TYPE_ARRAY: u32 = 2;
pub const BPF_LINK_TYPE_RAW_TRACEPOINT: u32 = 1;
pub const BPF_STATS_RUN_TIME: u32 = 0;

/// Length of the kernel's object name fields (`BPF_OBJ_NAME_LEN`).
pub const BPF_OBJ_NAME_LEN: usize = 16;

/// `BPF_MAP_CREATE` attributes.
#[repr(C)]
#[derive(Default)]
pub struct MapCreateAttr {
    pub map_type: u32,
    pub key_size: u32,
    pub value_size: u32,
    pub max_entries: u32,
    pub map_flags: u32,
    pub inner_map_fd: u32,
    pub numa_node: u32,
    pub map_name: [u8; BPF_OBJ_NAME_LEN],
    pub map_ifindex: u32,
    pub btf_fd: u32,
    pub btf_key_type_id: u32,
    pub btf_value_type_id: u32,
    pub btf_vmlinux_value_type_id: u32,
    pub map_extra: u64,
}

/// `BPF_MAP_*_ELEM` attributes.
#[repr(C)]
#[derive(Default)]
pub struct MapElemAttr {
    pub map_fd: u32,
    pub _pad: u32,
    pub key: u64,
    pub value: u64,
    pub flags: u64,
}

/// `BPF_PROG_LOAD` attributes (up to and including `log_true_size`).
#[repr(C)]
#[derive(Default)]
pub struct ProgLoadAttr {
    pub prog_type: u32,
    pub insn_cnt: u32,
    pub insns: u64,
    pub license: u64,
    pub log_level: u32,
    pub log_size: u32,
    pub log_buf: u64,
    pub kern_version: u32,
    pub prog_flags: u32,
    pub prog_name: [u8; BPF_OBJ_NAME_LEN],
    pub prog_ifindex: u32,
    pub expected_attach_type: u32,
    pub prog_btf_fd: u32,
    pub func_info_rec_size: u32,
    pub func_info: u64,
    pub func_info_cnt: u32,
    pub line_info_rec_size: u32,
    pub line_info: u64,
    pub line_info_cnt: u32,
    pub attach_btf_id: u32,
    pub attach_prog_fd: u32,
    pub core_relo_cnt: u32,
    pub fd_array: u64,
    pub core_relos: u64,
    pub core_relo_rec_size: u32,
    pub log_true_size: u32,
}

/// `BPF_OBJ_PIN` / `BPF_OBJ_GET` attributes.
#[repr(C)]
#[derive(Default)]
pub struct ObjAttr {
    pub pathname: u64,
    pub bpf_fd: u32,
    pub file_flags: u32,
}

/// `BPF_*_GET_NEXT_ID` / `BPF_*_GET_FD_BY_ID` attributes.
#[repr(C)]
#[derive(Default)]
pub struct IdAttr {
    pub start_or_obj_id: u32,
    pub next_id: u32,
    pub open_flags: u32,
}

/// `BPF_OBJ_GET_INFO_BY_FD` attributes.
#[repr(C)]
#[derive(Default)]
pub struct InfoAttr {
    pub bpf_fd: u32,
    pub info_len: u32,
    pub info: u64,
}

/// `BPF_PROG_TEST_RUN` attributes.
#[repr(C)]
#[derive(Default)]
pub struct TestRunAttr {
    pub prog_fd: u32,
    pub retval: u32,
    pub data_size_in: u32,
    pub data_size_out: u32,
    pub data_in: u64,
    pub data_out: u64,
    pub repeat: u32,
    pub duration: u32,
    pub ctx_size_in: u32,
    pub ctx_size_out: u32,
    pub ctx_in: u64,
    pub ctx_out: u64,
    pub flags: u32,
    pub cpu: u32,
    pub batch_size: u32,
    pub _pad: u32,
}

/// `BPF_RAW_TRACEPOINT_OPEN` attributes.
#[repr(C)]
#[derive(Default)]
pub struct RawTpAttr {
    pub name: u64,
    pub prog_fd: u32,
    pub _pad: u32,
}

/// `BPF_BTF_LOAD` attributes.
#[repr(C)]
#[derive(Default)]
pub struct BtfLoadAttr {
    pub btf: u64,
    pub btf_log_buf: u64,
    pub btf_size: u32,
    pub btf_log_size: u32,
    pub btf_log_level: u32,
    pub btf_log_true_size: u32,
}

/// `BPF_ENABLE_STATS` attributes.
#[repr(C)]
#[derive(Default)]
pub struct EnableStatsAttr {
    pub stats_type: u32,
}

/// `struct bpf_prog_info` (232 bytes on 6.x kernels).
#[repr(C)]
#[derive(Default, Clone, Debug)]
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
    pub name: [u8; BPF_OBJ_NAME_LEN],
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
    pub _pad: u32,
}

/// `struct bpf_map_info`.
#[repr(C)]
#[derive(Default, Clone, Debug)]
pub struct MapInfo {
    pub map_type: u32,
    pub id: u32,
    pub key_size: u32,
    pub value_size: u32,
    pub max_entries: u32,
    pub map_flags: u32,
    pub name: [u8; BPF_OBJ_NAME_LEN],
    pub ifindex: u32,
    pub btf_vmlinux_value_type_id: u32,
    pub netns_dev: u64,
    pub netns_ino: u64,
    pub btf_id: u32,
    pub btf_key_type_id: u32,
    pub btf_value_type_id: u32,
    pub _pad: u32,
    pub map_extra: u64,
}

/// `struct bpf_link_info`, with only the raw_tracepoint arm of the union
/// spelled out (the rest is padding so other arms fit).
#[repr(C)]
#[derive(Default, Clone, Debug)]
pub struct LinkInfo {
    pub link_type: u32,
    pub id: u32,
    pub prog_id: u32,
    pub _pad: u32,
    pub tp_name: u64,
    pub tp_name_len: u32,
    pub _pad2: u32,
    pub _rest: [u64; 4],
}

/// `struct bpf_btf_info`.
#[repr(C)]
#[derive(Default, Clone, Debug)]
pub struct BtfInfo {
    pub btf: u64,
    pub btf_size: u32,
    pub id: u32,
    pub name: u64,
    pub name_len: u32,
    pub kernel_btf: u32,
}

/// Issue `bpf(cmd, attr, sizeof(*attr))`.
///
/// # Safety
/// Every pointer stored (as a `u64`) in `attr` must be either zero or valid
/// for the access the kernel performs for `cmd` (reads of the stated length
/// for inputs, writes of the stated length for outputs) for the duration of
/// the call.
pub unsafe fn sys_bpf<T>(cmd: u32, attr: &mut T) -> io::Result<i64> {
    // SAFETY: `attr` is a live, exclusively borrowed `#[repr(C)]` struct of
    // exactly `size_of::<T>()` bytes; the caller guarantees the pointers
    // embedded in it.
    let ret = unsafe {
        libc::syscall(
            libc::SYS_bpf,
            cmd as libc::c_long,
            attr as *mut T as *mut libc::c_void,
            size_of::<T>() as libc::c_long,
        )
    };
    if ret < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(ret)
    }
}

/// Wrap a freshly returned fd number in an `OwnedFd`.
fn owned(fd: i64) -> OwnedFd {
    // SAFETY: `fd` was just returned by a successful bpf() call that creates
    // a new file descriptor; nothing else owns it.
    unsafe { OwnedFd::from_raw_fd(fd as i32) }
}

/// Same as `sys_bpf`, for commands that return a new file descriptor.
///
/// # Safety
/// As for [`sys_bpf`]; additionally `cmd` must be a command whose non-negative
/// return value is a newly created file descriptor.
pub unsafe fn sys_bpf_fd<T>(cmd: u32, attr: &mut T) -> io::Result<OwnedFd> {
    // SAFETY: forwarded caller contract.
    let fd = unsafe { sys_bpf(cmd, attr) }?;
    Ok(owned(fd))
}

/// Copy `name` into a kernel object-name field, truncated to 15 bytes.
pub fn obj_name(name: &str) -> [u8; BPF_OBJ_NAME_LEN] {
    let mut out = [0u8; BPF_OBJ_NAME_LEN];
    let n = name.len().min(BPF_OBJ_NAME_LEN - 1);
    out[..n].copy_from_slice(&name.as_bytes()[..n]);
    out
}

/// Decode a NUL-padded kernel object-name field.
pub fn name_str(raw: &[u8]) -> String {
    let end = raw.iter().position(|&b| b == 0).unwrap_or(raw.len());
    String::from_utf8_lossy(&raw[..end]).into_owned()
}

/// Create a map.
pub fn map_create(
    map_type: u32,
    name: &str,
    key_size: u32,
    value_size: u32,
    max_entries: u32,
) -> io::Result<OwnedFd> {
    let mut attr = MapCreateAttr {
        map_type,
        key_size,
        value_size,
        max_entries,
        map_name: obj_name(name),
        ..Default::default()
    };
    // SAFETY: MAP_CREATE with no pointers in the attr; returns a new fd.
    unsafe { sys_bpf_fd(BPF_MAP_CREATE, &mut attr) }
}

/// Look up `key` in a map whose value is `value.len()` bytes long.
pub fn map_lookup(map: BorrowedFd<'_>, key: &[u8], value: &mut [u8]) -> io::Result<()> {
    let mut attr = MapElemAttr {
        map_fd: map.as_raw_fd() as u32,
        key: key.as_ptr() as u64,
        value: value.as_mut_ptr() as u64,
        ..Default::default()
    };
    // SAFETY: key/value point at live buffers; the caller sizes them to the
    // map's key_size/value_size (the kernel reads key_size and writes
    // value_size bytes).
    unsafe { sys_bpf(BPF_MAP_LOOKUP_ELEM, &mut attr) }.map(|_| ())
}

/// Update `key` in a map with `value`.
pub fn map_update(map: BorrowedFd<'_>, key: &[u8], value: &[u8]) -> io::Result<()> {
    let mut attr = MapElemAttr {
        map_fd: map.as_raw_fd() as u32,
        key: key.as_ptr() as u64,
        value: value.as_ptr() as u64,
        ..Default::default()
    };
    // SAFETY: key/value point at live buffers sized by the caller to the
    // map's key_size/value_size; the kernel only reads them.
    unsafe { sys_bpf(BPF_MAP_UPDATE_ELEM, &mut attr) }.map(|_| ())
}

/// Pin a BPF object at `path` (which must be on a bpffs mount).
pub fn obj_pin(fd: BorrowedFd<'_>, path: &str) -> io::Result<()> {
    let c = CString::new(path).map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
    let mut attr = ObjAttr {
        pathname: c.as_ptr() as u64,
        bpf_fd: fd.as_raw_fd() as u32,
        file_flags: 0,
    };
    // SAFETY: pathname is a NUL-terminated string alive for the call.
    unsafe { sys_bpf(BPF_OBJ_PIN, &mut attr) }.map(|_| ())
}

/// Open a pinned BPF object.
pub fn obj_get(path: &str) -> io::Result<OwnedFd> {
    let c = CString::new(path).map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
    let mut attr = ObjAttr {
        pathname: c.as_ptr() as u64,
        ..Default::default()
    };
    // SAFETY: pathname is a NUL-terminated string alive for the call;
    // OBJ_GET returns a new fd.
    unsafe { sys_bpf_fd(BPF_OBJ_GET, &mut attr) }
}

fn next_id(cmd: u32, start: u32) -> io::Result<Option<u32>> {
    let mut attr = IdAttr {
        start_or_obj_id: start,
        ..Default::default()
    };
    // SAFETY: no pointers in the attr.
    match unsafe { sys_bpf(cmd, &mut attr) } {
        Ok(_) => Ok(Some(attr.next_id)),
        Err(e) if e.raw_os_error() == Some(libc::ENOENT) => Ok(None),
        Err(e) => Err(e),
    }
}

/// Next loaded program id after `start` (`None` at the end).
pub fn prog_next_id(start: u32) -> io::Result<Option<u32>> {
    next_id(BPF_PROG_GET_NEXT_ID, start)
}

/// Next map id after `start` (`None` at the end).
pub fn map_next_id(start: u32) -> io::Result<Option<u32>> {
    next_id(BPF_MAP_GET_NEXT_ID, start)
}

/// Next link id after `start` (`None` at the end).
pub fn link_next_id(start: u32) -> io::Result<Option<u32>> {
    next_id(BPF_LINK_GET_NEXT_ID, start)
}

fn fd_by_id(cmd: u32, id: u32) -> io::Result<OwnedFd> {
    let mut attr = IdAttr {
        start_or_obj_id: id,
        ..Default::default()
    };
    // SAFETY: no pointers in the attr; *_GET_FD_BY_ID returns a new fd.
    unsafe { sys_bpf_fd(cmd, &mut attr) }
}

/// Open a program by id.
pub fn prog_fd_by_id(id: u32) -> io::Result<OwnedFd> {
    fd_by_id(BPF_PROG_GET_FD_BY_ID, id)
}

/// Open a map by id.
pub fn map_fd_by_id(id: u32) -> io::Result<OwnedFd> {
    fd_by_id(BPF_MAP_GET_FD_BY_ID, id)
}

/// Open a link by id.
pub fn link_fd_by_id(id: u32) -> io::Result<OwnedFd> {
    fd_by_id(BPF_LINK_GET_FD_BY_ID, id)
}

/// Open a BTF object by id.
pub fn btf_fd_by_id(id: u32) -> io::Result<OwnedFd> {
    fd_by_id(BPF_BTF_GET_FD_BY_ID, id)
}

/// `BPF_OBJ_GET_INFO_BY_FD` into a caller-prepared info struct (whose
/// pointer fields, if any, must be valid for the lengths stated next to
/// them).
///
/// # Safety
/// Any non-zero pointer field in `info` must be valid for writes of the
/// length given by its companion length/count field.
pub unsafe fn obj_info<T>(fd: BorrowedFd<'_>, info: &mut T) -> io::Result<u32> {
    let mut attr = InfoAttr {
        bpf_fd: fd.as_raw_fd() as u32,
        info_len: size_of::<T>() as u32,
        info: info as *mut T as u64,
    };
    // SAFETY: `info` is a live exclusive borrow of `info_len` bytes; the
    // pointers inside it are the caller's responsibility.
    unsafe { sys_bpf(BPF_OBJ_GET_INFO_BY_FD, &mut attr) }?;
    Ok(attr.info_len)
}

/// Basic program info (no arrays requested).
pub fn prog_info(fd: BorrowedFd<'_>) -> io::Result<ProgInfo> {
    let mut info = ProgInfo::default();
    // SAFETY: all pointer fields are zero, so the kernel fills scalars only.
    unsafe { obj_info(fd, &mut info) }?;
    Ok(info)
}

/// Ids of the maps used by a program.
pub fn prog_map_ids(fd: BorrowedFd<'_>) -> io::Result<Vec<u32>> {
    let n = prog_info(fd)?.nr_map_ids;
    let mut ids = vec![0u32; n as usize];
    let mut info = ProgInfo {
        nr_map_ids: n,
        map_ids: ids.as_mut_ptr() as u64,
        ..Default::default()
    };
    // SAFETY: map_ids points at `n` writable u32s.
    unsafe { obj_info(fd, &mut info) }?;
    ids.truncate(info.nr_map_ids.min(n) as usize);
    Ok(ids)
}

/// Raw `bpf_line_info` records of a loaded program, as the kernel reports
/// them (insn offsets refer to the translated image).
pub fn prog_line_info(fd: BorrowedFd<'_>) -> io::Result<Vec<[u32; 4]>> {
    let base = prog_info(fd)?;
    let n = base.nr_line_info;
    let mut recs = vec![[0u32; 4]; n as usize];
    let mut info = ProgInfo {
        nr_line_info: n,
        line_info_rec_size: 16,
        line_info: recs.as_mut_ptr() as u64,
        ..Default::default()
    };
    // SAFETY: line_info points at `n` writable 16-byte records.
    unsafe { obj_info(fd, &mut info) }?;
    Ok(recs)
}

/// Raw `bpf_func_info` records ({insn_off, type_id}) of a loaded program.
pub fn prog_func_info(fd: BorrowedFd<'_>) -> io::Result<Vec<[u32; 2]>> {
    let base = prog_info(fd)?;
    let n = base.nr_func_info;
    let mut recs = vec![[0u32; 2]; n as usize];
    let mut info = ProgInfo {
        nr_func_info: n,
        func_info_rec_size: 8,
        func_info: recs.as_mut_ptr() as u64,
        ..Default::default()
    };
    // SAFETY: func_info points at `n` writable 8-byte records.
    unsafe { obj_info(fd, &mut info) }?;
    Ok(recs)
}

/// Map info.
pub fn map_info(fd: BorrowedFd<'_>) -> io::Result<MapInfo> {
    let mut info = MapInfo::default();
    // SAFETY: MapInfo has no pointer fields.
    unsafe { obj_info(fd, &mut info) }?;
    Ok(info)
}

/// Link info (raw_tracepoint name not requested).
pub fn link_info(fd: BorrowedFd<'_>) -> io::Result<LinkInfo> {
    let mut info = LinkInfo::default();
    // SAFETY: tp_name is zero, so no buffer is written.
    unsafe { obj_info(fd, &mut info) }?;
    Ok(info)
}

/// Name of the raw tracepoint a raw_tracepoint link is attached to.
pub fn link_tp_name(fd: BorrowedFd<'_>) -> io::Result<String> {
    let mut buf = vec![0u8; 128];
    let mut info = LinkInfo {
        tp_name: buf.as_mut_ptr() as u64,
        tp_name_len: buf.len() as u32,
        ..Default::default()
    };
    // SAFETY: tp_name points at a writable buffer of tp_name_len bytes.
    unsafe { obj_info(fd, &mut info) }?;
    Ok(name_str(&buf))
}

/// BTF object info (no data requested).
pub fn btf_info(fd: BorrowedFd<'_>) -> io::Result<BtfInfo> {
    let mut info = BtfInfo::default();
    // SAFETY: btf/name pointers are zero.
    unsafe { obj_info(fd, &mut info) }?;
    Ok(info)
}

/// Raw BTF blob of a loaded BTF object.
pub fn btf_data(fd: BorrowedFd<'_>) -> io::Result<Vec<u8>> {
    let size = btf_info(fd)?.btf_size;
    let mut buf = vec![0u8; size as usize];
    let mut info = BtfInfo {
        btf: buf.as_mut_ptr() as u64,
        btf_size: size,
        ..Default::default()
    };
    // SAFETY: btf points at `size` writable bytes.
    unsafe { obj_info(fd, &mut info) }?;
    Ok(buf)
}

/// Result of one `BPF_PROG_TEST_RUN`.
#[derive(Debug, Clone, Copy)]
pub struct TestRun {
    /// Program return value (of the last run).
    pub retval: u32,
    /// Average duration per run in ns, as reported by the kernel.
    pub duration_ns: u32,
}

/// Run a program `repeat` times through `BPF_PROG_TEST_RUN` on a zeroed
/// 64-byte packet.
pub fn test_run(prog: BorrowedFd<'_>, repeat: u32) -> io::Result<TestRun> {
    let data = [0u8; 64];
    let mut attr = TestRunAttr {
        prog_fd: prog.as_raw_fd() as u32,
        data_size_in: data.len() as u32,
        data_in: data.as_ptr() as u64,
        repeat,
        ..Default::default()
    };
    // SAFETY: data_in points at data_size_in readable bytes; data_out/ctx
    // pointers are zero.
    unsafe { sys_bpf(BPF_PROG_TEST_RUN, &mut attr) }?;
    Ok(TestRun {
        retval: attr.retval,
        duration_ns: attr.duration,
    })
}

/// Attach a raw-tracepoint program; returns the bpf_link fd.
pub fn raw_tracepoint_open(prog: BorrowedFd<'_>, tp: &str) -> io::Result<OwnedFd> {
    let c = CString::new(tp).map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
    let mut attr = RawTpAttr {
        name: c.as_ptr() as u64,
        prog_fd: prog.as_raw_fd() as u32,
        _pad: 0,
    };
    // SAFETY: name is a NUL-terminated string alive for the call; the
    // command returns a new link fd.
    unsafe { sys_bpf_fd(BPF_RAW_TRACEPOINT_OPEN, &mut attr) }
}

/// Turn on run-time statistics (run_cnt / run_time_ns) while the returned
/// fd stays open.
pub fn enable_stats() -> io::Result<OwnedFd> {
    let mut attr = EnableStatsAttr {
        stats_type: BPF_STATS_RUN_TIME,
    };
    // SAFETY: no pointers; returns a new fd.
    unsafe { sys_bpf_fd(BPF_ENABLE_STATS, &mut attr) }
}

// ---- compile-time layout checks against the UAPI ----
const _: () = {
    use std::mem::offset_of;
    assert!(size_of::<MapCreateAttr>() == 72);
    assert!(offset_of!(MapCreateAttr, map_name) == 28);
    assert!(offset_of!(MapCreateAttr, map_extra) == 64);
    assert!(offset_of!(ProgLoadAttr, prog_name) == 48);
    assert!(offset_of!(ProgLoadAttr, prog_btf_fd) == 72);
    assert!(offset_of!(ProgLoadAttr, func_info) == 80);
    assert!(offset_of!(ProgLoadAttr, line_info) == 96);
    assert!(offset_of!(ProgLoadAttr, line_info_cnt) == 104);
    assert!(offset_of!(ProgLoadAttr, fd_array) == 120);
    assert!(size_of::<ProgLoadAttr>() == 144);
    assert!(size_of::<TestRunAttr>() == 80);
    assert!(offset_of!(TestRunAttr, repeat) == 32);
    assert!(size_of::<BtfLoadAttr>() == 32);
    assert!(size_of::<ProgInfo>() == 232);
    assert!(offset_of!(ProgInfo, tag) == 8);
    assert!(offset_of!(ProgInfo, name) == 64);
    assert!(offset_of!(ProgInfo, btf_id) == 128);
    assert!(offset_of!(ProgInfo, run_time_ns) == 192);
    assert!(offset_of!(ProgInfo, run_cnt) == 200);
    assert!(size_of::<MapInfo>() == 88);
    assert!(offset_of!(LinkInfo, tp_name) == 16);
    assert!(size_of::<BtfInfo>() == 32);
};
