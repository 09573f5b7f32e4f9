//! A [`Profile`] turned into the [`Report`] every view reads: the listed
//! programs with their ordered and limited rows, Other totals, payers,
//! hints and figures, computed once after a capture.

mod annotate;
#[cfg(test)]
pub(crate) mod tests;

use std::collections::BTreeMap;
use std::path::Path;

use crate::kernel::cgroups::Workloads;
use crate::model::activity::ActivityRow;
use crate::model::container::Workload;
use crate::model::profile::{round, share, Hint, InterruptHotspot, Payer, Profile, ProgramProfile};
use crate::model::report::{
    Capture, Figured, Other, Payers, ProgramReport, Report, Rows, SampledWorkloads, Totals,
};

use super::aggregate::{listed, ProgramView};
use super::{hints, who};
pub(crate) use annotate::{annotate, sampled_at, NativeCode, NativeRows};

/// What a report lists.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct ReportOptions {
    /// Programs (`--limit`); 0 = all. Program mode lists the selected one.
    pub limit: usize,
    /// Detail rows per program and list (`--line-limit`); 0 = all.
    pub line_limit: usize,
    /// One direct row per source line rather than per line record (the
    /// default table of `profile`; `-w` keeps the records).
    pub merge_lines: bool,
}

/// Where the kubelet's log directories are unless `--kubelet-logs` says.
#[cfg(test)]
pub(crate) const DEFAULT_KUBELET_LOGS: &str = "/var/log";

/// The report of `profile`, its workloads named from the kubelet's logs in
/// [`DEFAULT_KUBELET_LOGS`].
#[cfg(test)]
pub(crate) fn build(profile: &Profile, opts: &ReportOptions) -> Report {
    build_with(
        profile,
        opts,
        &workloads(profile, Path::new(DEFAULT_KUBELET_LOGS)),
    )
}

/// The workload of every sampled cgroup and task, named from the kubelet's
/// log directories under `kubelet_logs` (read at most once, and only when
/// some cgroup lies in a pod).
pub(crate) fn workloads(profile: &Profile, kubelet_logs: &Path) -> SampledWorkloads {
    let mut names = Workloads::new(kubelet_logs);
    let cgroups: BTreeMap<u64, Workload> = profile
        .cgroups
        .iter()
        .map(|(&id, path)| (id, names.of(path)))
        .collect();
    // Each task's samples per cgroup, to take the cgroup it ran in most.
    let mut per_task: BTreeMap<u32, BTreeMap<u64, u64>> = BTreeMap::new();
    for s in profile.programs.iter().flat_map(|p| p.stacks.iter()) {
        *per_task
            .entry(s.pid)
            .or_default()
            .entry(s.cgroup)
            .or_default() += s.samples;
    }
    let mut tasks = BTreeMap::new();
    for (pid, counts) in per_task {
        let most = counts
            .iter()
            .filter(|(id, _)| cgroups.contains_key(id))
            .max_by_key(|&(&id, &n)| (n, std::cmp::Reverse(id)))
            .and_then(|(id, _)| cgroups.get(id).cloned());
        let w = most.or_else(|| profile.task_cgroups.get(&pid).map(|path| names.of(path)));
        if let Some(w) = w {
            tasks.insert(pid, w);
        }
    }
    SampledWorkloads { cgroups, tasks }
}

/// The report of `profile`, its payers' workloads taken from `workloads`.
pub(crate) fn build_with(
    profile: &Profile,
    opts: &ReportOptions,
    workloads: &SampledWorkloads,
) -> Report {
    Report {
        capture: Capture {
            requested_event: profile.requested_event.clone(),
            selected_event: profile.selected_event.clone(),
            duration: profile.duration,
            frequency: profile.frequency,
            kernel_samples: profile.kernel_samples,
            call_graph: profile.call_graph,
            program_id: profile.program_ids.first().copied(),
            program_ids: profile.program_ids.clone(),
            pid: profile.pid,
            counters: profile.counters,
            telemetry: profile.telemetry.clone(),
        },
        totals: totals(profile, opts),
        programs: listed(profile, opts.limit)
            .into_iter()
            .map(|p| program(profile, p, opts, workloads))
            .collect(),
    }
}

