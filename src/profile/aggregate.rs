//! From a [`Profile`]'s raw rows to what a report lists: ordering,
//! `--limit`, `--line-limit` with the samples of cut rows kept as "Other"
//! totals, and function groups (exact kernel IPs merged per function and
//! caller line).

use std::cmp::Reverse;
use std::collections::hash_map::Entry;
use std::collections::{HashMap, HashSet};

use crate::model::profile::{Hotspot, KernelGroup, KernelHotspot, Profile, ProgramProfile};

fn min_opt<T: Ord + Copy>(a: Option<T>, b: Option<T>) -> Option<T> {
    match (a, b) {
        (Some(x), Some(y)) => Some(x.min(y)),
        (x, None) => x,
        (None, y) => y,
    }
}

/// Group exact-IP rows (given in first-seen order) by function and caller
/// line; groups keep first-seen order until sorted.
pub(crate) fn function_groups(rows: &[KernelHotspot]) -> Vec<KernelGroup> {
    type GroupKey<'a> = (
        Option<&'a str>,
        Option<&'a str>,
        &'static str,
        Option<u64>,
        Option<&'a str>,
        Option<u32>,
        Option<&'a str>,
    );
    let mut index: HashMap<GroupKey<'_>, usize> = HashMap::new();
    let mut groups: Vec<(KernelHotspot, HashSet<u64>)> = Vec::new();
    for r in rows {
        let key: GroupKey<'_> = (
            r.symbol.as_deref(),
            r.module.as_deref(),
            r.kind,
            r.symbol.is_none().then_some(r.ip),
            r.bpf_file.as_deref(),
            r.bpf_line,
            r.bpf_source.as_deref(),
        );
        let i = *index.entry(key).or_insert_with(|| {
            let first = KernelHotspot {
                samples: 0,
                symbol_offset: None,
                bpf_jited_address: None,
                bpf_instruction_offset: None,
                bpf_column: None,
                ..r.clone()
            };
            groups.push((first, HashSet::new()));
            groups.len() - 1
        });
        let (g, ips) = &mut groups[i];
        g.samples += r.samples;
        g.ip = g.ip.min(r.ip);
        ips.insert(r.ip);
        g.bpf_jited_address = min_opt(g.bpf_jited_address, r.bpf_jited_address);
        g.bpf_instruction_offset = min_opt(g.bpf_instruction_offset, r.bpf_instruction_offset);
        g.bpf_column = min_opt(g.bpf_column, r.bpf_column);
        g.caller_mapped |= r.caller_mapped;
    }
    groups
        .into_iter()
        .map(|(row, ips)| KernelGroup {
            row,
            ip_count: ips.len(),
        })
        .collect()
}

fn text_key(s: &Option<String>) -> &str {
    s.as_deref().unwrap_or("")
}

fn hotspot_key(h: &Hotspot) -> (Reverse<u64>, &str, u32) {
    (Reverse(h.samples), text_key(&h.file), h.line.unwrap_or(0))
}

fn kernel_key(k: &KernelHotspot) -> (Reverse<u64>, &str, u64, &str, u32) {
    (
        Reverse(k.samples),
        text_key(&k.symbol),
        k.ip,
        text_key(&k.bpf_file),
        k.bpf_line.unwrap_or(0),
    )
}

fn group_key(g: &KernelGroup) -> (Reverse<u64>, &str, &str, u64, &str, u32) {
    (
        Reverse(g.samples),
        text_key(&g.symbol),
        text_key(&g.module),
        if g.symbol.is_none() { g.ip } else { 0 },
        text_key(&g.bpf_file),
        g.bpf_line.unwrap_or(0),
    )
}

/// Direct rows by `(-samples, file, line)`, stable.
pub(crate) fn sort_hotspots(rows: &mut [Hotspot]) {
    rows.sort_by(|a, b| hotspot_key(a).cmp(&hotspot_key(b)));
}

/// Exact-IP rows by `(-samples, symbol, ip, bpf_file, bpf_line)`, stable.
pub(crate) fn sort_kernel(rows: &mut [KernelHotspot]) {
    rows.sort_by(|a, b| kernel_key(a).cmp(&kernel_key(b)));
}

