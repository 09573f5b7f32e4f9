//! Live tests of the "know every object" readers (owners, fdinfo, link
//! attach points, program extras) against objects each test creates.
//! Other objects on the host are ignored.

// Test tooling: helpers outside #[test] functions fail the test by panicking,
// as the tests themselves do (clippy.toml only exempts #[test] code); the
// network-namespace, fork and fd set-up goes through libc; the cuts are of
// ASCII kernel text.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
#![allow(unsafe_code, clippy::string_slice)]

#[path = "support/exporter.rs"]
mod exporter;
#[path = "support/run.rs"]
mod run;
mod support;

use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd};
use std::os::unix::fs::MetadataExt;
use std::process::{Child, Command, Stdio};

use brr::fdinfo;
use brr::link_target::{self, LinkTarget, SystemNames};
use brr::owners::{self, HeldKind, Owner};
use brr::{map_fields, program_fields, ExtraReader, Format, MapReader, ProgramReader};
use run::brr_ok;
use support::hooks::{link_create, link_create_with};
use support::insn::{exit, mov64_imm, R0};
use support::{
    load_program, probes, sys, LoadedProg, ProgBuilder, RawTpLinkFixture, SocketFilterFixture,
};

const BPF_LINK_CREATE: u32 = 28;
const PROG_TYPE_CGROUP_SKB: u32 = 8;
const PROG_TYPE_XDP: u32 = 6;
const PROG_TYPE_FLOW_DISSECTOR: u32 = 22;
const ATTACH_CGROUP_INET_INGRESS: u32 = 0;
const ATTACH_FLOW_DISSECTOR: u32 = 17;
const ATTACH_XDP: u32 = 37;
const PROG_TYPE_KPROBE: u32 = 2;
const PROG_TYPE_SCHED_CLS: u32 = 3;
const PROG_TYPE_TRACEPOINT: u32 = 5;
const PROG_TYPE_SK_SKB: u32 = 14;
const MAP_TYPE_SOCKMAP: u32 = 15;
const ATTACH_SK_SKB_VERDICT: u32 = 38;
const ATTACH_PERF_EVENT: u32 = 41;
const ATTACH_TCX_INGRESS: u32 = 46;
const PROG_TYPE_NETFILTER: u32 = 32;
const ATTACH_NETFILTER: u32 = 45;

fn returning(prog_type: u32, name: &str, r0: i32) -> LoadedProg {
    let mut b = ProgBuilder::new();
    b.emit(mov64_imm(R0, r0));
    b.emit(exit());
    load_program(prog_type, name, &b).unwrap_or_else(|e| panic!("load {name}: {e}"))
}

/// A program returning `r0` that declares `expected_attach_type` at load
/// (netfilter and uprobe_multi programs must).
fn load_expecting(prog_type: u32, expected: u32, name: &str, r0: i32) -> std::io::Result<OwnedFd> {
    probes::load_returning(prog_type, expected, 0, name, r0)
}

fn target_of(link: &OwnedFd) -> LinkTarget {
    if std::env::var("BRR_RECORD_LINKS").is_ok() {
        let (f, name) = brr::bpf::link_info_with_name(link.as_fd()).unwrap();
        let hex: String = f
            .info
            .to_bytes()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        eprintln!(
            "RECORD len={} name={:?} info={hex}\n{}",
            f.len,
            name.map(|n| String::from_utf8_lossy(&n).into_owned()),
            fdinfo::read_own(link.as_fd()).unwrap()
        );
    }
    let got = link_target::read(link, &mut SystemNames::new()).expect("link info");
    listed_like(link, &got);
    got
}

/// The real binary's output.
fn brr(args: &[&str]) -> String {
    String::from_utf8(brr_ok(args).stdout).expect("utf-8 output")
}

/// The JSON item of the object with this id.
fn item(args: &[&str], id: u32) -> serde_json::Value {
    let doc: serde_json::Value = serde_json::from_str(&brr(args)).expect("JSON");
    doc["items"]
        .as_array()
        .expect("items")
        .iter()
        .find(|i| i["id"] == id)
        .unwrap_or_else(|| panic!("no item {id} in brr {args:?}"))
        .clone()
}

/// The text row whose first cell is `id`.
fn row(text: &str, id: u32) -> String {
    text.lines()
        .find(|l| l.split_whitespace().next() == Some(&id.to_string()))
        .unwrap_or_else(|| panic!("no row {id} in\n{text}"))
        .to_string()
}

/// `brr link` shows the link as the decoder reads it: ATTACH_TYPE and
/// TARGET in text, `attach_type` and `target` in JSON.
fn listed_like(link: &OwnedFd, want: &LinkTarget) {
    let id = sys::link_info(link.as_fd()).expect("link id").id;
    let j = item(&["link", "--json"], id);
    assert_eq!(
        j["attach_type"].as_str(),
        want.attach_type.as_deref(),
        "{j}"
    );
    assert_eq!(j["target"].as_str(), want.target.as_deref(), "{j}");
    let text = brr(&["link"]);
    let header = text.lines().next().unwrap_or_default();
    assert!(
        header.trim_end().ends_with("TARGET_BTF_ID  TARGET"),
        "{header}"
    );
    let line = row(&text, id);
    let cells: Vec<&str> = line.split_whitespace().collect();
    assert_eq!(
        cells[3],
        want.attach_type.as_deref().unwrap_or("-"),
        "{line}"
    );
    let target = want.target.as_deref().unwrap_or("-");
    assert!(
        line.trim_end().ends_with(target),
        "{line} does not end with {target}"
    );
}

