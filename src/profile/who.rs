//! Who pays: the tasks in whose context each program's samples were taken.
//!
//! A sample records the task that was current on the CPU. For a program
//! run from a syscall or a tracepoint in process context that is the
//! process that triggered it; for one run in interrupt or softirq context
//! (XDP, tc, timers, many kprobes) it is whichever task the interrupt
//! happened to land on, often `swapper` (pid 0, the idle task).

use std::collections::{BTreeMap, HashMap};

use crate::model::profile::{Payer, Profile, ProgramProfile};

/// The name of pid 0, as `ps` and `perf` call the idle task.
pub(crate) const IDLE_COMM: &str = "swapper";
/// A task that exited before the report was made.
pub(crate) const GONE_COMM: &str = "?";

/// How many parents a task's name is looked for through: a chain of forks
/// without a name longer than this is a shell's pipeline at most.
const MAX_FORK_DEPTH: usize = 64;

/// `comm` of every pid in the programs' stacks: the name the kernel
/// reported during the capture (`seen`); else, for a process created
/// during it (`parents`, from FORK records), the name of its nearest
/// parent with one, as the child ran under it until it was named; else the
/// one `now` reads of it or, when it is gone, of that parent (`None` or
/// empty for a task that is gone).
pub(crate) fn comms(
    programs: &[ProgramProfile],
    seen: &HashMap<u32, String>,
    parents: &HashMap<u32, u32>,
    now: impl Fn(u32) -> Option<String>,
) -> BTreeMap<u32, String> {
    let known = |pid: u32| seen.get(&pid).filter(|n| !n.is_empty()).cloned();
    let ancestors = |pid: u32| {
        std::iter::successors(Some(pid), |p| parents.get(p).copied())
            .skip(1)
            .take(MAX_FORK_DEPTH)
            .filter(move |&p| p != pid)
    };
    let mut out = BTreeMap::new();
    for pid in programs.iter().flat_map(|p| p.stacks.iter().map(|s| s.pid)) {
        out.entry(pid).or_insert_with(|| {
            if pid == 0 {
                return IDLE_COMM.into();
            }
            known(pid)
                .or_else(|| ancestors(pid).find_map(known))
                .or_else(|| now(pid).filter(|s| !s.is_empty()))
                .or_else(|| {
                    parents
                        .get(&pid)
                        .and_then(|&p| now(p))
                        .filter(|s| !s.is_empty())
                })
                .unwrap_or_else(|| GONE_COMM.into())
        });
    }
    out
}

/// The sum of `samples` per key, most first (ties by key).
fn ranked<K: Ord + Copy>(items: impl Iterator<Item = (K, u64)>) -> Vec<(K, u64)> {
    let mut sums: BTreeMap<K, u64> = BTreeMap::new();
    for (k, n) in items {
        *sums.entry(k).or_insert(0) += n;
    }
    let mut out: Vec<(K, u64)> = sums.into_iter().collect();
    out.sort_by_key(|&(k, n)| (std::cmp::Reverse(n), k));
    out
}

/// A program's stacks of its own work: not interrupts that arrived while
/// it ran, which whoever was running pays for anyway.
fn work(p: &ProgramProfile) -> impl Iterator<Item = &crate::model::profile::Stack> {
    p.stacks.iter().filter(|s| s.interrupt.is_none())
}

/// The processes in whose context `p` ran, with their samples (adding up
/// to its inclusive samples).
pub(crate) fn tasks(profile: &Profile, p: &ProgramProfile) -> Vec<Payer> {
    ranked(work(p).map(|s| (s.pid, s.samples)))
        .into_iter()
        .map(|(pid, samples)| Payer {
            id: u64::from(pid),
            name: profile
                .comms
                .get(&pid)
                .cloned()
                .unwrap_or_else(|| GONE_COMM.into()),
            samples,
        })
        .collect()
}

/// The cgroups in whose context `p` ran; empty when the kernel reported
/// none. A cgroup that is gone has the path `?`.
pub(crate) fn cgroups(profile: &Profile, p: &ProgramProfile) -> Vec<Payer> {
    if work(p).all(|s| s.cgroup == 0) {
        return Vec::new();
    }
    ranked(work(p).map(|s| (s.cgroup, s.samples)))
        .into_iter()
        .map(|(id, samples)| Payer {
            id,
            name: profile
                .cgroups
                .get(&id)
                .cloned()
                .unwrap_or_else(|| GONE_COMM.into()),
            samples,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::profile::Stack;
    use crate::profile::aggregate::tests::profile;

    #[test]
    fn tasks_rank_by_samples_and_add_up() {
        let mut prof = profile();
        prof.comms.insert(207, "worker".into());
        let p = &prof.programs[0];
        let t = tasks(&prof, p);
        assert_eq!(
            t.iter().map(|x| x.samples).sum::<u64>(),
            p.inclusive_samples()
        );
        assert_eq!((t[0].id, t[0].name.as_str(), t[0].samples), (7, "?", 9));
        assert_eq!(
            (t[1].id, t[1].name.as_str(), t[1].samples),
            (207, "worker", 5)
        );
        assert!(cgroups(&prof, p).is_empty(), "no cgroup IDs reported");
        prof.programs[0].stacks[0].cgroup = 5;
        prof.programs[0].stacks[1].cgroup = 5;
        prof.cgroups.insert(5, "/system.slice/x.service".into());
        let c = cgroups(&prof, &prof.programs[0]);
        assert_eq!(c.iter().map(|x| x.samples).sum::<u64>(), 19);
        let named: Vec<(u64, &str)> = c.iter().map(|x| (x.id, x.name.as_str())).collect();
        assert_eq!(named, vec![(0, "?"), (5, "/system.slice/x.service")]);
    }

    #[test]
    fn comms_from_proc_with_idle_and_vanished_tasks() {
        let now = |pid: u32| match pid {
            42 => Some("nginx: worker".to_string()),
            7 => Some(String::new()),
            _ => None,
        };
        let stack = |pid| Stack {
            samples: 1,
            pid,
            ..Default::default()
        };
        let p = ProgramProfile {
            stacks: vec![stack(42), stack(0), stack(999_999), stack(42), stack(7)],
            ..Default::default()
        };
        let c = comms(
            std::slice::from_ref(&p),
            &HashMap::new(),
            &HashMap::new(),
            now,
        );
        let got: Vec<(u32, &str)> = c.iter().map(|(k, v)| (*k, v.as_str())).collect();
        assert_eq!(
            got,
            vec![
                (0, "swapper"),
                (7, "?"),
                (42, "nginx: worker"),
                (999_999, "?")
            ]
        );
        // A name the kernel reported during the capture wins over /proc,
        // and names a task that has exited; pid 0 stays the idle task.
        let seen: HashMap<u32, String> = [
            (999_999, "short-lived".to_string()),
            (42, "renamed".to_string()),
            (0, "x".to_string()),
        ]
        .into();
        let c = comms(&[p], &seen, &HashMap::new(), now);
        let got: Vec<(u32, &str)> = c.iter().map(|(k, v)| (*k, v.as_str())).collect();
        assert_eq!(
            got,
            vec![
                (0, "swapper"),
                (7, "?"),
                (42, "renamed"),
                (999_999, "short-lived")
            ]
        );
    }
}
