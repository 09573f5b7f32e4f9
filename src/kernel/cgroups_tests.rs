//! Tests of the cgroup readers and of the container and pod recognition on
//! the path shapes that runtimes, systemd and the kubelet create.

use super::*;
use std::os::unix::fs::MetadataExt;

const ID: &str = "4c1e0f3a9b8d7c6e5f4a3b2c1d0e9f8a7b6c5d4e3f2a1b0c9d8e7f6a5b4c3d2e";
const ID2: &str = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
const PAUSE: &str = "fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210";
const UID: &str = "6e1f4f4c-0c41-4b5e-9a3b-2a1c9d6e7f80";
const UID_: &str = "6e1f4f4c_0c41_4b5e_9a3b_2a1c9d6e7f80";
/// A static pod's UID: the hash of its manifest, no dashes.
const STATIC_UID: &str = "7e0f1bd7a8f9b3d2c7fbc7d1e2f0a3b4";

fn container(runtime: Runtime, id: &str) -> Option<Container> {
    Some(Container {
        runtime,
        id: id.into(),
        name: None,
    })
}

fn pod(uid: &str, qos: Qos) -> Option<Pod> {
    Some(Pod {
        uid: uid.into(),
        namespace: None,
        name: None,
        qos: Some(qos),
    })
}

/// (container, pod, service) of a path.
fn parts(path: &str) -> (Option<Container>, Option<Pod>, Option<String>) {
    let w = workload(path);
    assert_eq!(w.path, path);
    (w.container, w.pod, w.service)
}

#[test]
fn kubernetes_systemd_driver() {
    // containerd, Burstable.
    let p = format!(
        "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod{UID_}.slice/cri-containerd-{ID}.scope"
    );
    assert_eq!(
        parts(&p),
        (
            container(Runtime::Containerd, ID),
            pod(UID, Qos::Burstable),
            None
        )
    );
    // CRI-O, Guaranteed: the pod slice sits directly under kubepods.slice.
    let p = format!("/kubepods.slice/kubepods-pod{UID_}.slice/crio-{ID}.scope");
    assert_eq!(
        parts(&p),
        (
            container(Runtime::CriO, ID),
            pod(UID, Qos::Guaranteed),
            None
        )
    );
    // CRI-O's nested `container` cgroup is still the container.
    assert_eq!(
        parts(&format!("{p}/container")).0,
        container(Runtime::CriO, ID)
    );
    // BestEffort, and the pod slice alone (the pod's own processes).
    let slice =
        format!("/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod{UID_}.slice");
    assert_eq!(parts(&slice), (None, pod(UID, Qos::BestEffort), None));
    // The runtime's monitor is no container, but is in the pod.
    assert_eq!(
        parts(&format!("{slice}/crio-conmon-{ID}.scope")),
        (
            None,
            pod(UID, Qos::BestEffort),
            Some(format!("crio-conmon-{ID}.scope"))
        )
    );
}

#[test]
fn kubernetes_cgroupfs_driver() {
    assert_eq!(
        parts(&format!("/kubepods/burstable/pod{UID}/{ID}")),
        (
            container(Runtime::Containerd, ID),
            pod(UID, Qos::Burstable),
            None
        )
    );
    assert_eq!(
        parts(&format!("/kubepods/pod{UID}/{ID}")),
        (
            container(Runtime::Containerd, ID),
            pod(UID, Qos::Guaranteed),
            None
        )
    );
    assert_eq!(
        parts(&format!("/kubepods/besteffort/pod{UID}/crio-{ID}")),
        (
            container(Runtime::CriO, ID),
            pod(UID, Qos::BestEffort),
            None
        )
    );
    assert_eq!(
        parts(&format!("/kubepods/besteffort/pod{UID}/crio-conmon-{ID}")),
        (None, pod(UID, Qos::BestEffort), None)
    );
    assert_eq!(
        parts(&format!("/kubepods/burstable/pod{STATIC_UID}/{ID}")),
        (
            container(Runtime::Containerd, ID),
            pod(STATIC_UID, Qos::Burstable),
            None
        )
    );
    // A kubelet cgroup root above kubepods changes nothing.
    assert_eq!(
        parts(&format!("/kubelet/kubepods/burstable/pod{UID}/{ID}")).1,
        pod(UID, Qos::Burstable)
    );
}

