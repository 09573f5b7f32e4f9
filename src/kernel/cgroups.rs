//! Cgroups: where cgroup2 is mounted, the path of a cgroup ID or of a
//! task, and the container, pod and systemd unit a path names.
//!
//! A cgroup2 ID is the inode number of the cgroup's directory, so an ID is
//! named by walking the hierarchy from its mount point, which is found in
//! `/proc/self/mountinfo` (`/sys/fs/cgroup` on unified hosts,
//! `/sys/fs/cgroup/unified` on hybrid ones, anywhere in principle). Paths
//! are reported the way `/proc/PID/cgroup` writes them: from the root of
//! the hierarchy as brr's cgroup namespace sees it, which is the mount
//! point itself unless only a subtree was mounted.
//!
//! Containers and pods are recognised from the directory names that
//! runtimes and the kubelet give their cgroups; nothing asks the runtime or
//! the Kubernetes API. Pod namespaces and names, and container names, come
//! from the kubelet's log directories ([`KubeletLogs`]).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::os::unix::fs::{DirEntryExt, MetadataExt};
use std::path::{Path, PathBuf};

use crate::kernel::mountinfo;
use crate::model::container::{Container, Pod, Qos, Runtime, Workload};

/// Where cgroup2 is mounted, from one `/proc/self/mountinfo` line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cgroup2Mount {
    /// The directory it is mounted on.
    pub mount_point: PathBuf,
    /// The cgroup the mount shows at its top (`/` unless a subtree was
    /// bind-mounted), as the hierarchy names it.
    pub root: String,
}

/// The cgroup2 mount in `/proc/self/mountinfo` text ([`mountinfo`]); a
/// mount of the whole hierarchy (root `/`) is preferred over a subtree's.
pub(crate) fn parse_mountinfo(text: &str) -> Option<Cgroup2Mount> {
    let mut found = mountinfo::parse(text)
        .into_iter()
        .filter(|m| m.fstype == "cgroup2")
        .map(|m| Cgroup2Mount {
            mount_point: m.point,
            root: m.root,
        });
    let first = found.next()?;
    if first.root == "/" {
        return Some(first);
    }
    Some(found.find(|m| m.root == "/").unwrap_or(first))
}

/// `\NNN` octal escapes decoded; anything else is kept as written.
#[cfg(test)]
fn unescape_octal(s: &str) -> String {
    mountinfo::unescape_lossy(s)
}

/// This system's cgroup2 mount, if one is mounted.
pub fn cgroup2_mount() -> Option<Cgroup2Mount> {
    parse_mountinfo(&std::fs::read_to_string("/proc/self/mountinfo").ok()?)
}

/// How much of the hierarchy a walk may visit: deeper than systemd slices
/// with a Kubernetes node inside a container need, and bounded so that a
/// huge tree costs a known amount.
const MAX_DEPTH: usize = 16;
const MAX_DIRS: usize = 50_000;

/// cgroup2 ID -> path under `mount`. With `want`, the walk stops once every
/// wanted ID is found and only those are returned; without it, every cgroup
/// within the bounds is. A cgroup removed meanwhile is simply missing.
pub fn paths_by_id(mount: &Cgroup2Mount, want: Option<&BTreeSet<u64>>) -> HashMap<u64, String> {
    let mut out = HashMap::new();
    let Ok(meta) = std::fs::metadata(&mount.mount_point) else {
        return out;
    };
    let mut missing = want.map_or(usize::MAX, BTreeSet::len);
    let mut keep = |ino: u64, path: &str, out: &mut HashMap<u64, String>| {
        if want.is_none_or(|w| w.contains(&ino)) && !out.contains_key(&ino) {
            out.insert(ino, path.to_string());
            missing = missing.saturating_sub(1);
        }
        missing > 0
    };
    if !keep(meta.ino(), &mount.root, &mut out) {
        return out;
    }
    let mut dirs = vec![(mount.mount_point.clone(), mount.root.clone(), 0usize)];
    let mut seen = 0usize;
    while let Some((dir, rel, depth)) = dirs.pop() {
        seen += 1;
        if seen > MAX_DIRS || depth >= MAX_DEPTH {
            continue;
        }
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        // Directory entries carry the inode number: no stat per cgroup.
        for e in entries.flatten() {
            if !e.file_type().is_ok_and(|t| t.is_dir()) {
                continue;
            }
            let child = join(&rel, &e.file_name().to_string_lossy());
            if !keep(e.ino(), &child, &mut out) {
                return out;
            }
            dirs.push((e.path(), child, depth + 1));
        }
    }
    out
}

