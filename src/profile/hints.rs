//! Hints: anti-patterns named with their evidence, from a profile's stacks
//! (and, for `hot_and_slow`, from the activity figures `top` measures).
//!
//! Every threshold is a constant here. A hint needs at least
//! [`MIN_SAMPLES`] samples of its own evidence, so that a handful of
//! samples never produces advice.

use crate::inspect::native::roles::{is_mitigation_thunk, Role};
use crate::model::profile::{Frame, Hint, Profile, ProgramProfile, Stack};
use crate::model::report::NativeRow;

/// Evidence below this many samples is noise, whatever its share.
pub(crate) const MIN_SAMPLES: u64 = 20;
/// Hash-map contention: share (%) of a program's inclusive samples spent in
/// lock functions beneath a map update or delete. Bucket locks spin with
/// interrupts disabled, so only an NMI-driven PMU event samples the wait.
/// A software clock event's timer interrupt is held until interrupts are
/// restored, and since the hash map's bucket lock became a resilient spin
/// lock its irqrestore is inlined into `htab_map_update_elem`: the deferred
/// samples land on one address inside the update function, together with
/// the whole interrupts-off critical section. On cpu-clock that address
/// held 76-80 % of the program's samples with one thread and 80-93 % with
/// two updating one key, so it cannot tell contention from an uncontended
/// update and is no evidence here.
pub(crate) const CONTENTION_SHARE: f64 = 10.0;
/// Map access dominates: samples in map helpers and the kernel code under
/// them, per sample in the program's own instructions.
pub(crate) const MAP_ACCESS_RATIO: f64 = 1.0;
/// Output cost: share (%) of a program's inclusive samples in ring-buffer
/// or perf-buffer output helpers and the copies under them.
pub(crate) const OUTPUT_SHARE: f64 = 20.0;
/// Hot and slow: average run time (ns) above which a program is slow
/// (`top --slow-ns` overrides it)...
pub(crate) const SLOW_AVG_NS: f64 = 300.0;
/// ...when it also costs more than this share (%) of one CPU.
pub(crate) const SLOW_CPU_PERCENT: f64 = 5.0;
/// Tail calls: a program that tail-calls is worth a hint when it costs
/// more than this share (%) of one CPU.
pub(crate) const TAIL_CALL_CPU_PERCENT: f64 = 5.0;
/// JIT overhead (`--annotate`): share (%) of a program's inclusive samples
/// in the code the JIT wraps around its functions (prologue, epilogue) and
/// in mitigation thunks. That cost is paid per run whatever the program
/// does; past a third of its time, work per run, not its code, is what
/// to change. A loop-heavy program spends well under 1 % there, a
/// few-instruction one most of its time.
pub(crate) const JIT_OVERHEAD_SHARE: f64 = 33.0;

/// Lock functions that a contended map bucket spins in.
const LOCK_PREFIXES: &[&str] = &[
    "_raw_spin_lock",
    "queued_spin_lock_slowpath",
    "native_queued_spin_lock_slowpath",
    "__pv_queued_spin_lock_slowpath",
    "resilient_queued_spin_lock_slowpath",
    "resilient_tas_spin_lock",
    "pv_queued_spin_lock_slowpath",
    "htab_lock_bucket",
    "do_raw_spin_lock",
];

/// Output helpers and their kernel implementations.
const OUTPUT_PREFIXES: &[&str] = &[
    "bpf_ringbuf_output",
    "bpf_ringbuf_reserve",
    "bpf_ringbuf_submit",
    "bpf_ringbuf_discard",
    "____bpf_ringbuf_",
    "__bpf_ringbuf_reserve",
    "bpf_perf_event_output",
    "____bpf_perf_event_output",
    "__bpf_perf_event_output",
    "bpf_event_output",
    "perf_event_output",
    "bpf_skb_event_output",
    "bpf_xdp_event_output",
];

fn name(f: &Frame) -> &str {
    f.symbol.as_deref().unwrap_or("")
}

