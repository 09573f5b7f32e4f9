//! `brr profile` output: the text tables, JSON document and CSV rows of a
//! profile [`Report`]. What is listed, in which order, and every figure
//! printed beside it come from the report; this module only lays it out,
//! one file per format (the JSON and CSV share their fields).

mod csv;
mod fields;
mod json;
mod text;

#[cfg(test)]
mod tests;

pub(crate) use text::{
    container_cell, hint_at, hints_text, instructions_heading, instructions_table, pod_cell,
    threshold_text,
};

use super::Format;
use crate::model::report::Report;
use crate::model::source::SourceContexts;

/// How to present a profile (what it lists is the report's).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct View {
    pub wide: bool,
    pub extended: bool,
    pub kernel_ip_detail: bool,
    pub format: Format,
}

pub(crate) fn render(report: &Report, view: &View, ctx: Option<&SourceContexts>) -> String {
    match view.format {
        Format::Text => text::text(report, view, ctx),
        Format::Json { pretty } => {
            // About what a listed native instruction takes (`--annotate`
            // lists thousands).
            let rows: usize = report
                .programs
                .iter()
                .filter_map(|p| Some(p.native.as_ref()?.all.len()))
                .sum();
            let size = 16 * 1024 + rows * if pretty { 256 } else { 160 };
            super::json::to_string_sized(&json::to_json(report, ctx), pretty, size)
        }
        Format::Csv => csv::to_csv(report),
    }
}