/// A `sleep` child that inherits copies of `fds` (a dup without CLOEXEC
/// per fd, closed here once the child has it).
fn child_holding(fds: &[BorrowedFd<'_>]) -> Child {
    let dups: Vec<OwnedFd> = fds
        .iter()
        .map(|fd| {
            // SAFETY: dup of a live fd; the result is a fresh fd we own.
            let n = unsafe { libc::dup(fd.as_raw_fd()) };
            assert!(n >= 0, "dup: {}", std::io::Error::last_os_error());
            // SAFETY: `n` is a fresh fd owned by nothing else.
            unsafe { OwnedFd::from_raw_fd(n) }
        })
        .collect();
    let child = Command::new("sleep")
        .arg("60")
        .stdin(Stdio::null())
        .spawn()
        .expect("spawn sleep");
    drop(dups);
    child
}

/// Wait until the child has exec'd (its comm is `sleep`), so the scan
/// does not see the forked copy of the test binary.
fn wait_exec(child: &Child) {
    let comm = format!("/proc/{}/comm", child.id());
    assert!(
        support::wait_until(std::time::Duration::from_secs(5), || {
            std::fs::read_to_string(&comm).is_ok_and(|c| c.trim() == "sleep")
        }),
        "child did not exec"
    );
}

#[test]
fn owners_lists_a_child_holding_dups_and_never_brr_itself() {
    if !support::live() {
        return;
    }
    let fx = SocketFilterFixture::load().expect("socket filter fixture");
    let tp = RawTpLinkFixture::load().expect("raw_tp fixture");
    let mut child = child_holding(&[fx.prog.fd(), fx.prog.fd(), tp.link.as_fd()]);
    wait_exec(&child);
    let pid = child.id();

    let t = std::time::Instant::now();
    let o = owners::scan();
    let took = t.elapsed();
    // Through the binary: the sleeper is among the program's owners, in
    // OWNERS as comm(pid) and in JSON as {pid, comm}, sorted by pid.
    let p = item(&["prog", "-x", "--json"], fx.prog.id);
    let listed = p["owners"].as_array().expect("owners with -x").clone();
    // (Each owner also names its container and pod, null on a plain host.)
    let is_sleeper = |o: &serde_json::Value| o["pid"] == pid && o["comm"] == "sleep";
    assert!(listed.iter().any(is_sleeper), "{listed:?}");
    let pids: Vec<u64> = listed.iter().map(|o| o["pid"].as_u64().unwrap()).collect();
    assert!(pids.windows(2).all(|w| w[0] < w[1]), "{pids:?}");
    let text = brr(&["prog", "-x"]);
    let line = row(&text, fx.prog.id);
    assert!(line.contains(&format!("sleep({pid})")), "{line}");
    let l = item(&["link", "-x", "--json"], tp.link_id);
    assert!(
        l["owners"].as_array().unwrap().iter().any(is_sleeper),
        "{l}"
    );
    let csv = brr(&["prog", "-x", "--csv"]);
    assert!(
        csv.lines()
            .next()
            .unwrap()
            .ends_with(",shared_maps,owners,held_by,attached"),
        "{csv}"
    );
    let _ = child.kill();
    let _ = child.wait();
    eprintln!("owner scan took {took:?}");

    let me = std::process::id();
    let sleeper = Owner {
        pid,
        comm: "sleep".into(),
    };
    assert_eq!(
        o.of(HeldKind::Prog, fx.prog.id),
        std::slice::from_ref(&sleeper),
        "one entry for two dups"
    );
    assert_eq!(o.of(HeldKind::Link, tp.link_id), [sleeper]);
    // Held only by this test (and its program): no owner once brr's own
    // pid is left out.
    assert!(o.of(HeldKind::Map, fx.map.id).is_empty());
    assert!(o.of(HeldKind::Prog, tp.prog.id).is_empty());
    for table in [&o.progs, &o.maps, &o.links] {
        for holders in table.values() {
            assert!(holders.iter().all(|h| h.pid != me));
            assert!(holders.windows(2).all(|w| w[0].pid < w[1].pid));
        }
    }
}

/// Objects no process holds say what keeps them loaded: a map only a
/// program uses, a program only a link holds, a map only a pin holds.
#[test]
fn objects_nobody_holds_say_how_they_stay_loaded() {
    if !support::live() {
        return;
    }
    let SocketFilterFixture { prog, map, .. } = SocketFilterFixture::load().expect("fixture");
    let map_id = map.id;
    drop(map);
    let RawTpLinkFixture {
        prog: tp_prog,
        link,
        link_id,
        ..
    } = RawTpLinkFixture::load().expect("raw_tp fixture");
    let tp_id = tp_prog.id;
    drop(tp_prog);
    let mut pins = support::PinDir::new().expect("pin dir");
    let pinned = support::create_map("brr_fx_pinned", 2, 4, 4, 1).expect("map");
    let pinned_id = pinned.id;
    pins.pin(pinned.fd.as_fd(), "only_pin").expect("pin");
    drop(pinned);
    let root = pins.path.to_str().unwrap().to_string();

    let maps = brr(&["--bpffs", &root, "map", "-x"]);
    assert!(
        row(&maps, map_id).contains(&format!("(held by prog {})", prog.id)),
        "{maps}"
    );
    assert!(row(&maps, pinned_id).contains("(pinned)"), "{maps}");
    let progs = brr(&["--bpffs", &root, "prog", "-x"]);
    let line = row(&progs, tp_id);
    assert!(
        line.contains(&format!("(held by link {link_id})")),
        "{line}"
    );
    // ATTACH: where the program is attached through its link.
    assert!(line.contains("sched_switch"), "{line}");
    let j = item(&["--bpffs", &root, "prog", "-x", "--json"], tp_id);
    assert_eq!(j["owners"], serde_json::json!([]));
    assert_eq!(
        j["held_by"],
        serde_json::json!({"kind": "link", "id": link_id})
    );
    assert_eq!(
        j["attached"],
        serde_json::json!([{"link_id": link_id, "attach_type": null, "target": "sched_switch", "perf_event": null}])
    );
    let m = item(&["--bpffs", &root, "map", "-x", "--json"], map_id);
    assert_eq!(
        m["held_by"],
        serde_json::json!({"kind": "prog", "id": prog.id})
    );
    drop(link);
}

/// `activity -x` adds MISSES: runs skipped by recursion in the window.
#[test]
fn activity_extended_shows_missed_runs() {
    if !support::live() {
        return;
    }
    // --all lists this idle fixture too, so the table is never empty;
    // --limit 0 keeps it listed however many other programs the host has.
    let fx = SocketFilterFixture::load().expect("fixture");
    let text = brr(&["activity", "-d", "1", "-x", "--all", "--limit", "0"]);
    assert!(
        row(&text, fx.prog.id).contains(SocketFilterFixture::FUNC_NAME),
        "{text}"
    );
    let header: Vec<&str> = text
        .lines()
        .next()
        .unwrap_or_default()
        .split_whitespace()
        .collect();
    assert!(header.contains(&"MISSES"), "{header:?}");
    assert!(
        header.ends_with(&["MISSES", "OWNERS", "ATTACH", "MEMLOCK", "MAPS_MEM"]),
        "{header:?}"
    );
}

#[test]
fn fdinfo_of_own_fds_matches_the_info_structs() {
    if !support::live() {
        return;
    }
    let fx = SocketFilterFixture::load().expect("socket filter fixture");
    let p = fdinfo::own_prog(fx.prog.fd()).expect("prog fdinfo");
    let info = fx.prog.info().expect("prog info");
    assert_eq!(p.prog_id, Some(fx.prog.id));
    assert_eq!(p.prog_type, Some(sys::BPF_PROG_TYPE_SOCKET_FILTER));
    assert_eq!(p.tag.as_deref(), Some(fx.prog.tag_hex().as_str()));
    assert_eq!(p.verified_insns, Some(info.verified_insns));
    assert!(p.memlock.is_some_and(|m| m > 0));
    let m = fdinfo::own_map(fx.map.fd()).expect("map fdinfo");
    assert_eq!(m.map_id, Some(fx.map.id));
    assert_eq!(
        (m.map_type, m.key_size, m.value_size, m.max_entries),
        (
            Some(fx.map.map_type),
            Some(fx.map.key_size),
            Some(fx.map.value_size),
            Some(fx.map.max_entries)
        )
    );
    assert_eq!((m.map_flags, m.frozen), (Some(0), Some(false)));
    assert!(m.memlock.is_some_and(|v| v > 0));
    let tp = RawTpLinkFixture::load().expect("raw_tp fixture");
    let l = fdinfo::own_link(tp.link.as_fd()).expect("link fdinfo");
    assert_eq!(l.link_type.as_deref(), Some("raw_tracepoint"));
    assert_eq!((l.link_id, l.prog_id), (Some(tp.link_id), Some(tp.prog.id)));
    assert_eq!(l.get("tp_name"), Some(tp.tp_name));
}

#[test]
fn program_extras_full_name_memlock_and_counters() {
    if !support::live() {
        return;
    }
    let fx = SocketFilterFixture::load().expect("socket filter fixture");
    fx.prog.test_run(5).expect("test run");
    let mut r = ExtraReader::new();
    let e = r.read_id(fx.prog.id).expect("extras");
    assert!(SocketFilterFixture::FUNC_NAME.len() > 15);
    assert_eq!(e.full_name, SocketFilterFixture::FUNC_NAME);
    let info = fx.prog.info().expect("prog info");
    assert_eq!(
        (e.verified_insns, e.recursion_misses),
        fx.prog.counters().expect("counters")
    );
    assert_eq!(e.created_by_uid, info.created_by_uid);
    assert_eq!(e.gpl_compatible, info.gpl_compatible != 0);
    assert_eq!(e.load_time_ns, info.load_time);
    let own = fdinfo::own_prog(fx.prog.fd()).expect("own fdinfo");
    assert_eq!(e.memlock_bytes, own.memlock);
    // Loaded moments ago: the date is today's, in the expected shape.
    let at = e.loaded_at.expect("loaded_at");
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    let today = brr::iso8601(now);
    assert_eq!(at.len(), 20, "{at}");
    assert_eq!(&at[..10], &today[..10], "{at} vs {today}");
    assert!(at.as_str() <= today.as_str());

    let nobtf = support::NoBtfFixture::load().expect("no-BTF fixture");
    let e = r.read_id(nobtf.prog.id).expect("extras");
    assert_eq!(e.full_name, support::NoBtfFixture::PROG_NAME);
}

/// The fields each listing asks for decide what the readers read: text
/// `prog` and `map` read no fdinfo (4 syscalls a program: next id, open,
/// info, close), JSON one per object, each the right object's.
#[test]
fn listings_read_fdinfo_only_where_they_print_it() {
    if !support::live() {
        return;
    }
    let fx = SocketFilterFixture::load().expect("socket filter fixture");
    let _many = support::load_many(8, 8);
    let json = Format::Json { pretty: false };
    for (format, wanted) in [(Format::Text, false), (json, true)] {
        let mut r = ProgramReader::new(program_fields(format, false));
        let mut progs = Vec::new();
        r.each(|p| {
            progs.push(p);
            Ok(())
        })
        .expect("programs");
        let mine = progs.iter().find(|p| p.id == fx.prog.id).expect("listed");
        assert_eq!(mine.full_name, SocketFilterFixture::FUNC_NAME);
        let own = fdinfo::own_prog(fx.prog.fd()).expect("own fdinfo").memlock;
        assert!(own.is_some_and(|m| m > 0), "the kernel's memlock: {own:?}");
        if wanted {
            assert_eq!(r.fdinfo_reads(), progs.len() as u64, "{format:?}");
            assert_eq!(mine.memlock_bytes, own);
            assert_eq!(mine.map_ids, vec![fx.map.id]);
        } else {
            assert_eq!(r.fdinfo_reads(), 0, "{format:?} read fdinfo");
            assert_eq!((mine.memlock_bytes, mine.map_ids.len()), (None, 0));
        }
        let mut r = MapReader::new(map_fields(format, false));
        let mut maps = Vec::new();
        r.each(|m| {
            maps.push(m);
            Ok(())
        })
        .expect("maps");
        let mine = maps.iter().find(|m| m.id == fx.map.id).expect("listed");
        let own = fdinfo::own_map(fx.map.fd()).expect("own fdinfo");
        assert!(own.memlock.is_some_and(|m| m > 0), "the kernel's memlock");
        assert_eq!(own.frozen, Some(false), "the fixture's map is not frozen");
        if wanted {
            assert_eq!(r.fdinfo_reads(), maps.len() as u64, "{format:?}");
            assert_eq!((mine.memlock_bytes, mine.frozen), (own.memlock, own.frozen));
        } else {
            assert_eq!(r.fdinfo_reads(), 0, "{format:?} read fdinfo");
            assert_eq!((mine.memlock_bytes, mine.frozen), (None, None));
        }
    }
}

/// A walk that closes each object's fd before opening the next reads the
/// next object's fdinfo through the file opened for the last one, and
/// gets that object's text.
#[test]
fn fdinfo_files_follow_their_fd_number() {
    if !support::live() {
        return;
    }
    let fx = SocketFilterFixture::load().expect("socket filter fixture");
    let other = support::NoBtfFixture::load().expect("no-BTF fixture");
    let mut own = fdinfo::OwnFdinfo::open().expect("own fdinfo");
    // Tests on other threads open fds too, and may take a freed number
    // first; the reuse must show within a few rounds.
    for _ in 0..50 {
        for id in [fx.prog.id, other.prog.id] {
            let fd = sys::prog_fd_by_id(id).expect("open by id");
            let text = own.read_object(fd.as_fd(), b"prog_id", id).expect("read");
            assert_eq!(fdinfo::parse_prog(&text).prog_id, Some(id));
        }
        if own.reused() > 0 {
            break;
        }
    }
    assert!(own.reused() > 0, "no fdinfo file was read again");
    // Another fd number opens its own file, and is still right.
    let a = sys::prog_fd_by_id(fx.prog.id).expect("open by id");
    let b = sys::prog_fd_by_id(other.prog.id).expect("open by id");
    let text = own
        .read_object(b.as_fd(), b"prog_id", other.prog.id)
        .expect("read");
    assert_eq!(fdinfo::parse_prog(&text).prog_id, Some(other.prog.id));
    let text = own
        .read_object(a.as_fd(), b"prog_id", fx.prog.id)
        .expect("read");
    assert_eq!(fdinfo::parse_prog(&text).prog_id, Some(fx.prog.id));
}

#[test]
fn raw_tracepoint_link_targets_the_tracepoint() {
    if !support::live() {
        return;
    }
    let tp = RawTpLinkFixture::load().expect("raw_tp fixture");
    let (fetched, _) = brr::bpf::link_info_with_name(tp.link.as_fd()).expect("link info");
    // The kernel's bpf_link_info size: 32 bytes on 5.10, 48 on 6.1, 64
    // since the perf_event member (6.6).
    assert!(
        [32, 48, 64].contains(&fetched.len),
        "this kernel's bpf_link_info size: {}",
        fetched.len
    );
    assert_eq!(
        target_of(&tp.link),
        LinkTarget {
            functions: Vec::new(),
            attach_type: None,
            target: Some(tp.tp_name.to_string()),
        }
    );
}

#[test]
fn cgroup_link_targets_the_cgroup_path() {
    if !support::live() {
        return;
    }
    let Some(root) = brr::cgroups::cgroup2_mount().map(|m| m.mount_point) else {
        support::skip("cgroup link: no cgroup2 mount");
        return;
    };
    let name = format!("brr-objects-{}", std::process::id());
    let dir = root.join(&name);
    if let Err(e) = std::fs::create_dir(&dir) {
        support::skip(format!("cgroup link: mkdir {}: {e}", dir.display()));
        return;
    }
    let got = (|| {
        let cg = std::fs::File::open(&dir)?;
        let prog = returning(PROG_TYPE_CGROUP_SKB, "brr_fx_cgskb", 1);
        let link = link_create(prog.fd(), cg.as_raw_fd() as u32, ATTACH_CGROUP_INET_INGRESS)?;
        Ok::<_, std::io::Error>(target_of(&link))
    })();
    // The link is gone before the directory is removed.
    let _ = std::fs::remove_dir(&dir);
    let got = got.expect("cgroup link");
    assert_eq!(
        got,
        LinkTarget {
            functions: Vec::new(),
            attach_type: Some("cgroup_inet_ingress".into()),
            target: Some(format!("/{name}")),
        }
    );
}

/// XDP and tcx on `lo`, a flow dissector and a netfilter hook in a
/// private network namespace, so the
/// host's networking is untouched (unshare moves this thread only).
#[test]
fn xdp_and_netns_links_in_a_private_netns() {
    if !support::live() {
        return;
    }
    let got = std::thread::spawn(|| {
        // SAFETY: unshare affects only this thread, which ends after the test.
        if unsafe { libc::unshare(libc::CLONE_NEWNET) } != 0 {
            return Err(format!("unshare: {}", std::io::Error::last_os_error()));
        }
        let ns = std::fs::File::open("/proc/thread-self/ns/net").map_err(|e| e.to_string())?;
        let ino = ns.metadata().map_err(|e| e.to_string())?.ino();
        let xdp = returning(PROG_TYPE_XDP, "brr_fx_xdp", 2);
        let xlink = link_create(xdp.fd(), 1, ATTACH_XDP).map_err(|e| format!("xdp link: {e}"))?;
        let fd = returning(PROG_TYPE_FLOW_DISSECTOR, "brr_fx_flow", 0);
        let nlink = link_create(fd.fd(), ns.as_raw_fd() as u32, ATTACH_FLOW_DISSECTOR)
            .map_err(|e| format!("netns link: {e}"))?;
        let cls = returning(PROG_TYPE_SCHED_CLS, "brr_fx_tcx", 0);
        let tlink =
            link_create(cls.fd(), 1, ATTACH_TCX_INGRESS).map_err(|e| format!("tcx link: {e}"))?;
        let nf = load_expecting(PROG_TYPE_NETFILTER, ATTACH_NETFILTER, "brr_fx_nf", 1)
            .map_err(|e| format!("netfilter program: {e}"))?;
        // pf NFPROTO_IPV4, hook NF_INET_LOCAL_IN, priority -100, no flags.
        let nf_args = [2 | (1 << 32), u64::from((-100i32) as u32), 0, 0, 0, 0];
        let flink = link_create_with(nf.as_fd(), 0, ATTACH_NETFILTER, nf_args)
            .map_err(|e| format!("netfilter link: {e}"))?;
        Ok((
            target_of(&xlink),
            target_of(&nlink),
            target_of(&tlink),
            target_of(&flink),
            ino,
        ))
    })
    .join()
    .expect("netns thread");
    let (xdp, netns, tcx, netfilter, ino) = match got {
        Ok(v) => v,
        Err(e) if std::env::var(support::REQUIRE_LIVE_ENV).as_deref() != Ok("1") => {
            support::skip(format!("xdp/netns links: {e}"));
            return;
        }
        Err(e) => panic!("{e}"),
    };
    // brr names interfaces from its own namespace; index 1 is lo in every
    // namespace.
    let lo = link_target::read_ifnames(std::path::Path::new("/sys/class/net"))
        .remove(&1)
        .unwrap_or_else(|| "ifindex 1".into());
    assert_eq!(
        xdp,
        LinkTarget {
            functions: Vec::new(),
            attach_type: None,
            target: Some(lo.clone()),
        }
    );
    assert_eq!(
        tcx,
        LinkTarget {
            functions: Vec::new(),
            attach_type: Some("tcx_ingress".into()),
            target: Some(lo),
        }
    );
    assert_eq!(
        netfilter,
        LinkTarget {
            functions: Vec::new(),
            attach_type: None,
            target: Some("ipv4 input prio -100".into()),
        }
    );
    assert_eq!(
        netns,
        LinkTarget {
            functions: Vec::new(),
            attach_type: Some("flow_dissector".into()),
            target: Some(format!("netns:[{ino}]")),
        }
    );
}

#[test]
fn sockmap_link_targets_the_map() {
    if !support::live() {
        return;
    }
    let map = support::create_map("brr_fx_sockmap", MAP_TYPE_SOCKMAP, 4, 4, 1).expect("sockmap");
    let prog = returning(PROG_TYPE_SK_SKB, "brr_fx_skskb", 1);
    let link = link_create(prog.fd(), map.fd.as_raw_fd() as u32, ATTACH_SK_SKB_VERDICT)
        .expect("sockmap link");
    assert_eq!(
        target_of(&link),
        LinkTarget {
            functions: Vec::new(),
            attach_type: Some("sk_skb_verdict".into()),
            target: Some(format!("map_id {}", map.id)),
        }
    );
}

fn skip_or_fail(what: &str, e: impl std::fmt::Display) {
    if std::env::var(support::REQUIRE_LIVE_ENV).as_deref() == Ok("1") {
        panic!("{what}: {e}");
    }
    support::skip(format!("{what}: {e}"));
}

/// What brr shows for a perf_event link: `want` where the kernel's
/// bpf_link_info has its perf_event member (64 bytes, 6.6), nothing before
/// (the kernel fills no info for these links there).
fn perf_event_info_or_nothing(link: &OwnedFd, want: LinkTarget) -> LinkTarget {
    let len = brr::bpf::link_info(link.as_fd()).expect("link info").len;
    if len >= 64 {
        want
    } else {
        LinkTarget::default()
    }
}

#[test]
fn perf_event_links_to_a_tracepoint_and_a_uprobe() {
    if !support::live() {
        return;
    }
    let id_file = ["/sys/kernel/tracing", "/sys/kernel/debug/tracing"]
        .iter()
        .map(|d| format!("{d}/events/sched/sched_switch/id"))
        .find_map(|p| std::fs::read_to_string(p).ok());
    match id_file.and_then(|t| t.trim().parse::<u64>().ok()) {
        None => skip_or_fail("perf_event tracepoint link", "no tracefs sched_switch id"),
        Some(tp_id) => {
            let ev = probes::perf_open(2, tp_id, 0, 0).expect("perf_event_open tracepoint");
            let prog = returning(PROG_TYPE_TRACEPOINT, "brr_fx_pe_tp", 0);
            let link = link_create(prog.fd(), ev.as_raw_fd() as u32, ATTACH_PERF_EVENT)
                .expect("perf_event link");
            let want = LinkTarget {
                functions: Vec::new(),
                attach_type: Some("tracepoint".into()),
                target: Some("sched_switch".into()),
            };
            assert_eq!(target_of(&link), perf_event_info_or_nothing(&link, want));
        }
    }

    let pmu = std::fs::read_to_string("/sys/bus/event_source/devices/uprobe/type")
        .ok()
        .and_then(|t| t.trim().parse::<u32>().ok());
    let Some(pmu) = pmu else {
        return skip_or_fail("perf_event uprobe link", "no uprobe PMU");
    };
    // A private copy, so the probe can never fire in a real program.
    let path = std::env::temp_dir().join(format!("brr-uprobe-target-{}", std::process::id()));
    std::fs::copy("/bin/true", &path).expect("copy /bin/true");
    let cpath = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
    let got = (|| {
        let ev = probes::perf_open(pmu, 0, cpath.as_ptr() as u64, 0x40)?;
        let prog = returning(PROG_TYPE_KPROBE, "brr_fx_pe_up", 0);
        let link = link_create(prog.fd(), ev.as_raw_fd() as u32, ATTACH_PERF_EVENT)?;
        let want = LinkTarget {
            functions: Vec::new(),
            attach_type: Some("uprobe".into()),
            target: Some(format!("{}+0x40", path.display())),
        };
        Ok::<_, std::io::Error>((target_of(&link), perf_event_info_or_nothing(&link, want)))
    })();
    let _ = std::fs::remove_file(&path);
    match got {
        Ok((t, want)) => assert_eq!(t, want),
        Err(e) => skip_or_fail("perf_event uprobe link", e),
    }
}

const ATTACH_TRACE_UPROBE_MULTI: u32 = 48;

/// `bpf_attr.link_create` with its `uprobe_multi` member.
#[repr(C)]
#[derive(Default)]
struct UprobeMultiLinkAttr {
    prog_fd: u32,
    target_fd: u32,
    attach_type: u32,
    flags: u32,
    path: u64,
    offsets: u64,
    ref_ctr_offsets: u64,
    cookies: u64,
    cnt: u32,
    multi_flags: u32,
    pid: u32,
    _pad: u32,
}

#[test]
fn uprobe_multi_link_targets_path_and_pid() {
    if !support::live() {
        return;
    }
    let prog = match load_expecting(
        PROG_TYPE_KPROBE,
        ATTACH_TRACE_UPROBE_MULTI,
        "brr_fx_upmulti",
        0,
    ) {
        Ok(p) => p,
        Err(e) => return skip_or_fail("uprobe_multi program", e),
    };
    let path = std::env::temp_dir().join(format!("brr-upmulti-target-{}", std::process::id()));
    std::fs::copy("/bin/true", &path).expect("copy /bin/true");
    let cpath = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
    let offsets = [0x40u64];
    // A pid filter on this process: the probe never fires in the copy.
    let pid = std::process::id();
    let mut attr = UprobeMultiLinkAttr {
        prog_fd: prog.as_raw_fd() as u32,
        attach_type: ATTACH_TRACE_UPROBE_MULTI,
        path: cpath.as_ptr() as u64,
        offsets: offsets.as_ptr() as u64,
        cnt: 1,
        pid,
        ..Default::default()
    };
    // SAFETY: the path and offsets pointers are live for the call and cnt
    // matches the offsets array.
    let link = unsafe { sys::sys_bpf_fd(BPF_LINK_CREATE, &mut attr) };
    let got = link.map(|l| target_of(&l));
    let _ = std::fs::remove_file(&path);
    match got {
        Ok(t) => assert_eq!(
            t,
            LinkTarget {
                functions: Vec::new(),
                attach_type: Some("uprobe_multi".into()),
                target: Some(format!("{} func_cnt 1 pid {pid}", path.display())),
            }
        ),
        Err(e) => skip_or_fail("uprobe_multi link", e),
    }
}

/// A kprobe_multi link on two kernel functions, attached by name: brr
/// names both from the addresses the kernel reports (on IBT kernels 4 bytes
/// past each symbol), TARGET the first and `+1 more`, JSON all of them.
/// Kernels before 6.6 report no kprobe_multi info: no attach type or
/// target.
#[test]
fn kprobe_multi_link_names_its_functions() {
    if !support::live() {
        return;
    }
    let prog = match load_expecting(
        PROG_TYPE_KPROBE,
        probes::ATTACH_TRACE_KPROBE_MULTI,
        "brr_fx_kpmulti",
        0,
    ) {
        Ok(p) => p,
        Err(e) => return skip_or_fail("kprobe_multi program", e),
    };
    let link = match probes::kprobe_multi(prog.as_fd(), &[c"vfs_read", c"vfs_write"], false) {
        Ok(l) => l,
        // A kernel built without CONFIG_FPROBE has no kprobe_multi links:
        // a fact of this kernel, not a failure of brr.
        Err(e) if e.raw_os_error() == Some(95) => {
            return support::skip(format!("no kprobe_multi links here (CONFIG_FPROBE): {e}"))
        }
        Err(e) => return skip_or_fail("kprobe_multi link", e),
    };
    let t = target_of(&link);
    if brr::bpf::link_info(link.as_fd())
        .expect("link info")
        .info
        .kprobe_multi()
        .count
        == 0
    {
        assert_eq!(t, LinkTarget::default(), "a kernel before 6.6");
        return;
    }
    let mut got = t.functions.clone();
    got.sort();
    assert_eq!(got, ["vfs_read", "vfs_write"], "{t:?}");
    let first = format!("{} +1 more", t.functions[0]);
    assert!(
        t.target.as_deref().is_some_and(|s| s.starts_with(&first)),
        "{t:?}"
    );
    assert_eq!(t.attach_type.as_deref(), Some("kprobe_multi"));
    listed_like(&link, &t);
    let id = sys::link_info(link.as_fd()).expect("link id").id;
    let j = item(&["link", "--json"], id);
    assert_eq!(j["functions"], serde_json::json!(t.functions), "{j}");
}

/// Fail the test with `e` when probes are required here, else skip it.
fn refused(what: &str, e: impl std::fmt::Display) {
    if let Err(e) = probes::refused(what, e) {
        panic!("{e}");
    }
}

/// fentry and fexit links on vmlinux functions: brr names the traced
/// function from vmlinux BTF, as bpftool does. Kernels before 5.13 report
/// the attach type and no target, and then brr shows none.
#[test]
fn tracing_links_name_their_target_function() {
    if !support::live() {
        return;
    }
    for (func, exit_side, name, kind) in [
        ("vfs_read", false, "brr_fx_fentry", "trace_fentry"),
        ("vfs_write", true, "brr_fx_fexit", "trace_fexit"),
    ] {
        let (_prog, link) = match probes::fentry(func, exit_side, name) {
            Ok(x) => x,
            Err(e) => return refused(&format!("{kind} on {func}"), e),
        };
        let info = brr::bpf::link_info(link.as_fd()).expect("link info").info;
        let target = (info.tracing().target_btf_id != 0).then(|| func.to_string());
        let want = LinkTarget {
            functions: Vec::new(),
            attach_type: Some(kind.into()),
            target,
        };
        assert_eq!(target_of(&link), want);
        let j = item(&["link", "-x", "--json"], info.id);
        assert_eq!(j["attach_type"], kind, "{j}");
        assert_eq!(j["target"].as_str(), want.target.as_deref(), "{j}");
    }
}

/// A kprobe (or kretprobe) perf event on `func` and a kprobe program
/// returning 0; None when the kernel refused the event (the test skipped).
fn kprobe_and_prog(ret: bool, func: &str, kind: &str, name: &str) -> Option<(OwnedFd, LoadedProg)> {
    match probes::kprobe_event(func, 0, ret) {
        Ok(ev) => Some((ev, returning(PROG_TYPE_KPROBE, name, 0))),
        Err(e) => {
            refused(&format!("a {kind} perf event on {func}"), e);
            None
        }
    }
}

/// The TARGET of a perf_event link to a kprobe: the function, then
/// `missed N` where the kernel reports misses.
fn kprobe_target_ok(target: &str, func: &str) -> bool {
    target.strip_prefix(func).is_some_and(|rest| {
        rest.is_empty()
            || rest
                .strip_prefix(" missed ")
                .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
    })
}

/// A kprobe and a kretprobe on the kprobe PMU, attached with perf_event
/// links (5.15): brr names the probed function where the kernel fills the
/// link's info (6.6), nothing before.
#[test]
fn perf_event_links_to_a_kprobe_and_a_kretprobe() {
    if !support::live() {
        return;
    }
    for (ret, func, kind, name) in [
        (false, "vfs_read", "kprobe", "brr_fx_pe_kp"),
        (true, "vfs_write", "kretprobe", "brr_fx_pe_krp"),
    ] {
        let Some((ev, prog)) = kprobe_and_prog(ret, func, kind, name) else {
            return;
        };
        let link = match link_create(prog.fd(), ev.as_raw_fd() as u32, ATTACH_PERF_EVENT) {
            Ok(l) => l,
            Err(e) => return refused(&format!("a perf_event link to a {kind} (5.15)"), e),
        };
        let t = target_of(&link);
        if brr::bpf::link_info(link.as_fd()).expect("link info").len < 64 {
            assert_eq!(t, LinkTarget::default(), "a kernel before 6.6: {t:?}");
            continue;
        }
        assert_eq!(t.attach_type.as_deref(), Some(kind), "{t:?}");
        assert!(
            t.target
                .as_deref()
                .is_some_and(|s| kprobe_target_ok(s, func)),
            "{t:?}"
        );
    }
}

/// BCC's way: a kprobe and a kretprobe perf event from the kprobe PMU,
/// each running a program through `PERF_EVENT_IOC_SET_BPF` (no link).
/// `brr prog` names them `kprobe:vfs_read` and `kretprobe:vfs_write`, as
/// `bpftool perf` does, with the perf event that holds each.
#[test]
fn kprobe_perf_event_attachments_name_the_function() {
    if !support::live() {
        return;
    }
    let mut held = Vec::new();
    for (ret, func, kind, name) in [
        (false, "vfs_read", "kprobe", "brr_fx_sbpf_kp"),
        (true, "vfs_write", "kretprobe", "brr_fx_sbpf_krp"),
    ] {
        let Some((ev, prog)) = kprobe_and_prog(ret, func, kind, name) else {
            return;
        };
        if let Err(e) = probes::set_bpf(&ev, prog.fd()) {
            return refused(&format!("PERF_EVENT_IOC_SET_BPF on a {kind}"), e);
        }
        held.push((ev, prog, func, kind));
    }
    let text = brr(&["prog", "-x"]);
    for (ev, prog, func, kind) in &held {
        let j = item(&["prog", "-x", "--json"], prog.id);
        assert_eq!(
            j["attached"],
            serde_json::json!([{
                "link_id": null,
                "attach_type": kind,
                "target": func,
                "perf_event": {"pid": std::process::id(), "fd": ev.as_raw_fd()},
            }]),
            "{j}"
        );
        let line = row(&text, prog.id);
        assert!(line.contains(&format!("{kind}:{func}")), "{line}");
    }
}

/// Cost of extras and of the owner scan over every program on the host
/// (e.g. with `fixture hold --progs 1000 --maps 1000` running): run with
/// `--ignored --nocapture`. Prints figures, asserts nothing about time.
#[test]
#[ignore]
fn extras_and_owner_scan_cost() {
    if !support::live() {
        return;
    }
    let mut ids = Vec::new();
    let mut id = 0;
    while let Ok(Some(next)) = sys::prog_next_id(id) {
        ids.push(next);
        id = next;
    }
    let fds: Vec<OwnedFd> = ids
        .iter()
        .filter_map(|&i| sys::prog_fd_by_id(i).ok())
        .collect();
    let n = fds.len() as u32;
    let t = std::time::Instant::now();
    for fd in &fds {
        let _ = sys::prog_map_ids(fd.as_fd());
    }
    let listing = t.elapsed();
    let t = std::time::Instant::now();
    for fd in &fds {
        let _ = brr::bpf::prog_info_first_func(fd.as_fd());
    }
    let func_call = t.elapsed();
    let mut own = fdinfo::OwnFdinfo::open().expect("own fdinfo");
    let t = std::time::Instant::now();
    for fd in &fds {
        let _ = own.read(fd.as_fd());
    }
    let fdinfo_reads = t.elapsed();
    let mut r = ExtraReader::new();
    let t = std::time::Instant::now();
    let ok = fds.iter().filter(|fd| r.read(fd).is_ok()).count();
    let extras = t.elapsed();
    let _ = owners::scan();
    let t = std::time::Instant::now();
    let o = owners::scan();
    let scan = t.elapsed();
    println!(
        "{n} programs: listing info call {listing:?}, extras {extras:?} ({ok} read, {:?} each; \
of which first-func info call {func_call:?}, fdinfo reads {fdinfo_reads:?}); \
owner scan {scan:?} ({} programs held by some process)",
        extras / n.max(1),
        o.progs.len()
    );
}

fn tracepoint_id(category: &str, name: &str) -> Option<u64> {
    ["/sys/kernel/tracing", "/sys/kernel/debug/tracing"]
        .iter()
        .map(|d| format!("{d}/events/{category}/{name}/id"))
        .find_map(|p| std::fs::read_to_string(p).ok())
        .and_then(|t| t.trim().parse().ok())
}

/// bpftrace-style attachments through perf event fds (no link) are named
/// from the owner scan's BPF_TASK_FD_QUERY: a tracepoint held by a child
/// that is then the program's only holder, and a uprobe held by the test.
#[test]
fn perf_event_fd_attachments_are_named_without_a_link() {
    if !support::live() {
        return;
    }
    let Some(tp_id) = tracepoint_id("sched", "sched_switch") else {
        return skip_or_fail("perf event fd attachment", "no tracefs sched_switch id");
    };
    let ev = probes::perf_open(2, tp_id, 0, 0).expect("perf_event_open tracepoint");
    let tp_prog = returning(PROG_TYPE_TRACEPOINT, "brr_fx_sbpf_tp", 0);
    probes::set_bpf(&ev, tp_prog.fd()).expect("PERF_EVENT_IOC_SET_BPF tracepoint");
    let tp_id_prog = tp_prog.id;
    // The event now holds the program; a child holding a dup of the event
    // is all that keeps it loaded, as a bpftrace process does.
    let mut child = child_holding(&[ev.as_fd()]);
    wait_exec(&child);
    let child_pid = child.id();
    let child_fd = std::fs::read_dir(format!("/proc/{child_pid}/fd"))
        .expect("child fds")
        .flatten()
        .find(|e| {
            std::fs::read_link(e.path()).is_ok_and(|t| t.as_os_str() == "anon_inode:[perf_event]")
        })
        .and_then(|e| e.file_name().to_str()?.parse::<u64>().ok())
        .expect("the child holds the perf event");
    drop(tp_prog);
    drop(ev);

    // A uprobe on a private copy of /bin/true, held by this process.
    let uprobe_pmu = std::fs::read_to_string("/sys/bus/event_source/devices/uprobe/type")
        .ok()
        .and_then(|t| t.trim().parse::<u32>().ok());
    let path = std::env::temp_dir().join(format!("brr-setbpf-uprobe-{}", std::process::id()));
    std::fs::copy("/bin/true", &path).expect("copy /bin/true");
    let cpath = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
    let uprobe = uprobe_pmu.map(|pmu| {
        let ev = probes::perf_open(pmu, 0, cpath.as_ptr() as u64, 0x40)?;
        let prog = returning(PROG_TYPE_KPROBE, "brr_fx_sbpf_up", 0);
        probes::set_bpf(&ev, prog.fd())?;
        Ok::<_, std::io::Error>((ev, prog))
    });

    let text = brr(&["prog", "-x"]);
    let json = item(&["prog", "-x", "--json"], tp_id_prog);
    let activity = brr(&["activity", "-x", "--all", "-d", "0.2"]);
    let up_checks = uprobe.as_ref().map(|u| {
        u.as_ref().map(|(ev, prog)| {
            (
                ev.as_raw_fd(),
                prog.id,
                item(&["prog", "-x", "--json"], prog.id),
            )
        })
    });
    let _ = child.kill();
    let _ = child.wait();
    let _ = std::fs::remove_file(&path);

    let line = row(&text, tp_id_prog);
    assert!(line.contains("tracepoint:sched_switch"), "{line}");
    assert!(line.contains(&format!("sleep({child_pid})")), "{line}");
    assert!(
        row(&activity, tp_id_prog).contains("tracepoint:sched_switch"),
        "{activity}"
    );
    assert_eq!(
        json["attached"],
        serde_json::json!([{
            "link_id": null,
            "attach_type": "tracepoint",
            "target": "sched_switch",
            "perf_event": {"pid": child_pid, "fd": child_fd},
        }]),
        "{json}"
    );
    assert_eq!(json["owners"][0]["pid"], child_pid, "{json}");
    match up_checks {
        None => skip_or_fail("perf event fd uprobe", "no uprobe PMU"),
        Some(Err(e)) => skip_or_fail("perf event fd uprobe", e),
        Some(Ok((fd, id, j))) => {
            assert_eq!(
                j["attached"],
                serde_json::json!([{
                    "link_id": null,
                    "attach_type": "uprobe",
                    "target": format!("{}+0x40", path.display()),
                    "perf_event": {"pid": std::process::id(), "fd": fd},
                }]),
                "{j}"
            );
            assert!(row(&text, id).contains(&format!("uprobe:{}+0x40", path.display())));
        }
    }
}

/// The exporter's `brr_link_info{target=…}` is the TARGET `brr link`
/// prints: a perf_event link to `sys_enter_execve` and a raw_tracepoint
/// link to `sys_enter`, both made here.
#[test]
fn exporter_link_target_is_the_link_listings_target() {
    if !support::live() {
        return;
    }
    let Some(tp_id) = tracepoint_id("syscalls", "sys_enter_execve") else {
        return skip_or_fail("perf_event link", "no tracefs sys_enter_execve id");
    };
    let ev = probes::perf_open(2, tp_id, 0, 0).expect("perf_event_open tracepoint");
    let prog = returning(PROG_TYPE_TRACEPOINT, "brr_fx_ex_tp", 0);
    let pe_link =
        link_create(prog.fd(), ev.as_raw_fd() as u32, ATTACH_PERF_EVENT).expect("perf_event link");
    let raw = RawTpLinkFixture::load().expect("raw_tracepoint link fixture");
    let ids = [
        sys::link_info(pe_link.as_fd()).expect("link info").id,
        raw.link_id,
    ];
    let listing: serde_json::Value =
        serde_json::from_str(&run::stdout(&brr_ok(&["link", "--json"]))).expect("JSON");
    let exp = exporter::Exporter::start(&[]);
    let mut s = std::net::TcpStream::connect(exp.addr).expect("connect");
    std::io::Write::write_all(
        &mut s,
        b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
    )
    .expect("send");
    let mut body = String::new();
    std::io::Read::read_to_string(&mut s, &mut body).expect("scrape");
    for (id, want) in ids.iter().zip(["sys_enter_execve", raw.tp_name]) {
        let item = listing["items"]
            .as_array()
            .and_then(|a| a.iter().find(|l| l["id"] == *id))
            .unwrap_or_else(|| panic!("link {id} listed"));
        assert_eq!(item["target"], want, "{item}");
        let series = body
            .lines()
            .find(|l| l.starts_with(&format!("brr_link_info{{id=\"{id}\",")))
            .unwrap_or_else(|| panic!("no brr_link_info for {id}:\n{body}"));
        assert!(
            series.ends_with(&format!(",target=\"{want}\"}} 1")),
            "{series}"
        );
    }
}
