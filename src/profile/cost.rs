//! The whole cost of each program: its own samples, and the dispatch and
//! statistics samples of its hook tied to it. A hook's samples go to the
//! programs attached there that ran in the window, split by their runs;
//! what cannot be tied stays `unattributed dispatch`.

use crate::model::cost::{Cost, ProgramCost, Split, StatsHolder};
use crate::model::profile::{DispatchKind, DispatchSamples, Profile};
use crate::model::AttachPoint;

/// How many arguments a tracepoint passes (from the kernel's BTF), by
/// name; a tracepoint not in it may have any number.
pub(crate) type Args = std::collections::HashMap<String, usize>;

/// The raw tracepoints whose argument count would tell hooks apart: those
/// programs of `progs` that ran are attached to, when some dispatch
/// samples name no hook.
pub(crate) fn args_wanted<'a>(profile: &Profile, progs: &'a [Hooked]) -> Vec<&'a str> {
    if !profile
        .dispatch
        .iter()
        .any(|d| d.args.is_some() && d.hook.is_none())
    {
        return Vec::new();
    }
    let mut tps: Vec<&str> = progs
        .iter()
        .filter(|p| p.runs > 0 && runs_through(DispatchKind::RawTracepoint, p))
        .flat_map(targets)
        .collect();
    tps.sort_unstable();
    tps.dedup();
    tps
}

/// A program as the window saw it: where it is attached and its runs.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Hooked {
    pub id: u32,
    pub name: String,
    pub full_name: String,
    pub prog_type: String,
    pub attached: Vec<AttachPoint>,
    /// Runs in the window (the run counter's delta).
    pub runs: u64,
    pub runs_per_sec: f64,
}

/// `target` without what names its place rather than the hook: a
/// `+0x10` offset, a `module:` or `vmlinux:` prefix, `btf_trace_`.
fn bare(target: &str) -> &str {
    let t = target.split('+').next().unwrap_or(target);
    let t = t.rsplit(':').next().unwrap_or(t);
    t.strip_prefix("btf_trace_").unwrap_or(t)
}

fn targets(p: &Hooked) -> impl Iterator<Item = &str> {
    p.attached
        .iter()
        .filter_map(|a| a.target.as_deref())
        .map(bare)
}

fn attach_types(p: &Hooked) -> impl Iterator<Item = &str> {
    p.attached.iter().filter_map(|a| a.attach_type.as_deref())
}

fn is_syscall_tp(t: &str) -> bool {
    matches!(t, "sys_enter" | "sys_exit")
        || t.starts_with("sys_enter_")
        || t.starts_with("sys_exit_")
}

/// Whether `p` can be run through dispatch of `kind`.
fn runs_through(kind: DispatchKind, p: &Hooked) -> bool {
    let ty = p.prog_type.as_str();
    let raw_tp = matches!(ty, "raw_tracepoint" | "raw_tracepoint_writable")
        || (ty == "tracing"
            && attach_types(p).any(|a| a.contains("raw_tp") || a.contains("tp_btf")));
    match kind {
        DispatchKind::SyscallSlowPath => {
            (raw_tp || ty == "tracepoint") && targets(p).any(is_syscall_tp)
        }
        DispatchKind::RawTracepoint => raw_tp,
        DispatchKind::PerfTracepoint => ty == "tracepoint",
        // A kretprobe enters through the kprobe handler too (its
        // pre_handler sets the return hook): seen on 6.1 and 6.12.
        DispatchKind::Kprobe => ty == "kprobe" && !attach_types(p).any(|a| a.contains("multi")),
        DispatchKind::Kretprobe => ty == "kprobe" && attach_types(p).any(|a| a.contains("ret")),
        DispatchKind::KprobeMulti => ty == "kprobe" && attach_types(p).any(|a| a.contains("multi")),
        DispatchKind::Trampoline => matches!(ty, "tracing" | "lsm" | "ext") && !raw_tp,
        DispatchKind::Xdp => ty == "xdp",
        DispatchKind::Tc => matches!(ty, "sched_cls" | "sched_act"),
        DispatchKind::Cgroup => {
            ty.starts_with("cgroup_") || matches!(ty, "sock_ops" | "cgroup_sockopt")
        }
        DispatchKind::SocketFilter => ty == "socket_filter",
    }
}

