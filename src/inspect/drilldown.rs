//! The drilldown row model: one program's source lines (or source lines
//! interleaved with its translated or its native instructions), with
//! markers, profile samples, helper and
//! kernel child rows, summary ("Other") rows and a `%THIS` column whose
//! leaves add up to exactly 100.00 %.
//!
//! Pure: built from plain data. The full row list is fixed once built;
//! what is shown (expanded parents, folds, markers) is the view layer's
//! (`render::drilldown`), so folding or collapsing never changes any row's
//! numbers.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::Arc;

use super::disasm::{self, CallNames};
use super::insn::{self, Slot};
use super::native::roles::{self, Role};
use super::native::{offset_text, Arch, NativeImage};
use super::profile::{DrillProfile, KernelRow, ProfileInput};
use super::source::{self, Mapped, Placed, SourceTree};
use crate::error::BrrError;
use crate::model::image::{JitRange, LineRecord};
use crate::model::profile::NativeSamples;

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

/// `--devmode` input: the tree and whether DIR was left to default.
pub(crate) struct Devmode<'a> {
    pub tree: &'a mut SourceTree,
    pub bare: bool,
}

pub(crate) const DEVMODE_NOTHING: &str = "devmode did not resolve any source files from the current directory; pass --devmode DIR to point at the matching source tree";

/// A bare `--devmode` resolved no source row to a local file. The TUI shows
/// it as a warning; `top --textmode` fails with it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct NoDevmodeSource;

impl std::fmt::Display for NoDevmodeSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(DEVMODE_NOTHING)
    }
}

impl From<NoDevmodeSource> for BrrError {
    fn from(_: NoDevmodeSource) -> BrrError {
        BrrError::Failed(DEVMODE_NOTHING.to_string())
    }
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

/// Split `units` over `counts` in proportion to `counts / denom` by the
/// largest-remainder rule; ties go to the earlier position. Only positive
/// counts take part in the remainder round.
pub(crate) fn largest_remainder(units: u64, counts: &[u64], denom: u64) -> Vec<u64> {
    if denom == 0 {
        return vec![0; counts.len()];
    }
    let u = units as u128;
    let d = denom as u128;
    let mut out: Vec<u64> = counts.iter().map(|&c| (c as u128 * u / d) as u64).collect();
    let given: u64 = out.iter().sum();
    let mut order: Vec<usize> = (0..counts.len()).filter(|&i| counts[i] > 0).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(counts[i] as u128 * u % d));
    for &i in order.iter().take(units.saturating_sub(given) as usize) {
        out[i] += 1;
    }
    out
}

fn header_file(file: &str) -> bool {
    let base = source::basename(file);
    base.rsplit_once('.').is_some_and(|(_, ext)| {
        matches!(
            ext.to_ascii_lowercase().as_str(),
            "h" | "hh" | "hpp" | "hxx"
        )
    })
}

/// Per-key facts gathered while walking the slots.
#[derive(Default)]
struct KeyFacts {
    slots: usize,
    columns: BTreeSet<Option<u32>>,
    blocks: usize,
    backjump: bool,
    file_switch: bool,
}

