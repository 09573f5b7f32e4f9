//! `brr btf`: the BTF objects, with the programs and maps that use each
//! under `-x`.

use super::{emit, strings};
use crate::model::BtfObject;
use crate::render::json::{self, obj, Json};
use crate::render::{csv, dash_join, Format};

/// `brr btf`; `extended` adds the programs and maps that use each object
/// (PROGS and MAPS, JSON/CSV `prog_ids` and `map_ids`).
pub(crate) fn btfs(list: &[BtfObject], format: Format, extended: bool) -> String {
    let ids = |v: &[u32]| -> String {
        let cells: Vec<String> = v.iter().map(u32::to_string).collect();
        dash_join(&cells, ",")
    };
    let text_rows = list
        .iter()
        .map(|b| {
            let mut row = vec![b.id.to_string(), b.name.clone(), b.size.to_string()];
            if extended {
                let u = b.users.clone().unwrap_or_default();
                row.extend([ids(&u.prog_ids), ids(&u.map_ids)]);
            }
            row
        })
        .collect();
    let items = list
        .iter()
        .map(|b| json::fields(btf_items(b, extended)))
        .collect();
    let mut headers = vec!["ID", "NAME", "SIZE"];
    if extended {
        headers.extend(["PROGS", "MAPS"]);
    }
    emit(
        format,
        "btfs",
        "No BTF objects found.",
        (headers, text_rows),
        items,
        obj([]),
        &csv::keys(&btf_items(&BtfObject::default(), extended)),
    )
}

/// A BTF object's JSON item (and CSV cells); `extended` appends the
/// programs and maps that use it.
fn btf_items(b: &BtfObject, extended: bool) -> Vec<(&'static str, Json)> {
    let mut item = vec![
        ("id", b.id.into()),
        ("name", b.name.as_str().into()),
        ("size", b.size.into()),
        ("pinned_paths", strings(&b.pinned_paths)),
    ];
    if extended {
        let u = b.users.clone().unwrap_or_default();
        item.push(("prog_ids", u.prog_ids.as_slice().into()));
        item.push(("map_ids", u.map_ids.as_slice().into()));
    }
    item
}
