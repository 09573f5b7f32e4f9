//! Sample attribution: IP -> program -> line record -> source, and for
//! kernel samples, the nearest BPF caller frame in the callchain.
//!
//! Runs once per sample in the drain loop, so the hot path does no heap
//! allocation: counts live in per-line-record slots, and kernel samples in
//! one hash map entry per distinct (IP, call site).

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use super::events::Shape;
use super::image::{jit, ProgMeta};
use super::records::Sample;
use crate::kernel::kallsyms::Kallsyms;
use crate::model::profile::{
    Counters, Frame, Hotspot, InterruptHotspot, KernelHotspot, NativeSamples, ProgramProfile, Stack,
};

/// A small multiplicative hasher for integer keys (the default SipHash is
/// several times slower and DoS resistance is irrelevant here).
#[derive(Default, Clone, Copy)]
pub(crate) struct IntHasher(u64);

impl Hasher for IntHasher {
    fn write(&mut self, bytes: &[u8]) {
        // Slices of u64 (interned callchains) arrive here as bytes.
        let mut words = bytes.chunks_exact(8);
        for w in &mut words {
            let mut a = [0u8; 8];
            a.copy_from_slice(w);
            self.write_u64(u64::from_ne_bytes(a));
        }
        for &b in words.remainder() {
            self.write_u64(b as u64);
        }
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = (self.0.rotate_left(5) ^ v).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
    fn write_u32(&mut self, v: u32) {
        self.write_u64(v as u64);
    }
    fn finish(&self) -> u64 {
        self.0
    }
}

type IntMap<K, V> = HashMap<K, V, BuildHasherDefault<IntHasher>>;

#[derive(Debug, Clone, Copy, Default)]
struct Hit {
    count: u64,
    /// When the row was first seen (ties in the report keep this order).
    seq: u64,
}

const NO_LINE: u32 = u32::MAX;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct KernelKey {
    ip: u64,
    /// Caller line record index, or NO_LINE.
    line: u32,
    /// The raw caller address when there is no line record, else 0.
    raw_caller: u64,
}

/// One [`Stack`] while counting: the line record (or NO_LINE with the raw
/// address), the task, and the interned kernel chain beneath the line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct StackKey {
    line: u32,
    raw: u64,
    pid: u32,
    chain: u32,
    cgroup: u64,
}

struct ProgSlot {
    meta: ProgMeta,
    direct: u64,
    direct_unmapped: u64,
    kernel: u64,
    under_mapped: u64,
    under_unmapped: u64,
    lines: Vec<Hit>,
    unmapped: Hit,
    kernel_hits: IntMap<KernelKey, Hit>,
    stacks: IntMap<StackKey, u64>,
    /// Direct samples by exact IP.
    ips: IntMap<u64, u64>,
    /// Seconds into the capture of a load or unload seen meanwhile.
    loaded_at: Option<f64>,
    unloaded_at: Option<f64>,
}

#[derive(Debug, Clone, Copy)]
struct Range {
    start: u64,
    end: u64,
    slot: u32,
}

/// The live JIT range table plus every program's counters.
pub(crate) struct Attributor {
    slots: Vec<ProgSlot>,
    by_id: HashMap<u32, usize>,
    /// Sorted by start, non-overlapping.
    ranges: Vec<Range>,
    /// Bounds of all ranges, for a two-compare reject of kernel IPs.
    lo: u64,
    hi: u64,
    seq: u64,
    shape: Shape,
    pub counters: Counters,
    /// Kernel callchains under a BPF frame (leaf first), interned so that a
    /// stack key stays small; index 0 is the empty chain.
    chains: HashMap<Box<[u64]>, u32, BuildHasherDefault<IntHasher>>,
    chain_list: Vec<Box<[u64]>>,
    /// The current sample's kernel frames; reused so the hot path does not
    /// allocate.
    scratch: Vec<u64>,
}

impl Attributor {
    pub(crate) fn new(shape: Shape) -> Attributor {
        Attributor {
            slots: Vec::new(),
            by_id: HashMap::new(),
            ranges: Vec::new(),
            lo: u64::MAX,
            hi: 0,
            seq: 0,
            shape,
            counters: Counters::default(),
            chains: HashMap::default(),
            chain_list: vec![Box::new([])],
            scratch: Vec::new(),
        }
    }

    pub(crate) fn knows(&self, id: u32) -> bool {
        self.by_id.contains_key(&id)
    }

    /// Start matching a program's JIT ranges. A program seen before keeps
    /// its counters. Ranges it overlaps belong to unloaded programs whose
    /// memory was reused, so they are dropped.
    pub(crate) fn register(&mut self, meta: ProgMeta) {
        let slot = match self.by_id.get(&meta.id) {
            Some(&s) => {
                if self.ranges.iter().any(|r| r.slot as usize == s) {
                    return;
                }
                s
            }
            None => {
                let s = self.slots.len();
                self.by_id.insert(meta.id, s);
                self.slots.push(ProgSlot {
                    lines: vec![Hit::default(); meta.lines.len()],
                    meta,
                    direct: 0,
                    direct_unmapped: 0,
                    kernel: 0,
                    under_mapped: 0,
                    under_unmapped: 0,
                    unmapped: Hit::default(),
                    kernel_hits: IntMap::default(),
                    stacks: IntMap::default(),
                    ips: IntMap::default(),
                    loaded_at: None,
                    unloaded_at: None,
                });
                s
            }
        };
        let new: Vec<Range> = self.slots[slot]
            .meta
            .funcs
            .iter()
            .map(|f| Range {
                start: f.start,
                end: f.end(),
                slot: slot as u32,
            })
            .collect();
        self.ranges
            .retain(|r| !new.iter().any(|n| r.start < n.end && n.start < r.end));
        self.ranges.extend(new);
        self.reindex();
    }

    /// Record that program `id` was loaded `secs` into the capture.
    pub(crate) fn loaded_at(&mut self, id: u32, secs: f64) {
        if let Some(&s) = self.by_id.get(&id) {
            self.slots[s].loaded_at = Some(secs);
        }
    }