fn child_row(text: String, samples: u64) -> Row {
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

/// The program's source keys and which slot maps to which.
struct KeyTable {
    keys: Vec<SourceKey>,
    facts: Vec<KeyFacts>,
    index: HashMap<SourceKey, usize>,
    /// Per slot: its key (records with no file, line or text map to none).
    slot_key: Vec<Option<usize>>,
}

impl KeyTable {
    fn new(lines: &[LineRecord], rec_of_slot: &[Option<usize>]) -> KeyTable {
        let mut t = KeyTable {
            keys: Vec::new(),
            facts: Vec::new(),
            index: HashMap::new(),
            slot_key: vec![None; rec_of_slot.len()],
        };
        for (i, rec) in rec_of_slot.iter().enumerate() {
            let Some(rec) = rec.and_then(|r| lines.get(r)) else {
                continue;
            };
            let Some(k) = t.key_of(rec) else {
                continue;
            };
            t.slot_key[i] = Some(k);
            t.facts[k].slots += 1;
            t.facts[k].columns.insert(rec.column);
        }
        t.count_blocks();
        t
    }

    /// The key of every line record (None for one with no file, line or
    /// text), adding those no translated slot maps to.
    fn record_keys(&mut self, lines: &[LineRecord]) -> Vec<Option<usize>> {
        lines.iter().map(|rec| self.key_of(rec)).collect()
    }

    /// The key of one line record, added when new; None for a record with
    /// no file, line or text.
    fn key_of(&mut self, rec: &LineRecord) -> Option<usize> {
        if rec.file.is_none() && rec.line.is_none() && rec.source.is_none() {
            return None;
        }
        let key = SourceKey {
            file: rec.file.clone(),
            line: rec.line,
            source: rec.source.clone(),
        };
        let k = *self.index.entry(key.clone()).or_insert_with(|| {
            self.keys.push(key);
            self.facts.push(KeyFacts::default());
            self.keys.len() - 1
        });
        Some(k)
    }

    /// Blocks are maximal runs of slots with the same key (unmapped runs
    /// count as runs too, so they separate blocks).
    fn count_blocks(&mut self) {
        let mut prev_block: Option<Option<usize>> = None;
        for &k in &self.slot_key {
            if prev_block == Some(k) {
                continue;
            }
            if let Some(k) = k {
                self.facts[k].blocks += 1;
                if let Some(Some(p)) = prev_block {
                    let (a, b) = (&self.keys[p], &self.keys[k]);
                    if a.file != b.file {
                        self.facts[k].file_switch = true;
                    } else if let (Some(la), Some(lb)) = (a.line, b.line) {
                        if la > lb {
                            self.facts[k].backjump = true;
                        }
                    }
                }
            }
            prev_block = Some(k);
        }
    }

    /// Each key's markers, in display order.
    fn markers(&self) -> Vec<Vec<Marker>> {
        self.keys
            .iter()
            .zip(&self.facts)
            .map(|(key, f)| {
                let mut m = Vec::new();
                if f.blocks > 1 {
                    m.push(Marker::Split);
                }
                if f.backjump {
                    m.push(Marker::Backjump);
                }
                if f.file_switch {
                    m.push(Marker::FileSwitch);
                }
                if key.file.as_deref().is_some_and(header_file) {
                    m.push(Marker::Header);
                }
                if f.columns.len() > 1 {
                    m.push(Marker::SameLineCols);
                }
                if f.slots >= 8 {
                    m.push(Marker::ManyInsns);
                }
                m
            })
            .collect()
    }
}

/// Makes the source rows and their kernel child rows.
struct SourceRows<'a> {
    table: &'a KeyTable,
    markers: Vec<Vec<Marker>>,
    children_of: HashMap<usize, Vec<&'a KernelRow>>,
    exact_ips: bool,
}

