//! `brr activity` (and `top --textmode`'s table, and the TUI's columns):
//! the activity columns, the text table, JSON and CSV of one window, and
//! the windows of a stream.

use super::cells::{attach_cell, maps_mem_with, owners_cell};
use super::programs::program_identity;
use super::{emit, strings};
use crate::activity::ActivityRow;
use crate::model::{ProgFields, Program};
use crate::render::json::{self, obj, Json};
use crate::render::{csv, dash_join, Format};

/// What `brr activity` (and `top --textmode`) prints in `format`: JSON
/// and CSV rows carry the pins but no `-x` columns; text shows the pins,
/// holders, attach points and memlock with `-x`.
pub(crate) fn activity_fields(format: Format, extended: bool) -> ProgFields {
    let text_x = format == Format::Text && extended;
    ProgFields {
        full_name: true,
        map_ids: false,
        memlock: text_x,
        pins: text_x || format != Format::Text,
        context: text_x,
    }
}

/// The parameters of an activity run, repeated in JSON metadata and CSV rows.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ActivityRun {
    pub duration: f64,
    pub measured: f64,
    pub limit: usize,
    pub all: bool,
    /// A stream's window as Unix seconds (start, end): added to JSON
    /// metadata and appended to CSV rows.
    pub window: Option<(f64, f64)>,
}

/// The line after a text table whose window Ctrl-C cut short.
pub(crate) fn ended_early(run: &ActivityRun) -> Option<String> {
    (run.measured < run.duration).then(|| {
        format!(
            "window ended early after {:.2} s of {} s",
            run.measured,
            crate::render::num::fmt_g(run.duration)
        )
    })
}

/// A column of the activity table (`brr activity`, `top --textmode` and
/// the TUI's live table): its header and its cell, defined here once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ActivityCol {
    Id,
    Type,
    Name,
    Cpu,
    ExecsPerSec,
    AvgNs,
    CumulAvgNs,
    NsPerSec,
    ExecsDelta,
    TotalNs,
    ExecsTotal,
    CumulNs,
    Xlat,
    Jit,
    Tag,
    Pinned,
    Misses,
    Owners,
    Attach,
    Memlock,
    MapsMem,
}

impl ActivityCol {
    /// The columns shown, in order: `cumulative` adds the totals, `extended`
    /// (`-x`) what identifies and keeps a program.
    pub(crate) fn shown(cumulative: bool, extended: bool) -> Vec<ActivityCol> {
        use ActivityCol::*;
        let mut cols = vec![Id, Type, Name, Cpu, ExecsPerSec, AvgNs];
        if cumulative {
            cols.extend([
                CumulAvgNs, NsPerSec, ExecsDelta, TotalNs, ExecsTotal, CumulNs,
            ]);
        }
        cols.extend([Xlat, Jit]);
        if extended {
            cols.extend([Tag, Pinned, Misses, Owners, Attach, Memlock, MapsMem]);
        }
        cols
    }

