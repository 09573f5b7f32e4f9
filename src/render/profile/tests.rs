//! The profile's text, JSON and CSV output on synthetic profiles: layouts,
//! the original's CSV header, hints, `--devmode` sections.

use super::csv::{csv_header, CsvParts};
use super::json::{hint_json, to_json};
use super::*;
use crate::model::profile::Profile;
use crate::profile::aggregate::tests::profile;
use crate::profile::report::{build, ReportOptions};
use crate::render::json::{self, Json};

/// The CSV header as the original wrote it (and `full_name` after it):
/// the header derived from the JSON fields must stay this, byte for byte.
const ORIGINAL_CSV_HEADER: &str =
    "requested_event,selected_event,duration,frequency,limit,line_limit,\
total_samples,lost_samples,unresolved_samples,bpf_jit_samples,\
non_bpf_samples,selected_program_samples,other_bpf_samples,\
source_mapped_samples,source_unmapped_samples,callchain_samples,\
kernel_attributed_samples,kernel_unattributed_samples,\
kernel_symbolized_samples,call_graph,actual_duration,perf_cpus,\
perf_buffer_pages_per_cpu,perf_buffer_bytes_per_cpu,\
perf_buffer_bytes_total,perf_drain_interval_ms,perf_drain_count,\
perf_max_ring_occupancy_percent,perf_throttle_events,\
perf_unthrottle_events,perf_malformed_records,perf_unknown_records,\
perf_discarded_bytes,perf_time_enabled_ns,perf_time_running_ns,\
perf_running_percent,incomplete,warnings,program_id,program_type,\
program_name,program_tag,program_samples,program_sample_percent,\
program_cpu_percent,program_inclusive_samples,\
program_inclusive_cpu_percent,program_kernel_samples,\
program_kernel_cpu_percent,program_direct_source_mapped_samples,\
program_direct_source_unmapped_samples,\
program_under_bpf_caller_source_mapped_samples,\
program_under_bpf_caller_source_unmapped_samples,\
program_direct_hotspot_samples_omitted_by_limit,\
program_under_bpf_hotspot_samples_omitted_by_limit,\
program_unaccounted_samples,pinned_paths,hotspot_kind,hotspot_rank,\
hotspot_samples,hotspot_sample_percent,hotspot_cpu_percent,\
jited_address,instruction_offset,file,line,column,source,kernel_ip,\
kernel_symbol,kernel_module,kernel_symbol_offset,kernel_symbol_kind,\
bpf_jited_address,bpf_instruction_offset,bpf_file,bpf_line,bpf_column,\
bpf_source,full_name";

/// Columns added after the original's and `full_name`.
const NEW_CSV_COLUMNS: [&str; 14] = [
    "program_interrupt_samples",
    "program_interrupt_cpu_percent",
    "program_loaded_after_seconds",
    "program_unloaded_after_seconds",
    "program_loaded_cpu_percent",
    "program_loaded_inclusive_cpu_percent",
    "program_dispatch_samples",
    "program_dispatch_cpu_percent",
    "jited_address_hex",
    "kernel_ip_hex",
    "bpf_jited_address_hex",
    "interrupt_samples",
    "program_ids",
    "pid",
];

fn header_text() -> String {
    format!("{ORIGINAL_CSV_HEADER},{}", NEW_CSV_COLUMNS.join(","))
}

fn header_len() -> usize {
    header_text().split(',').count()
}

#[test]
fn csv_header_is_derived_from_the_json_fields_unchanged() {
    let report = build(&profile(), &ReportOptions::default());
    assert_eq!(csv_header(&report).join(","), header_text());
    let parts = CsvParts::new();
    assert_eq!((parts.program, parts.direct, parts.kernel), (19, 9, 11));
}

/// What a test asks for: the report's limits and the view.
struct Case {
    opts: ReportOptions,
    view: View,
}

fn render_ctx(p: &Profile, c: &Case, ctx: Option<&SourceContexts>) -> String {
    render(&build(p, &c.opts), &c.view, ctx)
}

fn render_n(p: &Profile, c: &Case) -> String {
    render_ctx(p, c, None)
}

fn view(format: Format) -> Case {
    Case {
        opts: ReportOptions {
            limit: 20,
            line_limit: 2,
            merge_lines: true,
        },
        view: View {
            wide: false,
            extended: false,
            kernel_ip_detail: false,
            format,
        },
    }
}

