//! Text, JSON and CSV for `prog`, `map`, `link`, `btf` and `activity`: one
//! file per object kind, with the cells and the row writer they share.

mod activity;
mod btf;
mod cells;
mod links;
mod maps;
mod programs;
mod writer;

#[cfg(test)]
mod tests;

pub(crate) use activity::{activity, ActivityRun};
pub(crate) use activity::{
    activity_fields, activity_headers, activity_table, activity_window, ActivityCol,
};
pub(crate) use btf::btfs;
pub(crate) use cells::{attach_cell, container_json, owners_cell, pod_json};
pub(crate) use links::links;
pub(crate) use links::{link_fields, link_items};
pub use maps::map_fields;
pub(crate) use maps::map_items;
pub(crate) use maps::maps;
pub use programs::program_fields;
pub(crate) use programs::programs;
pub(crate) use programs::{program_base_json, program_items};
pub(crate) use writer::{ListingKind, RowWriter};

use super::json::{self, Json};
use super::{csv, table, Format};

fn opt_num(v: u32) -> Option<u32> {
    (v != 0).then_some(v)
}

fn opt_num64(v: u64) -> Option<u64> {
    (v != 0).then_some(v)
}

fn strings(v: &[String]) -> Json {
    Json::Arr(v.iter().map(|s| Json::from(s.as_str())).collect())
}

/// Emit a listing in the chosen format; `empty` replaces an empty text
/// table. CSV rows are the JSON items' values under `csv_keys`.
fn emit(
    format: Format,
    kind: &str,
    empty: &str,
    text: (Vec<&str>, Vec<Vec<String>>),
    items: Vec<Json>,
    metadata: Json,
    csv_keys: &[&str],
) -> String {
    emit_with(format, kind, empty, || text, || items, metadata, csv_keys)
}

/// [`emit`] building only what the format prints: the text rows, or the
/// JSON items (a listing of thousands of objects would otherwise build
/// both).
fn emit_with<'h>(
    format: Format,
    kind: &str,
    empty: &str,
    text: impl FnOnce() -> (Vec<&'h str>, Vec<Vec<String>>),
    items: impl FnOnce() -> Vec<Json>,
    metadata: Json,
    csv_keys: &[&str],
) -> String {
    match format {
        Format::Text => {
            let (headers, rows) = text();
            if rows.is_empty() {
                empty.to_string()
            } else {
                table::render(&headers, &rows)
            }
        }
        Format::Json { pretty } => {
            json::to_string(&json::document(kind, items(), metadata), pretty)
        }
        Format::Csv => csv::from_items(csv_keys, &items()),
    }
}
