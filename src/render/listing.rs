//! Text, JSON and CSV for `prog`, `map`, `link`, `btf` and `activity`.

use super::json::{self, obj, Json};
use super::{csv, dash, dash_join, table, Format};
use crate::activity::ActivityRow;
use crate::model::{BtfObject, Link, Map, Program};

fn opt_num(v: u32) -> Option<u32> {
    (v != 0).then_some(v)
}
fn opt_num64(v: u64) -> Option<u64> {
    (v != 0).then_some(v)
}
fn strings(v: &[String]) -> Json {
    Json::Arr(v.iter().map(|s| Json::from(s.as_str())).collect())
}

/// Emit a listing in the chosen format; `empty` replaces an empty text
/// table. CSV rows are the JSON items' values under `csv_keys`.
fn emit(
    format: Format,
    kind: &str,
    empty: &str,
    text: (Vec<&str>, Vec<Vec<String>>),
    items: Vec<Json>,
    metadata: Json,
    csv_keys: &[&str],
) -> String {
    match format {
        Format::Text if text.1.is_empty() => empty.to_string(),
        Format::Text => table::render(&text.0, &text.1),
        Format::Json { pretty } => json::to_string(&json::document(kind, items, metadata), pretty),
        Format::Csv => csv::from_items(csv_keys, &items),
    }
}

pub fn program_json(p: &Program) -> Json {
    obj([
        ("id", p.id.into()),
        ("type", p.prog_type.as_str().into()),
        ("name", p.name.as_str().into()),
        ("tag", p.tag.as_str().into()),
        ("xlated_size_bytes", p.xlated_size.into()),
        ("jited_size_bytes", p.jited_size.into()),
        ("run_time_ns", opt_num64(p.run_time_ns).into()),
        ("run_count", opt_num64(p.run_count).into()),
        ("map_ids", p.map_ids.as_slice().into()),
        ("btf_id", opt_num(p.btf_id).into()),
        ("pinned_paths", strings(&p.pinned_paths)),
    ])
}

const PROG_CSV: &[&str] = &[
    "id",
    "type",
    "name",
    "tag",
    "xlated_size_bytes",
    "jited_size_bytes",
    "run_time_ns",
    "run_count",
    "map_ids",
    "btf_id",
    "pinned_paths",
];

pub fn programs(list: &[Program], format: Format, stats: bool, extended: bool) -> String {
    let mut headers = vec!["ID", "TYPE", "NAME", "XLATED_BYTES", "JITED_BYTES"];
    if stats {
        headers.extend(["RUN_CNT", "RUN_TIME_NS"]);
    }
    if extended {
        headers.extend(["TAG", "PINNED"]);
    }
    let text_rows = list
        .iter()
        .map(|p| {
            let mut r = vec![
                p.id.to_string(),
                p.prog_type.clone(),
                p.name.clone(),
                p.xlated_size.to_string(),
                p.jited_size.to_string(),
            ];
            if stats {
                r.push(p.run_count.to_string());
                r.push(p.run_time_ns.to_string());
            }
            if extended {
                r.push(if p.tag.is_empty() {
                    "-".into()
                } else {
                    p.tag.clone()
                });
                r.push(dash_join(&p.pinned_paths, ","));
            }
            r
        })
        .collect();
    emit(
        format,
        "programs",
        "No eBPF programs found.",
        (headers, text_rows),
        list.iter().map(program_json).collect(),
        obj([]),
        PROG_CSV,
    )
}

pub fn maps(list: &[Map], format: Format, extended: bool) -> String {
    let mut headers = vec![
        "ID",
        "TYPE",
        "NAME",
        "KEY",
        "VALUE",
        "MAX_ENTRIES",
        "BTF_ID",
    ];
    if extended {
        headers.push("PINNED");
    }
    let text_rows = list
        .iter()
        .map(|m| {
            let mut r = vec![
                m.id.to_string(),
                m.map_type.clone(),
                m.name.clone(),
                m.key_size.to_string(),
                m.value_size.to_string(),
                m.max_entries.to_string(),
                dash(opt_num(m.btf_id)),
            ];
            if extended {
                r.push(dash_join(&m.pinned_paths, ","));
            }
            r
        })
        .collect();
    let items = list
        .iter()
        .map(|m| {
            obj([
                ("id", m.id.into()),
                ("type", m.map_type.as_str().into()),
                ("name", m.name.as_str().into()),
                ("key_size", m.key_size.into()),
                ("value_size", m.value_size.into()),
                ("max_entries", m.max_entries.into()),
                ("btf_id", opt_num(m.btf_id).into()),
                ("pinned_paths", strings(&m.pinned_paths)),
            ])
        })
        .collect();
    emit(
        format,
        "maps",
        "No eBPF maps found.",
        (headers, text_rows),
        items,
        obj([]),
        &[
            "id",
            "type",
            "name",
            "key_size",
            "value_size",
            "max_entries",
            "btf_id",
            "pinned_paths",
        ],
    )
}

