//! The rows of `brr prog`, `map` and `link`, one object at a time, with
//! the fields the view prints: pins, and with `-x` their context.

use std::collections::HashMap;
use std::path::Path;

use super::context::{add_map_memlock, add_prog_keepers, HeldKind, SCAN_NOW};
use super::Collector;
use crate::error::Result;
use crate::kernel::objects::{self, LinkReader, MapReader, ProgramReader};
use crate::kernel::{bpffs, stats::StatsGuard};
use crate::model::{BtfObject, Holder, Link, LinkFields, Map, MapFields, ProgFields, Program};

impl Collector {
    /// Programs as `brr prog` lists them, in ID order, with `fields`; with
    /// `stats`, statistics are on while they are read, so the run counters are
    /// current.
    pub(crate) fn programs(&self, stats: bool, fields: ProgFields) -> Result<Vec<Program>> {
        let mut out = Vec::new();
        self.programs_each(stats, fields, |p| {
            out.push(p);
            Ok(())
        })?;
        Ok(out)
    }

    /// [`Collector::programs`] one at a time, each handed to `each` as soon
    /// as it is read, so that a listing holds one program at a time. What a
    /// row needs from other objects is read first and kept small: pins, and
    /// with `fields.context` each map's memlock, how many programs use each
    /// map (one brief pass over the programs), the links and the owner
    /// scan.
    pub(crate) fn programs_each(
        &self,
        stats: bool,
        fields: ProgFields,
        mut each: impl FnMut(Program) -> Result<()>,
    ) -> Result<()> {
        let _stats = stats.then(StatsGuard::enable).transpose()?;
        let pins = fields.pins.then(|| self.pins(SCAN_NOW));
        // Maps' memlock and users take a walk over every map and program
        // before the rows: `-x` work, like the owner scan.
        let context = if fields.context {
            let mut memlock: HashMap<u32, Option<u64>> = HashMap::new();
            MapReader::new(MapFields {
                fdinfo: true,
                ..MapFields::default()
            })
            .each(|m| {
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
            let links = objects::links(LinkFields {
                target_names: true,
                ..LinkFields::default()
            })?;
            Some((memlock, users, links, self.owners(SCAN_NOW)))
        } else {
            None
        };
        let read = ProgFields {
            map_ids: fields.map_ids || fields.context,
            ..fields
        };
        ProgramReader::new(read).each(|mut p| {
            if let Some(pins) = &pins {
                p.pinned_paths = pins.for_prog(p.id);
            }
            if let Some((memlock, users, links, owners)) = &context {
                add_map_memlock(&mut p, memlock, users);
                add_prog_keepers(std::slice::from_mut(&mut p), links, owners);
            }
            each(p)
        })
    }

    /// Maps as `brr map` lists them, with `fields`; `keepers` are who holds
    /// each (a process, else the first program using it).
    pub(crate) fn maps(&self, fields: MapFields) -> Result<Vec<Map>> {
        let mut out = Vec::new();
        self.maps_each(fields, |m| {
            out.push(m);
            Ok(())
        })?;
        Ok(out)
    }

    /// [`Collector::maps`] one at a time, in ID order.
    pub(crate) fn maps_each(
        &self,
        fields: MapFields,
        mut each: impl FnMut(Map) -> Result<()>,
    ) -> Result<()> {
        let pins = fields.pins.then(|| self.pins(SCAN_NOW));
        let keepers = if fields.keepers {
            let mut user: HashMap<u32, u32> = HashMap::new();
            objects::program_maps_each(|prog, ids| {
                for id in ids {
                    user.entry(id).or_insert(prog);
                }
                Ok(())
            })?;
            Some((user, self.owners(SCAN_NOW)))
        } else {
            None
        };
        MapReader::new(fields).each(|mut m| {
            if let Some(pins) = &pins {
                m.pinned_paths = pins.for_map(m.id);
            }
            if let Some((user, owners)) = &keepers {
                let held_by = user.get(&m.id).map(|&id| Holder::Prog(id));
                m.keepers = Some(owners.keepers(HeldKind::Map, m.id, held_by));
            }
            each(m)
        })
    }

    /// Links as `brr link` lists them, with `fields`.
    pub(crate) fn links(&self, fields: LinkFields) -> Result<Vec<Link>> {
        let mut out = Vec::new();
        self.links_each(fields, |l| {
            out.push(l);
            Ok(())
        })?;
        Ok(out)
    }

    /// [`Collector::links`] one at a time, in ID order.
    pub(crate) fn links_each(
        &self,
        fields: LinkFields,
        mut each: impl FnMut(Link) -> Result<()>,
    ) -> Result<()> {
        let pins = fields.pins.then(|| self.pins(SCAN_NOW));
        let owners = fields.keepers.then(|| self.owners(SCAN_NOW));
        LinkReader::new(fields).each(|mut l| {
            if let Some(pins) = &pins {
                l.pinned_paths = pins.for_link(l.id);
            }
            if let Some(owners) = &owners {
                l.keepers = Some(owners.keepers(HeldKind::Link, l.id, None));
            }
            each(l)
        })
    }

    /// Each program's pinned paths, from a walk of the bpffs root taken
    /// now.
    pub(crate) fn attach_prog_pins(&self, progs: &mut [Program]) {
        let pins = self.pins(SCAN_NOW);
        for p in progs {
            p.pinned_paths = pins.for_prog(p.id);
        }
    }
}

/// The BTF objects as `brr btf` lists them; with `users`, the programs and
/// maps that use each (a pass over every program and map).
pub(crate) fn btfs(users: bool) -> Result<Vec<BtfObject>> {
    let mut list = objects::btfs()?;
    if users {
        let mut by_btf = objects::btf_users()?;
        for b in &mut list {
            b.users = Some(by_btf.remove(&b.id).unwrap_or_default());
        }
    }
    Ok(list)
}

pub(crate) use crate::kernel::bpffs::{RootKind, EVERY_MOUNT};

/// What to say on stderr before a command runs (without the `brr:
/// warning: ` prefix) about a `--bpffs` directory that is not on a bpffs:
/// only the bpffs mounts below it are scanned, if any.
pub(crate) fn bpffs_warning(root: &Path) -> Option<String> {
    if root.as_os_str() == EVERY_MOUNT {
        return None;
    }
    let shown = root.to_string_lossy();
    Some(match bpffs::root_kind(root) {
        RootKind::Bpffs => return None,
        RootKind::Other { mounts_below } if mounts_below.is_empty() => format!(
            "--bpffs {shown} is not on a bpffs and no bpffs is mounted below it; no pinned paths are shown"
        ),
        RootKind::Other { mounts_below } => {
            let list: Vec<String> = mounts_below
                .iter()
                .map(|p| p.to_string_lossy().into_owned())
                .collect();
            format!(
                "--bpffs {shown} is not on a bpffs; pinned paths are read from the bpffs mounts below it: {}",
                list.join(", ")
            )
        }
        RootKind::Unreadable(e) => format!(
            "--bpffs {shown}: {}; no pinned paths are shown",
            e.text()
        ),
    })
}
