//! Self-test of the fixture library: every fixture really loads on this
//! kernel and the kernel reports back what the fixture says it encoded.

// Test tooling: helpers outside #[test] functions fail the test by panicking,
// as the tests themselves do (clippy.toml only exempts #[test] code).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::os::fd::AsFd;
use std::time::{Duration, Instant};

use support::btf::{blob_string, Linkage};
use support::sys;
use support::*;

fn btf_blob(btf_id: u32) -> Vec<u8> {
    let fd = sys::btf_fd_by_id(btf_id).expect("BTF_GET_FD_BY_ID");
    sys::btf_data(fd.as_fd()).expect("btf data")
}

/// Compare the kernel's line_info (file/line/col/text, in order) with the
/// fixture's expected records. Insn offsets are not compared: the kernel
/// reports them against the xlated image, which can differ (e.g. inlined
/// array-map lookups).
fn check_lines(p: &LoadedProg) {
    let recs = sys::prog_line_info(p.fd()).expect("line_info");
    assert_eq!(recs.len(), p.lines.len(), "line_info count");
    let blob = btf_blob(p.btf_id);
    for (rec, exp) in recs.iter().zip(&p.lines) {
        assert_eq!(
            blob_string(&blob, rec[1]).as_deref(),
            Some(exp.file.as_str())
        );
        assert_eq!(
            blob_string(&blob, rec[2]).as_deref(),
            Some(exp.text.as_str())
        );
        assert_eq!(rec[3] >> 10, exp.line, "line of {exp:?}");
        assert_eq!(rec[3] & 0x3ff, exp.col, "col of {exp:?}");
    }
}

fn check_funcs(p: &LoadedProg) {
    let recs = sys::prog_func_info(p.fd()).expect("func_info");
    assert_eq!(recs.len(), p.funcs.len(), "func_info count");
    for (rec, exp) in recs.iter().zip(&p.funcs) {
        assert_eq!(rec[1], exp.btf_type_id, "type id of {}", exp.name);
    }
}

fn check_common(p: &LoadedProg) {
    assert_ne!(p.id, 0);
    let info = p.info().expect("prog info");
    assert_eq!(info.id, p.id);
    assert_eq!(info.prog_type, p.prog_type);
    assert_eq!(sys::name_str(&info.name), p.name);
    assert_eq!(info.tag, p.tag);
    assert_eq!(p.tag_hex().len(), 16);
    assert_eq!(info.btf_id, p.btf_id);
    assert!(info.jited_prog_len > 0, "program is JITed");
}

#[test]
fn socket_filter_fixture() {
    if !support::live() {
        return;
    }
    let fx = SocketFilterFixture::load().expect("load");
    check_common(&fx.prog);
    assert_ne!(fx.prog.btf_id, 0);
    assert_ne!(fx.map.id, 0);
    assert!(SocketFilterFixture::FUNC_NAME.len() > 15);
    assert_eq!(fx.prog.name, "brr_fx_sock");
    assert_eq!(fx.prog.insn_cnt, 16);
    assert_eq!(fx.prog.map_ids().unwrap(), vec![fx.map.id]);

    let mi = sys::map_info(fx.map.fd()).unwrap();
    assert_eq!(sys::name_str(&mi.name), "brr_fx_map");
    assert_eq!(
        (mi.map_type, mi.key_size, mi.value_size, mi.max_entries),
        (sys::BPF_MAP_TYPE_ARRAY, 4, 8, 4)
    );

    // Line records as encoded: first at 0, one with line 0, tab and
    // space-indented texts.
    let lines = fx.expected_lines();
    assert_eq!(lines[0].0, 0);
    assert!(lines.iter().any(|l| l.2 == 0));
    assert!(lines.iter().any(|l| l.4.starts_with('\t')));
    assert!(lines.iter().any(|l| l.4.starts_with("        ")));
    assert!(lines.iter().all(|l| l.1 == SocketFilterFixture::FILE));
    check_lines(&fx.prog);
    check_funcs(&fx.prog);
    assert_eq!(fx.prog.funcs[0].name, "brr_fx_sock_filter_main");

    // Each run increments map[0] and returns 0.
    let r = fx.prog.test_run(5).unwrap();
    assert_eq!(r.retval, 0);
    assert_eq!(fx.map.get_u64(0).unwrap(), 5);
    fx.prog.test_run(1).unwrap();
    assert_eq!(fx.map.get_u64(0).unwrap(), 6);
}