fn base(n: &str) -> &str {
    n.split('.').next().unwrap_or(n)
}

fn is_lock(f: &Frame) -> bool {
    let n = base(name(f));
    LOCK_PREFIXES.iter().any(|p| n.starts_with(p))
}

fn is_map_write(f: &Frame) -> bool {
    let n = base(name(f));
    n.ends_with("_map_update_elem")
        || n.ends_with("_map_delete_elem")
        || n == "bpf_map_update_elem"
        || n == "bpf_map_delete_elem"
}

fn is_output(f: &Frame) -> bool {
    let n = base(name(f));
    OUTPUT_PREFIXES.iter().any(|p| n.starts_with(p))
}

/// The BPF line holding most of the samples that `pick` selects, and
/// their total. Interrupts that arrived while a line ran are not its work.
fn evidence(p: &ProgramProfile, pick: impl Fn(&Stack) -> bool) -> (u64, Option<&Stack>) {
    let mut by_line: Vec<(&Stack, u64)> = Vec::new();
    let mut total = 0;
    for s in p.stacks.iter().filter(|s| s.interrupt.is_none() && pick(s)) {
        total += s.samples;
        match by_line
            .iter_mut()
            .find(|(l, _)| (&l.file, l.line) == (&s.file, s.line))
        {
            Some(e) => e.1 += s.samples,
            None => by_line.push((s, s.samples)),
        }
    }
    by_line.sort_by_key(|(l, n)| (std::cmp::Reverse(*n), l.line));
    (total, by_line.first().map(|(l, _)| *l))
}

fn share(part: u64, whole: u64) -> f64 {
    crate::model::profile::share(part, whole)
}

fn hint(p: &ProgramProfile, at: Option<&Stack>, kind: &'static str) -> Hint {
    Hint {
        kind,
        program_id: p.id,
        program: p.full_name.clone().unwrap_or_else(|| p.name.clone()),
        file: at.and_then(|s| s.file.clone()),
        line: at.and_then(|s| s.line),
        source: at.and_then(|s| s.source.as_deref().map(|t| t.trim().to_string())),
        ..Default::default()
    }
}

fn contention(p: &ProgramProfile) -> Option<Hint> {
    let (n, at) = evidence(p, |s| {
        s.kernel.iter().any(is_map_write) && s.kernel.iter().any(is_lock)
    });
    let whole = p.inclusive_samples();
    let pct = share(n, whole);
    (n >= MIN_SAMPLES && pct > CONTENTION_SHARE).then(|| Hint {
        figure: pct,
        threshold: CONTENTION_SHARE,
        unit: "%",
        evidence: format!(
            "{pct:.2}% of the program's samples ({n} of {whole}) are in spin-lock or bucket-lock functions beneath a map update/delete"
        ),
        fix: "several CPUs update the same hash-map buckets: use a per-CPU hash or array map (BPF_MAP_TYPE_PERCPU_HASH / PERCPU_ARRAY) and sum per CPU when reading, or spread the keys",
        ..hint(p, at, "hash_map_contention")
    })
}

fn map_access(p: &ProgramProfile) -> Option<Hint> {
    let (n, at) = evidence(p, |s| s.kernel.iter().any(|f| f.kind == "bpf_map"));
    let own = p.samples;
    let ratio = if own == 0 {
        f64::INFINITY
    } else {
        n as f64 / own as f64
    };
    (n >= MIN_SAMPLES && ratio > MAP_ACCESS_RATIO).then(|| Hint {
        figure: crate::model::profile::round(ratio.min(1e9), 2),
        threshold: MAP_ACCESS_RATIO,
        unit: "x",
        evidence: format!(
            "map helpers and the kernel code under them took {n} samples, {ratio:.2}x the {own} in the program's own instructions"
        ),
        fix: "the access pattern, not the arithmetic, is the cost: look up once and keep the pointer, batch updates, prefer array or per-CPU maps over hash maps for dense keys, and move rarely-needed state out of the hot path",
        ..hint(p, at, "map_access_dominates")
    })
}

