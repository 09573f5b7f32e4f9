//! `brr dump` and `brr dump-compare` output as text, JSON and CSV.

use super::json::{self, obj, Json};
use super::listing::program_base_json;
use super::{csv, dash, table, Format};
use crate::inspect::compare::{Comparison, Value};
use crate::inspect::disasm::{self, CallNames};
use crate::inspect::insn::{self, Slot};
use crate::inspect::native::{InsnBytes, JitFunction, NativeImage, NativeInsn};
use crate::inspect::source::basename;
use crate::model::image::{LineRecord, ProgramImage};
use crate::model::source::DumpContext;

/// `--devmode` results to append.
pub(crate) struct DumpDevmode<'a> {
    /// The directory searched, as given (normalised) or the cwd.
    pub devdir: String,
    pub context: &'a DumpContext,
}

/// What the translated instructions' text needs from outside the image:
/// the kernel symbols their calls go to, and `kernel.kptr_restrict` to say
/// why they cannot be named when the kernel hid their targets.
#[derive(Debug, Clone, Default)]
pub(crate) struct Calls<'a> {
    pub names: Option<&'a CallNames>,
    pub kptr_restrict: Option<u32>,
}

/// One translated slot with the line record that covers it and its text
/// (`None` for the upper half of an `ld_imm64`).
struct Row<'a> {
    slot: Slot,
    rec: Option<&'a LineRecord>,
    insn: Option<String>,
}

fn rows<'a>(image: &'a ProgramImage, calls: &Calls<'_>) -> Vec<Row<'a>> {
    let slots = insn::slots(&image.xlated);
    let rec = insn::match_lines(slots.len(), &image.lines);
    let none = CallNames::default();
    let texts = disasm::listing(&slots, calls.names.unwrap_or(&none));
    slots
        .into_iter()
        .zip(rec)
        .zip(texts)
        .map(|((slot, r), insn)| Row {
            slot,
            rec: r.and_then(|i| image.lines.get(i)),
            insn,
        })
        .collect()
}

type Rows<'a> = [Row<'a>];

/// The warnings a translated listing carries: helper calls whose targets
/// the kernel hid (every one reads IMM 0).
fn warnings(image: &ProgramImage, calls: &Calls<'_>) -> Vec<String> {
    if !disasm::call_targets_hidden(&insn::slots(&image.xlated)) {
        return Vec::new();
    }
    let why = match calls.kptr_restrict {
        Some(2) => "kernel addresses are hidden by kernel.kptr_restrict=2, even from root".into(),
        Some(n) => format!(
            "kernel addresses are hidden from brr, which lacks CAP_SYSLOG (kernel.kptr_restrict={n})"
        ),
        None => "kernel addresses are hidden from brr".into(),
    };
    vec![format!(
        "every helper call reads IMM 0 and cannot be named: {why}"
    )]
}

/// `dump`; with `native` (`--jited`) text and CSV list the native
/// instructions instead of the translated ones, and JSON appends them.
/// Translated instructions are named with `calls`.
pub(crate) fn dump(
    image: &ProgramImage,
    format: Format,
    dev: Option<&DumpDevmode<'_>>,
    native: Option<&NativeImage>,
    calls: &Calls<'_>,
) -> String {
    match (format, native) {
        (Format::Text, Some(n)) => native_text(image, n, dev),
        (Format::Text, None) => dump_text(image, &rows(image, calls), dev, &warnings(image, calls)),
        (Format::Json { pretty }, n) => dump_json(
            image,
            &rows(image, calls),
            dev,
            n,
            pretty,
            warnings(image, calls),
        ),
        (Format::Csv, Some(n)) => native_csv(image, n),
        (Format::Csv, None) => dump_csv(image, &rows(image, calls)),
    }
}

fn header(image: &ProgramImage) -> String {
    let p = &image.program;
    let tag = if p.tag.is_empty() { "-" } else { &p.tag };
    format!(
        "Program {}: type={} name={} tag={tag}",
        p.id, p.prog_type, p.name
    )
}

