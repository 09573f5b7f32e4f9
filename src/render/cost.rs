//! `brr cost` output: the host's line and one row per program, split into
//! program, dispatch and statistics, as text, JSON or CSV.

use super::json::{self, obj, Json};
use super::{csv, table, Format};
use crate::model::cost::{Cost, ProgramCost, Split};

/// The first line: the host's whole eBPF cost and its parts.
fn host_line(c: &Cost) -> String {
    let h = &c.host;
    let pct = |n: u64| c.cpu_percent(n);
    let mut line = format!(
        "eBPF on this host: {:.1} % of {} CPUs = programs {:.1} + dispatch {:.1} + statistics {:.1}",
        pct(h.total() + c.unattributed_dispatch),
        c.cpus,
        pct(h.program),
        pct(h.dispatch),
        pct(h.stats),
    );
    if c.unattributed_dispatch > 0 {
        line.push_str(&format!(
            " + unattributed dispatch {:.1}",
            pct(c.unattributed_dispatch)
        ));
    }
    line
}

fn split_map<T>(s: &Split<u64>, f: impl Fn(u64) -> T) -> Split<T> {
    Split {
        program: f(s.program),
        dispatch: f(s.dispatch),
        stats: f(s.stats),
    }
}

fn percents(c: &Cost, p: &ProgramCost) -> (Split<f64>, f64) {
    (
        split_map(&p.samples, |n| c.cpu_percent(n)),
        c.cpu_percent(p.samples.total()),
    )
}

fn ns(c: &Cost, p: &ProgramCost) -> (Split<Option<f64>>, Option<f64>) {
    let per = |n| c.ns_per_run(n, p.runs_per_sec);
    (split_map(&p.samples, per), per(p.samples.total()))
}

fn ns_text(v: Option<f64>) -> String {
    v.map_or_else(|| "-".into(), |v| format!("{v:.0}"))
}

const HEADERS: [&str; 13] = [
    "ID", "NAME", "TYPE", "RUNS/s", "PROG%", "DISP%", "STATS%", "CPU%", "PROG_NS", "DISP_NS",
    "STATS_NS", "NS/RUN", "HOOK",
];

fn text(c: &Cost) -> String {
    let rows: Vec<Vec<String>> = c
        .programs
        .iter()
        .map(|p| {
            let (pct, total) = percents(c, p);
            let (per, per_total) = ns(c, p);
            vec![
                p.id.to_string(),
                p.name.clone(),
                p.prog_type.clone(),
                format!("{:.0}", p.runs_per_sec),
                format!("{:.2}", pct.program),
                format!("{:.2}", pct.dispatch),
                format!("{:.2}", pct.stats),
                format!("{total:.2}"),
                ns_text(per.program),
                ns_text(per.dispatch),
                ns_text(per.stats),
                ns_text(per_total),
                if p.hook.is_empty() {
                    "-".into()
                } else {
                    p.hook.clone()
                },
            ]
        })
        .collect();
    let align: Vec<(bool, bool)> = HEADERS
        .iter()
        .map(|h| (*h == "ID", !matches!(*h, "NAME" | "TYPE" | "HOOK")))
        .collect();
    let mut out = host_line(c);
    if rows.is_empty() {
        out.push_str("\nNo eBPF program ran or was sampled in the window.");
    } else {
        out.push('\n');
        out.push_str(&table::aligned(&HEADERS, &align, &rows));
    }
    if !c.hints.is_empty() {
        out.push_str("\n\n");
        out.push_str(&super::profile::hints_text(&c.hints));
    }
    for w in &c.warnings {
        out.push_str(&format!("\nwarning: {w}"));
    }
    out
}

fn num(v: Option<f64>) -> Json {
    v.into()
}

/// The fields an item and its CSV row both start with.
fn head(p: &ProgramCost) -> Vec<(&'static str, Json)> {
    vec![
        ("id", p.id.into()),
        ("name", p.name.as_str().into()),
        ("full_name", p.full_name.as_str().into()),
        ("type", p.prog_type.as_str().into()),
        ("hook", p.hook.as_str().into()),
        ("runs_per_sec", p.runs_per_sec.into()),
    ]
}