fn output_cost(p: &ProgramProfile) -> Option<Hint> {
    let (n, at) = evidence(p, |s| s.kernel.iter().any(is_output));
    let whole = p.inclusive_samples();
    let pct = share(n, whole);
    (n >= MIN_SAMPLES && pct > OUTPUT_SHARE).then(|| Hint {
        figure: pct,
        threshold: OUTPUT_SHARE,
        unit: "%",
        evidence: format!(
            "{pct:.2}% of the program's samples ({n} of {whole}) are in ring-buffer/perf-buffer output and the copies under it"
        ),
        fix: "filter and aggregate in the kernel (count in a map, emit only what user space needs), send fewer and smaller records, and batch (bpf_ringbuf_reserve/submit with BPF_RB_NO_WAKEUP, wake the reader every N records)",
        ..hint(p, at, "output_cost")
    })
}

/// JIT overhead, from the program's sampled native instructions
/// (`--annotate`) and the kernel samples inside mitigation thunks it
/// called (`--kernel-samples`).
pub(crate) fn jit_overhead<'a>(
    p: &ProgramProfile,
    rows: impl Iterator<Item = &'a NativeRow> + Clone,
) -> Option<Hint> {
    let of = |role: Role| -> u64 {
        rows.clone()
            .filter(|r| r.role == role.name())
            .map(|r| r.samples)
            .sum()
    };
    let frame = of(Role::Prologue) + of(Role::Epilogue);
    let calls = of(Role::Thunk);
    let inside: u64 = p
        .stacks
        .iter()
        // An interrupt's frames are not the program's calls.
        .filter(|s| {
            s.interrupt.is_none()
                && s.kernel
                    .last()
                    .and_then(|f| f.symbol.as_deref())
                    .is_some_and(is_mitigation_thunk)
        })
        .map(|s| s.samples)
        .sum();
    let n = frame + calls + inside;
    let whole = p.inclusive_samples();
    let pct = share(n, whole);
    if n < MIN_SAMPLES || pct <= JIT_OVERHEAD_SHARE {
        return None;
    }
    // The line whose code holds most of that cost.
    let mut by_line: Vec<(&NativeRow, u64)> = Vec::new();
    for r in rows.filter(|r| r.role != Role::Body.name()) {
        match by_line
            .iter_mut()
            .find(|(l, _)| (&l.file, l.line) == (&r.file, r.line))
        {
            Some(e) => e.1 += r.samples,
            None => by_line.push((r, r.samples)),
        }
    }
    by_line.sort_by_key(|(l, n)| (std::cmp::Reverse(*n), l.line));
    let at = by_line.first().map(|(r, _)| *r);
    Some(Hint {
        kind: "jit_overhead",
        program_id: p.id,
        program: p.full_name.clone().unwrap_or_else(|| p.name.clone()),
        file: at.and_then(|r| r.file.as_deref().map(String::from)),
        line: at.and_then(|r| r.line),
        source: at.and_then(|r| r.source.as_deref().map(|t| t.trim().to_string())),
        figure: pct,
        threshold: JIT_OVERHEAD_SHARE,
        unit: "%",
        evidence: format!(
            "{pct:.2}% of the program's samples ({n} of {whole}) are in the JIT's function prologues and epilogues ({frame}) and in mitigation thunks ({calls} on the calls and jumps into them, {inside} inside them)"
        ),
        fix: "each run pays for entering and leaving the program (frame, saved registers, the return thunk the kernel's mitigations put in place of `ret`) before any work: do more per run and run less often (filter in a narrower hook, batch events, merge small programs), and keep BPF-to-BPF calls out of hot paths, since every subprogram pays the same",
    })
}