fn dump_text(
    image: &ProgramImage,
    rows: &Rows<'_>,
    dev: Option<&DumpDevmode<'_>>,
    warnings: &[String],
) -> String {
    let mut out = header(image);
    out.push('\n');
    if rows.is_empty() {
        out.push_str("No translated eBPF instructions available.");
    } else {
        let cells: Vec<Vec<String>> = rows
            .iter()
            .map(
                |Row {
                     slot: s,
                     rec: r,
                     insn,
                 }| {
                    vec![
                        format!("0x{:04x}", s.offset),
                        s.raw_hex(),
                        format!("0x{:02x}", s.opcode),
                        s.dst.to_string(),
                        s.src.to_string(),
                        s.off.to_string(),
                        s.imm.to_string(),
                        dash(r.and_then(|r| r.file.clone())),
                        dash(r.and_then(|r| r.line)),
                        dash(r.and_then(|r| r.source.clone())),
                        dash(insn.clone()),
                    ]
                },
            )
            .collect();
        out.push_str(&table::render(
            &[
                "OFF", "RAW", "OP", "DST", "SRC", "INSN_OFF", "IMM", "FILE", "LINE", "SOURCE",
                "INSN",
            ],
            &cells,
        ));
    }
    for w in warnings {
        out.push_str("\nWarning: ");
        out.push_str(w);
        out.push('.');
    }
    if let Some(dev) = dev {
        out.push('\n');
        out.push_str(&context_text(dev.context));
    }
    out
}

fn dump_json(
    image: &ProgramImage,
    rows: &Rows<'_>,
    dev: Option<&DumpDevmode<'_>>,
    native: Option<&NativeImage>,
    pretty: bool,
    warnings: Vec<String>,
) -> String {
    let p = &image.program;
    let items = rows
        .iter()
        .map(|row| json::fields(slot_fields(row)))
        .collect();
    let ranges = image
        .jit_ranges
        .iter()
        .map(|r| {
            obj([
                ("start", r.start.into()),
                ("end", r.end().into()),
                ("length", r.len.into()),
                ("function_index", r.func_index.into()),
            ])
        })
        .collect();
    let mut meta = vec![
        ("program", program_base_json(p)),
        ("line_info_count", image.lines.len().into()),
        ("jit_ranges", Json::Arr(ranges)),
    ];
    if let Some(dev) = dev {
        meta.push(("source_context", context_json(dev)));
    }
    let warnings = warnings.into_iter().map(Json::Str).collect();
    meta.push(("warnings", Json::Arr(warnings)));
    let mut doc = json::document("program_dump", items, json::fields(meta));
    if let (Some(n), Json::Obj(keys)) = (native, &mut doc) {
        keys.push(("jited_functions".into(), native_json(image, n)));
    }
    json::to_string(&doc, pretty)
}

/// A translated slot's JSON item (and CSV cells), with the line record
/// that covers it and its text last.
fn slot_fields(row: &Row<'_>) -> Vec<(&'static str, Json)> {
    let (s, r) = (&row.slot, row.rec);
    vec![
        ("offset", s.offset.into()),
        ("raw", s.raw_hex().into()),
        ("opcode", s.opcode.into()),
        ("dst_reg", s.dst.into()),
        ("src_reg", s.src.into()),
        ("off", s.off.into()),
        ("imm", s.imm.into()),
        ("file", r.and_then(|r| r.file.clone()).into()),
        ("line", r.and_then(|r| r.line).into()),
        ("column", r.and_then(|r| r.column).into()),
        ("source", r.and_then(|r| r.source.clone()).into()),
        ("insn", row.insn.clone().into()),
    ]
}

/// A native instruction's JSON item (and CSV cells).
fn insn_fields(image: &ProgramImage, i: &NativeInsn) -> Vec<(&'static str, Json)> {
    let r = record(image, i);
    vec![
        ("offset", i.offset.into()),
        ("length", i.bytes.len().into()),
        ("bytes", hex_bytes(&i.bytes).into()),
        ("asm", i.asm.as_str().into()),
        ("target", i.target.clone().into()),
        ("file", r.and_then(|r| r.file.clone()).into()),
        ("line", r.and_then(|r| r.line).into()),
        ("xlated_offset", xlated_offset(r).into()),
    ]
}