/// Groups by `(-samples, symbol, module, unresolved ip, bpf_file, bpf_line)`, stable.
pub(crate) fn sort_groups(rows: &mut [KernelGroup]) {
    rows.sort_by(|a, b| group_key(a).cmp(&group_key(b)));
}

fn keep<T>(mut rows: Vec<T>, limit: usize) -> Vec<T> {
    if limit > 0 {
        rows.truncate(limit);
    }
    rows
}

/// One program with its lists sorted and cut by `--line-limit`.
#[derive(Debug, Clone)]
pub(crate) struct ProgramView {
    pub hotspots: Vec<Hotspot>,
    pub kernel: Vec<KernelHotspot>,
    pub groups: Vec<KernelGroup>,
    pub direct_omitted: u64,
    pub kernel_omitted: u64,
    pub groups_omitted: u64,
}

/// One row per source line: the line records of each `(file, line)`
/// summed into the row of its hottest record (ties: the lowest JIT
/// address), which keeps that record's address, column and function.
/// Rows without a line stay as they are.
pub(crate) fn merge_lines(rows: Vec<Hotspot>) -> Vec<Hotspot> {
    // Each row with the samples of the record it shows.
    let mut out: Vec<(Hotspot, u64)> = Vec::with_capacity(rows.len());
    let mut at: HashMap<(Option<String>, u32), usize> = HashMap::new();
    for h in rows {
        let own = h.samples;
        let Some(line) = h.line else {
            out.push((h, own));
            continue;
        };
        match at.entry((h.file.clone(), line)) {
            Entry::Vacant(v) => {
                v.insert(out.len());
                out.push((h, own));
            }
            Entry::Occupied(o) => {
                let Some((m, m_own)) = out.get_mut(*o.get()) else {
                    continue;
                };
                let total = m.samples + own;
                if (Reverse(own), h.jited_address) < (Reverse(*m_own), m.jited_address) {
                    *m = h;
                    *m_own = own;
                }
                m.samples = total;
            }
        }
    }
    out.into_iter().map(|(h, _)| h).collect()
}

impl ProgramView {
    /// One program's lists sorted and cut, with one direct row per source
    /// line when `merge` says (see [`merge_lines`]), cut after merging.
    pub(crate) fn lines(p: &ProgramProfile, line_limit: usize, merge: bool) -> ProgramView {
        let mut hotspots = if merge {
            merge_lines(p.hotspots.clone())
        } else {
            p.hotspots.clone()
        };
        sort_hotspots(&mut hotspots);
        let mut kernel = p.kernel_hotspots.clone();
        sort_kernel(&mut kernel);
        let mut groups = function_groups(&p.kernel_hotspots);
        sort_groups(&mut groups);
        let hotspots = keep(hotspots, line_limit);
        let kernel = keep(kernel, line_limit);
        let groups = keep(groups, line_limit);
        let sum = |it: &mut dyn Iterator<Item = u64>| it.sum::<u64>();
        ProgramView {
            direct_omitted: p
                .samples
                .saturating_sub(sum(&mut hotspots.iter().map(|h| h.samples))),
            kernel_omitted: p
                .kernel_samples
                .saturating_sub(sum(&mut kernel.iter().map(|h| h.samples))),
            groups_omitted: p
                .kernel_samples
                .saturating_sub(sum(&mut groups.iter().map(|h| h.samples))),
            hotspots,
            kernel,
            groups,
        }
    }
}

