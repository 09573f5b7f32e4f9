//! The `bpf(2)` commands only test code may issue (program and BTF loads,
//! map create/update, pins, test runs, raw tracepoint attach), with their
//! `#[repr(C)]` attr structs (each a prefix of the kernel's `union bpf_attr`
//! member for the command). Everything brr itself reads with — the bpf()
//! wrapper, enumeration, the info structs — is `brr::bpf`, used here
//! through thin `io::Result` adapters.
//!
//! Layouts follow include/uapi/linux/bpf.h; the offsets that matter are
//! checked at compile time at the bottom of this file.

use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, OwnedFd};

use brr::bpf::{self, ObjKind, ProgWant};
pub(crate) use brr::bpf::{BtfInfo, MapInfo, ProgInfo};

// ---- commands (enum bpf_cmd) that product code never issues ----
pub(crate) const BPF_MAP_CREATE: u32 = 0;
pub(crate) const BPF_MAP_LOOKUP_ELEM: u32 = 1;
pub(crate) const BPF_MAP_UPDATE_ELEM: u32 = 2;
pub(crate) const BPF_PROG_LOAD: u32 = 5;
pub(crate) const BPF_OBJ_PIN: u32 = 6;
pub(crate) const BPF_PROG_TEST_RUN: u32 = 10;
pub(crate) const BPF_RAW_TRACEPOINT_OPEN: u32 = 17;
pub(crate) const BPF_BTF_LOAD: u32 = 18;

// ---- program / map / link types ----
pub(crate) const BPF_PROG_TYPE_SOCKET_FILTER: u32 = 1;
pub(crate) const BPF_PROG_TYPE_RAW_TRACEPOINT: u32 = 17;
pub(crate) const BPF_MAP_TYPE_HASH: u32 = 1;
pub(crate) const BPF_MAP_TYPE_ARRAY: u32 = 2;
pub(crate) const BPF_LINK_TYPE_RAW_TRACEPOINT: u32 = 1;

/// Length of the kernel's object name fields (`BPF_OBJ_NAME_LEN`).
pub(crate) const BPF_OBJ_NAME_LEN: usize = 16;

/// `BPF_MAP_CREATE` attributes.
#[repr(C)]
#[derive(Default)]
pub(crate) struct MapCreateAttr {
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
pub(crate) struct MapElemAttr {
    pub map_fd: u32,
    pub _pad: u32,
    pub key: u64,
    pub value: u64,
    pub flags: u64,
}

/// `BPF_PROG_LOAD` attributes (up to and including `log_true_size`).
#[repr(C)]
#[derive(Default)]
pub(crate) struct ProgLoadAttr {
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

/// `BPF_OBJ_PIN` attributes.
#[repr(C)]
#[derive(Default)]
pub(crate) struct ObjAttr {
    pub pathname: u64,
    pub bpf_fd: u32,
    pub file_flags: u32,
}

/// `BPF_PROG_TEST_RUN` attributes.
#[repr(C)]
#[derive(Default)]
pub(crate) struct TestRunAttr {
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
pub(crate) struct RawTpAttr {
    pub name: u64,
    pub prog_fd: u32,
    pub _pad: u32,
}

/// `BPF_BTF_LOAD` attributes.
#[repr(C)]
#[derive(Default)]
pub(crate) struct BtfLoadAttr {
    pub btf: u64,
    pub btf_log_buf: u64,
    pub btf_size: u32,
    pub btf_log_size: u32,
    pub btf_log_level: u32,
    pub btf_log_true_size: u32,
}

/// `BPF_OBJ_GET_INFO_BY_FD` into a caller-prepared info struct.
///
/// # Safety
/// As for `brr::bpf::obj_info`: any non-zero pointer field in `info`
/// must be valid for writes of the length given by its companion field.
unsafe fn obj_info<T>(fd: BorrowedFd<'_>, info: &mut T) -> io::Result<()> {
    // SAFETY: forwarded caller contract.
    Ok(unsafe { bpf::obj_info(fd, info) }?)
}

/// Issue `bpf(cmd, attr, sizeof(*attr))` for a command that returns a new
/// file descriptor.
///
/// # Safety
/// As for `brr::bpf::command_fd`: `T` is `cmd`'s attr layout, every
/// pointer stored in `attr` is zero or valid for the access the kernel
/// performs, and the command's non-negative result is a new fd.
pub(crate) unsafe fn sys_bpf_fd<T>(cmd: u32, attr: &mut T) -> io::Result<OwnedFd> {
    lift_memlock_limit();
    // SAFETY: forwarded caller contract.
    Ok(unsafe { bpf::command_fd(cmd, attr) }?)
}

/// Kernels before 5.11 charge BPF programs and maps to RLIMIT_MEMLOCK
/// (EPERM past it) rather than to the memory cgroup: a few fixtures exceed
/// a 64 KiB default, so the limit is lifted once, as libbpf does.
fn lift_memlock_limit() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        use rustix::process::{setrlimit, Resource, Rlimit};
        let unlimited = Rlimit {
            current: None,
            maximum: None,
        };
        let _ = setrlimit(Resource::Memlock, unlimited);
    });
}