    pub(crate) fn header(self) -> &'static str {
        match self {
            ActivityCol::Id => "ID",
            ActivityCol::Type => "TYPE",
            ActivityCol::Name => "NAME",
            ActivityCol::Cpu => "CPU%",
            ActivityCol::ExecsPerSec => "EXECS/s",
            ActivityCol::AvgNs => "AVG_NS",
            ActivityCol::CumulAvgNs => "CUMUL_AVG_NS",
            ActivityCol::NsPerSec => "NS_PER/s",
            ActivityCol::ExecsDelta => "EXECS_DELTA",
            ActivityCol::TotalNs => "TOTAL_NS",
            ActivityCol::ExecsTotal => "EXECS_TOTAL",
            ActivityCol::CumulNs => "CUMUL_NS",
            ActivityCol::Xlat => "XLAT_B",
            ActivityCol::Jit => "JIT_B",
            ActivityCol::Tag => "TAG",
            ActivityCol::Pinned => "PINNED",
            ActivityCol::Misses => "MISSES",
            ActivityCol::Owners => "OWNERS",
            ActivityCol::Attach => "ATTACH",
            ActivityCol::Memlock => "MEMLOCK",
            ActivityCol::MapsMem => "MAPS_MEM",
        }
    }

    /// Words rather than figures: left-aligned in the TUI.
    pub(crate) fn left_aligned(self) -> bool {
        matches!(
            self,
            ActivityCol::Type
                | ActivityCol::Name
                | ActivityCol::Tag
                | ActivityCol::Pinned
                | ActivityCol::Owners
                | ActivityCol::Attach
        )
    }

    /// The integer a number column shows (`None`: not a number column, or
    /// a memlock that was not read, shown as `-`).
    fn count(self, r: &ActivityRow, d: f64) -> Option<u64> {
        let p = &r.prog;
        Some(match self {
            ActivityCol::ExecsPerSec => r.execs_per_sec(d) as u64,
            ActivityCol::AvgNs => r.avg_ns(),
            ActivityCol::CumulAvgNs => r.cumulative_avg_ns(),
            ActivityCol::NsPerSec => r.ns_per_sec(d) as u64,
            ActivityCol::ExecsDelta => r.run_count_delta,
            ActivityCol::TotalNs => r.run_time_ns_delta,
            ActivityCol::ExecsTotal => r.run_count_total(),
            ActivityCol::CumulNs => r.run_time_ns_total(),
            ActivityCol::Xlat => p.xlated_size as u64,
            ActivityCol::Jit => p.jited_size as u64,
            ActivityCol::Misses => r.recursion_misses_delta?,
            ActivityCol::Memlock => p.memlock_bytes?,
            _ => return None,
        })
    }

    /// How many characters `self.cell(r, d, &commas)` has, without making
    /// the text of the columns the default table shows: the TUI measures
    /// every row's cells each window but draws only a screenful.
    pub(crate) fn grouped_width(self, r: &ActivityRow, d: f64) -> usize {
        let p = &r.prog;
        match self {
            ActivityCol::Id => crate::render::num::fmt_width(format_args!("{}", p.id)),
            ActivityCol::Type => p.prog_type.chars().count(),
            ActivityCol::Name => p.display_name().chars().count(),
            ActivityCol::Cpu => crate::render::num::fmt_width(format_args!("{:.4}", r.cpu_pct(d))),
            _ => match self.count(r, d) {
                Some(n) => crate::render::num::commas_width(n),
                None => self.cell(r, d, &crate::render::num::commas).chars().count(),
            },
        }
    }

    /// The cell of `r` over a window of `d` seconds; `num` formats the
    /// integer cells (plain here, `,`-grouped in `top`).
    pub(crate) fn cell(self, r: &ActivityRow, d: f64, num: &impl Fn(u64) -> String) -> String {
        let p = &r.prog;
        match self {
            ActivityCol::Id => p.id.to_string(),
            ActivityCol::Type => p.prog_type.to_string(),
            ActivityCol::Name => p.display_name().to_string(),
            ActivityCol::Cpu => crate::render::num::percent4(r.cpu_pct(d)),
            ActivityCol::Tag if p.tag.is_empty() => "-".into(),
            ActivityCol::Tag => p.tag.to_string(),
            ActivityCol::Pinned => dash_join(&p.pinned_paths, ","),
            ActivityCol::Owners => owners_cell(p.keepers.as_ref(), !p.pinned_paths.is_empty()),
            ActivityCol::Attach => attach_cell(&p.attached),
            ActivityCol::MapsMem => maps_mem_with(p, num),
            // The number columns; a memlock not read shows as `-`.
            _ => self.count(r, d).map_or_else(|| "-".into(), num),
        }
    }
}

/// The activity table's columns and cells over a window of `d` seconds;
/// `num` formats the integer cells (see [`ActivityCol::cell`]).
pub(crate) fn activity_table(
    rows: &[ActivityRow],
    d: f64,
    cumulative: bool,
    extended: bool,
    num: impl Fn(u64) -> String,
) -> (Vec<ActivityCol>, Vec<Vec<String>>) {
    let cols = ActivityCol::shown(cumulative, extended);
    let cells = rows
        .iter()
        .map(|r| cols.iter().map(|c| c.cell(r, d, &num)).collect())
        .collect();
    (cols, cells)
}

/// Header texts of `cols`.
pub(crate) fn activity_headers(cols: &[ActivityCol]) -> Vec<&'static str> {
    cols.iter().map(|c| c.header()).collect()
}

pub(crate) fn activity(
    rows: &[ActivityRow],
    run: ActivityRun,
    format: Format,
    cumulative: bool,
    extended: bool,
) -> String {
    let out = activity_document(rows, run, format, cumulative, extended);
    match (format, ended_early(&run)) {
        (Format::Text, Some(line)) => format!("{out}\n{line}"),
        _ => out,
    }
}

