//! Names of the kernel functions that helper calls in an xlated image jump
//! to, read from `/proc/kallsyms` (only the addresses asked for are kept).

use std::collections::HashSet;

use crate::inspect::disasm::CallNames;
use crate::inspect::insn::Slot;
use crate::kernel::kallsyms;
use crate::kernel::lines::JitRange;

/// Resolve the helper-call targets of `slots` and the symbols of the
/// program's JITed subprograms. An unreadable kallsyms or hidden addresses
/// give an empty table (calls are then named by helper ID).
pub fn for_program(slots: &[Slot], ranges: &[JitRange]) -> CallNames {
    let Ok(text) = std::fs::read_to_string("/proc/kallsyms") else {
        return CallNames::default();
    };
    from_kallsyms(&text, slots, ranges)
}

pub fn from_kallsyms(text: &str, slots: &[Slot], ranges: &[JitRange]) -> CallNames {
    fn parse(l: &str) -> Option<(u64, &str)> {
        let (addr, name, _) = kallsyms::fields(l)?;
        (addr != 0).then_some((addr, name))
    }
    let Some(base) = text
        .lines()
        .filter_map(parse)
        .find(|(_, n)| *n == "__bpf_call_base")
        .map(|(a, _)| a)
    else {
        return CallNames::default();
    };
    let wanted: HashSet<u64> = CallNames::targets(slots, base).into_iter().collect();
    let mut names = CallNames {
        base: Some(base),
        ..Default::default()
    };
    for (addr, name) in text.lines().filter_map(parse) {
        if wanted.contains(&addr) {
            names.names.entry(addr).or_insert_with(|| name.to_string());
        }
        if let Some(r) = ranges.iter().find(|r| r.start == addr) {
            names
                .subprogs
                .entry(r.func_index as i32)
                .or_insert_with(|| name.to_string());
        }
    }
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolves_call_targets() {
        let mut raw = [0u8; 8];
        raw[0] = 0x85;
        raw[4..].copy_from_slice(&0x30i32.to_le_bytes());
        let slots = [Slot::from_bytes(0, raw)];
        let syms = "ffffffff81000000 T __bpf_call_base\nffffffff81000030 T bpf_map_lookup_elem\nffffffff81000040 t other\nffffffffc0000000 t bpf_prog_aa_sub\t[bpf]\n";
        let ranges = [JitRange {
            start: 0xffffffffc0000000,
            len: 10,
            func_index: 1,
            func_name: None,
        }];
        let n = from_kallsyms(syms, &slots, &ranges);
        assert_eq!(
            n.subprogs.get(&1).map(String::as_str),
            Some("bpf_prog_aa_sub")
        );
        assert_eq!(n.base, Some(0xffffffff81000000));
        assert_eq!(
            n.names.get(&0xffffffff81000030).map(String::as_str),
            Some("bpf_map_lookup_elem")
        );
        assert_eq!(n.names.len(), 1);
        assert_eq!(
            from_kallsyms("0000000000000000 T __bpf_call_base\n", &slots, &[]).base,
            None
        );
    }
}
