//! The rows of `brr prog`, `map` and `link`, one object at a time, with
//! their pins and, with `-x`, their context.

use std::collections::HashMap;
use std::path::Path;

use super::context::{add_map_memlock, add_prog_keepers};
use crate::error::Result;
use crate::kernel::owners::{self, HeldKind};
use crate::kernel::{bpffs, objects, stats::StatsGuard};
use crate::model::{Holder, Keepers, Link, Map, Program};

/// Programs as `brr prog` lists them, in ID order, with their pins; with
/// `stats`, statistics are on while they
/// are read, so the run counters are current; with `extended`, who holds
/// each, where it is attached and the memlock of its maps.
pub fn programs(stats: bool, extended: bool, bpffs: impl AsRef<Path>) -> Result<Vec<Program>> {
    let mut out = Vec::new();
    programs_each(stats, extended, bpffs, |p| {
        out.push(p);
        Ok(())
    })?;
    Ok(out)
}

/// [`programs`] one at a time, each handed to `each` as soon as it is
/// read, so that a listing holds one program at a time. What a row needs
/// from other objects is read first and kept small: pins, and with
/// `extended` each map's memlock, how many programs use each map (one
/// brief pass over the programs), the links and the owner scan.
pub fn programs_each(
    stats: bool,
    extended: bool,
    bpffs: impl AsRef<Path>,
    mut each: impl FnMut(Program) -> Result<()>,
) -> Result<()> {
    let _stats = stats.then(StatsGuard::enable).transpose()?;
    let pins = bpffs::scan(bpffs);
    // Maps' memlock and users take a walk over every map and program
    // before the rows: `-x` work, like the owner scan.
    let context = if extended {
        let mut memlock: HashMap<u32, Option<u64>> = HashMap::new();
        objects::MapReader::new().each(|m| {
            memlock.insert(m.id, m.memlock_bytes);
            Ok(())
        })?;
        let mut users: HashMap<u32, u32> = HashMap::new();
        objects::program_maps_each(|_, mut ids| {
            ids.sort_unstable();
            ids.dedup();
            for id in ids {
                *users.entry(id).or_default() += 1;
            }
            Ok(())
        })?;
        Some((memlock, users, objects::links()?, owners::scan()))
    } else {
        None
    };
    objects::ProgramReader::new(true).each(|mut p| {
        p.pinned_paths = pins.for_prog(p.id);
        if let Some((memlock, users, links, owners)) = &context {
            add_map_memlock(&mut p, memlock, users);
            add_prog_keepers(std::slice::from_mut(&mut p), links, owners);
        }
        each(p)
    })
}

/// Maps as `brr map` lists them, with their pins; with `extended`, who
/// holds each (a process, else the first program using it).
pub fn maps(extended: bool, bpffs: impl AsRef<Path>) -> Result<Vec<Map>> {
    let mut out = Vec::new();
    maps_each(extended, bpffs, |m| {
        out.push(m);
        Ok(())
    })?;
    Ok(out)
}

/// [`maps`] one at a time, in ID order.
pub fn maps_each(
    extended: bool,
    bpffs: impl AsRef<Path>,
    mut each: impl FnMut(Map) -> Result<()>,
) -> Result<()> {
    let pins = bpffs::scan(bpffs);
    let keepers = if extended {
        let mut user: HashMap<u32, u32> = HashMap::new();
        objects::program_maps_each(|prog, ids| {
            for id in ids {
                user.entry(id).or_insert(prog);
            }
            Ok(())
        })?;
        Some((user, owners::scan()))
    } else {
        None
    };
    objects::MapReader::new().each(|mut m| {
        m.pinned_paths = pins.for_map(m.id);
        if let Some((user, owners)) = &keepers {
            m.keepers = Some(Keepers {
                owners: owners.of(HeldKind::Map, m.id).to_vec(),
                held_by: user.get(&m.id).map(|&id| Holder::Prog(id)),
            });
        }
        each(m)
    })
}

/// Links as `brr link` lists them, with their pins; with `extended`, who
/// holds each.
pub fn links(extended: bool, bpffs: impl AsRef<Path>) -> Result<Vec<Link>> {
    let mut out = Vec::new();
    links_each(extended, bpffs, |l| {
        out.push(l);
        Ok(())
    })?;
    Ok(out)
}

/// [`links`] one at a time, in ID order.
pub fn links_each(
    extended: bool,
    bpffs: impl AsRef<Path>,
    mut each: impl FnMut(Link) -> Result<()>,
) -> Result<()> {
    let pins = bpffs::scan(bpffs);
    let owners = extended.then(owners::scan);
    objects::LinkReader::new().each(|mut l| {
        l.pinned_paths = pins.for_link(l.id);
        if let Some(owners) = &owners {
            l.keepers = Some(Keepers {
                owners: owners.of(HeldKind::Link, l.id).to_vec(),
                held_by: None,
            });
        }
        each(l)
    })
}

pub fn attach_prog_pins(progs: &mut [Program], root: impl AsRef<Path>) {
    let pins = bpffs::scan(root);
    for p in progs {
        p.pinned_paths = pins.for_prog(p.id);
    }
}

pub fn attach_map_pins(maps: &mut [Map], root: impl AsRef<Path>) {
    let pins = bpffs::scan(root);
    for m in maps {
        m.pinned_paths = pins.for_map(m.id);
    }
}

pub fn attach_link_pins(links: &mut [Link], root: impl AsRef<Path>) {
    let pins = bpffs::scan(root);
    for l in links {
        l.pinned_paths = pins.for_link(l.id);
    }
}