/// Hot and slow: the hint an activity window gives a program, for the
/// views that show it beside a report (`top --textmode`).
pub(crate) fn hot_and_slow(row: &ActivityRow, measured: f64, slow_ns: u64) -> Option<Hint> {
    let window = hints::WindowFigures {
        runs: row.run_count_delta,
        run_ns: row.run_time_ns_delta,
        seconds: measured,
    };
    hints::hot_and_slow(row.prog.id, &row.prog.name, window, slow_ns as f64)
}

fn totals(profile: &Profile, opts: &ReportOptions) -> Totals {
    let progs = &profile.programs;
    let selected = || progs.iter().filter(|p| profile.selects(p.id));
    let (mapped, unmapped) = (
        selected().map(|p| p.direct_source_mapped_samples).sum(),
        selected().map(|p| p.direct_source_unmapped_samples).sum(),
    );
    let (direct, other) = if profile.program_ids.is_empty() {
        (0, 0)
    } else {
        let direct: u64 = selected().map(|p| p.samples).sum();
        (
            direct,
            profile.counters.bpf_jit_samples.saturating_sub(direct),
        )
    };
    Totals {
        limit: if profile.program_ids.is_empty() {
            opts.limit
        } else {
            profile.program_ids.len()
        },
        line_limit: opts.line_limit,
        selected_program_samples: direct,
        other_bpf_samples: other,
        source_mapped_samples: mapped,
        source_unmapped_samples: unmapped,
        max_ring_occupancy_percent: round(profile.telemetry.max_ring_occupancy, 2),
        running_percent: profile.telemetry.running_percent(),
    }
}

/// The samples of `whole` that the kept rows do not show, with their
/// share of the whole's CPU percent.
fn other(profile: &Profile, omitted: u64, whole: u64) -> Other {
    let cpu_percent = if whole == 0 {
        0.0
    } else {
        round(
            profile.cpu_percent(whole) * omitted as f64 / whole as f64,
            4,
        )
    };
    Other {
        samples: omitted,
        cpu_percent,
    }
}

/// Rows with their share of `whole` and of one CPU.
fn figured<T>(
    profile: &Profile,
    rows: Vec<T>,
    whole: u64,
    samples: impl Fn(&T) -> u64,
) -> Vec<Figured<T>> {
    rows.into_iter()
        .map(figures(profile, whole, samples))
        .collect()
}

/// [`figured`] one row at a time, for rows made as they are figured.
fn figures<'a, T>(
    profile: &'a Profile,
    whole: u64,
    samples: impl Fn(&T) -> u64 + 'a,
) -> impl FnMut(T) -> Figured<T> + 'a {
    // Rows come by samples, and rounding is a decimal formatting: rows
    // with the samples of the row before (most of a long list) take its
    // figures.
    let mut last: Option<(u64, f64, f64)> = None;
    move |row| {
        let n = samples(&row);
        let (sample_percent, cpu_percent) = match last {
            Some((m, s, c)) if m == n => (s, c),
            _ => {
                let (s, c) = (share(n, whole), profile.cpu_percent(n));
                last = Some((n, s, c));
                (s, c)
            }
        };
        Figured {
            sample_percent,
            cpu_percent,
            row,
        }
    }
}

fn payers(
    profile: &Profile,
    all: Vec<Payer>,
    whole: u64,
    limit: usize,
    workload: impl Fn(u64) -> Option<Workload>,
) -> Payers {
    let shown = if limit > 0 && all.len() > limit {
        limit
    } else {
        all.len()
    };
    let rest: u64 = all.iter().skip(shown).map(|r| r.samples).sum();
    let other = (shown < all.len()).then(|| Other {
        samples: rest,
        cpu_percent: profile.cpu_percent(rest),
    });
    let workloads = all
        .iter()
        .filter_map(|r| Some((r.id, workload(r.id)?)))
        .collect();
    Payers {
        all: figured(profile, all, whole, |r| r.samples),
        shown,
        other,
        workloads,
    }
}