/// One window of `activity --interval`, with its trailing newline: text is
/// the table under a heading naming the window's end (UTC) and length; JSON
/// is one line; CSV is the rows, with the header only when `first`.
pub(crate) fn activity_window(
    rows: &[ActivityRow],
    run: ActivityRun,
    format: Format,
    cumulative: bool,
    extended: bool,
    first: bool,
) -> String {
    match format {
        Format::Text => {
            let (start, end) = run.window.unwrap_or((0.0, 0.0));
            let heading = format!(
                "{} window {:.2} s (from {})",
                crate::utc::iso8601_millis(end),
                run.measured,
                crate::utc::iso8601_millis(start)
            );
            let body = activity(rows, run, format, cumulative, extended);
            let gap = if first { "" } else { "\n" };
            format!("{gap}{heading}\n{body}\n")
        }
        Format::Json { .. } => {
            let line = activity_document(rows, run, Format::Json { pretty: false }, false, false);
            format!("{line}\n")
        }
        Format::Csv => {
            let all = activity_document(rows, run, format, false, false);
            let body = if first {
                all.as_str()
            } else {
                all.split_once('\n').map(|(_, rest)| rest).unwrap_or("")
            };
            if body.is_empty() {
                String::new()
            } else {
                format!("{body}\n")
            }
        }
    }
}

/// A row's JSON item: the original's keys, then the ones added after them;
/// the rates are over `measured` seconds.
fn activity_items(r: &ActivityRow, measured: f64) -> Vec<(&'static str, Json)> {
    let p = &r.prog;
    let mut item = Vec::from(program_identity(p));
    item.extend([
        ("run_count_delta", r.run_count_delta.into()),
        ("run_time_ns_delta", r.run_time_ns_delta.into()),
        ("avg_run_time_ns", r.avg_ns().into()),
        ("run_count_total", r.run_count_total().into()),
        ("run_time_ns_total", r.run_time_ns_total().into()),
        ("cumulative_avg_run_time_ns", r.cumulative_avg_ns().into()),
        ("pinned_paths", strings(&p.pinned_paths)),
        ("full_name", p.display_name().into()),
        ("recursion_misses_delta", r.recursion_misses_delta.into()),
        ("cpu_percent", rate(r.cpu_pct(measured)).into()),
        (
            "execs_per_sec",
            (rate(r.execs_per_sec(measured)) as u64).into(),
        ),
    ]);
    item
}

/// The last key of the original's activity rows: its CSV put
/// `measured_duration` right after it, so keys added since follow that.
const LAST_ORIGINAL_ACTIVITY_KEY: &str = "pinned_paths";

/// A row's CSV fields: its JSON item with the run parameters repeated
/// around it, and a stream's window last.
fn activity_csv_items(
    run: &ActivityRun,
    mut item: Vec<(&'static str, Json)>,
) -> Vec<(&'static str, Json)> {
    let original = item
        .iter()
        .position(|(k, _)| *k == LAST_ORIGINAL_ACTIVITY_KEY)
        .map_or(item.len(), |i| i + 1);
    let added = item.split_off(original);
    let mut row = vec![
        ("duration", run.duration.into()),
        ("limit", run.limit.into()),
        ("include_all", run.all.into()),
    ];
    row.extend(item);
    row.push(("measured_duration", run.measured.into()));
    row.extend(added);
    if let Some((start, end)) = run.window {
        row.push(("window_start", start.into()));
        row.push(("window_end", end.into()));
    }
    row
}

/// A rate over the window as JSON and CSV carry it: a window that measured
/// nothing (cut short at once) has none, which is written as 0 rather than
/// as a NaN that JSON cannot hold.
fn rate(v: f64) -> f64 {
    if v.is_finite() {
        v
    } else {
        0.0
    }
}

fn activity_document(
    rows: &[ActivityRow],
    run: ActivityRun,
    format: Format,
    cumulative: bool,
    extended: bool,
) -> String {
    let (cols, text_rows) =
        activity_table(rows, run.measured, cumulative, extended, |n| n.to_string());
    let headers = activity_headers(&cols);
    // CSV repeats the run parameters on every row.
    let csv = format == Format::Csv;
    let row_items = |r: &ActivityRow| {
        let item = activity_items(r, run.measured);
        if csv {
            activity_csv_items(&run, item)
        } else {
            item
        }
    };
    let items: Vec<Json> = rows.iter().map(|r| json::fields(row_items(r))).collect();
    let mut metadata = obj([
        ("duration", run.duration.into()),
        ("limit", run.limit.into()),
        ("include_all", run.all.into()),
        ("measured_duration", run.measured.into()),
    ]);
    if let (Some((start, end)), Json::Obj(fields)) = (run.window, &mut metadata) {
        fields.push(("window_start".into(), start.into()));
        fields.push(("window_end".into(), end.into()));
    }
    let placeholder = ActivityRow {
        prog: Program::default(),
        run_count_delta: 0,
        run_time_ns_delta: 0,
        recursion_misses_delta: Some(0),
    };
    let csv_keys = csv::keys(&activity_csv_items(
        &run,
        activity_items(&placeholder, run.measured),
    ));
    emit(
        format,
        "program_activity",
        "No active eBPF program runtime deltas observed.",
        (headers, text_rows),
        items,
        metadata,
        &csv_keys,
    )
}
