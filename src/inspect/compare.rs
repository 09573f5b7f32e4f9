//! `dump-compare`: brr's slots and line mapping against bpftool's rows
//! (`bpftool prog dump xlated id N linum`, text and JSON). bpftool prints an `ld_imm64` as one row, so brr's second
//! halves are left out before comparing; source text is compared without
//! surrounding whitespace (bpftool strips indentation).
//!
//! bpftool's JSON writer escapes a backslash as `\n` (its `jsonw_puts`
//! maps `'\\'` to the newline escape), so a source line holding `'\0'`
//! comes back as `'<newline>0'`. A line that matches once brr's text is
//! written the same way is a match, counted apart so the report can say
//! so: a bpftool quirk never turns into a false FAIL.

use super::insn::{self, Slot};
use crate::model::image::LineRecord;

/// One bpftool row: its instruction index and line fields.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct ToolRow {
    pub index: u64,
    pub file: Option<String>,
    pub line: Option<i64>,
    pub column: Option<i64>,
    pub source: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct OffsetMismatch {
    pub position: usize,
    pub expected: Option<u64>,
    pub actual: Option<u64>,
}

/// A compared value: text or integer, shown unstripped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Value {
    Text(String),
    Int(i64),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SourceMismatch {
    pub index: u64,
    pub field: &'static str,
    pub expected: Option<Value>,
    pub actual: Option<Value>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Comparison {
    pub program_id: u32,
    pub brr_slots: usize,
    pub brr_visible: usize,
    pub bpftool_rows: usize,
    pub lddw_slots: usize,
    pub source_rows: usize,
    pub offsets: Vec<OffsetMismatch>,
    pub sources: Vec<SourceMismatch>,
    /// Source lines that match only with bpftool's backslash escaping
    /// applied to brr's text.
    pub escape_quirk_rows: usize,
}

impl Comparison {
    pub(crate) fn passed(&self) -> bool {
        self.offsets.is_empty() && self.sources.is_empty()
    }
}

fn blank(v: &Option<Value>) -> bool {
    match v {
        None => true,
        Some(Value::Text(t)) => t.trim().is_empty(),
        Some(Value::Int(_)) => false,
    }
}

/// How two values compare: equal, equal only once brr's text is escaped
/// as bpftool's JSON writer escapes it, or different.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Match {
    Same,
    SameAsBpftoolEscapes,
    Differs,
}

/// `text` as bpftool's JSON comes back after decoding: every backslash
/// turned into a newline.
fn as_bpftool_escapes(text: &str) -> String {
    text.replace('\\', "\n")
}

fn same(field: &str, expected: &Option<Value>, actual: &Option<Value>) -> Match {
    let plain = if field != "source" {
        expected == actual
    } else {
        match (expected, actual) {
            (Some(Value::Text(theirs)), Some(Value::Text(ours))) => {
                if theirs.trim() == ours.trim() {
                    true
                } else if ours.contains('\\') && theirs.trim() == as_bpftool_escapes(ours).trim() {
                    return Match::SameAsBpftoolEscapes;
                } else {
                    false
                }
            }
            _ => blank(expected) && blank(actual),
        }
    };
    if plain {
        Match::Same
    } else {
        Match::Differs
    }
}

