//! `brr exporter`, a front end beside the TUI: the Prometheus exporter
//! service. [`exporter`] asks the collector for each scrape's objects,
//! [`prometheus`] writes the text format and [`http`] serves it;
//! [`profiles`] serves CPU profiles to continuous profilers;
//! [`webconfig`] reads `--web-config` (TLS, basic auth).

pub(crate) mod exporter;
pub(crate) mod http;
pub(crate) mod profiles;
pub(crate) mod prometheus;
pub(crate) mod webconfig;

pub(crate) use exporter::{run, ExporterConfig, DEFAULT_LISTEN};
pub(crate) use profiles::ProfileServing;
pub(crate) use webconfig::AuthScope;