#[test]
fn kubernetes_inside_a_docker_container() {
    // A kind node: the node is a Docker container, the kubelet's slices
    // carry its cgroup root's prefix.
    let node = format!("/system.slice/docker-{ID2}.scope");
    let slice = format!(
        "{node}/kubelet.slice/kubelet-kubepods.slice/kubelet-kubepods-besteffort.slice/kubelet-kubepods-besteffort-pod{UID_}.slice"
    );
    assert_eq!(
        parts(&format!("{slice}/cri-containerd-{ID}.scope")),
        (
            container(Runtime::Containerd, ID),
            pod(UID, Qos::BestEffort),
            None
        )
    );
    // The node's container is not the pod's.
    assert_eq!(parts(&slice), (None, pod(UID, Qos::BestEffort), None));
    assert_eq!(
        parts(&format!("{node}/kubelet.slice")),
        (container(Runtime::Docker, ID2), None, None)
    );
}

#[test]
fn docker_and_podman() {
    let docker = container(Runtime::Docker, ID);
    let podman = container(Runtime::Podman, ID);
    assert_eq!(
        parts(&format!("/system.slice/docker-{ID}.scope")),
        (docker.clone(), None, None)
    );
    assert_eq!(
        parts(&format!("/docker/{ID}")),
        (docker.clone(), None, None)
    );
    // Docker in Docker: the innermost container.
    assert_eq!(
        parts(&format!("/docker/{ID2}/docker/{ID}")).0,
        docker.clone()
    );
    assert_eq!(
        parts(&format!("/machine.slice/libpod-{ID}.scope")),
        (podman.clone(), None, None)
    );
    assert_eq!(
        parts(&format!("/machine.slice/libpod-{ID}.scope/container")).0,
        podman.clone()
    );
    assert_eq!(
        parts(&format!(
            "/user.slice/user-1000.slice/user@1000.service/user.slice/libpod-{ID}.scope"
        )),
        (podman.clone(), None, None)
    );
    assert_eq!(parts(&format!("/libpod_parent/libpod-{ID}")).0, podman);
    // Podman's monitor is a scope, not a container.
    assert_eq!(
        parts(&format!("/machine.slice/libpod-conmon-{ID}.scope")),
        (None, None, Some(format!("libpod-conmon-{ID}.scope")))
    );
    // A systemd container: its units are inside it.
    assert_eq!(
        parts(&format!(
            "/machine.slice/libpod-{ID}.scope/container/system.slice/nginx.service"
        )),
        (
            container(Runtime::Podman, ID),
            None,
            Some("nginx.service".into())
        )
    );
}

#[test]
fn systemd_units() {
    let unit = |p: &str| parts(p);
    assert_eq!(
        unit("/system.slice/nginx.service"),
        (None, None, Some("nginx.service".into()))
    );
    // The daemons themselves are services, not containers.
    assert_eq!(
        unit("/system.slice/docker.service").2.as_deref(),
        Some("docker.service")
    );
    assert_eq!(
        unit("/system.slice/containerd.service").2.as_deref(),
        Some("containerd.service")
    );
    assert_eq!(
        unit("/user.slice/user-1000.slice/session-3.scope"),
        (None, None, Some("session-3.scope".into()))
    );
    assert_eq!(
        unit("/user.slice/user-1000.slice/user@1000.service/app.slice/app-firefox-42.scope").2,
        Some("app-firefox-42.scope".into())
    );
    assert_eq!(
        unit("/user.slice/user-1000.slice/user@1000.service/init.scope").2,
        Some("init.scope".into())
    );
    assert_eq!(unit("/init.scope"), (None, None, Some("init.scope".into())));
    assert_eq!(unit("/"), (None, None, None));
    assert_eq!(unit(""), (None, None, None));
    assert_eq!(unit("/user.slice"), (None, None, None));
}