fn join(parent: &str, name: &str) -> String {
    if parent.ends_with('/') {
        format!("{parent}{name}")
    } else {
        format!("{parent}/{name}")
    }
}

/// Paths of the nonzero cgroup2 IDs in `ids` (zero is what a sample without
/// a cgroup carries); empty when cgroup2 is not mounted.
pub fn paths_of(ids: impl IntoIterator<Item = u64>) -> BTreeMap<u64, String> {
    let want: BTreeSet<u64> = ids.into_iter().filter(|&id| id != 0).collect();
    match (want.is_empty(), cgroup2_mount()) {
        (false, Some(mount)) => paths_by_id(&mount, Some(&want)).into_iter().collect(),
        _ => BTreeMap::new(),
    }
}

/// A task's cgroup path from its `/proc/PID/cgroup` text
/// (`HIERARCHY:CONTROLLERS:PATH` lines): the cgroup2 line (`0::PATH`);
/// on a cgroup v1 host, systemd's named hierarchy (`N:name=systemd:PATH`),
/// else the first controller's line. The path may itself contain `:`.
pub(crate) fn task_path_from(text: &str) -> Option<String> {
    let lines: Vec<(&str, &str, &str)> = text
        .lines()
        .filter_map(|l| {
            let mut f = l.splitn(3, ':');
            let (h, c, p) = (f.next()?, f.next()?, f.next()?);
            (!h.is_empty() && h.bytes().all(|b| b.is_ascii_digit()) && p.starts_with('/'))
                .then_some((h, c, p))
        })
        .collect();
    let pick = lines
        .iter()
        .find(|(h, c, _)| *h == "0" && c.is_empty())
        .or_else(|| {
            lines
                .iter()
                .find(|(_, c, _)| c.split(',').any(|x| x == "name=systemd"))
        })
        .or_else(|| lines.iter().find(|(_, c, _)| !c.is_empty()))?;
    Some(pick.2.to_string())
}

/// The cgroup path of each pid, from `PROC/PID/cgroup`: for samples that
/// carry no cgroup ID. Pid 0 (the idle task) and tasks that are gone have
/// none.
pub fn task_paths(pids: impl IntoIterator<Item = u32>, proc: &Path) -> BTreeMap<u32, String> {
    let mut out = BTreeMap::new();
    let mut tried = BTreeSet::new();
    for pid in pids {
        if pid == 0 || !tried.insert(pid) {
            continue;
        }
        let file = proc.join(pid.to_string()).join("cgroup");
        if let Some(path) = std::fs::read_to_string(file)
            .ok()
            .and_then(|t| task_path_from(&t))
        {
            out.insert(pid, path);
        }
    }
    out
}

