//! `brr exporter`, a front end beside the TUI: the Prometheus exporter
//! service. [`exporter`] asks the collector for each scrape's objects,
//! [`prometheus`] writes the text format and [`http`] serves it;
//! [`profiles`] serves CPU profiles to continuous profilers.

pub mod exporter;
pub mod http;
pub mod profiles;
pub mod prometheus;

pub use exporter::{run, ExporterConfig, DEFAULT_LISTEN};
pub use profiles::ProfileServing;
