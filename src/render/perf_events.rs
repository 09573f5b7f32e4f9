//! `brr perf-events` output: the openable catalogue events as a table, JSON
//! or CSV.

use super::json::{self, obj, Json};
use super::{csv, table, Format};
use crate::profile::events::{EventSpec, Listed};

/// A listing row's text cells; `auto` is how the AUTO flag is written.
fn listing_cells(l: &Listed, auto: &str) -> Vec<String> {
    vec![
        l.event.name.to_string(),
        l.event.type_name().to_string(),
        l.event.config.to_string(),
        l.event.precise_ip.to_string(),
        auto.to_string(),
    ]
}

/// A listed event's JSON item (and CSV cells).
fn fields(l: &Listed) -> Vec<(&'static str, Json)> {
    vec![
        ("name", l.event.name.into()),
        ("type", l.event.type_name().into()),
        ("config", l.event.config.into()),
        ("precise_ip", l.event.precise_ip.into()),
        ("selected_by_auto", l.selected_by_auto.into()),
    ]
}

/// `brr perf-events` output.
pub(crate) fn render(items: &[Listed], format: Format) -> String {
    match format {
        Format::Text if items.is_empty() => "No openable brr perf events found.".into(),
        Format::Text => {
            let rows: Vec<Vec<String>> = items
                .iter()
                .map(|l| listing_cells(l, if l.selected_by_auto { "yes" } else { "" }))
                .collect();
            // CONFIG and PRECISE are not numeric columns: left-aligned.
            table::render(&["NAME", "TYPE", "CONFIG", "PRECISE", "AUTO"], &rows)
        }
        Format::Json { pretty } => {
            let items = items.iter().map(|l| json::fields(fields(l))).collect();
            json::to_string(&json::document("perf_events", items, obj([])), pretty)
        }
        Format::Csv => {
            let placeholder = Listed {
                event: EventSpec {
                    name: "",
                    type_: 0,
                    config: 0,
                    precise_ip: 0,
                },
                selected_by_auto: false,
            };
            csv::from_fields(&fields(&placeholder), items.iter().map(fields))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::events::listing_from_probes;
    use crate::profile::events::tests::results;
    use crate::sys::Errno;

    #[test]
    fn listing_forms() {
        let l = listing_from_probes(&results(&["cpu-clock"], Errno(libc::ENOENT))).unwrap();
        assert_eq!(
            render(&l, Format::Text),
            "NAME       TYPE      CONFIG  PRECISE  AUTO\ncpu-clock  software  0       0        yes "
        );
        assert_eq!(
            render(&l, Format::Json { pretty: false }),
            r#"{"kind":"perf_events","items":[{"name":"cpu-clock","type":"software","config":0,"precise_ip":0,"selected_by_auto":true}],"metadata":{}}"#
        );
        assert_eq!(
            render(&l, Format::Csv),
            "name,type,config,precise_ip,selected_by_auto\ncpu-clock,software,0,0,true"
        );
        assert_eq!(
            render(&[], Format::Text),
            "No openable brr perf events found."
        );
    }
}
