//! Turning plain data into text tables, JSON and CSV.

pub(crate) mod cost;
pub(crate) mod csv;
pub(crate) mod doctor;
pub(crate) mod drilldown;
pub(crate) mod dump;
pub(crate) mod json;
pub(crate) mod listing;
pub(crate) mod num;
pub(crate) mod perf_events;
pub(crate) mod profile;
pub(crate) mod table;
pub(crate) mod textmode;

/// The output format chosen on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Text,
    Json { pretty: bool },
    Csv,
}

/// An optional value as a text cell: `-` when absent.
pub(crate) fn dash<T: ToString>(v: Option<T>) -> String {
    v.map_or_else(|| "-".into(), |v| v.to_string())
}

/// Join pinned paths (or other lists) for a text cell: `-` when empty.
pub(crate) fn dash_join(items: &[String], sep: &str) -> String {
    if items.is_empty() {
        "-".into()
    } else {
        items.join(sep)
    }
}
