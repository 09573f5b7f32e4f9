//! The drilldown's view model, shared by `top --textmode` and the TUI:
//! the CPU header lines, the fold ranges for a viewport, what is shown
//! (markers, expanded parents, open folds) and the cell texts of each
//! shown line. The rows themselves, and their numbers, are the analysis's
//! ([`Drilldown`]); folding or collapsing never changes them.

use std::collections::HashSet;
use std::ops::Range;

use crate::inspect::drilldown::{largest_remainder, Drilldown, Marker, Mode};

/// Every marker with its legend text (for the TUI's legend overlay).
pub(crate) const LEGEND: [(Marker, &str); 8] = [
    (
        Marker::SourceMismatch,
        "BTF source snippet differs from resolved local source.",
    ),
    (Marker::Unmapped, "Instruction has no source-line metadata."),
    (
        Marker::Split,
        "Same source line appears in multiple non-contiguous instruction blocks.",
    ),
    (
        Marker::Backjump,
        "Mapped instruction order moves backward within the same file.",
    ),
    (
        Marker::FileSwitch,
        "Adjacent mapped blocks switch source files.",
    ),
    (Marker::Header, "Mapped source file has a header suffix."),
    (
        Marker::SameLineCols,
        "Same source line maps through multiple BTF columns.",
    ),
    (
        Marker::ManyInsns,
        "One source line maps to at least 8 translated instructions.",
    ),
];

/// What is shown: markers, expanded parents, folds.
#[derive(Debug, Clone, Default)]
pub(crate) struct ViewState {
    pub markers: bool,
    /// Parent rows whose children are shown.
    pub expanded: HashSet<usize>,
    pub folds: Vec<Range<usize>>,
    /// Indices into `folds` that are expanded.
    pub open_folds: HashSet<usize>,
}

impl ViewState {
    /// Textmode: markers on, every parent expanded unless collapsed, no folds.
    pub(crate) fn textmode(dd: &Drilldown, collapse: bool) -> ViewState {
        ViewState {
            markers: true,
            expanded: if collapse {
                HashSet::new()
            } else {
                dd.parents().collect()
            },
            ..Default::default()
        }
    }
}

/// One shown line of the drilldown table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Line {
    /// The row shown (None for a fold).
    pub row: Option<usize>,
    /// The fold this `...` line stands for.
    pub fold: Option<usize>,
    pub this: String,
    pub samples: String,
    pub code: String,
}

/// The CPU line and warnings (profiled views only).
pub(crate) fn header_lines(dd: &Drilldown) -> Vec<String> {
    let Some(p) = &dd.profile else {
        return Vec::new();
    };
    let mut out = Vec::new();
    match p.program.as_ref().filter(|q| q.inclusive_samples > 0) {
        None => out.push(
            "CPU: 0.0000% total; no samples attributed to this program (100% = one CPU)"
                .to_string(),
        ),
        Some(q) => {
            // A program that came or went during the capture is figured
            // over the time it was loaded, as the text report figures it.
            let percent = q.loaded_cpu_percent.unwrap_or(q.inclusive_cpu_percent);
            let units = (percent * 10_000.0).round_ties_even().max(0.0) as u64;
            let parts = largest_remainder(
                units,
                &[q.samples, q.kernel_samples, q.unaccounted_samples],
                q.inclusive_samples,
            );
            let f = |u: u64| fixed_point(u, 4);
            let total = if q.loaded_cpu_percent.is_some() {
                " total while loaded"
            } else {
                " total"
            };
            out.push(format!(
                "CPU: {}%{total} = {}% eBPF + {}% under eBPF + {}% unaccounted (100% = one CPU)",
                f(units),
                f(parts[0]),
                f(parts[1]),
                f(parts[2])
            ));
            if let Some(u) = q.unloaded_after {
                out.push(format!(
                    "Unloaded {u:.2} s into the capture: its code was gone before it could be read, so its sampled instructions have no text."
                ));
            }
        }
    }
    out.extend(p.warnings.iter().map(|w| format!("Warning: {w}")));
    if p.incomplete && p.warnings.is_empty() {
        out.push("Warning: profile capture is incomplete".to_string());
    }
    out
}

