//! Live tests of cgroup recognition (root): real cgroups made in this
//! host's cgroup2 hierarchy, wherever it is mounted, in the path shapes of
//! each container runtime and of the kubelet's two cgroup drivers, with a
//! real process moved into each; brr must name the process's cgroup from
//! `/proc/PID/cgroup` and from the cgroup ID (the directory's inode), both
//! relative to the cgroup2 mount, and recognise its container and pod, with
//! the names from kubelet-like log directories in a temporary directory;
//! then that the profile (JSON, text, pprof), `prog -x --json` and the
//! exporter name them. Everything made is removed afterwards, also when a
//! test fails.

// Test tooling: helpers outside #[test] functions fail the test by panicking,
// as the tests themselves do (clippy.toml only exempts #[test] code).
#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]
// The runner process is forked and signalled with libc, which is unsafe.
#![allow(unsafe_code)]

#[path = "support/exporter.rs"]
mod exporter;
#[path = "support/pprof.rs"]
#[allow(dead_code)] // not every helper is used here
mod pprof;
// Both tests make `kubepods.slice`: they hold `run::serial()`, so that
// neither removes the other's parents or leaves its own behind.
#[path = "support/run.rs"]
mod run;
mod support;
#[path = "support/traced.rs"]
#[allow(dead_code)] // not every helper is used here
mod traced;

use std::collections::BTreeSet;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use brr::cgroups::{self, Cgroup2Mount, Workloads};
use brr::{Container, Pod, Qos, Runtime, Workload};
use exporter::Exporter;
use run::{brr_ok, serial};
use serde_json::Value;
use support::*;
use traced::Traced;

/// The cgroup2 mount, or `None` (with the reason) where these tests cannot
/// run; with `BRR_REQUIRE_LIVE=1` that is a failure.
fn mount() -> Option<Cgroup2Mount> {
    if !live() {
        return None;
    }
    let why = match cgroups::cgroup2_mount() {
        Some(m) if rustix::process::geteuid().is_root() => return Some(m),
        Some(_) => "not root",
        None => "no cgroup2 mount in /proc/self/mountinfo",
    };
    if std::env::var(REQUIRE_LIVE_ENV).as_deref() == Ok("1") {
        panic!("{REQUIRE_LIVE_ENV}=1 but cgroups cannot be made: {why}");
    }
    skip(format!("cgroup test: {why}"));
    None
}

/// Cgroups made by a test and the processes put into them. Dropping it
/// moves the processes back to the root cgroup, kills them and removes
/// the directories it made, deepest first; directories that existed
/// before are left alone.
struct Tree {
    mount: Cgroup2Mount,
    made: Vec<PathBuf>,
    children: Vec<Child>,
    forked: Vec<i32>,
}

impl Tree {
    fn new(mount: Cgroup2Mount) -> Tree {
        Tree {
            mount,
            made: Vec::new(),
            children: Vec::new(),
            forked: Vec::new(),
        }
    }

    /// `mkdir -p` of `rel` under the mount; returns the leaf.
    fn make(&mut self, rel: &str) -> PathBuf {
        let mut dir = self.mount.mount_point.clone();
        for part in rel.split('/').filter(|p| !p.is_empty()) {
            dir.push(part);
            match std::fs::create_dir(&dir) {
                Ok(()) => self.made.push(dir.clone()),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                Err(e) => panic!("mkdir {}: {e}", dir.display()),
            }
        }
        dir
    }

    /// The path brr must report for `rel`: from the hierarchy's root.
    fn path(&self, rel: &str) -> String {
        format!("{}/{rel}", self.mount.root.trim_end_matches('/'))
    }

    fn enter(leaf: &Path, pid: u32) {
        std::fs::write(leaf.join("cgroup.procs"), pid.to_string())
            .unwrap_or_else(|e| panic!("move {pid} into {}: {e}", leaf.display()));
    }

