//! `brr profile` output: the text tables, JSON document and CSV rows of a
//! profile [`Report`]. What is listed, in which order, and every figure
//! printed beside it come from the report; this module only lays it out.

use super::json::{self, Json};
use super::listing::{container_json, pod_json};
use super::{csv, dash, dump, num, table, Format};
use crate::inspect::source::basename;
use crate::model::profile::{Hint, Hotspot, InterruptHotspot, KernelHotspot, Payer};
use crate::model::report::{Annotation, Figured, NativeRow, Other, Payers, ProgramReport, Report};
use crate::model::source::SourceContexts;
use crate::model::{Container, Pod};

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
        Format::Text => text(report, view, ctx),
        Format::Json { pretty } => {
            // About what a listed native instruction takes (`--annotate`
            // lists thousands).
            let rows: usize = report
                .programs
                .iter()
                .filter_map(|p| Some(p.native.as_ref()?.all.len()))
                .sum();
            let size = 16 * 1024 + rows * if pretty { 256 } else { 160 };
            json::to_string_sized(&to_json(report, ctx), pretty, size)
        }
        Format::Csv => to_csv(report),
    }
}

// ---------------------------------------------------------------------------
// Text
// ---------------------------------------------------------------------------

fn hex(v: Option<u64>) -> String {
    v.map_or_else(|| "-".into(), |v| format!("0x{v:x}"))
}

fn file_cell(f: Option<&str>, wide: bool) -> String {
    match f {
        None => "-".into(),
        Some(f) if wide => f.into(),
        Some(f) => basename(f).into(),
    }
}

fn capture_lines(report: &Report) -> [String; 2] {
    let t = &report.capture.telemetry;
    [
        format!(
            "Perf capture: actual={:.3}s cpus={} buffer={}pages/cpu total={}B drain={}ms occupancy={:.1}% running={:.2}%",
            t.actual_duration,
            t.cpus.len(),
            t.pages_per_cpu,
            t.bytes_total,
            t.drain_interval_ms,
            report.totals.max_ring_occupancy_percent,
            report.totals.running_percent
        ),
        format!(
            "Perf records: drains={} lost={} throttle={} unthrottle={} malformed={} unknown={} discarded_bytes={} incomplete={}",
            t.drain_count,
            t.lost_samples,
            t.throttle_events,
            t.unthrottle_events,
            t.malformed_records,
            t.unknown_records,
            t.discarded_bytes,
            if t.incomplete { "yes" } else { "no" }
        ),
    ]
}

/// What the program table's CPU% columns cover.
pub(crate) fn cpu_percent_note(kernel_samples: bool) -> &'static str {
    if kernel_samples {
        "CPU% = the program's own instructions, KERNEL_CPU% = helpers and kernel code it called, INCL_CPU% = both; 100% = one CPU; interrupts that arrived while it ran are not included."
    } else {
        "CPU% = the program's own instructions only, not the helpers or kernel code it calls (--kernel-samples adds them); 100% = one CPU."
    }
}

/// The line that says Ctrl-C cut the capture short, as `activity` says it
/// of its window.
pub(crate) fn ended_early(report: &Report) -> Option<String> {
    let t = &report.capture.telemetry;
    t.cancelled.then(|| {
        format!(
            "capture ended early after {:.2} s of {} s",
            t.actual_duration,
            num::fmt_g(report.capture.duration)
        )
    })
}

fn text(report: &Report, view: &View, ctx: Option<&SourceContexts>) -> String {
    let t = &report.capture.telemetry;
    let mut sections: Vec<String> = Vec::new();
    if t.pages_per_cpu > 0 {
        sections.extend(capture_lines(report));
    }
    sections.extend(t.warnings.iter().map(|w| format!("Warning: {w}")));
    if report.programs.is_empty() {
        sections.push("No BPF JIT samples captured.".into());
        sections.extend(ended_early(report));
        return sections.join("\n");
    }
    sections.push(cpu_percent_note(report.capture.kernel_samples).into());
    sections.push(program_table(&report.programs, view));
    if let Some(l) = lifetimes(&report.programs) {
        sections.push(l);
    }
    for p in &report.programs {
        program_sections(p, view, ctx, report.totals.line_limit, &mut sections);
    }
    let found: Vec<Hint> = report.hints().cloned().collect();
    if !found.is_empty() {
        sections.push(hints_text(&found));
    }
    sections.extend(ended_early(report));
    sections.join("\n\n")
}

/// The title of a program's `INSTRUCTIONS` table, and why its
/// instructions have no text when the JIT code could not be read.
pub(crate) fn instructions_heading(p: &ProgramReport, a: &Annotation) -> String {
    let mut out = format!("Instructions of program {} ({}):", p.id, p.display_name());
    if let Some(why) = &a.unavailable {
        out.push_str(&format!("\nNo instruction text: {why}"));
    }
    out
}

/// `file:line` of a native row (`-` without a line record).
fn file_line(r: &NativeRow, wide: bool) -> String {
    match (&r.file, r.line) {
        (Some(f), Some(l)) => format!("{}:{l}", file_cell(Some(f), wide)),
        (Some(f), None) => file_cell(Some(f), wide),
        (None, _) => "-".into(),
    }
}

/// The instruction with the part of the JIT it belongs to, unless it is
/// the program's own code.
fn instruction_cell(r: &NativeRow) -> String {
    let asm = r.asm.clone().unwrap_or_else(|| "-".into());
    match r.role {
        "body" => asm,
        role => format!("{asm} [{role}]"),
    }
}

/// The `INSTRUCTIONS` table: a program's hottest native instructions, cut
/// by `--line-limit` with an Other row. `%THIS` is of its direct samples.
pub(crate) fn instructions_table(a: &Annotation, wide: bool, line_limit: usize) -> String {
    let headers = [
        "SAMPLES",
        "%THIS",
        "FUNCTION",
        "OFFSET",
        "INSTRUCTION",
        "FILE:LINE",
    ];
    let align = [
        (true, true),
        (true, true),
        (false, false),
        (true, true),
        (false, false),
        (false, false),
    ];
    let mut rows: Vec<Vec<String>> = a
        .shown_rows()
        .iter()
        .map(|r| {
            vec![
                r.samples.to_string(),
                format!("{:.2}", r.sample_percent),
                dash(r.function.as_deref()),
                r.offset.map_or_else(|| "-".into(), |o| format!("+{o:#x}")),
                instruction_cell(r),
                file_line(r, wide),
            ]
        })
        .collect();
    if let Some(o) = a.other {
        let direct: u64 = a.all.iter().map(|r| r.samples).sum();
        rows.push(vec![
            o.samples.to_string(),
            format!("{:.2}", crate::model::profile::share(o.samples, direct)),
            "-".into(),
            "-".into(),
            format!("Other native instructions not shown (--line-limit={line_limit})"),
            "-".into(),
        ]);
    }
    table::aligned(&headers, &align, &rows)
}

/// `seconds` as the lifetime notes print it.
fn secs(s: f64) -> String {
    format!("{s:.2} s")
}

/// One line per program loaded or unloaded during the capture: when, and
/// its CPU% over the time it was loaded.
fn lifetimes(progs: &[ProgramReport]) -> Option<String> {
    let lines: Vec<String> = progs
        .iter()
        .filter_map(|p| {
            let cpu = p.loaded_cpu_percent?;
            let when = match (p.loaded_after, p.unloaded_after) {
                (Some(l), Some(u)) => format!(
                    "loaded {} and unloaded {} into the capture",
                    secs(l),
                    secs(u)
                ),
                (Some(l), None) => format!("loaded {} into the capture", secs(l)),
                (None, Some(u)) => format!("unloaded {} into the capture", secs(u)),
                (None, None) => return None,
            };
            let incl = match p.loaded_inclusive_cpu_percent {
                Some(i) if p.kernel_samples > 0 => format!(", INCL_CPU% {}", num::percent4(i)),
                _ => String::new(),
            };
            Some(format!(
                "Program {} ({}) was {when}; while loaded: CPU% {}{incl}.",
                p.id,
                p.display_name(),
                num::percent4(cpu)
            ))
        })
        .collect();
    (!lines.is_empty()).then(|| lines.join("\n"))
}