#[test]
fn text_layout() {
    let p = profile();
    let out = render_n(&p, &view(Format::Text));
    let expected = [
        "Perf capture: actual=1.000s cpus=2 buffer=128pages/cpu total=1056768B drain=100ms occupancy=2.6% running=100.00%",
        "",
        "Perf records: drains=20 lost=0 throttle=0 unthrottle=0 malformed=0 unknown=0 discarded_bytes=0 incomplete=no",
        "",
        "CPU% = the program's own instructions, KERNEL_CPU% = helpers and kernel code it called, INCL_CPU% = both; 100% = one CPU; interrupts that arrived while it ran are not included.",
        "",
        "ID  TYPE        NAME      KERNEL_SAMPLES  INCL_SAMPLES  CPU%    KERNEL_CPU%  INCL_CPU%",
        "98  tracepoint  sys_exit               9  19            1.0000       0.9000  1.9000   ",
        " 7  xdp         small                  0  1             0.1000       0.0000  0.1000   ",
        "",
        "Breakdown of program 98 (sys_exit):",
        "",
        "SAMPLES  CPU%    FILE        LINE  SOURCE                                       ",
        "      5  0.5000  x.bpf.c      107  \t\tif (c)                                     ",
        "      2  0.2000  maps.bpf.h    16  \tif (val)                                    ",
        "      3  0.3000  -              -  Other eBPF samples not shown (--line-limit=2)",
        "",
        "Kernel/helper samples for program 98 (sys_exit):",
        "",
        "SAMPLES  CPU%    KIND        SYMBOL                                               MODULE  BPF_FILE  BPF_LINE  BPF_SOURCE ",
        "      6  0.6000  bpf_map     lookup_nulls_elem_raw (3 IPs)                        -       x.bpf.c         15  \tline_15();",
        "      2  0.2000  bpf_helper  bpf_get_current_pid_tgid                             -       x.bpf.c         77  \tline_77();",
        "      1  0.1000  other       Other under-eBPF samples not shown (--line-limit=2)  -       -                -  -          ",
        "",
        "Triggered by, program 98 (sys_exit):",
        "",
        "SAMPLES  CPU%    PID  TRIGGERED BY                          ",
        "      9  0.9000    7  ?                                     ",
        "      5  0.5000  207  ?                                     ",
        "      5  0.5000    -  Other tasks not shown (--line-limit=2)",
        "",
        "Breakdown of program 7 (small):",
        "",
        "SAMPLES  CPU%    FUNCTION  FILE  LINE  SOURCE",
        "      1  0.1000  main_fn   b.c      3  x;    ",
        "",
        "Triggered by, program 7 (small):",
        "",
        "SAMPLES  CPU%    PID  TRIGGERED BY",
        "      1  0.1000  103  ?           ",
    ]
    .join("\n");
    assert_eq!(out, expected);
}

/// Program 98's first stack ran in a pod's container; its other
/// samples carried no cgroup the profile could name.
fn in_a_pod() -> (Profile, crate::model::report::SampledWorkloads) {
    let mut p = profile();
    let path = format!(
        "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod{}.slice/cri-containerd-{}.scope",
        "0123abcd_0000_4000_8000_000000000001",
        "c1".repeat(32)
    );
    p.programs[0].stacks[0].cgroup = 5;
    p.cgroups.insert(5, path.clone());
    let mut w = crate::kernel::cgroups::workload(&path);
    if let Some(c) = w.container.as_mut() {
        c.name = Some("server".into());
    }
    if let Some(pod) = w.pod.as_mut() {
        pod.namespace = Some("payments".into());
        pod.name = Some("checkout-x2k4p".into());
    }
    let pid = p.programs[0].stacks[0].pid;
    let mut sampled = crate::model::report::SampledWorkloads::default();
    sampled.cgroups.insert(5, w.clone());
    sampled.tasks.insert(pid, w);
    (p, sampled)
}

#[test]
fn cgroup_table_and_json_name_containers_and_pods() {
    let (p, sampled) = in_a_pod();
    let case = view(Format::Text);
    let report = crate::profile::report::build_with(&p, &case.opts, &sampled);
    let out = render(&report, &case.view, None);
    let table: Vec<&str> = out
        .lines()
        .skip_while(|l| !l.starts_with("Cgroups, program 98"))
        .skip(2)
        .take(3)
        .collect();
    let path = &p.cgroups[&5];
    assert_eq!(
        table[0].trim_end(),
        "SAMPLES  CPU%    CGROUP_ID  CONTAINER  POD                      CGROUP"
    );
    assert!(
        table[1].starts_with("     17  1.7000          0  -          -                        ?"),
        "{out}"
    );
    assert_eq!(
        table[2].trim_end(),
        format!("      2  0.2000          5  server     payments/checkout-x2k4p  {path}")
    );
    let json = render(
        &report,
        &View {
            format: Format::Json { pretty: false },
            ..case.view
        },
        None,
    );
    let container = format!(
        r#""container":{{"runtime":"containerd","id":"{}","name":"server"}},"pod":{{"uid":"0123abcd-0000-4000-8000-000000000001","namespace":"payments","name":"checkout-x2k4p","qos":"Burstable"}}"#,
        "c1".repeat(32)
    );
    // The cgroup and the task that ran in it name both; the rest null.
    assert_eq!(json.matches(&container).count(), 2, "{json}");
    assert!(
        json.contains(
            r#""id":0,"path":"?","samples":17,"cpu_percent":1.7,"container":null,"pod":null}"#
        ),
        "{json}"
    );
}

#[test]
fn cells_fall_back_to_ids() {
    let (_, sampled) = in_a_pod();
    let mut w = sampled.cgroups[&5].clone();
    assert_eq!(container_cell(w.container.as_ref()), "server");
    assert_eq!(pod_cell(w.pod.as_ref()), "payments/checkout-x2k4p");
    if let Some(c) = w.container.as_mut() {
        c.name = None;
    }
    if let Some(p) = w.pod.as_mut() {
        p.name = None;
    }
    assert_eq!(container_cell(w.container.as_ref()), "c1".repeat(6));
    assert_eq!(
        pod_cell(w.pod.as_ref()),
        "0123abcd-0000-4000-8000-000000000001"
    );
    assert_eq!(
        (container_cell(None), pod_cell(None)),
        ("-".into(), "-".into())
    );
}

#[test]
fn text_wide_extended_ip_detail() {
    let p = profile();
    let v = Case {
        opts: ReportOptions {
            limit: 1,
            line_limit: 4,
            merge_lines: false,
        },
        view: View {
            wide: true,
            extended: true,
            kernel_ip_detail: true,
            format: Format::Text,
        },
    };
    let out = render_n(&p, &v);
    assert!(out.contains(
        "ID  TYPE        NAME      SAMPLES  KERNEL_SAMPLES  INCL_SAMPLES  CPU%    KERNEL_CPU%  INCL_CPU%  TAG               PINNED"
    ));
    assert!(!out.contains("program 7"));
    assert!(out.contains("SAMPLES  CPU%    JIT_ADDR  FILE                 LINE  SOURCE"));
    assert!(!out.contains("Other eBPF samples"));
    assert!(out.contains(
        "      1  0.1000  -         -                       -  [no BTF/JIT source metadata]"
    ));
    assert!(out.contains("lookup_nulls_elem_raw+0x10"));
    assert!(out.contains("0xffffffff81600010        0x10  0xffffffffc000100f"));
    assert!(out.contains("[no BPF caller source metadata]"));
    assert!(out.contains("Other under-eBPF samples not shown (--line-limit=4)"));
}