/// Raw bytes as `0f 1f 44 00 00`.
fn hex_bytes(bytes: &[u8]) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 3);
    for (i, &b) in bytes.iter().enumerate() {
        if i > 0 {
            out.push(' ');
        }
        out.push(char::from(HEX[usize::from(b >> 4)]));
        out.push(char::from(HEX[usize::from(b & 0xf)]));
    }
    out
}

/// The line record an instruction falls under.
fn record<'a>(image: &'a ProgramImage, insn: &NativeInsn) -> Option<&'a LineRecord> {
    insn.line.and_then(|i| image.lines.get(i))
}

/// Byte offset of the record's first translated instruction, as `offset`
/// in the translated listing.
fn xlated_offset(rec: Option<&LineRecord>) -> Option<u64> {
    rec.map(|r| u64::from(r.insn_off) * 8)
}

fn native_json(image: &ProgramImage, n: &NativeImage) -> Json {
    let function = |f: &JitFunction| {
        let insns = f
            .insns
            .iter()
            .map(|i| json::fields(insn_fields(image, i)))
            .collect();
        obj([
            ("name", f.name.as_str().into()),
            ("address", f.address.into()),
            ("length", f.length.into()),
            ("insns", Json::Arr(insns)),
        ])
    };
    Json::Arr(n.functions.iter().map(function).collect())
}

/// `file:line  source` above the instructions of one line record.
fn record_heading(r: &LineRecord) -> String {
    let mut out = format!("{}:{}", dash(r.file.clone()), dash(r.line));
    if let Some(src) = r.source.as_deref().map(str::trim).filter(|s| !s.is_empty()) {
        out.push_str("  ");
        out.push_str(src);
    }
    out
}

fn native_text(image: &ProgramImage, n: &NativeImage, dev: Option<&DumpDevmode<'_>>) -> String {
    let count = n.functions.len();
    let mut out = vec![
        header(image),
        format!(
            "JIT image: {}, {count} function{}, {} bytes, {} instructions",
            n.arch.name(),
            if count == 1 { "" } else { "s" },
            n.byte_count(),
            n.instruction_count()
        ),
    ];
    let width = n
        .functions
        .iter()
        .flat_map(|f| &f.insns)
        .map(|i| i.bytes.len() * 3)
        .max()
        .unwrap_or(0);
    for f in &n.functions {
        out.push(String::new());
        out.push(match f.address {
            Some(a) => format!("{} at {a:#x}, {} bytes:", f.name, f.length),
            None => format!("{}, {} bytes:", f.name, f.length),
        });
        let mut current = None;
        for i in &f.insns {
            if i.line != current {
                current = i.line;
                if let Some(r) = record(image, i) {
                    out.push(record_heading(r));
                }
            }
            let mut row = format!(
                "  {:>8}  {:<width$}{}",
                format!("+{:#x}", i.offset),
                hex_bytes(&i.bytes),
                i.asm
            );
            // A register call names its destination beside the text.
            if let Some(t) = i.target.as_deref().filter(|t| !i.asm.ends_with(t)) {
                row.push_str("  ; ");
                row.push_str(t);
            }
            out.push(row);
        }
    }
    if let Some(dev) = dev {
        out.push(String::new());
        out.push(context_text(dev.context));
    }
    out.join("\n")
}

/// One row per native instruction: the program and function it belongs
/// to, then its JSON item's fields.
fn native_csv(image: &ProgramImage, n: &NativeImage) -> String {
    let p = &image.program;
    let row = |f: &JitFunction, i: &NativeInsn| {
        let mut row = vec![
            ("program_id", p.id.into()),
            ("program_name", p.name.as_str().into()),
            ("function", f.name.as_str().into()),
            ("function_address", f.address.into()),
        ];
        row.extend(insn_fields(image, i));
        row
    };
    let placeholder = NativeInsn {
        offset: 0,
        bytes: InsnBytes::new(&[]),
        asm: String::new(),
        target: None,
        line: None,
    };
    let function = JitFunction {
        name: String::new(),
        index: 0,
        address: None,
        length: 0,
        insns: Vec::new(),
    };
    let records = n
        .functions
        .iter()
        .flat_map(|f| f.insns.iter().map(move |i| (f, i)))
        .map(|(f, i)| row(f, i));
    csv::from_fields(&row(&function, &placeholder), records)
}

