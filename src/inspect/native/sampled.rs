//! The text and role of a profile's sampled native instructions
//! (`--annotate`), decoded straight from the JIT code without building a
//! program's whole listing: a profile names a few hundred of its
//! thousands of instructions, and a listing (every instruction's text,
//! destination and line) costs more than the rest of the annotation.

use super::roles::{self, Listing, Role};
use super::{asm, code_of, split, symbols_for, Arch, Decoded, Dest, Part, Symbols};
use crate::error::Result;
use crate::kernel::kallsyms::Kallsyms;
use crate::model::image::ProgramImage;

/// Where a sample landed: its function (by `jited_ksyms` index) and bytes
/// from that function's start; None when it fell in no function.
pub(crate) type At = Option<(usize, u64)>;

/// One sampled instruction as an annotation shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Sampled {
    /// As `dump --jited` writes it; empty when its text was not made.
    pub asm: String,
    pub role: Role,
}

/// What a full listing says of each of `at`, in order: None where no
/// instruction starts (or no function was decoded). Product code decodes
/// straight from the JIT code instead; unit tests whose fixture is an
/// already built listing read it here.
#[cfg(test)]
pub(crate) fn from_image(image: &super::NativeImage, at: &[At]) -> Vec<Option<Sampled>> {
    use std::collections::HashMap;

    let mut role_cache: HashMap<usize, Vec<Role>> = HashMap::new();
    at.iter()
        .map(|a| {
            let (f, off) = (*a)?;
            let func = image.function(f)?;
            let pos = func.position(off)?;
            let i = func.insns.get(pos)?;
            let roles = role_cache
                .entry(f)
                .or_insert_with(|| roles::roles(image.arch, func));
            let role = roles.get(pos).copied().unwrap_or(Role::Body);
            (u64::from(i.offset) == off).then(|| Sampled {
                asm: i.asm.clone(),
                role,
            })
        })
        .collect()
}

/// [`from_image`] of the image [`super::build_with`] would decode when it
/// wants the text of the first `texts` of `at`: the same boundaries and
/// roles (and the symbol table read in the same cases), and for the first
/// `texts` the same text, with their destinations named; the others get
/// no text (no view prints them).
pub(crate) fn decode(
    image: &ProgramImage,
    arch: Option<Arch>,
    kptr_restrict: Option<u32>,
    symbols: &Symbols<impl FnOnce() -> Kallsyms>,
    at: &[At],
    texts: usize,
) -> Result<Vec<Option<Sampled>>> {
    let (arch, code) = code_of(image, arch, kptr_restrict)?;
    let parts = split(image, code);
    let picked = Picked::new(&parts, at.iter().take(texts));
    let wanted = |f: usize, off: u32| picked.has(f, off);
    let sparse: Vec<Sparse> = parts
        .iter()
        .map(|p| Sparse::decode(arch, p, &wanted))
        .collect();
    let empty = Kallsyms::default();
    let leaves = parts
        .iter()
        .zip(&sparse)
        .any(|(p, d)| p.wanted_leaves(d.kept.iter().map(|(_, i)| i), &parts, &wanted));
    let ksyms = symbols_for(leaves, symbols, &empty);
    let mut out = vec![None; at.len()];
    for (n, (p, d)) in parts.iter().zip(&sparse).enumerate() {
        // The first function of an index is the one a listing finds.
        if parts.iter().position(|q| q.index == p.index) != Some(n) {
            continue;
        }
        let light = Light::new(p, d, &parts, ksyms);
        let roles = roles::roles_of(arch, &light);
        for (i, (slot, a)) in out.iter_mut().zip(at).enumerate() {
            let Some((f, off)) = *a else { continue };
            if f != p.index {
                continue;
            }
            let Some(pos) = d.position(off) else {
                continue;
            };
            *slot = Some(Sampled {
                asm: if i < texts {
                    light.asm_at(pos)
                } else {
                    String::new()
                },
                role: roles.get(pos).copied().unwrap_or(Role::Body),
            });
        }
    }
    Ok(out)
}

/// One function decoded, keeping what the roles and the annotation read:
/// every instruction's start, and only the instructions whose text is
/// wanted, those with text the roles read (the leading ones, what returns
/// and restores) and those with a destination outside the function. The
/// rest, most of a large program, are dropped as they are decoded rather
/// than held, which saves the memory (and its page faults) of a listing.
struct Sparse {
    /// Each instruction's offset, in order: its position is its index.
    starts: Vec<u32>,
    /// Each position's index in `kept`, or [`Sparse::DROPPED`]: the roles
    /// ask for every position, several times.
    slots: Vec<u32>,
    /// (position, instruction), ascending by position.
    kept: Vec<(usize, Decoded)>,
}

impl Sparse {
    const DROPPED: u32 = u32::MAX;

