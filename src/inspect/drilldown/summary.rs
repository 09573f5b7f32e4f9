//! The summary ("Other …") rows that account for every sample no detail
//! row shows, the `--source-limit` cut, and the `%THIS` basis points whose
//! leaves add up to exactly 10 000.

use super::rows::{child_row, child_text};
use super::{Disasm, Drilldown, NativeRow, Row, RowKind};
use crate::inspect::profile::{DrillProfile, InterruptRow, KernelRow};

/// Split `units` over `counts` in proportion to `counts / denom` by the
/// largest-remainder rule; ties go to the earlier position. Only positive
/// counts take part in the remainder round.
pub(crate) fn largest_remainder(units: u64, counts: &[u64], denom: u64) -> Vec<u64> {
    if denom == 0 {
        return vec![0; counts.len()];
    }
    let u = units as u128;
    let d = denom as u128;
    let mut out: Vec<u64> = counts.iter().map(|&c| (c as u128 * u / d) as u64).collect();
    let given: u64 = out.iter().sum();
    let mut order: Vec<usize> = (0..counts.len()).filter(|&i| counts[i] > 0).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(counts[i] as u128 * u % d));
    for &i in order.iter().take(units.saturating_sub(given) as usize) {
        out[i] += 1;
    }
    out
}

/// The samples of one kind (direct or under-eBPF) that no detail row shows,
/// and the reasons they may have been left out.
struct Unshown {
    total: u64,
    shown: u64,
    unmapped: u64,
    omitted: u64,
    /// Samples without an instruction offset that the profile's (limited)
    /// list still holds; the rest of `unmapped` is among the omitted.
    null_retained: u64,
    cut: u64,
}

impl Unshown {
    /// The unshown samples split into (no source metadata, over the line
    /// limit, over the source limit, anything else), each reason taking at
    /// most what is left after the ones before it.
    fn buckets(&self) -> [u64; 4] {
        let mut rem = self.total.saturating_sub(self.shown);
        let u = self.unmapped.saturating_sub(self.null_retained);
        let own = [self.unmapped, self.omitted - self.omitted.min(u), self.cut];
        let mut out = [0u64; 4];
        for (o, c) in out.iter_mut().zip(own) {
            *o = rem.min(c);
            rem -= *o;
        }
        out[3] = rem;
        out
    }
}

/// An interrupt child row: the entry point, then the line it interrupted
/// (`-` without a line record), as the text report's interrupt table
/// names them.
fn interrupt_text(h: &InterruptRow) -> String {
    let file = h
        .bpf_file
        .as_deref()
        .map(|f| f.rsplit('/').next().unwrap_or(f));
    let source = h.bpf_source.as_deref().map(str::trim).unwrap_or_default();
    match (file, h.bpf_line) {
        (Some(f), Some(l)) if source.is_empty() => format!("{} at {f}:{l}", h.entry),
        (Some(f), Some(l)) => format!("{} at {f}:{l}: {source}", h.entry),
        _ => format!("{} at -", h.entry),
    }
}

/// The row of interrupts that arrived while the program ran.
pub(crate) const INTERRUPTS_ROW: &str = "Interrupts while the program ran (not its calls)";

/// Where [`summary_labels`] puts the direct and the under-eBPF samples
/// without source metadata: the summary rows that list where they went.
const DIRECT_UNMAPPED: usize = 0;
const UNDER_UNMAPPED: usize = 4;
/// The interrupts' row, which lists their entry points and lines.
const INTERRUPTS: usize = 9;

