//! The program reads the sampling profiler makes: every loaded program's
//! ID, a program's image with only what attribution needs, and the
//! prog_array slots a tail-call chain goes through.

use std::os::fd::OwnedFd;

use super::lines::{self, BtfCache};
use super::objects;
use crate::error::{BrrError, Result};
use crate::model::image::ProgramImage;
use crate::sys::bpf::{self, ObjKind, ProgWant};
use crate::sys::Errno;

/// What the profiler asks the kernel for: JIT ranges and line and function
/// records, without xlated instructions or map IDs.
const SAMPLED: ProgWant = ProgWant {
    map_ids: false,
    xlated: false,
    jit_ranges: true,
    line_info: true,
    func_info: true,
};

/// The kernel's map type of a tail-call table.
const BPF_MAP_TYPE_PROG_ARRAY: u32 = 3;

/// Whether brr may list programs at all (the first GET_NEXT_ID).
pub(crate) fn check_listing() -> Result<()> {
    bpf::next_id(ObjKind::Prog, 0)
        .map(drop)
        .map_err(|e| BrrError::bpf("list eBPF object IDs", e))
}

/// The IDs of every loaded program (empty when they cannot be listed).
pub(crate) fn program_ids() -> Vec<u32> {
    objects::walk(|start| bpf::next_id(ObjKind::Prog, start), Ok).unwrap_or_default()
}

/// Every loaded program read with `read`; one that vanishes meanwhile is
/// skipped.
pub(crate) fn each_program<T>(
    mut read: impl FnMut(&OwnedFd) -> std::result::Result<T, Errno>,
) -> Result<Vec<T>> {
    objects::walk(
        |start| bpf::next_id(ObjKind::Prog, start),
        |id| read(&bpf::fd_by_id(ObjKind::Prog, id)?),
    )
}

/// The image of one open program, as attribution reads it.
pub(crate) fn sampled_image(
    fd: &OwnedFd,
    cache: &mut BtfCache,
) -> std::result::Result<ProgramImage, Errno> {
    lines::read_image(fd, SAMPLED, cache)
}

/// [`sampled_image`] of program `id` (`Ok(None)` if it is gone).
pub(crate) fn sampled_image_by_id(
    id: u32,
    cache: &mut BtfCache,
) -> std::result::Result<Option<ProgramImage>, Errno> {
    let read = bpf::fd_by_id(ObjKind::Prog, id).and_then(|fd| sampled_image(&fd, cache));
    match read {
        Ok(m) => Ok(Some(m)),
        Err(Errno(libc::ENOENT)) => Ok(None),
        Err(e) => Err(e),
    }
}

/// A program's name, translated instructions and map IDs, for the
/// tail-call walk; `None` when it is gone.
pub(crate) fn name_code_and_maps(id: u32) -> Option<(String, Vec<u8>, Vec<u32>)> {
    let fd = bpf::fd_by_id(ObjKind::Prog, id).ok()?;
    let want = ProgWant {
        map_ids: true,
        xlated: true,
        jit_ranges: false,
        line_info: false,
        func_info: false,
    };
    let d = bpf::prog_detail(&fd, want).ok()?;
    let name_len = d.info.name.iter().position(|&b| b == 0).unwrap_or(16);
    let name = String::from_utf8_lossy(d.info.name.get(..name_len).unwrap_or(&[])).into_owned();
    Some((name, d.xlated, d.map_ids))
}

/// The programs in the first `max_slots` slots of map `id` when it is a
/// prog_array (else none).
pub(crate) fn prog_array_targets(id: u32, max_slots: u32) -> Vec<u32> {
    let Ok(map) = bpf::fd_by_id(ObjKind::Map, id) else {
        return Vec::new();
    };
    let Ok(info) = bpf::map_info(&map) else {
        return Vec::new();
    };
    if info.map_type != BPF_MAP_TYPE_PROG_ARRAY {
        return Vec::new();
    }
    (0..info.max_entries.min(max_slots))
        .filter_map(|key| bpf::map_lookup_u32(&map, key).ok().flatten())
        .collect()
}