/// Fold ranges for a viewport of `viewport` rows (source and native
/// views, profiled, some samples, list longer than the viewport). Rows
/// within 2 of a hot row stay; runs of at least 2 other rows fold.
pub(crate) fn folds(dd: &Drilldown, viewport: usize) -> Vec<Range<usize>> {
    let n = dd.rows.len();
    if dd.mode == Mode::Mixed
        || !dd.profiled()
        || n <= viewport
        || !dd.rows.iter().any(|r| r.samples > 0)
    {
        return Vec::new();
    }
    let mut keep = vec![false; n];
    for (i, r) in dd.rows.iter().enumerate() {
        if r.samples > 0 {
            for k in keep
                .iter_mut()
                .take((i + 3).min(n))
                .skip(i.saturating_sub(2))
            {
                *k = true;
            }
        }
    }
    let mut out = Vec::new();
    let mut i = 0;
    while i < n {
        if keep[i] {
            i += 1;
            continue;
        }
        let start = i;
        while i < n && !keep[i] {
            i += 1;
        }
        if i - start >= 2 {
            out.push(start..i);
        }
    }
    out
}

/// The rows to show under `state`, with their cell texts.
pub(crate) fn lines(dd: &Drilldown, state: &ViewState) -> Vec<Line> {
    let mut out = Vec::new();
    let mut shown_fold: HashSet<usize> = HashSet::new();
    for (i, r) in dd.rows.iter().enumerate() {
        let hidden_child = r.parent.is_some_and(|p| !state.expanded.contains(&p));
        if hidden_child {
            continue;
        }
        if let Some(f) = state
            .folds
            .iter()
            .position(|f| f.contains(&i))
            .filter(|f| !state.open_folds.contains(f))
        {
            if shown_fold.insert(f) {
                out.push(Line {
                    row: None,
                    fold: Some(f),
                    this: String::new(),
                    samples: String::new(),
                    code: "...".to_string(),
                });
            }
            continue;
        }
        out.push(line(dd, i, state));
    }
    out
}

fn line(dd: &Drilldown, i: usize, state: &ViewState) -> Line {
    let r = &dd.rows[i];
    let collapsed = !r.children.is_empty() && !state.expanded.contains(&i);
    let (mut samples, mut bp) = if r.leaf {
        (r.samples, r.bp as u64)
    } else {
        (0, 0)
    };
    if collapsed {
        for &c in &r.children {
            samples += dd.rows[c].samples;
            bp += dd.rows[c].bp as u64;
        }
    }
    let profiled = dd
        .profile
        .as_ref()
        .and_then(|p| p.program.as_ref())
        .is_some();
    let (this, samples_text) = if samples > 0 && profiled {
        (fixed_point(bp, 2), samples.to_string())
    } else {
        (String::new(), String::new())
    };
    let mut code = String::new();
    if !r.children.is_empty() {
        code.push_str(if collapsed { "+ " } else { "- " });
    }
    code.push_str(&r.text);
    if state.markers {
        for m in &r.markers {
            code.push_str(" [");
            code.push_str(m.name());
            code.push(']');
        }
    }
    Line {
        row: Some(i),
        fold: None,
        this,
        samples: samples_text,
        code,
    }
}

/// `units` in 1/10^`decimals` as exact decimal text: the shares are
/// integers (largest-remainder rounded), so no float rounding may move them.
fn fixed_point(units: u64, decimals: u32) -> String {
    let scale = 10u64.pow(decimals);
    format!(
        "{}.{:0width$}",
        units / scale,
        units % scale,
        width = decimals as usize
    )
}