#[test]
fn empty_profile_text_and_csv_keep_telemetry() {
    let mut p = profile();
    p.programs.clear();
    p.telemetry.warnings = vec!["perf dropped 3 samples; CPU percentages are lower bounds".into()];
    assert_eq!(
        render_n(&p, &view(Format::Text)),
        "Perf capture: actual=1.000s cpus=2 buffer=128pages/cpu total=1056768B drain=100ms occupancy=2.6% running=100.00%\n\
Perf records: drains=20 lost=0 throttle=0 unthrottle=0 malformed=0 unknown=0 discarded_bytes=0 incomplete=no\n\
Warning: perf dropped 3 samples; CPU percentages are lower bounds\n\
No BPF JIT samples captured."
    );
    let csv = render_n(&p, &view(Format::Csv));
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0], header_text());
    assert!(lines[1].starts_with(
        "auto,cpu-clock,1.0,1000,20,2,200,0,189,11,189,0,0,0,0,200,9,180,8,fp,1.0,0;1,128,524288,1056768,100,20,2.64,0,0,0,0,0,2000,2000,100.0,false,perf dropped 3 samples; CPU percentages are lower bounds,"
    ));
    assert_eq!(lines[1].split(',').count(), header_len());
}

#[test]
fn devmode_source_context_sections() {
    use crate::model::source::{ContextRow, DumpContext};
    use std::collections::HashMap;
    let p = profile();
    let row = |kind, line, src: &str| ContextRow {
        kind,
        file: "/src/dir/x.bpf.c".into(),
        line,
        source: Some(src.into()),
        resolved_path: Some("/tree/x.bpf.c".into()),
    };
    let mut by_program = HashMap::new();
    by_program.insert(
        98,
        DumpContext {
            rows: vec![row("mapped", 76, "int f()"), row("context", 77, "{")],
            any_resolved: true,
            ..Default::default()
        },
    );
    by_program.insert(7, DumpContext::default());
    let ctx = SourceContexts {
        devdir: "/tree".into(),
        by_program,
    };
    let out = render_ctx(&p, &view(Format::Text), Some(&ctx));
    assert!(out.contains(
        "\n\nSource context for program 98:\n\nKIND     FILE     LINE  SOURCE \nmapped   x.bpf.c    76  int f()\ncontext  x.bpf.c    77  {      \n\nBreakdown of program 7"
    ), "{out}");
    assert!(out.ends_with("\n\nSource context for program 7: no matching source context found."));
    let json = render_ctx(&p, &view(Format::Json { pretty: false }), Some(&ctx));
    assert!(json.contains(
        r#""source_context":{"enabled":true,"devdir":"/tree","unresolved_files":[],"ambiguous_files":[],"source_mismatches":[],"rows":[{"kind":"mapped","file":"/src/dir/x.bpf.c","line":76,"source":"int f()","resolved_path":"/tree/x.bpf.c"},"#
    ));
    // CSV ignores --devmode.
    assert_eq!(
        render_ctx(&p, &view(Format::Csv), Some(&ctx)),
        render_n(&p, &view(Format::Csv))
    );
}