/// Container IDs of every runtime here are 64 lowercase hex digits.
fn is_container_id(s: &str) -> bool {
    s.len() == 64 && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// A pod UID with dashes: a UUID, or the 32 hex digits of the hash the
/// kubelet gives a static pod.
fn pod_uid(s: &str) -> Option<String> {
    let uid = s.replace('_', "-");
    let hex = uid.bytes().filter(u8::is_ascii_hexdigit).count();
    let ok = hex == 32
        && matches!(uid.len(), 32 | 36)
        && uid
            .bytes()
            .all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f' | b'-'));
    ok.then_some(uid)
}

/// What one path component is.
#[derive(Debug, PartialEq)]
enum Part {
    Container(Runtime, String),
    Pod(String, Qos),
    /// A systemd service or scope, also a runtime's per-container
    /// monitor's (conmon).
    Unit,
    Other,
}

/// Runtime scope prefixes, monitors first: `crio-` would otherwise take
/// `crio-conmon-`, whose rest is no ID anyway but is no container either.
const PREFIXES: [(&str, Option<Runtime>); 6] = [
    ("crio-conmon-", None),
    ("libpod-conmon-", None),
    ("cri-containerd-", Some(Runtime::Containerd)),
    ("crio-", Some(Runtime::CriO)),
    ("docker-", Some(Runtime::Docker)),
    ("libpod-", Some(Runtime::Podman)),
];

/// Classify `name`, whose parent components (nearest first) are `up`.
fn classify(name: &str, up: &[&str]) -> Part {
    let stem = name.strip_suffix(".scope").unwrap_or(name);
    for (prefix, runtime) in PREFIXES {
        if let Some(id) = stem.strip_prefix(prefix).filter(|id| is_container_id(id)) {
            return match runtime {
                Some(r) => Part::Container(r, id.to_string()),
                None if name.ends_with(".scope") => Part::Unit,
                None => Part::Other,
            };
        }
    }
    if is_container_id(name) {
        // cgroupfs drivers: dockerd's `/docker/ID`, and the CRI runtime's
        // bare ID in a kubelet pod directory.
        match up {
            ["docker", ..] => return Part::Container(Runtime::Docker, name.to_string()),
            [pod, rest @ ..] if cgroupfs_pod(pod, rest).is_some() => {
                return Part::Container(Runtime::Containerd, name.to_string())
            }
            _ => {}
        }
    }
    if let Some((uid, qos)) = systemd_pod(name).or_else(|| cgroupfs_pod(name, up)) {
        return Part::Pod(uid, qos);
    }
    if name.ends_with(".service") || name.ends_with(".scope") {
        return Part::Unit;
    }
    Part::Other
}

/// The systemd driver's pod slice: `kubepods-pod<UID>.slice` (Guaranteed)
/// or `kubepods-<qos>-pod<UID>.slice`, with any prefix the kubelet's cgroup
/// root adds (`kubelet-kubepods-...`) and `_` for the UID's dashes.
fn systemd_pod(name: &str) -> Option<(String, Qos)> {
    let stem = name.strip_suffix(".slice")?;
    let mut words = stem.rsplit('-');
    let uid = pod_uid(words.next()?.strip_prefix("pod")?)?;
    let qos = match words.next()? {
        "kubepods" => Qos::Guaranteed,
        "burstable" => Qos::Burstable,
        "besteffort" => Qos::BestEffort,
        _ => return None,
    };
    let under_kubepods = qos == Qos::Guaranteed || words.next() == Some("kubepods");
    under_kubepods.then_some((uid, qos))
}

/// The cgroupfs driver's pod directory: `kubepods/pod<UID>` (Guaranteed)
/// or `kubepods/<qos>/pod<UID>`.
fn cgroupfs_pod(name: &str, up: &[&str]) -> Option<(String, Qos)> {
    let uid = pod_uid(name.strip_prefix("pod")?)?;
    let qos = match up {
        ["kubepods", ..] => Qos::Guaranteed,
        ["burstable", "kubepods", ..] => Qos::Burstable,
        ["besteffort", "kubepods", ..] => Qos::BestEffort,
        _ => return None,
    };
    Some((uid, qos))
}

/// What `path` names: the innermost container and pod in it, and the
/// innermost systemd unit below them. Names are not filled in (see
/// [`KubeletLogs::name`]).
pub(crate) fn workload(path: &str) -> Workload {
    let parts: Vec<&str> = path.split('/').filter(|p| !p.is_empty()).collect();
    let mut w = Workload {
        path: path.to_string(),
        ..Default::default()
    };
    let mut up: Vec<&str> = Vec::with_capacity(parts.len());
    for name in parts {
        match classify(name, &up) {
            Part::Container(runtime, id) => {
                w.container = Some(Container {
                    runtime,
                    id,
                    name: None,
                });
                w.service = None;
            }
            Part::Pod(uid, qos) => {
                w.pod = Some(Pod {
                    uid,
                    namespace: None,
                    name: None,
                    qos: Some(qos),
                });
                // A container outside the pod (the node's own, on a
                // Kubernetes-in-Docker host) is not the pod's container.
                w.container = None;
                w.service = None;
            }
            Part::Unit => w.service = Some(name.to_string()),
            Part::Other => {}
        }
        up.insert(0, name);
    }
    w
}

/// A pod's namespace and name, and a container's pod and name, from the
/// kubelet's log directories under one `DIR` (`/var/log` by default):
///
/// - `DIR/pods/NAMESPACE_NAME_UID/`, one per pod;
/// - `DIR/containers/POD_NAMESPACE_CONTAINER-ID.log`, one per container.
///
/// Kubernetes forbids `_` in namespace, pod and container names (they are
/// DNS labels and subdomains) and UIDs have none, so `_` splits these names
/// unambiguously; the container ID is the part after the last `-`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct KubeletLogs {
    /// Pod UID -> (namespace, name).
    pods: HashMap<String, (String, String)>,
    /// Container ID -> (pod namespace, pod name, container name).
    containers: HashMap<String, (String, String, String)>,
}