fn program(
    profile: &Profile,
    p: &ProgramProfile,
    opts: &ReportOptions,
    workloads: &SampledWorkloads,
) -> ProgramReport {
    let line_limit = opts.line_limit;
    let ProgramView {
        hotspots,
        kernel,
        groups,
        direct_omitted,
        kernel_omitted,
        groups_omitted,
        ..
    } = ProgramView::lines(p, line_limit, opts.merge_lines);
    let inclusive = p.inclusive_samples();
    let loaded = p.loaded_seconds(profile.seconds());
    ProgramReport {
        id: p.id,
        prog_type: p.prog_type.clone(),
        name: p.name.clone(),
        tag: p.tag.clone(),
        full_name: p.full_name.clone(),
        function_count: p.function_count,
        pinned_paths: p.pinned_paths.clone(),
        samples: p.samples,
        kernel_samples: p.kernel_samples,
        inclusive_samples: inclusive,
        sample_percent: share(p.samples, profile.counters.total_samples),
        cpu_percent: profile.cpu_percent(p.samples),
        kernel_cpu_percent: profile.cpu_percent(p.kernel_samples),
        inclusive_cpu_percent: profile.cpu_percent(inclusive),
        // Tied by the session, which knows where programs are attached.
        dispatch_samples: None,
        dispatch_cpu_percent: None,
        direct_source_mapped_samples: p.direct_source_mapped_samples,
        direct_source_unmapped_samples: p.direct_source_unmapped_samples,
        under_bpf_caller_source_mapped_samples: p.under_bpf_caller_source_mapped_samples,
        under_bpf_caller_source_unmapped_samples: p.under_bpf_caller_source_unmapped_samples,
        direct: Rows {
            rows: figured(profile, hotspots, p.samples, |h| h.samples),
            other: other(profile, direct_omitted, p.samples),
        },
        kernel_ips: Rows {
            rows: figured(profile, kernel, p.kernel_samples, |k| k.samples),
            other: other(profile, kernel_omitted, p.kernel_samples),
        },
        kernel_functions: Rows {
            rows: figured(profile, groups, p.kernel_samples, |g| g.samples),
            other: other(profile, groups_omitted, p.kernel_samples),
        },
        tasks: payers(
            profile,
            who::tasks(profile, p),
            inclusive,
            line_limit,
            |pid| {
                let pid = u32::try_from(pid).ok()?;
                workloads.tasks.get(&pid).cloned()
            },
        ),
        cgroups: payers(
            profile,
            who::cgroups(profile, p),
            inclusive,
            line_limit,
            |id| workloads.cgroups.get(&id).cloned(),
        ),
        hints: hints::for_program(profile, p),
        interrupt_samples: p.interrupt_samples,
        interrupt_cpu_percent: profile.cpu_percent(p.interrupt_samples),
        interrupts: interrupts(profile, p, line_limit),
        loaded_after: p.loaded_after,
        unloaded_after: p.unloaded_after,
        loaded_cpu_percent: loaded.map(|s| profile.cpu_percent_over(p.samples, s)),
        loaded_inclusive_cpu_percent: loaded.map(|s| profile.cpu_percent_over(inclusive, s)),
        native: None,
    }
}

/// A program's interrupt rows, most samples first, cut by `--line-limit`.
fn interrupts(profile: &Profile, p: &ProgramProfile, line_limit: usize) -> Rows<InterruptHotspot> {
    let mut rows = p.interrupts.clone();
    rows.sort_by(|a, b| {
        (
            std::cmp::Reverse(a.samples),
            &a.entry,
            &a.bpf_file,
            a.bpf_line,
        )
            .cmp(&(
                std::cmp::Reverse(b.samples),
                &b.entry,
                &b.bpf_file,
                b.bpf_line,
            ))
    });
    if line_limit > 0 {
        rows.truncate(line_limit);
    }
    let shown: u64 = rows.iter().map(|r| r.samples).sum();
    let whole = p.interrupt_samples;
    Rows {
        rows: figured(profile, rows, whole, |r| r.samples),
        other: other(profile, whole.saturating_sub(shown), whole),
    }
}
