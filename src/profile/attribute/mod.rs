//! Sample attribution: IP -> program -> line record -> source, and for
//! kernel samples, the nearest BPF caller frame in the callchain.
//!
//! Runs once per sample in the drain loop, so the hot path does no heap
//! allocation: counts live in per-line-record slots, and kernel samples in
//! one hash map entry per distinct (IP, call site).

mod dispatch;
mod interrupts;
mod kinds;
mod rows;
#[cfg(test)]
mod tests;

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use super::events::Shape;
use super::image::ProgMeta;
use super::records::Sample;
use crate::kernel::kallsyms::Kallsyms;
use crate::model::profile::{Counters, DispatchSamples, ProgramProfile};
use interrupts::{classify_chains, interrupt_rows, split_interrupts};
#[cfg(test)]
pub(crate) use kinds::classify;
use rows::{direct_rows, kernel_rows, native, stacks};

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
    /// Callchains (interned, with the leaf) that pass through no program,
    /// and their samples: sorted into dispatch and statistics at the end.
    unowned: IntMap<u32, u64>,
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
            unowned: IntMap::default(),
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
            None => {
                self.counters.kernel_unattributed_samples += 1;
                if self.shape == Shape::Callchain {
                    let chain = self.intern_chain();
                    *self.unowned.entry(chain).or_insert(0) += 1;
                }
            }
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
    ) -> (Vec<ProgramProfile>, Counters, Vec<DispatchSamples>) {
        let mut counters = self.counters;
        let unowned = self
            .unowned
            .iter()
            .map(|(&c, &n)| (&*self.chain_list[c as usize], n));
        let dispatch = dispatch::tally(unowned, ksyms);
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
        (out, counters, dispatch)
    }
}
