//! The listings' text, JSON and CSV on synthetic objects.

use super::activity::ended_early;
use super::*;
use crate::activity::ActivityRow;
use crate::model::{
    AttachPoint, BtfObject, Holder, Keepers, Link, LinkFields, Map, MapFields, ProgFields, Program,
};

#[test]
fn grouped_widths_are_the_cells_lengths() {
    let numbers = [0u64, 7, 999, 1_000, 65_535, 999_999, 1_000_000, u64::MAX];
    let mut rows = Vec::new();
    for (i, &n) in numbers.iter().enumerate() {
        let mut p = prog(n as u32);
        p.run_count = n;
        p.run_time_ns = n.wrapping_mul(3);
        p.xlated_size = n as u32;
        p.jited_size = (n / 7) as u32;
        p.memlock_bytes = (i % 2 == 0).then_some(n);
        p.full_name = ["", "näme_ünïcode", "a_very_long_full_btf_function_name"][i % 3].into();
        p.tag = if i == 1 { Default::default() } else { p.tag };
        rows.push(ActivityRow {
            prog: p,
            run_count_delta: n / 3,
            run_time_ns_delta: n / 2,
            recursion_misses_delta: Some(n % 1_001),
        });
    }
    for d in [0.25, 1.0, 3.7, 1e-9] {
        for cols in [
            ActivityCol::shown(true, true),
            ActivityCol::shown(false, true),
        ] {
            for r in &rows {
                for c in &cols {
                    let text = c.cell(r, d, &crate::render::num::commas);
                    assert_eq!(
                        c.grouped_width(r, d),
                        text.chars().count(),
                        "{c:?} {text:?}"
                    );
                }
            }
        }
    }
}

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
        recursion_misses: Some(0),
        verified_insns: Some(0),
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
        r#"{"kind":"programs","items":[{"id":632,"type":"cgroup_skb","name":"count_ingress","tag":"d812b1a3dc0f9a8c","xlated_size_bytes":144,"jited_size_bytes":90,"run_time_ns":null,"run_count":null,"map_ids":[193,7],"btf_id":278,"pinned_paths":["/sys/fs/bpf/a","/sys/fs/bpf/b,c"],"full_name":"count_ingress","loaded_at":null,"uid":0,"gpl_compatible":false,"verified_insns":0,"recursion_misses":0,"memlock_bytes":null,"maps_memlock_bytes":null,"shared_maps":null}],"metadata":{}}"#
    );
    assert_eq!(
        programs(&list, Format::Csv, false, false),
        "id,type,name,tag,xlated_size_bytes,jited_size_bytes,run_time_ns,run_count,map_ids,btf_id,pinned_paths,full_name,loaded_at,uid,gpl_compatible,verified_insns,recursion_misses,memlock_bytes,maps_memlock_bytes,shared_maps\n632,cgroup_skb,count_ingress,d812b1a3dc0f9a8c,144,90,,,193;7,278,\"/sys/fs/bpf/a;/sys/fs/bpf/b,c\",count_ingress,,0,false,0,0,,,"
    );
    // A kernel without the counters (5.10): null in JSON, empty in CSV.
    let old = [Program {
        verified_insns: None,
        recursion_misses: None,
        ..prog(632)
    }];
    let j = programs(&old, Format::Json { pretty: false }, false, false);
    assert!(
        j.contains(r#""verified_insns":null,"recursion_misses":null,"#),
        "{j}"
    );
    let c = programs(&old, Format::Csv, false, false);
    assert!(c.ends_with(",count_ingress,,0,false,,,,,"), "{c}");
    let x = programs(&list, Format::Text, true, true);
    assert!(x.starts_with(" ID  TYPE        NAME           XLATED_BYTES  JITED_BYTES  RUN_CNT  RUN_TIME_NS  TAG               PINNED"));
    assert!(x.ends_with("0            0  d812b1a3dc0f9a8c  /sys/fs/bpf/a,/sys/fs/bpf/b,c  -       -       -        -       "), "{x:?}");
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
        " ID  TYPE          NAME        KEY  VALUE  MAX_ENTRIES  BTF_ID  PINNED  OWNERS  MEMLOCK\n213  cgroup_array  cgroup_map    4      4            1       -  -       -       -      "
    );
    assert_eq!(
        maps(&[m], Format::Csv, false),
        "id,type,name,key_size,value_size,max_entries,btf_id,pinned_paths,flags,frozen,memlock_bytes\n213,cgroup_array,cgroup_map,4,4,1,,,0,,"
    );
    let l = Link {
        id: 34,
        link_type: "cgroup".into(),
        prog_id: 632,
        attach_type: Some("cgroup_inet_ingress".into()),
        target_obj_id: None,
        target_btf_id: None,
        pinned_paths: vec![],
        target: Some("/brr.slice".into()),
        ..Default::default()
    };
    assert_eq!(
        links(std::slice::from_ref(&l), Format::Text, false),
        "ID  TYPE    PROG_ID  ATTACH_TYPE          TARGET_OBJ_ID  TARGET_BTF_ID  TARGET    \n34  cgroup      632  cgroup_inet_ingress              -              -  /brr.slice"
    );
    assert_eq!(
        links(&[l], Format::Json { pretty: false }, false),
        r#"{"kind":"links","items":[{"id":34,"type":"cgroup","prog_id":632,"attach_type":"cgroup_inet_ingress","target_obj_id":null,"target_btf_id":null,"pinned_paths":[],"target":"/brr.slice"}],"metadata":{}}"#
    );
    let b = BtfObject {
        id: 1,
        name: "vmlinux".into(),
        size: 5515646,
        pinned_paths: vec![],
        users: None,
    };
    assert_eq!(
        btfs(std::slice::from_ref(&b), Format::Text, false),
        "ID  NAME     SIZE   \n 1  vmlinux  5515646"
    );
    assert_eq!(
        btfs(std::slice::from_ref(&b), Format::Csv, false),
        "id,name,size,pinned_paths\n1,vmlinux,5515646,"
    );
    // -x: who uses each object.
    let used = BtfObject {
        id: 40,
        name: "-".into(),
        size: 272,
        users: Some(crate::model::BtfUsers {
            prog_ids: vec![7, 9],
            map_ids: vec![3],
        }),
        ..Default::default()
    };
    let both = [b, used];
    assert_eq!(
        btfs(&both, Format::Text, true),
        "ID  NAME     SIZE     PROGS  MAPS\n 1  vmlinux  5515646  -      -   \n40  -            272  7,9    3   "
    );
    assert_eq!(
        btfs(&both, Format::Csv, true),
        "id,name,size,pinned_paths,prog_ids,map_ids\n1,vmlinux,5515646,,,\n40,-,272,,7;9,3"
    );
    assert_eq!(
        btfs(&both[1..], Format::Json { pretty: false }, true),
        r#"{"kind":"btfs","items":[{"id":40,"name":"-","size":272,"pinned_paths":[],"prog_ids":[7,9],"map_ids":[3]}],"metadata":{}}"#
    );
    assert_eq!(links(&[], Format::Text, false), "No eBPF links found.");
    assert_eq!(maps(&[], Format::Text, false), "No eBPF maps found.");
    assert_eq!(btfs(&[], Format::Text, true), "No BTF objects found.");
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
        recursion_misses_delta: Some(0),
    }];
    let run = ActivityRun {
        duration: 2.0,
        measured: 2.0,
        limit: 3,
        all: false,
        window: None,
    };
    let t = activity(&rows, run, Format::Text, true, false);
    assert_eq!(
        t,
        " ID  TYPE        NAME           CPU%     EXECS/s  AVG_NS  CUMUL_AVG_NS  NS_PER/s   EXECS_DELTA  TOTAL_NS   EXECS_TOTAL  CUMUL_NS    XLAT_B  JIT_B\n689  cgroup_skb  count_ingress  24.3210  1969946     123            79  243210340      3939893  486420680     35101434  2807731032     144     90"
    );
    let c = activity(&rows, run, Format::Csv, false, false);
    assert_eq!(
        c.lines().nth(1).unwrap(),
        "2.0,3,false,689,cgroup_skb,count_ingress,d812b1a3dc0f9a8c,144,90,3939893,486420680,123,35101434,2807731032,79,,2.0,count_ingress,0,24.321034,1969946"
    );
    let j = activity(&rows, run, Format::Json { pretty: false }, false, false);
    assert!(j.ends_with(
        r#""full_name":"count_ingress","recursion_misses_delta":0,"cpu_percent":24.321034,"execs_per_sec":1969946}],"metadata":{"duration":2.0,"limit":3,"include_all":false,"measured_duration":2.0}}"#
    ), "{j}");
    // A window that measured nothing has no rate, and JSON no NaN.
    let none = ActivityRun {
        measured: 0.0,
        ..run
    };
    let j = activity(&rows, none, Format::Json { pretty: false }, false, false);
    assert!(j.contains(r#""cpu_percent":0.0,"execs_per_sec":0}"#), "{j}");
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

/// One number style per view: `activity` plain (as the original), `top`
/// (TUI and textmode) `,`-grouped in every integer column, MAPS_MEM too.
#[test]
fn each_view_groups_its_numbers_one_way() {
    let mut p = prog(689);
    p.memlock_bytes = Some(4096);
    p.maps_memlock_bytes = Some(426_880);
    p.shared_maps = Some(1);
    let rows = [ActivityRow {
        prog: p,
        run_count_delta: 2_579_372,
        run_time_ns_delta: 1000,
        recursion_misses_delta: Some(1234),
    }];
    let cells = |num: &dyn Fn(u64) -> String| {
        let (h, c) = activity_table(&rows, 2.0, false, true, num);
        let at = |name: &str| c[0][h.iter().position(|x| x.header() == name).unwrap()].clone();
        [at("EXECS/s"), at("MISSES"), at("MEMLOCK"), at("MAPS_MEM")]
    };
    assert_eq!(
        cells(&|n| n.to_string()),
        ["1289686", "1234", "4096", "426880 (1 shared)"]
    );
    assert_eq!(
        cells(&crate::render::num::commas),
        ["1,289,686", "1,234", "4,096", "426,880 (1 shared)"]
    ); // A kernel without the counter (before 5.12): `-`, not 0.
    let old = [ActivityRow {
        recursion_misses_delta: None,
        ..rows[0].clone()
    }];
    let (h, c) = activity_table(&old, 2.0, false, true, |n: u64| n.to_string());
    let misses = h.iter().position(|x| x.header() == "MISSES").unwrap();
    assert_eq!(c[0][misses], "-");
}

#[test]
fn rows_written_one_by_one_match_the_whole_listing() {
    let list = [prog(1), prog(2)];
    for n in 0..=2 {
        for format in [
            Format::Json { pretty: false },
            Format::Json { pretty: true },
            Format::Csv,
        ] {
            for x in [false, true] {
                let whole = programs(&list[..n], format, false, x);
                let mut out = Vec::new();
                let mut w = RowWriter::new(&mut out, format, ListingKind::Programs, x).unwrap();
                let csv = w.csv();
                for p in &list[..n] {
                    w.row_fields(program_items(p, x, csv)).unwrap();
                }
                w.finish().unwrap();
                assert_eq!(String::from_utf8(out).unwrap(), whole, "{n} {format:?} {x}");
            }
        }
    }
    let mut out = Vec::new();
    assert!(RowWriter::new(&mut out, Format::Text, ListingKind::Maps, false).is_none());
}

#[test]
fn json_owners_name_their_container_and_pod() {
    let mut p = full_program();
    let path = format!(
        "/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod{}.slice/crio-{}.scope",
        "0123abcd_0000_4000_8000_000000000001",
        "c1".repeat(32)
    );
    let mut w = crate::kernel::cgroups::workload(&path);
    if let Some(pod) = w.pod.as_mut() {
        pod.namespace = Some("kube-system".into());
        pod.name = Some("agent-x7k2p".into());
    }
    if let Some(k) = p.keepers.as_mut() {
        k.workloads.insert(40, w);
    }
    let j = programs(&[p], Format::Json { pretty: false }, false, true);
    let want = format!(
        r#""owners":[{{"pid":40,"comm":"bash","container":{{"runtime":"cri-o","id":"{}","name":null}},"pod":{{"uid":"0123abcd-0000-4000-8000-000000000001","namespace":"kube-system","name":"agent-x7k2p","qos":"BestEffort"}}}}]"#,
        "c1".repeat(32)
    );
    assert!(j.contains(&want), "{j}");
    // CSV and text keep `comm(pid)`.
    let c = programs(&[full_program()], Format::Csv, false, true);
    assert!(c.contains("bash(40)"), "{c}");
}

#[test]
fn owners_and_how_objects_stay_loaded() {
    use crate::model::Owner;
    let o = |pid, comm: &str| Owner {
        pid,
        comm: comm.into(),
    };
    let k = |owners, held_by| Keepers {
        owners,
        held_by,
        workloads: Default::default(),
    };
    assert_eq!(owners_cell(None, true), "-");
    assert_eq!(owners_cell(Some(&k(vec![], None)), true), "(pinned)");
    assert_eq!(
        owners_cell(Some(&k(vec![], Some(Holder::Link(7)))), false),
        "(held by link 7)"
    );
    assert_eq!(
        owners_cell(Some(&k(vec![], Some(Holder::Prog(12)))), false),
        "(held by prog 12)"
    );
    assert_eq!(owners_cell(Some(&k(vec![], None)), false), "-");
    let three = k(vec![o(1, "systemd"), o(40, "bash"), o(99, "x")], None);
    assert_eq!(owners_cell(Some(&three), false), "systemd(1),bash(40) +1");
    assert_eq!(
        owners_cell(Some(&k(vec![o(5, "a")], Some(Holder::Link(1)))), true),
        "a(5)"
    );
    let mut p = prog(3);
    p.keepers = Some(k(vec![o(40, "bash")], Some(Holder::Link(9))));
    p.attached = vec![
        AttachPoint {
            link_id: Some(9),
            attach_type: None,
            target: Some("sched_switch".into()),
            perf_event: None,
        },
        AttachPoint {
            link_id: Some(10),
            attach_type: Some("cgroup_inet_ingress".into()),
            target: Some("/a".into()),
            perf_event: None,
        },
        AttachPoint {
            link_id: None,
            attach_type: Some("kprobe".into()),
            target: Some("do_sys_openat2+0x10".into()),
            perf_event: Some(crate::model::PerfEventFd { pid: 40, fd: 7 }),
        },
    ];
    p.maps_memlock_bytes = Some(8192);
    p.shared_maps = Some(1);
    let j = programs(
        std::slice::from_ref(&p),
        Format::Json { pretty: false },
        false,
        true,
    );
    assert!(j.ends_with(r#""shared_maps":1,"owners":[{"pid":40,"comm":"bash","container":null,"pod":null}],"held_by":{"kind":"link","id":9},"attached":[{"link_id":9,"attach_type":null,"target":"sched_switch","perf_event":null},{"link_id":10,"attach_type":"cgroup_inet_ingress","target":"/a","perf_event":null},{"link_id":null,"attach_type":"kprobe","target":"do_sys_openat2+0x10","perf_event":{"pid":40,"fd":7}}]}],"metadata":{}}"#), "{j}");
    let c = programs(std::slice::from_ref(&p), Format::Csv, false, true);
    assert!(c
        .lines()
        .next()
        .unwrap()
        .ends_with(",shared_maps,owners,held_by,attached"));
    assert!(c.lines().nth(1).unwrap().ends_with(
        ",8192,1,bash(40),link 9,sched_switch;cgroup_inet_ingress:/a;kprobe:do_sys_openat2+0x10"
    ));
    let t = programs(&[p], Format::Text, false, true);
    assert!(
        t.contains("  bash(40)  sched_switch,cgroup_inet_ingress:/a,kprobe:do_sys_openat2+0x10  -        8192 (1 shared)"),
        "{t}"
    );
}

/// A program with every field set apart from its fallback.
fn full_program() -> Program {
    use crate::model::Owner;
    let mut p = prog(5);
    p.full_name = "count_ingress_packets".into();
    p.memlock_bytes = Some(4096);
    p.maps_memlock_bytes = Some(8192);
    p.shared_maps = Some(1);
    p.keepers = Some(Keepers {
        owners: vec![Owner {
            pid: 40,
            comm: "bash".into(),
        }],
        held_by: None,
        workloads: Default::default(),
    });
    p.attached = vec![AttachPoint {
        link_id: Some(9),
        attach_type: None,
        target: Some("sched_switch".into()),
        perf_event: None,
    }];
    p
}

/// `p` as a reader leaves it when it reads only `f`.
fn read_only(p: &Program, f: ProgFields) -> Program {
    let mut p = p.clone();
    if !f.full_name {
        p.full_name.clear();
    }
    if !f.map_ids {
        p.map_ids.clear();
    }
    if !f.memlock {
        p.memlock_bytes = None;
    }
    if !f.pins {
        p.pinned_paths.clear();
    }
    if !f.context {
        (p.maps_memlock_bytes, p.shared_maps) = (None, None);
        (p.keepers, p.attached) = (None, Vec::new());
    }
    p
}

/// Each field turned off in turn.
fn each_off(f: ProgFields) -> Vec<(&'static str, ProgFields)> {
    vec![
        (
            "full_name",
            ProgFields {
                full_name: false,
                ..f
            },
        ),
        (
            "map_ids",
            ProgFields {
                map_ids: false,
                ..f
            },
        ),
        (
            "memlock",
            ProgFields {
                memlock: false,
                ..f
            },
        ),
        ("pins", ProgFields { pins: false, ..f }),
        (
            "context",
            ProgFields {
                context: false,
                ..f
            },
        ),
    ]
}

const FORMATS: [Format; 3] = [Format::Text, Format::Json { pretty: false }, Format::Csv];

/// Each output asks for exactly what it prints: reading only its
/// fields prints the same bytes as reading all (the context is what
/// `-x` adds: JSON keeps its keys, null, without it), and each field it
/// asks for shows (so a field printed but not asked for, or asked for
/// but never printed, fails here).
#[test]
fn program_outputs_ask_for_exactly_the_fields_they_print() {
    let p = full_program();
    for format in FORMATS {
        for x in [false, true] {
            let every = read_only(
                &p,
                ProgFields {
                    context: x,
                    ..ProgFields::ALL
                },
            );
            for stats in [false, true] {
                let f = program_fields(format, x);
                let out = |q: &Program| programs(std::slice::from_ref(q), format, stats, x);
                let all = out(&every);
                assert_eq!(out(&read_only(&p, f)), all, "{format:?} -x {x} {f:?}");
                for (name, less) in each_off(f) {
                    if less != f {
                        let shown = out(&read_only(&p, less)) != all;
                        assert!(shown, "{format:?} -x {x}: {name} asked for, never shown");
                    }
                }
            }
            let f = activity_fields(format, x);
            let rows = |q: &Program| {
                vec![ActivityRow {
                    prog: q.clone(),
                    run_count_delta: 10,
                    run_time_ns_delta: 1000,
                    recursion_misses_delta: Some(0),
                }]
            };
            let run = ActivityRun {
                duration: 1.0,
                measured: 1.0,
                limit: 0,
                all: false,
                window: None,
            };
            let out = |q: &Program| activity(&rows(q), run, format, false, x);
            let all = out(&every);
            assert_eq!(out(&read_only(&p, f)), all, "activity {format:?} -x {x}");
            for (name, less) in each_off(f) {
                if less != f {
                    let shown = out(&read_only(&p, less)) != all;
                    assert!(shown, "activity {format:?} -x {x}: {name} never shown");
                }
            }
        }
    }
    // The text listing without -x: the info call and the BTF name,
    // no fdinfo (memlock), no pins, no owner scan.
    let text = program_fields(Format::Text, false);
    assert_eq!(
        (text.memlock, text.map_ids, text.pins, text.context),
        (false, false, false, false)
    );
}

#[test]
fn map_and_link_outputs_ask_for_exactly_the_fields_they_print() {
    use crate::model::Owner;
    let keepers = Some(Keepers {
        owners: vec![Owner {
            pid: 1,
            comm: "systemd".into(),
        }],
        held_by: Some(Holder::Prog(3)),
        workloads: Default::default(),
    });
    let m = Map {
        id: 3,
        map_type: "array".into(),
        name: "m".into(),
        pinned_paths: vec!["/sys/fs/bpf/m".into()],
        frozen: Some(true),
        memlock_bytes: Some(4096),
        keepers: keepers.clone(),
        ..Default::default()
    };
    let map_read = |f: MapFields| {
        let mut m = m.clone();
        if !f.fdinfo {
            (m.frozen, m.memlock_bytes) = (None, None);
        }
        if !f.pins {
            m.pinned_paths.clear();
        }
        if !f.keepers {
            m.keepers = None;
        }
        m
    };
    let l = Link {
        id: 4,
        link_type: "cgroup".into(),
        target: Some("/brr.slice".into()),
        pinned_paths: vec!["/sys/fs/bpf/l".into()],
        keepers,
        ..Default::default()
    };
    let link_read = |f: LinkFields| {
        let mut l = l.clone();
        if !f.target_names {
            l.target = Some("cgroup_id 9".into());
        }
        if !f.pins {
            l.pinned_paths.clear();
        }
        if !f.keepers {
            l.keepers = None;
        }
        l
    };
    for format in FORMATS {
        for x in [false, true] {
            let f = map_fields(format, x);
            let out = |f| maps(&[map_read(f)], format, x);
            assert_eq!(out(f), out(MapFields::ALL), "map {format:?} -x {x}");
            for less in [
                MapFields { fdinfo: false, ..f },
                MapFields { pins: false, ..f },
                MapFields {
                    keepers: false,
                    ..f
                },
            ] {
                assert!(
                    less == f || out(less) != out(f),
                    "map {format:?} {x} {less:?}"
                );
            }
            let f = link_fields(format, x);
            let out = |f| links(&[link_read(f)], format, x);
            assert_eq!(out(f), out(LinkFields::ALL), "link {format:?} -x {x}");
            for less in [
                LinkFields {
                    target_names: false,
                    ..f
                },
                LinkFields { pins: false, ..f },
                LinkFields {
                    keepers: false,
                    ..f
                },
            ] {
                assert!(
                    less == f || out(less) != out(f),
                    "link {format:?} {x} {less:?}"
                );
            }
        }
    }
    assert_eq!(map_fields(Format::Text, false), MapFields::default());
}

#[test]
fn stream_windows_and_early_end() {
    let mut p = prog(7);
    p.pinned_paths.clear();
    let rows = [ActivityRow {
        prog: p,
        run_count_delta: 10,
        run_time_ns_delta: 1000,
        recursion_misses_delta: Some(0),
    }];
    let run = ActivityRun {
        duration: 5.0,
        measured: 1.2449,
        limit: 0,
        all: false,
        window: Some((100.0, 101.2449)),
    };
    let t = activity_window(&rows, run, Format::Text, false, false, false);
    let lines: Vec<&str> = t.lines().collect();
    assert_eq!(lines[0], "");
    assert_eq!(
        lines[1],
        "1970-01-01T00:01:41.245Z window 1.24 s (from 1970-01-01T00:01:40.000Z)"
    );
    assert!(lines[2].starts_with("ID  TYPE"));
    assert_eq!(
        lines.last().copied(),
        Some("window ended early after 1.24 s of 5 s")
    );
    assert!(t.ends_with('\n'));
    let j = activity_window(
        &rows,
        run,
        Format::Json { pretty: true },
        false,
        false,
        true,
    );
    assert_eq!(j.lines().count(), 1);
    assert!(j.ends_with(
        r#""measured_duration":1.2449,"window_start":100.0,"window_end":101.2449}}
"#
    ));
    let first = activity_window(&rows, run, Format::Csv, false, false, true);
    let header = first.lines().next().unwrap();
    let one_shot = activity(
        &rows,
        ActivityRun {
            window: None,
            ..run
        },
        Format::Csv,
        false,
        false,
    );
    assert_eq!(
        header,
        format!(
            "{},window_start,window_end",
            one_shot.lines().next().unwrap()
        )
    );
    assert!(header.ends_with(
        ",measured_duration,full_name,recursion_misses_delta,cpu_percent,execs_per_sec,window_start,window_end"
    ));
    let row = first.lines().nth(1).unwrap();
    assert!(
        row.ends_with(",1.2449,count_ingress,0,8.032773716764399e-05,8,100.0,101.2449"),
        "{row}"
    );
    let later = activity_window(&rows, run, Format::Csv, false, false, false);
    assert_eq!(later.lines().count(), 1);
    assert_eq!(Some(later.as_str()), first.split_once('\n').map(|x| x.1));
    assert_eq!(
        activity_window(&[], run, Format::Csv, false, false, false),
        ""
    );
    // A full window has no early-end line.
    let full = ActivityRun {
        measured: 5.001,
        window: None,
        ..run
    };
    assert_eq!(ended_early(&full), None);
    assert!(!activity(&rows, full, Format::Text, false, false).contains("early"));
    assert!(activity(&[], run, Format::Text, false, false)
        .ends_with("observed.\nwindow ended early after 1.24 s of 5 s"));
}

/// Links whose TARGET or type needs more than one value: an unknown type
/// number and a kprobe_multi link's functions.
#[test]
fn unknown_types_and_kprobe_multi_functions() {
    // A type number brr does not know keeps its row, named `unknown(N)`.
    let u = Link {
        id: 36,
        link_type: "unknown(15)".into(),
        prog_id: 9,
        attach_type: Some("unknown(58)".into()),
        ..Default::default()
    };
    let text = links(std::slice::from_ref(&u), Format::Text, false);
    assert!(
        text.lines()
            .nth(1)
            .is_some_and(|l| l.contains("36  unknown(15)") && l.contains("unknown(58)")),
        "{text}"
    );
    assert!(links(
        std::slice::from_ref(&u),
        Format::Json { pretty: false },
        false
    )
    .contains(r#""type":"unknown(15)","prog_id":9,"attach_type":"unknown(58)""#));
    assert!(links(&[u], Format::Csv, false).ends_with("\n36,unknown(15),9,unknown(58),,,,"));
    let k = Link {
        id: 35,
        link_type: "kprobe_multi".into(),
        prog_id: 9,
        attach_type: Some("kprobe_multi".into()),
        target: Some("vfs_read +1 more".into()),
        functions: vec!["vfs_read".into(), "vfs_write".into()],
        ..Default::default()
    };
    assert!(links(std::slice::from_ref(&k), Format::Text, false).ends_with("  vfs_read +1 more"));
    let x = links(std::slice::from_ref(&k), Format::Text, true);
    assert!(
        x.lines()
            .nth(1)
            .is_some_and(|l| l.contains("  vfs_read,vfs_write  ")),
        "{x}"
    );
    assert!(links(&[k], Format::Json { pretty: false }, false)
        .contains(r#""target":"vfs_read +1 more","functions":["vfs_read","vfs_write"]}"#));
}