    /// Everything undone; returns what could not be.
    fn cleanup(&mut self) -> Vec<String> {
        let root_procs = self.mount.mount_point.join("cgroup.procs");
        let pids: Vec<u32> = (self.children.iter().map(Child::id))
            .chain(self.forked.iter().map(|&p| p as u32))
            .collect();
        for pid in pids {
            let _ = std::fs::write(&root_procs, pid.to_string());
        }
        for mut c in self.children.drain(..) {
            let _ = c.kill();
            let _ = c.wait();
        }
        for pid in self.forked.drain(..) {
            // SAFETY: our own forked child, killed and reaped once.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
                libc::waitpid(pid, std::ptr::null_mut(), 0);
            }
        }
        let mut failed = Vec::new();
        for dir in self.made.drain(..).rev() {
            let deadline = Instant::now() + Duration::from_secs(2);
            loop {
                match std::fs::remove_dir(&dir) {
                    Ok(()) => break,
                    Err(e)
                        if e.raw_os_error() == Some(libc::EBUSY) && Instant::now() < deadline =>
                    {
                        std::thread::sleep(Duration::from_millis(10));
                    }
                    Err(e) => {
                        failed.push(format!("rmdir {}: {e}", dir.display()));
                        break;
                    }
                }
            }
        }
        failed
    }
}

impl Drop for Tree {
    fn drop(&mut self) {
        for f in self.cleanup() {
            eprintln!("cgroup test cleanup: {f}");
        }
    }
}

/// A temporary directory removed when dropped.
struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A 64-hex-digit container ID unique to this run and `n`.
fn cid(n: u32) -> String {
    format!("{:08x}{n:08x}{}", std::process::id(), "c0ffee42".repeat(6))
}

/// A pod UID unique to this run and `n`.
fn uid(n: u32) -> String {
    format!("{:08x}-0000-4000-8000-{n:012x}", std::process::id())
}

/// The kubelet's log directories for the given (namespace, pod, uid,
/// container, container ID) in `dir`.
fn kubelet_logs(dir: &Path, entries: &[(&str, &str, &str, &str, &str)]) {
    std::fs::create_dir_all(dir.join("containers")).unwrap();
    for (ns, pod, uid, container, id) in entries {
        let logs = dir.join(format!("pods/{ns}_{pod}_{uid}/{container}"));
        std::fs::create_dir_all(&logs).unwrap();
        std::fs::write(logs.join("0.log"), "").unwrap();
        let link = dir.join(format!("containers/{pod}_{ns}_{container}-{id}.log"));
        std::os::unix::fs::symlink(logs.join("0.log"), link).unwrap();
    }
}

fn container(runtime: Runtime, id: &str, name: Option<&str>) -> Option<Container> {
    Some(Container {
        runtime,
        id: id.into(),
        name: name.map(Into::into),
    })
}

fn pod(uid: &str, names: Option<(&str, &str)>, qos: Qos) -> Option<Pod> {
    Some(Pod {
        uid: uid.into(),
        namespace: names.map(|n| n.0.into()),
        name: names.map(|n| n.1.into()),
        qos: Some(qos),
    })
}

