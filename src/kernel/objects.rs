//! Enumerate programs, maps, links and BTF objects into model types.
//!
//! Objects come and go while we walk: an ID returned by GET_NEXT_ID may be gone
//! by the time we open it. That is normal and the object is skipped.

use std::collections::BTreeMap;
use std::os::fd::{AsFd, OwnedFd};

use crate::error::{BrrError, Result};
use crate::kernel::link_target::{self, LinkTarget, NoNames, SystemNames};
use crate::kernel::prog_extra::ExtraReader;
use crate::kernel::{fdinfo, names};
use crate::model::{BtfObject, BtfUsers, Link, LinkFields, Map, MapFields, ProgFields, Program};
use crate::sys::bpf::{self, ObjKind};
use crate::sys::fds::FdBatch;
use crate::sys::link_info::{self, FetchedLinkInfo};
use crate::sys::Errno;

const LIST_ACTION: &str = "list eBPF object IDs";

pub(crate) fn open_action(id: u32) -> String {
    format!("open eBPF object id {id}")
}

/// Walk IDs with `next`, read each with `read` and hand it to `each`.
/// `read` returning ENOENT means the object vanished mid-walk, EAGAIN that
/// it is still being created (a link has an ID before it is settled, and
/// the kernel answers as if it did not exist yet); both are skipped. Results come out in ID order because the kernel hands IDs out
/// ascending.
pub(crate) fn walk_each<T>(
    mut next: impl FnMut(u32) -> std::result::Result<Option<u32>, Errno>,
    mut read: impl FnMut(u32) -> std::result::Result<T, Errno>,
    mut each: impl FnMut(T) -> Result<()>,
) -> Result<()> {
    let mut id = 0u32;
    loop {
        id = match next(id) {
            Ok(Some(n)) => n,
            Ok(None) => return Ok(()),
            Err(e) => return Err(BrrError::bpf(LIST_ACTION, e)),
        };
        match read(id) {
            Ok(v) => each(v)?,
            // Gone since GET_NEXT_ID, or (EAGAIN, links) not yet set up
            // by its creator: neither is an object to list.
            Err(Errno(libc::ENOENT | libc::EAGAIN)) => continue,
            Err(e) => return Err(BrrError::bpf(&open_action(id), e)),
        }
    }
}

/// [`walk_each`] into a vector.
pub(crate) fn walk<T>(
    next: impl FnMut(u32) -> std::result::Result<Option<u32>, Errno>,
    read: impl FnMut(u32) -> std::result::Result<T, Errno>,
) -> Result<Vec<T>> {
    let mut out = Vec::new();
    walk_each(next, read, |v| {
        out.push(v);
        Ok(())
    })?;
    Ok(out)
}

/// Walk one kind of object, reading each through its fd.
pub(crate) fn walk_kind<T>(
    kind: ObjKind,
    read: impl FnMut(u32, &OwnedFd) -> std::result::Result<T, Errno>,
    each: impl FnMut(T) -> Result<()>,
) -> Result<()> {
    walk_kind_after(kind, &[], Release::Each, read, each)
}

/// How a walk gives back the fds it opens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Release {
    /// Each right after its read: a reader of fdinfo keeps one fdinfo file
    /// open for the fd number that then comes back every time.
    Each,
    /// In batches ([`FdBatch`]): fewer syscalls where nothing is read by fd
    /// number.
    Batched,
}

impl Release {
    /// Batched unless the reader reads each object's fdinfo.
    pub(crate) fn unless_fdinfo(fdinfo: bool) -> Release {
        if fdinfo {
            Release::Each
        } else {
            Release::Batched
        }
    }
}