#[test]
fn near_misses_are_no_containers_or_pods() {
    let none = |p: &str| {
        let (c, pod, _) = parts(p);
        assert_eq!((c, pod), (None, None), "{p}");
    };
    // IDs that are not 64 lowercase hex digits.
    none("/system.slice/docker-abc.scope");
    none(&format!(
        "/system.slice/docker-{}.scope",
        ID2.get(1..).unwrap()
    ));
    none(&format!("/system.slice/docker-{}.scope", ID.to_uppercase()));
    none(&format!("/system.slice/docker-{ID}0.scope"));
    none(&format!(
        "/system.slice/docker-{}g.scope",
        ID.get(1..).unwrap()
    ));
    none(&format!("/machine.slice/libpod-conmon-{ID}.scope"));
    // A bare ID under neither /docker nor a pod directory.
    none(&format!("/system.slice/{ID}"));
    none(&format!("/kubepods/burstable/{ID}"));
    // Truncated and malformed kubepods paths.
    none("/kubepods.slice");
    none("/kubepods.slice/kubepods-burstable.slice");
    none("/kubepods/burstable");
    none("/kubepods/burstable/pod");
    none("/kubepods/burstable/podxyz");
    none(&format!("/kubepods/burstable/pod{}", UID.get(1..).unwrap()));
    none(&format!("/kubepods/unknown/pod{UID}/{ID}"));
    none(&format!("/other/burstable/pod{UID}/{ID}"));
    none(&format!("/pod{UID}/{ID}"));
    none(&format!("/kubepods.slice/kubepods-other-pod{UID_}.slice"));
    none(&format!("/kubepods.slice/other-burstable-pod{UID_}.slice"));
    none(&format!(
        "/kubepods.slice/kubepods-burstable-pod{UID_}.scope"
    ));
    none(&format!("/kubepods.slice/kubepods-burstable-pod{UID_}"));
    // The pod slice's name is what counts, not the parent's.
    assert_eq!(
        parts(&format!("/x/kubepods-burstable-pod{UID_}.slice")).1,
        pod(UID, Qos::Burstable)
    );
}

#[test]
fn pod_uids() {
    assert_eq!(pod_uid(UID).as_deref(), Some(UID));
    assert_eq!(pod_uid(UID_).as_deref(), Some(UID));
    assert_eq!(pod_uid(STATIC_UID).as_deref(), Some(STATIC_UID));
    for bad in [
        "",
        "6e1f4f4c-0c41-4b5e-9a3b-2a1c9d6e7f8",
        "6e1f4f4c-0c41-4b5e-9a3b-2a1c9d6e7f80-",
        "6E1F4F4C-0C41-4B5E-9A3B-2A1C9D6E7F80",
        "6e1f4f4c-0c41-4b5e-9a3b-2a1c9d6e7fzz",
        "------------------------------------",
    ] {
        assert_eq!(pod_uid(bad), None, "{bad}");
    }
}

const HYBRID: &str = "\
22 1 0:21 / /sys rw,nosuid,nodev,noexec,relatime shared:7 - sysfs sysfs rw
31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu
40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
";

#[test]
fn mountinfo_hybrid_unified_none() {
    let m = parse_mountinfo(HYBRID).unwrap();
    assert_eq!(
        (m.mount_point.as_path(), m.root.as_str()),
        (Path::new("/sys/fs/cgroup/unified"), "/")
    );
    // systemd's unified layout, with several optional fields.
    let unified = "25 20 0:23 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:9 master:2 - cgroup2 cgroup2 rw,nsdelegate,memory_recursiveprot\n";
    assert_eq!(
        parse_mountinfo(unified).unwrap().mount_point,
        PathBuf::from("/sys/fs/cgroup")
    );
    // v1 only: no cgroup2, also not from a source or option naming it.
    let v1 = "32 31 0:29 / /sys/fs/cgroup/cpu rw - cgroup cgroup2 rw,cpu\n\
33 31 0:30 / /cgroup2 rw - tmpfs cgroup2 rw\n";
    assert_eq!(parse_mountinfo(v1), None);
    assert_eq!(parse_mountinfo(""), None);
    // /proc/self/mounts lines are not mountinfo.
    assert_eq!(
        parse_mountinfo("cgroup2 /sys/fs/cgroup/unified cgroup2 rw 0 0\n"),
        None
    );
}

