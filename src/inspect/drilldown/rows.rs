//! The detail rows of each view (source, mixed, native), their helper and
//! kernel child rows, and where a profile's direct samples land on them.

use std::collections::{HashMap, HashSet};

use super::keys::KeyTable;
use super::{Marker, Row, RowKind, SourceKey};
use crate::inspect::disasm::{self, CallNames};
use crate::inspect::insn::Slot;
use crate::inspect::native::roles::{self, Role};
use crate::inspect::native::{offset_text, NativeImage};
use crate::inspect::profile::{DrillProfile, KernelRow};
use crate::model::image::JitRange;

pub(super) fn child_row(text: String, samples: u64) -> Row {
    let mut r = Row::new(RowKind::Child, text);
    r.samples = samples;
    r.leaf = true;
    r
}

/// The text of a kernel child row.
pub(crate) fn child_text(k: &KernelRow, exact_ips: bool) -> String {
    let symbol = k.symbol.clone().unwrap_or_else(|| format!("0x{:x}", k.ip));
    let detail = if exact_ips {
        match (k.symbol.is_some(), k.symbol_offset) {
            (true, Some(off)) if off != 0 => format!("+0x{off:x}"),
            _ => String::new(),
        }
    } else if k.ip_count > 1 {
        format!(" ({} IPs)", k.ip_count)
    } else {
        String::new()
    };
    let module = k
        .module
        .as_ref()
        .map(|m| format!(" [{m}]"))
        .unwrap_or_default();
    format!("  -> {} {symbol}{detail}{module}", k.kind)
}

/// Makes the source rows and their kernel child rows.
pub(super) struct SourceRows<'a> {
    table: &'a KeyTable,
    markers: Vec<Vec<Marker>>,
    children_of: HashMap<usize, Vec<&'a KernelRow>>,
    exact_ips: bool,
}

impl<'a> SourceRows<'a> {
    pub(super) fn new(
        table: &'a KeyTable,
        kernel: &'a [KernelRow],
        exact_ips: bool,
    ) -> SourceRows<'a> {
        let mut children_of: HashMap<usize, Vec<&KernelRow>> = HashMap::new();
        for k in kernel {
            if let Some(&key) = table.index.get(&SourceKey::of_kernel(k)) {
                children_of.entry(key).or_default().push(k);
            }
        }
        SourceRows {
            table,
            markers: table.markers(),
            children_of,
            exact_ips,
        }
    }

    fn source_row(&self, key: usize) -> Row {
        let mut r = Row::new(RowKind::Source { key }, self.table.keys[key].text());
        r.markers = self.markers[key].clone();
        r
    }

    fn push_children(&self, rows: &mut Vec<Row>, key: usize) {
        for k in self.children_of.get(&key).into_iter().flatten() {
            rows.push(child_row(child_text(k, self.exact_ips), k.samples));
        }
    }

    /// Source mode: one leaf row per key, each followed by its children.
    pub(super) fn source_only(&self) -> Vec<Row> {
        let mut rows = Vec::new();
        for k in 0..self.table.keys.len() {
            let mut r = self.source_row(k);
            r.leaf = true;
            rows.push(r);
            self.push_children(&mut rows, k);
        }
        rows
    }

    /// Mixed mode (and programs without line info): instruction rows, each
    /// run headed by its source row; a key's children follow only its first
    /// source row. Returns the rows and the row of each shown slot.
    pub(super) fn interleaved(&self, text: &mut InsnText<'_>) -> (Vec<Row>, HashMap<usize, usize>) {
        let mut rows = Vec::new();
        let mut row_of_slot = HashMap::new();
        let mut runs = Runs::default();
        for (i, &k) in self.table.slot_key.iter().enumerate() {
            let Some(text) = text.of_slot(i) else {
                continue;
            };
            let r = Row::new(RowKind::Instruction { slot: i }, text);
            row_of_slot.insert(i, self.push_insn(&mut rows, &mut runs, k, r));
        }
        (rows, row_of_slot)
    }

    /// Push instruction row `r`, whose source key is `k`: headed by that
    /// key's source row when it starts a run (the key's children after its
    /// first source row only), marked unmapped without a key. Returns the
    /// instruction row's index.
    fn push_insn(
        &self,
        rows: &mut Vec<Row>,
        runs: &mut Runs,
        k: Option<usize>,
        mut r: Row,
    ) -> usize {
        if runs.prev != Some(k) {
            if let Some(k) = k {
                rows.push(self.source_row(k));
                if runs.shown.insert(k) {
                    self.push_children(rows, k);
                }
            }
        }
        runs.prev = Some(k);
        if k.is_none() {
            r.markers.push(Marker::Unmapped);
        }
        r.leaf = true;
        let at = rows.len();
        rows.push(r);
        at
    }
}

/// Where the instruction rows are: the source key of the run the last row
/// is in (None before the first row), and the keys whose children have
/// been shown.
#[derive(Default)]
struct Runs {
    prev: Option<Option<usize>>,
    shown: HashSet<usize>,
}

/// The instruction text of each slot in mixed mode, in the layout of
/// `bpftool prog dump xlated`: index, opcode, kernel notation.
pub(super) struct InsnText<'a> {
    pub(super) slots: &'a [Slot],
    pub(super) second: &'a [bool],
    pub(super) call_names: &'a CallNames,
}