/// [`walk_kind`] for a caller that walked moments ago and saw `known`
/// (ascending): those IDs are opened without asking the kernel for them
/// (one gone since is skipped like any vanished object), then the kernel's
/// IDs above the greatest. The kernel hands IDs out cyclically, each above
/// the last one it gave, so an object created since has a greater ID than
/// every known one until the ID space wraps (after 2^31 creations);
/// callers walk in full now and then to catch that. The fds are given
/// back as `release` says.
pub(crate) fn walk_kind_after<T>(
    kind: ObjKind,
    known: &[u32],
    release: Release,
    mut read: impl FnMut(u32, &OwnedFd) -> std::result::Result<T, Errno>,
    each: impl FnMut(T) -> Result<()>,
) -> Result<()> {
    let mut batch = FdBatch::default();
    let mut known = known.iter().copied();
    walk_each(
        |start| next_known(&mut known, start, |s| bpf::next_id(kind, s)),
        |id| {
            let fd = match bpf::fd_by_id(kind, id) {
                // Out of fds while the batch holds some: give them back.
                Err(Errno(libc::EMFILE)) if !batch.is_empty() => {
                    batch.flush();
                    bpf::fd_by_id(kind, id)?
                }
                r => r?,
            };
            let r = read(id, &fd);
            if release == Release::Batched {
                batch.keep(fd);
            }
            r
        },
        each,
    )
}

/// The ID after `start`: the next of `known` while they last and rise,
/// then the kernel's (`next`).
fn next_known(
    known: &mut impl Iterator<Item = u32>,
    start: u32,
    next: impl FnOnce(u32) -> std::result::Result<Option<u32>, Errno>,
) -> std::result::Result<Option<u32>, Errno> {
    match known.next() {
        Some(id) if id > start => Ok(Some(id)),
        _ => next(start),
    }
}

fn collect_kind<T>(
    kind: ObjKind,
    known: &[u32],
    release: Release,
    read: impl FnMut(u32, &OwnedFd) -> std::result::Result<T, Errno>,
) -> Result<Vec<T>> {
    let mut out = Vec::with_capacity(known.len());
    walk_kind_after(kind, known, release, read, |v| {
        out.push(v);
        Ok(())
    })?;
    Ok(out)
}

/// The row of a program from its info struct, of which the kernel filled
/// `len` bytes.
pub(crate) fn program_from_info(info: &bpf::ProgInfo, len: u32, map_ids: Vec<u32>) -> Program {
    Program {
        id: info.id,
        prog_type: names::prog_type(info.prog_type).into(),
        name: names::object_name(&info.name).into(),
        tag: names::hex(&info.tag).into(),
        xlated_size: info.xlated_prog_len,
        jited_size: info.jited_prog_len,
        run_time_ns: info.run_time_ns,
        run_count: info.run_cnt,
        map_ids,
        btf_id: info.btf_id,
        uid: info.created_by_uid,
        gpl_compatible: info.gpl_compatible != 0,
        verified_insns: info.verified_insns_in(len),
        recursion_misses: info.recursion_misses_in(len),
        ..Default::default()
    }
}

/// What a caller already knows of a program from an earlier walk (its
/// full name and memlock cannot change while it lives), so that the reader
/// does not read them again.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct KnownProg {
    pub full_name: Option<String>,
    pub memlock: Option<u64>,
}

/// The programs one walk saw, for the next walk of a stream to copy
/// their rows from (see [`ProgramReader::collect_recalled`]).
#[derive(Debug, Default)]
pub(crate) struct ProgRecall {
    /// Ascending by ID.
    rows: Vec<Recalled>,
    /// What the rows were read with.
    fields: Option<ProgFields>,
}

#[derive(Debug)]
struct Recalled {
    id: u32,
    tag: [u8; 8],
    load_time: u64,
    /// Boxed: the rows move as the walks pass them on.
    row: Box<Program>,
}

/// The recalled row of the program `id` with `tag` loaded at `load_time`,
/// from `old` (ascending by ID, walked in step with a walk that asks for
/// ascending IDs); rows of programs below `id` are gone and dropped.
fn take_same(
    old: &mut std::iter::Peekable<std::vec::IntoIter<Recalled>>,
    id: u32,
    tag: [u8; 8],
    load_time: u64,
) -> Option<Recalled> {
    while old.next_if(|r| r.id < id).is_some() {}
    old.next_if(|r| r.id == id && r.tag == tag && r.load_time == load_time)
}

/// Reads listing rows of programs, sharing the BTF that names them; each
/// row costs one info call, plus what `fields` asks for.
pub struct ProgramReader {
    extra: ExtraReader,
    fields: ProgFields,
}

