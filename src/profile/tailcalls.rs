//! The tail-call evidence of the `tail_calls` hint: does a program call
//! `bpf_tail_call` (seen in its translated instructions), and how deep is
//! the chain through its prog_array maps (read with map lookups, which
//! change nothing).

use std::collections::BTreeSet;

use crate::kernel::prog_reads;
use crate::model::profile::{Hint, Profile};

const BPF_FUNC_TAIL_CALL: i32 = 12;
/// The kernel stops a chain after this many tail calls.
const MAX_DEPTH: usize = 33;
/// prog_array slots read per map at most (they are usually a handful).
const MAX_SLOTS: u32 = 4096;

/// Whether translated instructions call `bpf_tail_call` (the kernel shows
/// its internal tail-call instruction as that helper call in dumps).
pub(crate) fn calls_tail_call(xlated: &[u8]) -> bool {
    xlated.chunks_exact(8).any(|i| {
        let imm = i32::from_ne_bytes([i[4], i[5], i[6], i[7]]);
        // BPF_JMP | BPF_CALL with src_reg 0: a helper call.
        i[0] == 0x85 && i[1] >> 4 == 0 && imm == BPF_FUNC_TAIL_CALL
    })
}

/// What the chain walk needs to know of one program.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct TailNode {
    pub name: String,
    pub tail_calls: bool,
    /// Programs in its prog_array maps.
    pub targets: Vec<u32>,
}

/// Reads programs for the walk; `None` for one that is gone.
pub(crate) trait Programs {
    fn node(&mut self, id: u32) -> Option<TailNode>;
}

/// The live kernel.
pub(crate) struct Kernel;

impl Programs for Kernel {
    fn node(&mut self, id: u32) -> Option<TailNode> {
        let (name, xlated, map_ids) = prog_reads::name_code_and_maps(id)?;
        let tail_calls = calls_tail_call(&xlated);
        let targets = if tail_calls {
            map_ids
                .iter()
                .flat_map(|&map| prog_reads::prog_array_targets(map, MAX_SLOTS))
                .collect()
        } else {
            Vec::new()
        };
        Some(TailNode {
            name,
            tail_calls,
            targets,
        })
    }
}

/// The longest chain of tail-call targets from `id` (ID and name, the
/// first callee first); empty when `id` does not tail-call.
pub(crate) fn chain(id: u32, progs: &mut dyn Programs) -> Vec<(u32, String)> {
    fn walk(
        node: &TailNode,
        progs: &mut dyn Programs,
        seen: &mut BTreeSet<u32>,
    ) -> Vec<(u32, String)> {
        if !node.tail_calls || seen.len() > MAX_DEPTH {
            return Vec::new();
        }
        let mut best: Vec<(u32, String)> = Vec::new();
        for &t in &node.targets {
            if !seen.insert(t) {
                continue;
            }
            if let Some(n) = progs.node(t) {
                let mut c = vec![(t, n.name.clone())];
                c.extend(walk(&n, progs, seen));
                if c.len() > best.len() {
                    best = c;
                }
            }
            seen.remove(&t);
        }
        best
    }
    let Some(root) = progs.node(id) else {
        return Vec::new();
    };
    let mut seen = BTreeSet::from([id]);
    walk(&root, progs, &mut seen)
}

/// `tail_calls` hints for the profile's programs that tail-call, costed
/// with the samples of the whole chain (a tail call does not return, so
/// the callees' samples are the caller's work).
pub(crate) fn hints(profile: &Profile, progs: &mut dyn Programs) -> Vec<Hint> {
    profile
        .programs
        .iter()
        .filter_map(|p| {
            let chain = chain(p.id, progs);
            let samples: u64 = p.inclusive_samples()
                + chain
                    .iter()
                    .filter_map(|(id, _)| profile.program(*id))
                    .map(|c| c.inclusive_samples())
                    .sum::<u64>();
            let names: Vec<String> = chain.into_iter().map(|(_, n)| n).collect();
            super::hints::tail_calls(p, profile.cpu_percent(samples), &names)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    struct Fake(HashMap<u32, TailNode>);

    impl Programs for Fake {
        fn node(&mut self, id: u32) -> Option<TailNode> {
            self.0.get(&id).cloned()
        }
    }

    fn node(name: &str, targets: &[u32]) -> TailNode {
        TailNode {
            name: name.into(),
            tail_calls: !targets.is_empty(),
            targets: targets.to_vec(),
        }
    }

    #[test]
    fn tail_call_instruction_is_recognised() {
        let call = |imm: i32, src: u8| {
            let mut i = vec![0x85, src << 4, 0, 0];
            i.extend(imm.to_ne_bytes());
            i
        };
        assert!(calls_tail_call(&[call(5, 0), call(12, 0)].concat()));
        assert!(!calls_tail_call(&call(5, 0)), "another helper");
        assert!(!calls_tail_call(&call(12, 1)), "a BPF-to-BPF call");
        assert!(!calls_tail_call(&call(12, 0)[..7]), "truncated");
    }

    #[test]
    fn longest_chain_with_cycles_and_vanished_programs() {
        let mut f = Fake(HashMap::from([
            (1, node("entry", &[2, 3, 9])),
            (2, node("parse", &[4])),
            (3, node("leaf_a", &[])),
            (4, node("loop", &[1, 4, 5])),
            (5, node("end", &[])),
        ]));
        let names: Vec<String> = chain(1, &mut f).into_iter().map(|(_, n)| n).collect();
        assert_eq!(names, vec!["parse", "loop", "end"]);
        assert!(chain(3, &mut f).is_empty(), "no tail call");
        assert!(chain(42, &mut f).is_empty(), "gone");
    }
}
