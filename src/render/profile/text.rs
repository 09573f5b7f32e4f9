//! The text form of a profile: the capture lines, the program table, each
//! program's hotspot, kernel, interrupt and payer tables, `--annotate`'s
//! instruction table and the hints.

use super::View;
use crate::inspect::drilldown::largest_remainder;
use crate::inspect::source::basename;
use crate::model::profile::{Hint, KernelHotspot, Payer};
use crate::model::report::{Annotation, Figured, NativeRow, Other, Payers, ProgramReport, Report};
use crate::model::source::SourceContexts;
use crate::model::{Container, Pod};
use crate::render::{dash, dash_join, dump, num, table};

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

pub(super) fn text(report: &Report, view: &View, ctx: Option<&SourceContexts>) -> String {
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
/// by `--line-limit` with an Other row. `%THIS` is of its direct samples,
/// all of them, so the column adds up to 100.00.
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
    let shown = a.shown_rows();
    // %THIS is of the program's direct samples, the Other row's too, and
    // the column adds up to exactly 100.00: the shares are split by the
    // largest remainder, as the drilldown splits its own.
    let mut counts: Vec<u64> = shown.iter().map(|r| r.samples).collect();
    counts.extend(a.other.map(|o| o.samples));
    let direct: u64 = counts.iter().sum();
    let hundredths = largest_remainder(10_000, &counts, direct);
    let this = |i: usize| {
        let h = hundredths.get(i).copied().unwrap_or(0);
        format!("{}.{:02}", h / 100, h % 100)
    };
    let mut rows: Vec<Vec<String>> = shown
        .iter()
        .enumerate()
        .map(|(i, r)| {
            vec![
                r.samples.to_string(),
                this(i),
                dash(r.function.as_deref()),
                r.offset.map_or_else(|| "-".into(), |o| format!("+{o:#x}")),
                instruction_cell(r),
                file_line(r, wide),
            ]
        })
        .collect();
    if let Some(o) = a.other {
        rows.push(vec![
            o.samples.to_string(),
            this(shown.len()),
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

fn program_table(progs: &[ProgramReport], view: &View) -> String {
    let kernel = progs.iter().any(|p| p.kernel_samples > 0);
    // Tied only with kernel callchains, for every program or none.
    let dispatch = progs.iter().any(|p| p.dispatch_cpu_percent.is_some());
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
    if dispatch {
        headers.push("DISPATCH_CPU%");
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
            if dispatch {
                r.push(num::percent4(p.dispatch_cpu_percent.unwrap_or(0.0)));
            }
            if view.extended {
                r.push(if p.tag.is_empty() {
                    "-".into()
                } else {
                    p.tag.clone()
                });
                r.push(dash_join(&p.pinned_paths, ","));
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
