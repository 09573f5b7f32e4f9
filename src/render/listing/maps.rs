//! `brr map`: which fields the collector reads, the text table, and the
//! JSON item (and CSV cells) of a map.

use super::cells::{keeper_fields, owners_cell};
use super::writer::{csv_keys, ListingKind};
use super::{emit_with, opt_num, strings};
use crate::model::{Map, MapFields};
use crate::render::json::{self, obj, Json};
use crate::render::{dash, dash_join, Format};

/// What `brr map` prints in `format`: text without `-x` only the info
/// struct's fields.
pub fn map_fields(format: Format, extended: bool) -> MapFields {
    let text = format == Format::Text;
    MapFields {
        fdinfo: extended || !text,
        pins: extended || !text,
        keepers: extended,
    }
}

pub(crate) fn map_headers(extended: bool) -> Vec<&'static str> {
    let mut headers = vec![
        "ID",
        "TYPE",
        "NAME",
        "KEY",
        "VALUE",
        "MAX_ENTRIES",
        "BTF_ID",
    ];
    if extended {
        headers.extend(["PINNED", "OWNERS", "MEMLOCK"]);
    }
    headers
}

pub(crate) fn map_row(m: &Map, extended: bool) -> Vec<String> {
    let mut r = vec![
        m.id.to_string(),
        m.map_type.clone(),
        m.name.clone(),
        m.key_size.to_string(),
        m.value_size.to_string(),
        m.max_entries.to_string(),
        dash(opt_num(m.btf_id)),
    ];
    if extended {
        r.push(dash_join(&m.pinned_paths, ","));
        r.push(owners_cell(m.keepers.as_ref(), !m.pinned_paths.is_empty()));
        r.push(dash(m.memlock_bytes));
    }
    r
}

pub(crate) fn map_json(m: &Map, extended: bool, csv: bool) -> Json {
    json::fields(map_items(m, extended, csv))
}

/// [`map_json`]'s keys and values, for [`RowWriter::row_fields`].
pub(crate) fn map_items(m: &Map, extended: bool, csv: bool) -> Vec<(&'static str, Json)> {
    let mut item = vec![
        ("id", m.id.into()),
        ("type", m.map_type.as_str().into()),
        ("name", m.name.as_str().into()),
        ("key_size", m.key_size.into()),
        ("value_size", m.value_size.into()),
        ("max_entries", m.max_entries.into()),
        ("btf_id", opt_num(m.btf_id).into()),
        ("pinned_paths", strings(&m.pinned_paths)),
        ("flags", m.flags.into()),
        ("frozen", m.frozen.into()),
        ("memlock_bytes", m.memlock_bytes.into()),
    ];
    if extended {
        item.extend(keeper_fields(m.keepers.as_ref(), csv));
    }
    item
}

pub(crate) fn maps(list: &[Map], format: Format, extended: bool) -> String {
    let csv = format == Format::Csv;
    emit_with(
        format,
        "maps",
        "No eBPF maps found.",
        || {
            (
                map_headers(extended),
                list.iter().map(|m| map_row(m, extended)).collect(),
            )
        },
        || list.iter().map(|m| map_json(m, extended, csv)).collect(),
        obj([]),
        &csv_keys(ListingKind::Maps, extended),
    )
}
