//! `brr prog`: which fields the collector reads, the text table, and the
//! JSON item (and CSV cells) of a program.

use super::cells::{attach_cell, attached_json, keeper_fields, maps_mem_cell, owners_cell};
use super::writer::{csv_keys, ListingKind};
use super::{emit_with, opt_num, opt_num64, strings};
use crate::model::{ProgFields, Program};
use crate::render::json::{self, obj, Json};
use crate::render::{dash, dash_join, Format};

/// What `brr prog` prints in `format`, so that the collector reads only
/// that (the run counters of `--stats` come with every row): text shows
/// the full name, and with `-x` pins, holders, attach points and memlock;
/// JSON and CSV carry every key, the holders and attach points with `-x`.
pub fn program_fields(format: Format, extended: bool) -> ProgFields {
    let text = format == Format::Text;
    ProgFields {
        full_name: true,
        map_ids: !text,
        memlock: extended || !text,
        pins: extended || !text,
        context: extended,
    }
}

/// A program's JSON item: today's keys, then the ones added after them;
/// `extended` adds who holds it and where it is attached.
pub(crate) fn program_json(p: &Program, extended: bool, csv: bool) -> Json {
    json::fields(program_items(p, extended, csv))
}

/// [`program_json`]'s keys and values, for [`RowWriter::row_fields`].
pub(crate) fn program_items(p: &Program, extended: bool, csv: bool) -> Vec<(&'static str, Json)> {
    let mut item = program_base_fields(p);
    item.extend([
        ("full_name", p.display_name().into()),
        ("loaded_at", p.loaded_at.clone().into()),
        ("uid", p.uid.into()),
        ("gpl_compatible", p.gpl_compatible.into()),
        ("verified_insns", p.verified_insns.into()),
        ("recursion_misses", p.recursion_misses.into()),
        ("memlock_bytes", p.memlock_bytes.into()),
        ("maps_memlock_bytes", p.maps_memlock_bytes.into()),
        ("shared_maps", p.shared_maps.into()),
    ]);
    if extended {
        item.extend(keeper_fields(p.keepers.as_ref(), csv));
        item.push(("attached", attached_json(&p.attached, csv)));
    }
    item
}

/// The keys every program object has carried since the first release
/// (`dump` shows only these).
pub(crate) fn program_base_json(p: &Program) -> Json {
    json::fields(program_base_fields(p))
}

/// The keys that name a program and its size, first in every program
/// item (listings, `dump`, activity).
pub(super) fn program_identity(p: &Program) -> [(&'static str, Json); 6] {
    [
        ("id", p.id.into()),
        ("type", p.prog_type.as_str().into()),
        ("name", p.name.as_str().into()),
        ("tag", p.tag.as_str().into()),
        ("xlated_size_bytes", p.xlated_size.into()),
        ("jited_size_bytes", p.jited_size.into()),
    ]
}

fn program_base_fields(p: &Program) -> Vec<(&'static str, Json)> {
    let mut item = Vec::from(program_identity(p));
    item.extend([
        ("run_time_ns", opt_num64(p.run_time_ns).into()),
        ("run_count", opt_num64(p.run_count).into()),
        ("map_ids", p.map_ids.as_slice().into()),
        ("btf_id", opt_num(p.btf_id).into()),
        ("pinned_paths", strings(&p.pinned_paths)),
    ]);
    item
}

pub(crate) fn prog_headers(stats: bool, extended: bool) -> Vec<&'static str> {
    let mut headers = vec!["ID", "TYPE", "NAME", "XLATED_BYTES", "JITED_BYTES"];
    if stats {
        headers.extend(["RUN_CNT", "RUN_TIME_NS"]);
    }
    if extended {
        headers.extend(["TAG", "PINNED", "OWNERS", "ATTACH", "MEMLOCK", "MAPS_MEM"]);
    }
    headers
}

pub(crate) fn prog_row(p: &Program, stats: bool, extended: bool) -> Vec<String> {
    let mut r = vec![
        p.id.to_string(),
        p.prog_type.to_string(),
        p.display_name().to_string(),
        p.xlated_size.to_string(),
        p.jited_size.to_string(),
    ];
    if stats {
        r.push(p.run_count.to_string());
        r.push(p.run_time_ns.to_string());
    }
    if extended {
        r.push(if p.tag.is_empty() {
            "-".into()
        } else {
            p.tag.to_string()
        });
        r.push(dash_join(&p.pinned_paths, ","));
        r.push(owners_cell(p.keepers.as_ref(), !p.pinned_paths.is_empty()));
        r.push(attach_cell(&p.attached));
        r.push(dash(p.memlock_bytes));
        r.push(maps_mem_cell(p));
    }
    r
}

pub(crate) fn programs(list: &[Program], format: Format, stats: bool, extended: bool) -> String {
    let csv = format == Format::Csv;
    emit_with(
        format,
        "programs",
        "No eBPF programs found.",
        || {
            (
                prog_headers(stats, extended),
                list.iter().map(|p| prog_row(p, stats, extended)).collect(),
            )
        },
        || {
            list.iter()
                .map(|p| program_json(p, extended, csv))
                .collect()
        },
        obj([]),
        &csv_keys(ListingKind::Programs, extended),
    )
}
