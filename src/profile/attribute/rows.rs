//! A program's counters turned into the rows of its [`ProgramProfile`]:
//! direct lines, exact-IP kernel rows, stacks and native samples.
//!
//! [`ProgramProfile`]: crate::model::profile::ProgramProfile

use super::kinds::classify;
use super::{IntMap, ProgSlot, StackKey, NO_LINE};
use crate::kernel::kallsyms::Kallsyms;
use crate::model::profile::{Counters, Frame, Hotspot, KernelHotspot, NativeSamples, Stack};
use crate::profile::image::{jit, ProgMeta};

/// A program's direct rows, in the order each was first seen.
pub(super) fn direct_rows(sl: &ProgSlot) -> Vec<Hotspot> {
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
pub(super) fn kernel_rows(
    sl: &ProgSlot,
    ksyms: &Kallsyms,
    counters: &mut Counters,
) -> Vec<KernelHotspot> {
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

/// A slot's stack counts as rows, most samples first (ties by line, address,
/// task and chain, so the order is deterministic).
pub(super) fn stacks(
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
pub(super) fn native(m: &ProgMeta, ips: &IntMap<u64, u64>) -> Vec<NativeSamples> {
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
