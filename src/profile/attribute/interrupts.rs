//! Samples taken in an interrupt that arrived while BPF code ran, told
//! apart from kernel code the program called: the interrupt or exception
//! entry point in the kernel frames between the sample and the BPF frame.

use super::{IntMap, KernelKey, ProgSlot, StackKey, NO_LINE};
use crate::kernel::kallsyms::Kallsyms;
use crate::model::profile::InterruptHotspot;
use crate::profile::image::{jit, ProgMeta};

/// Interrupt and exception entry points: the kernel frame an interrupt
/// enters through, above which the interrupted code's frames continue.
/// x86: the IDT entry stubs (`asm_sysvec_*` for system vectors such as the
/// local timer and IPIs, `asm_common_interrupt` and the per-vector stubs
/// for device interrupts, `asm_exc_*` for exceptions, the FRED entry);
/// arm64: the EL1 vector handlers and the switch to the IRQ stack.
const INTERRUPT_ENTRY_PREFIXES: &[&str] = &[
    "asm_sysvec_",
    "asm_exc_",
    "xen_asm_exc_",
    "el1h_64_",
    "el1t_64_",
];
const INTERRUPT_ENTRIES: &[&str] = &[
    "asm_common_interrupt",
    "asm_spurious_interrupt",
    "asm_fred_entrypoint_kernel",
    "irq_entries_start",
    "spurious_entries_start",
    "el1_interrupt",
    "call_on_irq_stack",
];

/// Whether a kernel symbol is an interrupt or exception entry point.
pub(crate) fn is_interrupt_entry(name: &str) -> bool {
    INTERRUPT_ENTRIES.contains(&name)
        || INTERRUPT_ENTRY_PREFIXES.iter().any(|p| name.starts_with(p))
}

/// Given the symbols of the kernel frames between a sample and the BPF
/// frame found above it (leaf first), the position of the interrupt entry
/// nearest the BPF frame, if any: the sample was then taken in an
/// interrupt that arrived while that BPF code (or kernel code it called)
/// ran, and the frames from the leaf to the entry are the interrupt's.
pub(crate) fn interrupt_entry<'a>(
    names: impl IntoIterator<Item = Option<&'a str>>,
) -> Option<usize> {
    names
        .into_iter()
        .enumerate()
        .filter(|(_, n)| n.is_some_and(is_interrupt_entry))
        .last()
        .map(|(i, _)| i)
}

/// Per interned chain: the leaf-first position and symbol of its
/// interrupt entry, or None for a chain of calls.
pub(super) fn classify_chains(
    chains: &[Box<[u64]>],
    ksyms: &Kallsyms,
) -> Vec<Option<(usize, String)>> {
    chains
        .iter()
        .map(|chain| {
            let names: Vec<Option<&str>> = chain
                .iter()
                .enumerate()
                .map(|(i, &ip)| {
                    let at = if i > 0 { ip.wrapping_sub(1) } else { ip };
                    ksyms.resolve(at).map(|s| s.name)
                })
                .collect();
            interrupt_entry(names.iter().copied())
                .map(|i| (i, names[i].unwrap_or_default().to_string()))
        })
        .collect()
}

/// A slot's under-eBPF samples that were interrupts, not calls.
#[derive(Default)]
pub(super) struct Split {
    pub(super) samples: u64,
    /// Of those, the ones whose interrupted line has a line record.
    mapped: u64,
    /// Per exact-IP kernel row, the samples to take out of it.
    deduct: IntMap<KernelKey, u64>,
    /// (entry, line record or NO_LINE, raw address) -> samples.
    by_entry: Vec<((String, u32, u64), u64)>,
}

pub(super) fn split_interrupts(
    sl: &ProgSlot,
    chains: &[Box<[u64]>],
    entries: &[Option<(usize, String)>],
) -> Split {
    let mut split = Split::default();
    let mut keys: Vec<(&StackKey, u64)> = sl.stacks.iter().map(|(k, &n)| (k, n)).collect();
    // The map's order is arbitrary; rows keep a deterministic one.
    keys.sort_by_key(|(k, n)| {
        (
            std::cmp::Reverse(*n),
            k.line,
            k.raw,
            k.chain,
            k.pid,
            k.cgroup,
        )
    });
    for (k, n) in keys {
        let Some(Some((_, entry))) = entries.get(k.chain as usize) else {
            continue;
        };
        let Some(&ip) = chains.get(k.chain as usize).and_then(|c| c.first()) else {
            continue;
        };
        split.samples += n;
        if k.line != NO_LINE {
            split.mapped += n;
        }
        let hit = KernelKey {
            ip,
            line: k.line,
            raw_caller: k.raw,
        };
        *split.deduct.entry(hit).or_insert(0) += n;
        let key = (entry.clone(), k.line, k.raw);
        match split.by_entry.iter_mut().find(|(e, _)| *e == key) {
            Some((_, total)) => *total += n,
            None => split.by_entry.push((key, n)),
        }
    }
    split
}

impl ProgSlot {
    /// Take the interrupt samples out of the under-eBPF counts.
    pub(super) fn take_interrupts(&mut self, split: &Split) {
        self.kernel -= split.samples;
        self.under_mapped -= split.mapped;
        self.under_unmapped -= split.samples - split.mapped;
        for (k, n) in &split.deduct {
            if let Some(h) = self.kernel_hits.get_mut(k) {
                h.count -= n;
            }
        }
    }
}

pub(super) fn interrupt_rows(m: &ProgMeta, split: &Split) -> Vec<InterruptHotspot> {
    split
        .by_entry
        .iter()
        .map(|((entry, line, raw), n)| {
            let rec = (*line != NO_LINE).then(|| &m.lines[*line as usize]);
            let addr = rec.map_or(*raw, jit);
            InterruptHotspot {
                samples: *n,
                entry: entry.clone(),
                bpf_jited_address: Some(addr),
                bpf_instruction_offset: rec.map(|l| l.insn_off as u64 * 8),
                bpf_file: rec.and_then(|l| l.file.clone()),
                bpf_line: rec.and_then(|l| l.line),
                bpf_column: rec.and_then(|l| l.column),
                bpf_source: rec.and_then(|l| l.source.clone()),
                bpf_function: m.func_at(addr).and_then(|f| f.func_name.clone()),
                caller_mapped: rec.is_some(),
            }
        })
        .collect()
}