/// The summary rows' counts and texts, in display order.
fn summary_labels(
    d: [u64; 4],
    u: [u64; 4],
    unaccounted: u64,
    interrupts: u64,
    line_limit: usize,
    source_limit: usize,
) -> [(u64, String); 10] {
    [
        (
            d[0],
            "eBPF samples without BTF/JIT source metadata".to_string(),
        ),
        (
            d[1],
            format!("Other eBPF samples not shown (--line-limit={line_limit})"),
        ),
        (
            d[2],
            format!("Other eBPF source rows not shown (--source-limit={source_limit})"),
        ),
        (
            d[3],
            "Other eBPF samples not placed on a source/JIT detail row".to_string(),
        ),
        (
            u[0],
            "under-eBPF samples without BPF caller source metadata".to_string(),
        ),
        (
            u[1],
            format!("Other under-eBPF samples not shown (--line-limit={line_limit})"),
        ),
        (
            u[2],
            format!("Other under-eBPF source rows not shown (--source-limit={source_limit})"),
        ),
        (
            u[3],
            "Other under-eBPF samples not placed on a source/JIT detail row".to_string(),
        ),
        (
            unaccounted,
            "Unaccounted samples (inclusive attribution invariant mismatch)".to_string(),
        ),
        (interrupts, INTERRUPTS_ROW.to_string()),
    ]
}

impl Drilldown {
    /// Keep the `limit` hottest detail rows (own samples, ties in display
    /// order), in display order, each helper/kernel or instruction row
    /// with the source line it belongs to (which counts toward `limit`);
    /// returns the (direct, under) samples of the rows dropped.
    pub(super) fn apply_source_limit(&mut self, limit: usize) -> (u64, u64) {
        let n = self.rows.len();
        if limit == 0 || n <= limit {
            return (0, 0);
        }
        let mut owner = vec![None; n];
        let mut source = None;
        for (i, r) in self.rows.iter().enumerate() {
            match r.kind {
                RowKind::Source { .. } => source = Some(i),
                RowKind::Child | RowKind::Instruction { .. } | RowKind::Native { .. } => {
                    owner[i] = source
                }
                _ => {}
            }
        }
        let mut rank: Vec<usize> = (0..n).collect();
        rank.sort_by(|&a, &b| {
            self.rows[b]
                .samples
                .cmp(&self.rows[a].samples)
                .then(a.cmp(&b))
        });
        let mut keep = vec![false; n];
        let mut kept = 0;
        for i in rank {
            if kept == limit {
                break;
            }
            let needs = owner[i].filter(|&o| !keep[o]);
            let cost = 1 + usize::from(needs.is_some());
            if kept + cost > limit {
                continue;
            }
            keep[i] = true;
            if let Some(o) = needs {
                keep[o] = true;
            }
            kept += cost;
        }
        let mut direct = 0;
        let mut under = 0;
        let rows = std::mem::take(&mut self.rows);
        for (r, k) in rows.into_iter().zip(keep) {
            if k {
                self.rows.push(r);
                continue;
            }
            match r.kind {
                RowKind::Child => under += r.samples,
                _ if r.leaf => direct += r.samples,
                _ => {}
            }
        }
        (direct, under)
    }