pub(crate) fn compare(
    program_id: u32,
    slots: &[Slot],
    lines: &[LineRecord],
    tool: &[ToolRow],
) -> Comparison {
    let second = insn::second_halves(slots);
    let rec = insn::match_lines(slots.len(), lines);
    let visible: Vec<usize> = (0..slots.len()).filter(|&i| !second[i]).collect();
    let mut offsets = Vec::new();
    for p in 0..visible.len().max(tool.len()) {
        let expected = tool.get(p).map(|t| t.index);
        let actual = visible.get(p).map(|&i| slots[i].index() as u64);
        if expected != actual {
            offsets.push(OffsetMismatch {
                position: p,
                expected,
                actual,
            });
        }
    }
    let mut sources = Vec::new();
    let mut source_rows = 0;
    let mut escape_quirk_rows = 0;
    for (p, t) in tool.iter().enumerate().take(visible.len()) {
        let theirs = [
            ("file", t.file.clone().map(Value::Text)),
            ("line", t.line.map(Value::Int)),
            ("column", t.column.map(Value::Int)),
            ("source", t.source.clone().map(Value::Text)),
        ];
        if theirs.iter().all(|(_, v)| v.is_none()) {
            continue;
        }
        source_rows += 1;
        let r = rec[visible[p]].map(|i| &lines[i]);
        let ours = [
            r.and_then(|r| r.file.clone()).map(Value::Text),
            r.and_then(|r| r.line).map(|v| Value::Int(v as i64)),
            r.and_then(|r| r.column).map(|v| Value::Int(v as i64)),
            r.and_then(|r| r.source.clone()).map(Value::Text),
        ];
        for ((field, expected), actual) in theirs.into_iter().zip(ours) {
            if expected.is_none() {
                continue;
            }
            match same(field, &expected, &actual) {
                Match::Same => {}
                Match::SameAsBpftoolEscapes => escape_quirk_rows += 1,
                Match::Differs => sources.push(SourceMismatch {
                    index: t.index,
                    field,
                    expected,
                    actual,
                }),
            }
        }
    }
    Comparison {
        program_id,
        brr_slots: slots.len(),
        brr_visible: visible.len(),
        bpftool_rows: tool.len(),
        lddw_slots: slots.len() - visible.len(),
        source_rows,
        offsets,
        sources,
        escape_quirk_rows,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn img(ops: &[u8]) -> Vec<Slot> {
        let bytes: Vec<u8> = ops.iter().flat_map(|&o| [o, 0, 0, 0, 0, 0, 0, 0]).collect();
        insn::slots(&bytes)
    }

    fn rec(insn_off: u32, line: u32, col: u32, src: &str) -> LineRecord {
        LineRecord {
            insn_off,
            file: Some("/p.c".into()),
            line: Some(line),
            column: Some(col),
            source: (!src.is_empty()).then(|| src.to_string()),
            jited_addr: None,
        }
    }

    fn row(index: u64, line: i64, src: &str) -> ToolRow {
        ToolRow {
            index,
            file: Some("/p.c".into()),
            line: Some(line),
            column: None,
            source: Some(src.into()),
        }
    }

    #[test]
    fn indented_program_passes() {
        let slots = img(&[0xb7, 0x18, 0x00, 0x95]);
        let lines = [
            rec(0, 1, 1, "    int x = 0;"),
            rec(1, 0, 0, ""),
            rec(3, 2, 5, "\treturn x;"),
        ];
        let tool = [
            row(0, 1, "int x = 0;"),
            ToolRow {
                index: 1,
                file: Some("/p.c".into()),
                line: None,
                column: None,
                source: Some(String::new()),
            },
            row(3, 2, "return x;"),
        ];
        let c = compare(7, &slots, &lines, &tool);
        assert!(c.passed(), "{c:?}");
        assert_eq!(
            (
                c.brr_slots,
                c.brr_visible,
                c.bpftool_rows,
                c.lddw_slots,
                c.source_rows
            ),
            (4, 3, 3, 1, 3)
        );
    }

    /// execsnoop's `if (c == '\0')` as bpftool's JSON returns it: the
    /// backslash written as `\n`, so decoded as a newline.
    #[test]
    fn bpftools_backslash_escaping_is_not_a_mismatch() {
        let slots = img(&[0xb7, 0xb7, 0xb7, 0x95]);
        let lines = [
            rec(0, 10, 5, "    if (c == '\\0')"),
            rec(1, 11, 9, "        return \"a\\tb\";"),
            rec(2, 12, 1, "#define X \\"),
            rec(3, 13, 1, "a\\b"),
        ];
        let decoded = |raw: &str| -> String { serde_json::from_str(raw).unwrap() };
        let tool = [
            row(0, 10, &decoded(r#""if (c == '\n0')""#)),
            row(1, 11, &decoded(r#""return \"a\ntb\";""#)),
            // A trailing backslash becomes trailing whitespace.
            row(2, 12, &decoded(r##""#define X \n""##)),
            // A real difference stays one, escaped or not.
            row(3, 13, "a\nc"),
        ];
        assert_eq!(tool[0].source.as_deref(), Some("if (c == '\n0')"));
        let c = compare(7, &slots, &lines, &tool);
        assert_eq!(c.escape_quirk_rows, 3, "{c:?}");
        assert_eq!(c.sources.len(), 1, "{c:?}");
        assert_eq!(c.sources[0].index, 3);
        assert!(!c.passed());
        let c = compare(7, &slots[..3], &lines[..3], &tool[..3]);
        assert!(c.passed(), "{c:?}");
        assert_eq!(c.escape_quirk_rows, 3);
        // Text without a backslash is never matched through the quirk.
        let plain = [rec(0, 1, 1, "a b")];
        let c = compare(7, &slots[..1], &plain, &[row(0, 1, "a\nb")]);
        assert_eq!((c.escape_quirk_rows, c.sources.len()), (0, 1));
    }

    #[test]
    fn mismatches_are_reported() {
        let slots = img(&[0xb7, 0x18, 0x00, 0x95]);
        let lines = [rec(0, 1, 1, "a"), rec(3, 2, 5, "b")];
        let tool = [row(0, 1, "a"), row(2, 9, " b "), row(4, 2, "b")];
        let c = compare(7, &slots, &lines, &tool);
        assert!(!c.passed());
        assert_eq!(
            c.offsets,
            vec![
                OffsetMismatch {
                    position: 1,
                    expected: Some(2),
                    actual: Some(1)
                },
                OffsetMismatch {
                    position: 2,
                    expected: Some(4),
                    actual: Some(3)
                }
            ]
        );
        let fields: Vec<&str> = c.sources.iter().map(|m| m.field).collect();
        assert_eq!(fields, ["line", "source"]);
        assert_eq!(c.sources[0].expected, Some(Value::Int(9)));
        assert_eq!(c.sources[1].actual, Some(Value::Text("a".into())));
        assert_eq!(c.source_rows, 3);
    }
}
