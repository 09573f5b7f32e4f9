//! `brr top --textmode`: the `BRR ACTIVITY` snapshot and the `BRR INSPECT`
//! drilldown table (TUI spec §5).

use crate::activity::ActivityRow;
use crate::inspect::drilldown::{Drilldown, ViewState};
use crate::render::listing::activity_table;

/// Python `format(x, "g")`: 6 significant digits, fixed notation for
/// decimal exponents in [-4, 6), trailing zeros dropped.
pub fn fmt_g(x: f64) -> String {
    if x == 0.0 {
        return "0".into();
    }
    if !x.is_finite() {
        return if x.is_nan() {
            "nan"
        } else if x > 0.0 {
            "inf"
        } else {
            "-inf"
        }
        .into();
    }
    let sci = format!("{x:.5e}");
    let (mant, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let trim = |s: String| {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s
        }
    };
    if (-4..6).contains(&exp) {
        let decimals = (5 - exp).max(0) as usize;
        trim(format!("{x:.decimals$}"))
    } else {
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{}e{sign}{:02}", trim(mant.to_string()), exp.abs())
    }
}

/// Digits grouped by three with `,`.
pub fn commas(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A table where each column says whether its header and its cells are
/// right-aligned. Every cell is padded to the column width.
fn grid(headers: &[&str], align: &[(bool, bool)], rows: &[Vec<String>]) -> String {
    let mut widths: Vec<usize> = headers.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (w, c) in widths.iter_mut().zip(row) {
            *w = (*w).max(c.chars().count());
        }
    }
    let line = |cells: &mut dyn Iterator<Item = (&str, bool)>| {
        let mut out = String::new();
        for (i, (c, right)) in cells.enumerate() {
            if i > 0 {
                out.push_str("  ");
            }
            let fill = " ".repeat(widths[i].saturating_sub(c.chars().count()));
            if right {
                out.push_str(&fill);
                out.push_str(c);
            } else {
                out.push_str(c);
                out.push_str(&fill);
            }
        }
        out
    };
    let mut out = vec![line(&mut headers.iter().zip(align).map(|(h, a)| (*h, a.0)))];
    for row in rows {
        out.push(line(
            &mut row.iter().zip(align).map(|(c, a)| (c.as_str(), a.1)),
        ));
    }
    out.join("\n")
}

/// The `BRR ACTIVITY` section. `measured` is the window in seconds.
pub fn activity(
    rows: &[ActivityRow],
    delay: f64,
    measured: f64,
    cumulative: bool,
    extended: bool,
) -> String {
    let head = format!("BRR ACTIVITY duration={}", fmt_g(delay));
    if rows.is_empty() {
        return format!("{head}\nNo active eBPF program runtime deltas observed.");
    }
    let (headers, cells) = activity_table(rows, measured, cumulative, extended, commas);
    let align: Vec<(bool, bool)> = headers
        .iter()
        .map(|h| {
            let right = !matches!(*h, "TYPE" | "NAME" | "TAG" | "PINNED");
            (right, right)
        })
        .collect();
    format!("{head}\n{}", grid(&headers, &align, &cells))
}

/// The `BRR INSPECT` section.
pub fn inspect(dd: &Drilldown, collapse: bool) -> String {
    let mut out = vec![format!(
        "BRR INSPECT program={} name={} mode={} profiled={} instructions={}",
        dd.program_id,
        dd.name,
        dd.mode.name(),
        if dd.profiled() { "yes" } else { "no" },
        dd.disasm.name()
    )];
    out.extend(dd.header_lines());
    let lines = dd.lines(&ViewState::textmode(dd, collapse));
    if lines.is_empty() {
        out.push("No source-line metadata or translated eBPF instructions available.".into());
    } else {
        let cells: Vec<Vec<String>> = lines
            .into_iter()
            .map(|l| vec![l.this, l.samples, l.code])
            .collect();
        out.push(grid(
            &["%THIS", "SAMPLES", "CODE"],
            &[(false, false), (false, true), (false, false)],
            &cells,
        ));
    }
    out.join("\n")
}

/// `--profile-top` with no program to profile.
pub fn no_program() -> String {
    "BRR PROFILE program=-\nNo program selected for profiling.".into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_g() {
        for (x, s) in [
            (1.0, "1"),
            (0.5, "0.5"),
            (2.5, "2.5"),
            (0.0001, "0.0001"),
            (1e-5, "1e-05"),
            (123456.7, "123457"),
            (1234567.0, "1.23457e+06"),
            (10.0, "10"),
            (100000.0, "100000"),
            (1e6, "1e+06"),
        ] {
            assert_eq!(fmt_g(x), s, "{x}");
        }
    }

    #[test]
    fn grouping() {
        assert_eq!(commas(0), "0");
        assert_eq!(commas(997), "997");
        assert_eq!(commas(1509314), "1,509,314");
        assert_eq!(commas(100000), "100,000");
    }

    #[test]
    fn activity_layout() {
        use crate::model::Program;
        let p = |id, name: &str, cnt, ns| Program {
            id,
            prog_type: "tracepoint".into(),
            name: name.into(),
            xlated_size: 520,
            jited_size: 324,
            run_count: cnt,
            run_time_ns: ns,
            tag: "fc3eb0ef05553d4b".into(),
            ..Default::default()
        };
        let rows = vec![
            ActivityRow {
                prog: p(137, "sys_exit", 139154546, 16453388810),
                run_count_delta: 1340491,
                run_time_ns_delta: 155117000,
            },
            ActivityRow {
                prog: p(65, "sys_enter", 0, 0),
                run_count_delta: 0,
                run_time_ns_delta: 0,
            },
        ];
        assert_eq!(
            activity(&rows, 1.0, 1.0, false, false),
            "BRR ACTIVITY duration=1\n ID  TYPE        NAME          CPU%    EXECS/s  AVG_NS  XLAT_B  JIT_B\n137  tracepoint  sys_exit   15.5117  1,340,491     115     520    324\n 65  tracepoint  sys_enter   0.0000          0       0     520    324"
        );
        let x = activity(&rows[..1], 0.5, 0.5, true, true);
        assert!(x.starts_with("BRR ACTIVITY duration=0.5\n ID  TYPE        NAME         CPU%    EXECS/s  AVG_NS  CUMUL_AVG_NS     NS_PER/s  EXECS_DELTA     TOTAL_NS  EXECS_TOTAL        CUMUL_NS  XLAT_B  JIT_B  TAG               PINNED"), "{x}");
        assert!(x.ends_with("fc3eb0ef05553d4b  -     "), "{x:?}");
        assert_eq!(
            activity(&[], 1.0, 1.0, false, false),
            "BRR ACTIVITY duration=1\nNo active eBPF program runtime deltas observed."
        );
    }
}