/// A program's JSON item.
fn item(c: &Cost, p: &ProgramCost) -> Json {
    let (pct, total) = percents(c, p);
    let (per, per_total) = ns(c, p);
    let mut fields = head(p);
    fields.extend([
        (
            "samples",
            obj([
                ("program", p.samples.program.into()),
                ("dispatch", p.samples.dispatch.into()),
                ("stats", p.samples.stats.into()),
            ]),
        ),
        (
            "cpu_percent",
            obj([
                ("program", pct.program.into()),
                ("dispatch", pct.dispatch.into()),
                ("stats", pct.stats.into()),
                ("total", total.into()),
            ]),
        ),
        (
            "ns_per_run",
            obj([
                ("program", num(per.program)),
                ("dispatch", num(per.dispatch)),
                ("stats", num(per.stats)),
                ("total", num(per_total)),
            ]),
        ),
    ]);
    json::fields(fields)
}

fn metadata(c: &Cost) -> Json {
    let h = &c.host;
    obj([
        (
            "host_total",
            obj([
                (
                    "cpu_percent",
                    c.cpu_percent(h.total() + c.unattributed_dispatch).into(),
                ),
                ("program_cpu_percent", c.cpu_percent(h.program).into()),
                ("dispatch_cpu_percent", c.cpu_percent(h.dispatch).into()),
                ("stats_cpu_percent", c.cpu_percent(h.stats).into()),
                (
                    "unattributed_dispatch_cpu_percent",
                    c.cpu_percent(c.unattributed_dispatch).into(),
                ),
                ("cpus", c.cpus.into()),
            ]),
        ),
        ("duration", c.seconds.into()),
        ("frequency", c.frequency.into()),
        (
            "warnings",
            Json::Arr(c.warnings.iter().map(|w| w.as_str().into()).collect()),
        ),
    ])
}

/// A program's CSV cells: the JSON item's fields, nested ones flattened
/// as `samples_program`, `cpu_percent_total`, ...
fn csv_fields(c: &Cost, p: &ProgramCost) -> Vec<(&'static str, Json)> {
    let (pct, total) = percents(c, p);
    let (per, per_total) = ns(c, p);
    let mut fields = head(p);
    fields.extend([
        ("samples_program", p.samples.program.into()),
        ("samples_dispatch", p.samples.dispatch.into()),
        ("samples_stats", p.samples.stats.into()),
        ("cpu_percent_program", pct.program.into()),
        ("cpu_percent_dispatch", pct.dispatch.into()),
        ("cpu_percent_stats", pct.stats.into()),
        ("cpu_percent_total", total.into()),
        ("ns_per_run_program", num(per.program)),
        ("ns_per_run_dispatch", num(per.dispatch)),
        ("ns_per_run_stats", num(per.stats)),
        ("ns_per_run_total", num(per_total)),
    ]);
    fields
}

/// A hint as the profile's JSON has it, without the source line that a
/// cost hint never has.
fn hint_json(h: &crate::model::profile::Hint) -> Json {
    obj([
        ("kind", h.kind.into()),
        ("program_id", h.program_id.into()),
        ("program", h.program.as_str().into()),
        ("figure", h.figure.into()),
        ("threshold", h.threshold.into()),
        ("unit", h.unit.into()),
        ("evidence", h.evidence.as_str().into()),
        ("fix", h.fix.into()),
    ])
}

