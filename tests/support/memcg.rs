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
/// where this process sits in it.
fn memory_hierarchy() -> io::Result<(PathBuf, String)> {
    let mounts = std::fs::read_to_string("/proc/self/mountinfo")?;
    let own = std::fs::read_to_string("/proc/self/cgroup")?;
    let mut v2 = None;
    for line in mounts.lines() {
        let Some((left, right)) = line.split_once(" - ") else {
            continue;
        };
        let l: Vec<&str> = left.split(' ').collect();
        let r: Vec<&str> = right.split(' ').collect();
        if l.len() < 5 || r.len() < 3 || l[3] != "/" {
            continue;
        }
        let point = PathBuf::from(unescape(l[4]));
        match r[0] {
            // cgroup v1: a hierarchy with the memory controller bound.
            "cgroup" if r[2].split(',').any(|o| o == "memory") => {
                // "ID:controllers:path"; a path may hold colons.
                let path = own
                    .lines()
                    .filter_map(|l| l.split_once(':').and_then(|(_, rest)| rest.split_once(':')))
                    .find(|(ctl, _)| ctl.split(',').any(|c| c == "memory"))
                    .map(|(_, p)| p.to_string())
                    .ok_or_else(|| io::Error::other("no memory line in /proc/self/cgroup"))?;
                return Ok((point, path));
            }
            "cgroup2" if v2.is_none() => {
                let ctl =
                    std::fs::read_to_string(point.join("cgroup.controllers")).unwrap_or_default();
                if ctl.split_whitespace().any(|c| c == "memory") {
                    v2 = Some(point);
                }
            }
            _ => {}
        }
    }
    let point = v2.ok_or_else(|| io::Error::other("no memory controller is mounted"))?;
    let path = own
        .lines()
        .find_map(|l| l.strip_prefix("0::"))
        .ok_or_else(|| io::Error::other("no cgroup2 line in /proc/self/cgroup"))?;
    Ok((point, path.to_string()))
}

/// `\NNN` octal escapes of a mountinfo field decoded.
fn unescape(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\'
            && i + 3 < b.len()
            && b[i + 1..i + 4].iter().all(|c| (b'0'..=b'7').contains(c))
        {
            out.push((b[i + 1] - b'0') * 64 + (b[i + 2] - b'0') * 8 + (b[i + 3] - b'0'));
            i += 4;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
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