impl ProgramReader {
    /// A reader of `fields`' `full_name`, `map_ids` and `memlock` (the
    /// others are not read here).
    pub fn new(fields: ProgFields) -> ProgramReader {
        ProgramReader {
            extra: ExtraReader::new(),
            fields,
        }
    }

    pub fn read(&mut self, fd: &OwnedFd) -> std::result::Result<Program, Errno> {
        self.read_known(fd, |_| KnownProg::default())
    }

    /// Read one program; `known` is asked, with the row from the info
    /// struct, what need not be read again.
    pub(crate) fn read_known(
        &mut self,
        fd: &OwnedFd,
        known: impl FnOnce(&Program) -> KnownProg,
    ) -> std::result::Result<Program, Errno> {
        let l = bpf::prog_info_listing(fd, self.fields.map_ids)?;
        Ok(self.row(fd, l, known))
    }

    /// The row of a program whose info struct `l` was read from `fd`.
    fn row(
        &mut self,
        fd: &OwnedFd,
        l: bpf::ListingInfo,
        known: impl FnOnce(&Program) -> KnownProg,
    ) -> Program {
        let f = self.fields;
        let mut p = program_from_info(&l.info, l.len, l.map_ids);
        let k = known(&p);
        let name = f.full_name && k.full_name.is_none();
        let memlock = f.memlock && k.memlock.is_none();
        let first = if name { l.first_func } else { None };
        let x = self.extra.complete(fd, &l.info, l.len, first, memlock);
        p.loaded_at = x.loaded_at.map(Into::into);
        if f.full_name {
            p.full_name = k.full_name.unwrap_or(x.full_name).into();
        }
        if f.memlock {
            p.memlock_bytes = k.memlock.or(x.memlock_bytes);
        }
        p
    }

    /// Every loaded program, in ID order, to `each`.
    pub fn each(&mut self, each: impl FnMut(Program) -> Result<()>) -> Result<()> {
        let release = Release::unless_fdinfo(self.fields.memlock);
        walk_kind_after(ObjKind::Prog, &[], release, |_, fd| self.read(fd), each)
    }

    /// Every loaded program, in ID order, asking `known` before each read.
    pub(crate) fn collect_known(
        &mut self,
        mut known: impl FnMut(&Program) -> KnownProg,
    ) -> Result<Vec<Program>> {
        let release = Release::unless_fdinfo(self.fields.memlock);
        collect_kind(ObjKind::Prog, &[], release, |_, fd| {
            self.read_known(fd, &mut known)
        })
    }

    /// Every loaded program, in ID order, as [`Self::collect_known`] reads
    /// them, after a walk that saw `recall`'s programs (after none
    /// with `full`: every ID is asked of the kernel). A program `recall`
    /// holds, the same ID, tag and load time, is the same program: its row
    /// is copied from there and only what changes while a program lives
    /// (its counters and map IDs) is taken from its info struct, so its
    /// names, tag, load time, full name and memlock are neither read nor
    /// formatted again. `recall` then holds this walk's programs; after an
    /// error it holds none.
    pub(crate) fn collect_recalled(
        &mut self,
        recall: &mut ProgRecall,
        full: bool,
        mut known: impl FnMut(&Program) -> KnownProg,
    ) -> Result<Vec<Program>> {
        if recall.fields != Some(self.fields) {
            recall.rows.clear();
        }
        let ids: Vec<u32> = if full {
            Vec::new()
        } else {
            recall.rows.iter().map(|r| r.id).collect()
        };
        let mut old = std::mem::take(&mut recall.rows).into_iter().peekable();
        let mut kept = Vec::with_capacity(old.len());
        // Recalled programs read no fdinfo (their memlock is known), so
        // only new ones pay for batching's changing fd numbers.
        let release = if old.len() > 0 {
            Release::Batched
        } else {
            Release::unless_fdinfo(self.fields.memlock)
        };
        let out = collect_kind(ObjKind::Prog, &ids, release, |_, fd| {
            let l = bpf::prog_info_listing(fd, self.fields.map_ids)?;
            let (id, tag, load_time) = (l.info.id, l.info.tag, l.info.load_time);
            let row = match take_same(&mut old, id, tag, load_time) {
                Some(r) => {
                    let mut p = Program::clone(&r.row);
                    p.run_time_ns = l.info.run_time_ns;
                    p.run_count = l.info.run_cnt;
                    p.recursion_misses = l.info.recursion_misses_in(l.len);
                    p.map_ids = l.map_ids;
                    kept.push(r);
                    p
                }
                None => {
                    let p = self.row(fd, l, &mut known);
                    let row = Box::new(p.clone());
                    kept.push(Recalled {
                        id,
                        tag,
                        load_time,
                        row,
                    });
                    p
                }
            };
            Ok(row)
        })?;
        recall.rows = kept;
        recall.fields = Some(self.fields);
        Ok(out)
    }