/// The programs a hook's samples belong to: those that can run through
/// its dispatch and ran, at the hook the chain names; when it names
/// none, those of the one hook that ran, else none (never a guess).
fn tied<'a>(d: &DispatchSamples, progs: &'a [Hooked], args: &Args) -> Vec<&'a Hooked> {
    let mut cands: Vec<&Hooked> = progs
        .iter()
        .filter(|p| p.runs > 0 && runs_through(d.kind, p))
        .collect();
    match (d.kind, d.hook.as_deref()) {
        (DispatchKind::SyscallSlowPath, _) => {}
        (_, Some(hook)) => cands.retain(|p| targets(p).any(|t| t == hook)),
        (_, None) => {
            // bpf_trace_run<N> runs only the tracepoints of N arguments.
            if let Some(n) = d.args {
                cands.retain(|p| targets(p).any(|t| args.get(t).is_none_or(|&a| a == n)));
            }
            let mut hooks: Vec<&str> = cands.iter().flat_map(|p| targets(p)).collect();
            hooks.sort_unstable();
            hooks.dedup();
            if hooks.len() > 1
                || cands.iter().any(|p| targets(p).next().is_none()) && cands.len() > 1
            {
                cands.clear();
            }
        }
    }
    cands
}

/// Split `n` in proportion to `weights` (largest remainder: the parts
/// add up to `n` exactly, ties to the earlier weight).
pub(crate) fn split_by(n: u64, weights: &[u64]) -> Vec<u64> {
    let sum: u128 = weights.iter().map(|&w| u128::from(w)).sum();
    if sum == 0 {
        return vec![0; weights.len()];
    }
    let mut parts: Vec<u64> = weights
        .iter()
        .map(|&w| (u128::from(n) * u128::from(w) / sum) as u64)
        .collect();
    let mut left = n - parts.iter().sum::<u64>();
    let mut order: Vec<usize> = (0..weights.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(u128::from(n) * u128::from(weights[i]) % sum));
    for i in order {
        if left == 0 {
            break;
        }
        parts[i] += 1;
        left -= 1;
    }
    parts
}

/// Where `p` is attached, as the HOOK column names it.
fn hook_name(p: &Hooked) -> String {
    let mut names: Vec<String> = p
        .attached
        .iter()
        .map(|a| match (a.attach_type.as_deref(), a.target.as_deref()) {
            (Some(ty), Some(t)) => format!("{ty}:{t}"),
            (None, Some(t)) => t.to_string(),
            (Some(ty), None) => ty.to_string(),
            (None, None) => String::new(),
        })
        .filter(|s| !s.is_empty())
        .collect();
    names.dedup();
    names.join(",")
}

/// The cost of every program of `progs` (the window's) from `profile`,
/// listing those `profile.program_ids` select (all when empty) that ran
/// or were sampled.
pub(crate) fn build(profile: &Profile, progs: &[Hooked], args: &Args) -> Cost {
    let mut samples: std::collections::HashMap<u32, Split<u64>> = profile
        .programs
        .iter()
        .map(|p| {
            let s = Split {
                program: p.inclusive_samples(),
                ..Split::default()
            };
            (p.id, s)
        })
        .collect();
    let mut unattributed = 0;
    for d in &profile.dispatch {
        let owners = tied(d, progs, args);
        if owners.is_empty() {
            unattributed += d.dispatch + d.stats;
            continue;
        }
        let runs: Vec<u64> = owners.iter().map(|p| p.runs).collect();
        let dispatch = split_by(d.dispatch, &runs);
        let stats = split_by(d.stats, &runs);
        for (i, p) in owners.iter().enumerate() {
            let s = samples.entry(p.id).or_default();
            s.dispatch += dispatch[i];
            s.stats += stats[i];
        }
    }
    let host = samples.values().fold(Split::default(), |a, s| Split {
        program: a.program + s.program,
        dispatch: a.dispatch + s.dispatch,
        stats: a.stats + s.stats,
    });
    let selected = |id: u32| profile.program_ids.is_empty() || profile.program_ids.contains(&id);
    let mut programs: Vec<ProgramCost> = progs
        .iter()
        .filter(|p| selected(p.id))
        .filter_map(|p| {
            let s = samples.get(&p.id).copied().unwrap_or_default();
            (p.runs > 0 || s.total() > 0).then(|| ProgramCost {
                id: p.id,
                name: p.name.clone(),
                full_name: p.full_name.clone(),
                prog_type: p.prog_type.clone(),
                hook: hook_name(p),
                runs_per_sec: p.runs_per_sec,
                samples: s,
                narrows: Vec::new(),
                one_syscall: None,
            })
        })
        .collect();
    programs.sort_by_key(|p| (std::cmp::Reverse(p.samples.total()), p.id));
    let mut cost = Cost {
        programs,
        unattributed_dispatch: unattributed,
        host,
        sample_ns: if profile.frequency > 0 {
            1e9 / profile.frequency as f64
        } else {
            0.0
        },
        seconds: profile.seconds(),
        cpus: profile.telemetry.cpus.len(),
        frequency: profile.frequency,
        warnings: profile.telemetry.warnings.clone(),
        hints: Vec::new(),
        stats_holders: Vec::new(),
    };
    cost.hints = super::cost_hints::hints(&cost);
    cost
}