/// The breakdown, kernel, interrupt, payer and source-context sections of
/// one program.
fn program_sections(
    p: &ProgramReport,
    view: &View,
    ctx: Option<&SourceContexts>,
    line_limit: usize,
    sections: &mut Vec<String>,
) {
    let name = p.display_name();
    if !p.direct.rows.is_empty() || p.direct.other.samples > 0 {
        sections.push(format!("Breakdown of program {} ({name}):", p.id));
        sections.push(direct_table(p, view, line_limit));
    }
    if let Some(a) = p.native.as_ref().filter(|a| !a.all.is_empty()) {
        sections.push(instructions_heading(p, a));
        sections.push(instructions_table(a, view.wide, line_limit));
    }
    let (rows, omitted) = if view.kernel_ip_detail {
        (p.kernel_ips.rows.len(), p.kernel_ips.other.samples)
    } else {
        (
            p.kernel_functions.rows.len(),
            p.kernel_functions.other.samples,
        )
    };
    if rows > 0 || omitted > 0 {
        sections.push(format!(
            "Kernel/helper samples for program {} ({name}):",
            p.id
        ));
        sections.push(kernel_table(p, view, line_limit));
    }
    if p.interrupt_samples > 0 {
        sections.push(format!(
            "Interrupts while program {} ({name}) ran (not its calls):",
            p.id
        ));
        sections.push(interrupt_table(p, view, line_limit));
    }
    payer_sections(p, line_limit, sections);
    if let Some(c) = ctx.and_then(|c| c.by_program.get(&p.id)) {
        let heading = format!("Source context for program {}:", p.id);
        let report = dump::context_report(c, &heading);
        // The heading is its own section, like the other table titles.
        match report.split_once(&format!("{heading}\n")) {
            Some((warnings, table)) => {
                sections.push(format!("{warnings}{heading}"));
                sections.push(table.to_string());
            }
            None => sections.push(report),
        }
    }
}

/// A hint's threshold with its unit, as the text output and the TUI say it.
pub(crate) fn threshold_text(h: &Hint) -> String {
    match h.unit {
        "%" => format!("{}%", h.threshold),
        "x" => format!("{}x", h.threshold),
        "ns" => format!("{} ns", h.threshold),
        _ => format!("{}% of one CPU", h.threshold),
    }
}

/// Where a hint's evidence points: `at file:line `text``, when it names a
/// line.
pub(crate) fn hint_at(h: &Hint) -> Option<String> {
    let (f, l) = (h.file.as_deref()?, h.line?);
    Some(match h.source.as_deref().filter(|s| !s.is_empty()) {
        Some(t) => format!("at {}:{l} `{t}`", basename(f)),
        None => format!("at {}:{l}", basename(f)),
    })
}

/// The `Hints` section: one entry per hint, naming the program and line,
/// the evidence, the threshold and the fix.
pub(crate) fn hints_text(found: &[Hint]) -> String {
    let mut out = String::from("Hints:");
    for h in found {
        let at = hint_at(h).map(|a| format!(" {a}")).unwrap_or_default();
        out.push_str(&format!(
            "\n- {} in program {} ({}){at}: {} (threshold {}).\n  Fix: {}.",
            h.kind.replace('_', " "),
            h.program_id,
            h.program,
            h.evidence,
            threshold_text(h),
            h.fix
        ));
    }
    out
}

/// A hint as a JSON object.
pub(crate) fn hint_json(h: &Hint) -> Json {
    to_obj(vec![
        ("kind", h.kind.into()),
        ("program_id", h.program_id.into()),
        ("program", h.program.as_str().into()),
        ("file", opt_str(&h.file)),
        ("line", h.line.map_or(Json::Null, Json::from)),
        ("source", opt_str(&h.source)),
        ("figure", h.figure.into()),
        ("threshold", h.threshold.into()),
        ("unit", h.unit.into()),
        ("evidence", h.evidence.as_str().into()),
        ("fix", h.fix.into()),
    ])
}

fn program_table(progs: &[ProgramReport], view: &View) -> String {
    let kernel = progs.iter().any(|p| p.kernel_samples > 0);
    let mut headers = vec!["ID", "TYPE", "NAME"];
    if view.wide {
        headers.push("SAMPLES");
    }
    if kernel {
        headers.extend(["KERNEL_SAMPLES", "INCL_SAMPLES"]);
    }
    headers.push("CPU%");
    if kernel {
        headers.extend(["KERNEL_CPU%", "INCL_CPU%"]);
    }
    if view.extended {
        headers.extend(["TAG", "PINNED"]);
    }
    let rows: Vec<Vec<String>> = progs
        .iter()
        .map(|p| {
            let mut r = vec![
                p.id.to_string(),
                p.prog_type.clone(),
                p.display_name().to_string(),
            ];
            if view.wide {
                r.push(p.samples.to_string());
            }
            if kernel {
                r.push(p.kernel_samples.to_string());
                r.push(p.inclusive_samples.to_string());
            }
            r.push(num::percent4(p.cpu_percent));
            if kernel {
                r.push(num::percent4(p.kernel_cpu_percent));
                r.push(num::percent4(p.inclusive_cpu_percent));
            }
            if view.extended {
                r.push(if p.tag.is_empty() {
                    "-".into()
                } else {
                    p.tag.clone()
                });
                r.push(super::dash_join(&p.pinned_paths, ","));
            }
            r
        })
        .collect();
    table::render(&headers, &rows)
}

/// The `TRIGGERED BY` table (and the cgroup table when the kernel reports
/// cgroups, with the container and pod of each) of one program, cut by
/// `--line-limit` with an Other row.
fn payer_sections(p: &ProgramReport, line_limit: usize, out: &mut Vec<String>) {
    if p.tasks.is_empty() {
        return;
    }
    out.push(format!(
        "Triggered by, program {} ({}):",
        p.id,
        p.display_name()
    ));
    out.push(payer_table(
        &p.tasks,
        &["PID", "TRIGGERED BY"],
        "tasks",
        line_limit,
        |r| vec![r.id.to_string(), r.name.clone()],
    ));
    if !p.cgroups.is_empty() {
        out.push(format!("Cgroups, program {} ({}):", p.id, p.display_name()));
        let cgroups = &p.cgroups;
        out.push(payer_table(
            cgroups,
            &["CGROUP_ID", "CONTAINER", "POD", "CGROUP"],
            "cgroups",
            line_limit,
            |r| {
                let w = cgroups.workload(r.id);
                vec![
                    r.id.to_string(),
                    container_cell(w.and_then(|w| w.container.as_ref())),
                    pod_cell(w.and_then(|w| w.pod.as_ref())),
                    r.name.clone(),
                ]
            },
        ));
    }
}

/// A container as a text cell: its name, else the first 12 digits of its
/// ID (the short form `docker ps` and `crictl ps` print), `-` outside one.
pub(crate) fn container_cell(c: Option<&Container>) -> String {
    match c {
        None => "-".into(),
        Some(c) => match &c.name {
            Some(name) => name.clone(),
            None => c.id.chars().take(12).collect(),
        },
    }
}

/// A pod as a text cell: `namespace/name`, else its UID, `-` outside one.
pub(crate) fn pod_cell(p: Option<&Pod>) -> String {
    match p {
        None => "-".into(),
        Some(p) => match (&p.namespace, &p.name) {
            (Some(ns), Some(name)) => format!("{ns}/{name}"),
            _ => p.uid.clone(),
        },
    }
}

/// One payer table: SAMPLES and CPU%, then `columns` filled by `cells`;
/// the Other row says what `--line-limit` left out in the last column.
fn payer_table(
    payers: &Payers,
    columns: &[&str],
    what: &str,
    limit: usize,
    cells: impl Fn(&Figured<Payer>) -> Vec<String>,
) -> String {
    let mut rows: Vec<Vec<String>> = payers
        .shown_rows()
        .iter()
        .map(|r| {
            let mut row = vec![r.samples.to_string(), num::percent4(r.cpu_percent)];
            row.extend(cells(r));
            row
        })
        .collect();
    if let Some(rest) = payers.other {
        let mut row = vec![rest.samples.to_string(), num::percent4(rest.cpu_percent)];
        row.extend(columns.iter().map(|_| "-".to_string()));
        if let Some(last) = row.last_mut() {
            *last = format!("Other {what} not shown (--line-limit={limit})");
        }
        rows.push(row);
    }
    let mut headers = vec!["SAMPLES", "CPU%"];
    headers.extend(columns);
    table::render(&headers, &rows)
}

/// Payers as JSON; each names its container and pod (null where it ran
/// outside one or its cgroup is unknown).
fn payers_json(payers: &Payers, id: &'static str, name: &'static str) -> Json {
    Json::Arr(
        payers
            .all
            .iter()
            .map(|r| {
                let w = payers.workload(r.id);
                to_obj(vec![
                    (id, r.id.into()),
                    (name, r.name.as_str().into()),
                    ("samples", r.samples.into()),
                    ("cpu_percent", r.cpu_percent.into()),
                    // New, additive: where the payer ran.
                    (
                        "container",
                        container_json(w.and_then(|w| w.container.as_ref())),
                    ),
                    ("pod", pod_json(w.and_then(|w| w.pod.as_ref()))),
                ])
            })
            .collect(),
    )
}