#[test]
fn hints_name_program_line_evidence_threshold_and_fix() {
    let h = crate::model::profile::Hint {
        kind: "output_cost",
        program_id: 5,
        program: "p".into(),
        file: Some("/s/x.c".into()),
        line: Some(7),
        source: Some("bpf_ringbuf_output(&rb, &e, sizeof(e), 0)；".into()),
        figure: 37.5,
        threshold: 20.0,
        unit: "%",
        evidence: "37.50% of the program's samples".into(),
        fix: "batch",
    };
    assert_eq!(
        hints_text(std::slice::from_ref(&h)),
        "Hints:\n- output cost in program 5 (p) at x.c:7 `bpf_ringbuf_output(&rb, &e, sizeof(e), 0)；`: 37.50% of the program's samples (threshold 20%).\n  Fix: batch."
    );
    let j = json::to_string(&hint_json(&h), false);
    assert!(
        j.starts_with(
            r#"{"kind":"output_cost","program_id":5,"program":"p","file":"/s/x.c","line":7,"#
        ),
        "{j}"
    );
    assert!(j.ends_with(r#""figure":37.5,"threshold":20.0,"unit":"%","evidence":"37.50% of the program's samples","fix":"batch"}"#), "{j}");
}

#[test]
fn json_keys_and_values() {
    let p = profile();
    let out = render_n(&p, &view(Format::Json { pretty: false }));
    assert!(out.starts_with(
        r#"{"kind":"profile","items":[{"id":98,"type":"tracepoint","name":"sys_exit","tag":"fc3eb0ef05553d4b","samples":10,"sample_percent":5.0,"cpu_percent":1.0,"inclusive_samples":19,"inclusive_cpu_percent":1.9,"direct_source_mapped_samples":9,"direct_source_unmapped_samples":1,"under_bpf_caller_source_mapped_samples":8,"under_bpf_caller_source_unmapped_samples":1,"direct_hotspot_samples_omitted_by_limit":3,"under_bpf_hotspot_samples_omitted_by_limit":4,"unaccounted_samples":0,"pinned_paths":[],"hotspots":[{"samples":5,"sample_percent":50.0,"cpu_percent":0.5,"jited_address":32,"instruction_offset":856,"file":"/src/dir/x.bpf.c","line":107,"column":3,"source":"\t\tif (c)","function":"main_fn","jited_address_hex":"0x20"},"#
    ));
    assert!(out.contains(
        r#""kernel_samples":9,"kernel_cpu_percent":0.9,"kernel_hotspots":[{"samples":3,"sample_percent":33.33,"cpu_percent":0.3,"ip":18446744071585136656,"symbol":"lookup_nulls_elem_raw","module":null,"symbol_offset":16,"symbol_kind":"bpf_map","bpf_jited_address":18446744072635813903,"bpf_instruction_offset":120,"bpf_file":"/src/dir/x.bpf.c","bpf_line":15,"bpf_column":9,"bpf_source":"\tline_15();","bpf_function":null,"ip_hex":"0xffffffff81600010","bpf_jited_address_hex":"0xffffffffc000100f"},"#
    ));
    // Who pays: every task (not cut by --line-limit); no cgroup IDs here.
    assert!(out.contains(
        r#""tasks":[{"pid":7,"comm":"?","samples":9,"cpu_percent":0.9,"container":null,"pod":null},{"pid":207,"comm":"?","samples":5,"cpu_percent":0.5,"container":null,"pod":null},{"pid":116,"comm":"?","samples":2,"cpu_percent":0.2,"container":null,"pod":null},{"pid":177,"comm":"?","samples":2,"cpu_percent":0.2,"container":null,"pod":null},{"pid":100,"comm":"?","samples":1,"cpu_percent":0.1,"container":null,"pod":null}],"cgroups":[],"hints":[],"full_name":"sys_exit","interrupt_samples":0,"interrupt_cpu_percent":0.0,"interrupts":[],"loaded_after_seconds":null,"unloaded_after_seconds":null,"loaded_cpu_percent":null,"loaded_inclusive_cpu_percent":null,"dispatch_samples":null,"dispatch_cpu_percent":null}"#
    ));
    assert!(out.ends_with(
        r#""metadata":{"requested_event":"auto","selected_event":"cpu-clock","duration":1.0,"frequency":1000,"limit":20,"line_limit":2,"total_samples":200,"lost_samples":0,"unresolved_samples":189,"bpf_jit_samples":11,"non_bpf_samples":189,"selected_program_samples":0,"other_bpf_samples":0,"source_mapped_samples":10,"source_unmapped_samples":1,"callchain_samples":200,"kernel_attributed_samples":9,"kernel_unattributed_samples":180,"kernel_symbolized_samples":8,"call_graph":"fp","actual_duration":1.0,"perf_cpus":[0,1],"perf_buffer_pages_per_cpu":128,"perf_buffer_bytes_per_cpu":524288,"perf_buffer_bytes_total":1056768,"perf_drain_interval_ms":100,"perf_drain_count":20,"perf_max_ring_occupancy_percent":2.64,"perf_throttle_events":0,"perf_unthrottle_events":0,"perf_malformed_records":0,"perf_unknown_records":0,"perf_discarded_bytes":0,"perf_time_enabled_ns":2000,"perf_time_running_ns":2000,"perf_running_percent":100.0,"incomplete":false,"warnings":[],"interrupt_samples":0,"program_ids":[],"pid":null}}"#
    ));
}

/// [`profile`] with line 107 in two line records of 2 samples each, below
/// line 77's one record of 3.
fn split_line_profile() -> Profile {
    use crate::profile::aggregate::tests::hs;
    let mut p = profile();
    p.programs[0].hotspots = vec![
        hs(3, "/src/dir/x.bpf.c", 77, "\tu64 id = f();", 0x10),
        hs(2, "/src/dir/x.bpf.c", 107, "\t\tif (c)", 0x20),
        crate::model::profile::Hotspot {
            samples: 1,
            ..Default::default()
        },
        hs(2, "/src/dir/maps.bpf.h", 16, "\tif (val)", 0x30),
        hs(2, "/src/dir/x.bpf.c", 107, "\t\tif (c)", 0x48),
    ];
    p
}

#[test]
fn one_row_per_source_line_unless_wide() {
    let p = split_line_profile();
    let case = |format, wide: bool| Case {
        opts: ReportOptions {
            limit: 20,
            line_limit: 2,
            merge_lines: !wide,
        },
        view: View {
            wide,
            extended: false,
            kernel_ip_detail: false,
            format,
        },
    };
    // The split line's 4 samples rank it first, on one row.
    let text = render_n(&p, &case(Format::Text, false));
    let table: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.starts_with("Breakdown of program 98"))
        .skip(3)
        .take(3)
        .map(str::trim_end)
        .collect();
    assert_eq!(
        table,
        [
            "      4  0.4000  x.bpf.c   107  \t\tif (c)",
            "      3  0.3000  x.bpf.c    77  \tu64 id = f();",
            "      3  0.3000  -           -  Other eBPF samples not shown (--line-limit=2)",
        ],
        "{text}"
    );
    // -w keeps one row per line record, each at its own address.
    let mut all = case(Format::Text, true);
    all.opts.line_limit = 0;
    let wide = render_n(&p, &all);
    assert_eq!(
        wide.matches("/src/dir/x.bpf.c      107").count(),
        2,
        "{wide}"
    );
    assert!(wide.contains("0x48"), "{wide}");
    let every = |format, wide: bool| {
        let mut c = case(format, wide);
        c.opts.line_limit = 0;
        render_n(&p, &c)
    };
    let json = |wide: bool| every(Format::Json { pretty: false }, wide);
    let csv = |wide: bool| every(Format::Csv, wide);
    let merged = json(false);
    assert_eq!(merged.matches(r#""line":107,"#).count(), 1, "{merged}");
    assert!(
        merged.contains(r#"{"samples":4,"sample_percent":40.0,"cpu_percent":0.4,"jited_address":"#)
    );
    assert_eq!(json(true).matches(r#""line":107,"#).count(), 2);
    let rows_of_107 = |t: String| {
        t.lines()
            .filter(|l| l.contains(",bpf,") && l.contains(",107,"))
            .count()
    };
    assert_eq!(rows_of_107(csv(false)), 1);
    assert_eq!(rows_of_107(csv(true)), 2);
}

#[test]
fn program_mode_selects_one_and_counts_others() {
    let mut p = profile();
    p.program_ids = vec![7];
    let out = render_n(&p, &view(Format::Json { pretty: false }));
    assert!(out.contains(r#""items":[{"id":7,"#));
    assert!(!out.contains(r#""id":98"#));
    assert!(out.contains(
        r#""limit":1,"line_limit":2,"total_samples":200,"lost_samples":0,"unresolved_samples":189,"bpf_jit_samples":11,"non_bpf_samples":189,"selected_program_samples":1,"other_bpf_samples":10,"source_mapped_samples":1,"source_unmapped_samples":0,"#
    ));
    p.program_ids = vec![12345];
    assert!(render_n(&p, &view(Format::Text)).ends_with("No BPF JIT samples captured."));
}

#[test]
fn csv_rows() {
    let p = profile();
    let csv = render_n(&p, &view(Format::Csv));
    let rows: Vec<&str> = csv.lines().skip(1).collect();
    // program 98: 2 direct + 2 kernel rows; program 7: 1 direct row.
    assert_eq!(rows.len(), 5);
    let tail = |r: &str| r.split(',').skip(38).collect::<Vec<_>>().join(",");
    assert_eq!(
        tail(rows[0]),
        "98,tracepoint,sys_exit,fc3eb0ef05553d4b,10,5.0,1.0,19,1.9,9,0.9,9,1,8,1,3,4,0,,bpf,1,5,50.0,0.5,32,856,/src/dir/x.bpf.c,107,3,\t\tif (c),,,,,,,,,,,,sys_exit,0,0.0,,,,,,,0x20,,,0,,"
    );
    assert_eq!(
        tail(rows[2]),
        "98,tracepoint,sys_exit,fc3eb0ef05553d4b,10,5.0,1.0,19,1.9,9,0.9,9,1,8,1,3,4,0,,kernel,1,3,33.33,0.3,,,,,,,18446744071585136656,lookup_nulls_elem_raw,,16,bpf_map,18446744072635813903,120,/src/dir/x.bpf.c,15,9,\tline_15();,sys_exit,0,0.0,,,,,,,,0xffffffff81600010,0xffffffffc000100f,0,,"
    );
    assert!(tail(rows[4]).starts_with(
        "7,xdp,small,aa,1,0.5,0.1,1,0.1,0,0.0,1,0,0,0,0,0,0,/sys/fs/bpf/p;/sys/fs/bpf/q,bpf,1,"
    ));
    for r in &rows {
        assert_eq!(r.split(',').count(), header_len(), "{r}");
    }
}

/// The `%THIS` cells of a text table with that header, Other row included.
pub(crate) fn this_column(table: &str) -> Vec<f64> {
    let mut lines = table.lines();
    let Some(head) = lines.find(|l| l.contains("%THIS")) else {
        return Vec::new();
    };
    let col = head.split_whitespace().position(|h| h == "%THIS").unwrap();
    lines
        .take_while(|l| !l.trim().is_empty())
        .map(|l| l.split_whitespace().nth(col).unwrap().parse().unwrap())
        .collect()
}

#[test]
fn instructions_this_adds_up_to_100_with_an_other_row() {
    use crate::profile::report::NativeRows;
    // The table a text report is made for keeps only the shown rows: the
    // Other row is still a share of all the program's direct samples.
    for rows in [NativeRows::Table, NativeRows::All] {
        for limit in [0, 1, 2, 3, 5] {
            let (_, r) = crate::profile::report::tests::annotated_as(limit, rows);
            let a = r.programs[0].native.as_ref().unwrap();
            let t = instructions_table(a, false, limit);
            let this = this_column(&t);
            assert!(!this.is_empty(), "{t}");
            let sum: f64 = this.iter().sum();
            assert!((sum - 100.0).abs() < 1e-9, "{limit} {rows:?}: {sum}\n{t}");
        }
    }
    let (_, r) = crate::profile::report::tests::annotated_as(3, NativeRows::Table);
    let t = instructions_table(r.programs[0].native.as_ref().unwrap(), false, 3);
    assert!(t.ends_with("      3  30.00  -              -  Other native instructions not shown (--line-limit=3)  -          "), "{t}");
}

fn annotated_view(format: Format) -> String {
    let (_, r) = crate::profile::report::tests::annotated(2);
    render(&r, &view(format).view, None)
}

#[test]
fn text_instructions_table() {
    let out = annotated_view(Format::Text);
    let expected = [
        "Instructions of program 98 (sys_exit):",
        "",
        "SAMPLES  %THIS  FUNCTION  OFFSET  INSTRUCTION                                           FILE:LINE  ",
        "      3  30.00  main_fn    +0x20  call bpf_map_lookup_elem                              x.bpf.c:107",
        "      2  20.00  main_fn    +0x10  mov eax, 0x1                                          x.bpf.c:77 ",
        "      5  50.00  -              -  Other native instructions not shown (--line-limit=2)  -          ",
        "",
        "Kernel/helper samples for program 98 (sys_exit):",
    ]
    .join("\n");
    assert!(out.contains(&expected), "{out}");
    // After the line breakdown; program 7 has no sampled instruction
    // and so no table, even though its code was not read.
    assert!(out.contains("--line-limit=2)\n\nInstructions of program 98"));
    assert!(!out.contains("Instructions of program 7"));
    // Roles and missing text, full paths with -w.
    let (_, r) = crate::profile::report::tests::annotated(0);
    let a = r.programs[0].native.as_ref().unwrap();
    assert_eq!(
        instructions_table(a, true, 0),
        [
            "SAMPLES  %THIS  FUNCTION  OFFSET  INSTRUCTION                     FILE:LINE             ",
            "      3  30.00  main_fn    +0x20  call bpf_map_lookup_elem        /src/dir/x.bpf.c:107  ",
            "      2  20.00  main_fn    +0x10  mov eax, 0x1                    /src/dir/x.bpf.c:77   ",
            "      2  20.00  main_fn    +0x24  add rax, 0x1                    /src/dir/x.bpf.c:107  ",
            "      1  10.00  main_fn     +0x2  push rbp [prologue]             -                     ",
            "      1  10.00  main_fn    +0x30  leave [epilogue]                /src/dir/maps.bpf.h:16",
            "      1  10.00  main_fn    +0x31  jmp __x86_return_thunk [thunk]  /src/dir/maps.bpf.h:16",
        ]
        .join("\n")
    );
    let mut a = a.clone();
    a.unavailable = Some("the kernel withholds it".into());
    let mut all = a.all.to_vec();
    all[0].row.asm = None;
    a.all = all.into();
    let p = &r.programs[0];
    assert_eq!(
        instructions_heading(p, &a),
        "Instructions of program 98 (sys_exit):\nNo instruction text: the kernel withholds it"
    );
    assert!(instructions_table(&a, false, 0).contains("  +0x20  -  "));
}

/// What writing the JSON rows of `--annotate` costs, for the README:
/// the annotated test report with 1,850 sampled instructions (as many
/// as a 5 s profile of the hot fixture lists), rendered 300 times.
/// `cargo test --release --lib -- --ignored --nocapture json_native_cost`.
#[test]
#[ignore]
fn json_native_cost() {
    let (_, mut r) = crate::profile::report::tests::annotated(0);
    let a = r.programs[0].native.as_mut().unwrap();
    let rows: Vec<_> = a.all.iter().cycle().take(1850).cloned().collect();
    a.all = std::sync::Arc::new(rows);
    let v = view(Format::Json { pretty: false }).view;
    let mut out = String::new();
    let mut times = Vec::new();
    for _ in 0..300 {
        let t = std::time::Instant::now();
        out = render(&r, &v, None);
        times.push(t.elapsed().as_secs_f64() * 1e3);
    }
    // What was timed is the whole document, every row in it.
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        doc["items"][0]["native"].as_array().map(Vec::len),
        Some(1850)
    );
    let bytes = out.len();
    times.sort_by(f64::total_cmp);
    let median = times[times.len() / 2];
    eprintln!(
        "1850 native rows, {bytes} bytes: median {median:.3} ms a render, {:.0} ns a row, lowest {:.3} ms",
        median * 1e6 / 1850.0,
        times[0]
    );
}

#[test]
fn json_native_lists_every_instruction_last() {
    let out = annotated_view(Format::Json { pretty: false });
    assert!(out.contains(
        r#""loaded_inclusive_cpu_percent":null,"dispatch_samples":null,"dispatch_cpu_percent":null,"native":[{"function":"main_fn","offset":32,"asm":"call bpf_map_lookup_elem","file":"/src/dir/x.bpf.c","line":107,"samples":3,"percent":30.0},{"function":"main_fn","offset":16,"asm":"mov eax, 0x1","file":"/src/dir/x.bpf.c","line":77,"samples":2,"percent":20.0},"#
    ), "{out}");
    assert!(out.contains(
        r#"{"function":"main_fn","offset":2,"asm":"push rbp","file":null,"line":null,"samples":1,"percent":10.0},"#
    ));
    // Every sampled instruction despite --line-limit=2, and the
    // program's hints know of the JIT code only with --annotate.
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    let native = doc["items"][0]["native"].as_array().unwrap();
    assert_eq!(native.len(), 6);
    let sum: u64 = native.iter().map(|n| n["samples"].as_u64().unwrap()).sum();
    assert_eq!(sum, doc["items"][0]["samples"].as_u64().unwrap());
    assert_eq!(doc["items"][1]["native"], serde_json::json!([]));
    // Without --annotate the document has no native key.
    let plain = render_n(&profile(), &view(Format::Json { pretty: false }));
    assert!(!plain.contains("\"native\""));
}

/// The fields of a CSV line (quoted fields may hold commas).
fn csv_fields(line: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                chars.next();
                out.last_mut().unwrap().push('"');
            }
            ('"', _) => quoted = !quoted,
            (',', false) => out.push(String::new()),
            (c, _) => out.last_mut().unwrap().push(c),
        }
    }
    out
}

#[test]
fn csv_native_rows_and_columns_only_when_annotated() {
    let out = annotated_view(Format::Csv);
    let mut lines = out.lines();
    let header = lines.next().unwrap();
    // After every other column, the original's and the new ones.
    assert_eq!(
        header,
        format!("{},native_function,native_offset,native_asm", header_text())
    );
    let columns: Vec<&str> = header.split(',').collect();
    let at = |name: &str| columns.iter().position(|c| *c == name).unwrap();
    let rows: Vec<&str> = lines.collect();
    // 98: 2 bpf + 2 kernel + 6 native rows; 7: 1 bpf row.
    assert_eq!(rows.len(), 11);
    for r in &rows {
        assert_eq!(csv_fields(r).len(), columns.len(), "{r}");
    }
    let part = |r: &str, from: &str, to: &str| csv_fields(r)[at(from)..=at(to)].join(",");
    assert_eq!(
        part(rows[4], "program_id", "full_name"),
        "98,tracepoint,sys_exit,fc3eb0ef05553d4b,10,5.0,1.0,19,1.9,9,0.9,9,1,8,1,3,4,0,,native,1,3,30.0,0.3,32,,/src/dir/x.bpf.c,107,,\t\tif (c),,,,,,,,,,,,sys_exit"
    );
    assert_eq!(
        part(rows[4], "jited_address_hex", "native_asm"),
        "0x20,,,0,,,main_fn,32,call bpf_map_lookup_elem"
    );
    assert!(part(rows[0], "program_id", "hotspot_samples").starts_with(
        "98,tracepoint,sys_exit,fc3eb0ef05553d4b,10,5.0,1.0,19,1.9,9,0.9,9,1,8,1,3,4,0,,bpf,1,5"
    ));
    assert!(rows[0].ends_with(",,,"), "{}", rows[0]);
    assert!(
        rows[9].ends_with(",main_fn,49,jmp __x86_return_thunk"),
        "{}",
        rows[9]
    );
    assert_eq!(part(rows[10], "full_name", "full_name"), "small");
    assert!(rows[10].ends_with(",,,"), "{}", rows[10]);
    // Without --annotate the CSV is the original's and the new columns.
    let plain = render_n(&profile(), &view(Format::Csv));
    assert_eq!(plain.lines().next(), Some(header_text().as_str()));
}

/// Program 98 with 4 interrupt samples (3 timer, 1 device) while its
/// line 107 ran, unloaded 0.5 s into a capture Ctrl-C ended after
/// 1.5 s of 10, under a name longer than the kernel's.
fn eventful() -> Profile {
    use crate::model::profile::InterruptHotspot;
    let mut p = profile();
    p.duration = 10.0;
    p.telemetry.actual_duration = 1.5;
    p.telemetry.cancelled = true;
    let q = &mut p.programs[0];
    q.full_name = Some(LONG.into());
    q.unloaded_after = Some(0.5);
    q.interrupt_samples = 4;
    let row = |samples, entry: &str| InterruptHotspot {
        samples,
        entry: entry.into(),
        bpf_jited_address: Some(0xffff_ffff_c000_1020),
        bpf_file: Some("/src/dir/x.bpf.c".into()),
        bpf_line: Some(107),
        bpf_source: Some("\t\tif (c)".into()),
        caller_mapped: true,
        ..Default::default()
    };
    q.interrupts = vec![
        row(1, "asm_common_interrupt"),
        row(3, "asm_sysvec_apic_timer_interrupt"),
    ];
    p.counters.interrupt_samples = 4;
    p
}

#[test]
fn interrupts_lifetimes_names_and_early_end_in_text() {
    let p = eventful();
    let out = render_n(&p, &view(Format::Text));
    let wants: Vec<String> = vec![
        "Program 98 (handle_sys_exit_event) was unloaded 0.50 s into the capture; while loaded: CPU% 2.0000, INCL_CPU% 3.8000.".into(),
        "Breakdown of program 98 (handle_sys_exit_event):".into(),
        "Kernel/helper samples for program 98 (handle_sys_exit_event):".into(),
        "Triggered by, program 98 (handle_sys_exit_event):".into(),
        [
            "Interrupts while program 98 (handle_sys_exit_event) ran (not its calls):",
            "",
            "SAMPLES  CPU%    ENTRY                            BPF_FILE  BPF_LINE  BPF_SOURCE",
            "      3  0.2000  asm_sysvec_apic_timer_interrupt  x.bpf.c        107  \t\tif (c)  ",
            "      1  0.0667  asm_common_interrupt             x.bpf.c        107  \t\tif (c)  ",
        ]
        .join("\n"),
    ];
    for want in &wants {
        assert!(out.contains(want.as_str()), "{want}\n---\n{out}");
    }
    assert!(
        out.ends_with("\n\ncapture ended early after 1.50 s of 10 s"),
        "{out}"
    );
    // A line limit of one leaves the device interrupt to an Other row.
    let mut v = view(Format::Text);
    v.opts.line_limit = 1;
    let out = render_n(&p, &v);
    assert!(
        out.contains("      1  0.0667  Other interrupt samples not shown (--line-limit=1)"),
        "{out}"
    );
    // Not cancelled: no such line; no samples at all: still said.
    let mut done = eventful();
    done.telemetry.cancelled = false;
    assert!(!render_n(&done, &view(Format::Text)).contains("ended early"));
    let mut empty = eventful();
    empty.programs.clear();
    assert!(render_n(&empty, &view(Format::Text))
        .ends_with("No BPF JIT samples captured.\ncapture ended early after 1.50 s of 10 s"));
}

#[test]
fn interrupts_and_lifetime_in_json() {
    let mut p = eventful();
    p.program_ids = vec![98];
    p.pid = Some(4242);
    let out = render_n(&p, &view(Format::Json { pretty: false }));
    assert!(out.contains(
        r#""full_name":"handle_sys_exit_event","interrupt_samples":4,"interrupt_cpu_percent":0.2667,"interrupts":[{"samples":3,"sample_percent":75.0,"cpu_percent":0.2,"entry":"asm_sysvec_apic_timer_interrupt","bpf_jited_address":18446744072635813920,"bpf_instruction_offset":null,"bpf_file":"/src/dir/x.bpf.c","bpf_line":107,"bpf_column":null,"bpf_source":"\t\tif (c)","bpf_function":null,"bpf_jited_address_hex":"0xffffffffc0001020"},"#
    ), "{out}");
    assert!(out.contains(
        r#""loaded_after_seconds":null,"unloaded_after_seconds":0.5,"loaded_cpu_percent":2.0,"loaded_inclusive_cpu_percent":3.8,"dispatch_samples":null,"dispatch_cpu_percent":null}"#
    ), "{out}");
    assert!(
        out.ends_with(r#""interrupt_samples":4,"program_ids":[98],"pid":4242}}"#),
        "{out}"
    );
}

/// A BTF name longer than the kernel's 15-byte `name`.
const LONG: &str = "handle_sys_exit_event";

#[test]
fn json_program_ends_with_full_name() {
    let mut p = profile();
    p.programs[0].full_name = Some(LONG.into());
    p.programs[1].full_name = None;
    let v = view(Format::Json { pretty: false });
    let Json::Obj(doc) = to_json(&build(&p, &v.opts), None) else {
        panic!("document is an object")
    };
    let Some((_, Json::Arr(items))) = doc.iter().find(|(k, _)| k == "items") else {
        panic!("no items")
    };
    let program = |i: usize| match &items[i] {
        Json::Obj(fields) => fields.clone(),
        other => panic!("program {i} is {other:?}"),
    };
    let keys = |i: usize| -> Vec<String> {
        program(i)
            .into_iter()
            .map(|(k, _)| k.into_owned())
            .collect()
    };
    let value = |i: usize, key: &str| {
        program(i)
            .into_iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v)
    };
    let original = [
        "id",
        "type",
        "name",
        "tag",
        "samples",
        "sample_percent",
        "cpu_percent",
        "inclusive_samples",
        "inclusive_cpu_percent",
        "direct_source_mapped_samples",
        "direct_source_unmapped_samples",
        "under_bpf_caller_source_mapped_samples",
        "under_bpf_caller_source_unmapped_samples",
        "direct_hotspot_samples_omitted_by_limit",
        "under_bpf_hotspot_samples_omitted_by_limit",
        "unaccounted_samples",
        "pinned_paths",
        "hotspots",
        "kernel_samples",
        "kernel_cpu_percent",
        "kernel_hotspots",
        "tasks",
        "cgroups",
        "hints",
        "full_name",
        "interrupt_samples",
        "interrupt_cpu_percent",
        "interrupts",
        "loaded_after_seconds",
        "unloaded_after_seconds",
        "loaded_cpu_percent",
        "loaded_inclusive_cpu_percent",
        "dispatch_samples",
        "dispatch_cpu_percent",
    ];
    assert_eq!(keys(0), original);
    assert_eq!(keys(1), original);
    assert_eq!(value(0, "name"), Some(Json::from("sys_exit")));
    assert_eq!(value(0, "full_name"), Some(Json::from(LONG)));
    // Without BTF the kernel's name is all there is.
    assert_eq!(value(1, "full_name"), Some(Json::from("small")));
    let out = render_n(&p, &v);
    assert!(out.contains(&format!(
        r#""hints":[],"full_name":"{LONG}","interrupt_samples":0,"#
    )));
}

#[test]
fn csv_new_columns_follow_the_original_ones() {
    let header = header_text();
    let columns: Vec<&str> = header.split(',').collect();
    let at = |name: &str| columns.iter().position(|c| *c == name).unwrap();
    assert!(
        ORIGINAL_CSV_HEADER.ends_with(",bpf_source,full_name"),
        "appended after the original's columns"
    );
    assert_eq!(&columns[at("full_name") + 1..], NEW_CSV_COLUMNS);
    let mut p = profile();
    p.programs[0].full_name = Some(LONG.into());
    p.programs[1].full_name = None;
    p.program_ids = vec![98, 7];
    p.pid = Some(4242);
    let csv = render_n(&p, &view(Format::Csv));
    let mut lines = csv.lines();
    assert_eq!(lines.next(), Some(header.as_str()));
    let rows: Vec<Vec<&str>> = lines.map(|r| r.split(',').collect()).collect();
    let names: Vec<&str> = rows.iter().map(|r| r[at("full_name")]).collect();
    assert_eq!(names, [LONG, LONG, LONG, LONG, "small"]);
    for r in &rows {
        assert_eq!(r.len(), header_len());
        assert_eq!(&r[at("program_ids")..], ["98;7", "4242"]);
    }

    p.programs.clear();
    let csv = render_n(&p, &view(Format::Csv));
    let row = csv.lines().nth(1).expect("telemetry row");
    assert!(row.ends_with(",0,98;7,4242"), "{row}");
    assert_eq!(row.split(',').count(), header_len());
}

#[test]
fn dispatch_tied_to_a_program_shows_in_every_format() {
    let p = profile();
    let c = view(Format::Text);
    let mut report = build(&p, &c.opts);
    let text = render(&report, &c.view, None);
    assert!(!text.contains("DISPATCH"), "no column before it is tied");
    for r in &mut report.programs {
        r.dispatch_samples = Some(if r.id == 98 { 12 } else { 0 });
        r.dispatch_cpu_percent = Some(if r.id == 98 { 1.2 } else { 0.0 });
    }
    let text = render(&report, &c.view, None);
    let header = text
        .lines()
        .find(|l| l.starts_with("ID "))
        .expect("program table header");
    assert!(header.contains("INCL_CPU%  DISPATCH_CPU%"), "{text}");
    let row = text.lines().find(|l| l.starts_with("98 ")).expect("row 98");
    assert!(row.trim_end().ends_with("1.2000"), "{row}");
    let json = render(&report, &view(Format::Json { pretty: false }).view, None);
    assert!(
        json.contains(r#""dispatch_samples":12,"dispatch_cpu_percent":1.2}"#),
        "{json}"
    );
    let csv = render(&report, &view(Format::Csv).view, None);
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap_or_default().split(',').collect();
    let at = header
        .iter()
        .position(|c| *c == "program_dispatch_samples")
        .expect("dispatch column");
    let row: Vec<&str> = lines.next().unwrap_or_default().split(',').collect();
    let id = header.iter().position(|c| *c == "program_id").expect("id");
    assert_eq!((row[id], row[at], row[at + 1]), ("98", "12", "1.2"));
}