impl<'a> SourceRows<'a> {
    fn new(table: &'a KeyTable, kernel: &'a [KernelRow], exact_ips: bool) -> SourceRows<'a> {
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
    fn source_only(&self) -> Vec<Row> {
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
    fn interleaved(&self, text: &mut InsnText<'_>) -> (Vec<Row>, HashMap<usize, usize>) {
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
struct InsnText<'a> {
    slots: &'a [Slot],
    second: &'a [bool],
    call_names: &'a CallNames,
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
    fn native(
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
enum Placement {
    Slots(HashMap<usize, usize>),
    Native(HashMap<(usize, u32), usize>),
}

/// Add each sampled native instruction's samples to its row.
fn add_native_samples(rows: &mut [Row], p: &DrillProfile, row_of: &HashMap<(usize, u32), usize>) {
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
fn add_direct_samples(
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
            index.get(&key).and_then(|k| source_rows.get(k))
        } else {
            slot_for(h.instruction_offset, h.jited_address, slots, jit_ranges)
                .and_then(|s| row_of_slot.get(&s))
        };
        if let Some(&row) = target {
            rows[row].samples += h.samples;
        }
    }
}

/// The samples of one kind (direct or under-eBPF) that no detail row shows,
/// and the reasons they may have been left out.
struct Unshown {
    total: u64,
    shown: u64,
    unmapped: u64,
    omitted: u64,
    /// Samples without an instruction offset that the profile's (limited)
    /// list still holds; the rest of `unmapped` is among the omitted.
    null_retained: u64,
    cut: u64,
}

impl Unshown {
    /// The unshown samples split into (no source metadata, over the line
    /// limit, over the source limit, anything else), each reason taking at
    /// most what is left after the ones before it.
    fn buckets(&self) -> [u64; 4] {
        let mut rem = self.total.saturating_sub(self.shown);
        let u = self.unmapped.saturating_sub(self.null_retained);
        let own = [self.unmapped, self.omitted - self.omitted.min(u), self.cut];
        let mut out = [0u64; 4];
        for (o, c) in out.iter_mut().zip(own) {
            *o = rem.min(c);
            rem -= *o;
        }
        out[3] = rem;
        out
    }
}

/// The row of interrupts that arrived while the program ran.
pub(crate) const INTERRUPTS_ROW: &str = "Interrupts while the program ran (not its calls)";

/// Where [`summary_labels`] puts the direct and the under-eBPF samples
/// without source metadata: the summary rows that list where they went.
const DIRECT_UNMAPPED: usize = 0;
const UNDER_UNMAPPED: usize = 4;

/// The summary rows' counts and texts, in display order.
fn summary_labels(
    d: [u64; 4],
    u: [u64; 4],
    unaccounted: u64,
    interrupts: u64,
    line_limit: usize,
    source_limit: usize,
) -> [(u64, String); 10] {
    [
        (
            d[0],
            "eBPF samples without BTF/JIT source metadata".to_string(),
        ),
        (
            d[1],
            format!("Other eBPF samples not shown (--line-limit={line_limit})"),
        ),
        (
            d[2],
            format!("Other eBPF source rows not shown (--source-limit={source_limit})"),
        ),
        (
            d[3],
            "Other eBPF samples not placed on a source/JIT detail row".to_string(),
        ),
        (
            u[0],
            "under-eBPF samples without BPF caller source metadata".to_string(),
        ),
        (
            u[1],
            format!("Other under-eBPF samples not shown (--line-limit={line_limit})"),
        ),
        (
            u[2],
            format!("Other under-eBPF source rows not shown (--source-limit={source_limit})"),
        ),
        (
            u[3],
            "Other under-eBPF samples not placed on a source/JIT detail row".to_string(),
        ),
        (
            unaccounted,
            "Unaccounted samples (inclusive attribution invariant mismatch)".to_string(),
        ),
        (interrupts, INTERRUPTS_ROW.to_string()),
    ]
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

    /// Insert `--devmode` context rows and `[source-mismatch]` markers.
    fn enrich(&mut self, dev: Devmode<'_>) -> Result<(), NoDevmodeSource> {
        let tree = dev.tree;
        let mut mapped = Vec::new();
        let mut mapped_rows = Vec::new();
        let mut any_resolved = false;
        for (i, r) in self.rows.iter().enumerate() {
            if let RowKind::Source { key } = r.kind {
                let k = &self.keys[key];
                if let (Some(file), Some(line)) = (&k.file, k.line) {
                    any_resolved |= tree.resolve(file).resolved().is_some();
                    mapped.push(Mapped {
                        file: file.clone(),
                        line,
                    });
                    mapped_rows.push(i);
                }
            }
        }
        if dev.bare && !any_resolved {
            return Err(NoDevmodeSource);
        }
        for (&i, m) in mapped_rows.iter().zip(&mapped) {
            let RowKind::Source { key } = self.rows[i].kind else {
                continue;
            };
            if let Some(src) = self.keys[key].source.clone() {
                if source::mismatch(tree, &m.file, m.line, &src).is_some() {
                    self.rows[i].markers.insert(0, Marker::SourceMismatch);
                }
            }
        }
        let placed = source::with_context(&mapped, tree);
        // Context rows go before the mapped row they precede; the tail goes
        // after the last mapped row's block (its children/instructions).
        let mut before: HashMap<usize, Vec<Row>> = HashMap::new();
        let mut pending = Vec::new();
        for p in placed {
            match p {
                Placed::Mapped(j) => {
                    if !pending.is_empty() {
                        before.insert(mapped_rows[j], std::mem::take(&mut pending));
                    }
                }
                Placed::Context {
                    file, line, text, ..
                } => {
                    let src = if text.is_empty() { "-" } else { text.as_str() };
                    pending.push(Row::new(
                        RowKind::Context,
                        format!("{}:{line}: {src}", source::basename(&file)),
                    ));
                }
            }
        }
        let tail_at = mapped_rows.last().map(|&last| {
            (last + 1..self.rows.len())
                .find(|&i| matches!(self.rows[i].kind, RowKind::Source { .. }))
                .unwrap_or(self.rows.len())
        });
        let old = std::mem::take(&mut self.rows);
        let n = old.len();
        for (i, r) in old.into_iter().enumerate() {
            if tail_at == Some(i) {
                self.rows.append(&mut pending);
            }
            if let Some(mut ctx) = before.remove(&i) {
                self.rows.append(&mut ctx);
            }
            self.rows.push(r);
        }
        if tail_at == Some(n) {
            self.rows.append(&mut pending);
        }
        Ok(())
    }

    /// Keep the `limit` hottest detail rows (own samples, ties in display
    /// order), in display order, each helper/kernel or instruction row
    /// with the source line it belongs to (which counts toward `limit`);
    /// returns the (direct, under) samples of the rows dropped.
    fn apply_source_limit(&mut self, limit: usize) -> (u64, u64) {
        let n = self.rows.len();
        if limit == 0 || n <= limit {
            return (0, 0);
        }
        let mut owner = vec![None; n];
        let mut source = None;
        for (i, r) in self.rows.iter().enumerate() {
            match r.kind {
                RowKind::Source { .. } => source = Some(i),
                RowKind::Child | RowKind::Instruction { .. } | RowKind::Native { .. } => {
                    owner[i] = source
                }
                _ => {}
            }
        }
        let mut rank: Vec<usize> = (0..n).collect();
        rank.sort_by(|&a, &b| {
            self.rows[b]
                .samples
                .cmp(&self.rows[a].samples)
                .then(a.cmp(&b))
        });
        let mut keep = vec![false; n];
        let mut kept = 0;
        for i in rank {
            if kept == limit {
                break;
            }
            let needs = owner[i].filter(|&o| !keep[o]);
            let cost = 1 + usize::from(needs.is_some());
            if kept + cost > limit {
                continue;
            }
            keep[i] = true;
            if let Some(o) = needs {
                keep[o] = true;
            }
            kept += cost;
        }
        let mut direct = 0;
        let mut under = 0;
        let rows = std::mem::take(&mut self.rows);
        for (r, k) in rows.into_iter().zip(keep) {
            if k {
                self.rows.push(r);
                continue;
            }
            match r.kind {
                RowKind::Child => under += r.samples,
                _ if r.leaf => direct += r.samples,
                _ => {}
            }
        }
        (direct, under)
    }

    /// Append the non-zero "Other …" rows that account for the samples no
    /// detail row shows, so that every sample lands on exactly one row.
    fn add_summary_rows(
        &mut self,
        p: &DrillProfile,
        line_limit: usize,
        source_limit: usize,
        cut: (u64, u64),
        native: &[&NativeRow],
    ) {
        let shown_direct: u64 = self
            .rows
            .iter()
            .filter(|r| r.leaf && r.kind != RowKind::Child)
            .map(|r| r.samples)
            .sum();
        let shown_under: u64 = self
            .rows
            .iter()
            .filter(|r| r.kind == RowKind::Child)
            .map(|r| r.samples)
            .sum();
        let direct_null: u64 = p
            .hotspots
            .iter()
            .filter(|h| h.instruction_offset.is_none())
            .map(|h| h.samples)
            .sum();
        let (list, omitted) = if self.exact_ips {
            (&p.kernel_ips, p.under_bpf_hotspot_samples_omitted_by_limit)
        } else {
            (
                &p.kernel_functions,
                p.under_bpf_function_samples_omitted_by_limit,
            )
        };
        let uncalled: Vec<&KernelRow> = list
            .iter()
            .filter(|k| k.bpf_instruction_offset.is_none())
            .collect();
        let under_null: u64 = uncalled.iter().map(|k| k.samples).sum();
        // The native view places every sampled instruction, with or
        // without a line record: what it leaves out has no instruction.
        let by_insn = matches!(self.disasm, Disasm::Native(_));
        let direct = Unshown {
            total: p.samples,
            shown: shown_direct,
            unmapped: if by_insn {
                0
            } else {
                p.direct_source_unmapped_samples
            },
            omitted: if by_insn {
                0
            } else {
                p.direct_hotspot_samples_omitted_by_limit
            },
            null_retained: direct_null,
            cut: cut.0,
        };
        let under = Unshown {
            total: p.kernel_samples,
            shown: shown_under,
            unmapped: p.under_bpf_caller_source_unmapped_samples,
            omitted,
            null_retained: under_null,
            cut: cut.1,
        };
        let labels = summary_labels(
            direct.buckets(),
            under.buckets(),
            p.unaccounted_samples,
            p.interrupt_samples,
            line_limit,
            source_limit,
        );
        for (i, (n, text)) in labels.into_iter().enumerate() {
            let children = match i {
                DIRECT_UNMAPPED => native
                    .iter()
                    .map(|r| child_row(r.text.clone(), r.samples))
                    .collect(),
                UNDER_UNMAPPED => uncalled
                    .iter()
                    .map(|k| child_row(child_text(k, self.exact_ips), k.samples))
                    .collect(),
                _ => Vec::new(),
            };
            if n > 0 {
                self.push_summary(n, text, children);
            }
        }
    }

    /// A summary row of `n` samples, with the child rows that say where
    /// they went (the row keeps what they do not list). Children that add
    /// up to more than the row are left out, so no sample counts twice.
    fn push_summary(&mut self, n: u64, text: String, mut children: Vec<Row>) {
        let mut listed: u64 = children.iter().map(|c| c.samples).sum();
        if listed > n {
            children.clear();
            listed = 0;
        }
        let mut r = Row::new(RowKind::Summary, text);
        r.samples = n - listed;
        r.leaf = true;
        self.rows.push(r);
        self.rows.append(&mut children);
    }

    /// Child rows belong to the source (or summary) row right before
    /// their group.
    fn link_children(&mut self) {
        let mut parent = None;
        for i in 0..self.rows.len() {
            self.rows[i].children.clear();
            match self.rows[i].kind {
                RowKind::Source { .. } | RowKind::Summary => parent = Some(i),
                RowKind::Child => {
                    self.rows[i].parent = parent;
                    if let Some(p) = parent {
                        self.rows[p].children.push(i);
                    }
                }
                _ => {}
            }
        }
    }

    /// 10 000 basis points over the leaves: exact largest remainder when the
    /// leaves add up to the inclusive count, else independent rounding.
    fn assign_basis_points(&mut self, inclusive: u64) {
        if inclusive == 0 {
            return;
        }
        let leaves: Vec<usize> = (0..self.rows.len())
            .filter(|&i| self.rows[i].leaf)
            .collect();
        let counts: Vec<u64> = leaves.iter().map(|&i| self.rows[i].samples).collect();
        let bps: Vec<u64> = if counts.iter().sum::<u64>() == inclusive {
            largest_remainder(10_000, &counts, inclusive)
        } else {
            counts
                .iter()
                .map(|&c| (c as f64 / inclusive as f64 * 10_000.0).round_ties_even() as u64)
                .collect()
        };
        for (&i, bp) in leaves.iter().zip(bps) {
            self.rows[i].bp = bp.min(u32::MAX as u64) as u32;
        }
    }

    pub(crate) fn profiled(&self) -> bool {
        self.profile.is_some()
    }

    /// Rows that have child rows (their group can be expanded).
    pub(crate) fn parents(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.rows.len()).filter(|&i| !self.rows[i].children.is_empty())
    }
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
