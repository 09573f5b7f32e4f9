//! The fields a profile's JSON document and CSV rows share: the metadata
//! and each program's and hotspot's figures, as (key, value) pairs in the
//! original's key order.

use crate::model::profile::{Hotspot, InterruptHotspot, KernelHotspot};
use crate::model::report::{Figured, ProgramReport, Report};
use crate::render::json::{self, Json};

/// Metadata keys and values in the original's key order, which JSON keeps
/// and CSV uses for its columns.
pub(super) fn metadata(report: &Report) -> Vec<(&'static str, Json)> {
    let cap = &report.capture;
    let c = &cap.counters;
    let t = &cap.telemetry;
    let totals = &report.totals;
    vec![
        ("requested_event", cap.requested_event.as_str().into()),
        ("selected_event", cap.selected_event.as_str().into()),
        ("duration", cap.duration.into()),
        ("frequency", cap.frequency.into()),
        ("limit", totals.limit.into()),
        ("line_limit", totals.line_limit.into()),
        ("total_samples", c.total_samples.into()),
        ("lost_samples", t.lost_samples.into()),
        ("unresolved_samples", c.non_bpf_samples.into()),
        ("bpf_jit_samples", c.bpf_jit_samples.into()),
        ("non_bpf_samples", c.non_bpf_samples.into()),
        (
            "selected_program_samples",
            totals.selected_program_samples.into(),
        ),
        ("other_bpf_samples", totals.other_bpf_samples.into()),
        ("source_mapped_samples", totals.source_mapped_samples.into()),
        (
            "source_unmapped_samples",
            totals.source_unmapped_samples.into(),
        ),
        ("callchain_samples", c.callchain_samples.into()),
        (
            "kernel_attributed_samples",
            c.kernel_attributed_samples.into(),
        ),
        (
            "kernel_unattributed_samples",
            c.kernel_unattributed_samples.into(),
        ),
        (
            "kernel_symbolized_samples",
            c.kernel_symbolized_samples.into(),
        ),
        ("call_graph", cap.call_graph.name().into()),
        ("actual_duration", t.actual_duration.into()),
        ("perf_cpus", t.cpus.as_slice().into()),
        ("perf_buffer_pages_per_cpu", t.pages_per_cpu.into()),
        ("perf_buffer_bytes_per_cpu", t.bytes_per_cpu.into()),
        ("perf_buffer_bytes_total", t.bytes_total.into()),
        ("perf_drain_interval_ms", t.drain_interval_ms.into()),
        ("perf_drain_count", t.drain_count.into()),
        (
            "perf_max_ring_occupancy_percent",
            totals.max_ring_occupancy_percent.into(),
        ),
        ("perf_throttle_events", t.throttle_events.into()),
        ("perf_unthrottle_events", t.unthrottle_events.into()),
        ("perf_malformed_records", t.malformed_records.into()),
        ("perf_unknown_records", t.unknown_records.into()),
        ("perf_discarded_bytes", t.discarded_bytes.into()),
        ("perf_time_enabled_ns", t.time_enabled_ns.into()),
        ("perf_time_running_ns", t.time_running_ns.into()),
        ("perf_running_percent", totals.running_percent.into()),
        ("incomplete", t.incomplete.into()),
        (
            "warnings",
            Json::Arr(t.warnings.iter().map(|w| Json::from(w.as_str())).collect()),
        ),
    ]
}

/// Program fields in the original's key order, up to the hotspot lists.
pub(super) fn program_fields(p: &ProgramReport) -> Vec<(&'static str, Json)> {
    vec![
        ("id", p.id.into()),
        ("type", p.prog_type.as_str().into()),
        ("name", p.name.as_str().into()),
        ("tag", p.tag.as_str().into()),
        ("samples", p.samples.into()),
        ("sample_percent", p.sample_percent.into()),
        ("cpu_percent", p.cpu_percent.into()),
        ("inclusive_samples", p.inclusive_samples.into()),
        ("inclusive_cpu_percent", p.inclusive_cpu_percent.into()),
        (
            "direct_source_mapped_samples",
            p.direct_source_mapped_samples.into(),
        ),
        (
            "direct_source_unmapped_samples",
            p.direct_source_unmapped_samples.into(),
        ),
        (
            "under_bpf_caller_source_mapped_samples",
            p.under_bpf_caller_source_mapped_samples.into(),
        ),
        (
            "under_bpf_caller_source_unmapped_samples",
            p.under_bpf_caller_source_unmapped_samples.into(),
        ),
        (
            "direct_hotspot_samples_omitted_by_limit",
            p.direct.other.samples.into(),
        ),
        (
            "under_bpf_hotspot_samples_omitted_by_limit",
            p.kernel_ips.other.samples.into(),
        ),
        ("unaccounted_samples", 0u64.into()),
        (
            "pinned_paths",
            Json::Arr(
                p.pinned_paths
                    .iter()
                    .map(|s| Json::from(s.as_str()))
                    .collect(),
            ),
        ),
    ]
}