    /// How many fdinfo files this reader has read.
    pub fn fdinfo_reads(&self) -> u64 {
        self.extra.fdinfo_reads()
    }
}

/// Each program's id and map IDs in ID order: one info call per program,
/// for what a listing needs to know about all programs before its rows.
pub(crate) fn program_maps_each(mut each: impl FnMut(u32, Vec<u32>) -> Result<()>) -> Result<()> {
    walk_kind(
        ObjKind::Prog,
        |_, fd| bpf::prog_info_listing(fd, true),
        |l| each(l.info.id, l.map_ids),
    )
}

/// Reads map rows: the info struct, plus with `fields.fdinfo` the fdinfo's
/// memlock and frozen.
pub struct MapReader {
    extra: ExtraReader,
    fields: MapFields,
}

impl Default for MapReader {
    fn default() -> Self {
        MapReader::new(MapFields::ALL)
    }
}

impl MapReader {
    pub fn new(fields: MapFields) -> MapReader {
        MapReader {
            extra: ExtraReader::new(),
            fields,
        }
    }

    pub fn read(&mut self, fd: &OwnedFd) -> std::result::Result<Map, Errno> {
        self.read_known(fd, |_| None)
    }

    /// Read one map; `known_memlock` is asked, with the row from the info
    /// struct, for a memlock that need not be read again (frozen is then
    /// not read either).
    pub(crate) fn read_known(
        &mut self,
        fd: &OwnedFd,
        known_memlock: impl FnOnce(&Map) -> Option<u64>,
    ) -> std::result::Result<Map, Errno> {
        let mut m = map_from_info(&bpf::map_info(fd)?);
        if !self.fields.fdinfo {
            return Ok(m);
        }
        if let Some(b) = known_memlock(&m) {
            m.memlock_bytes = Some(b);
            return Ok(m);
        }
        let (memlock, frozen) = self
            .extra
            .fdinfo_object(fd, b"map_id", m.id, |raw| {
                (
                    fdinfo::value_in(raw, b"memlock"),
                    fdinfo::value_in(raw, b"frozen"),
                )
            })
            .unwrap_or_default();
        m.memlock_bytes = memlock;
        m.frozen = match frozen {
            Some(0) => Some(false),
            Some(1) => Some(true),
            _ => None,
        };
        Ok(m)
    }

    pub fn each(&mut self, each: impl FnMut(Map) -> Result<()>) -> Result<()> {
        let release = Release::unless_fdinfo(self.fields.fdinfo);
        walk_kind_after(ObjKind::Map, &[], release, |_, fd| self.read(fd), each)
    }

    /// Every map, in ID order, asking `known_memlock` before each fdinfo
    /// read.
    pub(crate) fn collect_known(
        &mut self,
        mut known_memlock: impl FnMut(&Map) -> Option<u64>,
    ) -> Result<Vec<Map>> {
        let release = Release::unless_fdinfo(self.fields.fdinfo);
        collect_kind(ObjKind::Map, &[], release, |_, fd| {
            self.read_known(fd, &mut known_memlock)
        })
    }

