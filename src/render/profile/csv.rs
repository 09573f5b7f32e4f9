//! The CSV rows of a profile: one row per hotspot, its program's and the
//! capture's fields repeated, in the original's column order (the header
//! is derived from the JSON fields).

use super::fields::{
    hex_json, hotspot_fields, kernel_fields, metadata, metadata_tail, opt_str, program_fields,
    program_tail,
};
use crate::model::profile::Hotspot;
use crate::model::report::{Figured, NativeRow, ProgramReport, Report};
use crate::render::csv;
use crate::render::json::Json;

fn cells(fields: &[(&'static str, Json)]) -> Vec<String> {
    fields.iter().map(|(_, v)| csv::cell(v)).collect()
}

/// The figures a direct and a kernel hotspot row both have (samples,
/// sample percent, CPU percent): the two kinds share their columns.
const SHARED_FIGURES: usize = 3;

/// A row's program fields: the JSON ones up to the hotspot lists, with the
/// kernel samples next to the inclusive ones where the original had them.
fn csv_program_fields(p: &ProgramReport) -> Vec<(&'static str, Json)> {
    let mut f = program_fields(p);
    let at = f
        .iter()
        .position(|(k, _)| *k == "inclusive_cpu_percent")
        .map_or(f.len(), |i| i + 1);
    f.splice(
        at..at,
        [
            ("kernel_samples", p.kernel_samples.into()),
            ("kernel_cpu_percent", p.kernel_cpu_percent.into()),
        ],
    );
    f
}

/// How many cells each part of a CSV row has after the metadata, counted
/// on the fields that fill them.
pub(super) struct CsvParts {
    pub(super) program: usize,
    pub(super) direct: usize,
    /// A kernel row's fields after the shared figures.
    pub(super) kernel: usize,
}

impl CsvParts {
    pub(super) fn new() -> CsvParts {
        CsvParts {
            program: csv_program_fields(&ProgramReport::default()).len(),
            direct: hotspot_fields(&Figured::default()).len(),
            kernel: kernel_fields(&Figured::default()).len() - SHARED_FIGURES,
        }
    }

    /// Hotspot kind and rank, a direct row's cells, a kernel row's own.
    fn hotspot(&self) -> usize {
        2 + self.direct + self.kernel
    }
}

/// The CSV header, each column named after the JSON field whose value it
/// holds: the metadata keys; the program's keys as `program_*` (the
/// original kept `pinned_paths` bare); the hotspot kind and rank; a direct
/// row's keys, the shared figures as `hotspot_*`; a kernel row's other
/// keys as `kernel_*` (its BPF caller's `bpf_*` keys bare). After the
/// original's columns: the full name, the program's new scalar keys as
/// `program_*`, the row's addresses in hex, and the new metadata keys.
pub(super) fn csv_header(report: &Report) -> Vec<String> {
    let mut h: Vec<String> = metadata(report)
        .iter()
        .map(|(k, _)| k.to_string())
        .collect();
    let program = csv_program_fields(&ProgramReport::default());
    h.extend(program.iter().map(|(k, _)| match *k {
        "pinned_paths" => k.to_string(),
        k => format!("program_{k}"),
    }));
    h.extend(["hotspot_kind".to_string(), "hotspot_rank".to_string()]);
    let direct = hotspot_fields(&Figured::default());
    h.extend(direct.iter().enumerate().map(|(i, (k, _))| {
        if i < SHARED_FIGURES {
            format!("hotspot_{k}")
        } else {
            k.to_string()
        }
    }));
    let kernel = kernel_fields(&Figured::default());
    h.extend(kernel.iter().skip(SHARED_FIGURES).map(|(k, _)| {
        if k.starts_with("bpf_") {
            k.to_string()
        } else {
            format!("kernel_{k}")
        }
    }));
    h.push("full_name".to_string());
    h.extend(
        csv_program_tail(&ProgramReport::default())
            .iter()
            .map(|(k, _)| format!("program_{k}")),
    );
    h.extend(HEX_COLUMNS.iter().map(|c| c.to_string()));
    h.extend(metadata_tail(report).iter().map(|(k, _)| k.to_string()));
    h
}

/// The hex addresses of a row, after the program's new columns: a direct
/// row's JIT address, a kernel row's IP and its BPF caller's address.
const HEX_COLUMNS: [&str; 3] = [
    "jited_address_hex",
    "kernel_ip_hex",
    "bpf_jited_address_hex",
];

/// [`program_tail`] without its list (interrupt rows are JSON only).
fn csv_program_tail(p: &ProgramReport) -> Vec<(&'static str, Json)> {
    program_tail(p)
        .into_iter()
        .filter(|(_, v)| !matches!(v, Json::Arr(_)))
        .collect()
}

/// The cells appended with `--annotate`, after every other column: the
/// native instruction of a `native` row (empty on the other rows).
fn native_csv_fields(r: &NativeRow) -> Vec<(&'static str, Json)> {
    vec![
        ("native_function", opt_str(&r.function)),
        ("native_offset", r.offset.into()),
        ("native_asm", opt_str(&r.asm)),
    ]
}

/// A `native` row as a direct hotspot, so that it fills the direct
/// columns: the instruction's address as its `jited_address`, the line
/// record its samples went to.
fn native_hotspot(r: &Figured<NativeRow>) -> Figured<Hotspot> {
    Figured {
        row: Hotspot {
            samples: r.samples,
            jited_address: Some(r.ip),
            file: r.file.as_deref().map(String::from),
            line: r.line,
            source: r.source.as_deref().map(String::from),
            function: r.function.as_deref().map(String::from),
            ..Hotspot::default()
        },
        sample_percent: r.sample_percent,
        cpu_percent: r.cpu_percent,
    }
}

pub(super) fn to_csv(report: &Report) -> String {
    let parts = CsvParts::new();
    let meta = cells(&metadata(report));
    let meta_tail = cells(&metadata_tail(report));
    let tail_len = 1 + csv_program_tail(&ProgramReport::default()).len();
    let blank = |n: usize| vec![String::new(); n];
    // Only an annotated report has the native columns, so that the
    // original's CSV stays as it was.
    let annotated = report.programs.iter().any(|p| p.native.is_some());
    let native_keys = native_csv_fields(&NativeRow::default());
    let extra = if annotated { native_keys.len() } else { 0 };
    let mut rows: Vec<Vec<String>> = Vec::new();
    if report.programs.is_empty() {
        // Keep the telemetry even when no program was sampled.
        let mut r = meta.clone();
        r.extend(blank(
            parts.program + parts.hotspot() + tail_len + HEX_COLUMNS.len(),
        ));
        r.extend(meta_tail.iter().cloned());
        r.extend(blank(extra));
        rows.push(r);
    }
    for p in &report.programs {
        let mut prog = meta.clone();
        prog.extend(cells(&csv_program_fields(p)));
        let mut tail = vec![p.display_name().to_string()];
        tail.extend(cells(&csv_program_tail(p)));
        let native = p.native.as_ref().map_or(&[][..], |a| &a.all[..]);
        // Each row: program cells, hotspot cells, the program's new
        // columns, the row's hex addresses, the new metadata columns, then
        // with --annotate the native instruction.
        let mut push = |hotspot: Vec<String>, hex: [Option<u64>; 3], insn: Vec<String>| {
            let mut r = prog.clone();
            r.extend(hotspot);
            r.extend(tail.iter().cloned());
            r.extend(hex.iter().map(|&v| csv::cell(&hex_json(v))));
            r.extend(meta_tail.iter().cloned());
            r.extend(insn);
            rows.push(r);
        };
        if p.direct.rows.is_empty() && p.kernel_ips.rows.is_empty() && native.is_empty() {
            push(blank(parts.hotspot()), [None, None, None], blank(extra));
        }
        for (i, h) in p.direct.rows.iter().enumerate() {
            let mut r = vec!["bpf".into(), (i + 1).to_string()];
            r.extend(cells(&hotspot_fields(h)));
            r.extend(blank(parts.kernel));
            push(r, [h.jited_address, None, None], blank(extra));
        }
        for (i, k) in p.kernel_ips.rows.iter().enumerate() {
            let mut r = vec!["kernel".into(), (i + 1).to_string()];
            let mut kc = cells(&kernel_fields(k));
            let rest = kc.split_off(SHARED_FIGURES.min(kc.len()));
            r.extend(kc);
            r.extend(blank(parts.direct - SHARED_FIGURES));
            r.extend(rest);
            push(r, [None, Some(k.ip), k.bpf_jited_address], blank(extra));
        }
        for (i, n) in native.iter().enumerate() {
            let mut r = vec!["native".into(), (i + 1).to_string()];
            r.extend(cells(&hotspot_fields(&native_hotspot(n))));
            r.extend(blank(parts.kernel));
            push(r, [Some(n.ip), None, None], cells(&native_csv_fields(n)));
        }
    }
    let mut header = csv_header(report);
    if annotated {
        header.extend(native_keys.iter().map(|(k, _)| k.to_string()));
    }
    debug_assert!(rows.iter().all(|r| r.len() == header.len()));
    let header: Vec<&str> = header.iter().map(String::as_str).collect();
    csv::render(&header, &rows)
}
