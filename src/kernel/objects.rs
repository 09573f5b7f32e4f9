//! Enumerate programs, maps, links and BTF objects into model types.
//!
//! Objects come and go while we walk: an ID returned by GET_NEXT_ID may be gone
//! by the time we open it. That is normal and the object is skipped.

use std::os::fd::OwnedFd;

use crate::error::{BrrError, Result};
use crate::kernel::names;
use crate::model::{BtfObject, Link, Map, Program};
use crate::sys::bpf::{self, ObjKind, ProgWant};
use crate::sys::Errno;

const LIST_ACTION: &str = "list eBPF object IDs";

pub fn open_action(id: u32) -> String {
    format!("open eBPF object id {id}")
}

/// Walk IDs with `next`, read each with `read`. `read` returning ENOENT means
/// the object vanished mid-walk and is skipped. Results come out in ID order
/// because the kernel hands IDs out ascending.
pub fn walk<T>(
    mut next: impl FnMut(u32) -> std::result::Result<Option<u32>, Errno>,
    mut read: impl FnMut(u32) -> std::result::Result<T, Errno>,
) -> Result<Vec<T>> {
    let mut out = Vec::new();
    let mut id = 0u32;
    loop {
        id = match next(id) {
            Ok(Some(n)) => n,
            Ok(None) => break,
            Err(e) => return Err(BrrError::bpf(LIST_ACTION, e)),
        };
        match read(id) {
            Ok(v) => out.push(v),
            Err(Errno(libc::ENOENT)) => continue,
            Err(e) => return Err(BrrError::bpf(&open_action(id), e)),
        }
    }
    Ok(out)
}

fn walk_kind<T>(
    kind: ObjKind,
    mut read: impl FnMut(u32, &OwnedFd) -> std::result::Result<T, Errno>,
) -> Result<Vec<T>> {
    walk(
        |start| bpf::next_id(kind, start),
        |id| {
            let fd = bpf::fd_by_id(kind, id)?;
            read(id, &fd)
        },
    )
}

pub fn program_from_info(info: &bpf::ProgInfo, map_ids: Vec<u32>) -> Program {
    Program {
        id: info.id,
        prog_type: names::prog_type(info.prog_type),
        name: names::object_name(&info.name),
        tag: names::hex(&info.tag),
        xlated_size: info.xlated_prog_len,
        jited_size: info.jited_prog_len,
        run_time_ns: info.run_time_ns,
        run_count: info.run_cnt,
        recursion_misses: info.recursion_misses,
        map_ids,
        btf_id: info.btf_id,
        pinned_paths: Vec::new(),
    }
}

pub fn programs() -> Result<Vec<Program>> {
    let want = ProgWant {
        map_ids: true,
        ..Default::default()
    };
    walk_kind(ObjKind::Prog, |_, fd| {
        let d = bpf::prog_detail(fd, want)?;
        Ok(program_from_info(&d.info, d.map_ids))
    })
}

/// Programs with counters but without map IDs: one info call per program,
/// for `top`, which enumerates every window.
pub fn programs_brief() -> Result<Vec<Program>> {
    walk_kind(ObjKind::Prog, |_, fd| {
        let d = bpf::prog_detail(fd, ProgWant::default())?;
        Ok(program_from_info(&d.info, Vec::new()))
    })
}

/// Programs as [`programs_brief`] reads them, each with what `extra` reads
/// from the fd brr opened for it (the exporter's full names and memlock).
pub fn programs_with<T>(
    mut extra: impl FnMut(&Program, &OwnedFd) -> T,
) -> Result<Vec<(Program, T)>> {
    walk_kind(ObjKind::Prog, |_, fd| {
        let d = bpf::prog_detail(fd, ProgWant::default())?;
        let p = program_from_info(&d.info, Vec::new());
        let t = extra(&p, fd);
        Ok((p, t))
    })
}

/// Maps, each with what `extra` reads from its fd.
pub fn maps_with<T>(mut extra: impl FnMut(&Map, &OwnedFd) -> T) -> Result<Vec<(Map, T)>> {
    walk_kind(ObjKind::Map, |_, fd| {
        let m = map_from_info(&bpf::map_info(fd)?);
        let t = extra(&m, fd);
        Ok((m, t))
    })
}

fn map_from_info(i: &bpf::MapInfo) -> Map {
    Map {
        id: i.id,
        map_type: names::map_type(i.map_type),
        name: names::object_name(&i.name),
        key_size: i.key_size,
        value_size: i.value_size,
        max_entries: i.max_entries,
        btf_id: i.btf_id,
        pinned_paths: Vec::new(),
    }
}

pub fn maps() -> Result<Vec<Map>> {
    walk_kind(ObjKind::Map, |_, fd| Ok(map_from_info(&bpf::map_info(fd)?)))
}

const LINK_TRACING: u32 = 2;
const LINK_CGROUP: u32 = 3;
const LINK_NETNS: u32 = 5;

fn nonzero(v: u32) -> Option<u32> {
    (v != 0).then_some(v)
}