pub fn links(list: &[Link], format: Format, extended: bool) -> String {
    let mut headers = vec![
        "ID",
        "TYPE",
        "PROG_ID",
        "ATTACH_TYPE",
        "TARGET_OBJ_ID",
        "TARGET_BTF_ID",
    ];
    if extended {
        headers.push("PINNED");
    }
    let text_rows = list
        .iter()
        .map(|l| {
            let mut r = vec![
                l.id.to_string(),
                l.link_type.clone(),
                l.prog_id.to_string(),
                dash(l.attach_type.clone()),
                dash(l.target_obj_id),
                dash(l.target_btf_id),
            ];
            if extended {
                r.push(dash_join(&l.pinned_paths, ","));
            }
            r
        })
        .collect();
    let items = list
        .iter()
        .map(|l| {
            obj([
                ("id", l.id.into()),
                ("type", l.link_type.as_str().into()),
                ("prog_id", l.prog_id.into()),
                ("attach_type", l.attach_type.clone().into()),
                ("target_obj_id", l.target_obj_id.into()),
                ("target_btf_id", l.target_btf_id.into()),
                ("pinned_paths", strings(&l.pinned_paths)),
            ])
        })
        .collect();
    emit(
        format,
        "links",
        "No eBPF links found.",
        (headers, text_rows),
        items,
        obj([]),
        &[
            "id",
            "type",
            "prog_id",
            "attach_type",
            "target_obj_id",
            "target_btf_id",
            "pinned_paths",
        ],
    )
}

pub fn btfs(list: &[BtfObject], format: Format) -> String {
    let text_rows = list
        .iter()
        .map(|b| vec![b.id.to_string(), b.name.clone(), b.size.to_string()])
        .collect();
    let items = list
        .iter()
        .map(|b| {
            obj([
                ("id", b.id.into()),
                ("name", b.name.as_str().into()),
                ("size", b.size.into()),
                ("pinned_paths", strings(&b.pinned_paths)),
            ])
        })
        .collect();
    emit(
        format,
        "btfs",
        "No BTF objects found.",
        (vec!["ID", "NAME", "SIZE"], text_rows),
        items,
        obj([]),
        &["id", "name", "size", "pinned_paths"],
    )
}

/// The parameters of an activity run, repeated in JSON metadata and CSV rows.
#[derive(Debug, Clone, Copy)]
pub struct ActivityRun {
    pub duration: f64,
    pub measured: f64,
    pub limit: usize,
    pub all: bool,
}

/// Activity text columns and cells over a window of `d` seconds; `num`
/// formats the integer cells (plain here, `,`-grouped in `top`).
pub fn activity_table(
    rows: &[ActivityRow],
    d: f64,
    cumulative: bool,
    extended: bool,
    num: impl Fn(u64) -> String,
) -> (Vec<&'static str>, Vec<Vec<String>>) {
    let mut headers = vec!["ID", "TYPE", "NAME", "CPU%", "EXECS/s", "AVG_NS"];
    if cumulative {
        headers.extend([
            "CUMUL_AVG_NS",
            "NS_PER/s",
            "EXECS_DELTA",
            "TOTAL_NS",
            "EXECS_TOTAL",
            "CUMUL_NS",
        ]);
    }
    headers.extend(["XLAT_B", "JIT_B"]);
    if extended {
        headers.extend(["TAG", "PINNED"]);
    }
    let cells = rows
        .iter()
        .map(|r| {
            let p = &r.prog;
            let mut c = vec![
                p.id.to_string(),
                p.prog_type.clone(),
                p.name.clone(),
                super::num::percent4(r.cpu_pct(d)),
                num(r.execs_per_sec(d) as u64),
                num(r.avg_ns()),
            ];
            if cumulative {
                c.extend([
                    num(r.cumulative_avg_ns()),
                    num(r.ns_per_sec(d) as u64),
                    num(r.run_count_delta),
                    num(r.run_time_ns_delta),
                    num(r.run_count_total()),
                    num(r.run_time_ns_total()),
                ]);
            }
            c.extend([num(p.xlated_size as u64), num(p.jited_size as u64)]);
            if extended {
                c.push(if p.tag.is_empty() {
                    "-".into()
                } else {
                    p.tag.clone()
                });
                c.push(dash_join(&p.pinned_paths, ","));
            }
            c
        })
        .collect();
    (headers, cells)
}