/// With stats enabled, TEST_RUN with repeat=N adds exactly N to run_cnt
/// (each repeat is a full program invocation through the stats-counting
/// path); without stats nothing is counted.
#[test]
fn run_cnt_counts_each_repeat_when_stats_enabled() {
    if !support::live() {
        return;
    }
    let fx = NoBtfFixture::load().expect("load");
    check_common(&fx.prog);
    assert_eq!(fx.prog.btf_id, 0);
    assert!(fx.prog.btf.is_none());
    let info = fx.prog.info().unwrap();
    assert_eq!((info.nr_func_info, info.nr_line_info), (0, 0));
    assert_eq!(fx.prog.name, "brr_fx_nobtf");

    // Another test may hold stats enabled concurrently (kernel refcount),
    // so only check the "enabled" direction exactly.
    let stats = StatsGuard::enable().expect("BPF_ENABLE_STATS");
    let before = fx.prog.info().unwrap();
    fx.prog.test_run(1000).unwrap();
    let after = fx.prog.info().unwrap();
    assert_eq!(after.run_cnt - before.run_cnt, 1000);
    assert!(after.run_time_ns > before.run_time_ns);
    fx.prog.test_run(1).unwrap();
    assert_eq!(fx.prog.info().unwrap().run_cnt - before.run_cnt, 1001);
    drop(stats);
}

fn check_hot_range(p: &LoadedProg, range: &std::ops::Range<u32>, line: u32, text: &str) {
    assert!(range.end - range.start >= 1000);
    for i in [range.start, range.start + 1, range.end - 1] {
        let l = p.line_for_insn(i).unwrap();
        assert_eq!((l.line, l.text.as_str()), (line, text));
    }
}

#[test]
fn hot_fixture() {
    if !support::live() {
        return;
    }
    let fx = HotFixture::load().expect("load");
    check_common(&fx.prog);
    check_lines(&fx.prog);
    check_funcs(&fx.prog);
    assert_eq!(fx.prog.name, "brr_fx_hot");
    assert_eq!(fx.hot_line, 42);
    check_hot_range(&fx.prog, &fx.hot_insns, fx.hot_line, fx.hot_text);
    assert_eq!(fx.prog.test_run(1).unwrap().retval, 0);

    let stats = StatsGuard::enable().unwrap();
    let before = fx.prog.info().unwrap().run_cnt;
    let runs = fx.spawn_load(Duration::from_millis(300)).join().unwrap();
    assert!(runs >= u64::from(HOT_REPEAT));
    assert_eq!(runs % u64::from(HOT_REPEAT), 0);
    assert_eq!(fx.prog.info().unwrap().run_cnt - before, runs);
    drop(stats);
}

#[test]
fn subprog_fixture() {
    if !support::live() {
        return;
    }
    let fx = SubprogFixture::load().expect("load");
    check_common(&fx.prog);
    check_lines(&fx.prog);
    check_funcs(&fx.prog);
    assert_eq!(fx.prog.name, "brr_fx_sub");
    assert_eq!(fx.prog.funcs.len(), 2);
    assert_eq!(fx.prog.funcs[0].insn_off, 0);
    assert_eq!(fx.prog.funcs[1].insn_off, fx.sub_insn_off);
    assert_eq!(fx.prog.funcs[1].name, "brr_fx_subprog_hot_path");
    assert_eq!(fx.prog.funcs[1].linkage, Linkage::Static);
    check_hot_range(&fx.prog, &fx.hot_insns, fx.hot_line, fx.hot_text);
    // Two JITed functions (main + subprog).
    let info = fx.prog.info().unwrap();
    assert_eq!(info.nr_jited_ksyms, 2);
    assert_eq!(fx.prog.test_run(1).unwrap().retval, 0);

    let stats = StatsGuard::enable().unwrap();
    let before = fx.prog.info().unwrap().run_cnt;
    let runs = fx.spawn_load(Duration::from_millis(300)).join().unwrap();
    assert!(runs > 0);
    // Only the main program's invocations are counted, not subprog calls.
    assert_eq!(fx.prog.info().unwrap().run_cnt - before, runs);
    drop(stats);
}

#[test]
fn helper_fixture() {
    if !support::live() {
        return;
    }
    let fx = HelperFixture::load().expect("load");
    check_common(&fx.prog);
    check_lines(&fx.prog);
    check_funcs(&fx.prog);
    assert_eq!(fx.prog.name, "brr_fx_helper");
    assert_eq!(fx.helper_calls, 500);
    check_hot_range(&fx.prog, &fx.hot_insns, fx.hot_line, fx.hot_text);
    assert_eq!(fx.prog.test_run(1).unwrap().retval, 0);
    let runs = fx.spawn_load(Duration::from_millis(300)).join().unwrap();
    assert!(runs >= u64::from(HelperFixture::REPEAT));
}