pub fn link_from_info(i: &bpf::LinkInfo) -> Link {
    let (attach, obj, btf) = match i.link_type {
        LINK_TRACING => (
            Some(names::attach_type(i.union_u32(0))),
            nonzero(i.union_u32(4)),
            nonzero(i.union_u32(8)),
        ),
        LINK_CGROUP => (Some(names::attach_type(i.union_u32(8))), None, None),
        LINK_NETNS => (Some(names::attach_type(i.union_u32(4))), None, None),
        _ => (None, None, None),
    };
    Link {
        id: i.id,
        link_type: names::link_type(i.link_type),
        prog_id: i.prog_id,
        attach_type: attach,
        target_obj_id: obj,
        target_btf_id: btf,
        pinned_paths: Vec::new(),
    }
}

pub fn links() -> Result<Vec<Link>> {
    walk_kind(ObjKind::Link, |_, fd| {
        Ok(link_from_info(&bpf::link_info(fd)?))
    })
}

pub fn btfs() -> Result<Vec<BtfObject>> {
    walk_kind(ObjKind::Btf, |_, fd| {
        let (info, name, _) = bpf::btf_info(fd, false)?;
        Ok(BtfObject {
            id: info.id,
            name: if name.is_empty() { "-".into() } else { name },
            size: info.btf_size,
            pinned_paths: Vec::new(),
        })
    })
}

/// Open a program the user named by ID. IDs past u32 cannot exist.
pub fn open_program(id: u64) -> Result<OwnedFd> {
    let id32 = u32::try_from(id).map_err(|_| BrrError::NoProgram(id))?;
    bpf::fd_by_id(ObjKind::Prog, id32).map_err(|e| match e.0 {
        libc::ENOENT => BrrError::NoProgram(id),
        _ => BrrError::bpf(&open_action(id32), e),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(list: &[u32]) -> impl FnMut(u32) -> std::result::Result<Option<u32>, Errno> + '_ {
        move |start| Ok(list.iter().copied().find(|&i| i > start))
    }

    #[test]
    fn walk_skips_vanished_objects() {
        let got = walk(ids(&[3, 5, 9, 12]), |id| {
            if id == 5 || id == 12 {
                Err(Errno(libc::ENOENT))
            } else {
                Ok(id)
            }
        })
        .unwrap();
        assert_eq!(got, vec![3, 9]);
    }

    #[test]
    fn walk_reports_other_errors_with_the_id() {
        let err = walk(ids(&[3, 5]), |id| {
            if id == 5 {
                Err(Errno(libc::EPERM))
            } else {
                Ok(id)
            }
        })
        .unwrap_err();
        assert!(err.render().starts_with(
            "brr: permission denied while trying to open eBPF object id 5; needs CAP_SYS_ADMIN"
        ));
        let err = walk(ids(&[3]), |_| Err::<u32, _>(Errno(libc::EIO))).unwrap_err();
        assert_eq!(err.exit_code(), 1);
        assert!(err
            .render()
            .starts_with("brr: failed to open eBPF object id 3: "));
    }

    #[test]
    fn walk_listing_errors() {
        let err = walk(|_| Err(Errno(libc::EPERM)), |id: u32| Ok(id)).unwrap_err();
        assert!(err.render().starts_with(
            "brr: permission denied while trying to list eBPF object IDs; needs CAP_SYS_ADMIN"
        ));
        let empty = walk(|_| Ok(None), |id: u32| Ok(id)).unwrap();
        assert!(empty.is_empty());
    }

    #[test]
    fn link_union_decoding() {
        let mut raw = [0u8; 112];
        raw[0] = 3; // cgroup
        raw[4] = 34;
        raw[8] = 200;
        raw[16 + 8] = 0; // attach type 0 after cgroup_id
        let info = link_info_from_bytes(&raw);
        let l = link_from_info(&info);
        assert_eq!(l.link_type, "cgroup");
        assert_eq!(l.attach_type.as_deref(), Some("cgroup_inet_ingress"));
        assert_eq!(l.prog_id, 200);
        raw[0] = 2; // tracing
        raw[16] = 25;
        raw[20] = 7;
        let l = link_from_info(&link_info_from_bytes(&raw));
        assert_eq!(l.attach_type.as_deref(), Some("trace_fexit"));
        assert_eq!(l.target_obj_id, Some(7));
        assert_eq!(l.target_btf_id, None);
        raw[0] = 7; // perf_event
        let l = link_from_info(&link_info_from_bytes(&raw));
        assert_eq!((l.attach_type, l.target_obj_id), (None, None));
    }

    fn link_info_from_bytes(raw: &[u8; 112]) -> bpf::LinkInfo {
        let u = |o: usize| u32::from_ne_bytes([raw[o], raw[o + 1], raw[o + 2], raw[o + 3]]);
        let mut union = [0u8; 96];
        union.copy_from_slice(&raw[16..]);
        bpf::LinkInfo::new(u(0), u(4), u(8), union)
    }
}
