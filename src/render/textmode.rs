//! `brr top --textmode`: the `BRR ACTIVITY` snapshot and the `BRR INSPECT`
//! drilldown table, the plain-text form of what the TUI shows.

use super::drilldown::{self, ViewState};
use super::listing::{activity_headers, activity_table, ActivityCol};
use super::num::{commas, fmt_g};
use super::table::aligned;
use crate::activity::ActivityRow;
use crate::inspect::drilldown::Drilldown;

/// The `BRR ACTIVITY` section. `measured` is the window in seconds.
pub(crate) fn activity(
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
    let (cols, cells) = activity_table(rows, measured, cumulative, extended, commas);
    // Headers over their cells; only the name-like columns read from the left.
    let align: Vec<(bool, bool)> = cols
        .iter()
        .map(|c| {
            use ActivityCol::*;
            let right = !matches!(c, Type | Name | Tag | Pinned);
            (right, right)
        })
        .collect();
    format!(
        "{head}\n{}",
        aligned(&activity_headers(&cols), &align, &cells)
    )
}

/// The `BRR INSPECT` section.
pub(crate) fn inspect(dd: &Drilldown, collapse: bool) -> String {
    let mut out = vec![format!(
        "BRR INSPECT program={} name={} mode={} profiled={} instructions={}",
        dd.program_id,
        dd.name,
        dd.mode.name(),
        if dd.profiled() { "yes" } else { "no" },
        dd.disasm.name()
    )];
    out.extend(drilldown::header_lines(dd));
    let lines = drilldown::lines(dd, &ViewState::textmode(dd, collapse));
    if lines.is_empty() {
        out.push("No source-line metadata or translated eBPF instructions available.".into());
    } else {
        let cells: Vec<Vec<String>> = lines
            .into_iter()
            .map(|l| vec![l.this, l.samples, l.code])
            .collect();
        out.push(aligned(
            &["%THIS", "SAMPLES", "CODE"],
            &[(false, false), (false, true), (false, false)],
            &cells,
        ));
    }
    out.join("\n")
}

/// `--profile-top` with no program to profile.
pub(crate) fn no_program() -> String {
    "BRR PROFILE program=-\nNo program selected for profiling.".into()
}

#[cfg(test)]
mod tests {
    use super::*;

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
                recursion_misses_delta: Some(0),
            },
            ActivityRow {
                prog: p(65, "sys_enter", 0, 0),
                run_count_delta: 0,
                run_time_ns_delta: 0,
                recursion_misses_delta: Some(0),
            },
        ];
        assert_eq!(
            activity(&rows, 1.0, 1.0, false, false),
            "BRR ACTIVITY duration=1\n ID  TYPE        NAME          CPU%    EXECS/s  AVG_NS  XLAT_B  JIT_B\n137  tracepoint  sys_exit   15.5117  1,340,491     115     520    324\n 65  tracepoint  sys_enter   0.0000          0       0     520    324"
        );
        let x = activity(&rows[..1], 0.5, 0.5, true, true);
        assert!(x.starts_with("BRR ACTIVITY duration=0.5\n ID  TYPE        NAME         CPU%    EXECS/s  AVG_NS  CUMUL_AVG_NS     NS_PER/s  EXECS_DELTA     TOTAL_NS  EXECS_TOTAL        CUMUL_NS  XLAT_B  JIT_B  TAG               PINNED"), "{x}");
        assert!(
            x.ends_with("fc3eb0ef05553d4b  -            0       -       -        -         -"),
            "{x:?}"
        );
        assert_eq!(
            activity(&[], 1.0, 1.0, false, false),
            "BRR ACTIVITY duration=1\nNo active eBPF program runtime deltas observed."
        );
    }
}