fn direct_table(p: &ProgramReport, view: &View, line_limit: usize) -> String {
    // Subprogram names are new, optional output: a FUNCTION column appears
    // only for programs that have BPF-to-BPF subprograms.
    let functions = p.function_count > 1;
    let mut headers = vec!["SAMPLES", "CPU%"];
    if view.wide {
        headers.push("JIT_ADDR");
    }
    if functions {
        headers.push("FUNCTION");
    }
    headers.extend(["FILE", "LINE", "SOURCE"]);
    let mut rows: Vec<Vec<String>> = p
        .direct
        .rows
        .iter()
        .map(|h| {
            let mut r = vec![h.samples.to_string(), num::percent4(h.cpu_percent)];
            if view.wide {
                r.push(hex(h.jited_address));
            }
            if functions {
                r.push(dash(h.function.as_deref()));
            }
            r.push(file_cell(h.file.as_deref(), view.wide));
            r.push(dash(h.line));
            r.push(match (&h.source, h.is_unmapped()) {
                (Some(s), _) => s.clone(),
                (None, true) => "[no BTF/JIT source metadata]".into(),
                (None, false) => "-".into(),
            });
            r
        })
        .collect();
    let other = p.direct.other;
    if other.samples > 0 {
        let mut r = vec![other.samples.to_string(), num::percent4(other.cpu_percent)];
        if view.wide {
            r.push("-".into());
        }
        if functions {
            r.push("-".into());
        }
        r.extend([
            "-".into(),
            "-".into(),
            format!("Other eBPF samples not shown (--line-limit={line_limit})"),
        ]);
        rows.push(r);
    }
    table::render(&headers, &rows)
}

fn bpf_source_cell(source: Option<&str>, mapped: bool) -> String {
    match (source, mapped) {
        (Some(s), _) => s.into(),
        (None, false) => "[no BPF caller source metadata]".into(),
        (None, true) => "-".into(),
    }
}

/// One kernel row's cells: `sym` is the symbol cell, `wide` the three
/// address cells of the wide view.
fn kernel_cells(
    k: &KernelHotspot,
    cpu: f64,
    sym: String,
    wide: Option<[String; 3]>,
) -> Vec<String> {
    let mut r = vec![
        k.samples.to_string(),
        num::percent4(cpu),
        k.kind.into(),
        sym,
        dash(k.module.as_deref()),
    ];
    r.extend(wide.into_iter().flatten());
    r
}

fn kernel_table(p: &ProgramReport, view: &View, line_limit: usize) -> String {
    let mut headers = vec!["SAMPLES", "CPU%", "KIND", "SYMBOL", "MODULE"];
    if view.wide {
        headers.extend(["IP", "SYMBOL_OFF", "BPF_JIT_ADDR"]);
    }
    headers.extend(["BPF_FILE", "BPF_LINE", "BPF_SOURCE"]);
    let caller = |k: &KernelHotspot| {
        [
            file_cell(k.bpf_file.as_deref(), view.wide),
            dash(k.bpf_line),
            bpf_source_cell(k.bpf_source.as_deref(), k.caller_mapped),
        ]
    };
    let mut rows: Vec<Vec<String>> = Vec::new();
    let other = if view.kernel_ip_detail {
        for k in &p.kernel_ips.rows {
            let mut sym = dash(k.symbol.as_deref());
            if let (Some(_), Some(off)) = (&k.symbol, k.symbol_offset.filter(|&o| o != 0)) {
                sym.push_str(&format!("+0x{off:x}"));
            }
            let wide = view.wide.then(|| {
                [
                    hex(Some(k.ip)),
                    hex(k.symbol_offset),
                    hex(k.bpf_jited_address),
                ]
            });
            let mut r = kernel_cells(k, k.cpu_percent, sym, wide);
            r.extend(caller(k));
            rows.push(r);
        }
        p.kernel_ips.other
    } else {
        for g in &p.kernel_functions.rows {
            let mut sym = dash(g.symbol.as_deref());
            if g.ip_count > 1 {
                sym.push_str(&format!(" ({} IPs)", g.ip_count));
            }
            let wide = view.wide.then(|| ["-".into(), "-".into(), "-".into()]);
            let mut r = kernel_cells(g, g.cpu_percent, sym, wide);
            r.extend(caller(g));
            rows.push(r);
        }
        p.kernel_functions.other
    };
    if other.samples > 0 {
        rows.push(kernel_other_row(other, view.wide, line_limit));
    }
    table::render(&headers, &rows)
}

/// Interrupts by entry point and the line they arrived on.
fn interrupt_table(p: &ProgramReport, view: &View, line_limit: usize) -> String {
    let mut headers = vec!["SAMPLES", "CPU%", "ENTRY"];
    if view.wide {
        headers.push("BPF_JIT_ADDR");
    }
    headers.extend(["BPF_FILE", "BPF_LINE", "BPF_SOURCE"]);
    let mut rows: Vec<Vec<String>> = p
        .interrupts
        .rows
        .iter()
        .map(|r| {
            let mut cells = vec![
                r.samples.to_string(),
                num::percent4(r.cpu_percent),
                r.entry.clone(),
            ];
            if view.wide {
                cells.push(hex(r.bpf_jited_address));
            }
            cells.extend([
                file_cell(r.bpf_file.as_deref(), view.wide),
                dash(r.bpf_line),
                bpf_source_cell(r.bpf_source.as_deref(), r.caller_mapped),
            ]);
            cells
        })
        .collect();
    let other = p.interrupts.other;
    if other.samples > 0 {
        let mut cells = vec![
            other.samples.to_string(),
            num::percent4(other.cpu_percent),
            format!("Other interrupt samples not shown (--line-limit={line_limit})"),
        ];
        if view.wide {
            cells.push("-".into());
        }
        cells.extend(["-".into(), "-".into(), "-".into()]);
        rows.push(cells);
    }
    table::render(&headers, &rows)
}

fn kernel_other_row(other: Other, wide: bool, line_limit: usize) -> Vec<String> {
    let mut r = vec![
        other.samples.to_string(),
        num::percent4(other.cpu_percent),
        "other".into(),
        format!("Other under-eBPF samples not shown (--line-limit={line_limit})"),
        "-".into(),
    ];
    if wide {
        r.extend(["-".into(), "-".into(), "-".into()]);
    }
    r.extend(["-".into(), "-".into(), "-".into()]);
    r
}

// ---------------------------------------------------------------------------
// Metadata shared by JSON and CSV
// ---------------------------------------------------------------------------

