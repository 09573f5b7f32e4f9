//! Running outside memory-cgroup accounting: this process moved to the root
//! of the memory controller's hierarchy, and back when the guard drops.
//!
//! Why the socket case of the cost ground truth needs it: AF_UNIX sockets
//! allocate their buffers with kernel-memory accounting, so every datagram
//! charges and uncharges the sender's memory cgroup through a per-CPU stock
//! of bytes. Where the stock's remainder sits against a page boundary
//! decides whether each send also charges and uncharges a whole page
//! (`obj_cgroup_charge_pages`, `refill_stock`, `memcg1_account_kmem`: about
//! 200 ns a call on a 6.18 VM). The small allocations that attaching a
//! filter or enabling statistics make move that remainder, so one timing
//! can have one mode on the page-charging path for all its rounds and not
//! the others: 200-400 ns a call either way, more than the filter costs.
//! The root memory cgroup charges nothing, so there the call is the same
//! path in every mode.

use std::io;
use std::path::PathBuf;

/// Where the memory controller's hierarchy is mounted (its whole tree) and
/// where this process sits in it: a cgroup v1 hierarchy with the memory
/// controller's files, else a cgroup2 one that lists it.
fn memory_hierarchy() -> io::Result<(PathBuf, String)> {
    let own = std::fs::read_to_string("/proc/self/cgroup")?;
    let mounts: Vec<_> = brr::mountinfo::read()
        .into_iter()
        .filter(|m| m.root == "/")
        .collect();
    if let Some(m) = mounts
        .iter()
        .find(|m| m.fstype == "cgroup" && m.point.join("memory.limit_in_bytes").exists())
    {
        // "ID:controllers:path"; a path may hold colons.
        let path = own
            .lines()
            .filter_map(|l| l.split_once(':').and_then(|(_, rest)| rest.split_once(':')))
            .find(|(ctl, _)| ctl.split(',').any(|c| c == "memory"))
            .map(|(_, p)| p.to_string())
            .ok_or_else(|| io::Error::other("no memory line in /proc/self/cgroup"))?;
        return Ok((m.point.clone(), path));
    }
    let m = mounts
        .iter()
        .find(|m| {
            m.fstype == "cgroup2"
                && std::fs::read_to_string(m.point.join("cgroup.controllers"))
                    .is_ok_and(|c| c.split_whitespace().any(|c| c == "memory"))
        })
        .ok_or_else(|| io::Error::other("no memory controller is mounted"))?;
    let path = own
        .lines()
        .find_map(|l| l.strip_prefix("0::"))
        .ok_or_else(|| io::Error::other("no cgroup2 line in /proc/self/cgroup"))?;
    Ok((m.point.clone(), path.to_string()))
}

/// This process in the root memory cgroup; moved back where it was when
/// dropped.
#[derive(Debug)]
pub(crate) struct RootMemcg {
    home: PathBuf,
}

impl RootMemcg {
    /// Move this process (all its threads) to the root memory cgroup.
    /// `Ok(None)` when it is there already.
    pub(crate) fn enter() -> io::Result<Option<RootMemcg>> {
        let (point, path) = memory_hierarchy()?;
        let rel = path.trim_start_matches('/');
        if rel.is_empty() {
            return Ok(None);
        }
        let home = point.join(rel);
        std::fs::write(point.join("cgroup.procs"), std::process::id().to_string())?;
        Ok(Some(RootMemcg { home }))
    }
}

impl Drop for RootMemcg {
    fn drop(&mut self) {
        // The cgroup may have gone meanwhile; the root is a fine place to
        // stay then.
        let _ = std::fs::write(
            self.home.join("cgroup.procs"),
            std::process::id().to_string(),
        );
    }
}
