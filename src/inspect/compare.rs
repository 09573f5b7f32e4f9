//! `dump-compare`: brr's slots and line mapping against bpftool's rows
//! (`bpftool prog dump xlated id N linum`, text and JSON). bpftool prints an `ld_imm64` as one row, so brr's second
//! halves are left out before comparing; source text is compared without
//! surrounding whitespace (bpftool strips indentation).

use super::insn::{self, Slot};
use crate::model::image::LineRecord;

/// One bpftool row: its instruction index and line fields.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ToolRow {
    pub index: u64,
    pub file: Option<String>,
    pub line: Option<i64>,
    pub column: Option<i64>,
    pub source: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OffsetMismatch {
    pub position: usize,
    pub expected: Option<u64>,
    pub actual: Option<u64>,
}

/// A compared value: text or integer, shown unstripped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    Text(String),
    Int(i64),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceMismatch {
    pub index: u64,
    pub field: &'static str,
    pub expected: Option<Value>,
    pub actual: Option<Value>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Comparison {
    pub program_id: u32,
    pub brr_slots: usize,
    pub brr_visible: usize,
    pub bpftool_rows: usize,
    pub lddw_slots: usize,
    pub source_rows: usize,
    pub offsets: Vec<OffsetMismatch>,
    pub sources: Vec<SourceMismatch>,
}

impl Comparison {
    pub fn passed(&self) -> bool {
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

fn same(field: &str, expected: &Option<Value>, actual: &Option<Value>) -> bool {
    if field != "source" {
        return expected == actual;
    }
    match (expected, actual) {
        (Some(Value::Text(a)), Some(Value::Text(b))) => a.trim() == b.trim(),
        _ => blank(expected) && blank(actual),
    }
}

pub fn compare(
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
            if expected.is_some() && !same(field, &expected, &actual) {
                sources.push(SourceMismatch {
                    index: t.index,
                    field,
                    expected,
                    actual,
                });
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