#[test]
fn mountinfo_escapes_and_subtrees() {
    let escaped = "50 20 0:40 /a\\040b /mnt/my\\040cg\\011x\\134y\\012 rw - cgroup2 none rw\n";
    let m = parse_mountinfo(escaped).unwrap();
    assert_eq!(m.mount_point, PathBuf::from("/mnt/my cg\tx\\y\n"));
    assert_eq!(m.root, "/a b");
    // A bind-mounted subtree is taken only when the whole hierarchy is not
    // mounted.
    let sub = "60 20 0:38 /kubepods.slice /mnt/pods rw - cgroup2 cgroup2 rw\n";
    assert_eq!(parse_mountinfo(sub).unwrap().root, "/kubepods.slice");
    let both = format!("{sub}{HYBRID}");
    assert_eq!(
        parse_mountinfo(&both).unwrap().mount_point,
        PathBuf::from("/sys/fs/cgroup/unified")
    );
    // A mount point named `-` is not the separator.
    let dash = "70 20 0:38 / - rw - cgroup2 cgroup2 rw\n";
    assert_eq!(
        parse_mountinfo(dash).unwrap().mount_point,
        PathBuf::from("-")
    );
    // Escapes that are not three octal digits stay as written.
    assert_eq!(unescape_octal("a\\07"), "a\\07");
    assert_eq!(unescape_octal("a\\089b"), "a\\089b");
    assert_eq!(unescape_octal("\\"), "\\");
    for bad in [
        "x",
        "1 2 3 4 5 6 -",
        "1 2 3 4 5 6 - cgroup2",
        " - cgroup2 - cgroup2",
    ] {
        let _ = parse_mountinfo(bad);
    }
}

#[test]
fn proc_pid_cgroup() {
    let v2 = "0::/system.slice/nginx.service\n";
    assert_eq!(
        task_path_from(v2).as_deref(),
        Some("/system.slice/nginx.service")
    );
    // Hybrid: the cgroup2 line wins over the v1 controllers.
    let hybrid =
        "9:name=systemd:/\n4:memory:/process_api/cc83\n1:cpu:/\n0::/kubepods.slice/x.scope\n";
    assert_eq!(
        task_path_from(hybrid).as_deref(),
        Some("/kubepods.slice/x.scope")
    );
    // v1 only: systemd's named hierarchy, else the first controller.
    let v1 =
        format!("12:cpu,cpuacct:/docker/{ID}\n1:name=systemd:/system.slice/docker-{ID}.scope\n");
    assert_eq!(
        task_path_from(&v1),
        Some(format!("/system.slice/docker-{ID}.scope"))
    );
    let v1 = format!("12:cpu,cpuacct:/docker/{ID}\n11:memory:/other\n");
    assert_eq!(task_path_from(&v1), Some(format!("/docker/{ID}")));
    // A path may hold `:`; a cgroup namespace may show `..` above its root.
    assert_eq!(task_path_from("0::/a:b:c\n").as_deref(), Some("/a:b:c"));
    assert_eq!(task_path_from("0::/../..\n").as_deref(), Some("/../.."));
    for bad in [
        "",
        "\n",
        "0::\n",
        "x::/a\n",
        ":name=systemd:/a",
        "0:/a",
        "::",
    ] {
        assert_eq!(task_path_from(bad), None, "{bad:?}");
    }
}

/// A scratch directory removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new(tag: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("brr-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[test]
fn task_paths_read_proc() {
    let s = Scratch::new("cgproc");
    std::fs::create_dir_all(s.0.join("42")).unwrap();
    std::fs::write(s.0.join("42/cgroup"), "0::/system.slice/a.service\n").unwrap();
    std::fs::create_dir_all(s.0.join("43")).unwrap();
    std::fs::write(s.0.join("43/cgroup"), "garbage\n").unwrap();
    let got = task_paths([42, 0, 43, 999_999, 42], &s.0);
    let got: Vec<(u32, &str)> = got.iter().map(|(k, v)| (*k, v.as_str())).collect();
    assert_eq!(got, vec![(42, "/system.slice/a.service")]);
    // This process's own cgroup, as the kernel writes it.
    let own = task_paths([std::process::id()], Path::new("/proc"));
    assert!(own
        .get(&std::process::id())
        .is_some_and(|p| p.starts_with('/')));
}

