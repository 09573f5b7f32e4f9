//! The drilldown row model: one program's source lines (or source lines
//! interleaved with its translated or its native instructions), with
//! markers, profile samples, helper and kernel child rows, summary
//! ("Other") rows and a `%THIS` column whose leaves add up to exactly
//! 100.00 %.
//!
//! Pure: built from plain data. The full row list is fixed once built;
//! what is shown (expanded parents, folds, markers) is the view layer's
//! (`render::drilldown`), so folding or collapsing never changes any row's
//! numbers.

mod devmode;
mod keys;
mod rows;
mod summary;

pub(crate) use devmode::{Devmode, NoDevmodeSource, DEVMODE_NOTHING};
pub(crate) use summary::largest_remainder;
#[cfg(test)]
pub(crate) use {rows::child_text, summary::INTERRUPTS_ROW};

use std::collections::HashMap;
use std::sync::Arc;

use super::disasm::CallNames;
use super::insn::{self, Slot};
use super::native::{Arch, NativeImage};
use super::profile::{DrillProfile, KernelRow, ProfileInput};
use super::source;
use crate::model::image::{JitRange, LineRecord};
use crate::model::profile::NativeSamples;
use keys::KeyTable;
use rows::{add_direct_samples, add_native_samples, InsnText, Placement, SourceRows};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    Source,
    Mixed,
    /// Source lines with the native JIT instructions under them.
    Native,
}

impl Mode {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Mode::Source => "source",
            Mode::Mixed => "mixed",
            Mode::Native => "native",
        }
    }
}

/// Source-mapping markers, in their fixed display order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum Marker {
    SourceMismatch,
    Unmapped,
    Split,
    Backjump,
    FileSwitch,
    Header,
    SameLineCols,
    ManyInsns,
}

impl Marker {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Marker::SourceMismatch => "source-mismatch",
            Marker::Unmapped => "unmapped",
            Marker::Split => "split",
            Marker::Backjump => "backjump",
            Marker::FileSwitch => "file-switch",
            Marker::Header => "header",
            Marker::SameLineCols => "same-line-cols",
            Marker::ManyInsns => "many-insns",
        }
    }
}

/// A source row's identity: (file, line, source text); the column is not
/// part of it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub(crate) struct SourceKey {
    pub file: Option<String>,
    pub line: Option<u32>,
    pub source: Option<String>,
}

impl SourceKey {
    fn of_kernel(k: &KernelRow) -> SourceKey {
        SourceKey {
            file: k.bpf_file.clone(),
            line: k.bpf_line,
            source: k.bpf_source.clone(),
        }
    }

    /// `{basename}:{line}: {source}` (`-` for missing parts).
    pub(crate) fn text(&self) -> String {
        let line = self.line.map_or("-".to_string(), |l| l.to_string());
        let src = self.source.as_deref().unwrap_or("-");
        match &self.file {
            Some(f) => format!("{}:{line}: {src}", source::basename(f)),
            None => format!("{line}: {src}"),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum RowKind {
    /// A unique source line (index into [`Drilldown::keys`]).
    Source { key: usize },
    /// One translated instruction slot.
    Instruction { slot: usize },
    /// One native instruction: its function (index in `jited_ksyms`
    /// order) and its offset there.
    Native { func: usize, offset: u32 },
    /// The start of a JITed function in the native view.
    Function { func: usize },
    /// A helper/kernel function (or exact IP) called from the parent line,
    /// or, under the summary row of samples without source metadata, one
    /// of the program's own native instructions or a helper/kernel
    /// function called from a place no line record covers.
    Child,
    /// A `--devmode` line from the local source file.
    Context,
    /// An "Other …" row.
    Summary,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Row {
    pub kind: RowKind,
    /// CODE text without the `+ `/`- ` prefix and markers.
    pub text: String,
    pub markers: Vec<Marker>,
    /// The row's own samples.
    pub samples: u64,
    /// Whether the row carries `%THIS` itself.
    pub leaf: bool,
    /// Own basis points of 10 000 (leaves only).
    pub bp: u32,
    /// Child rows: their source row.
    pub parent: Option<usize>,
    /// Source rows: their child rows.
    pub children: Vec<usize>,
}

impl Row {
    fn new(kind: RowKind, text: String) -> Row {
        Row {
            kind,
            text,
            markers: Vec::new(),
            samples: 0,
            leaf: false,
            bp: 0,
            parent: None,
            children: Vec::new(),
        }
    }
}

/// Where the instruction text comes from: brr's own disassembly of the
/// translated instructions, or of the native code for an architecture.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Disasm {
    Internal,
    Native(Arch),
}

impl Disasm {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Disasm::Internal => "internal",
            Disasm::Native(arch) => arch.name(),
        }
    }
}

/// The program as the drilldown needs it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ProgramData<'a> {
    pub id: u32,
    pub name: &'a str,
    pub xlated: &'a [u8],
    pub lines: &'a [LineRecord],
    pub jit_ranges: &'a [JitRange],
}