#[test]
fn raw_tp_link_fixture() {
    if !support::live() {
        return;
    }
    let fx = RawTpLinkFixture::load().expect("load");
    check_common(&fx.prog);
    assert_eq!(fx.prog.name, "brr_fx_rawtp");
    assert_ne!(fx.link_id, 0);
    let li = sys::link_info(fx.link.as_fd()).unwrap();
    assert_eq!(li.link_type, sys::BPF_LINK_TYPE_RAW_TRACEPOINT);
    assert_eq!(li.id, fx.link_id);
    assert_eq!(li.prog_id, fx.prog.id);
    assert_eq!(sys::link_tp_name(fx.link.as_fd()).unwrap(), "sched_switch");

    // The link is live: sched_switch fires as we sleep.
    let stats = StatsGuard::enable().unwrap();
    let before = fx.prog.info().unwrap().run_cnt;
    let deadline = Instant::now() + Duration::from_secs(5);
    while fx.prog.info().unwrap().run_cnt == before && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
    assert!(fx.prog.info().unwrap().run_cnt > before);
    drop(stats);

    let (pid, lid) = (fx.prog.id, fx.link_id);
    drop(fx);
    // The link id goes at once; the raw_tp link's dealloc (which drops the
    // prog reference) waits for an RCU grace period, so poll for the prog.
    assert!(sys::link_fd_by_id(lid).is_err());
    assert!(wait_until(Duration::from_secs(5), || sys::prog_fd_by_id(
        pid
    )
    .is_err()));
}

#[test]
fn pinned_fixture() {
    if !support::live() {
        return;
    }
    let fx = PinnedFixture::load().expect("load");
    assert!(is_bpffs(BPFFS_ROOT).unwrap());
    let dir = fx.path().to_path_buf();
    let name = dir.file_name().unwrap().to_str().unwrap().to_string();
    assert!(name.starts_with(&format!("brr-test-{}-", std::process::id())));
    assert_eq!(fx.prog_a, dir.join("prog_a"));
    assert_eq!(fx.prog_b, dir.join("sub/prog_b"));
    assert_eq!(fx.map_a, dir.join("map_a"));
    assert_eq!(fx.link_a, dir.join("link_a"));

    let id_at = |p: &std::path::Path| sys::obj_get(p.to_str().unwrap()).unwrap();
    for p in [&fx.prog_a, &fx.prog_b] {
        assert_eq!(sys::prog_info(id_at(p).as_fd()).unwrap().id, fx.prog.id);
    }
    assert_eq!(
        sys::map_info(id_at(&fx.map_a).as_fd()).unwrap().id,
        fx.map.id
    );
    let li = sys::link_info(id_at(&fx.link_a).as_fd()).unwrap();
    assert_eq!((li.id, li.prog_id), (fx.rawtp.link_id, fx.rawtp.prog.id));
    assert_ne!(fx.prog.id, 0);
    assert_ne!(fx.map.id, 0);

    let prog_id = fx.prog.id;
    drop(fx);
    assert!(!dir.exists(), "pin dir removed on drop");
    assert!(
        wait_until(Duration::from_secs(5), || sys::prog_fd_by_id(prog_id)
            .is_err()),
        "prog gone after drop"
    );
}

#[test]
fn load_many_is_fast_and_cleans_up() {
    if !support::live() {
        return;
    }
    let t = Instant::now();
    let fds = load_many(1000, 1000);
    let load_time = t.elapsed();
    assert_eq!(fds.len(), 2000);
    let first = sys::prog_info(fds[0].as_fd()).unwrap();
    assert_eq!(sys::name_str(&first.name), "brr_fx_m0");
    let last = sys::map_info(fds[1999].as_fd()).unwrap();
    assert_eq!(sys::name_str(&last.name), "brr_fx_mm999");
    let prog_id = first.id;
    let map_id = last.id;
    let t = Instant::now();
    drop(fds);
    let drop_time = t.elapsed();
    eprintln!("load_many(1000, 1000): load {load_time:?}, drop {drop_time:?}");
    assert!(load_time < Duration::from_secs(10), "took {load_time:?}");
    assert!(sys::prog_fd_by_id(prog_id).is_err());
    assert!(sys::map_fd_by_id(map_id).is_err());
}

#[test]
fn live_probe_is_true_here() {
    // On this project's test machines BPF is available; elsewhere this
    // simply exercises the skip path.
    let _ = support::live();
}