#[test]
fn cgroup_ids_are_directory_inodes() {
    let s = Scratch::new("cgwalk");
    std::fs::create_dir_all(s.0.join("a/b")).unwrap();
    std::fs::create_dir_all(s.0.join("c")).unwrap();
    std::fs::write(s.0.join("a/file"), "").unwrap();
    let ino = |p: &str| std::fs::metadata(s.0.join(p)).unwrap().ino();
    let (root, a, b, c) = (ino(""), ino("a"), ino("a/b"), ino("c"));
    let file = ino("a/file");
    let mount = Cgroup2Mount {
        mount_point: s.0.clone(),
        root: "/".into(),
    };
    let all = paths_by_id(&mount, None);
    let mut got: Vec<(u64, &str)> = all.iter().map(|(k, v)| (*k, v.as_str())).collect();
    got.sort_by_key(|&(_, p)| p);
    assert_eq!(got, vec![(root, "/"), (a, "/a"), (b, "/a/b"), (c, "/c")]);
    assert!(!all.contains_key(&file));
    // Only the wanted IDs, also ones that are not there.
    let want = BTreeSet::from([b, root, 0, u64::MAX]);
    let some = paths_by_id(&mount, Some(&want));
    assert_eq!(some.len(), 2);
    assert_eq!(some.get(&b).map(String::as_str), Some("/a/b"));
    // A mounted subtree names its cgroups from the hierarchy's root.
    let sub = Cgroup2Mount {
        mount_point: s.0.join("a"),
        root: "/kubepods.slice".into(),
    };
    let got = paths_by_id(&sub, Some(&BTreeSet::from([a, b])));
    assert_eq!(got.get(&a).map(String::as_str), Some("/kubepods.slice"));
    assert_eq!(got.get(&b).map(String::as_str), Some("/kubepods.slice/b"));
    let gone = Cgroup2Mount {
        mount_point: s.0.join("missing"),
        root: "/".into(),
    };
    assert!(paths_by_id(&gone, None).is_empty());
}

#[test]
fn walk_is_bounded_in_depth() {
    let s = Scratch::new("cgdeep");
    let mut deep = s.0.clone();
    let mut inos = Vec::new();
    for i in 0..MAX_DEPTH + 3 {
        deep.push(format!("d{i}"));
        std::fs::create_dir(&deep).unwrap();
        inos.push(std::fs::metadata(&deep).unwrap().ino());
    }
    let mount = Cgroup2Mount {
        mount_point: s.0.clone(),
        root: "/".into(),
    };
    let all = paths_by_id(&mount, None);
    // The root and MAX_DEPTH levels under it.
    assert_eq!(all.len(), MAX_DEPTH + 1);
    assert!(all.contains_key(&inos[MAX_DEPTH - 1]));
    assert!(!all.contains_key(&inos[MAX_DEPTH]));
}

#[test]
fn this_hosts_cgroup2_mount_names_its_root() {
    let Some(m) = cgroup2_mount() else {
        return;
    };
    let root = std::fs::metadata(&m.mount_point).unwrap().ino();
    assert_eq!(paths_of([root, 0]).get(&root), Some(&m.root));
    assert!(paths_of([0]).is_empty());
}

fn pod_dirs() -> Vec<String> {
    vec![
        format!("payments_checkout-7d9f8b6c5-x2k4p_{UID}"),
        format!("kube-system_kube-apiserver-node1_{STATIC_UID}"),
        // Not pods: too few or too many parts, no UID, empty names.
        "payments_checkout".into(),
        format!("a_b_c_{UID}"),
        "a_b_not-a-uid".into(),
        format!("_b_{UID}"),
        format!("a__{UID}"),
    ]
}

fn container_logs() -> Vec<String> {
    vec![
        format!("checkout-7d9f8b6c5-x2k4p_payments_server-{ID}.log"),
        format!("kube-apiserver-node1_kube-system_kube-apiserver-{ID2}.log"),
        // Not container logs.
        format!("checkout_payments_server-{ID}"),
        "checkout_payments_server-abc.log".into(),
        format!("checkout_payments_server{ID}.log"),
        format!("checkout_payments_-{ID}.log"),
        format!("a_b_c_d-{ID}.log"),
    ]
}