    /// Every map, in ID order, as [`Self::collect_known`] reads them,
    /// after a walk that left `recall`: a map `recall` holds is not opened
    /// at all, its row is copied, since GET_NEXT_ID still listing its ID
    /// says it lives, and an ID is handed out again only after the
    /// kernel's ID space wraps (2^31 creations later). `fixed` says which
    /// rows read now hold nothing that can change while the map lives;
    /// those are kept in `recall` for the next walk, with `frozen` (which
    /// can change) left out. With `full` every map is read again. After an
    /// error `recall` holds none.
    pub(crate) fn collect_recalled(
        &mut self,
        recall: &mut MapRecall,
        full: bool,
        mut known_memlock: impl FnMut(&Map) -> Option<u64>,
        fixed: impl Fn(&Map) -> bool,
    ) -> Result<Vec<Map>> {
        if full || recall.fields != Some(self.fields) {
            recall.rows.clear();
        }
        let rows = std::mem::take(&mut recall.rows);
        let (out, kept) = walk_recalled(
            rows,
            |start| bpf::next_id(ObjKind::Map, start),
            |id| {
                let fd = bpf::fd_by_id(ObjKind::Map, id)?;
                self.read_known(&fd, &mut known_memlock)
            },
            fixed,
        )?;
        recall.rows = kept;
        recall.fields = Some(self.fields);
        Ok(out)
    }

    /// How many fdinfo files this reader has read.
    pub fn fdinfo_reads(&self) -> u64 {
        self.extra.fdinfo_reads()
    }
}

/// The maps one walk read whose rows cannot change while they live, for
/// the next walk to copy instead of opening them (see
/// [`MapReader::collect_recalled`]).
#[derive(Debug, Default)]
pub(crate) struct MapRecall {
    /// Ascending by ID.
    rows: Vec<Map>,
    /// What the rows were read with.
    fields: Option<MapFields>,
}

/// The walk of [`MapReader::collect_recalled`] over IDs from `next`:
/// the rows of `old` (ascending) whose IDs are listed are copied, other
/// IDs are read with `read`. Gives every row, and the rows to recall next
/// time: the copied ones and those read now that `fixed` accepts.
fn walk_recalled(
    old: Vec<Map>,
    next: impl FnMut(u32) -> std::result::Result<Option<u32>, Errno>,
    mut read: impl FnMut(u32) -> std::result::Result<Map, Errno>,
    fixed: impl Fn(&Map) -> bool,
) -> Result<(Vec<Map>, Vec<Map>)> {
    let mut old = old.into_iter().peekable();
    let mut kept = Vec::with_capacity(old.len());
    let mut out = Vec::with_capacity(old.len());
    walk_each(
        next,
        |id| {
            // Rows below `id` are of maps that are gone.
            while old.next_if(|m| m.id < id).is_some() {}
            match old.next_if(|m| m.id == id) {
                Some(m) => Ok((m, true)),
                None => Ok((read(id)?, false)),
            }
        },
        |(m, recalled)| {
            if recalled || fixed(&m) {
                kept.push(Map {
                    frozen: None,
                    ..m.clone()
                });
            }
            out.push(m);
            Ok(())
        },
    )?;
    Ok((out, kept))
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
        flags: i.map_flags,
        ..Default::default()
    }
}

const LINK_TRACING: u32 = 2;

fn nonzero(v: u32) -> Option<u32> {
    (v != 0).then_some(v)
}

/// A link row from its fetched info and decoded attach point.
pub(crate) fn link_from_target(fetched: &FetchedLinkInfo, t: LinkTarget) -> Link {
    let i = &fetched.info;
    let (obj, btf) = if i.type_ == LINK_TRACING {
        let t = i.tracing();
        (nonzero(t.target_obj_id), nonzero(t.target_btf_id))
    } else {
        (None, None)
    };
    Link {
        id: i.id,
        link_type: names::link_type(i.type_),
        prog_id: i.prog_id,
        attach_type: t.attach_type,
        target_obj_id: obj,
        target_btf_id: btf,
        pinned_paths: Vec::new(),
        target: t.target,
        functions: t.functions,
        keepers: None,
    }
}

/// Reads link rows, naming targets (with `fields.target_names`) through
/// one cached resolver.
pub(crate) struct LinkReader {
    names: Option<SystemNames>,
}

impl Default for LinkReader {
    fn default() -> Self {
        LinkReader::new(LinkFields::ALL)
    }
}

impl LinkReader {
    pub(crate) fn new(fields: LinkFields) -> LinkReader {
        LinkReader {
            names: fields.target_names.then(SystemNames::default),
        }
    }