pub(super) fn opt_str<S: std::ops::Deref<Target = str>>(s: &Option<S>) -> Json {
    s.as_deref().map_or(Json::Null, Json::from)
}

pub(super) fn hotspot_fields(h: &Figured<Hotspot>) -> Vec<(&'static str, Json)> {
    vec![
        ("samples", h.samples.into()),
        ("sample_percent", h.sample_percent.into()),
        ("cpu_percent", h.cpu_percent.into()),
        ("jited_address", h.jited_address.into()),
        ("instruction_offset", h.instruction_offset.into()),
        ("file", opt_str(&h.file)),
        ("line", h.line.into()),
        ("column", h.column.into()),
        ("source", opt_str(&h.source)),
    ]
}

pub(super) fn kernel_fields(k: &Figured<KernelHotspot>) -> Vec<(&'static str, Json)> {
    vec![
        ("samples", k.samples.into()),
        ("sample_percent", k.sample_percent.into()),
        ("cpu_percent", k.cpu_percent.into()),
        ("ip", k.ip.into()),
        ("symbol", opt_str(&k.symbol)),
        ("module", opt_str(&k.module)),
        ("symbol_offset", k.symbol_offset.into()),
        ("symbol_kind", k.kind.into()),
        ("bpf_jited_address", k.bpf_jited_address.into()),
        ("bpf_instruction_offset", k.bpf_instruction_offset.into()),
        ("bpf_file", opt_str(&k.bpf_file)),
        ("bpf_line", k.bpf_line.into()),
        ("bpf_column", k.bpf_column.into()),
        ("bpf_source", opt_str(&k.bpf_source)),
    ]
}

pub(super) fn to_obj(fields: Vec<(&'static str, Json)>) -> Json {
    json::fields(fields)
}

/// A kernel address as text: JSON numbers above 2^53 lose precision in
/// JavaScript and jq.
pub(super) fn hex_json(v: Option<u64>) -> Json {
    v.map_or(Json::Null, |v| Json::from(format!("0x{v:x}").as_str()))
}

/// Seconds into the capture, to the millisecond.
fn seconds_json(v: Option<f64>) -> Json {
    v.map_or(Json::Null, |s| crate::model::profile::round(s, 3).into())
}

/// Program keys added after `full_name`: interrupts, lifetime and, with
/// kernel callchains, its hook's dispatch.
pub(super) fn program_tail(p: &ProgramReport) -> Vec<(&'static str, Json)> {
    vec![
        ("interrupt_samples", p.interrupt_samples.into()),
        ("interrupt_cpu_percent", p.interrupt_cpu_percent.into()),
        (
            "interrupts",
            Json::Arr(p.interrupts.rows.iter().map(interrupt_json).collect()),
        ),
        ("loaded_after_seconds", seconds_json(p.loaded_after)),
        ("unloaded_after_seconds", seconds_json(p.unloaded_after)),
        (
            "loaded_cpu_percent",
            p.loaded_cpu_percent.map_or(Json::Null, Json::from),
        ),
        (
            "loaded_inclusive_cpu_percent",
            p.loaded_inclusive_cpu_percent
                .map_or(Json::Null, Json::from),
        ),
        (
            "dispatch_samples",
            p.dispatch_samples.map_or(Json::Null, Json::from),
        ),
        (
            "dispatch_cpu_percent",
            p.dispatch_cpu_percent.map_or(Json::Null, Json::from),
        ),
    ]
}

fn interrupt_json(r: &Figured<InterruptHotspot>) -> Json {
    to_obj(vec![
        ("samples", r.samples.into()),
        ("sample_percent", r.sample_percent.into()),
        ("cpu_percent", r.cpu_percent.into()),
        ("entry", r.entry.as_str().into()),
        ("bpf_jited_address", r.bpf_jited_address.into()),
        ("bpf_instruction_offset", r.bpf_instruction_offset.into()),
        ("bpf_file", opt_str(&r.bpf_file)),
        ("bpf_line", r.bpf_line.into()),
        ("bpf_column", r.bpf_column.into()),
        ("bpf_source", opt_str(&r.bpf_source)),
        ("bpf_function", opt_str(&r.bpf_function)),
        ("bpf_jited_address_hex", hex_json(r.bpf_jited_address)),
    ])
}

/// Metadata keys added after the original's (JSON appends them to the
/// metadata object, CSV to every row).
pub(super) fn metadata_tail(report: &Report) -> Vec<(&'static str, Json)> {
    let cap = &report.capture;
    vec![
        ("interrupt_samples", cap.counters.interrupt_samples.into()),
        ("program_ids", cap.program_ids.as_slice().into()),
        ("pid", cap.pid.map_or(Json::Null, Json::from)),
    ]
}