#[test]
fn kubelet_log_names() {
    let k = KubeletLogs::from_names(&pod_dirs(), &container_logs());
    assert_eq!(k.pod(UID), Some(("payments", "checkout-7d9f8b6c5-x2k4p")));
    assert_eq!(
        k.pod(STATIC_UID),
        Some(("kube-system", "kube-apiserver-node1"))
    );
    assert_eq!(k.pods.len(), 2);
    assert_eq!(k.container_name(ID), Some("server"));
    assert_eq!(k.container_name(ID2), Some("kube-apiserver"));
    assert_eq!(k.containers.len(), 2);
    assert!(KubeletLogs::default().is_empty());

    let path = format!(
        "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod{UID_}.slice/cri-containerd-{ID}.scope"
    );
    let mut w = workload(&path);
    k.name(&mut w);
    let c = w.container.unwrap();
    assert_eq!(c.name.as_deref(), Some("server"));
    let p = w.pod.unwrap();
    assert_eq!(
        (p.namespace.as_deref(), p.name.as_deref()),
        (Some("payments"), Some("checkout-7d9f8b6c5-x2k4p"))
    );
    // Without the pod's directory, its container's log names the pod.
    let only_logs = KubeletLogs::from_names(&[], &container_logs());
    let mut w = workload(&path);
    only_logs.name(&mut w);
    assert_eq!(
        w.pod.unwrap().name.as_deref(),
        Some("checkout-7d9f8b6c5-x2k4p")
    );
    // The pause container has no log: no name, the pod is still named.
    let mut w = workload(&format!("/kubepods/pod{UID}/{PAUSE}"));
    k.name(&mut w);
    assert_eq!(w.container, container(Runtime::Containerd, PAUSE));
    assert_eq!(w.pod.unwrap().namespace.as_deref(), Some("payments"));
}

#[test]
fn kubelet_logs_from_a_directory() {
    let s = Scratch::new("kubelet");
    for d in pod_dirs() {
        std::fs::create_dir_all(s.0.join("pods").join(&d).join("server")).unwrap();
        std::fs::write(s.0.join("pods").join(&d).join("server/0.log"), "").unwrap();
    }
    std::fs::create_dir_all(s.0.join("containers")).unwrap();
    let target = s.0.join(format!(
        "pods/payments_checkout-7d9f8b6c5-x2k4p_{UID}/server/0.log"
    ));
    for f in container_logs() {
        std::os::unix::fs::symlink(&target, s.0.join("containers").join(f)).unwrap();
    }
    let read = KubeletLogs::read(&s.0);
    assert_eq!(
        read,
        KubeletLogs::from_names(&pod_dirs(), &container_logs())
    );
    assert!(KubeletLogs::read(&s.0.join("missing")).is_empty());

    // Read only when a path lies in a pod, and once.
    let mut ws = Workloads::new(&s.0);
    let host = ws.of("/system.slice/nginx.service");
    assert_eq!(host.service.as_deref(), Some("nginx.service"));
    assert!(ws.index.is_none());
    let w = ws.of(&format!("/kubepods/burstable/pod{UID}/{ID}"));
    assert_eq!(w.container.unwrap().name.as_deref(), Some("server"));
    std::fs::remove_dir_all(s.0.join("pods")).unwrap();
    std::fs::remove_dir_all(s.0.join("containers")).unwrap();
    let w = ws.of(&format!("/kubepods/burstable/pod{UID}/{ID}"));
    assert_eq!(w.pod.unwrap().namespace.as_deref(), Some("payments"));
}

mod never_panic {
    use super::*;
    use proptest::prelude::*;

    fn path() -> impl Strategy<Value = String> {
        let part = prop_oneof![
            Just("kubepods".to_string()),
            Just("burstable".to_string()),
            Just(format!("pod{UID}")),
            Just(format!("kubepods-besteffort-pod{UID_}.slice")),
            Just(format!("crio-{ID}.scope")),
            Just(ID.to_string()),
            Just("docker".to_string()),
            "[a-z0-9_.:@-]{0,12}",
            any::<String>(),
        ];
        proptest::collection::vec(part, 0..7).prop_map(|v| v.join("/"))
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(500))]
        #[test]
        fn parsers_take_any_text(p in path(), text in any::<String>()) {
            let w = workload(&p);
            prop_assert_eq!(&w.path, &p);
            if let Some(c) = &w.container {
                prop_assert!(is_container_id(&c.id));
            }
            let _ = parse_mountinfo(&text);
            let _ = task_path_from(&text);
            let _ = task_path_from(&format!("0::{p}"));
            let _ = KubeletLogs::from_names(&[p.clone(), text.clone()], &[p, text]);
        }
    }
}
