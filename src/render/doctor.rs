//! `brr doctor` output: the checks, then every command with whether it
//! works here; as two text tables or one JSON document.

use super::json::{self, obj, Json};
use super::{dash, table, Format};
use crate::doctor::Report;

/// Lines of a left-aligned table, without the padding after the last
/// column (free text there).
fn table_lines(headers: &[&str], rows: &[Vec<String>]) -> Vec<String> {
    let left = vec![(false, false); headers.len()];
    table::aligned(headers, &left, rows)
        .lines()
        .map(|l| l.trim_end().to_string())
        .collect()
}

/// One row per check; a check with a fix has it on the next line, under
/// its detail.
fn text(r: &Report) -> String {
    let checks: Vec<Vec<String>> = r
        .checks
        .iter()
        .map(|c| {
            vec![
                c.name.clone(),
                c.status.name().to_string(),
                c.detail.clone(),
            ]
        })
        .collect();
    let lines = table_lines(&["CHECK", "STATUS", "DETAIL"], &checks);
    let indent = lines
        .first()
        .and_then(|h| h.find("DETAIL"))
        .unwrap_or_default();
    let mut out: Vec<String> = lines.iter().take(1).cloned().collect();
    for (line, c) in lines.iter().skip(1).zip(&r.checks) {
        out.push(line.clone());
        if let Some(fix) = &c.fix {
            out.push(format!("{}fix: {fix}", " ".repeat(indent)));
        }
    }
    let commands: Vec<Vec<String>> = r
        .commands
        .iter()
        .map(|c| {
            vec![
                c.command.to_string(),
                if c.works { "yes" } else { "no" }.to_string(),
                dash(c.reason.as_deref()),
            ]
        })
        .collect();
    out.push(String::new());
    out.extend(table_lines(&["COMMAND", "WORKS", "REASON"], &commands));
    out.join("\n")
}

fn document(r: &Report) -> Json {
    let checks = r
        .checks
        .iter()
        .map(|c| {
            obj([
                ("name", c.name.as_str().into()),
                ("status", c.status.name().into()),
                ("detail", c.detail.as_str().into()),
                ("fix", c.fix.as_deref().into()),
            ])
        })
        .collect();
    let commands = r
        .commands
        .iter()
        .map(|c| {
            obj([
                ("command", c.command.into()),
                ("works", c.works.into()),
                ("reason", c.reason.as_deref().into()),
            ])
        })
        .collect();
    obj([
        ("checks", Json::Arr(checks)),
        ("commands", Json::Arr(commands)),
    ])
}

/// The report in `format`. The command line refuses CSV for doctor (two
/// tables do not make one CSV); were it asked for, the JSON is given.
pub(crate) fn render(r: &Report, format: Format) -> String {
    match format {
        Format::Text => text(r),
        Format::Json { pretty } => json::to_string(&document(r), pretty),
        Format::Csv => json::to_string(&document(r), false),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::doctor::{Check, Status, Verdict};

    fn report() -> Report {
        Report {
            checks: vec![
                Check {
                    name: "kernel".into(),
                    status: Status::Ok,
                    detail: "Linux 6.18".into(),
                    fix: None,
                },
                Check {
                    name: "kernel.kptr_restrict".into(),
                    status: Status::Missing,
                    detail: "2: hidden".into(),
                    fix: Some("set it to 1".into()),
                },
            ],
            commands: vec![
                Verdict {
                    command: "prog",
                    works: true,
                    reason: None,
                },
                Verdict {
                    command: "profile",
                    works: false,
                    reason: Some("hidden \"2\"".into()),
                },
            ],
        }
    }

    #[test]
    fn text_tables() {
        assert_eq!(
            render(&report(), Format::Text),
            "CHECK                 STATUS   DETAIL\n\
             kernel                ok       Linux 6.18\n\
             kernel.kptr_restrict  missing  2: hidden\n\
             \x20                              fix: set it to 1\n\
             \n\
             COMMAND  WORKS  REASON\n\
             prog     yes    -\n\
             profile  no     hidden \"2\""
        );
    }

    #[test]
    fn json_document() {
        assert_eq!(
            render(&report(), Format::Json { pretty: false }),
            r#"{"checks":[{"name":"kernel","status":"ok","detail":"Linux 6.18","fix":null},{"name":"kernel.kptr_restrict","status":"missing","detail":"2: hidden","fix":"set it to 1"}],"commands":[{"command":"prog","works":true,"reason":null},{"command":"profile","works":false,"reason":"hidden \"2\""}]}"#
        );
        assert!(
            render(&report(), Format::Json { pretty: true }).starts_with("{\n  \"checks\": [\n")
        );
    }
}
