//! A [`Profile`] turned into the [`Report`] every view reads: the listed
//! programs with their ordered and limited rows, Other totals, payers,
//! hints and figures, computed once after a capture.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::sync::Arc;

use crate::inspect::native::roles::Role;
use crate::inspect::native::sampled::{At, Sampled};
use crate::kernel::cgroups::Workloads;
use crate::model::activity::ActivityRow;
use crate::model::container::Workload;
use crate::model::profile::{
    round, share, Hint, Hotspot, InterruptHotspot, Payer, Profile, ProgramProfile,
};
use crate::model::report::{
    Annotation, Capture, Figured, NativeRow, Other, Payers, ProgramReport, Report, Rows,
    SampledWorkloads, Totals,
};

use super::aggregate::{listed, ProgramView};
use super::{hints, who};

/// What a report lists.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct ReportOptions {
    /// Programs (`--limit`); 0 = all. Program mode lists the selected one.
    pub limit: usize,
    /// Detail rows per program and list (`--line-limit`); 0 = all.
    pub line_limit: usize,
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
            .map(|p| program(profile, p, opts.line_limit, workloads))
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
    line_limit: usize,
    workloads: &SampledWorkloads,
) -> ProgramReport {
    let ProgramView {
        hotspots,
        kernel,
        groups,
        direct_omitted,
        kernel_omitted,
        groups_omitted,
        ..
    } = ProgramView::new(p, line_limit);
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

/// What the JIT code of one listed program says of each of its sampled
/// instructions (in the order of [`sampled_at`]), or why it could not be
/// read.
pub(crate) type NativeCode = std::result::Result<Vec<Option<Sampled>>, String>;

/// Where each of a program's direct samples landed, in the engine's order:
/// what `--annotate` asks its JIT code about.
pub(crate) fn sampled_at(raw: &ProgramProfile) -> Vec<At> {
    raw.native
        .iter()
        .map(|n| n.func_index.zip(n.offset))
        .collect()
}

/// Which sampled instructions an annotation keeps as rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NativeRows {
    /// Every one: JSON and CSV list them, the drilldown places them.
    All,
    /// Those the `--line-limit` table prints, the rest counted in its
    /// Other row: a text report prints nothing more of them.
    Table,
}

