//! What a cgroup path says about the workload inside it: the container, the
//! Kubernetes pod and the systemd unit.

/// The container runtime that named a cgroup.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Runtime {
    /// containerd's CRI plugin (`cri-containerd-ID.scope`, or the bare ID
    /// under a cgroupfs-driver pod, a shape cri-dockerd shares and the path
    /// cannot tell apart).
    Containerd,
    /// CRI-O (`crio-ID.scope`, `crio-ID`).
    CriO,
    /// Docker (`docker-ID.scope`, `/docker/ID`).
    Docker,
    /// Podman (`libpod-ID.scope`, `libpod-ID`).
    Podman,
}

impl Runtime {
    /// The runtime's name as its own tools spell it; also the JSON value.
    pub fn as_str(self) -> &'static str {
        match self {
            Runtime::Containerd => "containerd",
            Runtime::CriO => "cri-o",
            Runtime::Docker => "docker",
            Runtime::Podman => "podman",
        }
    }
}

/// A container, identified by its runtime's cgroup.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Container {
    pub runtime: Runtime,
    /// The full 64-hex-digit container ID.
    pub id: String,
    /// The container's name in its pod (from the kubelet's logs); `None`
    /// where nothing on the host names it.
    pub name: Option<String>,
}

/// A pod's Kubernetes quality-of-service class, which picks its cgroup
/// parent (`kubepods`, `kubepods/burstable`, `kubepods/besteffort`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Qos {
    Guaranteed,
    Burstable,
    BestEffort,
}

impl Qos {
    /// The class as the Kubernetes API spells it (`status.qosClass`); also
    /// the JSON value.
    pub fn as_str(self) -> &'static str {
        match self {
            Qos::Guaranteed => "Guaranteed",
            Qos::Burstable => "Burstable",
            Qos::BestEffort => "BestEffort",
        }
    }
}

/// A Kubernetes pod, identified by the kubelet's cgroup.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Pod {
    /// The pod's UID with dashes (a UUID, or 32 hex digits for a static
    /// pod), also where a systemd slice name spells them `_`.
    pub uid: String,
    /// Namespace and name, from the kubelet's log directories; `None` when
    /// they were not found there.
    pub namespace: Option<String>,
    pub name: Option<String>,
    pub qos: Option<Qos>,
}

/// Everything one cgroup path tells.
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Workload {
    /// The cgroup path, `/` for the root (cgroup2: as the hierarchy is seen
    /// from brr's cgroup namespace, the form `/proc/PID/cgroup` uses).
    pub path: String,
    /// The innermost container in the path (within the pod, when there is
    /// one); `None` for a runtime's monitor process (`crio-conmon-`,
    /// `libpod-conmon-`) and for host processes.
    pub container: Option<Container>,
    /// The pod the path lies in.
    pub pod: Option<Pod>,
    /// The innermost systemd unit (`nginx.service`, `session-3.scope`) that
    /// lies below any container or pod: a host service, a session, or a
    /// unit inside a systemd-run container.
    pub service: Option<String>,
}