    /// Append the non-zero "Other …" rows that account for the samples no
    /// detail row shows, so that every sample lands on exactly one row.
    pub(super) fn add_summary_rows(
        &mut self,
        p: &DrillProfile,
        line_limit: usize,
        source_limit: usize,
        cut: (u64, u64),
        native: &[&NativeRow],
    ) {
        let shown_direct: u64 = self
            .rows
            .iter()
            .filter(|r| r.leaf && r.kind != RowKind::Child)
            .map(|r| r.samples)
            .sum();
        let shown_under: u64 = self
            .rows
            .iter()
            .filter(|r| r.kind == RowKind::Child)
            .map(|r| r.samples)
            .sum();
        let direct_null: u64 = p
            .hotspots
            .iter()
            .filter(|h| h.instruction_offset.is_none())
            .map(|h| h.samples)
            .sum();
        let (list, omitted) = if self.exact_ips {
            (&p.kernel_ips, p.under_bpf_hotspot_samples_omitted_by_limit)
        } else {
            (
                &p.kernel_functions,
                p.under_bpf_function_samples_omitted_by_limit,
            )
        };
        let uncalled: Vec<&KernelRow> = list
            .iter()
            .filter(|k| k.bpf_instruction_offset.is_none())
            .collect();
        let under_null: u64 = uncalled.iter().map(|k| k.samples).sum();
        // The native view places every sampled instruction, with or
        // without a line record: what it leaves out has no instruction.
        let by_insn = matches!(self.disasm, Disasm::Native(_));
        let direct = Unshown {
            total: p.samples,
            shown: shown_direct,
            unmapped: if by_insn {
                0
            } else {
                p.direct_source_unmapped_samples
            },
            omitted: if by_insn {
                0
            } else {
                p.direct_hotspot_samples_omitted_by_limit
            },
            null_retained: direct_null,
            cut: cut.0,
        };
        let under = Unshown {
            total: p.kernel_samples,
            shown: shown_under,
            unmapped: p.under_bpf_caller_source_unmapped_samples,
            omitted,
            null_retained: under_null,
            cut: cut.1,
        };
        let labels = summary_labels(
            direct.buckets(),
            under.buckets(),
            p.unaccounted_samples,
            p.interrupt_samples,
            line_limit,
            source_limit,
        );
        for (i, (n, text)) in labels.into_iter().enumerate() {
            let children = match i {
                DIRECT_UNMAPPED => native
                    .iter()
                    .map(|r| child_row(r.text.clone(), r.samples))
                    .collect(),
                UNDER_UNMAPPED => uncalled
                    .iter()
                    .map(|k| child_row(child_text(k, self.exact_ips), k.samples))
                    .collect(),
                INTERRUPTS => p
                    .interrupts
                    .iter()
                    .map(|h| child_row(interrupt_text(h), h.samples))
                    .collect(),
                _ => Vec::new(),
            };
            if n > 0 {
                self.push_summary(n, text, children);
            }
        }
    }

    /// A summary row of `n` samples, with the child rows that say where
    /// they went (the row keeps what they do not list). Children that add
    /// up to more than the row are left out, so no sample counts twice.
    fn push_summary(&mut self, n: u64, text: String, mut children: Vec<Row>) {
        let mut listed: u64 = children.iter().map(|c| c.samples).sum();
        if listed > n {
            children.clear();
            listed = 0;
        }
        let mut r = Row::new(RowKind::Summary, text);
        r.samples = n - listed;
        r.leaf = true;
        self.rows.push(r);
        self.rows.append(&mut children);
    }

    /// Child rows belong to the source (or summary) row right before
    /// their group.
    pub(super) fn link_children(&mut self) {
        let mut parent = None;
        for i in 0..self.rows.len() {
            self.rows[i].children.clear();
            match self.rows[i].kind {
                RowKind::Source { .. } | RowKind::Summary => parent = Some(i),
                RowKind::Child => {
                    self.rows[i].parent = parent;
                    if let Some(p) = parent {
                        self.rows[p].children.push(i);
                    }
                }
                _ => {}
            }
        }
    }

    /// 10 000 basis points over the leaves: exact largest remainder when the
    /// leaves add up to the inclusive count, else independent rounding.
    pub(super) fn assign_basis_points(&mut self, inclusive: u64) {
        if inclusive == 0 {
            return;
        }
        let leaves: Vec<usize> = (0..self.rows.len())
            .filter(|&i| self.rows[i].leaf)
            .collect();
        let counts: Vec<u64> = leaves.iter().map(|&i| self.rows[i].samples).collect();
        let bps: Vec<u64> = if counts.iter().sum::<u64>() == inclusive {
            largest_remainder(10_000, &counts, inclusive)
        } else {
            counts
                .iter()
                .map(|&c| (c as f64 / inclusive as f64 * 10_000.0).round_ties_even() as u64)
                .collect()
        };
        for (&i, bp) in leaves.iter().zip(bps) {
            self.rows[i].bp = bp.min(u32::MAX as u64) as u32;
        }
    }
}