/// One row per translated slot: the program, its line-info count and JIT
/// ranges, then the slot's JSON item's fields.
fn dump_csv(image: &ProgramImage, rows: &Rows<'_>) -> String {
    let p = &image.program;
    let ranges: Vec<String> = image
        .jit_ranges
        .iter()
        .map(|r| format!("{}:0x{:x}-0x{:x}", r.func_index, r.start, r.end()))
        .collect();
    let ranges = ranges.join(";");
    let row = |r: &Row<'_>| {
        let mut row = vec![
            ("program_id", p.id.into()),
            ("program_type", p.prog_type.as_str().into()),
            ("program_name", p.name.as_str().into()),
            ("program_tag", p.tag.as_str().into()),
            ("line_info_count", image.lines.len().into()),
            ("jit_ranges", ranges.as_str().into()),
        ];
        row.extend(slot_fields(r));
        row
    };
    let placeholder = row(&Row {
        slot: Slot::from_bytes(0, [0; 8]),
        rec: None,
        insn: None,
    });
    csv::from_fields(&placeholder, rows.iter().map(row))
}

fn context_text(ctx: &DumpContext) -> String {
    context_report(ctx, "Source context:")
}

/// Mismatch warnings, then `heading` and the KIND/FILE/LINE/SOURCE table
/// (or `heading` + " no matching source context found.").
pub(crate) fn context_report(ctx: &DumpContext, heading: &str) -> String {
    let mut out = Vec::new();
    if !ctx.mismatches.is_empty() {
        out.push(format!(
            "Warning: {} BTF source snippet(s) differ from resolved files.",
            ctx.mismatches.len()
        ));
        for m in ctx.mismatches.iter().take(5) {
            out.push(format!(
                "source mismatch file={} line={} resolved={}",
                basename(&m.file),
                m.line,
                m.resolved_path
            ));
        }
    }
    if ctx.rows.is_empty() {
        out.push(format!("{heading} no matching source context found."));
    } else {
        out.push(heading.to_string());
        let cells: Vec<Vec<String>> = ctx
            .rows
            .iter()
            .map(|r| {
                vec![
                    r.kind.to_string(),
                    basename(&r.file).to_string(),
                    r.line.to_string(),
                    r.source
                        .clone()
                        .filter(|s| !s.is_empty())
                        .unwrap_or_else(|| "-".into()),
                ]
            })
            .collect();
        out.push(table::render(&["KIND", "FILE", "LINE", "SOURCE"], &cells));
    }
    out.join("\n")
}

pub(crate) fn context_json(dev: &DumpDevmode<'_>) -> Json {
    let ctx = dev.context;
    let names = |v: &[String]| Json::Arr(v.iter().map(|s| Json::from(s.as_str())).collect());
    obj([
        ("enabled", true.into()),
        ("devdir", dev.devdir.as_str().into()),
        ("unresolved_files", names(&ctx.unresolved_files)),
        ("ambiguous_files", names(&ctx.ambiguous_files)),
        (
            "source_mismatches",
            Json::Arr(
                ctx.mismatches
                    .iter()
                    .map(|m| {
                        obj([
                            ("file", m.file.as_str().into()),
                            ("line", m.line.into()),
                            ("btf_source", m.btf_source.as_str().into()),
                            ("file_source", m.file_source.as_str().into()),
                            ("resolved_path", m.resolved_path.as_str().into()),
                        ])
                    })
                    .collect(),
            ),
        ),
        (
            "rows",
            Json::Arr(
                ctx.rows
                    .iter()
                    .map(|r| {
                        obj([
                            ("kind", r.kind.into()),
                            ("file", r.file.as_str().into()),
                            ("line", r.line.into()),
                            ("source", r.source.clone().unwrap_or_default().into()),
                            ("resolved_path", r.resolved_path.clone().into()),
                        ])
                    })
                    .collect(),
            ),
        ),
    ])
}