impl KubeletLogs {
    /// Read both directories once (only their entries' names); missing
    /// directories give an empty index.
    pub(crate) fn read(dir: &Path) -> KubeletLogs {
        let names = |sub: &str| -> Vec<String> {
            std::fs::read_dir(dir.join(sub))
                .map(|rd| {
                    rd.flatten()
                        .map(|e| e.file_name().to_string_lossy().into_owned())
                        .collect()
                })
                .unwrap_or_default()
        };
        KubeletLogs::from_names(&names("pods"), &names("containers"))
    }

    /// The index from the entry names of `pods/` and `containers/`; names
    /// of any other shape are skipped.
    pub(crate) fn from_names(pod_dirs: &[String], container_logs: &[String]) -> KubeletLogs {
        let mut out = KubeletLogs::default();
        for d in pod_dirs {
            let [ns, name, uid] = d.split('_').collect::<Vec<_>>()[..] else {
                continue;
            };
            match pod_uid(uid) {
                Some(uid) if !ns.is_empty() && !name.is_empty() => {
                    out.pods.insert(uid, (ns.to_string(), name.to_string()));
                }
                _ => {}
            }
        }
        for f in container_logs {
            let Some(stem) = f.strip_suffix(".log") else {
                continue;
            };
            let [pod, ns, rest] = stem.split('_').collect::<Vec<_>>()[..] else {
                continue;
            };
            let Some((name, id)) = rest.rsplit_once('-') else {
                continue;
            };
            if [pod, ns, name].iter().all(|s| !s.is_empty()) && is_container_id(id) {
                let v = (ns.to_string(), pod.to_string(), name.to_string());
                out.containers.insert(id.to_string(), v);
            }
        }
        out
    }

    /// Whether nothing was found.
    #[cfg(test)]
    pub(crate) fn is_empty(&self) -> bool {
        self.pods.is_empty() && self.containers.is_empty()
    }

    /// Namespace and name of the pod with `uid`.
    pub(crate) fn pod(&self, uid: &str) -> Option<(&str, &str)> {
        self.pods
            .get(uid)
            .map(|(ns, name)| (ns.as_str(), name.as_str()))
    }

    /// The name of the container with `id`.
    #[cfg(test)]
    pub(crate) fn container_name(&self, id: &str) -> Option<&str> {
        self.containers.get(id).map(|(_, _, name)| name.as_str())
    }

    /// Fill in `w`'s container name and pod namespace and name; a pod whose
    /// directory is missing takes them from its container's log name.
    pub(crate) fn name(&self, w: &mut Workload) {
        let by_container = w.container.as_mut().and_then(|c| {
            let (ns, pod, name) = self.containers.get(&c.id)?;
            c.name = Some(name.clone());
            Some((ns.as_str(), pod.as_str()))
        });
        if let Some(p) = w.pod.as_mut() {
            if let Some((ns, name)) = self.pod(&p.uid).or(by_container) {
                p.namespace = Some(ns.to_string());
                p.name = Some(name.to_string());
            }
        }
    }
}

/// Workloads of cgroup paths for one capture or scan: the kubelet's log
/// directories are read once, and only when a path lies in a pod.
#[derive(Debug, Clone)]
pub struct Workloads {
    kubelet_logs: PathBuf,
    index: Option<KubeletLogs>,
}

impl Workloads {
    /// `kubelet_logs` is the `--kubelet-logs` directory.
    pub fn new(kubelet_logs: &Path) -> Workloads {
        Workloads {
            kubelet_logs: kubelet_logs.to_path_buf(),
            index: None,
        }
    }

    /// What `path` names, with the names the kubelet's logs give.
    pub fn of(&mut self, path: &str) -> Workload {
        let mut w = workload(path);
        if w.pod.is_some() {
            let dir = &self.kubelet_logs;
            self.index
                .get_or_insert_with(|| KubeletLogs::read(dir))
                .name(&mut w);
        }
        w
    }
}

#[cfg(test)]
#[path = "cgroups_tests.rs"]
mod tests;