    /// With the text of the instructions `wanted` picks.
    fn decode(arch: Arch, part: &Part<'_>, wanted: &dyn Fn(usize, u32) -> bool) -> Sparse {
        let guess = part.code.len() / 3 + 1;
        let mut starts = Vec::with_capacity(guess);
        let mut slots = Vec::with_capacity(guess);
        let mut kept = Vec::new();
        let picks = |off: u32| wanted(part.index, off);
        arch.decode_each(part.code, &picks, &mut |d| {
            let pos = starts.len();
            starts.push(d.offset);
            let leaves = d.dest.is_some_and(|t| !part.inside(t));
            let keep = picks(d.offset) || leaves || (!d.text.is_empty() && d.dest.is_none());
            if keep {
                slots.push(u32::try_from(kept.len()).unwrap_or(Self::DROPPED));
                kept.push((pos, d));
            } else {
                slots.push(Self::DROPPED);
            }
        });
        Sparse {
            starts,
            slots,
            kept,
        }
    }

    /// The position of the instruction that starts at `off`.
    fn position(&self, off: u64) -> Option<usize> {
        let off = u32::try_from(off).ok()?;
        self.starts.binary_search(&off).ok()
    }

    fn get(&self, at: usize) -> Option<&Decoded> {
        let slot = *self.slots.get(at)?;
        self.kept.get(slot as usize).map(|(_, d)| d)
    }
}

/// The instructions whose text is wanted: a bit per byte of each
/// function, asked once per instruction of the program.
struct Picked {
    /// (function index, bits) in the order of the parts.
    bits: Vec<(usize, Vec<u64>)>,
}

impl Picked {
    fn new<'a>(parts: &[Part<'_>], at: impl Iterator<Item = &'a At>) -> Picked {
        let mut bits: Vec<(usize, Vec<u64>)> = parts
            .iter()
            .map(|p| (p.index, vec![0; p.code.len() / 64 + 1]))
            .collect();
        for &(f, off) in at.flatten() {
            let Ok(off) = usize::try_from(off) else {
                continue;
            };
            for (_, b) in bits.iter_mut().filter(|(i, _)| *i == f) {
                if let Some(word) = b.get_mut(off / 64) {
                    *word |= 1 << (off % 64);
                }
            }
        }
        Picked { bits }
    }

    fn has(&self, f: usize, off: u32) -> bool {
        let off = off as usize;
        self.bits
            .iter()
            .filter(|(i, _)| *i == f)
            .any(|(_, b)| b.get(off / 64).is_some_and(|w| w & (1 << (off % 64)) != 0))
    }
}

/// One function's instructions as the roles read them, with the
/// destinations named that leave the function (few: calls and the return
/// thunk), not the thousands of branches inside it.
struct Light<'a> {
    part: &'a Part<'a>,
    decoded: &'a Sparse,
    parts: &'a [Part<'a>],
    ksyms: &'a Kallsyms,
    /// (position, target) of every instruction whose destination leaves
    /// the function, by position.
    outside: Vec<(usize, String)>,
}

impl<'a> Light<'a> {
    fn new(
        part: &'a Part<'a>,
        decoded: &'a Sparse,
        parts: &'a [Part<'a>],
        ksyms: &'a Kallsyms,
    ) -> Light<'a> {
        let outside = decoded
            .kept
            .iter()
            .filter_map(|(at, i)| {
                let dest = i.dest.filter(|&d| !part.inside(d))?;
                Some((*at, part.target(dest, parts, ksyms)))
            })
            .collect();
        Light {
            part,
            decoded,
            parts,
            ksyms,
            outside,
        }
    }

    /// The instruction's whole text, as a listing has it.
    fn asm_at(&self, at: usize) -> String {
        let Some(d) = self.decoded.get(at) else {
            return String::new();
        };
        let target = d.dest.map(|t| match self.target(at) {
            Some(named) => named.to_string(),
            None => self.part.target(t, self.parts, self.ksyms),
        });
        asm(d.text.clone(), d.dest, target.as_deref())
    }
}

impl Listing for Light<'_> {
    fn count(&self) -> usize {
        self.decoded.starts.len()
    }

    fn asm(&self, at: usize) -> &str {
        self.decoded.get(at).map_or("", |d| d.text.as_str())
    }

    fn target(&self, at: usize) -> Option<&str> {
        let i = self.outside.binary_search_by_key(&at, |(p, _)| *p).ok()?;
        self.outside.get(i).map(|(_, t)| t.as_str())
    }
}

impl Part<'_> {
    /// The destination is an offset inside this function.
    fn inside(&self, dest: Dest) -> bool {
        matches!(dest, Dest::Relative(rel) if rel >= 0 && (rel as u64) < self.len())
    }
}

#[cfg(test)]
mod tests;