/// The hints of one program: from its stacks, then those read from the
/// kernel at the end of the capture.
pub(crate) fn for_program(profile: &Profile, p: &ProgramProfile) -> Vec<Hint> {
    [contention(p), map_access(p), output_cost(p)]
        .into_iter()
        .flatten()
        .chain(
            profile
                .kernel_hints
                .iter()
                .filter(|h| h.program_id == p.id)
                .cloned(),
        )
        .collect()
}

/// An activity window of one program: `runs` runs taking `run_ns` in
/// `seconds`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct WindowFigures {
    pub runs: u64,
    pub run_ns: u64,
    pub seconds: f64,
}

/// Hot and slow, from an activity window, with `slow_ns` as the average
/// run time threshold.
pub(crate) fn hot_and_slow(id: u32, program: &str, w: WindowFigures, slow_ns: f64) -> Option<Hint> {
    let WindowFigures {
        runs,
        run_ns,
        seconds,
    } = w;
    if runs == 0 || seconds <= 0.0 {
        return None;
    }
    let avg = run_ns as f64 / runs as f64;
    let cpu = run_ns as f64 / (seconds * 1e9) * 100.0;
    (avg > slow_ns && cpu > SLOW_CPU_PERCENT).then(|| Hint {
        kind: "hot_and_slow",
        program_id: id,
        program: program.to_string(),
        figure: crate::model::profile::round(avg, 1),
        threshold: slow_ns,
        unit: "ns",
        evidence: format!(
            "{avg:.0} ns per run on average over {runs} runs, costing {cpu:.2}% of one CPU (more than {SLOW_CPU_PERCENT}%)"
        ),
        fix: "an optimisation candidate: profile it (brr profile --program-id, --kernel-samples) and shorten the hot lines, or filter earlier so that fewer events reach it",
        ..Default::default()
    })
}

