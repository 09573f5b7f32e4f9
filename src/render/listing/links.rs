//! `brr link`: which fields the collector reads, the text table, and the
//! JSON item (and CSV cells) of a link.

use super::cells::{keeper_fields, owners_cell};
use super::writer::{csv_keys, ListingKind};
use super::{emit_with, strings};
use crate::model::{Link, LinkFields};
use crate::render::json::{self, obj, Json};
use crate::render::{dash, dash_join, Format};

/// What `brr link` prints in `format`.
pub(crate) fn link_fields(format: Format, extended: bool) -> LinkFields {
    let text = format == Format::Text;
    LinkFields {
        target_names: true,
        pins: extended || !text,
        keepers: extended,
    }
}

pub(crate) fn link_headers(extended: bool) -> Vec<&'static str> {
    let mut headers = vec![
        "ID",
        "TYPE",
        "PROG_ID",
        "ATTACH_TYPE",
        "TARGET_OBJ_ID",
        "TARGET_BTF_ID",
        "TARGET",
    ];
    if extended {
        headers.extend(["PINNED", "OWNERS"]);
    }
    headers
}

pub(crate) fn link_row(l: &Link, extended: bool) -> Vec<String> {
    let mut r = vec![
        l.id.to_string(),
        l.link_type.clone(),
        l.prog_id.to_string(),
        dash(l.attach_type.clone()),
        dash(l.target_obj_id),
        dash(l.target_btf_id),
        target_cell(l, extended),
    ];
    if extended {
        r.push(dash_join(&l.pinned_paths, ","));
        r.push(owners_cell(l.keepers.as_ref(), !l.pinned_paths.is_empty()));
    }
    r
}

/// TARGET: with `-x`, a kprobe_multi link's whole list of functions in
/// place of the first one and `+N more`.
fn target_cell(l: &Link, extended: bool) -> String {
    if let (Some(t), true, [first, rest @ ..]) = (&l.target, extended, l.functions.as_slice()) {
        let short = format!("{first} +{} more", rest.len());
        if let (false, Some(tail)) = (rest.is_empty(), t.strip_prefix(&short)) {
            return format!("{}{tail}", l.functions.join(","));
        }
    }
    dash(l.target.clone())
}

pub(crate) fn link_json(l: &Link, extended: bool, csv: bool) -> Json {
    json::fields(link_items(l, extended, csv))
}

/// [`link_json`]'s keys and values, for [`RowWriter::row_fields`].
pub(crate) fn link_items(l: &Link, extended: bool, csv: bool) -> Vec<(&'static str, Json)> {
    let mut item = vec![
        ("id", l.id.into()),
        ("type", l.link_type.as_str().into()),
        ("prog_id", l.prog_id.into()),
        ("attach_type", l.attach_type.clone().into()),
        ("target_obj_id", l.target_obj_id.into()),
        ("target_btf_id", l.target_btf_id.into()),
        ("pinned_paths", strings(&l.pinned_paths)),
        ("target", l.target.clone().into()),
    ];
    // Only kprobe_multi links have a list of functions (TARGET shows the
    // first); other links' items keep their keys.
    if !l.functions.is_empty() {
        item.push(("functions", strings(&l.functions)));
    }
    if extended {
        item.extend(keeper_fields(l.keepers.as_ref(), csv));
    }
    item
}

pub(crate) fn links(list: &[Link], format: Format, extended: bool) -> String {
    let csv = format == Format::Csv;
    emit_with(
        format,
        "links",
        "No eBPF links found.",
        || {
            (
                link_headers(extended),
                list.iter().map(|l| link_row(l, extended)).collect(),
            )
        },
        || list.iter().map(|l| link_json(l, extended, csv)).collect(),
        obj([]),
        &csv_keys(ListingKind::Links, extended),
    )
}