    pub(crate) fn read(&mut self, fd: &OwnedFd) -> std::result::Result<Link, Errno> {
        let (fetched, name) = link_info::link_info_with_name(fd.as_fd())?;
        let t = match &mut self.names {
            Some(names) => link_target::decode(&fetched, name.as_deref(), names),
            None => link_target::decode(&fetched, name.as_deref(), &mut NoNames),
        };
        Ok(link_from_target(&fetched, t))
    }

    pub(crate) fn each(&mut self, each: impl FnMut(Link) -> Result<()>) -> Result<()> {
        walk_kind(ObjKind::Link, |_, fd| self.read(fd), each)
    }
}

/// Every link with `fields`, in ID order.
pub(crate) fn links(fields: LinkFields) -> Result<Vec<Link>> {
    let mut r = LinkReader::new(fields);
    collect_kind(ObjKind::Link, &[], Release::Each, |_, fd| r.read(fd))
}

pub(crate) fn btfs() -> Result<Vec<BtfObject>> {
    collect_kind(ObjKind::Btf, &[], Release::Each, |_, fd| {
        let (info, name, _) = bpf::btf_info(fd, false)?;
        Ok(BtfObject {
            id: info.id,
            name: if name.is_empty() { "-".into() } else { name },
            size: info.btf_size,
            pinned_paths: Vec::new(),
            users: None,
        })
    })
}

/// BTF object id -> the programs and maps whose BTF it is (their info's
/// `btf_id`), each list in ID order: one info call per program and map.
pub(crate) fn btf_users() -> Result<BTreeMap<u32, BtfUsers>> {
    let mut out: BTreeMap<u32, BtfUsers> = BTreeMap::new();
    walk_kind(
        ObjKind::Prog,
        |_, fd| bpf::prog_info_listing(fd, false),
        |l| {
            if l.info.btf_id != 0 {
                out.entry(l.info.btf_id)
                    .or_default()
                    .prog_ids
                    .push(l.info.id);
            }
            Ok(())
        },
    )?;
    walk_kind(
        ObjKind::Map,
        |_, fd| bpf::map_info(fd),
        |i| {
            if i.btf_id != 0 {
                out.entry(i.btf_id).or_default().map_ids.push(i.id);
            }
            Ok(())
        },
    )?;
    Ok(out)
}