    /// Record that program `id` was unloaded `secs` into the capture.
    pub(crate) fn unloaded_at(&mut self, id: u32, secs: f64) {
        if let Some(&s) = self.by_id.get(&id) {
            self.slots[s].unloaded_at = Some(secs);
        }
    }

    /// Stop matching a program (unloaded).
    pub(crate) fn unregister_prog(&mut self, id: u32) {
        if let Some(&s) = self.by_id.get(&id) {
            self.ranges.retain(|r| r.slot as usize != s);
            self.reindex();
        }
    }

    /// Stop matching the JIT function starting at `addr` (unregistered symbol).
    pub(crate) fn unregister_addr(&mut self, addr: u64) {
        let before = self.ranges.len();
        self.ranges.retain(|r| r.start != addr);
        if self.ranges.len() != before {
            self.reindex();
        }
    }

    fn reindex(&mut self) {
        self.ranges.sort_by_key(|r| r.start);
        self.lo = self.ranges.first().map_or(u64::MAX, |r| r.start);
        self.hi = self.ranges.iter().map(|r| r.end).max().unwrap_or(0);
    }

    #[inline]
    fn find(&self, addr: u64) -> Option<usize> {
        if addr < self.lo || addr >= self.hi {
            return None;
        }
        let i = self.ranges.partition_point(|r| r.start <= addr);
        let r = self.ranges.get(i.checked_sub(1)?)?;
        (addr < r.end).then_some(r.slot as usize)
    }

    fn next_seq(&mut self) -> u64 {
        self.seq += 1;
        self.seq
    }

    /// Account one sample.
    #[inline]
    pub(crate) fn sample(&mut self, s: &Sample<'_>) {
        self.counters.total_samples += 1;
        if !s.callchain.is_empty() || !s.branches.is_empty() {
            self.counters.callchain_samples += 1;
        }
        if let Some(slot) = self.find(s.ip) {
            self.direct(slot, s.ip, (s.pid, s.cgroup));
            return;
        }
        self.counters.non_bpf_samples += 1;
        self.scratch.clear();
        let caller = match self.shape {
            Shape::Direct => return,
            // Return addresses: look up the call instruction's line (addr − 1).
            Shape::Callchain => {
                let mut found = None;
                for a in s.callchain.addresses() {
                    if let Some(slot) = self.find(a) {
                        found = Some((slot, a, a.wrapping_sub(1)));
                        break;
                    }
                    self.scratch.push(a);
                }
                found
            }
            // A branch stack has no frames between the leaf and the caller.
            Shape::Lbr => s.branches.pairs().find_map(|(from, to)| {
                [from, to]
                    .into_iter()
                    .find_map(|a| self.find(a).map(|slot| (slot, a, a)))
            }),
        };
        if self.scratch.first() != Some(&s.ip) {
            self.scratch.insert(0, s.ip);
        }
        match caller {
            Some((slot, addr, lookup)) => self.under(slot, s.ip, addr, lookup, (s.pid, s.cgroup)),
            None => self.counters.kernel_unattributed_samples += 1,
        }
    }

    /// The id of the chain in `scratch`.
    fn intern_chain(&mut self) -> u32 {
        if let Some(&id) = self.chains.get(&self.scratch[..]) {
            return id;
        }
        let id = self.chain_list.len() as u32;
        let chain: Box<[u64]> = self.scratch.as_slice().into();
        self.chain_list.push(chain.clone());
        self.chains.insert(chain, id);
        id
    }

    /// `task` is the sample's (pid, cgroup).
    fn direct(&mut self, slot: usize, ip: u64, task: (u32, u64)) {
        self.counters.bpf_jit_samples += 1;
        let seq = self.seq + 1;
        let sl = &mut self.slots[slot];
        sl.direct += 1;
        let (hit, key) = match sl.meta.line_index(ip) {
            Some(i) => (&mut sl.lines[i], (i as u32, 0)),
            None => {
                sl.direct_unmapped += 1;
                (&mut sl.unmapped, (NO_LINE, ip))
            }
        };
        let key = StackKey {
            line: key.0,
            raw: key.1,
            pid: task.0,
            chain: 0,
            cgroup: task.1,
        };
        if hit.count == 0 {
            hit.seq = seq;
            self.seq = seq;
        }
        hit.count += 1;
        *sl.stacks.entry(key).or_insert(0) += 1;
        *sl.ips.entry(ip).or_insert(0) += 1;
    }

    fn under(&mut self, slot: usize, ip: u64, caller: u64, lookup: u64, task: (u32, u64)) {
        self.counters.kernel_attributed_samples += 1;
        let seq = self.next_seq();
        let chain = self.intern_chain();
        let sl = &mut self.slots[slot];
        sl.kernel += 1;
        let key = match sl.meta.line_index(lookup) {
            Some(i) => {
                sl.under_mapped += 1;
                KernelKey {
                    ip,
                    line: i as u32,
                    raw_caller: 0,
                }
            }
            None => {
                sl.under_unmapped += 1;
                KernelKey {
                    ip,
                    line: NO_LINE,
                    raw_caller: caller,
                }
            }
        };
        let hit = sl.kernel_hits.entry(key).or_insert(Hit { count: 0, seq });
        hit.count += 1;
        let key = StackKey {
            line: key.line,
            raw: key.raw_caller,
            pid: task.0,
            chain,
            cgroup: task.1,
        };
        *sl.stacks.entry(key).or_insert(0) += 1;
    }

