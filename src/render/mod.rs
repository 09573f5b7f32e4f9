//! Turning plain data into text tables, JSON and CSV.

pub mod csv;
pub mod doctor;
pub mod dump;
pub mod json;
pub mod listing;
pub mod num;
pub mod perf_events;
pub mod profile;
pub mod table;
pub mod textmode;

/// The output format chosen on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Text,
    Json { pretty: bool },
    Csv,
}

/// An optional value as a text cell: `-` when absent.
pub fn dash<T: ToString>(v: Option<T>) -> String {
    v.map_or_else(|| "-".into(), |v| v.to_string())
}

/// Join pinned paths (or other lists) for a text cell: `-` when empty.
pub fn dash_join(items: &[String], sep: &str) -> String {
    if items.is_empty() {
        "-".into()
    } else {
        items.join(sep)
    }
}
