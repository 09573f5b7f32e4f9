//! Listing rows: what brr knows about each loaded kernel object.

use compact_str::CompactString;
/// A process holding a file descriptor on an object.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Owner {
    pub pid: u32,
    pub comm: String,
}

/// Another object whose reference keeps this one loaded when no process
/// holds it: a link holds its program, a program the maps it uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Holder {
    Prog(u32),
    Link(u32),
}

/// Who keeps an object loaded; filled only when the owner scan ran (`-x`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Keepers {
    /// Processes with an fd on it, sorted by pid.
    pub owners: Vec<Owner>,
    /// The first object holding it, for objects no process holds.
    pub held_by: Option<Holder>,
    /// The owners' workloads (container, pod) by pid, where the owner scan
    /// found their cgroups.
    pub workloads: std::collections::BTreeMap<u32, super::container::Workload>,
}

/// Where a program is attached: through one of its links, or through a
/// perf event fd a process holds (`PERF_EVENT_IOC_SET_BPF`, as bpftrace,
/// BCC and libbpf on kernels without perf-event links attach tracepoints,
/// kprobes and uprobes), which has no link.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AttachPoint {
    /// The link, when it is attached through one.
    pub link_id: Option<u32>,
    pub attach_type: Option<String>,
    pub target: Option<String>,
    /// The perf event fd, when it is attached through one.
    pub perf_event: Option<PerfEventFd>,
}

/// A perf event fd that a program is attached through, and the process
/// holding it (the first by pid, when several hold it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct PerfEventFd {
    pub pid: u32,
    pub fd: u32,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Program {
    pub id: u32,
    pub prog_type: CompactString,
    /// The kernel's name, at most 15 bytes.
    pub name: CompactString,
    pub tag: CompactString,
    pub xlated_size: u32,
    pub jited_size: u32,
    pub run_time_ns: u64,
    pub run_count: u64,
    /// Runs the kernel skipped because the program was already running on
    /// that CPU (counted whether or not statistics are on); `None` on a
    /// kernel without the counter (before 5.12).
    pub recursion_misses: Option<u64>,
    pub map_ids: Vec<u32>,
    pub btf_id: u32,
    pub pinned_paths: Vec<String>,
    /// The BTF name of the main function, else `name`.
    pub full_name: CompactString,
    pub loaded_at: Option<CompactString>,
    pub uid: u32,
    pub gpl_compatible: bool,
    /// `None` on a kernel that does not report it (before 5.16).
    pub verified_insns: Option<u32>,
    pub memlock_bytes: Option<u64>,
    /// The memlock of the maps it uses, each map once; `None` when no
    /// map's memlock could be read or they were not read (without `-x`).
    pub maps_memlock_bytes: Option<u64>,
    /// How many of its maps other programs use too (read with `-x`).
    pub shared_maps: Option<u32>,
    /// `Some` when the owner scan ran.
    pub keepers: Option<Keepers>,
    /// Its links' attach points (filled with `-x`).
    pub attached: Vec<AttachPoint>,
}

impl Program {
    /// The name to show people: the full name when there is one.
    pub(crate) fn display_name(&self) -> &str {
        if self.full_name.is_empty() {
            &self.name
        } else {
            &self.full_name
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Map {
    pub id: u32,
    pub map_type: String,
    pub name: String,
    pub key_size: u32,
    pub value_size: u32,
    pub max_entries: u32,
    pub btf_id: u32,
    pub pinned_paths: Vec<String>,
    pub flags: u32,
    pub frozen: Option<bool>,
    pub memlock_bytes: Option<u64>,
    pub keepers: Option<Keepers>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Link {
    pub id: u32,
    pub link_type: String,
    pub prog_id: u32,
    pub attach_type: Option<String>,
    pub target_obj_id: Option<u32>,
    pub target_btf_id: Option<u32>,
    pub pinned_paths: Vec<String>,
    pub target: Option<String>,
    /// Every function of a kprobe_multi link (TARGET names the first).
    pub functions: Vec<String>,
    pub keepers: Option<Keepers>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct BtfObject {
    pub id: u32,
    pub name: String,
    pub size: u32,
    pub pinned_paths: Vec<String>,
    /// The programs and maps whose BTF it is, by ID; `None` when they
    /// were not looked up (without `-x`).
    pub users: Option<BtfUsers>,
}

/// The programs and maps that use one BTF object (their `btf_id`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct BtfUsers {
    pub prog_ids: Vec<u32>,
    pub map_ids: Vec<u32>,
}

/// Which of a program's costlier fields a view prints, so that the
/// collector reads only those. The info struct every row costs (IDs,
/// type, name, tag, sizes, counters, uid, load time) is always read.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ProgFields {
    /// The BTF name of the main function: one BTF read per BTF object.
    pub full_name: bool,
    /// The IDs of the maps it uses.
    pub map_ids: bool,
    /// Its memlock, from its fdinfo: one more read per program.
    pub memlock: bool,
    /// Its pinned paths: one walk of bpffs per listing.
    pub pins: bool,
    /// Who holds it, where it is attached and its maps' memlock (`-x`):
    /// an owner scan, the links and every map's memlock.
    pub context: bool,
}

impl ProgFields {
    /// Every field.
    #[cfg(test)]
    pub(crate) const ALL: ProgFields = ProgFields {
        full_name: true,
        map_ids: true,
        memlock: true,
        pins: true,
        context: true,
    };
}

/// Which of a map's costlier fields a view prints.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MapFields {
    /// Memlock and frozen, from its fdinfo: one more read per map.
    pub fdinfo: bool,
    pub pins: bool,
    /// Who holds it (`-x`): an owner scan and a pass over the programs.
    pub keepers: bool,
}

impl MapFields {
    pub(crate) const ALL: MapFields = MapFields {
        fdinfo: true,
        pins: true,
        keepers: true,
    };
}

/// Which of a link's costlier fields a view prints.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct LinkFields {
    /// The target by name (interface, cgroup path, BTF function) rather
    /// than by number.
    pub target_names: bool,
    pub pins: bool,
    /// Who holds it (`-x`): an owner scan.
    pub keepers: bool,
}

impl LinkFields {
    pub(crate) const ALL: LinkFields = LinkFields {
        target_names: true,
        pins: true,
        keepers: true,
    };
}