/// A workload for every runtime and driver; its `path` is relative to the
/// mount.
fn shapes() -> Vec<Workload> {
    let (u1, u2, u3, u4) = (uid(1), uid(2), uid(3), uid(4));
    let (s1, s2) = (u1.replace('-', "_"), u2.replace('-', "_"));
    let checkout = Some(("payments", "checkout-7d9f8b6c5-x2k4p"));
    let agent = Some(("kube-system", "agent-x7k2p"));
    let worker = Some(("batch", "worker-0"));
    let w = |path: String, container, pod, service| Workload {
        path,
        container,
        pod,
        service,
    };
    vec![
        w(
            format!("kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod{s1}.slice/cri-containerd-{}.scope", cid(1)),
            container(Runtime::Containerd, &cid(1), Some("server")),
            pod(&u1, checkout, Qos::Burstable),
            None,
        ),
        w(
            format!("kubepods.slice/kubepods-pod{s2}.slice/crio-{}.scope", cid(2)),
            container(Runtime::CriO, &cid(2), Some("agent")),
            pod(&u2, agent, Qos::Guaranteed),
            None,
        ),
        w(
            format!("kubepods.slice/kubepods-pod{s2}.slice/crio-conmon-{}.scope", cid(2)),
            None,
            pod(&u2, agent, Qos::Guaranteed),
            Some(format!("crio-conmon-{}.scope", cid(2))),
        ),
        w(
            format!("kubepods/besteffort/pod{u3}/{}", cid(3)),
            container(Runtime::Containerd, &cid(3), Some("worker")),
            pod(&u3, worker, Qos::BestEffort),
            None,
        ),
        // A pod the logs do not know: recognised, not named.
        w(
            format!("kubepods/pod{u4}/{}", cid(4)),
            container(Runtime::Containerd, &cid(4), None),
            pod(&u4, None, Qos::Guaranteed),
            None,
        ),
        w(
            format!("system.slice/docker-{}.scope", cid(5)),
            container(Runtime::Docker, &cid(5), None),
            None,
            None,
        ),
        w(
            format!("docker/{}", cid(6)),
            container(Runtime::Docker, &cid(6), None),
            None,
            None,
        ),
        w(
            format!("machine.slice/libpod-{}.scope", cid(7)),
            container(Runtime::Podman, &cid(7), None),
            None,
            None,
        ),
        w(
            format!("machine.slice/libpod-conmon-{}.scope", cid(7)),
            None,
            None,
            Some(format!("libpod-conmon-{}.scope", cid(7))),
        ),
        w(
            format!("system.slice/brr-test-{}.service", std::process::id()),
            None,
            None,
            Some(format!("brr-test-{}.service", std::process::id())),
        ),
    ]
}

#[test]
fn runtime_cgroups_name_their_containers_and_pods() {
    let Some(mount) = mount() else {
        return;
    };
    let _serial = serial();
    let logs = Scratch(std::env::temp_dir().join(format!("brr-kubelet-{}", std::process::id())));
    let _ = std::fs::remove_dir_all(&logs.0);
    kubelet_logs(
        &logs.0,
        &[
            (
                "payments",
                "checkout-7d9f8b6c5-x2k4p",
                &uid(1),
                "server",
                &cid(1),
            ),
            ("kube-system", "agent-x7k2p", &uid(2), "agent", &cid(2)),
            ("batch", "worker-0", &uid(3), "worker", &cid(3)),
        ],
    );
    let mut tree = Tree::new(mount.clone());
    let child = Command::new("sleep")
        .arg("600")
        .stdin(Stdio::null())
        .spawn()
        .expect("start sleep");
    let pid = child.id();
    tree.children.push(child);
    let mut workloads = Workloads::new(&logs.0);
    for shape in shapes() {
        let rel = shape.path.clone();
        let leaf = tree.make(&rel);
        Tree::enter(&leaf, pid);
        let want = Workload {
            path: tree.path(&rel),
            ..shape
        };
        // From /proc/PID/cgroup, as for samples without a cgroup ID.
        let by_task = cgroups::task_paths([pid], Path::new("/proc"));
        assert_eq!(by_task.get(&pid), Some(&want.path), "{rel}");
        // From the cgroup ID, as PERF_SAMPLE_CGROUP reports it.
        let id = std::fs::metadata(&leaf).unwrap().ino();
        let by_id = cgroups::paths_by_id(&mount, Some(&BTreeSet::from([id])));
        assert_eq!(by_id.get(&id), Some(&want.path), "{rel}");
        assert_eq!(cgroups::paths_of([id]).get(&id), Some(&want.path));
        assert_eq!(workloads.of(&want.path), want);
    }
    // The whole-tree walk (link targets) names them too.
    let all = cgroups::paths_by_id(&mount, None);
    let leaf = tree.make(&shapes()[0].path);
    let id = std::fs::metadata(&leaf).unwrap().ino();
    assert_eq!(all.get(&id), Some(&tree.path(&shapes()[0].path)));

    let made = tree.made.clone();
    assert!(made.len() >= shapes().len(), "{made:?}");
    let failed = tree.cleanup();
    assert!(failed.is_empty(), "{failed:?}");
    for dir in made {
        assert!(!dir.exists(), "{} removed", dir.display());
    }
}