/// `--annotate`: give every listed program its sampled native
/// instructions (from `code`, by program ID) and, when its JIT prologue,
/// epilogue and mitigation thunks take a large share, that hint.
pub(crate) fn annotate(
    report: &mut Report,
    profile: &Profile,
    mut code: HashMap<u32, NativeCode>,
    rows: NativeRows,
) {
    let line_limit = report.totals.line_limit;
    for p in &mut report.programs {
        let Some(raw) = profile.program(p.id) else {
            continue;
        };
        let (insns, unavailable) = match code.remove(&p.id) {
            Some(Ok(insns)) => (insns, None),
            Some(Err(why)) => (Vec::new(), Some(why)),
            None => (Vec::new(), Some("the JIT code was not read".to_string())),
        };
        let count = raw.native.len();
        let shown = if line_limit > 0 && count > line_limit {
            line_limit
        } else {
            count
        };
        let listed_row = |i: usize| rows == NativeRows::All || i < shown;
        // Past the table, a cut report makes only the rows the hint reads:
        // the few that are not the program's own body.
        let keep = |i: usize, role: Role| listed_row(i) || role != Role::Body;
        let mut listed = Vec::with_capacity(if rows == NativeRows::All {
            count
        } else {
            shown
        });
        let mut overhead = Vec::new();
        let mut figure = figures(profile, raw.samples, |r: &NativeRow| r.samples);
        for (i, row) in native_rows(raw, insns, keep) {
            if listed_row(i) {
                listed.push(figure(row));
            } else {
                overhead.push(row);
            }
        }
        let hint_rows = listed.iter().map(|r| &r.row).chain(&overhead);
        if let Some(h) = hints::jit_overhead(raw, hint_rows) {
            p.hints.push(h);
        }
        let rest: u64 = raw.native.iter().skip(shown).map(|n| n.samples).sum();
        let other = (shown < count).then(|| Other {
            samples: rest,
            cpu_percent: profile.cpu_percent(rest),
        });
        p.native = Some(Annotation {
            all: Arc::new(listed),
            shown,
            other,
            unavailable,
        });
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

/// A string the rows share.
type Shared = Option<Arc<str>>;

/// Every direct sample of `raw` by instruction, in the engine's order
/// (most samples first, ties by address) and with its position in it,
/// that `keep` keeps by position and role: with the instruction's text
/// and role from `code` (by position, taken from it) and the line its
/// samples went to.
fn native_rows<'a>(
    raw: &'a ProgramProfile,
    mut code: Vec<Option<Sampled>>,
    keep: impl Fn(usize, Role) -> bool + 'a,
) -> impl Iterator<Item = (usize, NativeRow)> + 'a {
    // Each line's file and source made once, for all the rows under it.
    let mut lines: Vec<(&Hotspot, Shared, Shared)> = raw
        .hotspots
        .iter()
        .filter(|h| h.jited_address.is_some())
        .map(|h| {
            (
                h,
                h.file.as_deref().map(Arc::from),
                h.source.as_deref().map(Arc::from),
            )
        })
        .collect();
    lines.sort_by_key(|(h, _, _)| h.jited_address);
    let mut functions: Vec<Arc<str>> = Vec::new();
    raw.native.iter().enumerate().filter_map(move |(row, n)| {
        let role = code
            .get(row)
            .and_then(Option::as_ref)
            .map_or(Role::Body, |i| i.role);
        if !keep(row, role) {
            return None;
        }
        // The line record a sample is counted under is the one with the
        // greatest JIT address at or below it, so it has a row.
        let at = lines
            .partition_point(|(h, _, _)| h.jited_address.is_some_and(|a| a <= n.ip))
            .checked_sub(1)
            .and_then(|i| lines.get(i));
        let insn = code.get_mut(row).and_then(Option::take);
        let function = n.function.as_deref().map(|name| {
            if let Some(f) = functions.iter().find(|f| f.as_ref() == name) {
                return Arc::clone(f);
            }
            let f: Arc<str> = Arc::from(name);
            functions.push(Arc::clone(&f));
            f
        });
        let row_of = NativeRow {
            samples: n.samples,
            ip: n.ip,
            func_index: n.func_index,
            function,
            offset: n.offset,
            file: at.and_then(|(_, file, _)| file.clone()),
            line: at.and_then(|(h, _, _)| h.line),
            source: at.and_then(|(_, _, source)| source.clone()),
            role: role.name(),
            // Text left out by the decoder (a row a text report does
            // not print) is no text.
            asm: insn.map(|i| i.asm).filter(|a| !a.is_empty()),
        };
        Some((row, row_of))
    })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::inspect::native::{Arch, JitFunction, NativeImage, NativeInsn};
    use crate::model::profile::{Frame, NativeSamples, Stack};
    use crate::profile::aggregate::tests::profile;

    /// The test profile with its program's samples and where they fell.
    fn with_native<const N: usize>(samples: u64, at: [(u64, u64); N]) -> Profile {
        let mut prof = profile();
        prof.programs[0].samples = samples;
        prof.programs[0].native = at.iter().map(|&(ip, n)| sampled(ip, n)).collect();
        prof
    }

    fn sampled(ip: u64, samples: u64) -> NativeSamples {
        NativeSamples {
            samples,
            ip,
            func_index: Some(0),
            function: Some("main_fn".into()),
            offset: Some(ip),
        }
    }

    /// Program 98's code (its function starts at 0): a frame, the code of
    /// lines 77, 107 and 16, and a return through the return thunk.
    pub(crate) fn image98() -> NativeImage {
        let insn = |offset: u32, len: usize, asm: &str, target: Option<&str>| NativeInsn {
            offset,
            bytes: vec![0x90; len].into(),
            asm: asm.into(),
            target: target.map(String::from),
            line: None,
        };
        NativeImage {
            arch: Arch::X86_64,
            functions: vec![JitFunction {
                name: "main_fn".into(),
                index: 0,
                address: Some(0),
                length: 0x36,
                insns: vec![
                    insn(0x0, 2, "nop ax", None),
                    insn(0x2, 1, "push rbp", None),
                    insn(0x3, 3, "mov rbp, rsp", None),
                    insn(0x6, 10, "xor eax, eax", None),
                    insn(0x10, 16, "mov eax, 0x1", None),
                    insn(
                        0x20,
                        4,
                        "call bpf_map_lookup_elem",
                        Some("bpf_map_lookup_elem"),
                    ),
                    insn(0x24, 12, "add rax, 0x1", None),
                    insn(0x30, 1, "leave", None),
                    insn(
                        0x31,
                        5,
                        "jmp __x86_return_thunk",
                        Some("__x86_return_thunk"),
                    ),
                ],
            }],
        }
    }

    /// What [`image98`] says of program 98's sampled instructions.
    pub(crate) fn code98(prof: &Profile) -> Vec<Option<Sampled>> {
        let at = sampled_at(prof.program(98).unwrap());
        crate::inspect::native::sampled::from_image(&image98(), &at)
    }

    /// The fixture profile with program 98's 10 direct samples by
    /// instruction (one below its first line record, so unmapped), and
    /// its report annotated with [`image98`] (program 7's code withheld),
    /// cut at `line_limit`.
    pub(crate) fn annotated(line_limit: usize) -> (Profile, Report) {
        annotated_as(line_limit, NativeRows::All)
    }

    /// [`annotated`] keeping the rows `rows` says.
    fn annotated_as(line_limit: usize, rows: NativeRows) -> (Profile, Report) {
        let mut prof = profile();
        prof.programs[0].native = vec![
            sampled(0x20, 3),
            sampled(0x10, 2),
            sampled(0x24, 2),
            sampled(0x2, 1),
            sampled(0x30, 1),
            sampled(0x31, 1),
        ];
        let mut r = build(&prof, &opts(0, line_limit));
        let mut code = HashMap::new();
        code.insert(98, Ok(code98(&prof)));
        code.insert(7, Err("the kernel withholds it".to_string()));
        annotate(&mut r, &prof, code, rows);
        (prof, r)
    }

    #[test]
    fn annotation_lists_every_sampled_instruction() {
        let (prof, r) = annotated(2);
        let a = r.programs[0].native.as_ref().unwrap();
        // Every sampled instruction, most samples first, ties by address;
        // they add up to the program's direct samples.
        type Seen<'a> = (Option<u64>, u64, Option<&'a str>, &'a str, Option<u32>);
        let rows: Vec<Seen> = a
            .all
            .iter()
            .map(|n| (n.offset, n.samples, n.asm.as_deref(), n.role, n.line))
            .collect();
        assert_eq!(
            rows,
            vec![
                (
                    Some(0x20),
                    3,
                    Some("call bpf_map_lookup_elem"),
                    "body",
                    Some(107)
                ),
                (Some(0x10), 2, Some("mov eax, 0x1"), "body", Some(77)),
                (Some(0x24), 2, Some("add rax, 0x1"), "body", Some(107)),
                (Some(0x2), 1, Some("push rbp"), "prologue", None),
                (Some(0x30), 1, Some("leave"), "epilogue", Some(16)),
                (
                    Some(0x31),
                    1,
                    Some("jmp __x86_return_thunk"),
                    "thunk",
                    Some(16)
                ),
            ]
        );
        let total: u64 = a.all.iter().map(|n| n.samples).sum();
        assert_eq!(total, prof.programs[0].samples);
        assert_eq!(a.all[0].sample_percent, 30.0);
        assert_eq!(a.all[0].cpu_percent, 0.3);
        assert_eq!(a.all[4].file.as_deref(), Some("/src/dir/maps.bpf.h"));
        assert_eq!(a.all[4].source.as_deref(), Some("\tif (val)"));
        assert_eq!(a.all[0].function.as_deref(), Some("main_fn"));
        // The --line-limit view: two rows and the rest as Other.
        assert_eq!(a.shown_rows().len(), 2);
        assert_eq!(
            a.other,
            Some(Other {
                samples: 5,
                cpu_percent: 0.5
            })
        );
        assert_eq!(a.unavailable, None);
        // Program 7 has no instruction samples; its code was not read.
        let seven = r.programs[1].native.as_ref().unwrap();
        assert!(seven.all.is_empty() && seven.other.is_none());
        assert_eq!(
            seven.unavailable.as_deref(),
            Some("the kernel withholds it")
        );
        // No limit: every row shown, no Other.
        let (_, all) = annotated(0);
        let a = all.programs[0].native.as_ref().unwrap();
        assert_eq!((a.shown_rows().len(), a.other), (6, None));
        // Without --annotate there is no annotation.
        assert!(build(&prof, &opts(0, 2))
            .programs
            .iter()
            .all(|p| p.native.is_none()));
    }

    #[test]
    fn annotation_without_code_keeps_samples_and_lines() {
        let mut prof = profile();
        prof.programs[0].native = vec![sampled(0x20, 6), sampled(0x7, 4)];
        let mut r = build(&prof, &opts(0, 0));
        let mut code = HashMap::new();
        code.insert(98, Err("no eBPF program with id 98".to_string()));
        annotate(&mut r, &prof, code, NativeRows::All);
        let a = r.programs[0].native.as_ref().unwrap();
        let rows: Vec<(u64, Option<&str>, &str, Option<u32>)> = a
            .all
            .iter()
            .map(|n| (n.samples, n.asm.as_deref(), n.role, n.line))
            .collect();
        assert_eq!(
            rows,
            vec![(6, None, "body", Some(107)), (4, None, "body", None)]
        );
        assert_eq!(a.unavailable.as_deref(), Some("no eBPF program with id 98"));
        // An offset inside an instruction gets no text.
        let mut r = build(&prof, &opts(0, 0));
        let mut code = HashMap::new();
        code.insert(98, Ok(code98(&prof)));
        annotate(&mut r, &prof, code, NativeRows::All);
        let a = r.programs[0].native.as_ref().unwrap();
        assert_eq!(a.all[1].asm, None, "0x7 is inside `xor eax, eax`");
        assert_eq!(a.all[0].asm.as_deref(), Some("call bpf_map_lookup_elem"));
    }

    #[test]
    fn a_table_annotation_keeps_the_printed_rows_and_the_same_other_and_hints() {
        for line_limit in [0, 1, 2, 5, 6, 7] {
            let (_, all) = annotated_as(line_limit, NativeRows::All);
            let (_, table) = annotated_as(line_limit, NativeRows::Table);
            for (a, t) in all.programs.iter().zip(&table.programs) {
                let (na, nt) = (a.native.as_ref().unwrap(), t.native.as_ref().unwrap());
                assert_eq!(na.shown_rows(), &nt.all[..], "{line_limit}");
                assert_eq!(
                    (na.shown, na.other, &na.unavailable),
                    (nt.shown, nt.other, &nt.unavailable)
                );
                assert_eq!(a.hints, t.hints, "{line_limit}");
            }
        }
        // The frame and the thunk past a one-row table still make the hint.
        let prof = with_native(40, [(0x20, 15), (0x2, 10), (0x30, 10), (0x31, 5)]);
        let hints = |rows| {
            let mut r = build(&prof, &opts(0, 1));
            let mut code = HashMap::new();
            code.insert(98, Ok(code98(&prof)));
            annotate(&mut r, &prof, code, rows);
            r.programs[0].hints.clone()
        };
        let table = hints(NativeRows::Table);
        assert_eq!(
            table.iter().map(|h| h.kind).collect::<Vec<_>>(),
            ["jit_overhead"]
        );
        assert_eq!(table, hints(NativeRows::All));
    }

    #[test]
    fn annotation_adds_the_jit_overhead_hint() {
        // 40 of 49 inclusive samples in the frame and the return thunk.
        let prof = with_native(40, [(0x2, 15), (0x30, 10), (0x31, 10), (0x20, 5)]);
        let mut r = build(&prof, &opts(0, 0));
        let mut code = HashMap::new();
        code.insert(98, Ok(code98(&prof)));
        annotate(&mut r, &prof, code, NativeRows::All);
        let kinds: Vec<&str> = r.programs[0].hints.iter().map(|h| h.kind).collect();
        assert_eq!(kinds, vec!["jit_overhead"]);
        assert_eq!(r.hints().count(), 1);
    }

    fn opts(limit: usize, line_limit: usize) -> ReportOptions {
        ReportOptions { limit, line_limit }
    }

    fn sum<T>(rows: &Rows<T>, samples: impl Fn(&T) -> u64) -> u64 {
        rows.rows.iter().map(|r| samples(&r.row)).sum::<u64>() + rows.other.samples
    }

    #[test]
    fn other_rows_keep_every_sample() {
        let prof = profile();
        for line_limit in 0..7 {
            let r = build(&prof, &opts(0, line_limit));
            for (p, raw) in r.programs.iter().zip(&prof.programs) {
                assert_eq!(sum(&p.direct, |h| h.samples), raw.samples);
                assert_eq!(sum(&p.kernel_ips, |k| k.samples), raw.kernel_samples);
                assert_eq!(sum(&p.kernel_functions, |g| g.samples), raw.kernel_samples);
                let tasks: u64 = p.tasks.shown_rows().iter().map(|t| t.samples).sum();
                let rest = p.tasks.other.map_or(0, |o| o.samples);
                assert_eq!(tasks + rest, raw.inclusive_samples(), "{line_limit}");
                if line_limit > 0 {
                    assert!(p.direct.rows.len() <= line_limit);
                    assert!(p.tasks.shown_rows().len() <= line_limit);
                }
            }
        }
    }

    #[test]
    fn limits_cut_rows_and_keep_figures() {
        let prof = profile();
        let r = build(&prof, &opts(20, 2));
        assert_eq!((r.totals.limit, r.totals.line_limit), (20, 2));
        assert_eq!(r.programs.len(), 2);
        let p = &r.programs[0];
        assert_eq!((p.id, p.inclusive_samples), (98, 19));
        assert_eq!(
            (p.sample_percent, p.cpu_percent, p.inclusive_cpu_percent),
            (5.0, 1.0, 1.9)
        );
        let lines: Vec<Option<u32>> = p.direct.rows.iter().map(|h| h.line).collect();
        assert_eq!(lines, vec![Some(107), Some(16)]);
        assert_eq!(
            (
                p.direct.rows[0].sample_percent,
                p.direct.rows[0].cpu_percent
            ),
            (50.0, 0.5)
        );
        // Other: 3 of the 10 direct samples, 3 / 10 of the program's 1.0 %.
        assert_eq!(
            p.direct.other,
            Other {
                samples: 3,
                cpu_percent: 0.3
            }
        );
        assert_eq!(p.kernel_ips.other.samples, 4);
        assert_eq!(p.kernel_ips.rows[0].sample_percent, 33.33);
        assert_eq!(p.kernel_functions.other.samples, 1);
        assert_eq!(p.kernel_functions.rows[0].ip_count, 3);
        // The first `limit` programs only.
        assert_eq!(build(&prof, &opts(1, 2)).programs.len(), 1);
        // Report-wide figures: every program's direct samples.
        assert_eq!(
            (
                r.totals.source_mapped_samples,
                r.totals.source_unmapped_samples
            ),
            (10, 1)
        );
        assert_eq!(
            (
                r.totals.max_ring_occupancy_percent,
                r.totals.running_percent
            ),
            (2.64, 100.0)
        );
        assert_eq!(r.capture.telemetry, prof.telemetry);
    }

    #[test]
    fn program_mode_lists_the_selected_program_only() {
        let mut prof = profile();
        prof.program_ids = vec![7];
        let r = build(&prof, &opts(20, 2));
        let ids: Vec<u32> = r.programs.iter().map(|p| p.id).collect();
        assert_eq!(ids, vec![7]);
        assert_eq!(r.totals.limit, 1);
        assert_eq!(
            (
                r.totals.selected_program_samples,
                r.totals.other_bpf_samples,
                r.totals.source_mapped_samples
            ),
            (1, 10, 1)
        );
        assert!(r.program(7).is_some() && r.program(98).is_none());
        prof.program_ids = vec![12345];
        assert!(build(&prof, &opts(20, 2)).programs.is_empty());
    }

    #[test]
    fn payers_cut_with_an_other_row_and_keep_the_full_list() {
        let mut prof = profile();
        prof.comms.insert(207, "worker".into());
        prof.programs[0].stacks[0].cgroup = 5;
        prof.cgroups.insert(5, "/system.slice/x.service".into());
        let r = build(&prof, &opts(0, 2));
        let t = &r.programs[0].tasks;
        assert_eq!(t.all.len(), 5);
        assert_eq!(t.shown_rows().len(), 2);
        let named: Vec<(u64, &str, u64)> = t
            .shown_rows()
            .iter()
            .map(|p| (p.id, p.name.as_str(), p.samples))
            .collect();
        assert_eq!(named, vec![(7, "?", 9), (207, "worker", 5)]);
        assert_eq!(
            t.other,
            Some(Other {
                samples: 5,
                cpu_percent: 0.5
            })
        );
        assert_eq!(
            (t.all[0].cpu_percent, t.all[0].sample_percent),
            (0.9, 47.37)
        );
        let c = &r.programs[0].cgroups;
        assert_eq!(c.all.len(), 2);
        assert_eq!(c.other, None, "two cgroups fit a limit of two");
        // Program 7 has no cgroup IDs; a limit of 0 shows every task.
        assert!(r.programs[1].cgroups.is_empty());
        let all = build(&prof, &opts(0, 0));
        assert_eq!(all.programs[0].tasks.shown_rows().len(), 5);
        assert_eq!(all.programs[0].tasks.other, None);
    }

    #[test]
    fn workloads_of_cgroups_and_tasks_named_from_the_kubelet_logs() {
        let uid = "0123abcd-0000-4000-8000-000000000001";
        let cid = "c1".repeat(32);
        let logs = std::env::temp_dir().join(format!("brr-report-kubelet-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&logs);
        std::fs::create_dir_all(logs.join(format!("pods/payments_checkout-x2k4p_{uid}"))).unwrap();
        std::fs::create_dir_all(logs.join("containers")).unwrap();
        std::fs::write(
            logs.join(format!(
                "containers/checkout-x2k4p_payments_server-{cid}.log"
            )),
            "",
        )
        .unwrap();
        let pod = format!(
            "/kubepods.slice/kubepods-pod{}.slice/cri-containerd-{cid}.scope",
            uid.replace('-', "_")
        );
        let mut prof = profile();
        // pid 7 ran in the pod 5 samples and in a service once; pid 207
        // carried no cgroup ID (cgroup v1): its /proc path names it.
        let pids: Vec<u32> = prof.programs[0].stacks.iter().map(|s| s.pid).collect();
        let first7 = pids.iter().position(|&p| p == 7).unwrap();
        for s in prof.programs[0].stacks.iter_mut().filter(|s| s.pid == 7) {
            s.cgroup = 5;
        }
        prof.programs[0].stacks[first7].cgroup = 6;
        prof.programs[0].stacks[first7].samples = 1;
        prof.cgroups.insert(5, pod.clone());
        prof.cgroups.insert(6, "/system.slice/x.service".into());
        prof.task_cgroups.insert(207, format!("/docker/{cid}"));
        let w = workloads(&prof, &logs);
        std::fs::remove_dir_all(&logs).unwrap();
        let c5 = &w.cgroups[&5];
        assert_eq!(c5.path, pod);
        let c = c5.container.as_ref().unwrap();
        assert_eq!(
            (c.id.as_str(), c.name.as_deref()),
            (cid.as_str(), Some("server"))
        );
        let p = c5.pod.as_ref().unwrap();
        assert_eq!(
            (p.uid.as_str(), p.namespace.as_deref(), p.name.as_deref()),
            (uid, Some("payments"), Some("checkout-x2k4p"))
        );
        assert_eq!(w.cgroups[&6].service.as_deref(), Some("x.service"));
        assert_eq!(w.tasks[&7], *c5, "the cgroup it ran in most");
        let docker = w.tasks[&207].container.as_ref().unwrap();
        assert_eq!(
            (docker.runtime.as_str(), docker.name.as_deref()),
            ("docker", None)
        );
        // Tasks whose cgroup is unknown have none.
        assert!(!w.tasks.contains_key(&116));
        assert_eq!(w.of_sample(7, 6), Some(&w.cgroups[&6]));
        assert_eq!(w.of_sample(7, 0), Some(c5));
        assert_eq!(
            w.of_sample(207, 99),
            w.tasks.get(&207),
            "a gone cgroup: the task's"
        );
        // The report's payers carry them.
        let r = build_with(&prof, &opts(0, 0), &w);
        let p98 = &r.programs[0];
        assert_eq!(p98.tasks.workload(7), Some(c5));
        assert_eq!(p98.cgroups.workload(5), Some(c5));
        assert_eq!(p98.tasks.workload(116), None);
    }

    fn lock_stack(samples: u64) -> Stack {
        let frame = |sym: &str| Frame {
            ip: 1,
            symbol: Some(sym.into()),
            kind: crate::profile::attribute::classify(Some(sym), None),
            ..Default::default()
        };
        Stack {
            samples,
            file: Some("/s/x.c".into()),
            line: Some(9),
            kernel: vec![frame("htab_map_update_elem"), frame("_raw_spin_lock")],
            ..Default::default()
        }
    }

    #[test]
    fn hints_from_samples_and_from_the_kernel() {
        let mut prof = profile();
        let p = &mut prof.programs[1];
        p.kernel_samples += 40;
        p.stacks.push(lock_stack(40));
        prof.kernel_hints.push(Hint {
            kind: "tail_calls",
            program_id: 7,
            ..Default::default()
        });
        prof.kernel_hints.push(Hint {
            kind: "tail_calls",
            program_id: 555,
            ..Default::default()
        });
        let r = build(&prof, &opts(0, 0));
        let kinds: Vec<&str> = r.program(7).map_or(Vec::new(), |p| {
            p.hints.iter().map(|h| h.kind).collect::<Vec<_>>()
        });
        assert_eq!(
            kinds,
            vec!["hash_map_contention", "map_access_dominates", "tail_calls"]
        );
        assert!(r.program(98).is_some_and(|p| p.hints.is_empty()));
        assert_eq!(r.hints().count(), 3, "only the listed programs' hints");
    }

    /// Interrupts: their own rows, not the line's work (no hint, no
    /// payer); a program unloaded early: CPU% over its loaded time.
    #[test]
    fn interrupts_apart_and_cpu_while_loaded() {
        use crate::model::profile::InterruptHotspot;
        let mut prof = profile();
        let p = &mut prof.programs[1];
        // 40 samples of a hash-map update's lock... taken in interrupts.
        let mut irq = lock_stack(40);
        irq.interrupt = Some("asm_sysvec_apic_timer_interrupt".into());
        p.stacks.push(irq);
        p.interrupt_samples = 40;
        p.interrupts = vec![
            InterruptHotspot {
                samples: 10,
                entry: "asm_common_interrupt".into(),
                ..Default::default()
            },
            InterruptHotspot {
                samples: 30,
                entry: "asm_sysvec_apic_timer_interrupt".into(),
                ..Default::default()
            },
        ];
        p.loaded_after = Some(0.25);
        p.unloaded_after = Some(0.5);
        let r = build(&prof, &opts(0, 1));
        let q = r.program(7).unwrap();
        assert!(q.hints.is_empty(), "{:?}", q.hints);
        assert_eq!((q.interrupt_samples, q.interrupt_cpu_percent), (40, 4.0));
        let rows: Vec<(&str, u64, f64)> = q
            .interrupts
            .rows
            .iter()
            .map(|r| (r.entry.as_str(), r.samples, r.sample_percent))
            .collect();
        assert_eq!(rows, vec![("asm_sysvec_apic_timer_interrupt", 30, 75.0)]);
        assert_eq!(q.interrupts.other.samples, 10);
        // Payers add up to the inclusive samples, interrupts aside.
        let tasks: u64 = q.tasks.all.iter().map(|t| t.samples).sum();
        assert_eq!(tasks, q.inclusive_samples);
        // 1 sample over the 0.25 s it was loaded at 1000 Hz: 0.4 % of a CPU.
        assert_eq!((q.cpu_percent, q.loaded_cpu_percent), (0.1, Some(0.4)));
        assert_eq!(q.loaded_inclusive_cpu_percent, Some(0.4));
        assert_eq!(r.program(98).unwrap().loaded_cpu_percent, None);
    }

    /// Several selected programs: each listed, the totals over all of them.
    #[test]
    fn several_selected_programs() {
        let mut prof = profile();
        prof.program_ids = vec![7, 98, 555];
        prof.pid = Some(31);
        let r = build(&prof, &opts(1, 2));
        let ids: Vec<u32> = r.programs.iter().map(|p| p.id).collect();
        assert_eq!(ids, vec![98, 7], "every sampled one, not cut by --limit");
        assert_eq!(
            (
                r.capture.program_id,
                &r.capture.program_ids[..],
                r.capture.pid
            ),
            (Some(7), &[7, 98, 555][..], Some(31))
        );
        assert_eq!(
            (
                r.totals.limit,
                r.totals.selected_program_samples,
                r.totals.other_bpf_samples,
                r.totals.source_mapped_samples
            ),
            (3, 11, 0, 10)
        );
    }

    #[test]
    fn hot_and_slow_from_an_activity_row() {
        let row = ActivityRow {
            prog: crate::model::Program {
                id: 5,
                name: "p".into(),
                ..Default::default()
            },
            run_count_delta: 1_000_000,
            run_time_ns_delta: 400_000_000,
            recursion_misses_delta: 0,
        };
        let h = hot_and_slow(&row, 1.0, 300);
        assert_eq!(h.map(|h| (h.kind, h.program_id)), Some(("hot_and_slow", 5)));
        assert!(hot_and_slow(&row, 1.0, 500).is_none());
    }
}
