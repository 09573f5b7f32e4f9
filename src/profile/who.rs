//! Who pays: the tasks in whose context each program's samples were taken.
//!
//! A sample records the task that was current on the CPU. For a program
//! run from a syscall or a tracepoint in process context that is the
//! process that triggered it; for one run in interrupt or softirq context
//! (XDP, tc, timers, many kprobes) it is whichever task the interrupt
//! happened to land on, often `swapper` (pid 0, the idle task).

use std::collections::BTreeMap;
use std::path::Path;

use crate::model::profile::ProgramProfile;

/// The name of pid 0, as `ps` and `perf` call the idle task.
pub const IDLE_COMM: &str = "swapper";
/// A task that exited before the report was made.
pub const GONE_COMM: &str = "?";

/// `comm` of every pid in the programs' stacks, read under `proc`.
pub fn comms(programs: &[ProgramProfile], proc: &Path) -> BTreeMap<u32, String> {
    let mut out = BTreeMap::new();
    for pid in programs.iter().flat_map(|p| p.stacks.iter().map(|s| s.pid)) {
        out.entry(pid).or_insert_with(|| comm(pid, proc));
    }
    out
}

fn comm(pid: u32, proc: &Path) -> String {
    if pid == 0 {
        return IDLE_COMM.into();
    }
    std::fs::read_to_string(proc.join(pid.to_string()).join("comm"))
        .ok()
        .map(|s| s.trim_end_matches('\n').to_string())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| GONE_COMM.into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::profile::Stack;

    #[test]
    fn comms_from_proc_with_idle_and_vanished_tasks() {
        let dir = std::env::temp_dir().join(format!("brr-who-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("42")).unwrap();
        std::fs::write(dir.join("42/comm"), "nginx: worker\n").unwrap();
        let stack = |pid| Stack {
            samples: 1,
            pid,
            ..Default::default()
        };
        let p = ProgramProfile {
            stacks: vec![stack(42), stack(0), stack(999_999), stack(42)],
            ..Default::default()
        };
        let c = comms(&[p], &dir);
        std::fs::remove_dir_all(&dir).unwrap();
        let got: Vec<(u32, &str)> = c.iter().map(|(k, v)| (*k, v.as_str())).collect();
        assert_eq!(
            got,
            vec![(0, "swapper"), (42, "nginx: worker"), (999_999, "?")]
        );
    }
}
