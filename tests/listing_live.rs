//! Live tests of `prog`, `map`, `link`, `btf` and `activity` against BPF
//! objects each test creates itself. Other objects on the host are ignored.

// Test tooling: helpers outside #[test] functions fail the test by panicking,
// as the tests themselves do (clippy.toml only exempts #[test] code).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
// SIGINT reaches the child brr through libc::kill, which is unsafe.
#![allow(unsafe_code)]
// A live scenario (load, list, compare every column) reads best as one test.
#![allow(clippy::too_many_lines)]

#[path = "support/run.rs"]
mod run;
mod support;
#[path = "support/traced.rs"]
mod traced;

use std::os::fd::AsFd;
use std::process::Output;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use run::{brr, brr_as_nobody};
use serde_json::Value;
use support::{NoBtfFixture, PinnedFixture, RawTpLinkFixture, SocketFilterFixture};
use traced::Traced;

fn ok_stdout(args: &[&str]) -> String {
    let o = brr(args);
    assert_eq!(
        o.status.code(),
        Some(0),
        "brr {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(
        o.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let s = String::from_utf8(o.stdout).expect("utf-8 output");
    assert!(s.ends_with('\n') && !s.ends_with("\n\n"));
    s
}

fn json(args: &[&str]) -> Value {
    let s = ok_stdout(args);
    serde_json::from_str(&s).unwrap_or_else(|e| panic!("{e}: {s}"))
}

fn item_with_id(doc: &Value, id: u32) -> Value {
    doc["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["id"] == id)
        .unwrap_or_else(|| panic!("id {id} not listed"))
        .clone()
}

/// The CSV record whose first field is `id`, split naively (fixture values
/// contain no commas or quotes).
fn csv_row(out: &str, id: u32) -> Vec<String> {
    out.lines()
        .map(|l| l.split(',').map(String::from).collect::<Vec<_>>())
        .find(|f| f[0] == id.to_string())
        .unwrap_or_else(|| panic!("no CSV row for {id}"))
}

/// Text table row whose first cell is `id`, as whitespace-split cells.
fn text_row(out: &str, id: u32) -> Vec<String> {
    out.lines()
        .map(|l| l.split_whitespace().map(String::from).collect::<Vec<_>>())
        .find(|f| f.first().map(String::as_str) == Some(&id.to_string()))
        .unwrap_or_else(|| panic!("no text row for {id}:\n{out}"))
}

/// The `memlock:` bytes of one of this test's own fds, from its own
/// `/proc/self/fdinfo` (the reading brr's must match).
fn own_memlock(fd: std::os::fd::BorrowedFd<'_>) -> u64 {
    use std::os::fd::AsRawFd;
    let text = std::fs::read_to_string(format!("/proc/self/fdinfo/{}", fd.as_raw_fd())).unwrap();
    text.lines()
        .find_map(|l| l.strip_prefix("memlock:"))
        .map(|v| v.trim().parse().unwrap())
        .unwrap_or_else(|| panic!("no memlock in {text}"))
}

/// `YYYY-MM-DDTHH:MM:SSZ`.
fn is_iso8601_utc(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 20
        && b.iter().enumerate().all(|(i, c)| match i {
            4 | 7 => *c == b'-',
            10 => *c == b'T',
            13 | 16 => *c == b':',
            19 => *c == b'Z',
            _ => c.is_ascii_digit(),
        })
}

#[test]
fn prog_lists_fixture_in_all_formats() {
    if !support::live() {
        return;
    }
    let fx = SocketFilterFixture::load().expect("load fixture");
    let nobtf = NoBtfFixture::load().expect("load nobtf");
    let p = &fx.prog;
    let doc = json(&["prog", "--json"]);
    assert_eq!(doc["kind"], "programs");
    assert_eq!(doc["metadata"], serde_json::json!({}));
    let item = item_with_id(&doc, p.id);
    let info = p.info().unwrap();
    let (verified, misses) = p.counters().unwrap();
    let null_or = |v: Option<u64>| v.map_or("null".to_string(), |v| v.to_string());
    let verified = verified.map(u64::from);
    assert_eq!(item["type"], "socket_filter");
    assert_eq!(item["name"], SocketFilterFixture::PROG_NAME);
    assert_eq!(item["tag"], p.tag_hex());
    assert_eq!(item["xlated_size_bytes"], info.xlated_prog_len);
    assert_eq!(item["jited_size_bytes"], info.jited_prog_len);
    assert!(info.jited_prog_len > 0);
    assert_eq!(item["map_ids"], serde_json::json!([fx.map.id]));
    assert_eq!(item["btf_id"], p.btf_id);
    assert_eq!(item["pinned_paths"], serde_json::json!([]));
    // Exact compact text, keys in the documented order: today's, then the
    // ones added after them.
    let raw = ok_stdout(&["prog", "--json"]);
    let loaded_at = item["loaded_at"].as_str().unwrap().to_string();
    assert!(is_iso8601_utc(&loaded_at), "{loaded_at}");
    let exact = format!(
        r#"{{"id":{},"type":"socket_filter","name":"{}","tag":"{}","xlated_size_bytes":{},"jited_size_bytes":{},"run_time_ns":null,"run_count":null,"map_ids":[{}],"btf_id":{},"pinned_paths":[],"full_name":"{}","loaded_at":"{}","uid":{},"gpl_compatible":{},"verified_insns":{},"recursion_misses":{},"memlock_bytes":{},"maps_memlock_bytes":null,"shared_maps":null}}"#,
        p.id,
        SocketFilterFixture::PROG_NAME,
        p.tag_hex(),
        info.xlated_prog_len,
        info.jited_prog_len,
        fx.map.id,
        p.btf_id,
        SocketFilterFixture::FUNC_NAME,
        loaded_at,
        info.created_by_uid,
        info.gpl_compatible != 0,
        null_or(verified),
        null_or(misses),
        own_memlock(p.fd.as_fd()),
    );
    // The maps' memlock is -x work (a walk over every map and program).
    let xitem = item_with_id(&json(&["prog", "-x", "--json"]), p.id);
    assert_eq!(xitem["maps_memlock_bytes"], own_memlock(fx.map.fd.as_fd()));
    assert_eq!(xitem["shared_maps"], 0);
    assert!(raw.contains(&exact), "{exact} not in {raw}");
    assert!(raw.starts_with(r#"{"kind":"programs","items":["#));
    assert!(raw.ends_with("],\"metadata\":{}}\n"));
    let nb = item_with_id(&doc, nobtf.prog.id);
    assert_eq!(nb["btf_id"], Value::Null);
    assert_eq!(nb["map_ids"], serde_json::json!([]));

    // Pretty JSON parses to the same fixture item.
    let pretty = ok_stdout(&["--json", "prog", "--pretty"]);
    assert!(pretty.starts_with("{\n  \"kind\": \"programs\",\n  \"items\": ["));
    let pdoc: Value = serde_json::from_str(&pretty).unwrap();
    assert_eq!(item_with_id(&pdoc, p.id)["tag"], p.tag_hex());

    let csv = ok_stdout(&["--csv", "prog"]);
    assert_eq!(
        csv.lines().next().unwrap(),
        "id,type,name,tag,xlated_size_bytes,jited_size_bytes,run_time_ns,run_count,map_ids,btf_id,pinned_paths,full_name,loaded_at,uid,gpl_compatible,verified_insns,recursion_misses,memlock_bytes,maps_memlock_bytes,shared_maps"
    );
    let row = csv_row(&csv, p.id);
    assert_eq!(
        row[1..6],
        [
            "socket_filter".to_string(),
            SocketFilterFixture::PROG_NAME.to_string(),
            p.tag_hex(),
            info.xlated_prog_len.to_string(),
            info.jited_prog_len.to_string(),
        ]
    );
    assert_eq!(row[8], fx.map.id.to_string());
    assert_eq!(row[9], p.btf_id.to_string());
    assert_eq!(csv_row(&csv, nobtf.prog.id)[9], "");
    assert_eq!(row[11], SocketFilterFixture::FUNC_NAME);
    // Without BTF the full name is the kernel's.
    assert_eq!(csv_row(&csv, nobtf.prog.id)[11], nobtf.prog.name);

    let text = ok_stdout(&["prog"]);
    let header = text.lines().next().unwrap();
    assert!(
        header.ends_with("ID  TYPE") || header.contains("ID  TYPE "),
        "{header}"
    );
    assert!(header.contains("  NAME  ") || header.contains(" NAME "));
    assert!(header.trim_end().ends_with("XLATED_BYTES  JITED_BYTES"));
    let cells = text_row(&text, p.id);
    assert_eq!(
        cells,
        [
            p.id.to_string(),
            "socket_filter".into(),
            SocketFilterFixture::FUNC_NAME.into(),
            info.xlated_prog_len.to_string(),
            info.jited_prog_len.to_string()
        ]
    );
    // Every line has the header's width: all cells are padded.
    let width = header.chars().count();
    assert!(text.lines().all(|l| l.chars().count() == width));

    let x = ok_stdout(&["prog", "-x", "--stats"]);
    let header: Vec<&str> = x.lines().next().unwrap().split_whitespace().collect();
    assert_eq!(
        header[5..],
        [
            "RUN_CNT",
            "RUN_TIME_NS",
            "TAG",
            "PINNED",
            "OWNERS",
            "ATTACH",
            "MEMLOCK",
            "MAPS_MEM"
        ]
    );
    let cells = text_row(&x, p.id);
    assert_eq!(cells.len(), 13, "{cells:?}");
    assert_eq!(cells[7], p.tag_hex());
    assert_eq!(cells[8], "-");
    // This test process holds the fixture's fd: it is the owner.
    let comm = std::fs::read_to_string("/proc/self/comm").unwrap();
    assert_eq!(
        cells[9],
        format!("{}({})", comm.trim_end(), std::process::id())
    );
    assert_eq!(cells[10], "-");
    assert_eq!(cells[11], own_memlock(p.fd.as_fd()).to_string());
    assert_eq!(cells[12], own_memlock(fx.map.fd.as_fd()).to_string());
}

/// The running kernel's major and minor version.
fn kernel_release() -> (u32, u32) {
    let r = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap();
    let mut n = r
        .split(|c: char| !c.is_ascii_digit())
        .map(|x| x.parse().unwrap_or(0));
    (n.next().unwrap_or(0), n.next().unwrap_or(0))
}

#[test]
fn map_link_btf_list_fixtures() {
    if !support::live() {
        return;
    }
    let fx = SocketFilterFixture::load().expect("load fixture");
    let tp = RawTpLinkFixture::load().expect("load raw_tp link");
    let m = &fx.map;

    let item = item_with_id(&json(&["map", "--json"]), m.id);
    assert_eq!(
        item,
        serde_json::json!({
            "id": m.id, "type": "array", "name": support::FX_MAP_NAME,
            "key_size": 4, "value_size": 8, "max_entries": 4, "btf_id": null,
            "pinned_paths": [], "flags": 0, "frozen": false,
            "memlock_bytes": own_memlock(m.fd.as_fd())
        })
    );
    let text = ok_stdout(&["map"]);
    assert_eq!(
        text.lines()
            .next()
            .unwrap()
            .split_whitespace()
            .collect::<Vec<_>>(),
        [
            "ID",
            "TYPE",
            "NAME",
            "KEY",
            "VALUE",
            "MAX_ENTRIES",
            "BTF_ID"
        ]
    );
    assert_eq!(
        text_row(&text, m.id),
        [
            &m.id.to_string(),
            "array",
            support::FX_MAP_NAME,
            "4",
            "8",
            "4",
            "-"
        ]
    );
    let csv = ok_stdout(&["map", "--csv"]);
    assert_eq!(
        csv.lines().next().unwrap(),
        "id,type,name,key_size,value_size,max_entries,btf_id,pinned_paths,flags,frozen,memlock_bytes"
    );
    assert_eq!(
        csv_row(&csv, m.id),
        [
            &m.id.to_string(),
            "array",
            support::FX_MAP_NAME,
            "4",
            "8",
            "4",
            "",
            "",
            "0",
            "false",
            &own_memlock(m.fd.as_fd()).to_string()
        ]
    );

    let link = item_with_id(&json(&["link", "--json"]), tp.link_id);
    assert_eq!(
        link,
        serde_json::json!({
            "id": tp.link_id, "type": "raw_tracepoint", "prog_id": tp.prog.id,
            "attach_type": null, "target_obj_id": null, "target_btf_id": null,
            "pinned_paths": [], "target": "sched_switch"
        })
    );
    assert_eq!(
        text_row(&ok_stdout(&["link"]), tp.link_id),
        [
            &tp.link_id.to_string(),
            "raw_tracepoint",
            &tp.prog.id.to_string(),
            "-",
            "-",
            "-",
            "sched_switch"
        ]
    );
    let csv = ok_stdout(&["--csv", "link"]);
    assert_eq!(
        csv.lines().next().unwrap(),
        "id,type,prog_id,attach_type,target_obj_id,target_btf_id,pinned_paths,target"
    );
    assert_eq!(
        csv_row(&csv, tp.link_id).join(","),
        format!(
            "{},raw_tracepoint,{},,,,,sched_switch",
            tp.link_id, tp.prog.id
        )
    );

    let btf_id = fx.prog.btf_id;
    let doc = json(&["btf", "--json"]);
    let b = item_with_id(&doc, btf_id);
    assert_eq!(b["name"], "-");
    assert!(b["size"].as_u64().unwrap() > 24);
    let vmlinux = doc["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["name"] == "vmlinux");
    // The kernel's own BTF has an ID (and a name) since 5.11: before it,
    // the kernel lists program and map BTF only.
    assert_eq!(
        vmlinux.is_some(),
        kernel_release() >= (5, 11),
        "kernel BTF listed from 5.11"
    );
    let cells = text_row(&ok_stdout(&["btf"]), btf_id);
    assert_eq!(cells[1], "-");
    assert_eq!(cells[2], b["size"].to_string());
    assert_eq!(
        csv_row(&ok_stdout(&["btf", "--csv"]), btf_id).join(","),
        format!("{btf_id},-,{},", b["size"])
    );
    // -x: the programs and maps that use each BTF object.
    let x = item_with_id(&json(&["btf", "-x", "--json"]), btf_id);
    assert_eq!(x["prog_ids"], serde_json::json!([fx.prog.id]), "{x}");
    assert_eq!(x["map_ids"], serde_json::json!([]), "{x}");
    let text = ok_stdout(&["-x", "btf"]);
    assert_eq!(
        text.lines()
            .next()
            .unwrap()
            .split_whitespace()
            .collect::<Vec<_>>(),
        ["ID", "NAME", "SIZE", "PROGS", "MAPS"]
    );
    assert_eq!(
        text_row(&text, btf_id)[3..],
        [fx.prog.id.to_string(), "-".to_string()]
    );
    assert_eq!(
        csv_row(&ok_stdout(&["btf", "--csv", "-x"]), btf_id).join(","),
        format!("{btf_id},-,{},,{},", b["size"], fx.prog.id)
    );
}

#[test]
fn pinned_paths_are_typed_correctly() {
    if !support::live() {
        return;
    }
    let fx = PinnedFixture::load().expect("load pinned fixture");
    let root = fx.dir.path.to_str().unwrap().to_string();
    let s = |p: &std::path::Path| p.to_str().unwrap().to_string();
    // A trailing slash on --bpffs is normalised away.
    let bpffs = format!("{root}/");

    let progs = json(&["--bpffs", &bpffs, "prog", "--json"]);
    let mut want = vec![s(&fx.prog_a), s(&fx.prog_b)];
    want.sort();
    assert_eq!(
        item_with_id(&progs, fx.prog.id)["pinned_paths"],
        serde_json::json!(want)
    );
    // No program shows the map's or the link's pin, whatever its ID.
    for p in progs["items"].as_array().unwrap() {
        if p["id"] != fx.prog.id {
            assert_eq!(p["pinned_paths"], serde_json::json!([]), "{p}");
        }
    }
    let maps = json(&["--bpffs", &root, "map", "--json"]);
    assert_eq!(
        item_with_id(&maps, fx.map.id)["pinned_paths"],
        serde_json::json!([s(&fx.map_a)])
    );
    let links = json(&["--bpffs", &root, "--json", "link"]);
    assert_eq!(
        item_with_id(&links, fx.rawtp.link_id)["pinned_paths"],
        serde_json::json!([s(&fx.link_a)])
    );

    // PINNED is the first column -x adds after the listing's own.
    let text = ok_stdout(&["--bpffs", &root, "-x", "map"]);
    assert_eq!(text_row(&text, fx.map.id)[7], s(&fx.map_a));
    let text = ok_stdout(&["--bpffs", &root, "link", "-x"]);
    assert_eq!(text_row(&text, fx.rawtp.link_id)[7], s(&fx.link_a));
    let text = ok_stdout(&["--bpffs", &root, "prog", "-x"]);
    assert_eq!(text_row(&text, fx.prog.id)[6], want.join(","));
    let csv = ok_stdout(&["--bpffs", &root, "--csv", "prog"]);
    assert_eq!(csv_row(&csv, fx.prog.id)[10], want.join(";"));

    // A bpffs root that does not exist has no pins, and brr says so.
    let o = brr(&["--bpffs", "/nonexistent/brr", "map", "--json"]);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(
        String::from_utf8_lossy(&o.stderr),
        "brr: warning: --bpffs /nonexistent/brr: No such file or directory; no pinned paths are shown\n"
    );
    let none: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        item_with_id(&none, fx.map.id)["pinned_paths"],
        serde_json::json!([])
    );
}

/// A second bpffs instance, mounted for the test's life on an empty
/// directory and unmounted (lazily, so an open file cannot keep it) on drop.
struct ExtraBpffs {
    dir: std::path::PathBuf,
}

impl ExtraBpffs {
    fn mount() -> std::io::Result<ExtraBpffs> {
        let dir = std::env::temp_dir().join(format!("brr-extra-bpffs-{}", std::process::id()));
        std::fs::create_dir_all(&dir)?;
        let mounted =
            rustix::mount::mount("bpf", &dir, "bpf", rustix::mount::MountFlags::empty(), None);
        if let Err(e) = mounted {
            let _ = std::fs::remove_dir(&dir);
            return Err(e.into());
        }
        Ok(ExtraBpffs { dir })
    }
}

impl Drop for ExtraBpffs {
    fn drop(&mut self) {
        let _ = rustix::mount::unmount(&self.dir, rustix::mount::UnmountFlags::DETACH);
        let _ = std::fs::remove_dir(&self.dir);
    }
}

/// Without --bpffs every bpffs mount is scanned, as bpftool does; a
/// --bpffs on another file system (`/`) is not walked, only the bpffs
/// mounts below it, with a warning.
#[test]
fn pins_are_found_on_every_bpffs_mount() {
    if !support::live() {
        return;
    }
    let fx = PinnedFixture::load().expect("load pinned fixture");
    let extra = ExtraBpffs::mount().expect("mount a second bpffs");
    let pin = extra.dir.join("map_elsewhere");
    support::sys::obj_pin(fx.map.fd(), pin.to_str().unwrap()).expect("pin on the second bpffs");
    let by_default = json(&["map", "--json"]);
    let everywhere = brr(&["--bpffs", "/", "map", "--json"]);
    let _ = std::fs::remove_file(&pin);
    let extra_dir = extra.dir.to_str().unwrap().to_string();
    drop(extra);

    let mut want = vec![
        fx.map_a.to_str().unwrap().to_string(),
        pin.to_str().unwrap().to_string(),
    ];
    want.sort();
    assert_eq!(
        item_with_id(&by_default, fx.map.id)["pinned_paths"],
        serde_json::json!(want)
    );
    assert_eq!(everywhere.status.code(), Some(0));
    let warning = String::from_utf8_lossy(&everywhere.stderr).into_owned();
    assert!(
        warning.starts_with(
            "brr: warning: --bpffs / is not on a bpffs; pinned paths are read from the bpffs mounts below it: "
        ) && warning.contains("/sys/fs/bpf")
            && warning.contains(&extra_dir)
            && warning.lines().count() == 1,
        "{warning}"
    );
    let doc: Value = serde_json::from_slice(&everywhere.stdout).unwrap();
    assert_eq!(
        item_with_id(&doc, fx.map.id)["pinned_paths"],
        serde_json::json!(want)
    );
}

#[test]
fn activity_counts_exact_runs_inside_the_window() {
    if !support::live() {
        return;
    }
    let fx = SocketFilterFixture::load().expect("load fixture");
    const RUNS: u32 = 12_345;
    let run_inside = |args: &[&str]| -> Output {
        let mut brr = Traced::spawn(args, &[]);
        brr.wait_ready("stats-window");
        fx.prog.test_run(RUNS).unwrap();
        let (o, trace) = brr.finish();
        assert_eq!(trace, ["brr-trace: ready stats-window"], "one window");
        assert!(
            o.stderr.is_empty(),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
        o
    };

    let o = run_inside(&["activity", "-d", "2", "--all", "--limit", "0", "--json"]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(doc["kind"], "program_activity");
    let item = item_with_id(&doc, fx.prog.id);
    assert_eq!(item["run_count_delta"], RUNS);
    assert!(item["run_time_ns_delta"].as_u64().unwrap() > 0);
    assert_eq!(
        item["avg_run_time_ns"],
        item["run_time_ns_delta"].as_u64().unwrap() / RUNS as u64
    );
    assert!(item["run_count_total"].as_u64().unwrap() >= RUNS as u64);
    let md = &doc["metadata"];
    assert_eq!(md["duration"], 2.0);
    assert_eq!(md["limit"], 0);
    assert_eq!(md["include_all"], true);
    let measured = md["measured_duration"].as_f64().unwrap();
    assert!((2.0..2.5).contains(&measured), "measured {measured}");
    // The rates the text table shows, over the measured window.
    assert_eq!(
        item["execs_per_sec"],
        (f64::from(RUNS) / measured).round_ties_even() as u64
    );
    let cpu = item["cpu_percent"].as_f64().unwrap();
    let want = item["run_time_ns_delta"].as_f64().unwrap() / (measured * 1e9) * 100.0;
    assert!((cpu - want).abs() < 1e-9, "cpu_percent {cpu}, want {want}");

    // Text: EXECS/s is the delta over the measured window (not the requested
    // one), so it lies between RUNS/2.5 and RUNS/2.
    let o = run_inside(&["activity", "-d", "2"]);
    assert_eq!(o.status.code(), Some(0));
    let text = String::from_utf8(o.stdout).unwrap();
    assert_eq!(
        text.lines()
            .next()
            .unwrap()
            .split_whitespace()
            .collect::<Vec<_>>(),
        ["ID", "TYPE", "NAME", "CPU%", "EXECS/s", "AVG_NS", "XLAT_B", "JIT_B"]
    );
    let cells = text_row(&text, fx.prog.id);
    let execs: f64 = cells[4].parse().unwrap();
    assert!(
        execs <= RUNS as f64 / 2.0 && execs >= RUNS as f64 / 2.5,
        "EXECS/s {execs}"
    );
    let cpu: f64 = cells[3].parse().unwrap();
    assert!(cpu > 0.0 && cells[3].split('.').nth(1).unwrap().len() == 4);

    let o = run_inside(&["activity", "-d", "1", "--csv", "-c", "-x"]);
    let csv = String::from_utf8(o.stdout).unwrap();
    assert!(csv.starts_with("duration,limit,include_all,id,type,name,tag,"));
    assert!(csv
        .lines()
        .next()
        .unwrap()
        .ends_with(",pinned_paths,measured_duration,full_name,recursion_misses_delta,cpu_percent,execs_per_sec"));
    let row = csv_row(
        &csv.lines()
            .map(|l| l.splitn(4, ',').nth(3).unwrap_or(""))
            .collect::<Vec<_>>()
            .join("\n"),
        fx.prog.id,
    );
    assert_eq!(row[6], RUNS.to_string());
}

#[test]
fn activity_ctrl_c_reports_the_shortened_window() {
    if !support::live() {
        return;
    }
    let fx = SocketFilterFixture::load().expect("load fixture");
    let mut brr = Traced::spawn(
        &["activity", "-d", "30", "--json", "--all", "--limit", "0"],
        &[],
    );
    brr.wait_ready("stats-window");
    // brr took its baseline before it reported ready, and it ends the
    // window after the signal: the window covers at least this span.
    let opened = Instant::now();
    fx.prog.test_run(777).unwrap();
    // Taken before the signal: brr ends its window after the signal, so the
    // window covers at least this span even if this thread is descheduled
    // right after kill(2).
    let span = opened.elapsed().as_secs_f64();
    // SAFETY: plain kill(2) on our own child.
    unsafe { libc::kill(brr.pid(), libc::SIGINT) };
    let (o, _) = brr.finish();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(
        o.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    let measured = doc["metadata"]["measured_duration"].as_f64().unwrap();
    assert!(
        measured >= span && measured < 5.0,
        "measured {measured}, at least {span} expected, far below the 30 s asked for"
    );
    assert_eq!(item_with_id(&doc, fx.prog.id)["run_count_delta"], 777);
}

#[test]
fn unprivileged_user_gets_permission_error() {
    if !support::live() {
        return;
    }
    let list = "brr: permission denied while trying to list eBPF object IDs; needs CAP_SYS_ADMIN (run brr with sudo)";
    let stats = "brr: permission denied while trying to enable eBPF runtime statistics; needs CAP_SYS_ADMIN (run brr with sudo)";
    // CAP_BPF + CAP_PERFMON is not enough to list or measure: the message
    // must still name CAP_SYS_ADMIN.
    for caps in ["-all", "-all,+bpf,+perfmon"] {
        for (args, msg) in [
            (&["prog"][..], list),
            (&["activity", "-d", "0.1"], stats),
            (&["prog", "--stats"], stats),
            (&["map"], list),
        ] {
            let o = brr_as_nobody(caps, args);
            assert_eq!(o.status.code(), Some(2), "{caps} {args:?}");
            assert_eq!(
                String::from_utf8_lossy(&o.stderr),
                format!("{msg}\n"),
                "{caps}"
            );
            assert!(o.stdout.is_empty());
        }
    }
}

#[test]
fn listings_survive_load_unload_churn() {
    if !support::live() {
        return;
    }
    let stop = Arc::new(AtomicBool::new(false));
    let churn = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            let mut batches = 0u32;
            while !stop.load(Ordering::Relaxed) {
                let objs = support::try_load_many(100, 100).expect("load batch");
                std::thread::sleep(Duration::from_millis(5));
                drop(objs);
                batches += 1;
            }
            batches
        })
    };
    let deadline = std::time::Instant::now() + Duration::from_secs(6);
    let mut runs = 0;
    while std::time::Instant::now() < deadline {
        for args in [
            &["prog", "--json"][..],
            &["map", "--json"],
            &["link"],
            &["btf", "--csv"],
            &["activity", "--duration", "1", "--all", "--json"],
        ] {
            let o = brr(args);
            assert_eq!(
                o.status.code(),
                Some(0),
                "brr {args:?} failed under churn: {}",
                String::from_utf8_lossy(&o.stderr)
            );
            if args.contains(&"--json") {
                let _: Value = serde_json::from_slice(&o.stdout).expect("valid JSON");
            }
            runs += 1;
        }
    }
    stop.store(true, Ordering::Relaxed);
    let batches = churn.join().unwrap();
    assert!(batches > 5 && runs > 5, "batches {batches}, runs {runs}");
}

#[test]
fn closed_stdout_ends_listings_quietly() {
    if !support::live() {
        return;
    }
    let _fx = SocketFilterFixture::load().expect("load fixture");
    for args in [
        &["prog", "--json", "--pretty"][..],
        &["prog", "-x", "--stats"],
        &["map", "--csv"],
        &["btf"],
        &["link"],
        &["activity", "-d", "0.2", "--all"],
    ] {
        support::assert_quiet_on_closed_stdout(env!("CARGO_BIN_EXE_brr"), args);
    }
}