/// `brr cost` output.
pub(crate) fn render(c: &Cost, format: Format) -> String {
    match format {
        Format::Text => text(c),
        Format::Json { pretty } => {
            let items = c.programs.iter().map(|p| item(c, p)).collect();
            let mut doc = json::document("cost", items, metadata(c));
            if let Json::Obj(fields) = &mut doc {
                let hints = c.hints.iter().map(hint_json);
                fields.push(("hints".into(), Json::Arr(hints.collect())));
            }
            json::to_string(&doc, pretty)
        }
        Format::Csv => csv::from_fields(
            &csv_fields(c, &ProgramCost::default()),
            c.programs.iter().map(|p| csv_fields(c, p)),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cost() -> Cost {
        Cost {
            programs: vec![ProgramCost {
                id: 7,
                name: "p".into(),
                full_name: "p_full".into(),
                prog_type: "raw_tracepoint".into(),
                hook: "task_rename".into(),
                runs_per_sec: 1000.0,
                samples: Split {
                    program: 1,
                    dispatch: 2,
                    stats: 1,
                },
                ..ProgramCost::default()
            }],
            unattributed_dispatch: 4,
            host: Split {
                program: 10,
                dispatch: 2,
                stats: 1,
            },
            sample_ns: 1e6,
            seconds: 1.0,
            cpus: 2,
            frequency: 1000,
            warnings: Vec::new(),
            hints: Vec::new(),
            stats_holders: Vec::new(),
        }
    }

    #[test]
    fn host_line_first_then_the_split() {
        let t = render(&cost(), Format::Text);
        let first = t.lines().next().unwrap();
        assert_eq!(
            first,
            "eBPF on this host: 0.8 % of 2 CPUs = programs 0.5 + dispatch 0.1 + statistics 0.1 + unattributed dispatch 0.2"
        );
        assert!(t.contains("task_rename"), "{t}");
    }

    #[test]
    fn json_and_csv_carry_the_same_fields() {
        let j = render(&cost(), Format::Json { pretty: false });
        let v: serde_json::Value = serde_json::from_str(&j).unwrap();
        let item = &v["items"][0];
        assert_eq!(item["samples"]["dispatch"], 2);
        // 4 samples of 1 ms over 1000 runs: 4000 ns per run.
        assert_eq!(item["ns_per_run"]["total"], 4000.0);
        assert_eq!(item["ns_per_run"]["stats"], 1000.0);
        let host = &v["metadata"]["host_total"];
        assert_eq!(host["cpus"], 2);
        assert_eq!(host["unattributed_dispatch_cpu_percent"], 0.2);
        let csv = render(&cost(), Format::Csv);
        let header = csv.lines().next().unwrap();
        assert!(header.starts_with("id,name,full_name,type,hook,runs_per_sec,samples_program,"));
        assert!(header.ends_with("ns_per_run_total"), "{header}");
        let mut none = cost();
        none.programs[0].runs_per_sec = 0.0;
        let j = render(&none, Format::Json { pretty: false });
        assert!(j.contains(r#""ns_per_run":{"program":null"#), "{j}");
    }

    /// A part with no samples over runs was measured as 0 ns a run; with
    /// no runs nothing was measured, so every NS/RUN is null (`-`), even
    /// that of a part with samples.
    #[test]
    fn ns_per_run_is_zero_only_when_measured_over_runs() {
        let mut c = cost();
        c.programs[0].samples.dispatch = 0;
        let v: serde_json::Value =
            serde_json::from_str(&render(&c, Format::Json { pretty: false })).unwrap();
        let ns = &v["items"][0]["ns_per_run"];
        assert_eq!(ns["dispatch"], 0.0);
        assert_eq!(ns["program"], 1000.0);
        let row = |t: &str| {
            t.lines()
                .find(|l| l.contains("task_rename"))
                .unwrap()
                .to_string()
        };
        let cells =
            |t: &str| -> Vec<String> { row(t).split_whitespace().map(String::from).collect() };
        // PROG_NS, DISP_NS, STATS_NS, NS/RUN, HOOK.
        assert_eq!(
            cells(&render(&c, Format::Text))[8..],
            ["1000", "0", "1000", "2000", "task_rename"]
        );
        c.programs[0].runs_per_sec = 0.0;
        let v: serde_json::Value =
            serde_json::from_str(&render(&c, Format::Json { pretty: false })).unwrap();
        let ns = &v["items"][0]["ns_per_run"];
        for part in ["program", "dispatch", "stats", "total"] {
            assert!(ns[part].is_null(), "{part}: {ns}");
        }
        assert_eq!(
            cells(&render(&c, Format::Text))[8..],
            ["-", "-", "-", "-", "task_rename"]
        );
        let csv = render(&c, Format::Csv);
        let last = csv.lines().nth(1).unwrap();
        assert!(last.ends_with(",,,,"), "{last}");
    }
}