#[derive(Debug, Clone, Default)]
pub(crate) struct Options {
    pub mixed: bool,
    /// Exact-IP children instead of function groups.
    pub exact_ips: bool,
    /// Keep only the first N detail rows (textmode); 0 = all.
    pub source_limit: usize,
    pub call_names: CallNames,
    /// The native view: source lines with `native`'s instructions under
    /// them (the source view's rows when there is no native code).
    pub native_view: bool,
    pub native: Option<Arc<NativeImage>>,
}

/// One native instruction that took direct samples (the profile's count
/// per JIT address), as a drilldown row: for a program without line info
/// (every bpftrace program) the only place its own time shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct NativeRow {
    pub ip: u64,
    pub samples: u64,
    /// CODE text: `  function+0xoff: instruction`, the instruction when
    /// the JIT code was decoded.
    pub text: String,
}

/// The rows of one program's native samples, most samples first as given;
/// `code` is the program's decoded JIT code, when it could be read.
pub(crate) fn native_rows(samples: &[NativeSamples], code: Option<&NativeImage>) -> Vec<NativeRow> {
    samples
        .iter()
        .filter(|n| n.samples > 0)
        .map(|n| {
            let func = n.func_index.and_then(|i| code?.functions.get(i));
            let name = func.map(|f| f.name.as_str()).or(n.function.as_deref());
            let asm = func.zip(n.offset).and_then(|(f, off)| {
                let i = f
                    .insns
                    .binary_search_by_key(&off, |i| u64::from(i.offset))
                    .ok()?;
                Some(f.insns[i].asm.as_str())
            });
            let at = match (name, n.offset) {
                (Some(name), Some(off)) => format!("{name}+{off:#x}"),
                (None, Some(off)) => format!("+{off:#x}"),
                (_, None) => format!("{:#x}", n.ip),
            };
            NativeRow {
                ip: n.ip,
                samples: n.samples,
                text: match asm {
                    Some(a) => format!("  {at}: {a}"),
                    None => format!("  {at}"),
                },
            }
        })
        .collect()
}

#[derive(Debug, Clone)]
pub(crate) struct Drilldown {
    pub program_id: u32,
    pub name: String,
    pub mode: Mode,
    pub disasm: Disasm,
    pub exact_ips: bool,
    pub keys: Vec<SourceKey>,
    /// The full row list: detail rows (children included) then summary rows.
    pub rows: Vec<Row>,
    pub profile: Option<ProfileInput>,
}

impl Drilldown {
    /// Build the full row list. Fails only for bare `--devmode` when no
    /// source row resolves to a local file.
    pub(crate) fn build(
        prog: ProgramData<'_>,
        profile: Option<&ProfileInput>,
        opts: &Options,
        devmode: Option<Devmode<'_>>,
    ) -> Result<Drilldown, NoDevmodeSource> {
        Self::build_with_native(prog, profile, &[], opts, devmode)
    }