/// The profiler's `cgroups` name a sampled task's cgroup relative to the
/// cgroup2 mount (on a hybrid host not `/unified/...`).
#[test]
fn profile_cgroup_paths_are_relative_to_the_cgroup2_mount() {
    let Some(mount) = mount() else {
        return;
    };
    let _serial = serial();
    let mut tree = Tree::new(mount);
    let rel = format!(
        "kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod{}.slice/cri-containerd-{}.scope",
        uid(9).replace('-', "_"),
        cid(9)
    );
    let leaf = tree.make(&rel);
    let id = std::fs::metadata(&leaf).unwrap().ino();
    let fx = HotFixture::load().expect("load hot fixture");
    // Enough calls for about 0.6 s of program time.
    let t = Instant::now();
    sys::test_run(fx.prog.fd(), HOT_REPEAT).expect("test run");
    let per_call = t.elapsed().max(Duration::from_micros(50));
    let calls = (Duration::from_millis(600).as_nanos() / per_call.as_nanos()).max(20) as u64;

    let prog_id = fx.prog.id.to_string();
    let mut brr = Traced::spawn(
        &["profile", "--json", "-d", "3", "--program-id", &prog_id],
        &[],
    );
    brr.wait_ready("capture");
    let runner = fork_runner(fx.prog.fd(), calls, Some(&leaf.join("cgroup.procs")));
    tree.forked.push(runner);
    let (out, _) = brr.finish();
    assert!(
        out.status.success(),
        "brr failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let p = &doc["items"][0];
    assert_eq!(p["id"].as_u64(), Some(u64::from(fx.prog.id)));
    let want = tree.path(&rel);
    let cg = p["cgroups"].as_array().expect("cgroups array");
    let row = cg
        .iter()
        .find(|c| c["id"].as_u64() == Some(id))
        .unwrap_or_else(|| panic!("cgroup {id} ({want}) in {cg:?}"));
    assert_eq!(row["path"].as_str(), Some(want.as_str()));
    assert!(row["samples"].as_u64().unwrap_or(0) > 0, "{row}");
    let failed = tree.cleanup();
    assert!(failed.is_empty(), "{failed:?}");
    assert!(!leaf.exists());
}

/// Expected JSON of a workload's container.
fn container_value(c: Option<&Container>) -> Value {
    c.map_or(
        Value::Null,
        |c| serde_json::json!({"runtime": c.runtime.as_str(), "id": c.id, "name": c.name}),
    )
}

/// Expected JSON of a workload's pod.
fn pod_value(p: Option<&Pod>) -> Value {
    p.map_or(Value::Null, |p| {
        serde_json::json!({
            "uid": p.uid,
            "namespace": p.namespace,
            "name": p.name,
            "qos": p.qos.map(|q| q.as_str()),
        })
    })
}

/// The pprof labels a sample of a task in `w` must carry.
fn pprof_labels(w: &Workload) -> std::collections::BTreeMap<String, String> {
    let c = w.container.as_ref();
    let p = w.pod.as_ref();
    [
        ("container", c.and_then(|c| c.name.clone())),
        ("container_id", c.map(|c| c.id.clone())),
        ("pod", p.and_then(|p| p.name.clone())),
        ("namespace", p.and_then(|p| p.namespace.clone())),
    ]
    .into_iter()
    .filter_map(|(k, v)| Some((k.to_string(), v?)))
    .collect()
}

/// A runner: a process driving the fixture from its cgroup.
struct Runner {
    pid: u32,
    /// Its cgroup's ID.
    cgroup: u64,
    /// Its workload, with the path brr reports.
    want: Workload,
}

/// The text cells brr prints for a container and a pod.
fn cells(w: &Workload) -> (String, String) {
    let container = w.container.as_ref().map_or_else(
        || "-".to_string(),
        |c| {
            c.name
                .clone()
                .unwrap_or_else(|| c.id.chars().take(12).collect())
        },
    );
    let pod = w.pod.as_ref().map_or_else(
        || "-".to_string(),
        |p| match (&p.namespace, &p.name) {
            (Some(ns), Some(n)) => format!("{ns}/{n}"),
            _ => p.uid.clone(),
        },
    );
    (container, pod)
}

/// Profile JSON and pprof from one capture: each runner's cgroup and task
/// name its container and pod, and its samples carry the labels.
fn check_profile_json_and_pprof(logs: &str, out: &Path, prog_id: u32, runners: &[Runner]) {
    let pb = out.join("p.pb.gz");
    let id = prog_id.to_string();
    let o = brr_ok(&[
        "--kubelet-logs",
        logs,
        "profile",
        "--json",
        "-d",
        "2",
        "--program-id",
        &id,
        "--line-limit",
        "0",
        "--pprof",
        pb.to_str().unwrap(),
    ]);
    let doc: Value = serde_json::from_slice(&o.stdout).expect("JSON");
    let p = &doc["items"][0];
    assert_eq!(p["id"].as_u64(), Some(u64::from(prog_id)));
    let row = |key: &str, id_key: &str, id: u64| -> Value {
        p[key]
            .as_array()
            .and_then(|a| a.iter().find(|r| r[id_key].as_u64() == Some(id)))
            .cloned()
            .unwrap_or_else(|| panic!("{key} {id} in {}", p[key]))
    };
    for r in runners {
        let c = container_value(r.want.container.as_ref());
        let pod = pod_value(r.want.pod.as_ref());
        let cg = row("cgroups", "id", r.cgroup);
        assert_eq!(cg["path"].as_str(), Some(r.want.path.as_str()));
        assert_eq!((&cg["container"], &cg["pod"]), (&c, &pod), "{cg}");
        let task = row("tasks", "pid", u64::from(r.pid));
        assert_eq!((&task["container"], &task["pod"]), (&c, &pod), "{task}");
    }
    let profile = pprof::decode(&std::fs::read(&pb).expect("pprof file"));
    for r in runners {
        let samples: Vec<&pprof::Sample> = profile
            .samples
            .iter()
            .filter(|s| s.nums.get("pid") == Some(&i64::from(r.pid)))
            .collect();
        assert!(!samples.is_empty(), "samples of {}", r.pid);
        for s in samples {
            let mut got = s.labels.clone();
            got.remove("comm");
            got.remove("prog_tag");
            assert_eq!(got, pprof_labels(&r.want), "{}", r.want.path);
        }
    }
}

/// The text cgroup table: CONTAINER and POD beside each cgroup.
fn check_profile_text(logs: &str, prog_id: u32, runners: &[Runner]) {
    let id = prog_id.to_string();
    let o = brr_ok(&[
        "--kubelet-logs",
        logs,
        "profile",
        "-d",
        "2",
        "--program-id",
        &id,
        "--line-limit",
        "0",
    ]);
    let text = String::from_utf8(o.stdout).unwrap();
    assert!(text.contains("CGROUP_ID  CONTAINER"), "{text}");
    for r in runners {
        let row = text
            .lines()
            .find(|l| l.trim_end().ends_with(&r.want.path))
            .unwrap_or_else(|| panic!("a row for {}:\n{text}", r.want.path));
        let (container, pod) = cells(&r.want);
        let got: Vec<&str> = row.split_whitespace().skip(2).collect();
        let cgroup = r.cgroup.to_string();
        assert_eq!(
            got,
            [cgroup.as_str(), &container, &pod, &r.want.path],
            "{row}"
        );
    }
}

/// `prog -x --json` and the exporter's owner series: each runner holds
/// the program and is named with its container and pod.
fn check_owners(logs: &str, prog_id: u32, runners: &[Runner]) {
    let o = brr_ok(&["--kubelet-logs", logs, "prog", "-x", "--json"]);
    let doc: Value = serde_json::from_slice(&o.stdout).expect("JSON");
    let item = doc["items"]
        .as_array()
        .and_then(|a| {
            a.iter()
                .find(|p| p["id"].as_u64() == Some(u64::from(prog_id)))
        })
        .expect("the fixture listed");
    let owners = item["owners"].as_array().expect("owners");
    for r in runners {
        let o = owners
            .iter()
            .find(|o| o["pid"].as_u64() == Some(u64::from(r.pid)))
            .unwrap_or_else(|| panic!("owner {} in {owners:?}", r.pid));
        assert_eq!(
            o["container"],
            container_value(r.want.container.as_ref()),
            "{o}"
        );
        assert_eq!(o["pod"], pod_value(r.want.pod.as_ref()), "{o}");
    }
    let body = scrape_exporter(&[
        "--kubelet-logs",
        logs,
        "exporter",
        "--listen",
        "127.0.0.1:0",
    ]);
    for r in runners {
        let head = format!("brr_prog_owner{{id=\"{prog_id}\",pid=\"{}\",", r.pid);
        let line = body
            .lines()
            .find(|l| l.starts_with(&head))
            .unwrap_or_else(|| panic!("owner series of {}", r.pid));
        let labels = pprof_labels(&r.want);
        for key in ["container", "container_id", "pod", "namespace"] {
            let v = labels.get(key).map_or("", String::as_str);
            assert!(line.contains(&format!(",{key}=\"{v}\"")), "{key}: {line}");
        }
    }
}

/// One process per runtime's path shape (Kubernetes with the systemd and
/// the cgroupfs driver, CRI-O, Docker, Podman) runs a fixture program from
/// its cgroup and holds its fd: the profile's JSON, text table and pprof
/// labels, `prog -x --json` and the exporter's owner series all name its
/// container and pod, with the names from kubelet-like logs.
#[test]
fn containers_and_pods_in_profiles_listings_and_the_exporter() {
    let Some(mount) = mount() else {
        return;
    };
    let _serial = serial();
    let scratch = Scratch(std::env::temp_dir().join(format!("brr-e2e-{}", std::process::id())));
    let _ = std::fs::remove_dir_all(&scratch.0);
    let logs = scratch.0.join("log");
    kubelet_logs(
        &logs,
        &[
            (
                "payments",
                "checkout-7d9f8b6c5-x2k4p",
                &uid(1),
                "server",
                &cid(1),
            ),
            ("kube-system", "agent-x7k2p", &uid(2), "agent", &cid(2)),
            ("batch", "worker-0", &uid(3), "worker", &cid(3)),
        ],
    );
    let all = shapes();
    let mut tree = Tree::new(mount);
    let fx = HotFixture::load().expect("load hot fixture");
    // containerd (systemd driver), CRI-O, containerd (cgroupfs driver),
    // Docker, Podman: each runner runs until the tree kills it and holds
    // the fixture's fd.
    let mut runners = Vec::new();
    for i in [0, 1, 3, 5, 7] {
        let rel = all[i].path.clone();
        let leaf = tree.make(&rel);
        let pid = fork_runner(fx.prog.fd(), u64::MAX, Some(&leaf.join("cgroup.procs")));
        tree.forked.push(pid);
        runners.push(Runner {
            pid: pid as u32,
            cgroup: std::fs::metadata(&leaf).unwrap().ino(),
            want: Workload {
                path: tree.path(&rel),
                ..all[i].clone()
            },
        });
    }
    for r in &runners {
        let moved = support::wait_until(Duration::from_secs(5), || {
            cgroups::task_paths([r.pid], Path::new("/proc")).get(&r.pid) == Some(&r.want.path)
        });
        assert!(moved, "runner {} in {}", r.pid, r.want.path);
    }
    let logs = logs.to_str().unwrap();
    check_profile_json_and_pprof(logs, &scratch.0, fx.prog.id, &runners);
    check_profile_text(logs, fx.prog.id, &runners);
    check_owners(logs, fx.prog.id, &runners);

    let made = tree.made.clone();
    let failed = tree.cleanup();
    assert!(failed.is_empty(), "{failed:?}");
    for dir in made {
        assert!(!dir.exists(), "{} removed", dir.display());
    }
}

/// Start `brr ARGS` (an exporter on a free port), scrape it once, stop it.
fn scrape_exporter(args: &[&str]) -> String {
    use std::io::{Read, Write};
    let exp = Exporter::spawn(args);
    let mut s = std::net::TcpStream::connect(exp.addr).expect("connect");
    s.write_all(b"GET /metrics HTTP/1.1\r\n\r\n").expect("send");
    let mut out = String::new();
    s.read_to_string(&mut out).expect("read");
    drop(exp);
    out
}