    /// Turn the counters into rows. `ksyms` resolves kernel IPs (empty when
    /// not loaded); `pinned` gives a program's pinned paths.
    pub(crate) fn finish(
        self,
        ksyms: &Kallsyms,
        mut pinned: impl FnMut(u32) -> Vec<String>,
    ) -> (Vec<ProgramProfile>, Counters) {
        let mut counters = self.counters;
        let entries = classify_chains(&self.chain_list, ksyms);
        let mut out = Vec::new();
        for mut sl in self.slots {
            let split = split_interrupts(&sl, &self.chain_list, &entries);
            sl.take_interrupts(&split);
            counters.kernel_attributed_samples -= split.samples;
            counters.interrupt_samples += split.samples;
            if sl.direct == 0 && sl.kernel == 0 && split.samples == 0 {
                continue;
            }
            let m = &sl.meta;
            let krows = kernel_rows(&sl, ksyms, &mut counters);
            out.push(ProgramProfile {
                id: m.id,
                prog_type: m.prog_type.clone(),
                name: m.name.clone(),
                tag: m.tag.clone(),
                full_name: m.full_name().map(String::from),
                function_count: m.funcs.len(),
                pinned_paths: pinned(m.id),
                samples: sl.direct,
                kernel_samples: sl.kernel,
                direct_source_mapped_samples: sl.direct - sl.direct_unmapped,
                direct_source_unmapped_samples: sl.direct_unmapped,
                under_bpf_caller_source_mapped_samples: sl.under_mapped,
                under_bpf_caller_source_unmapped_samples: sl.under_unmapped,
                hotspots: direct_rows(&sl),
                kernel_hotspots: krows,
                stacks: stacks(m, &sl.stacks, &self.chain_list, &entries, ksyms),
                interrupt_samples: split.samples,
                interrupts: interrupt_rows(m, &split),
                loaded_after: sl.loaded_at,
                unloaded_after: sl.unloaded_at,
                native: native(m, &sl.ips),
            });
        }
        out.sort_by_key(|p| (std::cmp::Reverse(p.inclusive_samples()), p.id));
        (out, counters)
    }
}

/// A program's direct rows, in the order each was first seen.
fn direct_rows(sl: &ProgSlot) -> Vec<Hotspot> {
    let m = &sl.meta;
    let mut rows: Vec<(u64, Hotspot)> = sl
        .lines
        .iter()
        .zip(&m.lines)
        .filter(|(h, _)| h.count > 0)
        .map(|(h, l)| {
            (
                h.seq,
                Hotspot {
                    samples: h.count,
                    jited_address: l.jited_addr,
                    instruction_offset: Some(l.insn_off as u64 * 8),
                    file: l.file.clone(),
                    line: l.line,
                    column: l.column,
                    source: l.source.clone(),
                    function: m.func_at(jit(l)).and_then(|f| f.func_name.clone()),
                },
            )
        })
        .collect();
    if sl.unmapped.count > 0 {
        rows.push((
            sl.unmapped.seq,
            Hotspot {
                samples: sl.unmapped.count,
                ..Default::default()
            },
        ));
    }
    rows.sort_by_key(|(seq, _)| *seq);
    rows.into_iter().map(|(_, r)| r).collect()
}