    /// [`Drilldown::build`], with the profile's sampled native
    /// instructions: those no line record covers are listed under the
    /// summary row of direct samples without source metadata.
    pub(crate) fn build_with_native(
        prog: ProgramData<'_>,
        profile: Option<&ProfileInput>,
        native: &[NativeRow],
        opts: &Options,
        devmode: Option<Devmode<'_>>,
    ) -> Result<Drilldown, NoDevmodeSource> {
        let slots = insn::slots(prog.xlated);
        let mut table = KeyTable::new(prog.lines, &insn::match_lines(slots.len(), prog.lines));
        let prog_profile = profile.and_then(|p| p.program.as_ref());
        let code = opts.native.as_deref().filter(|_| opts.native_view);
        // Every line record the native code falls under needs a key.
        let rec_key = code.map(|_| table.record_keys(prog.lines));
        let (mut rows, placed) = Drilldown::detail_rows(
            &table,
            prog_profile,
            opts,
            &slots,
            code.zip(rec_key.as_deref()),
        );
        if let Some(p) = prog_profile {
            match &placed {
                Placement::Native(row_of) => add_native_samples(&mut rows, p, row_of),
                Placement::Slots(row_of_slot) => add_direct_samples(
                    &mut rows,
                    p,
                    &table.index,
                    row_of_slot,
                    &slots,
                    prog.jit_ranges,
                ),
            }
        }
        let mut dd = Drilldown {
            program_id: prog.id,
            name: prog.name.to_string(),
            mode: if opts.native_view {
                Mode::Native
            } else if opts.mixed {
                Mode::Mixed
            } else {
                Mode::Source
            },
            disasm: code.map_or(Disasm::Internal, |n| Disasm::Native(n.arch)),
            exact_ips: opts.exact_ips,
            keys: table.keys,
            rows,
            profile: profile.cloned(),
        };
        if let Some(dev) = devmode {
            dd.enrich(dev)?;
        }
        let cut = dd.apply_source_limit(opts.source_limit);
        if let Some(p) = prog_profile {
            let line_limit = profile.map_or(0, |p| p.line_limit);
            // The engine maps an address to the line record at or below
            // it: only addresses below the first record have none.
            let first = prog.lines.iter().filter_map(|l| l.jited_addr).min();
            let native: Vec<&NativeRow> = native
                .iter()
                .filter(|r| first.is_none_or(|f| r.ip < f))
                .collect();
            dd.add_summary_rows(p, line_limit, opts.source_limit, cut, &native);
            dd.link_children();
            // Interrupt samples have a row of their own among the leaves.
            dd.assign_basis_points(p.inclusive_samples + p.interrupt_samples);
        } else {
            dd.link_children();
        }
        Ok(dd)
    }

    /// The source, instruction and child rows of the view `opts` asks for,
    /// and where samples go on them. Mixed mode without translated
    /// instructions, and the native view without native code, show the
    /// source rows; a program without line records always lists its
    /// instructions.
    fn detail_rows(
        table: &KeyTable,
        prog_profile: Option<&DrillProfile>,
        opts: &Options,
        slots: &[Slot],
        native: Option<(&NativeImage, &[Option<usize>])>,
    ) -> (Vec<Row>, Placement) {
        let kernel_list: &[KernelRow] = match prog_profile {
            Some(p) if opts.exact_ips => &p.kernel_ips,
            Some(p) => &p.kernel_functions,
            None => &[],
        };
        let maker = SourceRows::new(table, kernel_list, opts.exact_ips);
        if let Some((image, rec_key)) = native {
            let (rows, row_of) = maker.native(image, rec_key);
            return (rows, Placement::Native(row_of));
        }
        let mixed = opts.mixed && !opts.native_view && !slots.is_empty();
        if table.keys.is_empty() || mixed {
            let second = insn::second_halves(slots);
            let (rows, row_of_slot) = maker.interleaved(&mut InsnText {
                slots,
                second: &second,
                call_names: &opts.call_names,
            });
            return (rows, Placement::Slots(row_of_slot));
        }
        (maker.source_only(), Placement::Slots(HashMap::new()))
    }

    pub(crate) fn profiled(&self) -> bool {
        self.profile.is_some()
    }

    /// Rows that have child rows (their group can be expanded).
    pub(crate) fn parents(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.rows.len()).filter(|&i| !self.rows[i].children.is_empty())
    }
}