/// Metadata keys and values in the original's key order, which JSON keeps
/// and CSV uses for its columns.
fn metadata(report: &Report) -> Vec<(&'static str, Json)> {
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
fn program_fields(p: &ProgramReport) -> Vec<(&'static str, Json)> {
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

fn opt_str<S: std::ops::Deref<Target = str>>(s: &Option<S>) -> Json {
    s.as_deref().map_or(Json::Null, Json::from)
}

fn hotspot_fields(h: &Figured<Hotspot>) -> Vec<(&'static str, Json)> {
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

fn kernel_fields(k: &Figured<KernelHotspot>) -> Vec<(&'static str, Json)> {
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

fn to_obj(fields: Vec<(&'static str, Json)>) -> Json {
    json::fields(fields)
}

fn program_json(p: &ProgramReport, ctx: Option<&SourceContexts>) -> Json {
    let mut f = program_fields(p);
    f.push((
        "hotspots",
        Json::Arr(
            p.direct
                .rows
                .iter()
                .map(|h| {
                    let mut o = hotspot_fields(h);
                    // New, optional: the (sub)program holding the line.
                    o.push(("function", opt_str(&h.function)));
                    o.push(("jited_address_hex", hex_json(h.jited_address)));
                    to_obj(o)
                })
                .collect(),
        ),
    ));
    f.push(("kernel_samples", p.kernel_samples.into()));
    f.push(("kernel_cpu_percent", p.kernel_cpu_percent.into()));
    f.push((
        "kernel_hotspots",
        Json::Arr(
            p.kernel_ips
                .rows
                .iter()
                .map(|k| {
                    let mut o = kernel_fields(k);
                    o.push(("bpf_function", opt_str(&k.bpf_function)));
                    o.push(("ip_hex", hex_json(Some(k.ip))));
                    o.push(("bpf_jited_address_hex", hex_json(k.bpf_jited_address)));
                    to_obj(o)
                })
                .collect(),
        ),
    ));
    // New, additive: who pays for the program.
    f.push(("tasks", payers_json(&p.tasks, "pid", "comm")));
    f.push(("cgroups", payers_json(&p.cgroups, "id", "path")));
    f.push(("hints", Json::Arr(p.hints.iter().map(hint_json).collect())));
    if let Some(c) = ctx.and_then(|c| Some((c, c.by_program.get(&p.id)?))) {
        let dev = dump::DumpDevmode {
            devdir: c.0.devdir.clone(),
            context: c.1,
        };
        f.push(("source_context", dump::context_json(&dev)));
    }
    // New, additive: last so the original's keys keep their places.
    f.push(("full_name", p.display_name().into()));
    f.extend(program_tail(p));
    if let Some(a) = &p.native {
        let all = a.all.clone();
        let rows = json::Items::new(move |sink| {
            // Written field by field: a profile lists thousands of sampled
            // instructions.
            for r in all.iter() {
                sink.object(&mut |f| native_json(r, f));
            }
        });
        f.push(("native", Json::Items(rows)));
    }
    to_obj(f)
}

/// One sampled native instruction (`--annotate`): every one is listed.
fn native_json(r: &Figured<NativeRow>, f: &mut json::Fields<'_>) {
    f.str("function", r.function.as_deref());
    f.uint("offset", r.offset);
    f.str("asm", r.asm.as_deref());
    f.str("file", r.file.as_deref());
    f.uint("line", r.line.map(u64::from));
    f.uint("samples", Some(r.samples));
    f.float("percent", r.sample_percent);
}

/// A kernel address as text: JSON numbers above 2^53 lose precision in
/// JavaScript and jq.
fn hex_json(v: Option<u64>) -> Json {
    v.map_or(Json::Null, |v| Json::from(format!("0x{v:x}").as_str()))
}

/// Seconds into the capture, to the millisecond.
fn seconds_json(v: Option<f64>) -> Json {
    v.map_or(Json::Null, |s| crate::model::profile::round(s, 3).into())
}

/// Program keys added after `full_name`: interrupts and lifetime.
fn program_tail(p: &ProgramReport) -> Vec<(&'static str, Json)> {
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
fn metadata_tail(report: &Report) -> Vec<(&'static str, Json)> {
    let cap = &report.capture;
    vec![
        ("interrupt_samples", cap.counters.interrupt_samples.into()),
        ("program_ids", cap.program_ids.as_slice().into()),
        ("pid", cap.pid.map_or(Json::Null, Json::from)),
    ]
}

fn to_json(report: &Report, ctx: Option<&SourceContexts>) -> Json {
    let items = report
        .programs
        .iter()
        .map(|p| program_json(p, ctx))
        .collect();
    let mut meta = metadata(report);
    meta.extend(metadata_tail(report));
    json::document("profile", items, to_obj(meta))
}

// ---------------------------------------------------------------------------
// CSV
// ---------------------------------------------------------------------------

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
struct CsvParts {
    program: usize,
    direct: usize,
    /// A kernel row's fields after the shared figures.
    kernel: usize,
}

impl CsvParts {
    fn new() -> CsvParts {
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
fn csv_header(report: &Report) -> Vec<String> {
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

fn to_csv(report: &Report) -> String {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::profile::Profile;
    use crate::profile::aggregate::tests::profile;
    use crate::profile::report::{build, ReportOptions};

    /// The CSV header as the original wrote it (and `full_name` after it):
    /// the header derived from the JSON fields must stay this, byte for byte.
    const ORIGINAL_CSV_HEADER: &str =
        "requested_event,selected_event,duration,frequency,limit,line_limit,\
total_samples,lost_samples,unresolved_samples,bpf_jit_samples,\
non_bpf_samples,selected_program_samples,other_bpf_samples,\
source_mapped_samples,source_unmapped_samples,callchain_samples,\
kernel_attributed_samples,kernel_unattributed_samples,\
kernel_symbolized_samples,call_graph,actual_duration,perf_cpus,\
perf_buffer_pages_per_cpu,perf_buffer_bytes_per_cpu,\
perf_buffer_bytes_total,perf_drain_interval_ms,perf_drain_count,\
perf_max_ring_occupancy_percent,perf_throttle_events,\
perf_unthrottle_events,perf_malformed_records,perf_unknown_records,\
perf_discarded_bytes,perf_time_enabled_ns,perf_time_running_ns,\
perf_running_percent,incomplete,warnings,program_id,program_type,\
program_name,program_tag,program_samples,program_sample_percent,\
program_cpu_percent,program_inclusive_samples,\
program_inclusive_cpu_percent,program_kernel_samples,\
program_kernel_cpu_percent,program_direct_source_mapped_samples,\
program_direct_source_unmapped_samples,\
program_under_bpf_caller_source_mapped_samples,\
program_under_bpf_caller_source_unmapped_samples,\
program_direct_hotspot_samples_omitted_by_limit,\
program_under_bpf_hotspot_samples_omitted_by_limit,\
program_unaccounted_samples,pinned_paths,hotspot_kind,hotspot_rank,\
hotspot_samples,hotspot_sample_percent,hotspot_cpu_percent,\
jited_address,instruction_offset,file,line,column,source,kernel_ip,\
kernel_symbol,kernel_module,kernel_symbol_offset,kernel_symbol_kind,\
bpf_jited_address,bpf_instruction_offset,bpf_file,bpf_line,bpf_column,\
bpf_source,full_name";

    /// Columns added after the original's and `full_name`.
    const NEW_CSV_COLUMNS: [&str; 12] = [
        "program_interrupt_samples",
        "program_interrupt_cpu_percent",
        "program_loaded_after_seconds",
        "program_unloaded_after_seconds",
        "program_loaded_cpu_percent",
        "program_loaded_inclusive_cpu_percent",
        "jited_address_hex",
        "kernel_ip_hex",
        "bpf_jited_address_hex",
        "interrupt_samples",
        "program_ids",
        "pid",
    ];

    fn header_text() -> String {
        format!("{ORIGINAL_CSV_HEADER},{}", NEW_CSV_COLUMNS.join(","))
    }

    fn header_len() -> usize {
        header_text().split(',').count()
    }

    #[test]
    fn csv_header_is_derived_from_the_json_fields_unchanged() {
        let report = build(&profile(), &ReportOptions::default());
        assert_eq!(csv_header(&report).join(","), header_text());
        let parts = CsvParts::new();
        assert_eq!((parts.program, parts.direct, parts.kernel), (19, 9, 11));
    }

    /// What a test asks for: the report's limits and the view.
    struct Case {
        opts: ReportOptions,
        view: View,
    }

    fn render_ctx(p: &Profile, c: &Case, ctx: Option<&SourceContexts>) -> String {
        render(&build(p, &c.opts), &c.view, ctx)
    }

    fn render_n(p: &Profile, c: &Case) -> String {
        render_ctx(p, c, None)
    }

    fn view(format: Format) -> Case {
        Case {
            opts: ReportOptions {
                limit: 20,
                line_limit: 2,
            },
            view: View {
                wide: false,
                extended: false,
                kernel_ip_detail: false,
                format,
            },
        }
    }

    #[test]
    fn text_layout() {
        let p = profile();
        let out = render_n(&p, &view(Format::Text));
        let expected = [
            "Perf capture: actual=1.000s cpus=2 buffer=128pages/cpu total=1056768B drain=100ms occupancy=2.6% running=100.00%",
            "",
            "Perf records: drains=20 lost=0 throttle=0 unthrottle=0 malformed=0 unknown=0 discarded_bytes=0 incomplete=no",
            "",
            "CPU% = the program's own instructions, KERNEL_CPU% = helpers and kernel code it called, INCL_CPU% = both; 100% = one CPU; interrupts that arrived while it ran are not included.",
            "",
            "ID  TYPE        NAME      KERNEL_SAMPLES  INCL_SAMPLES  CPU%    KERNEL_CPU%  INCL_CPU%",
            "98  tracepoint  sys_exit               9  19            1.0000       0.9000  1.9000   ",
            " 7  xdp         small                  0  1             0.1000       0.0000  0.1000   ",
            "",
            "Breakdown of program 98 (sys_exit):",
            "",
            "SAMPLES  CPU%    FILE        LINE  SOURCE                                       ",
            "      5  0.5000  x.bpf.c      107  \t\tif (c)                                     ",
            "      2  0.2000  maps.bpf.h    16  \tif (val)                                    ",
            "      3  0.3000  -              -  Other eBPF samples not shown (--line-limit=2)",
            "",
            "Kernel/helper samples for program 98 (sys_exit):",
            "",
            "SAMPLES  CPU%    KIND        SYMBOL                                               MODULE  BPF_FILE  BPF_LINE  BPF_SOURCE ",
            "      6  0.6000  bpf_map     lookup_nulls_elem_raw (3 IPs)                        -       x.bpf.c         15  \tline_15();",
            "      2  0.2000  bpf_helper  bpf_get_current_pid_tgid                             -       x.bpf.c         77  \tline_77();",
            "      1  0.1000  other       Other under-eBPF samples not shown (--line-limit=2)  -       -                -  -          ",
            "",
            "Triggered by, program 98 (sys_exit):",
            "",
            "SAMPLES  CPU%    PID  TRIGGERED BY                          ",
            "      9  0.9000    7  ?                                     ",
            "      5  0.5000  207  ?                                     ",
            "      5  0.5000    -  Other tasks not shown (--line-limit=2)",
            "",
            "Breakdown of program 7 (small):",
            "",
            "SAMPLES  CPU%    FUNCTION  FILE  LINE  SOURCE",
            "      1  0.1000  main_fn   b.c      3  x;    ",
            "",
            "Triggered by, program 7 (small):",
            "",
            "SAMPLES  CPU%    PID  TRIGGERED BY",
            "      1  0.1000  103  ?           ",
        ]
        .join("\n");
        assert_eq!(out, expected);
    }

    /// Program 98's first stack ran in a pod's container; its other
    /// samples carried no cgroup the profile could name.
    fn in_a_pod() -> (Profile, crate::model::report::SampledWorkloads) {
        let mut p = profile();
        let path = format!(
            "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod{}.slice/cri-containerd-{}.scope",
            "0123abcd_0000_4000_8000_000000000001",
            "c1".repeat(32)
        );
        p.programs[0].stacks[0].cgroup = 5;
        p.cgroups.insert(5, path.clone());
        let mut w = crate::kernel::cgroups::workload(&path);
        if let Some(c) = w.container.as_mut() {
            c.name = Some("server".into());
        }
        if let Some(pod) = w.pod.as_mut() {
            pod.namespace = Some("payments".into());
            pod.name = Some("checkout-x2k4p".into());
        }
        let pid = p.programs[0].stacks[0].pid;
        let mut sampled = crate::model::report::SampledWorkloads::default();
        sampled.cgroups.insert(5, w.clone());
        sampled.tasks.insert(pid, w);
        (p, sampled)
    }

    #[test]
    fn cgroup_table_and_json_name_containers_and_pods() {
        let (p, sampled) = in_a_pod();
        let case = view(Format::Text);
        let report = crate::profile::report::build_with(&p, &case.opts, &sampled);
        let out = render(&report, &case.view, None);
        let table: Vec<&str> = out
            .lines()
            .skip_while(|l| !l.starts_with("Cgroups, program 98"))
            .skip(2)
            .take(3)
            .collect();
        let path = &p.cgroups[&5];
        assert_eq!(
            table[0].trim_end(),
            "SAMPLES  CPU%    CGROUP_ID  CONTAINER  POD                      CGROUP"
        );
        assert!(
            table[1]
                .starts_with("     17  1.7000          0  -          -                        ?"),
            "{out}"
        );
        assert_eq!(
            table[2].trim_end(),
            format!("      2  0.2000          5  server     payments/checkout-x2k4p  {path}")
        );
        let json = render(
            &report,
            &View {
                format: Format::Json { pretty: false },
                ..case.view
            },
            None,
        );
        let container = format!(
            r#""container":{{"runtime":"containerd","id":"{}","name":"server"}},"pod":{{"uid":"0123abcd-0000-4000-8000-000000000001","namespace":"payments","name":"checkout-x2k4p","qos":"Burstable"}}"#,
            "c1".repeat(32)
        );
        // The cgroup and the task that ran in it name both; the rest null.
        assert_eq!(json.matches(&container).count(), 2, "{json}");
        assert!(
            json.contains(
                r#""id":0,"path":"?","samples":17,"cpu_percent":1.7,"container":null,"pod":null}"#
            ),
            "{json}"
        );
    }

    #[test]
    fn cells_fall_back_to_ids() {
        let (_, sampled) = in_a_pod();
        let mut w = sampled.cgroups[&5].clone();
        assert_eq!(container_cell(w.container.as_ref()), "server");
        assert_eq!(pod_cell(w.pod.as_ref()), "payments/checkout-x2k4p");
        if let Some(c) = w.container.as_mut() {
            c.name = None;
        }
        if let Some(p) = w.pod.as_mut() {
            p.name = None;
        }
        assert_eq!(container_cell(w.container.as_ref()), "c1".repeat(6));
        assert_eq!(
            pod_cell(w.pod.as_ref()),
            "0123abcd-0000-4000-8000-000000000001"
        );
        assert_eq!(
            (container_cell(None), pod_cell(None)),
            ("-".into(), "-".into())
        );
    }

    #[test]
    fn text_wide_extended_ip_detail() {
        let p = profile();
        let v = Case {
            opts: ReportOptions {
                limit: 1,
                line_limit: 4,
            },
            view: View {
                wide: true,
                extended: true,
                kernel_ip_detail: true,
                format: Format::Text,
            },
        };
        let out = render_n(&p, &v);
        assert!(out.contains(
            "ID  TYPE        NAME      SAMPLES  KERNEL_SAMPLES  INCL_SAMPLES  CPU%    KERNEL_CPU%  INCL_CPU%  TAG               PINNED"
        ));
        assert!(!out.contains("program 7"));
        assert!(out.contains("SAMPLES  CPU%    JIT_ADDR  FILE                 LINE  SOURCE"));
        assert!(!out.contains("Other eBPF samples"));
        assert!(out.contains(
            "      1  0.1000  -         -                       -  [no BTF/JIT source metadata]"
        ));
        assert!(out.contains("lookup_nulls_elem_raw+0x10"));
        assert!(out.contains("0xffffffff81600010        0x10  0xffffffffc000100f"));
        assert!(out.contains("[no BPF caller source metadata]"));
        assert!(out.contains("Other under-eBPF samples not shown (--line-limit=4)"));
    }

    #[test]
    fn empty_profile_text_and_csv_keep_telemetry() {
        let mut p = profile();
        p.programs.clear();
        p.telemetry.warnings =
            vec!["perf dropped 3 samples; CPU percentages are lower bounds".into()];
        assert_eq!(
            render_n(&p, &view(Format::Text)),
            "Perf capture: actual=1.000s cpus=2 buffer=128pages/cpu total=1056768B drain=100ms occupancy=2.6% running=100.00%\n\
Perf records: drains=20 lost=0 throttle=0 unthrottle=0 malformed=0 unknown=0 discarded_bytes=0 incomplete=no\n\
Warning: perf dropped 3 samples; CPU percentages are lower bounds\n\
No BPF JIT samples captured."
        );
        let csv = render_n(&p, &view(Format::Csv));
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0], header_text());
        assert!(lines[1].starts_with(
            "auto,cpu-clock,1.0,1000,20,2,200,0,189,11,189,0,0,0,0,200,9,180,8,fp,1.0,0;1,128,524288,1056768,100,20,2.64,0,0,0,0,0,2000,2000,100.0,false,perf dropped 3 samples; CPU percentages are lower bounds,"
        ));
        assert_eq!(lines[1].split(',').count(), header_len());
    }

    #[test]
    fn devmode_source_context_sections() {
        use crate::model::source::{ContextRow, DumpContext};
        use std::collections::HashMap;
        let p = profile();
        let row = |kind, line, src: &str| ContextRow {
            kind,
            file: "/src/dir/x.bpf.c".into(),
            line,
            source: Some(src.into()),
            resolved_path: Some("/tree/x.bpf.c".into()),
        };
        let mut by_program = HashMap::new();
        by_program.insert(
            98,
            DumpContext {
                rows: vec![row("mapped", 76, "int f()"), row("context", 77, "{")],
                any_resolved: true,
                ..Default::default()
            },
        );
        by_program.insert(7, DumpContext::default());
        let ctx = SourceContexts {
            devdir: "/tree".into(),
            by_program,
        };
        let out = render_ctx(&p, &view(Format::Text), Some(&ctx));
        assert!(out.contains(
            "\n\nSource context for program 98:\n\nKIND     FILE     LINE  SOURCE \nmapped   x.bpf.c    76  int f()\ncontext  x.bpf.c    77  {      \n\nBreakdown of program 7"
        ), "{out}");
        assert!(
            out.ends_with("\n\nSource context for program 7: no matching source context found.")
        );
        let json = render_ctx(&p, &view(Format::Json { pretty: false }), Some(&ctx));
        assert!(json.contains(
            r#""source_context":{"enabled":true,"devdir":"/tree","unresolved_files":[],"ambiguous_files":[],"source_mismatches":[],"rows":[{"kind":"mapped","file":"/src/dir/x.bpf.c","line":76,"source":"int f()","resolved_path":"/tree/x.bpf.c"},"#
        ));
        // CSV ignores --devmode.
        assert_eq!(
            render_ctx(&p, &view(Format::Csv), Some(&ctx)),
            render_n(&p, &view(Format::Csv))
        );
    }

    #[test]
    fn hints_name_program_line_evidence_threshold_and_fix() {
        let h = crate::model::profile::Hint {
            kind: "output_cost",
            program_id: 5,
            program: "p".into(),
            file: Some("/s/x.c".into()),
            line: Some(7),
            source: Some("bpf_ringbuf_output(&rb, &e, sizeof(e), 0)；".into()),
            figure: 37.5,
            threshold: 20.0,
            unit: "%",
            evidence: "37.50% of the program's samples".into(),
            fix: "batch",
        };
        assert_eq!(
            hints_text(std::slice::from_ref(&h)),
            "Hints:\n- output cost in program 5 (p) at x.c:7 `bpf_ringbuf_output(&rb, &e, sizeof(e), 0)；`: 37.50% of the program's samples (threshold 20%).\n  Fix: batch."
        );
        let j = json::to_string(&hint_json(&h), false);
        assert!(
            j.starts_with(
                r#"{"kind":"output_cost","program_id":5,"program":"p","file":"/s/x.c","line":7,"#
            ),
            "{j}"
        );
        assert!(j.ends_with(r#""figure":37.5,"threshold":20.0,"unit":"%","evidence":"37.50% of the program's samples","fix":"batch"}"#), "{j}");
    }

    #[test]
    fn json_keys_and_values() {
        let p = profile();
        let out = render_n(&p, &view(Format::Json { pretty: false }));
        assert!(out.starts_with(
            r#"{"kind":"profile","items":[{"id":98,"type":"tracepoint","name":"sys_exit","tag":"fc3eb0ef05553d4b","samples":10,"sample_percent":5.0,"cpu_percent":1.0,"inclusive_samples":19,"inclusive_cpu_percent":1.9,"direct_source_mapped_samples":9,"direct_source_unmapped_samples":1,"under_bpf_caller_source_mapped_samples":8,"under_bpf_caller_source_unmapped_samples":1,"direct_hotspot_samples_omitted_by_limit":3,"under_bpf_hotspot_samples_omitted_by_limit":4,"unaccounted_samples":0,"pinned_paths":[],"hotspots":[{"samples":5,"sample_percent":50.0,"cpu_percent":0.5,"jited_address":32,"instruction_offset":856,"file":"/src/dir/x.bpf.c","line":107,"column":3,"source":"\t\tif (c)","function":"main_fn","jited_address_hex":"0x20"},"#
        ));
        assert!(out.contains(
            r#""kernel_samples":9,"kernel_cpu_percent":0.9,"kernel_hotspots":[{"samples":3,"sample_percent":33.33,"cpu_percent":0.3,"ip":18446744071585136656,"symbol":"lookup_nulls_elem_raw","module":null,"symbol_offset":16,"symbol_kind":"bpf_map","bpf_jited_address":18446744072635813903,"bpf_instruction_offset":120,"bpf_file":"/src/dir/x.bpf.c","bpf_line":15,"bpf_column":9,"bpf_source":"\tline_15();","bpf_function":null,"ip_hex":"0xffffffff81600010","bpf_jited_address_hex":"0xffffffffc000100f"},"#
        ));
        // Who pays: every task (not cut by --line-limit); no cgroup IDs here.
        assert!(out.contains(
            r#""tasks":[{"pid":7,"comm":"?","samples":9,"cpu_percent":0.9,"container":null,"pod":null},{"pid":207,"comm":"?","samples":5,"cpu_percent":0.5,"container":null,"pod":null},{"pid":116,"comm":"?","samples":2,"cpu_percent":0.2,"container":null,"pod":null},{"pid":177,"comm":"?","samples":2,"cpu_percent":0.2,"container":null,"pod":null},{"pid":100,"comm":"?","samples":1,"cpu_percent":0.1,"container":null,"pod":null}],"cgroups":[],"hints":[],"full_name":"sys_exit","interrupt_samples":0,"interrupt_cpu_percent":0.0,"interrupts":[],"loaded_after_seconds":null,"unloaded_after_seconds":null,"loaded_cpu_percent":null,"loaded_inclusive_cpu_percent":null}"#
        ));
        assert!(out.ends_with(
            r#""metadata":{"requested_event":"auto","selected_event":"cpu-clock","duration":1.0,"frequency":1000,"limit":20,"line_limit":2,"total_samples":200,"lost_samples":0,"unresolved_samples":189,"bpf_jit_samples":11,"non_bpf_samples":189,"selected_program_samples":0,"other_bpf_samples":0,"source_mapped_samples":10,"source_unmapped_samples":1,"callchain_samples":200,"kernel_attributed_samples":9,"kernel_unattributed_samples":180,"kernel_symbolized_samples":8,"call_graph":"fp","actual_duration":1.0,"perf_cpus":[0,1],"perf_buffer_pages_per_cpu":128,"perf_buffer_bytes_per_cpu":524288,"perf_buffer_bytes_total":1056768,"perf_drain_interval_ms":100,"perf_drain_count":20,"perf_max_ring_occupancy_percent":2.64,"perf_throttle_events":0,"perf_unthrottle_events":0,"perf_malformed_records":0,"perf_unknown_records":0,"perf_discarded_bytes":0,"perf_time_enabled_ns":2000,"perf_time_running_ns":2000,"perf_running_percent":100.0,"incomplete":false,"warnings":[],"interrupt_samples":0,"program_ids":[],"pid":null}}"#
        ));
    }

    #[test]
    fn program_mode_selects_one_and_counts_others() {
        let mut p = profile();
        p.program_ids = vec![7];
        let out = render_n(&p, &view(Format::Json { pretty: false }));
        assert!(out.contains(r#""items":[{"id":7,"#));
        assert!(!out.contains(r#""id":98"#));
        assert!(out.contains(
            r#""limit":1,"line_limit":2,"total_samples":200,"lost_samples":0,"unresolved_samples":189,"bpf_jit_samples":11,"non_bpf_samples":189,"selected_program_samples":1,"other_bpf_samples":10,"source_mapped_samples":1,"source_unmapped_samples":0,"#
        ));
        p.program_ids = vec![12345];
        assert!(render_n(&p, &view(Format::Text)).ends_with("No BPF JIT samples captured."));
    }

    #[test]
    fn csv_rows() {
        let p = profile();
        let csv = render_n(&p, &view(Format::Csv));
        let rows: Vec<&str> = csv.lines().skip(1).collect();
        // program 98: 2 direct + 2 kernel rows; program 7: 1 direct row.
        assert_eq!(rows.len(), 5);
        let tail = |r: &str| r.split(',').skip(38).collect::<Vec<_>>().join(",");
        assert_eq!(
            tail(rows[0]),
            "98,tracepoint,sys_exit,fc3eb0ef05553d4b,10,5.0,1.0,19,1.9,9,0.9,9,1,8,1,3,4,0,,bpf,1,5,50.0,0.5,32,856,/src/dir/x.bpf.c,107,3,\t\tif (c),,,,,,,,,,,,sys_exit,0,0.0,,,,,0x20,,,0,,"
        );
        assert_eq!(
            tail(rows[2]),
            "98,tracepoint,sys_exit,fc3eb0ef05553d4b,10,5.0,1.0,19,1.9,9,0.9,9,1,8,1,3,4,0,,kernel,1,3,33.33,0.3,,,,,,,18446744071585136656,lookup_nulls_elem_raw,,16,bpf_map,18446744072635813903,120,/src/dir/x.bpf.c,15,9,\tline_15();,sys_exit,0,0.0,,,,,,0xffffffff81600010,0xffffffffc000100f,0,,"
        );
        assert!(tail(rows[4]).starts_with(
            "7,xdp,small,aa,1,0.5,0.1,1,0.1,0,0.0,1,0,0,0,0,0,0,/sys/fs/bpf/p;/sys/fs/bpf/q,bpf,1,"
        ));
        for r in &rows {
            assert_eq!(r.split(',').count(), header_len(), "{r}");
        }
    }

    fn annotated_view(format: Format) -> String {
        let (_, r) = crate::profile::report::tests::annotated(2);
        render(&r, &view(format).view, None)
    }

    #[test]
    fn text_instructions_table() {
        let out = annotated_view(Format::Text);
        let expected = [
            "Instructions of program 98 (sys_exit):",
            "",
            "SAMPLES  %THIS  FUNCTION  OFFSET  INSTRUCTION                                           FILE:LINE  ",
            "      3  30.00  main_fn    +0x20  call bpf_map_lookup_elem                              x.bpf.c:107",
            "      2  20.00  main_fn    +0x10  mov eax, 0x1                                          x.bpf.c:77 ",
            "      5  50.00  -              -  Other native instructions not shown (--line-limit=2)  -          ",
            "",
            "Kernel/helper samples for program 98 (sys_exit):",
        ]
        .join("\n");
        assert!(out.contains(&expected), "{out}");
        // After the line breakdown; program 7 has no sampled instruction
        // and so no table, even though its code was not read.
        assert!(out.contains("--line-limit=2)\n\nInstructions of program 98"));
        assert!(!out.contains("Instructions of program 7"));
        // Roles and missing text, full paths with -w.
        let (_, r) = crate::profile::report::tests::annotated(0);
        let a = r.programs[0].native.as_ref().unwrap();
        assert_eq!(
            instructions_table(a, true, 0),
            [
                "SAMPLES  %THIS  FUNCTION  OFFSET  INSTRUCTION                     FILE:LINE             ",
                "      3  30.00  main_fn    +0x20  call bpf_map_lookup_elem        /src/dir/x.bpf.c:107  ",
                "      2  20.00  main_fn    +0x10  mov eax, 0x1                    /src/dir/x.bpf.c:77   ",
                "      2  20.00  main_fn    +0x24  add rax, 0x1                    /src/dir/x.bpf.c:107  ",
                "      1  10.00  main_fn     +0x2  push rbp [prologue]             -                     ",
                "      1  10.00  main_fn    +0x30  leave [epilogue]                /src/dir/maps.bpf.h:16",
                "      1  10.00  main_fn    +0x31  jmp __x86_return_thunk [thunk]  /src/dir/maps.bpf.h:16",
            ]
            .join("\n")
        );
        let mut a = a.clone();
        a.unavailable = Some("the kernel withholds it".into());
        let mut all = a.all.to_vec();
        all[0].row.asm = None;
        a.all = all.into();
        let p = &r.programs[0];
        assert_eq!(
            instructions_heading(p, &a),
            "Instructions of program 98 (sys_exit):\nNo instruction text: the kernel withholds it"
        );
        assert!(instructions_table(&a, false, 0).contains("  +0x20  -  "));
    }

    /// What writing the JSON rows of `--annotate` costs, for the README:
    /// the annotated test report with 1,850 sampled instructions (as many
    /// as a 5 s profile of the hot fixture lists), rendered 300 times.
    /// `cargo test --release --lib -- --ignored --nocapture json_native_cost`.
    #[test]
    #[ignore]
    fn json_native_cost() {
        let (_, mut r) = crate::profile::report::tests::annotated(0);
        let a = r.programs[0].native.as_mut().unwrap();
        let rows: Vec<_> = a.all.iter().cycle().take(1850).cloned().collect();
        a.all = std::sync::Arc::new(rows);
        let v = view(Format::Json { pretty: false }).view;
        let mut out = String::new();
        let mut times = Vec::new();
        for _ in 0..300 {
            let t = std::time::Instant::now();
            out = render(&r, &v, None);
            times.push(t.elapsed().as_secs_f64() * 1e3);
        }
        // What was timed is the whole document, every row in it.
        let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(
            doc["items"][0]["native"].as_array().map(Vec::len),
            Some(1850)
        );
        let bytes = out.len();
        times.sort_by(f64::total_cmp);
        let median = times[times.len() / 2];
        eprintln!(
            "1850 native rows, {bytes} bytes: median {median:.3} ms a render, {:.0} ns a row, lowest {:.3} ms",
            median * 1e6 / 1850.0,
            times[0]
        );
    }

    #[test]
    fn json_native_lists_every_instruction_last() {
        let out = annotated_view(Format::Json { pretty: false });
        assert!(out.contains(
            r#""loaded_inclusive_cpu_percent":null,"native":[{"function":"main_fn","offset":32,"asm":"call bpf_map_lookup_elem","file":"/src/dir/x.bpf.c","line":107,"samples":3,"percent":30.0},{"function":"main_fn","offset":16,"asm":"mov eax, 0x1","file":"/src/dir/x.bpf.c","line":77,"samples":2,"percent":20.0},"#
        ), "{out}");
        assert!(out.contains(
            r#"{"function":"main_fn","offset":2,"asm":"push rbp","file":null,"line":null,"samples":1,"percent":10.0},"#
        ));
        // Every sampled instruction despite --line-limit=2, and the
        // program's hints know of the JIT code only with --annotate.
        let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
        let native = doc["items"][0]["native"].as_array().unwrap();
        assert_eq!(native.len(), 6);
        let sum: u64 = native.iter().map(|n| n["samples"].as_u64().unwrap()).sum();
        assert_eq!(sum, doc["items"][0]["samples"].as_u64().unwrap());
        assert_eq!(doc["items"][1]["native"], serde_json::json!([]));
        // Without --annotate the document has no native key.
        let plain = render_n(&profile(), &view(Format::Json { pretty: false }));
        assert!(!plain.contains("\"native\""));
    }

    /// The fields of a CSV line (quoted fields may hold commas).
    fn csv_fields(line: &str) -> Vec<String> {
        let mut out = vec![String::new()];
        let mut quoted = false;
        let mut chars = line.chars().peekable();
        while let Some(c) = chars.next() {
            match (c, quoted) {
                ('"', true) if chars.peek() == Some(&'"') => {
                    chars.next();
                    out.last_mut().unwrap().push('"');
                }
                ('"', _) => quoted = !quoted,
                (',', false) => out.push(String::new()),
                (c, _) => out.last_mut().unwrap().push(c),
            }
        }
        out
    }

    #[test]
    fn csv_native_rows_and_columns_only_when_annotated() {
        let out = annotated_view(Format::Csv);
        let mut lines = out.lines();
        let header = lines.next().unwrap();
        // After every other column, the original's and the new ones.
        assert_eq!(
            header,
            format!("{},native_function,native_offset,native_asm", header_text())
        );
        let columns: Vec<&str> = header.split(',').collect();
        let at = |name: &str| columns.iter().position(|c| *c == name).unwrap();
        let rows: Vec<&str> = lines.collect();
        // 98: 2 bpf + 2 kernel + 6 native rows; 7: 1 bpf row.
        assert_eq!(rows.len(), 11);
        for r in &rows {
            assert_eq!(csv_fields(r).len(), columns.len(), "{r}");
        }
        let part = |r: &str, from: &str, to: &str| csv_fields(r)[at(from)..=at(to)].join(",");
        assert_eq!(
            part(rows[4], "program_id", "full_name"),
            "98,tracepoint,sys_exit,fc3eb0ef05553d4b,10,5.0,1.0,19,1.9,9,0.9,9,1,8,1,3,4,0,,native,1,3,30.0,0.3,32,,/src/dir/x.bpf.c,107,,\t\tif (c),,,,,,,,,,,,sys_exit"
        );
        assert_eq!(
            part(rows[4], "jited_address_hex", "native_asm"),
            "0x20,,,0,,,main_fn,32,call bpf_map_lookup_elem"
        );
        assert!(part(rows[0], "program_id", "hotspot_samples").starts_with("98,tracepoint,sys_exit,fc3eb0ef05553d4b,10,5.0,1.0,19,1.9,9,0.9,9,1,8,1,3,4,0,,bpf,1,5"));
        assert!(rows[0].ends_with(",,,"), "{}", rows[0]);
        assert!(
            rows[9].ends_with(",main_fn,49,jmp __x86_return_thunk"),
            "{}",
            rows[9]
        );
        assert_eq!(part(rows[10], "full_name", "full_name"), "small");
        assert!(rows[10].ends_with(",,,"), "{}", rows[10]);
        // Without --annotate the CSV is the original's and the new columns.
        let plain = render_n(&profile(), &view(Format::Csv));
        assert_eq!(plain.lines().next(), Some(header_text().as_str()));
    }

    /// Program 98 with 4 interrupt samples (3 timer, 1 device) while its
    /// line 107 ran, unloaded 0.5 s into a capture Ctrl-C ended after
    /// 1.5 s of 10, under a name longer than the kernel's.
    fn eventful() -> Profile {
        use crate::model::profile::InterruptHotspot;
        let mut p = profile();
        p.duration = 10.0;
        p.telemetry.actual_duration = 1.5;
        p.telemetry.cancelled = true;
        let q = &mut p.programs[0];
        q.full_name = Some(LONG.into());
        q.unloaded_after = Some(0.5);
        q.interrupt_samples = 4;
        let row = |samples, entry: &str| InterruptHotspot {
            samples,
            entry: entry.into(),
            bpf_jited_address: Some(0xffff_ffff_c000_1020),
            bpf_file: Some("/src/dir/x.bpf.c".into()),
            bpf_line: Some(107),
            bpf_source: Some("\t\tif (c)".into()),
            caller_mapped: true,
            ..Default::default()
        };
        q.interrupts = vec![
            row(1, "asm_common_interrupt"),
            row(3, "asm_sysvec_apic_timer_interrupt"),
        ];
        p.counters.interrupt_samples = 4;
        p
    }

    #[test]
    fn interrupts_lifetimes_names_and_early_end_in_text() {
        let p = eventful();
        let out = render_n(&p, &view(Format::Text));
        let wants: Vec<String> = vec![
            "Program 98 (handle_sys_exit_event) was unloaded 0.50 s into the capture; while loaded: CPU% 2.0000, INCL_CPU% 3.8000.".into(),
            "Breakdown of program 98 (handle_sys_exit_event):".into(),
            "Kernel/helper samples for program 98 (handle_sys_exit_event):".into(),
            "Triggered by, program 98 (handle_sys_exit_event):".into(),
            [
                "Interrupts while program 98 (handle_sys_exit_event) ran (not its calls):",
                "",
                "SAMPLES  CPU%    ENTRY                            BPF_FILE  BPF_LINE  BPF_SOURCE",
                "      3  0.2000  asm_sysvec_apic_timer_interrupt  x.bpf.c        107  \t\tif (c)  ",
                "      1  0.0667  asm_common_interrupt             x.bpf.c        107  \t\tif (c)  ",
            ]
            .join("\n"),
        ];
        for want in &wants {
            assert!(out.contains(want.as_str()), "{want}\n---\n{out}");
        }
        assert!(
            out.ends_with("\n\ncapture ended early after 1.50 s of 10 s"),
            "{out}"
        );
        // A line limit of one leaves the device interrupt to an Other row.
        let mut v = view(Format::Text);
        v.opts.line_limit = 1;
        let out = render_n(&p, &v);
        assert!(
            out.contains("      1  0.0667  Other interrupt samples not shown (--line-limit=1)"),
            "{out}"
        );
        // Not cancelled: no such line; no samples at all: still said.
        let mut done = eventful();
        done.telemetry.cancelled = false;
        assert!(!render_n(&done, &view(Format::Text)).contains("ended early"));
        let mut empty = eventful();
        empty.programs.clear();
        assert!(render_n(&empty, &view(Format::Text))
            .ends_with("No BPF JIT samples captured.\ncapture ended early after 1.50 s of 10 s"));
    }

    #[test]
    fn interrupts_and_lifetime_in_json() {
        let mut p = eventful();
        p.program_ids = vec![98];
        p.pid = Some(4242);
        let out = render_n(&p, &view(Format::Json { pretty: false }));
        assert!(out.contains(
            r#""full_name":"handle_sys_exit_event","interrupt_samples":4,"interrupt_cpu_percent":0.2667,"interrupts":[{"samples":3,"sample_percent":75.0,"cpu_percent":0.2,"entry":"asm_sysvec_apic_timer_interrupt","bpf_jited_address":18446744072635813920,"bpf_instruction_offset":null,"bpf_file":"/src/dir/x.bpf.c","bpf_line":107,"bpf_column":null,"bpf_source":"\t\tif (c)","bpf_function":null,"bpf_jited_address_hex":"0xffffffffc0001020"},"#
        ), "{out}");
        assert!(out.contains(
            r#""loaded_after_seconds":null,"unloaded_after_seconds":0.5,"loaded_cpu_percent":2.0,"loaded_inclusive_cpu_percent":3.8}"#
        ), "{out}");
        assert!(
            out.ends_with(r#""interrupt_samples":4,"program_ids":[98],"pid":4242}}"#),
            "{out}"
        );
    }

    /// A BTF name longer than the kernel's 15-byte `name`.
    const LONG: &str = "handle_sys_exit_event";

    #[test]
    fn json_program_ends_with_full_name() {
        let mut p = profile();
        p.programs[0].full_name = Some(LONG.into());
        p.programs[1].full_name = None;
        let v = view(Format::Json { pretty: false });
        let Json::Obj(doc) = to_json(&build(&p, &v.opts), None) else {
            panic!("document is an object")
        };
        let Some((_, Json::Arr(items))) = doc.iter().find(|(k, _)| k == "items") else {
            panic!("no items")
        };
        let program = |i: usize| match &items[i] {
            Json::Obj(fields) => fields.clone(),
            other => panic!("program {i} is {other:?}"),
        };
        let keys = |i: usize| -> Vec<String> {
            program(i)
                .into_iter()
                .map(|(k, _)| k.into_owned())
                .collect()
        };
        let value = |i: usize, key: &str| {
            program(i)
                .into_iter()
                .find(|(k, _)| k == key)
                .map(|(_, v)| v)
        };
        let original = [
            "id",
            "type",
            "name",
            "tag",
            "samples",
            "sample_percent",
            "cpu_percent",
            "inclusive_samples",
            "inclusive_cpu_percent",
            "direct_source_mapped_samples",
            "direct_source_unmapped_samples",
            "under_bpf_caller_source_mapped_samples",
            "under_bpf_caller_source_unmapped_samples",
            "direct_hotspot_samples_omitted_by_limit",
            "under_bpf_hotspot_samples_omitted_by_limit",
            "unaccounted_samples",
            "pinned_paths",
            "hotspots",
            "kernel_samples",
            "kernel_cpu_percent",
            "kernel_hotspots",
            "tasks",
            "cgroups",
            "hints",
            "full_name",
            "interrupt_samples",
            "interrupt_cpu_percent",
            "interrupts",
            "loaded_after_seconds",
            "unloaded_after_seconds",
            "loaded_cpu_percent",
            "loaded_inclusive_cpu_percent",
        ];
        assert_eq!(keys(0), original);
        assert_eq!(keys(1), original);
        assert_eq!(value(0, "name"), Some(Json::from("sys_exit")));
        assert_eq!(value(0, "full_name"), Some(Json::from(LONG)));
        // Without BTF the kernel's name is all there is.
        assert_eq!(value(1, "full_name"), Some(Json::from("small")));
        let out = render_n(&p, &v);
        assert!(out.contains(&format!(
            r#""hints":[],"full_name":"{LONG}","interrupt_samples":0,"#
        )));
    }

    #[test]
    fn csv_new_columns_follow_the_original_ones() {
        let header = header_text();
        let columns: Vec<&str> = header.split(',').collect();
        let at = |name: &str| columns.iter().position(|c| *c == name).unwrap();
        assert!(
            ORIGINAL_CSV_HEADER.ends_with(",bpf_source,full_name"),
            "appended after the original's columns"
        );
        assert_eq!(&columns[at("full_name") + 1..], NEW_CSV_COLUMNS);
        let mut p = profile();
        p.programs[0].full_name = Some(LONG.into());
        p.programs[1].full_name = None;
        p.program_ids = vec![98, 7];
        p.pid = Some(4242);
        let csv = render_n(&p, &view(Format::Csv));
        let mut lines = csv.lines();
        assert_eq!(lines.next(), Some(header.as_str()));
        let rows: Vec<Vec<&str>> = lines.map(|r| r.split(',').collect()).collect();
        let names: Vec<&str> = rows.iter().map(|r| r[at("full_name")]).collect();
        assert_eq!(names, [LONG, LONG, LONG, LONG, "small"]);
        for r in &rows {
            assert_eq!(r.len(), header_len());
            assert_eq!(&r[at("program_ids")..], ["98;7", "4242"]);
        }

        p.programs.clear();
        let csv = render_n(&p, &view(Format::Csv));
        let row = csv.lines().nth(1).expect("telemetry row");
        assert!(row.ends_with(",0,98;7,4242"), "{row}");
        assert_eq!(row.split(',').count(), header_len());
    }
}