fn value_text(v: &Option<Value>) -> String {
    match v {
        None => "-".to_string(),
        Some(Value::Text(t)) => t.clone(),
        Some(Value::Int(i)) => i.to_string(),
    }
}

fn value_json(v: &Option<Value>) -> Json {
    match v {
        None => Json::Null,
        Some(Value::Text(t)) => t.as_str().into(),
        Some(Value::Int(i)) => (*i).into(),
    }
}

pub(crate) fn compare(c: &Comparison, format: Format) -> String {
    match format {
        Format::Text => compare_text(c),
        Format::Json { pretty } => compare_json(c, pretty),
        Format::Csv => compare_csv(c),
    }
}

fn compare_text(c: &Comparison) -> String {
    let mut out = vec![format!(
        "{} program={} brr_slots={} brr_visible={} bpftool={} lddw_slots={} source_rows={}",
        if c.passed() { "PASS" } else { "FAIL" },
        c.program_id,
        c.brr_slots,
        c.brr_visible,
        c.bpftool_rows,
        c.lddw_slots,
        c.source_rows
    )];
    for m in c.offsets.iter().take(5) {
        out.push(format!(
            "offset mismatch position={} expected_index={} actual_index={}",
            m.position,
            dash(m.expected),
            dash(m.actual)
        ));
    }
    for m in c.sources.iter().take(5) {
        out.push(format!(
            "source mismatch index={} field={} expected={} actual={}",
            m.index,
            m.field,
            value_text(&m.expected),
            value_text(&m.actual)
        ));
    }
    if let Some(note) = escape_quirk_note(c.escape_quirk_rows) {
        out.push(note);
    }
    out.join("\n")
}

/// Why lines that bpftool's JSON shows differently still count as matches.
fn escape_quirk_note(rows: usize) -> Option<String> {
    let (lines, verb) = match rows {
        0 => return None,
        1 => ("source line", "matches"),
        _ => ("source lines", "match"),
    };
    Some(format!(
        "note: {rows} {lines} {verb} only with bpftool's JSON escaping undone (bpftool writes each backslash in source text as \\n)"
    ))
}

/// The comparison's figures, first in its JSON item and its CSV row.
fn compare_fields(c: &Comparison) -> Vec<(&'static str, Json)> {
    vec![
        ("program_id", c.program_id.into()),
        ("passed", c.passed().into()),
        ("brr_instruction_slots", c.brr_slots.into()),
        ("brr_visible_slots", c.brr_visible.into()),
        ("bpftool_instruction_count", c.bpftool_rows.into()),
        ("lddw_slots", c.lddw_slots.into()),
        ("source_rows_compared", c.source_rows.into()),
    ]
}

fn compare_json(c: &Comparison, pretty: bool) -> String {
    let mut item = compare_fields(c);
    item.extend([
        (
            "offset_mismatches",
            Json::Arr(
                c.offsets
                    .iter()
                    .map(|m| {
                        obj([
                            ("position", m.position.into()),
                            ("expected_index", m.expected.into()),
                            ("actual_index", m.actual.into()),
                        ])
                    })
                    .collect(),
            ),
        ),
        (
            "source_mismatches",
            Json::Arr(
                c.sources
                    .iter()
                    .map(|m| {
                        obj([
                            ("index", m.index.into()),
                            ("field", m.field.into()),
                            ("expected", value_json(&m.expected)),
                            ("actual", value_json(&m.actual)),
                        ])
                    })
                    .collect(),
            ),
        ),
        ("bpftool_escape_quirk_rows", c.escape_quirk_rows.into()),
    ]);
    let item = json::fields(item);
    let meta = obj([
        ("bpftool_available", true.into()),
        (
            "bpftool_source",
            "bpftool prog dump xlated id PROG_ID linum".into(),
        ),
        (
            "normalization",
            "brr lddw second slots are omitted before comparing bpftool rows".into(),
        ),
        (
            "bpftool_escape_quirk",
            "bpftool's JSON writes each backslash in source text as \\n; lines that match with brr's text escaped the same way count as matches (bpftool_escape_quirk_rows)".into(),
        ),
    ]);
    json::to_string(&json::document("dump_compare", vec![item], meta), pretty)
}