/// Same as [`sys_bpf_fd`] for commands that return a plain status.
///
/// # Safety
/// As for `brr::bpf::command`.
unsafe fn sys_bpf<T>(cmd: u32, attr: &mut T) -> io::Result<i64> {
    // SAFETY: forwarded caller contract.
    Ok(unsafe { bpf::command(cmd, attr) }?)
}

/// Copy `name` into a kernel object-name field, truncated to 15 bytes.
pub(crate) fn obj_name(name: &str) -> [u8; BPF_OBJ_NAME_LEN] {
    let mut out = [0u8; BPF_OBJ_NAME_LEN];
    let n = name.len().min(BPF_OBJ_NAME_LEN - 1);
    out[..n].copy_from_slice(&name.as_bytes()[..n]);
    out
}

/// Decode a NUL-padded kernel object-name field.
pub(crate) fn name_str(raw: &[u8]) -> String {
    let end = raw.iter().position(|&b| b == 0).unwrap_or(raw.len());
    String::from_utf8_lossy(&raw[..end]).into_owned()
}

/// Create a map.
pub(crate) fn map_create(
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
pub(crate) fn map_lookup(map: BorrowedFd<'_>, key: &[u8], value: &mut [u8]) -> io::Result<()> {
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
pub(crate) fn map_update(map: BorrowedFd<'_>, key: &[u8], value: &[u8]) -> io::Result<()> {
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
pub(crate) fn obj_pin(fd: BorrowedFd<'_>, path: &str) -> io::Result<()> {
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
pub(crate) fn obj_get(path: &str) -> io::Result<OwnedFd> {
    let c = CString::new(path).map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
    Ok(bpf::obj_get(&c)?)
}

/// Next loaded program id after `start` (`None` at the end).
pub(crate) fn prog_next_id(start: u32) -> io::Result<Option<u32>> {
    Ok(bpf::next_id(ObjKind::Prog, start)?)
}

/// Next map id after `start` (`None` at the end).
pub(crate) fn map_next_id(start: u32) -> io::Result<Option<u32>> {
    Ok(bpf::next_id(ObjKind::Map, start)?)
}

/// Next link id after `start` (`None` at the end).
pub(crate) fn link_next_id(start: u32) -> io::Result<Option<u32>> {
    Ok(bpf::next_id(ObjKind::Link, start)?)
}

/// Open a program by id.
pub(crate) fn prog_fd_by_id(id: u32) -> io::Result<OwnedFd> {
    Ok(bpf::fd_by_id(ObjKind::Prog, id)?)
}

/// Open a map by id.
pub(crate) fn map_fd_by_id(id: u32) -> io::Result<OwnedFd> {
    Ok(bpf::fd_by_id(ObjKind::Map, id)?)
}

/// Open a link by id.
pub(crate) fn link_fd_by_id(id: u32) -> io::Result<OwnedFd> {
    Ok(bpf::fd_by_id(ObjKind::Link, id)?)
}

/// Open a BTF object by id.
pub(crate) fn btf_fd_by_id(id: u32) -> io::Result<OwnedFd> {
    Ok(bpf::fd_by_id(ObjKind::Btf, id)?)
}

fn prog_detail(fd: BorrowedFd<'_>, want: ProgWant) -> io::Result<bpf::ProgDetail> {
    Ok(bpf::prog_detail(fd, want)?)
}

/// Basic program info (no arrays requested).
pub(crate) fn prog_info(fd: BorrowedFd<'_>) -> io::Result<ProgInfo> {
    Ok(prog_detail(fd, ProgWant::default())?.info)
}

/// Ids of the maps used by a program.
pub(crate) fn prog_map_ids(fd: BorrowedFd<'_>) -> io::Result<Vec<u32>> {
    let want = ProgWant {
        map_ids: true,
        ..Default::default()
    };
    Ok(prog_detail(fd, want)?.map_ids)
}

/// Split raw records into `N` native-endian u32 words each (the leading
/// words of a record the kernel may have made longer).
fn words<const N: usize>(raw: &[u8], rec_size: u32) -> Vec<[u32; N]> {
    let rec = rec_size as usize;
    if rec < N * 4 {
        return Vec::new();
    }
    raw.chunks_exact(rec)
        .map(|r| {
            std::array::from_fn(|i| {
                let b = &r[i * 4..i * 4 + 4];
                u32::from_ne_bytes([b[0], b[1], b[2], b[3]])
            })
        })
        .collect()
}

/// Raw `bpf_line_info` records of a loaded program, as the kernel reports
/// them (insn offsets refer to the translated image).
pub(crate) fn prog_line_info(fd: BorrowedFd<'_>) -> io::Result<Vec<[u32; 4]>> {
    let want = ProgWant {
        line_info: true,
        ..Default::default()
    };
    let d = prog_detail(fd, want)?;
    Ok(words(&d.line_info, d.line_info_rec_size))
}

/// Raw `bpf_func_info` records ({insn_off, type_id}) of a loaded program.
pub(crate) fn prog_func_info(fd: BorrowedFd<'_>) -> io::Result<Vec<[u32; 2]>> {
    let want = ProgWant {
        func_info: true,
        ..Default::default()
    };
    let d = prog_detail(fd, want)?;
    Ok(words(&d.func_info, d.func_info_rec_size))
}

/// A program's native JIT image and the arrays that place it, read with a
/// request of the test's own (not brr's reader), for checking `dump
/// --jited` against objdump and kallsyms.
#[derive(Debug, Clone, Default)]
pub(crate) struct JitedImage {
    /// Every function's code, concatenated in `ksyms` order.
    pub bytes: Vec<u8>,
    pub ksyms: Vec<u64>,
    pub func_lens: Vec<u32>,
    /// Raw `bpf_line_info` records (insn_off, file, line, line_col).
    pub line_info: Vec<[u32; 4]>,
    /// The JIT address of each line record.
    pub jited_line_info: Vec<u64>,
}

/// Read `fd`'s JIT image (see [`JitedImage`]).
pub(crate) fn prog_jited(fd: BorrowedFd<'_>) -> io::Result<JitedImage> {
    let sizes = prog_info(fd)?;
    let mut out = JitedImage {
        bytes: vec![0; sizes.jited_prog_len as usize],
        ksyms: vec![0; sizes.nr_jited_ksyms as usize],
        func_lens: vec![0; sizes.nr_jited_func_lens as usize],
        line_info: vec![[0; 4]; sizes.nr_line_info as usize],
        jited_line_info: vec![0; sizes.nr_jited_line_info as usize],
    };
    // (ProgInfo has a private padding field: no struct literal here.)
    let mut info = ProgInfo::default();
    info.jited_prog_len = out.bytes.len() as u32;
    info.jited_prog_insns = out.bytes.as_mut_ptr() as u64;
    info.nr_jited_ksyms = out.ksyms.len() as u32;
    info.jited_ksyms = out.ksyms.as_mut_ptr() as u64;
    info.nr_jited_func_lens = out.func_lens.len() as u32;
    info.jited_func_lens = out.func_lens.as_mut_ptr() as u64;
    info.nr_line_info = out.line_info.len() as u32;
    info.line_info_rec_size = 16;
    info.line_info = out.line_info.as_mut_ptr() as u64;
    info.nr_jited_line_info = out.jited_line_info.len() as u32;
    info.jited_line_info_rec_size = 8;
    info.jited_line_info = out.jited_line_info.as_mut_ptr() as u64;
    // SAFETY: every pointer set above refers to a buffer of `out` that
    // lives across the call, with the element count (and record size)
    // given beside it.
    unsafe { obj_info(fd, &mut info) }?;
    if info.jited_prog_insns == 0 && !out.bytes.is_empty() {
        return Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            "the kernel withheld the JIT image",
        ));
    }
    Ok(out)
}

/// Map info.
pub(crate) fn map_info(fd: BorrowedFd<'_>) -> io::Result<MapInfo> {
    Ok(bpf::map_info(fd)?)
}

/// The header of a link's info.
#[derive(Debug, Clone, Copy)]
pub(crate) struct LinkHeader {
    pub link_type: u32,
    pub id: u32,
    pub prog_id: u32,
}

/// Link info (raw_tracepoint name not requested).
pub(crate) fn link_info(fd: BorrowedFd<'_>) -> io::Result<LinkHeader> {
    let f = bpf::link_info(fd)?;
    Ok(LinkHeader {
        link_type: f.info.type_,
        id: f.info.id,
        prog_id: f.info.prog_id,
    })
}

/// Name of the raw tracepoint a raw_tracepoint link is attached to, read
/// with the fetch brr uses, whose own decoding is what the tests check.
pub(crate) fn link_tp_name(fd: BorrowedFd<'_>) -> io::Result<String> {
    let (_, name) = bpf::link_info_with_name(fd)?;
    Ok(String::from_utf8_lossy(&name.unwrap_or_default()).into_owned())
}

/// BTF object info (no data requested).
pub(crate) fn btf_info(fd: BorrowedFd<'_>) -> io::Result<BtfInfo> {
    Ok(bpf::btf_info(fd, false)?.0)
}

/// Raw BTF blob of a loaded BTF object.
pub(crate) fn btf_data(fd: BorrowedFd<'_>) -> io::Result<Vec<u8>> {
    Ok(bpf::btf_info(fd, true)?.2)
}

/// Result of one `BPF_PROG_TEST_RUN`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct TestRun {
    /// Program return value (of the last run).
    pub retval: u32,
    /// Average duration per run in ns, as reported by the kernel.
    pub duration_ns: u32,
}

/// Run a program `repeat` times through `BPF_PROG_TEST_RUN` on a zeroed
/// 64-byte packet.
pub(crate) fn test_run(prog: BorrowedFd<'_>, repeat: u32) -> io::Result<TestRun> {
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
pub(crate) fn raw_tracepoint_open(prog: BorrowedFd<'_>, tp: &str) -> io::Result<OwnedFd> {
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
pub(crate) fn enable_stats() -> io::Result<OwnedFd> {
    Ok(bpf::enable_stats()?)
}

// ---- compile-time layout checks against the UAPI ----
const _: () = {
    use std::mem::{offset_of, size_of};
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
};
