//! A `prog`, `map` or `link` listing in JSON or CSV written row by row
//! as the objects are read.

use super::{link_items, map_items, program_items};
use crate::model::{Link, Map, Program};
use crate::render::json::{self, obj, Json};
use crate::render::{csv, Format};

/// A `prog`, `map` or `link` listing in JSON or CSV written row by row as
/// the objects are read, byte for byte as the whole-listing functions
/// write it (without the final newline).
pub(crate) struct RowWriter<'w> {
    sink: Sink<'w>,
}

enum Sink<'w> {
    Json(json::DocumentWriter<'w>),
    Csv {
        out: &'w mut dyn std::io::Write,
        keys: Vec<&'static str>,
        header: bool,
    },
}

/// The listings [`RowWriter`] writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ListingKind {
    Programs,
    Maps,
    Links,
}

impl<'w> RowWriter<'w> {
    /// `None` for text, whose column widths need every row first.
    pub(crate) fn new(
        out: &'w mut dyn std::io::Write,
        format: Format,
        kind: ListingKind,
        extended: bool,
    ) -> Option<RowWriter<'w>> {
        let name = match kind {
            ListingKind::Programs => "programs",
            ListingKind::Maps => "maps",
            ListingKind::Links => "links",
        };
        let keys = csv_keys(kind, extended);
        let sink = match format {
            Format::Text => return None,
            Format::Json { pretty } => Sink::Json(json::DocumentWriter::new(out, name, pretty)),
            Format::Csv => Sink::Csv {
                out,
                keys,
                header: false,
            },
        };
        Some(RowWriter { sink })
    }

    /// Whether items must be built for CSV (`program_json(.., csv)`).
    pub(crate) fn csv(&self) -> bool {
        matches!(self.sink, Sink::Csv { .. })
    }

    /// A row from its item's keys and values ([`program_items`] and the
    /// like): JSON writes them without making the object first.
    pub(crate) fn row_fields(&mut self, fields: Vec<(&'static str, Json)>) -> std::io::Result<()> {
        match &mut self.sink {
            Sink::Json(w) => w.item_fields(&fields),
            Sink::Csv { .. } => self.row(&json::fields(fields)),
        }
    }

    pub(crate) fn row(&mut self, item: &Json) -> std::io::Result<()> {
        match &mut self.sink {
            Sink::Json(w) => w.item(item),
            Sink::Csv { out, keys, header } => {
                let mut line = String::new();
                if !*header {
                    line.push_str(&keys.join(","));
                    *header = true;
                }
                let one = csv::from_items(keys, std::slice::from_ref(item));
                // from_items puts the header first; keep only the record.
                if let Some((_, record)) = one.split_once('\n') {
                    line.push('\n');
                    line.push_str(record);
                }
                out.write_all(line.as_bytes())
            }
        }
    }

    pub(crate) fn finish(self) -> std::io::Result<()> {
        match self.sink {
            Sink::Json(w) => w.finish(&obj([])),
            Sink::Csv { out, keys, header } if !header => out.write_all(keys.join(",").as_bytes()),
            Sink::Csv { .. } => Ok(()),
        }
    }
}

/// The CSV columns of a listing: its JSON items' keys, taken from the item
/// of a placeholder object.
pub(super) fn csv_keys(kind: ListingKind, extended: bool) -> Vec<&'static str> {
    csv::keys(&match kind {
        ListingKind::Programs => program_items(&Program::default(), extended, true),
        ListingKind::Maps => map_items(&Map::default(), extended, true),
        ListingKind::Links => link_items(&Link::default(), extended, true),
    })
}
