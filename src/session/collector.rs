//! The collector: the value a front end builds from its command line and
//! holds for its life. It owns the settings every read needs (the bpffs
//! root, the kubelet's log directory) and the caches that views which walk
//! the objects again and again share (the owner scan, the pin scan, what
//! cannot change while an object lives), each read with the maximum age
//! its caller states. The reads themselves are its methods, in the files
//! of their kind (`listings`, `window`, `context`, `live`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use super::context::{scan_owners, OwnerCache, OwnerScan, Statics};
use crate::kernel::bpffs::{self, Pins};
use crate::kernel::{cgroups, owners, Errno};
use crate::model::profile::Profile;
use crate::model::report::SampledWorkloads;

/// Where tasks are read.
const PROC: &str = "/proc";

/// A value read at most `max_age` ago, whose age each caller states: the
/// last read and when it was taken, plus what the caller noted about it
/// (`N`, the objects an owner scan was taken for). Callers that find it
/// stale at the same time wait for one read rather than run one each.
#[derive(Debug)]
pub(crate) struct Aged<T, N = ()> {
    last: Mutex<Option<Taken<T, N>>>,
}

#[derive(Debug)]
struct Taken<T, N> {
    at: Instant,
    value: Arc<T>,
    note: Option<N>,
}

impl<T, N> Default for Aged<T, N> {
    fn default() -> Self {
        Aged::new()
    }
}

impl<T, N> Aged<T, N> {
    pub(crate) const fn new() -> Aged<T, N> {
        Aged {
            last: Mutex::new(None),
        }
    }

    /// The value as of at most `max_age` before `now`, running `read` when
    /// the last one is older or there is none (a zero age: always). A
    /// clock read from before the last read counts as fresh.
    pub(crate) fn get(&self, now: Instant, max_age: Duration, read: impl FnOnce() -> T) -> Arc<T> {
        self.get_if(now, max_age, None, |_, _, _| true, read)
    }

    /// [`Aged::get`] where a value younger than `max_age` is taken only if
    /// `keep` accepts its age and its note beside `note`; a new read is
    /// kept with `note`.
    pub(crate) fn get_if(
        &self,
        now: Instant,
        max_age: Duration,
        note: Option<N>,
        keep: impl FnOnce(Duration, Option<&N>, Option<&N>) -> bool,
        read: impl FnOnce() -> T,
    ) -> Arc<T> {
        let mut last = self.last.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(l) = &*last {
            let age = now.saturating_duration_since(l.at);
            if age < max_age && keep(age, l.note.as_ref(), note.as_ref()) {
                return Arc::clone(&l.value);
            }
        }
        let value = Arc::new(read());
        *last = Some(Taken {
            at: now,
            value: Arc::clone(&value),
            note,
        });
        value
    }
}

/// The one collector of a front end (see the module's text).
#[derive(Debug)]
pub(crate) struct Collector {
    bpffs: PathBuf,
    kubelet_logs: PathBuf,
    owners: OwnerCache,
    pins: Aged<Pins>,
    statics: Mutex<Statics>,
}

impl Collector {
    /// A collector that reads pins under `bpffs` (the `--bpffs` root) and
    /// names pods and containers from the kubelet's logs under
    /// `kubelet_logs`; its caches start empty.
    pub(crate) fn new(bpffs: &Path, kubelet_logs: &Path) -> Collector {
        Collector {
            bpffs: bpffs.to_path_buf(),
            kubelet_logs: kubelet_logs.to_path_buf(),
            owners: OwnerCache::new(),
            pins: Aged::new(),
            statics: Mutex::new(Statics::new()),
        }
    }

    /// Where the kubelet's log directories name pods and containers.
    pub(crate) fn kubelet_logs(&self) -> &Path {
        &self.kubelet_logs
    }

    /// Who holds each object, from a scan at most `max_age` old.
    pub(crate) fn owners(&self, max_age: Duration) -> Arc<OwnerScan> {
        self.owners
            .get(Instant::now(), max_age, || scan_owners(&self.kubelet_logs))
    }

    /// The owner cache itself, for reads that say which objects a scan
    /// must have seen.
    pub(super) fn owner_cache(&self) -> &OwnerCache {
        &self.owners
    }

    /// Every pinned path under the bpffs root, from a walk at most
    /// `max_age` old.
    pub(crate) fn pins(&self, max_age: Duration) -> Arc<Pins> {
        self.pins
            .get(Instant::now(), max_age, || bpffs::scan(&self.bpffs))
    }

    /// The record of what cannot change while an object lives.
    pub(super) fn statics(&self) -> MutexGuard<'_, Statics> {
        self.statics.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The workload of every cgroup and task `profile` sampled, named from
    /// the kubelet's logs (read once).
    pub(crate) fn workloads(&self, profile: &Profile) -> SampledWorkloads {
        crate::profile::report::workloads(profile, &self.kubelet_logs)
    }
}

/// What a capture asks of the host: pins and holders as the collector reads
/// them, task names and cgroups from `/proc` when the capture ends.
impl crate::profile::Context for Collector {
    fn pins(&self) -> Arc<Pins> {
        // Walked after the capture, so that programs loaded during it
        // have their pins.
        self.pins(Duration::ZERO)
    }

    fn comm(&self, pid: u32) -> Option<String> {
        let text =
            std::fs::read_to_string(Path::new(PROC).join(pid.to_string()).join("comm")).ok()?;
        Some(text.trim_end_matches('\n').to_string())
    }

    fn cgroup_paths(&self, ids: &[u64]) -> BTreeMap<u64, String> {
        cgroups::paths_of(ids.iter().copied())
    }

    fn task_cgroups(&self, pids: &[u32]) -> BTreeMap<u32, String> {
        cgroups::task_paths(pids.iter().copied(), Path::new(PROC))
    }

    fn programs_of_pid(&self, pid: u32) -> std::result::Result<Vec<u32>, Errno> {
        owners::programs_of_pid(Path::new(PROC), pid)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pins_are_read_again_only_when_older_than_the_caller_accepts() {
        let dir = std::env::temp_dir().join(format!("brr-collector-{}", std::process::id()));
        let c = Collector::new(&dir, Path::new("/nonexistent"));
        assert_eq!(c.kubelet_logs(), Path::new("/nonexistent"));
        let a = c.pins(Duration::from_secs(60));
        assert!(Arc::ptr_eq(&a, &c.pins(Duration::from_secs(60))));
        assert!(!Arc::ptr_eq(&a, &c.pins(Duration::ZERO)));
    }

    #[test]
    fn a_note_decides_whether_a_young_value_is_kept() {
        let aged: Aged<u32, &str> = Aged::new();
        let t0 = Instant::now();
        let s = Duration::from_secs(1);
        assert_eq!(*aged.get_if(t0, s, Some("a"), |_, _, _| true, || 1), 1);
        let same = |_: Duration, old: Option<&&str>, new: Option<&&str>| old == new;
        assert_eq!(*aged.get_if(t0, s, Some("a"), same, || 2), 1);
        assert_eq!(*aged.get_if(t0, s, Some("b"), same, || 3), 3);
        assert_eq!(*aged.get_if(t0, s, Some("b"), |_, _, _| false, || 4), 4);
        assert_eq!(*aged.get_if(t0 + s, s, Some("b"), same, || 5), 5, "too old");
    }
}