/// A program's exact-IP kernel rows, in the order each was first seen;
/// counts the symbolised samples.
fn kernel_rows(sl: &ProgSlot, ksyms: &Kallsyms, counters: &mut Counters) -> Vec<KernelHotspot> {
    let m = &sl.meta;
    let mut krows: Vec<(u64, KernelHotspot)> = sl
        .kernel_hits
        .iter()
        .filter(|(_, h)| h.count > 0)
        .map(|(k, h)| {
            let sym = ksyms.resolve(k.ip);
            if sym.is_some() {
                counters.kernel_symbolized_samples += h.count;
            }
            let line = (k.line != NO_LINE).then(|| &m.lines[k.line as usize]);
            let name = sym.map(|s| s.name).filter(|n| !n.is_empty());
            let row = KernelHotspot {
                samples: h.count,
                ip: k.ip,
                symbol: name.map(String::from),
                module: sym.and_then(|s| s.module).map(String::from),
                symbol_offset: sym.map(|s| k.ip - s.start),
                kind: classify(name, sym.and_then(|s| s.module)),
                bpf_jited_address: Some(line.map_or(k.raw_caller, jit)),
                bpf_instruction_offset: line.map(|l| l.insn_off as u64 * 8),
                bpf_file: line.and_then(|l| l.file.clone()),
                bpf_line: line.and_then(|l| l.line),
                bpf_column: line.and_then(|l| l.column),
                bpf_source: line.and_then(|l| l.source.clone()),
                bpf_function: m
                    .func_at(line.map_or(k.raw_caller, jit))
                    .and_then(|f| f.func_name.clone()),
                caller_mapped: line.is_some(),
            };
            (h.seq, row)
        })
        .collect();
    krows.sort_by_key(|(seq, _)| *seq);
    krows.into_iter().map(|(_, r)| r).collect()
}

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
fn classify_chains(chains: &[Box<[u64]>], ksyms: &Kallsyms) -> Vec<Option<(usize, String)>> {
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
struct Split {
    samples: u64,
    /// Of those, the ones whose interrupted line has a line record.
    mapped: u64,
    /// Per exact-IP kernel row, the samples to take out of it.
    deduct: IntMap<KernelKey, u64>,
    /// (entry, line record or NO_LINE, raw address) -> samples.
    by_entry: Vec<((String, u32, u64), u64)>,
}

fn split_interrupts(
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
    fn take_interrupts(&mut self, split: &Split) {
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

fn interrupt_rows(m: &ProgMeta, split: &Split) -> Vec<InterruptHotspot> {
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

/// A slot's stack counts as rows, most samples first (ties by line, address,
/// task and chain, so the order is deterministic).
fn stacks(
    m: &ProgMeta,
    counts: &IntMap<StackKey, u64>,
    chains: &[Box<[u64]>],
    entries: &[Option<(usize, String)>],
    ksyms: &Kallsyms,
) -> Vec<Stack> {
    let mut keys: Vec<(&StackKey, u64)> = counts.iter().map(|(k, &n)| (k, n)).collect();
    keys.sort_by_key(|(k, n)| {
        (
            std::cmp::Reverse(*n),
            k.line,
            k.raw,
            k.pid,
            k.chain,
            k.cgroup,
        )
    });
    keys.into_iter()
        .map(|(k, n)| {
            let line = m.lines.get(k.line as usize).filter(|_| k.line != NO_LINE);
            let addr = line.map_or(k.raw, jit);
            let chain = chains.get(k.chain as usize).map_or(&[][..], |c| &c[..]);
            let entry = entries.get(k.chain as usize).and_then(Option::as_ref);
            // An interrupt's frames end at its entry; the interrupted frames
            // above it are the line's, not the interrupt's.
            let chain = match entry {
                Some((at, _)) => chain.get(..=*at).unwrap_or(chain),
                None => chain,
            };
            Stack {
                samples: n,
                pid: k.pid,
                cgroup: k.cgroup,
                subprogram: m
                    .func_at(addr)
                    .filter(|f| f.func_index != 0)
                    .and_then(|f| f.func_name.clone()),
                jited_address: line.and_then(|l| l.jited_addr).or(Some(k.raw)),
                file: line.and_then(|l| l.file.clone()),
                line: line.and_then(|l| l.line),
                column: line.and_then(|l| l.column),
                source: line.and_then(|l| l.source.clone()),
                kernel: chain
                    .iter()
                    .enumerate()
                    .rev()
                    .map(|(i, &ip)| frame(ip, i > 0, ksyms))
                    .collect(),
                interrupt: entry.map(|(_, name)| name.clone()),
            }
        })
        .collect()
}

/// A slot's direct samples per exact IP, most first (ties by address),
/// each placed in its JIT function.
fn native(m: &ProgMeta, ips: &IntMap<u64, u64>) -> Vec<NativeSamples> {
    let mut rows: Vec<NativeSamples> = ips
        .iter()
        .map(|(&ip, &n)| {
            let f = m.func_at(ip);
            NativeSamples {
                samples: n,
                ip,
                func_index: f.map(|f| f.func_index),
                function: f.and_then(|f| f.func_name.clone()),
                offset: f.map(|f| ip - f.start),
            }
        })
        .collect();
    rows.sort_by_key(|r| (std::cmp::Reverse(r.samples), r.ip));
    rows
}

/// A kernel frame; a return address (`ret`) is looked up at the call
/// instruction before it, which may end the calling function.
fn frame(ip: u64, ret: bool, ksyms: &Kallsyms) -> Frame {
    let sym = ksyms.resolve(if ret { ip.wrapping_sub(1) } else { ip });
    let name = sym.map(|s| s.name).filter(|n| !n.is_empty());
    let module = sym.and_then(|s| s.module);
    Frame {
        ip,
        symbol: name.map(String::from),
        module: module.map(String::from),
        kind: classify(name, module),
    }
}

/// Prefixes of the kernel's map implementations (kernel/bpf/*map*.c,
/// hashtab.c, lpm_trie.c, ...) and their private helpers.
const MAP_IMPL_PREFIXES: &[&str] = &[
    "bpf_map_",
    "htab_",
    "__htab_",
    "array_map_",
    "percpu_array_map_",
    "prog_array_map_",
    "fd_array_map_",
    "bpf_fd_array_map_",
    "bpf_fd_htab_map_",
    "array_of_map_",
    "htab_of_map_",
    "perf_event_fd_array_",
    "cgroup_fd_array_",
    "stack_map_",
    "queue_stack_map_",
    "bloom_map_",
    "ringbuf_map_",
    "user_ringbuf_map_",
    "trie_",
    "dev_map_",
    "cpu_map_",
    "xsk_map_",
    "sock_map_",
    "sock_hash_",
    "reuseport_array_",
    "arena_map_",
    "cgroup_storage_",
    "bpf_local_storage_",
    "bpf_lru_",
    "pcpu_freelist_",
    "__pcpu_freelist_",
    "lookup_nulls_elem_raw",
    "lookup_elem_raw",
    "alloc_htab_elem",
    "free_htab_elem",
    "prealloc_lru_pop",
];

/// Generic map operation names (`<type>_map_<op>`) regardless of prefix.
const MAP_OP_SUFFIXES: &[&str] = &["_map_lookup_elem", "_map_update_elem", "_map_delete_elem"];

/// KIND of a kernel symbol: `unknown`, `bpf_map`, `bpf_helper` or `kernel`.
///
/// Decided by whole-name prefixes and suffixes, never by a substring in the
/// middle of a name: the original's `_map_` substring rule called
/// `filemap_map_pages` a map function and missed hash-table internals such
/// as `lookup_nulls_elem_raw`; BPF program symbols (`bpf_prog_<tag>_...`),
/// trampolines and dispatchers are not helpers.
pub(crate) fn classify(name: Option<&str>, module: Option<&str>) -> &'static str {
    let Some(name) = name.filter(|n| !n.is_empty()) else {
        return "unknown";
    };
    let lower = name.to_ascii_lowercase();
    // Compiler clones (`foo.cold`, `foo.isra.0`) belong to `foo`.
    let base = lower.split('.').next().unwrap_or(&lower);
    if MAP_IMPL_PREFIXES.iter().any(|p| base.starts_with(p))
        || MAP_OP_SUFFIXES.iter().any(|s| base.ends_with(s))
    {
        return "bpf_map";
    }
    let helper = ["bpf_", "__bpf_", "____bpf_"]
        .iter()
        .find_map(|p| base.strip_prefix(p));
    let is_bpf_text = module == Some("bpf")
        || base.starts_with("bpf_prog_")
        || base.starts_with("bpf_trampoline_")
        || base.starts_with("bpf_dispatcher_");
    if helper.is_some() && !is_bpf_text {
        return "bpf_helper";
    }
    "kernel"
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::image::tests::{line, range};
    use crate::profile::records::{build, walk_bytes, ParseStats, Record};

    /// Program 7: main at 0x1000..0x1100 ("main"), subprog at 0x2000..0x2080
    /// ("sub"); lines at 0x1000 (l10), 0x1040 (l11), 0x2000 (l20), 0x2010 (l21).
    pub(super) fn prog7() -> ProgMeta {
        ProgMeta {
            id: 7,
            prog_type: "socket_filter".into(),
            name: "p7".into(),
            tag: "00".into(),
            jited: true,
            funcs: vec![
                range(0x1000, 0x100, 0, "main"),
                range(0x2000, 0x80, 1, "sub"),
            ],
            lines: vec![
                line(0x1000, 0, "a.c", 10, "x = 1;"),
                line(0x1040, 4, "a.c", 11, "call();"),
                line(0x2000, 9, "a.c", 20, "y = 2;"),
                line(0x2010, 11, "a.c", 21, "return y;"),
            ],
        }
    }

    /// The sample type of records made by `build::sample` for a shape.
    fn built(shape: Shape) -> u64 {
        shape.sample_type() | build::SAMPLE_FIELDS
    }

    fn feed(a: &mut Attributor, bytes: &[u8]) {
        let mut st = ParseStats::default();
        walk_bytes(bytes, built(a.shape), &mut st, |r| {
            if let Record::Sample(s) = r {
                a.sample(&s)
            }
        });
        assert_eq!(st.malformed_records, 0);
    }

    #[test]
    fn direct_samples_follow_ranges_and_lines() {
        let mut a = Attributor::new(Shape::Direct);
        a.register(prog7());
        let mut s = Vec::new();
        for ip in [
            0x1041,
            0x1041,
            0x1000,
            0x2011,
            0x20ff,
            0x0fff,
            0xffff_ffff_8100_0000,
            0x10ff,
        ] {
            s.extend(build::sample(ip, 0, None));
        }
        feed(&mut a, &s);
        assert_eq!(a.counters.total_samples, 8);
        assert_eq!(a.counters.bpf_jit_samples, 5);
        assert_eq!(a.counters.non_bpf_samples, 3);
        let (progs, c) = a.finish(&Kallsyms::default(), |_| vec![]);
        assert_eq!(c.kernel_attributed_samples, 0);
        let p = &progs[0];
        assert_eq!((p.samples, p.kernel_samples), (5, 0));
        assert_eq!(p.full_name.as_deref(), Some("main"));
        let rows: Vec<(u64, Option<u32>, Option<&str>)> = p
            .hotspots
            .iter()
            .map(|h| (h.samples, h.line, h.function.as_deref()))
            .collect();
        // First-seen order; 0x10ff is still line 11 (no upper bound).
        assert_eq!(
            rows,
            vec![
                (3, Some(11), Some("main")),
                (1, Some(10), Some("main")),
                (1, Some(21), Some("sub"))
            ]
        );
        assert_eq!(p.hotspots[0].instruction_offset, Some(32));
        assert_eq!(p.hotspots[0].jited_address, Some(0x1040));
        assert_eq!(p.direct_source_mapped_samples, 5);
        // Every direct sample at its exact address, placed in its function.
        let native: Vec<String> = p
            .native
            .iter()
            .map(|n| {
                let f = n.function.as_deref().unwrap_or("-");
                let (i, off) = (n.func_index.unwrap_or(9), n.offset.unwrap_or(0));
                format!("{} {:#x} {i}:{f}+{off:#x}", n.samples, n.ip)
            })
            .collect();
        assert_eq!(
            native,
            [
                "2 0x1041 0:main+0x41",
                "1 0x1000 0:main+0x0",
                "1 0x10ff 0:main+0xff",
                "1 0x2011 1:sub+0x11",
            ]
        );
    }

    #[test]
    fn native_samples_add_up_to_direct_samples() {
        let mut a = Attributor::new(Shape::Callchain);
        let mut m = prog7();
        m.lines.truncate(1);
        a.register(m);
        let ctx = 0xffff_ffff_ffff_ff80;
        let mut s = Vec::new();
        // Direct samples, mapped and unmapped (0x2005 is before the
        // subprogram's first record), on both functions.
        for (i, ip) in [0x1000u64, 0x1004, 0x2005, 0x1004, 0x207f, 0x1004]
            .into_iter()
            .enumerate()
        {
            s.extend(with_pid(build::sample(ip, 0, Some(&[ctx, ip])), i as u32));
        }
        // Kernel samples under a BPF caller are not native samples.
        let chain = [ctx, 0xffffffff81520044, 0x1055];
        s.extend(build::sample(0xffffffff81520044, 0, Some(&chain)));
        feed(&mut a, &s);
        let (progs, _) = a.finish(&Kallsyms::default(), |_| vec![]);
        let p = &progs[0];
        assert_eq!((p.samples, p.kernel_samples), (6, 1));
        let total: u64 = p.native.iter().map(|n| n.samples).sum();
        assert_eq!(total, p.samples);
        assert_eq!((p.native[0].ip, p.native[0].samples), (0x1004, 3));
        let sub: Vec<(u64, Option<u64>)> = p
            .native
            .iter()
            .filter(|n| n.function.as_deref() == Some("sub"))
            .map(|n| (n.ip, n.offset))
            .collect();
        assert_eq!(sub, vec![(0x2005, Some(5)), (0x207f, Some(0x7f))]);
    }

    #[test]
    fn unmapped_program_and_ranges_lifecycle() {
        let mut a = Attributor::new(Shape::Direct);
        let mut m = prog7();
        m.lines.clear();
        a.register(m);
        feed(&mut a, &build::sample(0x1010, 0, None));
        // Unloaded: no longer matches.
        a.unregister_prog(7);
        feed(&mut a, &build::sample(0x1010, 0, None));
        // A new program reusing the memory takes over.
        let mut n = prog7();
        n.id = 8;
        n.funcs.truncate(1);
        a.register(n);
        feed(&mut a, &build::sample(0x1010, 0, None));
        // Re-registering a known program is harmless.
        a.register(prog7());
        a.unregister_addr(0x2000);
        feed(&mut a, &build::sample(0x2001, 0, None));
        let (progs, c) = a.finish(&Kallsyms::default(), |id| vec![format!("/pin/{id}")]);
        assert_eq!(c.total_samples, 4);
        assert_eq!(c.bpf_jit_samples, 2);
        let p7 = progs.iter().find(|p| p.id == 7).unwrap();
        assert_eq!(p7.samples, 1);
        assert_eq!(p7.direct_source_unmapped_samples, 1);
        assert!(p7.hotspots[0].is_unmapped());
        assert_eq!(p7.pinned_paths, vec!["/pin/7".to_string()]);
        assert_eq!(progs.iter().find(|p| p.id == 8).unwrap().samples, 1);
    }

    const KSYMS: &str = "\
ffffffff81000000 T _text
ffffffff81520040 T bpf_ktime_get_ns
ffffffff81520080 T ktime_get_mono_fast_ns
ffffffff81600000 t lookup_nulls_elem_raw
";

    #[test]
    fn callchains_credit_the_nearest_bpf_caller_line() {
        let mut a = Attributor::new(Shape::Callchain);
        a.register(prog7());
        let ctx_kernel = 0xffff_ffff_ffff_ff80;
        let mut s = Vec::new();
        // helper called from line 11 (call insn at 0x1050, returns to 0x1055)
        s.extend(build::sample(
            0xffffffff81520044,
            0,
            Some(&[ctx_kernel, 0xffffffff81520044, 0x1055, 0xffffffff81000100]),
        ));
        // deeper chain, return address equals the start of the next line
        // record (0x2010): must be credited to line 20, not 21.
        s.extend(build::sample(
            0xffffffff81520090,
            0,
            Some(&[
                ctx_kernel,
                0xffffffff81520090,
                0xffffffff81520050,
                0x2010,
                0x1055,
            ]),
        ));
        // no BPF frame at all
        s.extend(build::sample(
            0xffffffff81000010,
            0,
            Some(&[ctx_kernel, 0xffffffff81000010, 0xffffffff81000200]),
        ));
        // direct sample with a chain is still direct
        s.extend(build::sample(0x1001, 0, Some(&[ctx_kernel, 0x1001])));
        feed(&mut a, &s);
        let k = Kallsyms::parse(KSYMS);
        let (progs, c) = a.finish(&k, |_| vec![]);
        assert_eq!(c.total_samples, 4);
        assert_eq!(c.callchain_samples, 4);
        assert_eq!(c.kernel_attributed_samples, 2);
        assert_eq!(c.kernel_unattributed_samples, 1);
        assert_eq!(c.kernel_symbolized_samples, 2);
        let p = &progs[0];
        assert_eq!(
            (p.samples, p.kernel_samples, p.inclusive_samples()),
            (1, 2, 3)
        );
        let k0 = &p.kernel_hotspots[0];
        assert_eq!(k0.symbol.as_deref(), Some("bpf_ktime_get_ns"));
        assert_eq!((k0.symbol_offset, k0.kind), (Some(4), "bpf_helper"));
        assert_eq!(
            (k0.bpf_line, k0.bpf_jited_address),
            (Some(11), Some(0x1040))
        );
        assert_eq!(k0.bpf_function.as_deref(), Some("main"));
        let k1 = &p.kernel_hotspots[1];
        assert_eq!(k1.symbol.as_deref(), Some("ktime_get_mono_fast_ns"));
        assert_eq!((k1.kind, k1.bpf_line), ("kernel", Some(20)));
        assert_eq!(k1.bpf_function.as_deref(), Some("sub"));
        assert_eq!(p.under_bpf_caller_source_mapped_samples, 2);
    }

    /// A sample record from `build::sample` with its pid replaced.
    fn with_pid(mut rec: Vec<u8>, pid: u32) -> Vec<u8> {
        rec[16..20].copy_from_slice(&pid.to_ne_bytes());
        rec
    }

    #[test]
    fn stacks_keep_task_subprogram_and_kernel_frames_outermost_first() {
        let mut a = Attributor::new(Shape::Callchain);
        a.register(prog7());
        let ctx = 0xffff_ffff_ffff_ff80;
        let chain = [ctx, 0xffffffff81520090, 0xffffffff81520050, 0x2015, 0x1055];
        let mut s = Vec::new();
        for pid in [40, 40, 41] {
            s.extend(with_pid(
                build::sample(0xffffffff81520090, 0, Some(&chain)),
                pid,
            ));
        }
        s.extend(with_pid(build::sample(0x2011, 0, Some(&[ctx, 0x2011])), 40));
        s.extend(with_pid(build::sample(0x1001, 0, Some(&[ctx, 0x1001])), 41));
        feed(&mut a, &s);
        let (progs, _) = a.finish(&Kallsyms::parse(KSYMS), |_| vec![]);
        let p = &progs[0];
        let total: u64 = p.stacks.iter().map(|s| s.samples).sum();
        assert_eq!(total, p.inclusive_samples());
        let top = &p.stacks[0];
        assert_eq!((top.samples, top.pid, top.line), (2, 40, Some(21)));
        assert_eq!(top.subprogram.as_deref(), Some("sub"));
        let frames: Vec<Option<&str>> = top.kernel.iter().map(|f| f.symbol.as_deref()).collect();
        assert_eq!(
            frames,
            vec![Some("bpf_ktime_get_ns"), Some("ktime_get_mono_fast_ns")],
            "outermost first"
        );
        let pids: Vec<(u32, u64, usize)> = p
            .stacks
            .iter()
            .map(|s| (s.pid, s.samples, s.kernel.len()))
            .collect();
        assert_eq!(pids, vec![(40, 2, 2), (41, 1, 0), (40, 1, 0), (41, 1, 2)]);
        let main_line = p.stacks.iter().find(|s| s.line == Some(10)).unwrap();
        assert_eq!(
            main_line.subprogram, None,
            "the main function is the program"
        );
    }

    #[test]
    fn unmapped_callers_keep_the_raw_address_and_lbr_uses_branches() {
        let mut a = Attributor::new(Shape::Lbr);
        let mut m = prog7();
        m.lines.clear();
        a.register(m);
        let mut p = build::sample(0xffffffff81600010, 0, None)[8..].to_vec();
        p.extend(build::u64s(&[
            2,
            0xffffffff81000000,
            0xffffffff81600000,
            0,
            0x1055,
            0xffffffff81600000,
            0,
        ]));
        let rec = build::record(crate::profile::records::RECORD_SAMPLE, &p);
        feed(&mut a, &rec);
        let (progs, c) = a.finish(&Kallsyms::default(), |_| vec![]);
        assert_eq!(c.kernel_attributed_samples, 1);
        let k = &progs[0].kernel_hotspots[0];
        assert_eq!(
            k.bpf_jited_address,
            Some(0x1055),
            "raw caller address, LBR not adjusted"
        );
        assert_eq!((k.bpf_line, k.caller_mapped), (None, false));
        assert_eq!((k.symbol.as_deref(), k.kind), (None, "unknown"));
        assert_eq!(progs[0].under_bpf_caller_source_unmapped_samples, 1);
    }

    /// Kernel callchains recorded on this kernel (see the file's header).
    const RECORDED: &str = include_str!("testdata/kernel_callchains.txt");

    /// Each recorded chain: what it is (`call` or `interrupt:<entry>`)
    /// and its frames, leaf first.
    fn recorded() -> Vec<(&'static str, Vec<&'static str>)> {
        RECORDED
            .lines()
            .filter(|l| !l.starts_with('#') && !l.is_empty())
            .map(|l| {
                let (kind, frames) = l.split_once('\t').unwrap();
                (kind, frames.split(';').collect())
            })
            .collect()
    }

    fn is_bpf_prog(frame: &str) -> bool {
        let tag = frame.strip_prefix("bpf_prog_").unwrap_or("").as_bytes();
        tag.len() > 17 && tag[16] == b'_' && tag[..16].iter().all(u8::is_ascii_hexdigit)
    }

    /// A sample with a recorded chain: every kernel symbol at an address
    /// of its own (the text for a kallsyms), the first BPF frame at
    /// program 7's line 11 (a return address after its call).
    fn replay(frames: &[&str], names: &mut Vec<String>) -> Vec<u8> {
        let mut chain = vec![0xffff_ffff_ffff_ff80];
        for (i, f) in frames.iter().enumerate() {
            if is_bpf_prog(f) && !chain.contains(&0x1055) {
                chain.push(0x1055);
                continue;
            }
            let n = match names.iter().position(|n| n == f) {
                Some(n) => n,
                None => {
                    names.push(f.to_string());
                    names.len() - 1
                }
            };
            // The leaf is the sampled IP itself; the others return
            // addresses just after a call.
            let base = 0xffff_ffff_8100_0000 + n as u64 * 0x1000;
            chain.push(base + if i == 0 { 0x8 } else { 0x10 });
        }
        build::sample(chain[1], 0, Some(&chain))
    }

    fn ksyms_of(names: &[String]) -> Kallsyms {
        let text: String = names
            .iter()
            .enumerate()
            .map(|(n, name)| {
                format!(
                    "{:x} T {name}\n",
                    0xffff_ffff_8100_0000u64 + n as u64 * 0x1000
                )
            })
            .collect();
        Kallsyms::parse(&text)
    }

    /// Every recorded chain on its own: a call stays under the line that
    /// made it; an interrupt is counted apart, with its entry, and its
    /// frames end at that entry.
    #[test]
    fn recorded_callchains_tell_interrupts_from_calls() {
        let chains = recorded();
        assert!(chains.len() >= 10, "{} chains", chains.len());
        for (kind, frames) in &chains {
            let mut a = Attributor::new(Shape::Callchain);
            a.register(prog7());
            let mut names = Vec::new();
            feed(&mut a, &replay(frames, &mut names));
            let (progs, c) = a.finish(&ksyms_of(&names), |_| vec![]);
            let p = &progs[0];
            let bpf = frames.iter().position(|f| is_bpf_prog(f)).unwrap();
            let below: Vec<&str> = frames[..bpf].iter().rev().copied().collect();
            let stack = &p.stacks[0];
            let got: Vec<&str> = stack
                .kernel
                .iter()
                .filter_map(|f| f.symbol.as_deref())
                .collect();
            match kind.strip_prefix("interrupt:") {
                Some(entry) => {
                    assert_eq!(
                        (p.kernel_samples, p.interrupt_samples),
                        (0, 1),
                        "{frames:?}"
                    );
                    assert_eq!((c.kernel_attributed_samples, c.interrupt_samples), (0, 1));
                    assert!(p.kernel_hotspots.is_empty(), "{frames:?}");
                    let row = &p.interrupts[0];
                    assert_eq!(row.entry, entry);
                    assert_eq!(
                        (row.bpf_line, row.bpf_function.as_deref()),
                        (Some(11), Some("main"))
                    );
                    assert_eq!(stack.interrupt.as_deref(), Some(entry));
                    // The interrupt's frames, from its entry down to the leaf.
                    let at = below.iter().position(|f| f == &entry).unwrap();
                    assert_eq!(got, below[at..], "{frames:?}");
                }
                None => {
                    assert_eq!(*kind, "call");
                    assert_eq!(
                        (p.kernel_samples, p.interrupt_samples),
                        (1, 0),
                        "{frames:?}"
                    );
                    assert_eq!((c.kernel_attributed_samples, c.interrupt_samples), (1, 0));
                    assert!(p.interrupts.is_empty());
                    assert_eq!(stack.interrupt, None);
                    assert_eq!(got, below, "{frames:?}");
                    assert_eq!(p.kernel_hotspots[0].bpf_line, Some(11));
                }
            }
            assert_eq!(p.inclusive_samples() + p.interrupt_samples, 1);
        }
    }

    /// All of them in one capture: the counts split, every sample stays in
    /// some stack, and the kernel rows hold only the calls.
    #[test]
    fn recorded_callchains_together() {
        let chains = recorded();
        let mut a = Attributor::new(Shape::Callchain);
        a.register(prog7());
        let mut names = Vec::new();
        for (_, frames) in &chains {
            feed(&mut a, &replay(frames, &mut names));
        }
        let (progs, c) = a.finish(&ksyms_of(&names), |_| vec![]);
        let irq = chains
            .iter()
            .filter(|(k, _)| k.starts_with("interrupt:"))
            .count() as u64;
        let calls = chains.len() as u64 - irq;
        assert!(irq >= 5 && calls >= 4, "{irq} interrupts, {calls} calls");
        let p = &progs[0];
        assert_eq!((p.kernel_samples, p.interrupt_samples), (calls, irq));
        assert_eq!(
            (c.kernel_attributed_samples, c.interrupt_samples),
            (calls, irq)
        );
        assert_eq!(
            (
                p.under_bpf_caller_source_mapped_samples,
                p.under_bpf_caller_source_unmapped_samples
            ),
            (calls, 0)
        );
        let rows: u64 = p.kernel_hotspots.iter().map(|k| k.samples).sum();
        assert_eq!(rows, calls);
        let by_entry: u64 = p.interrupts.iter().map(|r| r.samples).sum();
        assert_eq!(by_entry, irq);
        let entries: std::collections::BTreeSet<&str> =
            p.interrupts.iter().map(|r| r.entry.as_str()).collect();
        assert_eq!(
            entries,
            ["asm_common_interrupt", "asm_sysvec_apic_timer_interrupt"].into()
        );
        let stacks: u64 = p.stacks.iter().map(|s| s.samples).sum();
        assert_eq!(stacks, calls + irq);
        for k in &p.kernel_hotspots {
            let sym = k.symbol.as_deref().unwrap_or("");
            assert!(!is_interrupt_entry(sym), "{sym} among the calls");
        }
    }

    #[test]
    fn entry_points_of_both_architectures() {
        let at = |names: &[&str]| interrupt_entry(names.iter().map(|n| Some(*n)));
        for entry in [
            "asm_sysvec_apic_timer_interrupt",
            "asm_sysvec_call_function_single",
            "asm_common_interrupt",
            "asm_spurious_interrupt",
            "asm_exc_page_fault",
            "asm_exc_int3",
            "asm_fred_entrypoint_kernel",
            "el1h_64_irq",
            "el1h_64_sync",
            "el1_interrupt",
            "call_on_irq_stack",
        ] {
            assert!(is_interrupt_entry(entry), "{entry}");
        }
        for other in [
            "entry_SYSCALL_64_after_hwframe",
            "asm_load_gs_index",
            "common_interrupt",
            "sysvec_apic_timer_interrupt",
            "handle_softirqs",
            "el0t_64_sync",
            "bpf_ktime_get_ns",
        ] {
            assert!(!is_interrupt_entry(other), "{other}");
        }
        // arm64, as the unwinder reports an IRQ on the IRQ stack: the
        // entry nearest the interrupted code is the vector's.
        assert_eq!(
            at(&[
                "rcu_core",
                "handle_softirqs",
                "__irq_exit_rcu",
                "call_on_irq_stack",
                "el1_interrupt",
                "el1h_64_irq_handler",
                "el1h_64_irq",
            ]),
            Some(6)
        );
        // An interrupt arriving inside another one's handler.
        assert_eq!(
            at(&[
                "x",
                "asm_sysvec_apic_timer_interrupt",
                "y",
                "asm_common_interrupt"
            ]),
            Some(3)
        );
        assert_eq!(at(&["bpf_ktime_get_ns", "ktime_get_mono_fast_ns"]), None);
        assert_eq!(interrupt_entry([None, Some("read_tsc")]), None);
    }

    /// Throughput of parse + attribution (run with `cargo test --release
    /// -- --ignored per_sample_cost --nocapture`).
    #[test]
    #[ignore]
    fn per_sample_cost() {
        let mut a = Attributor::new(Shape::Direct);
        a.register(prog7());
        let mut ring = Vec::new();
        for i in 0..10_000u64 {
            let ip = if i % 4 == 0 {
                0xffff_ffff_8100_0000 + i
            } else {
                0x1000 + i % 0x80
            };
            ring.extend(build::sample(ip, 0, None));
        }
        let rounds = 200;
        let t = std::time::Instant::now();
        let mut scratch = Vec::new();
        let mut st = ParseStats::default();
        for r in 0..rounds {
            let cut = (r * 4099) % ring.len();
            crate::profile::records::walk(
                &ring[..cut],
                &ring[cut..],
                built(a.shape),
                &mut scratch,
                &mut st,
                |rec| {
                    if let Record::Sample(s) = rec {
                        a.sample(&s)
                    }
                },
            );
        }
        let n = a.counters.total_samples;
        eprintln!(
            "{:.1} ns per sample ({n} samples)",
            t.elapsed().as_nanos() as f64 / n as f64
        );
    }

    #[test]
    fn kinds_without_substring_misclassification() {
        let k = |n: &str| classify(Some(n), None);
        assert_eq!(classify(None, None), "unknown");
        assert_eq!(k(""), "unknown");
        assert_eq!(k("bpf_map_lookup_elem"), "bpf_map");
        assert_eq!(k("htab_map_hash"), "bpf_map");
        assert_eq!(k("__htab_map_lookup_elem"), "bpf_map");
        assert_eq!(k("lookup_nulls_elem_raw"), "bpf_map");
        assert_eq!(k("array_map_lookup_elem"), "bpf_map");
        assert_eq!(k("foo_map_update_elem"), "bpf_map");
        assert_eq!(k("cpu_map_update_elem.cold"), "bpf_map");
        assert_eq!(k("__pte_offset_map_lock"), "kernel");
        assert_eq!(k("filemap_map_pages"), "kernel");
        assert_eq!(k("kvm_irq_map_gsi"), "kernel");
        assert_eq!(k("bpf_ktime_get_ns"), "bpf_helper");
        assert_eq!(k("____bpf_probe_read_kernel"), "bpf_helper");
        assert_eq!(k("__bpf_get_stack"), "bpf_helper");
        assert_eq!(k("BPF_Get_Current_Pid_Tgid"), "bpf_helper");
        assert_eq!(k("bpf_prog_0123456789abcdef_sys_exit"), "kernel");
        assert_eq!(classify(Some("bpf_trampoline_6442"), Some("bpf")), "kernel");
        assert_eq!(k("ktime_get_mono_fast_ns"), "kernel");
        assert_eq!(k("my_bpf_helper_thing"), "kernel");
    }
}
