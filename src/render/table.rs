//! Fixed-column text tables: two-space gaps, every cell padded, numeric
//! columns right-aligned, the `ID` header right-aligned.

/// Headers whose body cells are right-aligned.
const NUMERIC: &[&str] = &[
    "ID",
    "PID",
    "CGROUP_ID",
    "KEY",
    "VALUE",
    "MAX_ENTRIES",
    "BTF_ID",
    "PROG_ID",
    "TARGET_OBJ_ID",
    "TARGET_BTF_ID",
    "RUN_CNT",
    "RUN_TIME_NS",
    "XLATED_BYTES",
    "JITED_BYTES",
    "XLAT_B",
    "JIT_B",
    "CPU%",
    "EXECS/s",
    "AVG_NS",
    "CUMUL_AVG_NS",
    "NS_PER/s",
    "EXECS_DELTA",
    "TOTAL_NS",
    "EXECS_TOTAL",
    "CUMUL_NS",
    "SIZE",
    "LINE",
    "DST",
    "SRC",
    "INSN_OFF",
    "IMM",
    "SAMPLES",
    "KERNEL_SAMPLES",
    "KERNEL_CPU%",
    "BPF_LINE",
    "SYMBOL_OFF",
    "COLUMN",
];

pub(crate) fn is_numeric(header: &str) -> bool {
    NUMERIC.contains(&header)
}

fn pad(cell: &str, width: usize, right: bool, out: &mut String) {
    let len = cell.chars().count();
    let fill = width.saturating_sub(len);
    if right {
        out.extend(std::iter::repeat_n(' ', fill));
        out.push_str(cell);
    } else {
        out.push_str(cell);
        out.extend(std::iter::repeat_n(' ', fill));
    }
}

/// Render a header and rows with the listing alignment rules. Returns the
/// lines joined by `\n`, no trailing newline.
pub(crate) fn render(headers: &[&str], rows: &[Vec<String>]) -> String {
    let align: Vec<(bool, bool)> = headers
        .iter()
        .map(|h| (*h == "ID", is_numeric(h)))
        .collect();
    aligned(headers, &align, rows)
}

/// A table where each column says whether its header and its cells are
/// right-aligned (`(header, cells)`). Every cell is padded to the column
/// width (in code points); a missing cell is empty.
pub(crate) fn aligned(headers: &[&str], align: &[(bool, bool)], rows: &[Vec<String>]) -> String {
    let mut widths: Vec<usize> = headers.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let right = |i: usize| align.get(i).copied().unwrap_or((false, false));
    let mut out = String::new();
    for (i, h) in headers.iter().enumerate() {
        if i > 0 {
            out.push_str("  ");
        }
        pad(h, widths[i], right(i).0, &mut out);
    }
    for row in rows {
        out.push('\n');
        for (i, &width) in widths.iter().enumerate() {
            if i > 0 {
                out.push_str("  ");
            }
            let cell = row.get(i).map(String::as_str).unwrap_or("");
            pad(cell, width, right(i).1, &mut out);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_matches_listing_rules() {
        let rows = vec![
            vec!["632".into(), "cgroup_skb".into(), "144".into(), "-".into()],
            vec![
                "18729".into(),
                "flow_dissector".into(),
                "16".into(),
                "/a,/b".into(),
            ],
        ];
        let t = render(&["ID", "TYPE", "XLATED_BYTES", "PINNED"], &rows);
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(lines[0], "   ID  TYPE            XLATED_BYTES  PINNED");
        assert_eq!(lines[1], "  632  cgroup_skb               144  -     ");
        assert_eq!(lines[2], "18729  flow_dissector            16  /a,/b ");
    }

    #[test]
    fn widths_count_code_points() {
        let rows = vec![vec!["café\t".into()]];
        let t = render(&["SOURCE"], &rows);
        assert_eq!(t, "SOURCE\ncafé\t ");
    }
}