pub fn activity(
    rows: &[ActivityRow],
    run: ActivityRun,
    format: Format,
    cumulative: bool,
    extended: bool,
) -> String {
    let (headers, text_rows) =
        activity_table(rows, run.measured, cumulative, extended, |n| n.to_string());
    let items: Vec<Json> = rows
        .iter()
        .map(|r| {
            let p = &r.prog;
            obj([
                ("id", p.id.into()),
                ("type", p.prog_type.as_str().into()),
                ("name", p.name.as_str().into()),
                ("tag", p.tag.as_str().into()),
                ("xlated_size_bytes", p.xlated_size.into()),
                ("jited_size_bytes", p.jited_size.into()),
                ("run_count_delta", r.run_count_delta.into()),
                ("run_time_ns_delta", r.run_time_ns_delta.into()),
                ("avg_run_time_ns", r.avg_ns().into()),
                ("run_count_total", r.run_count_total().into()),
                ("run_time_ns_total", r.run_time_ns_total().into()),
                ("cumulative_avg_run_time_ns", r.cumulative_avg_ns().into()),
                ("pinned_paths", strings(&p.pinned_paths)),
            ])
        })
        .collect();
    let metadata = obj([
        ("duration", run.duration.into()),
        ("limit", run.limit.into()),
        ("include_all", run.all.into()),
        ("measured_duration", run.measured.into()),
    ]);
    // CSV repeats the run parameters on every row.
    let items = if format == Format::Csv {
        items
            .into_iter()
            .map(|item| {
                let Json::Obj(fields) = item else {
                    return item;
                };
                let mut row = vec![
                    ("duration".to_string(), run.duration.into()),
                    ("limit".to_string(), run.limit.into()),
                    ("include_all".to_string(), run.all.into()),
                ];
                row.extend(fields);
                row.push(("measured_duration".to_string(), run.measured.into()));
                Json::Obj(row)
            })
            .collect()
    } else {
        items
    };
    emit(
        format,
        "program_activity",
        "No active eBPF program runtime deltas observed.",
        (headers, text_rows),
        items,
        metadata,
        &[
            "duration",
            "limit",
            "include_all",
            "id",
            "type",
            "name",
            "tag",
            "xlated_size_bytes",
            "jited_size_bytes",
            "run_count_delta",
            "run_time_ns_delta",
            "avg_run_time_ns",
            "run_count_total",
            "run_time_ns_total",
            "cumulative_avg_run_time_ns",
            "pinned_paths",
            "measured_duration",
        ],
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prog(id: u32) -> Program {
        Program {
            id,
            prog_type: "cgroup_skb".into(),
            name: "count_ingress".into(),
            tag: "d812b1a3dc0f9a8c".into(),
            xlated_size: 144,
            jited_size: 90,
            run_time_ns: 0,
            run_count: 0,
            map_ids: vec![193, 7],
            btf_id: 278,
            pinned_paths: vec!["/sys/fs/bpf/a".into(), "/sys/fs/bpf/b,c".into()],
            ..Default::default()
        }
    }

    #[test]
    fn program_formats() {
        let list = [prog(632)];
        assert_eq!(
            programs(&list, Format::Text, false, false),
            " ID  TYPE        NAME           XLATED_BYTES  JITED_BYTES\n632  cgroup_skb  count_ingress           144           90"
        );
        assert_eq!(
            programs(&list, Format::Json { pretty: false }, false, false),
            r#"{"kind":"programs","items":[{"id":632,"type":"cgroup_skb","name":"count_ingress","tag":"d812b1a3dc0f9a8c","xlated_size_bytes":144,"jited_size_bytes":90,"run_time_ns":null,"run_count":null,"map_ids":[193,7],"btf_id":278,"pinned_paths":["/sys/fs/bpf/a","/sys/fs/bpf/b,c"]}],"metadata":{}}"#
        );
        assert_eq!(
            programs(&list, Format::Csv, false, false),
            "id,type,name,tag,xlated_size_bytes,jited_size_bytes,run_time_ns,run_count,map_ids,btf_id,pinned_paths\n632,cgroup_skb,count_ingress,d812b1a3dc0f9a8c,144,90,,,193;7,278,\"/sys/fs/bpf/a;/sys/fs/bpf/b,c\""
        );
        let x = programs(&list, Format::Text, true, true);
        assert!(x.starts_with(" ID  TYPE        NAME           XLATED_BYTES  JITED_BYTES  RUN_CNT  RUN_TIME_NS  TAG               PINNED"));
        assert!(x.ends_with("0            0  d812b1a3dc0f9a8c  /sys/fs/bpf/a,/sys/fs/bpf/b,c"));
        assert_eq!(
            programs(&[], Format::Text, false, false),
            "No eBPF programs found."
        );
        assert_eq!(
            programs(&[], Format::Json { pretty: true }, false, false),
            "{\n  \"kind\": \"programs\",\n  \"items\": [],\n  \"metadata\": {}\n}"
        );
    }

    #[test]
    fn map_link_btf_formats() {
        let m = Map {
            id: 213,
            map_type: "cgroup_array".into(),
            name: "cgroup_map".into(),
            key_size: 4,
            value_size: 4,
            max_entries: 1,
            btf_id: 0,
            pinned_paths: vec![],
            ..Default::default()
        };
        assert_eq!(
            maps(std::slice::from_ref(&m), Format::Text, true),
            " ID  TYPE          NAME        KEY  VALUE  MAX_ENTRIES  BTF_ID  PINNED\n213  cgroup_array  cgroup_map    4      4            1       -  -     "
        );
        assert_eq!(
            maps(&[m], Format::Csv, false),
            "id,type,name,key_size,value_size,max_entries,btf_id,pinned_paths\n213,cgroup_array,cgroup_map,4,4,1,,"
        );
        let l = Link {
            id: 34,
            link_type: "cgroup".into(),
            prog_id: 632,
            attach_type: Some("cgroup_inet_ingress".into()),
            target_obj_id: None,
            target_btf_id: None,
            pinned_paths: vec![],
            ..Default::default()
        };
        assert_eq!(
            links(std::slice::from_ref(&l), Format::Text, false),
            "ID  TYPE    PROG_ID  ATTACH_TYPE          TARGET_OBJ_ID  TARGET_BTF_ID\n34  cgroup      632  cgroup_inet_ingress              -              -"
        );
        assert_eq!(
            links(&[l], Format::Json { pretty: false }, false),
            r#"{"kind":"links","items":[{"id":34,"type":"cgroup","prog_id":632,"attach_type":"cgroup_inet_ingress","target_obj_id":null,"target_btf_id":null,"pinned_paths":[]}],"metadata":{}}"#
        );
        let b = BtfObject {
            id: 1,
            name: "vmlinux".into(),
            size: 5515646,
            pinned_paths: vec![],
        };
        assert_eq!(
            btfs(std::slice::from_ref(&b), Format::Text),
            "ID  NAME     SIZE   \n 1  vmlinux  5515646"
        );
        assert_eq!(
            btfs(&[b], Format::Csv),
            "id,name,size,pinned_paths\n1,vmlinux,5515646,"
        );
        assert_eq!(links(&[], Format::Text, false), "No eBPF links found.");
        assert_eq!(maps(&[], Format::Text, false), "No eBPF maps found.");
        assert_eq!(btfs(&[], Format::Text), "No BTF objects found.");
    }

    #[test]
    fn activity_formats() {
        let mut p = prog(689);
        p.run_count = 35101434;
        p.run_time_ns = 2807731032;
        p.pinned_paths.clear();
        let rows = [ActivityRow {
            prog: p,
            run_count_delta: 3939893,
            run_time_ns_delta: 486420680,
        }];
        let run = ActivityRun {
            duration: 2.0,
            measured: 2.0,
            limit: 3,
            all: false,
        };
        let t = activity(&rows, run, Format::Text, true, false);
        assert_eq!(
            t,
            " ID  TYPE        NAME           CPU%     EXECS/s  AVG_NS  CUMUL_AVG_NS  NS_PER/s   EXECS_DELTA  TOTAL_NS   EXECS_TOTAL  CUMUL_NS    XLAT_B  JIT_B\n689  cgroup_skb  count_ingress  24.3210  1969946     123            79  243210340      3939893  486420680     35101434  2807731032     144     90"
        );
        let c = activity(&rows, run, Format::Csv, false, false);
        assert_eq!(
            c.lines().nth(1).unwrap(),
            "2.0,3,false,689,cgroup_skb,count_ingress,d812b1a3dc0f9a8c,144,90,3939893,486420680,123,35101434,2807731032,79,,2.0"
        );
        let j = activity(&rows, run, Format::Json { pretty: false }, false, false);
        assert!(j.ends_with(
            r#""metadata":{"duration":2.0,"limit":3,"include_all":false,"measured_duration":2.0}}"#
        ));
        assert_eq!(
            activity(&[], run, Format::Text, false, false),
            "No active eBPF program runtime deltas observed."
        );
        assert_eq!(
            activity(&[], run, Format::Csv, false, false)
                .lines()
                .count(),
            1
        );
    }
}