/// The comparison's figures, how many mismatches of each kind its JSON
/// item lists, and how many lines matched only with bpftool's escaping
/// undone.
fn compare_csv(c: &Comparison) -> String {
    let mut row = compare_fields(c);
    row.extend([
        ("offset_mismatch_count", c.offsets.len().into()),
        ("source_mismatch_count", c.sources.len().into()),
        ("bpftool_escape_quirk_rows", c.escape_quirk_rows.into()),
    ]);
    csv::from_fields(&row, std::iter::once(row.clone()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Program;

    fn image(slots: &[[u8; 8]]) -> ProgramImage {
        ProgramImage {
            program: Program {
                id: 7,
                prog_type: "kprobe".into(),
                name: "p".into(),
                ..Default::default()
            },
            xlated: slots.concat(),
            ..Default::default()
        }
    }

    const MOV: [u8; 8] = [0xb7, 0, 0, 0, 0, 0, 0, 0];
    const HIDDEN_CALL: [u8; 8] = [0x85, 0, 0, 0, 0, 0, 0, 0];
    const EXIT: [u8; 8] = [0x95, 0, 0, 0, 0, 0, 0, 0];

    #[test]
    fn every_format_carries_the_instruction_text() {
        let img = image(&[MOV, [0x85, 0, 0, 0, 1, 0, 0, 0], EXIT]);
        let calls = Calls::default();
        let text = dump(&img, Format::Text, None, None, &calls);
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[1].trim_end().ends_with("SOURCE  INSN"), "{text}");
        assert!(lines[2].trim_end().ends_with("  r0 = 0"), "{text}");
        assert!(lines[3]
            .trim_end()
            .ends_with("  call bpf_map_lookup_elem#1"));
        assert!(!text.contains("Warning"));
        let csv = dump(&img, Format::Csv, None, None, &calls);
        assert!(csv.lines().nth(3).unwrap().ends_with(",,,,,exit"), "{csv}");
        let json = dump(&img, Format::Json { pretty: false }, None, None, &calls);
        assert!(json.contains(r#""source":null,"insn":"exit"}"#), "{json}");
        assert!(
            json.ends_with(r#""jit_ranges":[],"warnings":[]}}"#),
            "{json}"
        );
    }

    #[test]
    fn hidden_call_targets_are_explained() {
        let img = image(&[MOV, HIDDEN_CALL, EXIT]);
        let said = |kptr_restrict| {
            let calls = Calls {
                names: None,
                kptr_restrict,
            };
            let text = dump(&img, Format::Text, None, None, &calls);
            assert!(text.contains("  call ? (address hidden)"), "{text}");
            let json = dump(&img, Format::Json { pretty: false }, None, None, &calls);
            let last = text.lines().last().unwrap_or_default().to_string();
            let w = warnings(&img, &calls);
            assert!(
                json.contains(&format!(r#""warnings":["{}"]"#, w[0])),
                "{json}"
            );
            last
        };
        assert_eq!(
            said(Some(2)),
            "Warning: every helper call reads IMM 0 and cannot be named: kernel addresses are hidden by kernel.kptr_restrict=2, even from root."
        );
        assert_eq!(
            said(Some(1)),
            "Warning: every helper call reads IMM 0 and cannot be named: kernel addresses are hidden from brr, which lacks CAP_SYSLOG (kernel.kptr_restrict=1)."
        );
        assert!(said(None).ends_with("cannot be named: kernel addresses are hidden from brr."));
        // No call, or calls with their targets: nothing to say.
        assert!(warnings(&image(&[MOV, EXIT]), &Calls::default()).is_empty());
    }
}