/// Add what the hints need beyond the samples: what the programs on
/// `sys_enter`/`sys_exit` compare their events with (read from their
/// instructions), and the other processes that hold statistics on; then
/// the hints again.
pub(crate) fn with_facts(mut cost: Cost, stats_holders: Vec<StatsHolder>) -> Cost {
    let syscall_hooks = cost.programs.iter().any(super::cost_hints::is_syscall_hook);
    let pid_tgid = if syscall_hooks {
        super::syscall_filter::pid_tgid_calls_here()
    } else {
        Vec::new()
    };
    for p in &mut cost.programs {
        if super::cost_hints::is_syscall_hook(p) {
            let n = super::syscall_filter::of_program(p.id, &pid_tgid);
            p.narrows = n.describe();
            p.one_syscall = n.one_syscall();
        }
    }
    cost.stats_holders = stats_holders;
    cost.hints = super::cost_hints::hints(&cost);
    cost
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::profile::ProgramProfile;

    fn raw_tp(id: u32, tp: &str, runs: u64) -> Hooked {
        Hooked {
            id,
            name: format!("p{id}"),
            prog_type: "raw_tracepoint".into(),
            attached: vec![AttachPoint {
                link_id: Some(id + 100),
                attach_type: None,
                target: Some(tp.into()),
                perf_event: None,
            }],
            runs,
            runs_per_sec: runs as f64,
            ..Hooked::default()
        }
    }

    fn profile(dispatch: Vec<DispatchSamples>, own: &[(u32, u64)]) -> Profile {
        Profile {
            frequency: 1000,
            duration: 1.0,
            dispatch,
            programs: own
                .iter()
                .map(|&(id, n)| ProgramProfile {
                    id,
                    samples: n,
                    ..ProgramProfile::default()
                })
                .collect(),
            ..Profile::default()
        }
    }

    fn hook(kind: DispatchKind, hook: Option<&str>, dispatch: u64, stats: u64) -> DispatchSamples {
        DispatchSamples {
            kind,
            hook: hook.map(String::from),
            args: None,
            dispatch,
            stats,
        }
    }

    #[test]
    fn several_programs_on_one_hook_split_by_their_runs() {
        let p = profile(
            vec![hook(
                DispatchKind::RawTracepoint,
                Some("sys_enter"),
                100,
                31,
            )],
            &[(1, 5)],
        );
        let progs = [
            raw_tp(1, "sys_enter", 3000),
            raw_tp(2, "sys_enter", 1000),
            raw_tp(3, "sched_switch", 9000),
        ];
        let c = build(&p, &progs, &Args::new());
        let s = |id| c.programs.iter().find(|x| x.id == id).unwrap().samples;
        assert_eq!((s(1).program, s(1).dispatch, s(1).stats), (5, 75, 23));
        assert_eq!((s(2).program, s(2).dispatch, s(2).stats), (0, 25, 8));
        assert_eq!(s(3).total(), 0, "another hook takes none");
        assert_eq!(c.unattributed_dispatch, 0);
        assert_eq!(c.host.total(), 5 + 100 + 31);
        assert_eq!(c.programs[0].id, 1, "sorted by total");
    }

    #[test]
    fn dispatch_with_no_program_to_tie_is_unattributed() {
        let p = profile(
            vec![
                // No kprobe program ran.
                hook(DispatchKind::Kprobe, Some("vfs_read"), 7, 2),
                // Unnamed raw tracepoint hook, two hooks ran: no guess.
                hook(DispatchKind::RawTracepoint, None, 40, 10),
            ],
            &[],
        );
        let progs = [raw_tp(1, "task_rename", 10), raw_tp(2, "sched_switch", 10)];
        let c = build(&p, &progs, &Args::new());
        assert_eq!(c.unattributed_dispatch, 59);
        assert_eq!(c.host.total(), 0);
        assert!(c.programs.iter().all(|p| p.samples.total() == 0));
    }

    /// The kprobe handler's samples at a function with only a kretprobe
    /// on it are the kretprobe's entry half.
    #[test]
    fn a_kretprobe_takes_its_entry_through_the_kprobe_handler() {
        let p = profile(
            vec![hook(DispatchKind::Kprobe, Some("__set_task_comm"), 12, 0)],
            &[],
        );
        let mut k = raw_tp(1, "__set_task_comm", 10);
        k.prog_type = "kprobe".into();
        k.attached[0].attach_type = Some("kretprobe".into());
        let mut multi = raw_tp(2, "__set_task_comm", 10);
        multi.prog_type = "kprobe".into();
        multi.attached[0].attach_type = Some("kprobe_multi".into());
        let c = build(&p, &[k, multi], &Args::new());
        let s = |id| c.programs.iter().find(|x| x.id == id).unwrap().samples;
        assert_eq!((s(1).dispatch, s(2).dispatch), (12, 0));
        assert_eq!(c.unattributed_dispatch, 0);
    }

    #[test]
    fn the_dispatcher_of_n_arguments_runs_only_tracepoints_of_n() {
        let mut d = hook(DispatchKind::RawTracepoint, None, 40, 10);
        d.args = Some(2);
        let p = profile(vec![d], &[]);
        let progs = [raw_tp(1, "task_rename", 10), raw_tp(2, "sched_switch", 10)];
        let args: Args = [
            ("task_rename".to_string(), 2),
            ("sched_switch".to_string(), 4),
        ]
        .into();
        let c = build(&p, &progs, &args);
        assert_eq!(c.unattributed_dispatch, 0);
        let s = |id| c.programs.iter().find(|x| x.id == id).unwrap().samples;
        assert_eq!((s(1).dispatch, s(1).stats, s(2).total()), (40, 10, 0));
        assert_eq!(args_wanted(&p, &progs), vec!["sched_switch", "task_rename"]);
    }

    #[test]
    fn an_unnamed_hook_goes_to_the_one_hook_that_ran() {
        let p = profile(vec![hook(DispatchKind::RawTracepoint, None, 40, 10)], &[]);
        let progs = [raw_tp(1, "task_rename", 10), raw_tp(2, "sched_switch", 0)];
        let c = build(&p, &progs, &Args::new());
        assert_eq!(c.unattributed_dispatch, 0);
        assert_eq!(
            c.programs.len(),
            1,
            "a program that neither ran nor was sampled is left out"
        );
        assert_eq!(
            (c.programs[0].samples.dispatch, c.programs[0].samples.stats),
            (40, 10)
        );
        assert_eq!(c.programs[0].hook, "task_rename");
        // 50 samples of 1 ms over 1 s, 10 runs.
        assert_eq!(c.ns_per_run(50, 10.0), Some(5e6));
        assert_eq!(c.ns_per_run(50, 0.0), None);
    }

    #[test]
    fn the_syscall_slow_path_belongs_to_every_syscall_tracepoint_program() {
        let p = profile(
            vec![hook(
                DispatchKind::SyscallSlowPath,
                Some("sys_enter/sys_exit"),
                9,
                0,
            )],
            &[],
        );
        let mut classic = raw_tp(2, "sys_enter_openat", 1);
        classic.prog_type = "tracepoint".into();
        let progs = [
            raw_tp(1, "sys_exit", 2),
            classic,
            raw_tp(3, "task_rename", 50),
        ];
        let c = build(&p, &progs, &Args::new());
        let s = |id| {
            c.programs
                .iter()
                .find(|x| x.id == id)
                .unwrap()
                .samples
                .dispatch
        };
        assert_eq!((s(1), s(2), s(3)), (6, 3, 0));
    }

    #[test]
    fn splits_add_up() {
        assert_eq!(split_by(10, &[1, 1, 1]), vec![4, 3, 3]);
        assert_eq!(split_by(7, &[0, 0]), vec![0, 0]);
        assert_eq!(
            split_by(u64::MAX, &[u64::MAX, 1]).iter().sum::<u64>(),
            u64::MAX
        );
    }
}