/// Tail calls: `chain` is the longest chain of programs reached through
/// prog_array maps (program names, the caller first; its length is the
/// depth).
pub(crate) fn tail_calls(p: &ProgramProfile, cpu_percent: f64, chain: &[String]) -> Option<Hint> {
    (cpu_percent > TAIL_CALL_CPU_PERCENT && !chain.is_empty()).then(|| Hint {
        figure: chain.len() as f64,
        threshold: TAIL_CALL_CPU_PERCENT,
        unit: "depth",
        evidence: format!(
            "costs {cpu_percent:.2}% of one CPU (more than {TAIL_CALL_CPU_PERCENT}%) and tail-calls through prog_array maps, depth {}: {}",
            chain.len(),
            chain.join(" -> ")
        ),
        fix: "each tail call re-enters through the prog_array (a bounds check, a map load, an indirect jump, no return): where the chain is fixed, use BPF-to-BPF function calls instead",
        ..hint(p, None, "tail_calls")
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::profile::Frame;
    use crate::model::report::NativeRow;

    fn frame(sym: &str) -> Frame {
        Frame {
            ip: 1,
            symbol: Some(sym.into()),
            module: None,
            kind: crate::profile::attribute::classify(Some(sym), None),
        }
    }

    fn stack(samples: u64, line: u32, frames: &[&str]) -> Stack {
        Stack {
            samples,
            file: Some("/s/x.c".into()),
            line: Some(line),
            source: Some(format!("  line_{line}();")),
            kernel: frames.iter().map(|f| frame(f)).collect(),
            ..Default::default()
        }
    }

    fn hints_of(p: &ProgramProfile) -> Vec<Hint> {
        for_program(&Profile::default(), p)
    }

    fn prog(direct: u64, stacks: Vec<Stack>) -> ProgramProfile {
        let kernel: u64 = stacks.iter().map(|s| s.samples).sum();
        let mut all = stacks;
        all.push(stack(direct, 3, &[]));
        ProgramProfile {
            id: 5,
            name: "p".into(),
            samples: direct,
            kernel_samples: kernel,
            stacks: all,
            ..Default::default()
        }
    }

    const UPDATE_LOCK: &[&str] = &[
        "htab_map_update_elem",
        "_raw_spin_lock_irqsave",
        "queued_spin_lock_slowpath",
    ];

    #[test]
    fn contention_needs_locks_under_map_writes_above_the_threshold() {
        let p = prog(
            60,
            vec![
                stack(30, 9, UPDATE_LOCK),
                stack(10, 9, &["htab_map_update_elem"]),
            ],
        );
        let h = hints_of(&p);
        let c = h.iter().find(|h| h.kind == "hash_map_contention").unwrap();
        assert_eq!((c.figure, c.threshold), (30.0, CONTENTION_SHARE));
        assert_eq!(c.line, Some(9));
        assert_eq!(c.source.as_deref(), Some("line_9();"));
        assert!(c.evidence.contains("30 of 100"), "{}", c.evidence);
        // Locks not under a map write (e.g. a ring buffer) are not contention.
        let p = prog(
            60,
            vec![stack(
                40,
                9,
                &["bpf_ringbuf_output", "_raw_spin_lock_irqsave"],
            )],
        );
        assert!(hints_of(&p).iter().all(|h| h.kind != "hash_map_contention"));
        // Below the threshold, or too few samples: nothing.
        let p = prog(300, vec![stack(30, 9, UPDATE_LOCK)]);
        assert!(hints_of(&p).iter().all(|h| h.kind != "hash_map_contention"));
        let p = prog(5, vec![stack(19, 9, UPDATE_LOCK)]);
        assert!(hints_of(&p).is_empty(), "19 samples are not evidence");
    }

    #[test]
    fn map_access_dominates_when_map_code_outweighs_own_instructions() {
        let p = prog(
            30,
            vec![stack(
                45,
                4,
                &["htab_map_lookup_elem", "lookup_nulls_elem_raw"],
            )],
        );
        let h = hints_of(&p);
        let m = h.iter().find(|h| h.kind == "map_access_dominates").unwrap();
        assert_eq!((m.figure, m.unit, m.line), (1.5, "x", Some(4)));
        let p = prog(60, vec![stack(45, 4, &["htab_map_lookup_elem"])]);
        assert!(hints_of(&p).is_empty());
        // Helpers that are not map code do not count.
        let p = prog(10, vec![stack(45, 4, &["bpf_ktime_get_ns"])]);
        assert!(hints_of(&p).is_empty());
    }

    #[test]
    fn output_cost_counts_output_helpers_and_copies_under_them() {
        let p = prog(
            50,
            vec![
                stack(20, 7, &["bpf_ringbuf_output", "memcpy"]),
                stack(10, 8, &["bpf_perf_event_output", "perf_output_copy"]),
            ],
        );
        let h = hints_of(&p);
        let o = h.iter().find(|h| h.kind == "output_cost").unwrap();
        assert_eq!((o.figure, o.line), (37.5, Some(7)));
        let p = prog(200, vec![stack(30, 7, &["bpf_ringbuf_output"])]);
        assert!(hints_of(&p).is_empty());
    }

    #[test]
    fn hot_and_slow_needs_both_a_slow_run_and_a_real_cost() {
        let w = |runs, run_ns, seconds| WindowFigures {
            runs,
            run_ns,
            seconds,
        };
        let h = hot_and_slow(5, "p", w(1_000_000, 400_000_000, 1.0), SLOW_AVG_NS).unwrap();
        assert_eq!((h.figure, h.threshold, h.unit), (400.0, SLOW_AVG_NS, "ns"));
        assert!(h.evidence.contains("40.00% of one CPU"), "{}", h.evidence);
        let fast = w(1_000_000, 200_000_000, 1.0);
        assert!(hot_and_slow(5, "p", fast, SLOW_AVG_NS).is_none(), "fast");
        let h = hot_and_slow(5, "p", fast, 150.0).unwrap();
        assert_eq!(h.threshold, 150.0, "configurable");
        let cheap = w(1_000, 1_000_000, 1.0);
        assert!(hot_and_slow(5, "p", cheap, SLOW_AVG_NS).is_none(), "cheap");
        assert!(hot_and_slow(5, "p", w(0, 0, 1.0), SLOW_AVG_NS).is_none());
        assert!(hot_and_slow(5, "p", w(10, 10_000, 0.0), SLOW_AVG_NS).is_none());
    }

    #[test]
    fn tail_call_hint_names_the_chain() {
        let p = prog(10, vec![]);
        let chain = vec!["b".to_string(), "c".to_string()];
        let h = tail_calls(&p, 12.0, &chain).unwrap();
        assert_eq!(h.figure, 2.0);
        assert!(h.evidence.contains("depth 2: b -> c"));
        assert!(tail_calls(&p, 1.0, &chain).is_none(), "not hot");
        assert!(tail_calls(&p, 50.0, &[]).is_none(), "no tail call");
    }

    fn native(samples: u64, role: Role, line: u32) -> NativeRow {
        NativeRow {
            samples,
            role: role.name(),
            file: Some("/s/x.c".into()),
            line: Some(line),
            source: Some(format!("  line_{line}();").into()),
            ..Default::default()
        }
    }

    #[test]
    fn jit_overhead_counts_frame_thunk_calls_and_time_inside_thunks() {
        // 100 direct samples: 20 entering, 10 leaving, 5 on the jump into
        // the return thunk; 10 kernel samples inside a retpoline.
        let rows = [
            native(65, Role::Body, 12),
            native(20, Role::Prologue, 10),
            native(10, Role::Epilogue, 14),
            native(5, Role::Thunk, 14),
        ];
        let mut p = prog(100, vec![stack(10, 12, &["__x86_indirect_thunk_rax"])]);
        p.stacks
            .push(stack(4, 12, &["__x86_indirect_thunk_r11", "memcpy"]));
        p.kernel_samples += 4;
        // An interrupt that arrived while the line ran, whose own frames
        // end in a thunk: neither the program's call nor its samples.
        let mut irq = stack(
            7,
            12,
            &["asm_sysvec_apic_timer_interrupt", "__x86_return_thunk"],
        );
        irq.interrupt = Some("asm_sysvec_apic_timer_interrupt".into());
        p.stacks.push(irq);
        p.interrupt_samples += 7;
        let h = jit_overhead(&p, rows.iter()).unwrap();
        // (20 + 10 + 5 + 10) of 114 inclusive; the thunk frame under memcpy
        // is not where those samples landed.
        assert_eq!(
            (h.figure, h.threshold, h.unit),
            (39.47, JIT_OVERHEAD_SHARE, "%")
        );
        assert!(
            h.evidence.contains("(45 of 114)")
                && h.evidence.contains("prologues and epilogues (30)")
                && h.evidence
                    .contains("5 on the calls and jumps into them, 10 inside them"),
            "{}",
            h.evidence
        );
        assert_eq!((h.kind, h.line), ("jit_overhead", Some(10)));
        assert_eq!(h.source.as_deref(), Some("line_10();"));
        // At or below the threshold: nothing.
        let rows = [native(67, Role::Body, 12), native(33, Role::Prologue, 10)];
        assert!(
            jit_overhead(&prog(100, vec![]), rows.iter()).is_none(),
            "33% is not more than 33%"
        );
        let rows = [native(66, Role::Body, 12), native(34, Role::Prologue, 10)];
        assert!(jit_overhead(&prog(100, vec![]), rows.iter()).is_some());
        // Too few samples, whatever the share.
        let rows = [native(1, Role::Body, 12), native(19, Role::Epilogue, 10)];
        assert!(
            jit_overhead(&prog(20, vec![]), rows.iter()).is_none(),
            "19 samples"
        );
        assert!(jit_overhead(&prog(20, vec![]), [].iter()).is_none());
    }

    #[test]
    fn the_fixture_profile_has_no_hints() {
        let p = crate::profile::aggregate::tests::profile();
        assert!(p.programs.iter().all(|q| for_program(&p, q).is_empty()));
    }
}
