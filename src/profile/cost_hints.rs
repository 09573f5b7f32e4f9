//! Hints from a cost measurement: a program whose hook's dispatch, or the
//! runtime statistics on its runs, cost more than its own run.

use super::hints::MIN_SAMPLES;
use crate::model::cost::{Cost, ProgramCost, StatsHolder};
use crate::model::profile::Hint;

/// Dispatch or statistics are worth a hint past this many of their
/// samples per sample of the program's own run.
pub(crate) const OVER_RUN_RATIO: f64 = 1.0;

pub(crate) fn is_syscall_hook(p: &ProgramCost) -> bool {
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

fn hint(
    p: &ProgramCost,
    holders: &[StatsHolder],
    kind: &'static str,
    part: u64,
    evidence: String,
) -> Hint {
    Hint {
        kind,
        program_id: p.id,
        program: p.name.clone(),
        figure: part as f64 / p.samples.program.max(1) as f64,
        threshold: OVER_RUN_RATIO,
        unit: "x",
        evidence,
        fix: match kind {
            "syscall_slow_path" if !p.narrows.is_empty() => {
                "a program that acts for one syscall or one process can attach to the kernel \
                 function of what it watches (fentry or kprobe on the syscall's function), which \
                 leaves the host's other syscalls on the fast path; a sys_enter_<name> tracepoint \
                 would not, every syscall tracepoint takes the same slow path; compare with brr cost"
            }
            "syscall_slow_path" => {
                "if the program keeps one PID or one syscall, attach to the kernel function of \
                 what it watches (fentry or kprobe) so other syscalls keep the fast path (every \
                 syscall tracepoint takes the slow path), then compare with brr cost"
            }
            "stats_over_run" if !holders.is_empty() => {
                "the processes named hold BPF_ENABLE_STATS now, and while any does every run of \
                 every program pays this: stop them or have them hold it only while measuring"
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

/// A duration in words: `2 h 5 min`, `12 min`, `40 s`.
fn duration(secs: u64) -> String {
    match secs {
        0..60 => format!("{secs} s"),
        60..3600 => format!("{} min", secs / 60),
        _ => format!("{} h {} min", secs / 3600, secs % 3600 / 60),
    }
}

/// The holders for a hint's evidence: `pid 4242 (bpftop, running for
/// 2 h 5 min)`.
fn holders_text(holders: &[StatsHolder]) -> String {
    let named: Vec<String> = holders
        .iter()
        .map(|h| {
            let comm = if h.comm.is_empty() { "?" } else { &h.comm };
            match h.running_secs {
                Some(s) => format!("pid {} ({comm}, running for {})", h.pid, duration(s)),
                None => format!("pid {} ({comm})", h.pid),
            }
        })
        .collect();
    named.join(", ")
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
            let mut evidence = format!("dispatch costs {d} against its own run's {own}{why}");
            if kind == "syscall_slow_path" {
                for fact in &p.narrows {
                    evidence.push_str("; ");
                    evidence.push_str(fact);
                }
                if let Some(id) = p.one_syscall {
                    evidence.push_str(&format!(
                        ": if that is its filter, it acts for syscall {id} alone while every \
                         syscall of the host takes the slow path"
                    ));
                }
            }
            out.push(hint(p, &c.stats_holders, kind, s.dispatch, evidence));
        }
        if over(s.stats) {
            let st = per_run(c, p, s.stats);
            let mut evidence = format!(
                "runtime statistics cost {st} against its own run's {own}, on every run \
                 while any process holds them on"
            );
            if !c.stats_holders.is_empty() {
                evidence.push_str(&format!(
                    "; besides brr, {} hold them on (held for at most as long as each has run)",
                    holders_text(&c.stats_holders)
                ));
            }
            out.push(hint(
                p,
                &c.stats_holders,
                "stats_over_run",
                s.stats,
                evidence,
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

    #[test]
    fn a_syscall_filter_and_the_stats_holders_are_named_in_the_evidence() {
        let mut c = cost(
            "raw_tracepoint",
            "raw_tracepoint:sys_enter",
            Split {
                program: 20,
                dispatch: 60,
                stats: 40,
            },
        );
        c.programs[0].narrows =
            vec!["its instructions compare the syscall id with 257 and no other value".into()];
        c.programs[0].one_syscall = Some(257);
        c.stats_holders = vec![
            StatsHolder {
                pid: 4242,
                comm: "bpftop".into(),
                running_secs: Some(7500),
            },
            StatsHolder {
                pid: 7,
                comm: String::new(),
                running_secs: None,
            },
        ];
        let h = hints(&c);
        assert_eq!(kinds(&c), vec!["syscall_slow_path", "stats_over_run"]);
        assert!(
            h[0].evidence.ends_with(
                "; its instructions compare the syscall id with 257 and no other value: if that \
                 is its filter, it acts for syscall 257 alone while every syscall of the host \
                 takes the slow path"
            ),
            "{}",
            h[0].evidence
        );
        assert!(h[0].fix.contains("fentry"), "{}", h[0].fix);
        assert!(
            h[1].evidence.ends_with(
                "besides brr, pid 4242 (bpftop, running for 2 h 5 min), pid 7 (?) hold them on \
                 (held for at most as long as each has run)"
            ),
            "{}",
            h[1].evidence
        );
        assert!(h[1].fix.starts_with("the processes named"), "{}", h[1].fix);
        c.stats_holders.clear();
        assert!(!hints(&c)[1].evidence.contains("besides brr"));
        assert_eq!(duration(59), "59 s");
        assert_eq!(duration(600), "10 min");
    }
}