/// The programs a report lists: the selected ones that were sampled in
/// program mode, else the first `limit`.
pub(crate) fn listed(profile: &Profile, limit: usize) -> Vec<&ProgramProfile> {
    if profile.program_ids.is_empty() {
        keep(profile.programs.iter().collect(), limit)
    } else {
        profile
            .programs
            .iter()
            .filter(|p| profile.selects(p.id))
            .collect()
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::model::profile::{Counters, Telemetry};

    pub(crate) fn hs(samples: u64, file: &str, line: u32, src: &str, jit: u64) -> Hotspot {
        Hotspot {
            samples,
            jited_address: Some(jit),
            instruction_offset: Some(8 * line as u64),
            file: Some(file.into()),
            line: Some(line),
            column: Some(3),
            source: Some(src.into()),
            function: Some("main_fn".into()),
        }
    }

    pub(crate) fn kh(
        samples: u64,
        ip: u64,
        sym: Option<&str>,
        off: u64,
        line: Option<u32>,
    ) -> KernelHotspot {
        KernelHotspot {
            samples,
            ip,
            symbol: sym.map(String::from),
            module: None,
            symbol_offset: sym.map(|_| off),
            kind: crate::profile::attribute::classify(sym, None),
            bpf_jited_address: Some(0xffffffffc0001000 + line.unwrap_or(0) as u64),
            bpf_instruction_offset: line.map(|l| l as u64 * 8),
            bpf_file: line.map(|_| "/src/dir/x.bpf.c".into()),
            bpf_line: line,
            bpf_column: line.map(|_| 9),
            bpf_source: line.map(|l| format!("\tline_{l}();")),
            bpf_function: None,
            caller_mapped: line.is_some(),
        }
    }

    fn prog98() -> ProgramProfile {
        ProgramProfile {
            id: 98,
            prog_type: "tracepoint".into(),
            name: "sys_exit".into(),
            tag: "fc3eb0ef05553d4b".into(),
            full_name: Some("sys_exit".into()),
            function_count: 1,
            pinned_paths: vec![],
            samples: 10,
            kernel_samples: 9,
            direct_source_mapped_samples: 9,
            direct_source_unmapped_samples: 1,
            under_bpf_caller_source_mapped_samples: 8,
            under_bpf_caller_source_unmapped_samples: 1,
            hotspots: vec![
                hs(2, "/src/dir/x.bpf.c", 77, "\tu64 id = f();", 0x10),
                hs(5, "/src/dir/x.bpf.c", 107, "\t\tif (c)", 0x20),
                Hotspot {
                    samples: 1,
                    ..Default::default()
                },
                hs(2, "/src/dir/maps.bpf.h", 16, "\tif (val)", 0x30),
            ],
            kernel_hotspots: vec![
                kh(
                    3,
                    0xffffffff81600010,
                    Some("lookup_nulls_elem_raw"),
                    0x10,
                    Some(15),
                ),
                kh(
                    1,
                    0xffffffff81600020,
                    Some("lookup_nulls_elem_raw"),
                    0x20,
                    Some(15),
                ),
                kh(
                    2,
                    0xffffffff81520040,
                    Some("bpf_get_current_pid_tgid"),
                    0,
                    Some(77),
                ),
                kh(
                    2,
                    0xffffffff81600030,
                    Some("lookup_nulls_elem_raw"),
                    0x30,
                    Some(15),
                ),
                kh(1, 0xffff_ffff_9000_0000, None, 0, None),
            ],
            ..Default::default()
        }
    }

    pub(crate) fn profile() -> Profile {
        let p98 = prog98();
        let p7 = ProgramProfile {
            id: 7,
            prog_type: "xdp".into(),
            name: "small".into(),
            tag: "aa".into(),
            function_count: 2,
            samples: 1,
            direct_source_mapped_samples: 1,
            hotspots: vec![hs(1, "/a/b.c", 3, "x;", 0x99)],
            pinned_paths: vec!["/sys/fs/bpf/p".into(), "/sys/fs/bpf/q".into()],
            ..Default::default()
        };
        let mut programs = vec![p98, p7];
        programs.iter_mut().for_each(|p| p.stacks = stacks_of(p));
        Profile {
            requested_event: "auto".into(),
            selected_event: "cpu-clock".into(),
            duration: 1.0,
            frequency: 1000,
            kernel_samples: true,
            call_graph: crate::model::profile::CallGraph::Fp,
            program_ids: Vec::new(),
            pid: None,
            counters: Counters {
                total_samples: 200,
                bpf_jit_samples: 11,
                non_bpf_samples: 189,
                callchain_samples: 200,
                kernel_attributed_samples: 9,
                kernel_unattributed_samples: 180,
                kernel_symbolized_samples: 8,
                interrupt_samples: 0,
            },
            telemetry: Telemetry {
                actual_duration: 1.0,
                cpus: vec![0, 1],
                pages_per_cpu: 128,
                bytes_per_cpu: 524288,
                bytes_total: 1056768,
                drain_interval_ms: 100,
                drain_count: 20,
                max_ring_occupancy: 2.6449,
                time_enabled_ns: 2000,
                time_running_ns: 2000,
                ..Default::default()
            },
            programs,
            comms: Default::default(),
            cgroups: Default::default(),
            task_cgroups: Default::default(),
            kernel_hints: Vec::new(),
            dispatch: Vec::new(),
        }
    }

    /// Stacks that agree with a program's rows: one per direct row (task
    /// 100 + line) and one single-frame stack per exact-IP kernel row.
    pub(crate) fn stacks_of(p: &ProgramProfile) -> Vec<crate::model::profile::Stack> {
        use crate::model::profile::{Frame, Stack};
        let direct = p.hotspots.iter().map(|h| Stack {
            samples: h.samples,
            pid: 100 + h.line.unwrap_or(0),
            jited_address: h.jited_address,
            file: h.file.clone(),
            line: h.line,
            column: h.column,
            source: h.source.clone(),
            ..Default::default()
        });
        let kernel = p.kernel_hotspots.iter().map(|k| Stack {
            samples: k.samples,
            pid: 7,
            jited_address: k.bpf_jited_address,
            file: k.bpf_file.clone(),
            line: k.bpf_line,
            column: k.bpf_column,
            source: k.bpf_source.clone(),
            kernel: vec![Frame {
                ip: k.ip,
                symbol: k.symbol.clone(),
                module: k.module.clone(),
                kind: k.kind,
            }],
            ..Default::default()
        });
        direct.chain(kernel).collect()
    }

    #[test]
    fn groups_merge_call_sites_and_count_ips() {
        let p = profile();
        let mut g = function_groups(&p.programs[0].kernel_hotspots);
        sort_groups(&mut g);
        let summary: Vec<(u64, Option<&str>, usize, u64)> = g
            .iter()
            .map(|g| (g.samples, g.symbol.as_deref(), g.ip_count, g.ip))
            .collect();
        assert_eq!(
            summary,
            vec![
                (6, Some("lookup_nulls_elem_raw"), 3, 0xffffffff81600010),
                (2, Some("bpf_get_current_pid_tgid"), 1, 0xffffffff81520040),
                (1, None, 1, 0xffff_ffff_9000_0000),
            ]
        );
        assert_eq!(g[0].bpf_column, Some(9));
        assert_eq!(g[0].kind, "bpf_map");
    }

    #[test]
    fn other_rows_keep_every_sample() {
        let p = profile();
        for limit in 0..6 {
            let pv = ProgramView::lines(&p.programs[0], limit, false);
            let direct: u64 =
                pv.hotspots.iter().map(|h| h.samples).sum::<u64>() + pv.direct_omitted;
            let exact: u64 = pv.kernel.iter().map(|h| h.samples).sum::<u64>() + pv.kernel_omitted;
            let grouped: u64 = pv.groups.iter().map(|h| h.samples).sum::<u64>() + pv.groups_omitted;
            assert_eq!((direct, exact, grouped), (10, 9, 9), "limit {limit}");
        }
        let pv = ProgramView::lines(&p.programs[0], 2, false);
        assert_eq!(
            (pv.direct_omitted, pv.kernel_omitted, pv.groups_omitted),
            (3, 4, 1)
        );
        // Ties keep first-seen order after (-count, file, line).
        let pv = ProgramView::lines(&p.programs[0], 0, false);
        let lines: Vec<Option<u32>> = pv.hotspots.iter().map(|h| h.line).collect();
        assert_eq!(lines, vec![Some(107), Some(16), Some(77), None]);
    }
}
