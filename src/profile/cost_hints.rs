//! Hints from a cost measurement: a program whose hook's dispatch, or the
//! runtime statistics on its runs, cost more than its own run.

use super::hints::MIN_SAMPLES;
use crate::model::cost::{Cost, ProgramCost};
use crate::model::profile::Hint;

/// Dispatch or statistics are worth a hint past this many of their
/// samples per sample of the program's own run.
pub(crate) const OVER_RUN_RATIO: f64 = 1.0;

fn is_syscall_hook(p: &ProgramCost) -> bool {
    p.hook
        .split([',', ':'])
        .any(|t| matches!(t, "sys_enter" | "sys_exit"))
}

fn is_kprobe(p: &ProgramCost) -> bool {
    p.prog_type == "kprobe" && !p.hook.contains("tracepoint")
}

/// A figure in ns per run, or its samples when the runs are unknown.
fn per_run(c: &Cost, p: &ProgramCost, samples: u64) -> String {
    c.ns_per_run(samples, p.runs_per_sec).map_or_else(
        || format!("{samples} samples"),
        |ns| format!("{ns:.0} ns/run ({samples} samples)"),
    )
}

fn hint(p: &ProgramCost, kind: &'static str, part: u64, evidence: String) -> Hint {
    Hint {
        kind,
        program_id: p.id,
        program: p.name.clone(),
        figure: part as f64 / p.samples.program.max(1) as f64,
        threshold: OVER_RUN_RATIO,
        unit: "x",
        evidence,
        fix: match kind {
            "syscall_slow_path" => {
                "if the program keeps one PID or one syscall, attach where that event happens \
                 (the syscall's own tracepoint or function) so other syscalls keep the fast path, \
                 then compare with brr cost"
            }
            "kprobe_dispatch" => {
                "an fentry/fexit program on the same function runs through a BPF trampoline \
                 instead of the breakpoint or ftrace handler; compare both with brr cost"
            }
            "stats_over_run" => {
                "hold BPF_ENABLE_STATS only while measuring (brr's TUI, activity and exporter \
                 hold it for their whole life; brr cost holds it for its window)"
            }
            _ => "fewer runs (filter before the hook where it allows) cut the dispatch with them",
        },
        ..Hint::default()
    }
}

/// The hints of `c`: each rests on at least [`MIN_SAMPLES`] samples of
/// the part it names, more than the program's own.
pub(crate) fn hints(c: &Cost) -> Vec<Hint> {
    let mut out = Vec::new();
    for p in &c.programs {
        let s = &p.samples;
        let over =
            |part: u64| part >= MIN_SAMPLES && part as f64 > OVER_RUN_RATIO * s.program as f64;
        let own = per_run(c, p, s.program);
        if over(s.dispatch) {
            let d = per_run(c, p, s.dispatch);
            let (kind, why) = if is_syscall_hook(p) {
                (
                    "syscall_slow_path",
                    "; a sys_enter/sys_exit tracepoint puts every syscall of the host on the \
                     tracing slow path, and its share of that path is counted here",
                )
            } else if is_kprobe(p) {
                (
                    "kprobe_dispatch",
                    "; the kprobe's breakpoint or ftrace handler is part of it",
                )
            } else {
                ("dispatch_over_run", "")
            };
            out.push(hint(
                p,
                kind,
                s.dispatch,
                format!("dispatch costs {d} against its own run's {own}{why}"),
            ));
        }
        if over(s.stats) {
            let st = per_run(c, p, s.stats);
            out.push(hint(
                p,
                "stats_over_run",
                s.stats,
                format!(
                    "runtime statistics cost {st} against its own run's {own}, on every run \
                     while any process holds them on"
                ),
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::cost::Split;

    fn cost(prog_type: &str, hook: &str, samples: Split<u64>) -> Cost {
        Cost {
            programs: vec![ProgramCost {
                id: 3,
                name: "p".into(),
                prog_type: prog_type.into(),
                hook: hook.into(),
                runs_per_sec: 1000.0,
                samples,
                ..ProgramCost::default()
            }],
            sample_ns: 1e6,
            seconds: 1.0,
            cpus: 1,
            frequency: 1000,
            ..Cost::default()
        }
    }

    fn kinds(c: &Cost) -> Vec<&'static str> {
        hints(c).iter().map(|h| h.kind).collect()
    }

    #[test]
    fn sys_enter_dispatch_over_the_run_names_the_slow_path() {
        let c = cost(
            "raw_tracepoint",
            "raw_tracepoint:sys_enter",
            Split {
                program: 20,
                dispatch: 60,
                stats: 10,
            },
        );
        let h = hints(&c);
        assert_eq!(kinds(&c), vec!["syscall_slow_path"]);
        assert_eq!(h[0].figure, 3.0);
        assert!(
            h[0].evidence
                .contains("60000 ns/run (60 samples) against its own run's 20000 ns/run"),
            "{}",
            h[0].evidence
        );
    }

    #[test]
    fn kprobe_and_statistics_hints() {
        let c = cost(
            "kprobe",
            "kprobe:vfs_read",
            Split {
                program: 25,
                dispatch: 30,
                stats: 40,
            },
        );
        assert_eq!(kinds(&c), vec!["kprobe_dispatch", "stats_over_run"]);
        let c = cost(
            "kprobe",
            "tracepoint:task_rename",
            Split {
                program: 5,
                dispatch: 30,
                stats: 0,
            },
        );
        assert_eq!(kinds(&c), vec!["dispatch_over_run"]);
    }

    #[test]
    fn no_hint_below_the_evidence_floor_or_the_run() {
        let c = cost(
            "raw_tracepoint",
            "sys_enter",
            Split {
                program: 0,
                dispatch: 19,
                stats: 19,
            },
        );
        assert!(kinds(&c).is_empty());
        let c = cost(
            "raw_tracepoint",
            "sys_enter",
            Split {
                program: 80,
                dispatch: 80,
                stats: 30,
            },
        );
        assert!(kinds(&c).is_empty());
    }
}