/// Open a program the user named by ID. IDs past u32 cannot exist.
pub(crate) fn open_program(id: u64) -> Result<OwnedFd> {
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
    fn a_walk_after_known_ids_asks_the_kernel_only_above_them() {
        // The kernel now has 3, 9 (5 went away) and 20, 31 (loaded since).
        let kernel = [3u32, 9, 20, 31];
        let mut asked = Vec::new();
        let mut known = [3u32, 5, 9].into_iter();
        let got = walk(
            |start| {
                next_known(&mut known, start, |s| {
                    asked.push(s);
                    ids(&kernel)(s)
                })
            },
            |id| {
                if kernel.contains(&id) {
                    Ok(id)
                } else {
                    Err(Errno(libc::ENOENT))
                }
            },
        )
        .unwrap();
        assert_eq!(got, vec![3, 9, 20, 31]);
        assert_eq!(asked, vec![9, 20, 31], "only from the greatest known ID on");
    }

    #[test]
    fn recalled_maps_are_not_opened_and_gone_ones_are_dropped() {
        let map = |id: u32, map_type: &str| Map {
            id,
            map_type: map_type.into(),
            frozen: Some(true),
            memlock_bytes: Some(4096),
            ..Map::default()
        };
        let fixed = |m: &Map| m.map_type == "array";
        // Recalled from the last walk: 1 (gone since) and 3.
        let old = vec![map(1, "array"), map(3, "array")];
        // The kernel now lists 2 (new, fixed), 3, 4 (gone before it is
        // opened) and 5 (new, a hash map whose memlock can change).
        let kernel = [2u32, 3, 4, 5];
        let mut opened = Vec::new();
        let (out, kept) = walk_recalled(
            old,
            ids(&kernel),
            |id| {
                opened.push(id);
                match id {
                    2 => Ok(map(2, "array")),
                    5 => Ok(map(5, "hash")),
                    _ => Err(Errno(libc::ENOENT)),
                }
            },
            fixed,
        )
        .unwrap();
        assert_eq!(opened, vec![2, 4, 5], "3 is recalled, not opened");
        let ids_of = |v: &[Map]| v.iter().map(|m| m.id).collect::<Vec<_>>();
        assert_eq!(ids_of(&out), vec![2, 3, 5]);
        assert_eq!(ids_of(&kept), vec![2, 3], "1 went away, 5 can change");
        assert_eq!(out[0].frozen, Some(true), "a map read now says so");
        assert!(kept.iter().all(|m| m.frozen.is_none()), "frozen can change");

        // The next walk opens only what it does not recall.
        let mut opened = Vec::new();
        let (out, kept) = walk_recalled(
            kept,
            ids(&[2, 5, 6]),
            |id| {
                opened.push(id);
                Ok(map(id, "hash"))
            },
            fixed,
        )
        .unwrap();
        assert_eq!(opened, vec![5, 6]);
        assert_eq!(ids_of(&out), vec![2, 5, 6]);
        assert_eq!(ids_of(&kept), vec![2]);
        assert_eq!(out[0].memlock_bytes, Some(4096));
    }

    #[test]
    fn a_recalled_row_is_the_same_id_tag_and_load_time() {
        let rec = |id: u32, tag: u8, load_time: u64| Recalled {
            id,
            tag: [tag; 8],
            load_time,
            row: Box::new(Program {
                id,
                ..Program::default()
            }),
        };
        let mut old = vec![rec(3, 1, 10), rec(5, 1, 10), rec(9, 1, 10), rec(12, 1, 10)]
            .into_iter()
            .peekable();
        let mut take = |id, tag, t| take_same(&mut old, id, [tag; 8], t).map(|r| r.id);
        assert_eq!(take(3, 1, 10), Some(3));
        // 5 went away; 9 has another tag, 12 another load time: other programs.
        assert_eq!(take(9, 2, 10), None);
        assert_eq!(take(12, 1, 11), None);
        // Loaded since the last walk.
        assert_eq!(take(14, 1, 10), None);
        assert!(old.next().is_none(), "every older row was passed");
        let mut old = vec![rec(3, 1, 10), rec(9, 1, 10)].into_iter().peekable();
        assert_eq!(take_same(&mut old, 9, [1; 8], 10).map(|r| r.id), Some(9));
    }

    #[test]
    fn walk_skips_vanished_objects() {
        let got = walk(ids(&[3, 5, 9, 12, 14]), |id| match id {
            5 | 12 => Err(Errno(libc::ENOENT)),
            14 => Err(Errno(libc::EAGAIN)),
            _ => Ok(id),
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
    fn link_rows_from_decoded_infos() {
        use crate::kernel::link_target::NoNames;
        use crate::sys::link_info::{BpfLinkInfo, Cgroup, Tracing};
        let mut c = BpfLinkInfo::new(3, 34, 200);
        c.set_cgroup(Cgroup {
            cgroup_id: 9,
            attach_type: 0,
            _pad: 0,
        });
        let f = FetchedLinkInfo { info: c, len: 64 };
        let l = link_from_target(&f, link_target::decode(&f, None, &mut NoNames));
        assert_eq!(l.link_type, "cgroup");
        assert_eq!(l.attach_type.as_deref(), Some("cgroup_inet_ingress"));
        assert_eq!(l.target.as_deref(), Some("cgroup_id 9"));
        assert_eq!((l.id, l.prog_id), (34, 200));
        assert_eq!((l.target_obj_id, l.target_btf_id), (None, None));
        let mut t = BpfLinkInfo::new(2, 35, 201);
        t.set_tracing(Tracing {
            attach_type: 25,
            target_obj_id: 7,
            ..Default::default()
        });
        let f = FetchedLinkInfo { info: t, len: 64 };
        let l = link_from_target(&f, link_target::decode(&f, None, &mut NoNames));
        assert_eq!(l.attach_type.as_deref(), Some("trace_fexit"));
        assert_eq!((l.target_obj_id, l.target_btf_id), (Some(7), None));
        let f = FetchedLinkInfo {
            info: BpfLinkInfo::new(99, 36, 202),
            len: 64,
        };
        let l = link_from_target(&f, link_target::decode(&f, None, &mut NoNames));
        assert_eq!(l.target.as_deref(), Some("unknown(99)"));
        assert_eq!(l.attach_type, None);
    }
}
