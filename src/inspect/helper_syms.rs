//! Names of the kernel functions that helper calls in an xlated image jump
//! to, and the kernel symbols of the program's JITed subprograms, from the
//! kernel symbol table.

use crate::inspect::disasm::CallNames;
use crate::inspect::insn::Slot;
use crate::kernel::kallsyms::Kallsyms;
use crate::model::image::JitRange;

/// Resolve the helper-call targets of `slots` and the symbols of the
/// program's JITed subprograms. An unreadable kallsyms or hidden addresses
/// give an empty table (calls are then named by helper ID).
pub(crate) fn from_kallsyms(syms: &Kallsyms, slots: &[Slot], ranges: &[JitRange]) -> CallNames {
    let Some(base) = syms.address_of("__bpf_call_base") else {
        return CallNames::default();
    };
    let mut names = CallNames {
        base: Some(base),
        ..Default::default()
    };
    for addr in CallNames::targets(slots, base) {
        if let Some(name) = syms.exact(addr) {
            names.names.entry(addr).or_insert_with(|| name.to_string());
        }
    }
    for r in ranges {
        if let Some(name) = syms.exact(r.start) {
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
        let n = from_kallsyms(&Kallsyms::parse(syms), &slots, &ranges);
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
            from_kallsyms(
                &Kallsyms::parse("0000000000000000 T __bpf_call_base\n"),
                &slots,
                &[]
            )
            .base,
            None
        );
    }
}