impl InsnText<'_> {
    /// None: the slot gets no row (the upper half of an ld_imm64, shown
    /// with its lower half).
    fn of_slot(&mut self, i: usize) -> Option<String> {
        if self.second.get(i).copied().unwrap_or(true) {
            return None;
        }
        let s = self.slots.get(i)?;
        let next = self.slots.get(i + 1);
        Some(format!(
            "  {:4}: ({:02x}) {}",
            s.index(),
            s.opcode,
            disasm::text(s, next, self.call_names)
        ))
    }
}

/// A native instruction row's text: its offset in the function, the
/// instruction, and the part of the JIT it belongs to unless it is the
/// program's own code.
fn native_text(offset: u32, asm: &str, role: Role) -> String {
    let mut t = format!("  {:>8}  {asm}", offset_text(i64::from(offset)));
    if role != Role::Body {
        t.push_str(&format!("  [{}]", role.name()));
    }
    t
}

impl SourceRows<'_> {
    /// Native mode: each function's heading, then its instructions, each
    /// run headed by the source row of its line record (children after a
    /// key's first source row). Returns the rows and the row of each
    /// (function, offset).
    pub(super) fn native(
        &self,
        image: &NativeImage,
        rec_key: &[Option<usize>],
    ) -> (Vec<Row>, HashMap<(usize, u32), usize>) {
        let mut rows = Vec::new();
        let mut row_of = HashMap::new();
        let mut runs = Runs::default();
        for f in &image.functions {
            rows.push(Row::new(
                RowKind::Function { func: f.index },
                format!("{}:", f.name),
            ));
            let roles = roles::roles(image.arch, f);
            // Each function's first instruction heads a run.
            runs.prev = None;
            for (n, i) in f.insns.iter().enumerate() {
                let k = i.line.and_then(|l| rec_key.get(l).copied().flatten());
                let role = roles.get(n).copied().unwrap_or(Role::Body);
                let r = Row::new(
                    RowKind::Native {
                        func: f.index,
                        offset: i.offset,
                    },
                    native_text(i.offset, &i.asm, role),
                );
                let at = self.push_insn(&mut rows, &mut runs, k, r);
                row_of.insert((f.index, i.offset), at);
            }
        }
        (rows, row_of)
    }
}

/// Where direct samples go: the row of each translated slot (none in
/// source mode, where they go by source key), or of each native
/// instruction.
pub(super) enum Placement {
    Slots(HashMap<usize, usize>),
    Native(HashMap<(usize, u32), usize>),
}

/// Add each sampled native instruction's samples to its row.
pub(super) fn add_native_samples(
    rows: &mut [Row],
    p: &DrillProfile,
    row_of: &HashMap<(usize, u32), usize>,
) {
    for n in &p.native {
        let at = n
            .func_index
            .zip(n.offset.and_then(|o| u32::try_from(o).ok()))
            .and_then(|k| row_of.get(&k));
        if let Some(&row) = at {
            rows[row].samples += n.samples;
        }
    }
}

/// Add each hotspot's samples to its row: by source key when there are no
/// instruction rows, else by the slot its offset or JIT address falls in.
pub(super) fn add_direct_samples(
    rows: &mut [Row],
    p: &DrillProfile,
    index: &HashMap<SourceKey, usize>,
    row_of_slot: &HashMap<usize, usize>,
    slots: &[Slot],
    jit_ranges: &[JitRange],
) {
    let source_rows: HashMap<usize, usize> = rows
        .iter()
        .enumerate()
        .filter_map(|(i, r)| match r.kind {
            RowKind::Source { key } if r.leaf => Some((key, i)),
            _ => None,
        })
        .collect();
    for h in &p.hotspots {
        let target = if row_of_slot.is_empty() {
            let key = SourceKey {
                file: h.file.clone(),
                line: h.line,
                source: h.source.clone(),
            };
            index.get(&key).and_then(|k| source_rows.get(k)).copied()
        } else {
            // A line record's samples are of all its instructions, not of
            // the first one its offset names: they go on the source row
            // heading its run, as the line's total (the native view has
            // them by instruction).
            slot_for(h.instruction_offset, h.jited_address, slots, jit_ranges)
                .and_then(|s| row_of_slot.get(&s))
                .map(|&at| heading(rows, at))
        };
        if let Some(row) = target {
            let r = &mut rows[row];
            let mixed = !row_of_slot.is_empty();
            if mixed && r.samples == 0 && matches!(r.kind, RowKind::Source { .. }) {
                r.leaf = true;
                r.text.push_str(LINE_TOTAL);
            }
            r.samples += h.samples;
        }
    }
}

/// The label of a mixed view's source row that holds its line's samples.
pub(crate) const LINE_TOTAL: &str = "  (line total)";

/// The source row heading the run instruction row `at` is in; `at`
/// itself when there is none (an instruction without a line).
fn heading(rows: &[Row], at: usize) -> usize {
    if rows[at].markers.contains(&Marker::Unmapped) {
        return at;
    }
    rows.get(..at)
        .and_then(|before| {
            before
                .iter()
                .rposition(|r| matches!(r.kind, RowKind::Source { .. }))
        })
        .unwrap_or(at)
}

/// Map a hotspot to a slot: its xlated byte offset, or failing that its JIT
/// address's offset within its range when that equals a slot offset.
fn slot_for(
    insn_off: Option<u64>,
    jited: Option<u64>,
    slots: &[Slot],
    ranges: &[JitRange],
) -> Option<usize> {
    let off = match insn_off {
        Some(o) => o,
        None => {
            let a = jited?;
            let r = ranges.iter().find(|r| a >= r.start && a < r.end())?;
            a - r.start
        }
    };
    (off % 8 == 0 && (off / 8) < slots.len() as u64).then_some((off / 8) as usize)
}
