//! What the profile engine asks the collector instead of reading it
//! itself: the programs' pinned paths, the sampled tasks' names and
//! cgroups, and the programs a process holds.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::kernel::bpffs::Pins;
use crate::kernel::Errno;

/// The object and task context of one capture, read when the capture
/// ends (a `--pid`'s programs before it starts).
pub(crate) trait Context {
    /// The pinned paths of every program, walked after the capture.
    fn pins(&self) -> Arc<Pins>;
    /// Task `pid`'s command name as it is now, `None` when it is gone.
    fn comm(&self, pid: u32) -> Option<String>;
    /// The path of each of these cgroup2 IDs that still exists.
    fn cgroup_paths(&self, ids: &[u64]) -> BTreeMap<u64, String>;
    /// The cgroup path of each of these tasks that still runs.
    fn task_cgroups(&self, pids: &[u32]) -> BTreeMap<u32, String>;
    /// The programs process `pid` holds file descriptors on.
    fn programs_of_pid(&self, pid: u32) -> Result<Vec<u32>, Errno>;
}
