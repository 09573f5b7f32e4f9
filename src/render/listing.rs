//! Text, JSON and CSV for `prog`, `map`, `link`, `btf` and `activity`.

use super::json::{self, obj, Json};
use super::{csv, dash, dash_join, table, Format};
use crate::activity::ActivityRow;
use crate::model::{
    AttachPoint, BtfObject, Container, Holder, Keepers, Link, LinkFields, Map, MapFields, Pod,
    ProgFields, Program,
};

/// What `brr prog` prints in `format`, so that the collector reads only
/// that (the run counters of `--stats` come with every row): text shows
/// the full name, and with `-x` pins, holders, attach points and memlock;
/// JSON and CSV carry every key, the holders and attach points with `-x`.
pub fn program_fields(format: Format, extended: bool) -> ProgFields {
    let text = format == Format::Text;
    ProgFields {
        full_name: true,
        map_ids: !text,
        memlock: extended || !text,
        pins: extended || !text,
        context: extended,
    }
}

/// What `brr map` prints in `format`: text without `-x` only the info
/// struct's fields.
pub fn map_fields(format: Format, extended: bool) -> MapFields {
    let text = format == Format::Text;
    MapFields {
        fdinfo: extended || !text,
        pins: extended || !text,
        keepers: extended,
    }
}

/// What `brr link` prints in `format`.
pub(crate) fn link_fields(format: Format, extended: bool) -> LinkFields {
    let text = format == Format::Text;
    LinkFields {
        target_names: true,
        pins: extended || !text,
        keepers: extended,
    }
}

/// What `brr activity` (and `top --textmode`) prints in `format`: JSON
/// and CSV rows carry the pins but no `-x` columns; text shows the pins,
/// holders, attach points and memlock with `-x`.
pub(crate) fn activity_fields(format: Format, extended: bool) -> ProgFields {
    let text_x = format == Format::Text && extended;
    ProgFields {
        full_name: true,
        map_ids: false,
        memlock: text_x,
        pins: text_x || format != Format::Text,
        context: text_x,
    }
}

fn opt_num(v: u32) -> Option<u32> {
    (v != 0).then_some(v)
}
fn opt_num64(v: u64) -> Option<u64> {
    (v != 0).then_some(v)
}
fn strings(v: &[String]) -> Json {
    Json::Arr(v.iter().map(|s| Json::from(s.as_str())).collect())
}

/// Emit a listing in the chosen format; `empty` replaces an empty text
/// table. CSV rows are the JSON items' values under `csv_keys`.
fn emit(
    format: Format,
    kind: &str,
    empty: &str,
    text: (Vec<&str>, Vec<Vec<String>>),
    items: Vec<Json>,
    metadata: Json,
    csv_keys: &[&str],
) -> String {
    emit_with(format, kind, empty, || text, || items, metadata, csv_keys)
}

/// [`emit`] building only what the format prints: the text rows, or the
/// JSON items (a listing of thousands of objects would otherwise build
/// both).
fn emit_with<'h>(
    format: Format,
    kind: &str,
    empty: &str,
    text: impl FnOnce() -> (Vec<&'h str>, Vec<Vec<String>>),
    items: impl FnOnce() -> Vec<Json>,
    metadata: Json,
    csv_keys: &[&str],
) -> String {
    match format {
        Format::Text => {
            let (headers, rows) = text();
            if rows.is_empty() {
                empty.to_string()
            } else {
                table::render(&headers, &rows)
            }
        }
        Format::Json { pretty } => {
            json::to_string(&json::document(kind, items(), metadata), pretty)
        }
        Format::Csv => csv::from_items(csv_keys, &items()),
    }
}

/// The OWNERS cell: the first two holders as `comm(pid)`, then `+N`; an
/// object nobody holds says what keeps it loaded.
pub(crate) fn owners_cell(k: Option<&Keepers>, pinned: bool) -> String {
    let Some(k) = k else {
        return "-".into();
    };
    if k.owners.is_empty() {
        return match (pinned, k.held_by) {
            (true, _) => "(pinned)".into(),
            (false, Some(h)) => format!("(held by {})", holder_text(h)),
            (false, None) => "-".into(),
        };
    }
    let mut out = k
        .owners
        .iter()
        .take(2)
        .map(|o| format!("{}({})", o.comm, o.pid))
        .collect::<Vec<_>>()
        .join(",");
    if k.owners.len() > 2 {
        out.push_str(&format!(" +{}", k.owners.len() - 2));
    }
    out
}

fn holder_text(h: Holder) -> String {
    match h {
        Holder::Prog(id) => format!("prog {id}"),
        Holder::Link(id) => format!("link {id}"),
    }
}

/// A program's attach points for a text cell: `attach_type:target` per
/// link or perf event fd.
pub(crate) fn attach_cell(points: &[AttachPoint]) -> String {
    let cells: Vec<String> = points
        .iter()
        .map(|a| match (&a.attach_type, &a.target) {
            (Some(t), Some(x)) => format!("{t}:{x}"),
            (Some(t), None) => t.clone(),
            (None, Some(x)) => x.clone(),
            (None, None) => match (a.link_id, a.perf_event) {
                (Some(id), _) => format!("link {id}"),
                (None, Some(e)) => format!("perf event fd {} of pid {}", e.fd, e.pid),
                (None, None) => "-".into(),
            },
        })
        .collect();
    dash_join(&cells, ",")
}

/// The MAPS_MEM cell: bytes, and how many of the maps other programs use.
pub(crate) fn maps_mem_cell(p: &Program) -> String {
    maps_mem_with(p, |b| b.to_string())
}

/// [`maps_mem_cell`] with the bytes in a view's own number style (`num`),
/// the one its other byte columns use.
fn maps_mem_with(p: &Program, num: impl Fn(u64) -> String) -> String {
    match (p.maps_memlock_bytes, p.shared_maps) {
        (None, _) => "-".into(),
        (Some(b), None | Some(0)) => num(b),
        (Some(b), Some(n)) => format!("{} ({n} shared)", num(b)),
    }
}

/// A container as JSON: `{"runtime", "id", "name"}` (`name` null where the
/// kubelet's logs do not name it), or null.
pub(crate) fn container_json(c: Option<&Container>) -> Json {
    c.map_or(Json::Null, |c| {
        obj([
            ("runtime", c.runtime.as_str().into()),
            ("id", c.id.as_str().into()),
            ("name", c.name.as_deref().map_or(Json::Null, Json::from)),
        ])
    })
}

/// A pod as JSON: `{"uid", "namespace", "name", "qos"}`, or null.
pub(crate) fn pod_json(p: Option<&Pod>) -> Json {
    p.map_or(Json::Null, |p| {
        let opt = |s: Option<&str>| s.map_or(Json::Null, Json::from);
        obj([
            ("uid", p.uid.as_str().into()),
            ("namespace", opt(p.namespace.as_deref())),
            ("name", opt(p.name.as_deref())),
            ("qos", opt(p.qos.map(|q| q.as_str()))),
        ])
    })
}

/// `owners` and `held_by` for JSON (`csv`: owners as `comm(pid)` strings,
/// one cell). A JSON owner names its container and pod (null outside one).
fn keeper_fields(k: Option<&Keepers>, csv: bool) -> [(&'static str, Json); 2] {
    let owners = k.map(|k| {
        Json::Arr(
            k.owners
                .iter()
                .map(|o| {
                    if csv {
                        return Json::Str(format!("{}({})", o.comm, o.pid));
                    }
                    let w = k.workloads.get(&o.pid);
                    obj([
                        ("pid", o.pid.into()),
                        ("comm", o.comm.as_str().into()),
                        (
                            "container",
                            container_json(w.and_then(|w| w.container.as_ref())),
                        ),
                        ("pod", pod_json(w.and_then(|w| w.pod.as_ref()))),
                    ])
                })
                .collect(),
        )
    });
    let held = k.and_then(|k| k.held_by).map(|h| match (h, csv) {
        (h, true) => Json::Str(holder_text(h)),
        (Holder::Prog(id), false) => obj([("kind", "prog".into()), ("id", id.into())]),
        (Holder::Link(id), false) => obj([("kind", "link".into()), ("id", id.into())]),
    });
    [
        ("owners", owners.unwrap_or(Json::Null)),
        ("held_by", held.unwrap_or(Json::Null)),
    ]
}

fn attached_json(points: &[AttachPoint], csv: bool) -> Json {
    if csv {
        return Json::Arr(
            points
                .iter()
                .map(|a| Json::Str(attach_cell(std::slice::from_ref(a))))
                .collect(),
        );
    }
    Json::Arr(
        points
            .iter()
            .map(|a| {
                let perf = a
                    .perf_event
                    .map(|e| obj([("pid", e.pid.into()), ("fd", e.fd.into())]));
                obj([
                    ("link_id", a.link_id.into()),
                    ("attach_type", a.attach_type.clone().into()),
                    ("target", a.target.clone().into()),
                    ("perf_event", perf.unwrap_or(Json::Null)),
                ])
            })
            .collect(),
    )
}

/// A program's JSON item: today's keys, then the ones added after them;
/// `extended` adds who holds it and where it is attached.
pub(crate) fn program_json(p: &Program, extended: bool, csv: bool) -> Json {
    json::fields(program_items(p, extended, csv))
}

/// [`program_json`]'s keys and values, for [`RowWriter::row_fields`].
pub(crate) fn program_items(p: &Program, extended: bool, csv: bool) -> Vec<(&'static str, Json)> {
    let mut item = program_base_fields(p);
    item.extend([
        ("full_name", p.display_name().into()),
        ("loaded_at", p.loaded_at.clone().into()),
        ("uid", p.uid.into()),
        ("gpl_compatible", p.gpl_compatible.into()),
        ("verified_insns", p.verified_insns.into()),
        ("recursion_misses", p.recursion_misses.into()),
        ("memlock_bytes", p.memlock_bytes.into()),
        ("maps_memlock_bytes", p.maps_memlock_bytes.into()),
        ("shared_maps", p.shared_maps.into()),
    ]);
    if extended {
        item.extend(keeper_fields(p.keepers.as_ref(), csv));
        item.push(("attached", attached_json(&p.attached, csv)));
    }
    item
}

/// The keys every program object has carried since the first release
/// (`dump` shows only these).
pub(crate) fn program_base_json(p: &Program) -> Json {
    json::fields(program_base_fields(p))
}

/// The keys that name a program and its size, first in every program
/// item (listings, `dump`, activity).
fn program_identity(p: &Program) -> [(&'static str, Json); 6] {
    [
        ("id", p.id.into()),
        ("type", p.prog_type.as_str().into()),
        ("name", p.name.as_str().into()),
        ("tag", p.tag.as_str().into()),
        ("xlated_size_bytes", p.xlated_size.into()),
        ("jited_size_bytes", p.jited_size.into()),
    ]
}

fn program_base_fields(p: &Program) -> Vec<(&'static str, Json)> {
    let mut item = Vec::from(program_identity(p));
    item.extend([
        ("run_time_ns", opt_num64(p.run_time_ns).into()),
        ("run_count", opt_num64(p.run_count).into()),
        ("map_ids", p.map_ids.as_slice().into()),
        ("btf_id", opt_num(p.btf_id).into()),
        ("pinned_paths", strings(&p.pinned_paths)),
    ]);
    item
}

/// A `prog`, `map` or `link` listing in JSON or CSV written row by row as
/// the objects are read, byte for byte as the whole-listing functions
/// write it (without the final newline).
pub(crate) struct RowWriter<'w> {
    sink: Sink<'w>,
}

enum Sink<'w> {
    Json(json::DocumentWriter<'w>),
    Csv {
        out: &'w mut dyn std::io::Write,
        keys: Vec<&'static str>,
        header: bool,
    },
}

/// The listings [`RowWriter`] writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ListingKind {
    Programs,
    Maps,
    Links,
}

impl<'w> RowWriter<'w> {
    /// `None` for text, whose column widths need every row first.
    pub(crate) fn new(
        out: &'w mut dyn std::io::Write,
        format: Format,
        kind: ListingKind,
        extended: bool,
    ) -> Option<RowWriter<'w>> {
        let name = match kind {
            ListingKind::Programs => "programs",
            ListingKind::Maps => "maps",
            ListingKind::Links => "links",
        };
        let keys = csv_keys(kind, extended);
        let sink = match format {
            Format::Text => return None,
            Format::Json { pretty } => Sink::Json(json::DocumentWriter::new(out, name, pretty)),
            Format::Csv => Sink::Csv {
                out,
                keys,
                header: false,
            },
        };
        Some(RowWriter { sink })
    }

    /// Whether items must be built for CSV (`program_json(.., csv)`).
    pub(crate) fn csv(&self) -> bool {
        matches!(self.sink, Sink::Csv { .. })
    }

    /// A row from its item's keys and values ([`program_items`] and the
    /// like): JSON writes them without making the object first.
    pub(crate) fn row_fields(&mut self, fields: Vec<(&'static str, Json)>) -> std::io::Result<()> {
        match &mut self.sink {
            Sink::Json(w) => w.item_fields(&fields),
            Sink::Csv { .. } => self.row(&json::fields(fields)),
        }
    }

    pub(crate) fn row(&mut self, item: &Json) -> std::io::Result<()> {
        match &mut self.sink {
            Sink::Json(w) => w.item(item),
            Sink::Csv { out, keys, header } => {
                let mut line = String::new();
                if !*header {
                    line.push_str(&keys.join(","));
                    *header = true;
                }
                let one = csv::from_items(keys, std::slice::from_ref(item));
                // from_items puts the header first; keep only the record.
                if let Some((_, record)) = one.split_once('\n') {
                    line.push('\n');
                    line.push_str(record);
                }
                out.write_all(line.as_bytes())
            }
        }
    }

    pub(crate) fn finish(self) -> std::io::Result<()> {
        match self.sink {
            Sink::Json(w) => w.finish(&obj([])),
            Sink::Csv { out, keys, header } if !header => out.write_all(keys.join(",").as_bytes()),
            Sink::Csv { .. } => Ok(()),
        }
    }
}

/// The CSV columns of a listing: its JSON items' keys, taken from the item
/// of a placeholder object.
fn csv_keys(kind: ListingKind, extended: bool) -> Vec<&'static str> {
    csv::keys(&match kind {
        ListingKind::Programs => program_items(&Program::default(), extended, true),
        ListingKind::Maps => map_items(&Map::default(), extended, true),
        ListingKind::Links => link_items(&Link::default(), extended, true),
    })
}

pub(crate) fn prog_headers(stats: bool, extended: bool) -> Vec<&'static str> {
    let mut headers = vec!["ID", "TYPE", "NAME", "XLATED_BYTES", "JITED_BYTES"];
    if stats {
        headers.extend(["RUN_CNT", "RUN_TIME_NS"]);
    }
    if extended {
        headers.extend(["TAG", "PINNED", "OWNERS", "ATTACH", "MEMLOCK", "MAPS_MEM"]);
    }
    headers
}

pub(crate) fn prog_row(p: &Program, stats: bool, extended: bool) -> Vec<String> {
    let mut r = vec![
        p.id.to_string(),
        p.prog_type.to_string(),
        p.display_name().to_string(),
        p.xlated_size.to_string(),
        p.jited_size.to_string(),
    ];
    if stats {
        r.push(p.run_count.to_string());
        r.push(p.run_time_ns.to_string());
    }
    if extended {
        r.push(if p.tag.is_empty() {
            "-".into()
        } else {
            p.tag.to_string()
        });
        r.push(dash_join(&p.pinned_paths, ","));
        r.push(owners_cell(p.keepers.as_ref(), !p.pinned_paths.is_empty()));
        r.push(attach_cell(&p.attached));
        r.push(dash(p.memlock_bytes));
        r.push(maps_mem_cell(p));
    }
    r
}

pub fn programs(list: &[Program], format: Format, stats: bool, extended: bool) -> String {
    let csv = format == Format::Csv;
    emit_with(
        format,
        "programs",
        "No eBPF programs found.",
        || {
            (
                prog_headers(stats, extended),
                list.iter().map(|p| prog_row(p, stats, extended)).collect(),
            )
        },
        || {
            list.iter()
                .map(|p| program_json(p, extended, csv))
                .collect()
        },
        obj([]),
        &csv_keys(ListingKind::Programs, extended),
    )
}

pub(crate) fn map_headers(extended: bool) -> Vec<&'static str> {
    let mut headers = vec![
        "ID",
        "TYPE",
        "NAME",
        "KEY",
        "VALUE",
        "MAX_ENTRIES",
        "BTF_ID",
    ];
    if extended {
        headers.extend(["PINNED", "OWNERS", "MEMLOCK"]);
    }
    headers
}

pub(crate) fn map_row(m: &Map, extended: bool) -> Vec<String> {
    let mut r = vec![
        m.id.to_string(),
        m.map_type.clone(),
        m.name.clone(),
        m.key_size.to_string(),
        m.value_size.to_string(),
        m.max_entries.to_string(),
        dash(opt_num(m.btf_id)),
    ];
    if extended {
        r.push(dash_join(&m.pinned_paths, ","));
        r.push(owners_cell(m.keepers.as_ref(), !m.pinned_paths.is_empty()));
        r.push(dash(m.memlock_bytes));
    }
    r
}

pub(crate) fn map_json(m: &Map, extended: bool, csv: bool) -> Json {
    json::fields(map_items(m, extended, csv))
}

/// [`map_json`]'s keys and values, for [`RowWriter::row_fields`].
pub(crate) fn map_items(m: &Map, extended: bool, csv: bool) -> Vec<(&'static str, Json)> {
    let mut item = vec![
        ("id", m.id.into()),
        ("type", m.map_type.as_str().into()),
        ("name", m.name.as_str().into()),
        ("key_size", m.key_size.into()),
        ("value_size", m.value_size.into()),
        ("max_entries", m.max_entries.into()),
        ("btf_id", opt_num(m.btf_id).into()),
        ("pinned_paths", strings(&m.pinned_paths)),
        ("flags", m.flags.into()),
        ("frozen", m.frozen.into()),
        ("memlock_bytes", m.memlock_bytes.into()),
    ];
    if extended {
        item.extend(keeper_fields(m.keepers.as_ref(), csv));
    }
    item
}

pub fn maps(list: &[Map], format: Format, extended: bool) -> String {
    let csv = format == Format::Csv;
    emit_with(
        format,
        "maps",
        "No eBPF maps found.",
        || {
            (
                map_headers(extended),
                list.iter().map(|m| map_row(m, extended)).collect(),
            )
        },
        || list.iter().map(|m| map_json(m, extended, csv)).collect(),
        obj([]),
        &csv_keys(ListingKind::Maps, extended),
    )
}

pub(crate) fn link_headers(extended: bool) -> Vec<&'static str> {
    let mut headers = vec![
        "ID",
        "TYPE",
        "PROG_ID",
        "ATTACH_TYPE",
        "TARGET_OBJ_ID",
        "TARGET_BTF_ID",
        "TARGET",
    ];
    if extended {
        headers.extend(["PINNED", "OWNERS"]);
    }
    headers
}

pub(crate) fn link_row(l: &Link, extended: bool) -> Vec<String> {
    let mut r = vec![
        l.id.to_string(),
        l.link_type.clone(),
        l.prog_id.to_string(),
        dash(l.attach_type.clone()),
        dash(l.target_obj_id),
        dash(l.target_btf_id),
        dash(l.target.clone()),
    ];
    if extended {
        r.push(dash_join(&l.pinned_paths, ","));
        r.push(owners_cell(l.keepers.as_ref(), !l.pinned_paths.is_empty()));
    }
    r
}

pub(crate) fn link_json(l: &Link, extended: bool, csv: bool) -> Json {
    json::fields(link_items(l, extended, csv))
}

/// [`link_json`]'s keys and values, for [`RowWriter::row_fields`].
pub(crate) fn link_items(l: &Link, extended: bool, csv: bool) -> Vec<(&'static str, Json)> {
    let mut item = vec![
        ("id", l.id.into()),
        ("type", l.link_type.as_str().into()),
        ("prog_id", l.prog_id.into()),
        ("attach_type", l.attach_type.clone().into()),
        ("target_obj_id", l.target_obj_id.into()),
        ("target_btf_id", l.target_btf_id.into()),
        ("pinned_paths", strings(&l.pinned_paths)),
        ("target", l.target.clone().into()),
    ];
    if extended {
        item.extend(keeper_fields(l.keepers.as_ref(), csv));
    }
    item
}

pub fn links(list: &[Link], format: Format, extended: bool) -> String {
    let csv = format == Format::Csv;
    emit_with(
        format,
        "links",
        "No eBPF links found.",
        || {
            (
                link_headers(extended),
                list.iter().map(|l| link_row(l, extended)).collect(),
            )
        },
        || list.iter().map(|l| link_json(l, extended, csv)).collect(),
        obj([]),
        &csv_keys(ListingKind::Links, extended),
    )
}

/// `brr btf`; `extended` adds the programs and maps that use each object
/// (PROGS and MAPS, JSON/CSV `prog_ids` and `map_ids`).
pub(crate) fn btfs(list: &[BtfObject], format: Format, extended: bool) -> String {
    let ids = |v: &[u32]| -> String {
        let cells: Vec<String> = v.iter().map(u32::to_string).collect();
        dash_join(&cells, ",")
    };
    let text_rows = list
        .iter()
        .map(|b| {
            let mut row = vec![b.id.to_string(), b.name.clone(), b.size.to_string()];
            if extended {
                let u = b.users.clone().unwrap_or_default();
                row.extend([ids(&u.prog_ids), ids(&u.map_ids)]);
            }
            row
        })
        .collect();
    let items = list
        .iter()
        .map(|b| json::fields(btf_items(b, extended)))
        .collect();
    let mut headers = vec!["ID", "NAME", "SIZE"];
    if extended {
        headers.extend(["PROGS", "MAPS"]);
    }
    emit(
        format,
        "btfs",
        "No BTF objects found.",
        (headers, text_rows),
        items,
        obj([]),
        &csv::keys(&btf_items(&BtfObject::default(), extended)),
    )
}

/// A BTF object's JSON item (and CSV cells); `extended` appends the
/// programs and maps that use it.
fn btf_items(b: &BtfObject, extended: bool) -> Vec<(&'static str, Json)> {
    let mut item = vec![
        ("id", b.id.into()),
        ("name", b.name.as_str().into()),
        ("size", b.size.into()),
        ("pinned_paths", strings(&b.pinned_paths)),
    ];
    if extended {
        let u = b.users.clone().unwrap_or_default();
        item.push(("prog_ids", u.prog_ids.as_slice().into()));
        item.push(("map_ids", u.map_ids.as_slice().into()));
    }
    item
}

/// The parameters of an activity run, repeated in JSON metadata and CSV rows.
#[derive(Debug, Clone, Copy)]
pub struct ActivityRun {
    pub duration: f64,
    pub measured: f64,
    pub limit: usize,
    pub all: bool,
    /// A stream's window as Unix seconds (start, end): added to JSON
    /// metadata and appended to CSV rows.
    pub window: Option<(f64, f64)>,
}

/// The line after a text table whose window Ctrl-C cut short.
pub(crate) fn ended_early(run: &ActivityRun) -> Option<String> {
    (run.measured < run.duration).then(|| {
        format!(
            "window ended early after {:.2} s of {} s",
            run.measured,
            super::num::fmt_g(run.duration)
        )
    })
}

/// A column of the activity table (`brr activity`, `top --textmode` and
/// the TUI's live table): its header and its cell, defined here once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ActivityCol {
    Id,
    Type,
    Name,
    Cpu,
    ExecsPerSec,
    AvgNs,
    CumulAvgNs,
    NsPerSec,
    ExecsDelta,
    TotalNs,
    ExecsTotal,
    CumulNs,
    Xlat,
    Jit,
    Tag,
    Pinned,
    Misses,
    Owners,
    Attach,
    Memlock,
    MapsMem,
}

impl ActivityCol {
    /// The columns shown, in order: `cumulative` adds the totals, `extended`
    /// (`-x`) what identifies and keeps a program.
    pub(crate) fn shown(cumulative: bool, extended: bool) -> Vec<ActivityCol> {
        use ActivityCol::*;
        let mut cols = vec![Id, Type, Name, Cpu, ExecsPerSec, AvgNs];
        if cumulative {
            cols.extend([
                CumulAvgNs, NsPerSec, ExecsDelta, TotalNs, ExecsTotal, CumulNs,
            ]);
        }
        cols.extend([Xlat, Jit]);
        if extended {
            cols.extend([Tag, Pinned, Misses, Owners, Attach, Memlock, MapsMem]);
        }
        cols
    }

    pub(crate) fn header(self) -> &'static str {
        match self {
            ActivityCol::Id => "ID",
            ActivityCol::Type => "TYPE",
            ActivityCol::Name => "NAME",
            ActivityCol::Cpu => "CPU%",
            ActivityCol::ExecsPerSec => "EXECS/s",
            ActivityCol::AvgNs => "AVG_NS",
            ActivityCol::CumulAvgNs => "CUMUL_AVG_NS",
            ActivityCol::NsPerSec => "NS_PER/s",
            ActivityCol::ExecsDelta => "EXECS_DELTA",
            ActivityCol::TotalNs => "TOTAL_NS",
            ActivityCol::ExecsTotal => "EXECS_TOTAL",
            ActivityCol::CumulNs => "CUMUL_NS",
            ActivityCol::Xlat => "XLAT_B",
            ActivityCol::Jit => "JIT_B",
            ActivityCol::Tag => "TAG",
            ActivityCol::Pinned => "PINNED",
            ActivityCol::Misses => "MISSES",
            ActivityCol::Owners => "OWNERS",
            ActivityCol::Attach => "ATTACH",
            ActivityCol::Memlock => "MEMLOCK",
            ActivityCol::MapsMem => "MAPS_MEM",
        }
    }

    /// Words rather than figures: left-aligned in the TUI.
    pub(crate) fn left_aligned(self) -> bool {
        matches!(
            self,
            ActivityCol::Type
                | ActivityCol::Name
                | ActivityCol::Tag
                | ActivityCol::Pinned
                | ActivityCol::Owners
                | ActivityCol::Attach
        )
    }

    /// The integer a number column shows (`None`: not a number column, or
    /// a memlock that was not read, shown as `-`).
    fn count(self, r: &ActivityRow, d: f64) -> Option<u64> {
        let p = &r.prog;
        Some(match self {
            ActivityCol::ExecsPerSec => r.execs_per_sec(d) as u64,
            ActivityCol::AvgNs => r.avg_ns(),
            ActivityCol::CumulAvgNs => r.cumulative_avg_ns(),
            ActivityCol::NsPerSec => r.ns_per_sec(d) as u64,
            ActivityCol::ExecsDelta => r.run_count_delta,
            ActivityCol::TotalNs => r.run_time_ns_delta,
            ActivityCol::ExecsTotal => r.run_count_total(),
            ActivityCol::CumulNs => r.run_time_ns_total(),
            ActivityCol::Xlat => p.xlated_size as u64,
            ActivityCol::Jit => p.jited_size as u64,
            ActivityCol::Misses => r.recursion_misses_delta,
            ActivityCol::Memlock => p.memlock_bytes?,
            _ => return None,
        })
    }

    /// How many characters `self.cell(r, d, &commas)` has, without making
    /// the text of the columns the default table shows: the TUI measures
    /// every row's cells each window but draws only a screenful.
    pub(crate) fn grouped_width(self, r: &ActivityRow, d: f64) -> usize {
        let p = &r.prog;
        match self {
            ActivityCol::Id => super::num::fmt_width(format_args!("{}", p.id)),
            ActivityCol::Type => p.prog_type.chars().count(),
            ActivityCol::Name => p.display_name().chars().count(),
            ActivityCol::Cpu => super::num::fmt_width(format_args!("{:.4}", r.cpu_pct(d))),
            _ => match self.count(r, d) {
                Some(n) => super::num::commas_width(n),
                None => self.cell(r, d, &super::num::commas).chars().count(),
            },
        }
    }

    /// The cell of `r` over a window of `d` seconds; `num` formats the
    /// integer cells (plain here, `,`-grouped in `top`).
    pub(crate) fn cell(self, r: &ActivityRow, d: f64, num: &impl Fn(u64) -> String) -> String {
        let p = &r.prog;
        match self {
            ActivityCol::Id => p.id.to_string(),
            ActivityCol::Type => p.prog_type.to_string(),
            ActivityCol::Name => p.display_name().to_string(),
            ActivityCol::Cpu => super::num::percent4(r.cpu_pct(d)),
            ActivityCol::Tag if p.tag.is_empty() => "-".into(),
            ActivityCol::Tag => p.tag.to_string(),
            ActivityCol::Pinned => dash_join(&p.pinned_paths, ","),
            ActivityCol::Owners => owners_cell(p.keepers.as_ref(), !p.pinned_paths.is_empty()),
            ActivityCol::Attach => attach_cell(&p.attached),
            ActivityCol::MapsMem => maps_mem_with(p, num),
            // The number columns; a memlock not read shows as `-`.
            _ => self.count(r, d).map_or_else(|| "-".into(), num),
        }
    }
}

/// The activity table's columns and cells over a window of `d` seconds;
/// `num` formats the integer cells (see [`ActivityCol::cell`]).
pub(crate) fn activity_table(
    rows: &[ActivityRow],
    d: f64,
    cumulative: bool,
    extended: bool,
    num: impl Fn(u64) -> String,
) -> (Vec<ActivityCol>, Vec<Vec<String>>) {
    let cols = ActivityCol::shown(cumulative, extended);
    let cells = rows
        .iter()
        .map(|r| cols.iter().map(|c| c.cell(r, d, &num)).collect())
        .collect();
    (cols, cells)
}

/// Header texts of `cols`.
pub(crate) fn activity_headers(cols: &[ActivityCol]) -> Vec<&'static str> {
    cols.iter().map(|c| c.header()).collect()
}

pub fn activity(
    rows: &[ActivityRow],
    run: ActivityRun,
    format: Format,
    cumulative: bool,
    extended: bool,
) -> String {
    let out = activity_document(rows, run, format, cumulative, extended);
    match (format, ended_early(&run)) {
        (Format::Text, Some(line)) => format!("{out}\n{line}"),
        _ => out,
    }
}

/// One window of `activity --interval`, with its trailing newline: text is
/// the table under a heading naming the window's end (UTC) and length; JSON
/// is one line; CSV is the rows, with the header only when `first`.
pub(crate) fn activity_window(
    rows: &[ActivityRow],
    run: ActivityRun,
    format: Format,
    cumulative: bool,
    extended: bool,
    first: bool,
) -> String {
    match format {
        Format::Text => {
            let (start, end) = run.window.unwrap_or((0.0, 0.0));
            let heading = format!(
                "{} window {:.2} s (from {})",
                crate::utc::iso8601_millis(end),
                run.measured,
                crate::utc::iso8601_millis(start)
            );
            let body = activity(rows, run, format, cumulative, extended);
            let gap = if first { "" } else { "\n" };
            format!("{gap}{heading}\n{body}\n")
        }
        Format::Json { .. } => {
            let line = activity_document(rows, run, Format::Json { pretty: false }, false, false);
            format!("{line}\n")
        }
        Format::Csv => {
            let all = activity_document(rows, run, format, false, false);
            let body = if first {
                all.as_str()
            } else {
                all.split_once('\n').map(|(_, rest)| rest).unwrap_or("")
            };
            if body.is_empty() {
                String::new()
            } else {
                format!("{body}\n")
            }
        }
    }
}

/// A row's JSON item: the original's keys, then the ones added after them;
/// the rates are over `measured` seconds.
fn activity_items(r: &ActivityRow, measured: f64) -> Vec<(&'static str, Json)> {
    let p = &r.prog;
    let mut item = Vec::from(program_identity(p));
    item.extend([
        ("run_count_delta", r.run_count_delta.into()),
        ("run_time_ns_delta", r.run_time_ns_delta.into()),
        ("avg_run_time_ns", r.avg_ns().into()),
        ("run_count_total", r.run_count_total().into()),
        ("run_time_ns_total", r.run_time_ns_total().into()),
        ("cumulative_avg_run_time_ns", r.cumulative_avg_ns().into()),
        ("pinned_paths", strings(&p.pinned_paths)),
        ("full_name", p.display_name().into()),
        ("recursion_misses_delta", r.recursion_misses_delta.into()),
        ("cpu_percent", rate(r.cpu_pct(measured)).into()),
        (
            "execs_per_sec",
            (rate(r.execs_per_sec(measured)) as u64).into(),
        ),
    ]);
    item
}

/// The last key of the original's activity rows: its CSV put
/// `measured_duration` right after it, so keys added since follow that.
const LAST_ORIGINAL_ACTIVITY_KEY: &str = "pinned_paths";

/// A row's CSV fields: its JSON item with the run parameters repeated
/// around it, and a stream's window last.
fn activity_csv_items(
    run: &ActivityRun,
    mut item: Vec<(&'static str, Json)>,
) -> Vec<(&'static str, Json)> {
    let original = item
        .iter()
        .position(|(k, _)| *k == LAST_ORIGINAL_ACTIVITY_KEY)
        .map_or(item.len(), |i| i + 1);
    let added = item.split_off(original);
    let mut row = vec![
        ("duration", run.duration.into()),
        ("limit", run.limit.into()),
        ("include_all", run.all.into()),
    ];
    row.extend(item);
    row.push(("measured_duration", run.measured.into()));
    row.extend(added);
    if let Some((start, end)) = run.window {
        row.push(("window_start", start.into()));
        row.push(("window_end", end.into()));
    }
    row
}

/// A rate over the window as JSON and CSV carry it: a window that measured
/// nothing (cut short at once) has none, which is written as 0 rather than
/// as a NaN that JSON cannot hold.
fn rate(v: f64) -> f64 {
    if v.is_finite() {
        v
    } else {
        0.0
    }
}

fn activity_document(
    rows: &[ActivityRow],
    run: ActivityRun,
    format: Format,
    cumulative: bool,
    extended: bool,
) -> String {
    let (cols, text_rows) =
        activity_table(rows, run.measured, cumulative, extended, |n| n.to_string());
    let headers = activity_headers(&cols);
    // CSV repeats the run parameters on every row.
    let csv = format == Format::Csv;
    let row_items = |r: &ActivityRow| {
        let item = activity_items(r, run.measured);
        if csv {
            activity_csv_items(&run, item)
        } else {
            item
        }
    };
    let items: Vec<Json> = rows.iter().map(|r| json::fields(row_items(r))).collect();
    let mut metadata = obj([
        ("duration", run.duration.into()),
        ("limit", run.limit.into()),
        ("include_all", run.all.into()),
        ("measured_duration", run.measured.into()),
    ]);
    if let (Some((start, end)), Json::Obj(fields)) = (run.window, &mut metadata) {
        fields.push(("window_start".into(), start.into()));
        fields.push(("window_end".into(), end.into()));
    }
    let placeholder = ActivityRow {
        prog: Program::default(),
        run_count_delta: 0,
        run_time_ns_delta: 0,
        recursion_misses_delta: 0,
    };
    let csv_keys = csv::keys(&activity_csv_items(
        &run,
        activity_items(&placeholder, run.measured),
    ));
    emit(
        format,
        "program_activity",
        "No active eBPF program runtime deltas observed.",
        (headers, text_rows),
        items,
        metadata,
        &csv_keys,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grouped_widths_are_the_cells_lengths() {
        let numbers = [0u64, 7, 999, 1_000, 65_535, 999_999, 1_000_000, u64::MAX];
        let mut rows = Vec::new();
        for (i, &n) in numbers.iter().enumerate() {
            let mut p = prog(n as u32);
            p.run_count = n;
            p.run_time_ns = n.wrapping_mul(3);
            p.xlated_size = n as u32;
            p.jited_size = (n / 7) as u32;
            p.memlock_bytes = (i % 2 == 0).then_some(n);
            p.full_name = ["", "näme_ünïcode", "a_very_long_full_btf_function_name"][i % 3].into();
            p.tag = if i == 1 { Default::default() } else { p.tag };
            rows.push(ActivityRow {
                prog: p,
                run_count_delta: n / 3,
                run_time_ns_delta: n / 2,
                recursion_misses_delta: n % 1_001,
            });
        }
        for d in [0.25, 1.0, 3.7, 1e-9] {
            for cols in [
                ActivityCol::shown(true, true),
                ActivityCol::shown(false, true),
            ] {
                for r in &rows {
                    for c in &cols {
                        let text = c.cell(r, d, &crate::render::num::commas);
                        assert_eq!(
                            c.grouped_width(r, d),
                            text.chars().count(),
                            "{c:?} {text:?}"
                        );
                    }
                }
            }
        }
    }

    fn prog(id: u32) -> Program {
        Program {
            id,
            prog_type: "cgroup_skb".into(),
            name: "count_ingress".into(),
            tag: "d812b1a3dc0f9a8c".into(),
            xlated_size: 144,
            jited_size: 90,
            run_time_ns: 0,
            run_count: 0,
            recursion_misses: 0,
            map_ids: vec![193, 7],
            btf_id: 278,
            pinned_paths: vec!["/sys/fs/bpf/a".into(), "/sys/fs/bpf/b,c".into()],
            ..Default::default()
        }
    }

    #[test]
    fn program_formats() {
        let list = [prog(632)];
        assert_eq!(
            programs(&list, Format::Text, false, false),
            " ID  TYPE        NAME           XLATED_BYTES  JITED_BYTES\n632  cgroup_skb  count_ingress           144           90"
        );
        assert_eq!(
            programs(&list, Format::Json { pretty: false }, false, false),
            r#"{"kind":"programs","items":[{"id":632,"type":"cgroup_skb","name":"count_ingress","tag":"d812b1a3dc0f9a8c","xlated_size_bytes":144,"jited_size_bytes":90,"run_time_ns":null,"run_count":null,"map_ids":[193,7],"btf_id":278,"pinned_paths":["/sys/fs/bpf/a","/sys/fs/bpf/b,c"],"full_name":"count_ingress","loaded_at":null,"uid":0,"gpl_compatible":false,"verified_insns":0,"recursion_misses":0,"memlock_bytes":null,"maps_memlock_bytes":null,"shared_maps":null}],"metadata":{}}"#
        );
        assert_eq!(
            programs(&list, Format::Csv, false, false),
            "id,type,name,tag,xlated_size_bytes,jited_size_bytes,run_time_ns,run_count,map_ids,btf_id,pinned_paths,full_name,loaded_at,uid,gpl_compatible,verified_insns,recursion_misses,memlock_bytes,maps_memlock_bytes,shared_maps\n632,cgroup_skb,count_ingress,d812b1a3dc0f9a8c,144,90,,,193;7,278,\"/sys/fs/bpf/a;/sys/fs/bpf/b,c\",count_ingress,,0,false,0,0,,,"
        );
        let x = programs(&list, Format::Text, true, true);
        assert!(x.starts_with(" ID  TYPE        NAME           XLATED_BYTES  JITED_BYTES  RUN_CNT  RUN_TIME_NS  TAG               PINNED"));
        assert!(x.ends_with("0            0  d812b1a3dc0f9a8c  /sys/fs/bpf/a,/sys/fs/bpf/b,c  -       -       -        -       "), "{x:?}");
        assert_eq!(
            programs(&[], Format::Text, false, false),
            "No eBPF programs found."
        );
        assert_eq!(
            programs(&[], Format::Json { pretty: true }, false, false),
            "{\n  \"kind\": \"programs\",\n  \"items\": [],\n  \"metadata\": {}\n}"
        );
    }

    #[test]
    fn map_link_btf_formats() {
        let m = Map {
            id: 213,
            map_type: "cgroup_array".into(),
            name: "cgroup_map".into(),
            key_size: 4,
            value_size: 4,
            max_entries: 1,
            btf_id: 0,
            pinned_paths: vec![],
            ..Default::default()
        };
        assert_eq!(
            maps(std::slice::from_ref(&m), Format::Text, true),
            " ID  TYPE          NAME        KEY  VALUE  MAX_ENTRIES  BTF_ID  PINNED  OWNERS  MEMLOCK\n213  cgroup_array  cgroup_map    4      4            1       -  -       -       -      "
        );
        assert_eq!(
            maps(&[m], Format::Csv, false),
            "id,type,name,key_size,value_size,max_entries,btf_id,pinned_paths,flags,frozen,memlock_bytes\n213,cgroup_array,cgroup_map,4,4,1,,,0,,"
        );
        let l = Link {
            id: 34,
            link_type: "cgroup".into(),
            prog_id: 632,
            attach_type: Some("cgroup_inet_ingress".into()),
            target_obj_id: None,
            target_btf_id: None,
            pinned_paths: vec![],
            target: Some("/brr.slice".into()),
            ..Default::default()
        };
        assert_eq!(
            links(std::slice::from_ref(&l), Format::Text, false),
            "ID  TYPE    PROG_ID  ATTACH_TYPE          TARGET_OBJ_ID  TARGET_BTF_ID  TARGET    \n34  cgroup      632  cgroup_inet_ingress              -              -  /brr.slice"
        );
        assert_eq!(
            links(&[l], Format::Json { pretty: false }, false),
            r#"{"kind":"links","items":[{"id":34,"type":"cgroup","prog_id":632,"attach_type":"cgroup_inet_ingress","target_obj_id":null,"target_btf_id":null,"pinned_paths":[],"target":"/brr.slice"}],"metadata":{}}"#
        );
        let b = BtfObject {
            id: 1,
            name: "vmlinux".into(),
            size: 5515646,
            pinned_paths: vec![],
            users: None,
        };
        assert_eq!(
            btfs(std::slice::from_ref(&b), Format::Text, false),
            "ID  NAME     SIZE   \n 1  vmlinux  5515646"
        );
        assert_eq!(
            btfs(std::slice::from_ref(&b), Format::Csv, false),
            "id,name,size,pinned_paths\n1,vmlinux,5515646,"
        );
        // -x: who uses each object.
        let used = BtfObject {
            id: 40,
            name: "-".into(),
            size: 272,
            users: Some(crate::model::BtfUsers {
                prog_ids: vec![7, 9],
                map_ids: vec![3],
            }),
            ..Default::default()
        };
        let both = [b, used];
        assert_eq!(
            btfs(&both, Format::Text, true),
            "ID  NAME     SIZE     PROGS  MAPS\n 1  vmlinux  5515646  -      -   \n40  -            272  7,9    3   "
        );
        assert_eq!(
            btfs(&both, Format::Csv, true),
            "id,name,size,pinned_paths,prog_ids,map_ids\n1,vmlinux,5515646,,,\n40,-,272,,7;9,3"
        );
        assert_eq!(
            btfs(&both[1..], Format::Json { pretty: false }, true),
            r#"{"kind":"btfs","items":[{"id":40,"name":"-","size":272,"pinned_paths":[],"prog_ids":[7,9],"map_ids":[3]}],"metadata":{}}"#
        );
        assert_eq!(links(&[], Format::Text, false), "No eBPF links found.");
        assert_eq!(maps(&[], Format::Text, false), "No eBPF maps found.");
        assert_eq!(btfs(&[], Format::Text, true), "No BTF objects found.");
    }

    #[test]
    fn activity_formats() {
        let mut p = prog(689);
        p.run_count = 35101434;
        p.run_time_ns = 2807731032;
        p.pinned_paths.clear();
        let rows = [ActivityRow {
            prog: p,
            run_count_delta: 3939893,
            run_time_ns_delta: 486420680,
            recursion_misses_delta: 0,
        }];
        let run = ActivityRun {
            duration: 2.0,
            measured: 2.0,
            limit: 3,
            all: false,
            window: None,
        };
        let t = activity(&rows, run, Format::Text, true, false);
        assert_eq!(
            t,
            " ID  TYPE        NAME           CPU%     EXECS/s  AVG_NS  CUMUL_AVG_NS  NS_PER/s   EXECS_DELTA  TOTAL_NS   EXECS_TOTAL  CUMUL_NS    XLAT_B  JIT_B\n689  cgroup_skb  count_ingress  24.3210  1969946     123            79  243210340      3939893  486420680     35101434  2807731032     144     90"
        );
        let c = activity(&rows, run, Format::Csv, false, false);
        assert_eq!(
            c.lines().nth(1).unwrap(),
            "2.0,3,false,689,cgroup_skb,count_ingress,d812b1a3dc0f9a8c,144,90,3939893,486420680,123,35101434,2807731032,79,,2.0,count_ingress,0,24.321034,1969946"
        );
        let j = activity(&rows, run, Format::Json { pretty: false }, false, false);
        assert!(j.ends_with(
            r#""full_name":"count_ingress","recursion_misses_delta":0,"cpu_percent":24.321034,"execs_per_sec":1969946}],"metadata":{"duration":2.0,"limit":3,"include_all":false,"measured_duration":2.0}}"#
        ), "{j}");
        // A window that measured nothing has no rate, and JSON no NaN.
        let none = ActivityRun {
            measured: 0.0,
            ..run
        };
        let j = activity(&rows, none, Format::Json { pretty: false }, false, false);
        assert!(j.contains(r#""cpu_percent":0.0,"execs_per_sec":0}"#), "{j}");
        assert_eq!(
            activity(&[], run, Format::Text, false, false),
            "No active eBPF program runtime deltas observed."
        );
        assert_eq!(
            activity(&[], run, Format::Csv, false, false)
                .lines()
                .count(),
            1
        );
    }

    /// One number style per view: `activity` plain (as the original), `top`
    /// (TUI and textmode) `,`-grouped in every integer column, MAPS_MEM too.
    #[test]
    fn each_view_groups_its_numbers_one_way() {
        let mut p = prog(689);
        p.memlock_bytes = Some(4096);
        p.maps_memlock_bytes = Some(426_880);
        p.shared_maps = Some(1);
        let rows = [ActivityRow {
            prog: p,
            run_count_delta: 2_579_372,
            run_time_ns_delta: 1000,
            recursion_misses_delta: 1234,
        }];
        let cells = |num: &dyn Fn(u64) -> String| {
            let (h, c) = activity_table(&rows, 2.0, false, true, num);
            let at = |name: &str| c[0][h.iter().position(|x| x.header() == name).unwrap()].clone();
            [at("EXECS/s"), at("MISSES"), at("MEMLOCK"), at("MAPS_MEM")]
        };
        assert_eq!(
            cells(&|n| n.to_string()),
            ["1289686", "1234", "4096", "426880 (1 shared)"]
        );
        assert_eq!(
            cells(&crate::render::num::commas),
            ["1,289,686", "1,234", "4,096", "426,880 (1 shared)"]
        );
    }

    #[test]
    fn rows_written_one_by_one_match_the_whole_listing() {
        let list = [prog(1), prog(2)];
        for n in 0..=2 {
            for format in [
                Format::Json { pretty: false },
                Format::Json { pretty: true },
                Format::Csv,
            ] {
                for x in [false, true] {
                    let whole = programs(&list[..n], format, false, x);
                    let mut out = Vec::new();
                    let mut w = RowWriter::new(&mut out, format, ListingKind::Programs, x).unwrap();
                    let csv = w.csv();
                    for p in &list[..n] {
                        w.row_fields(program_items(p, x, csv)).unwrap();
                    }
                    w.finish().unwrap();
                    assert_eq!(String::from_utf8(out).unwrap(), whole, "{n} {format:?} {x}");
                }
            }
        }
        let mut out = Vec::new();
        assert!(RowWriter::new(&mut out, Format::Text, ListingKind::Maps, false).is_none());
    }

    #[test]
    fn json_owners_name_their_container_and_pod() {
        let mut p = full_program();
        let path = format!(
            "/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod{}.slice/crio-{}.scope",
            "0123abcd_0000_4000_8000_000000000001",
            "c1".repeat(32)
        );
        let mut w = crate::kernel::cgroups::workload(&path);
        if let Some(pod) = w.pod.as_mut() {
            pod.namespace = Some("kube-system".into());
            pod.name = Some("agent-x7k2p".into());
        }
        if let Some(k) = p.keepers.as_mut() {
            k.workloads.insert(40, w);
        }
        let j = programs(&[p], Format::Json { pretty: false }, false, true);
        let want = format!(
            r#""owners":[{{"pid":40,"comm":"bash","container":{{"runtime":"cri-o","id":"{}","name":null}},"pod":{{"uid":"0123abcd-0000-4000-8000-000000000001","namespace":"kube-system","name":"agent-x7k2p","qos":"BestEffort"}}}}]"#,
            "c1".repeat(32)
        );
        assert!(j.contains(&want), "{j}");
        // CSV and text keep `comm(pid)`.
        let c = programs(&[full_program()], Format::Csv, false, true);
        assert!(c.contains("bash(40)"), "{c}");
    }

    #[test]
    fn owners_and_how_objects_stay_loaded() {
        use crate::model::Owner;
        let o = |pid, comm: &str| Owner {
            pid,
            comm: comm.into(),
        };
        let k = |owners, held_by| Keepers {
            owners,
            held_by,
            workloads: Default::default(),
        };
        assert_eq!(owners_cell(None, true), "-");
        assert_eq!(owners_cell(Some(&k(vec![], None)), true), "(pinned)");
        assert_eq!(
            owners_cell(Some(&k(vec![], Some(Holder::Link(7)))), false),
            "(held by link 7)"
        );
        assert_eq!(
            owners_cell(Some(&k(vec![], Some(Holder::Prog(12)))), false),
            "(held by prog 12)"
        );
        assert_eq!(owners_cell(Some(&k(vec![], None)), false), "-");
        let three = k(vec![o(1, "systemd"), o(40, "bash"), o(99, "x")], None);
        assert_eq!(owners_cell(Some(&three), false), "systemd(1),bash(40) +1");
        assert_eq!(
            owners_cell(Some(&k(vec![o(5, "a")], Some(Holder::Link(1)))), true),
            "a(5)"
        );
        let mut p = prog(3);
        p.keepers = Some(k(vec![o(40, "bash")], Some(Holder::Link(9))));
        p.attached = vec![
            AttachPoint {
                link_id: Some(9),
                attach_type: None,
                target: Some("sched_switch".into()),
                perf_event: None,
            },
            AttachPoint {
                link_id: Some(10),
                attach_type: Some("cgroup_inet_ingress".into()),
                target: Some("/a".into()),
                perf_event: None,
            },
            AttachPoint {
                link_id: None,
                attach_type: Some("kprobe".into()),
                target: Some("do_sys_openat2+0x10".into()),
                perf_event: Some(crate::model::PerfEventFd { pid: 40, fd: 7 }),
            },
        ];
        p.maps_memlock_bytes = Some(8192);
        p.shared_maps = Some(1);
        let j = programs(
            std::slice::from_ref(&p),
            Format::Json { pretty: false },
            false,
            true,
        );
        assert!(j.ends_with(r#""shared_maps":1,"owners":[{"pid":40,"comm":"bash","container":null,"pod":null}],"held_by":{"kind":"link","id":9},"attached":[{"link_id":9,"attach_type":null,"target":"sched_switch","perf_event":null},{"link_id":10,"attach_type":"cgroup_inet_ingress","target":"/a","perf_event":null},{"link_id":null,"attach_type":"kprobe","target":"do_sys_openat2+0x10","perf_event":{"pid":40,"fd":7}}]}],"metadata":{}}"#), "{j}");
        let c = programs(std::slice::from_ref(&p), Format::Csv, false, true);
        assert!(c
            .lines()
            .next()
            .unwrap()
            .ends_with(",shared_maps,owners,held_by,attached"));
        assert!(c
            .lines()
            .nth(1)
            .unwrap()
            .ends_with(",8192,1,bash(40),link 9,sched_switch;cgroup_inet_ingress:/a;kprobe:do_sys_openat2+0x10"));
        let t = programs(&[p], Format::Text, false, true);
        assert!(
            t.contains("  bash(40)  sched_switch,cgroup_inet_ingress:/a,kprobe:do_sys_openat2+0x10  -        8192 (1 shared)"),
            "{t}"
        );
    }

    /// A program with every field set apart from its fallback.
    fn full_program() -> Program {
        use crate::model::Owner;
        let mut p = prog(5);
        p.full_name = "count_ingress_packets".into();
        p.memlock_bytes = Some(4096);
        p.maps_memlock_bytes = Some(8192);
        p.shared_maps = Some(1);
        p.keepers = Some(Keepers {
            owners: vec![Owner {
                pid: 40,
                comm: "bash".into(),
            }],
            held_by: None,
            workloads: Default::default(),
        });
        p.attached = vec![AttachPoint {
            link_id: Some(9),
            attach_type: None,
            target: Some("sched_switch".into()),
            perf_event: None,
        }];
        p
    }

    /// `p` as a reader leaves it when it reads only `f`.
    fn read_only(p: &Program, f: ProgFields) -> Program {
        let mut p = p.clone();
        if !f.full_name {
            p.full_name.clear();
        }
        if !f.map_ids {
            p.map_ids.clear();
        }
        if !f.memlock {
            p.memlock_bytes = None;
        }
        if !f.pins {
            p.pinned_paths.clear();
        }
        if !f.context {
            (p.maps_memlock_bytes, p.shared_maps) = (None, None);
            (p.keepers, p.attached) = (None, Vec::new());
        }
        p
    }

    /// Each field turned off in turn.
    fn each_off(f: ProgFields) -> Vec<(&'static str, ProgFields)> {
        vec![
            (
                "full_name",
                ProgFields {
                    full_name: false,
                    ..f
                },
            ),
            (
                "map_ids",
                ProgFields {
                    map_ids: false,
                    ..f
                },
            ),
            (
                "memlock",
                ProgFields {
                    memlock: false,
                    ..f
                },
            ),
            ("pins", ProgFields { pins: false, ..f }),
            (
                "context",
                ProgFields {
                    context: false,
                    ..f
                },
            ),
        ]
    }

    const FORMATS: [Format; 3] = [Format::Text, Format::Json { pretty: false }, Format::Csv];

    /// Each output asks for exactly what it prints: reading only its
    /// fields prints the same bytes as reading all (the context is what
    /// `-x` adds: JSON keeps its keys, null, without it), and each field it
    /// asks for shows (so a field printed but not asked for, or asked for
    /// but never printed, fails here).
    #[test]
    fn program_outputs_ask_for_exactly_the_fields_they_print() {
        let p = full_program();
        for format in FORMATS {
            for x in [false, true] {
                let every = read_only(
                    &p,
                    ProgFields {
                        context: x,
                        ..ProgFields::ALL
                    },
                );
                for stats in [false, true] {
                    let f = program_fields(format, x);
                    let out = |q: &Program| programs(std::slice::from_ref(q), format, stats, x);
                    let all = out(&every);
                    assert_eq!(out(&read_only(&p, f)), all, "{format:?} -x {x} {f:?}");
                    for (name, less) in each_off(f) {
                        if less != f {
                            let shown = out(&read_only(&p, less)) != all;
                            assert!(shown, "{format:?} -x {x}: {name} asked for, never shown");
                        }
                    }
                }
                let f = activity_fields(format, x);
                let rows = |q: &Program| {
                    vec![ActivityRow {
                        prog: q.clone(),
                        run_count_delta: 10,
                        run_time_ns_delta: 1000,
                        recursion_misses_delta: 0,
                    }]
                };
                let run = ActivityRun {
                    duration: 1.0,
                    measured: 1.0,
                    limit: 0,
                    all: false,
                    window: None,
                };
                let out = |q: &Program| activity(&rows(q), run, format, false, x);
                let all = out(&every);
                assert_eq!(out(&read_only(&p, f)), all, "activity {format:?} -x {x}");
                for (name, less) in each_off(f) {
                    if less != f {
                        let shown = out(&read_only(&p, less)) != all;
                        assert!(shown, "activity {format:?} -x {x}: {name} never shown");
                    }
                }
            }
        }
        // The text listing without -x: the info call and the BTF name,
        // no fdinfo (memlock), no pins, no owner scan.
        let text = program_fields(Format::Text, false);
        assert_eq!(
            (text.memlock, text.map_ids, text.pins, text.context),
            (false, false, false, false)
        );
    }

    #[test]
    fn map_and_link_outputs_ask_for_exactly_the_fields_they_print() {
        use crate::model::Owner;
        let keepers = Some(Keepers {
            owners: vec![Owner {
                pid: 1,
                comm: "systemd".into(),
            }],
            held_by: Some(Holder::Prog(3)),
            workloads: Default::default(),
        });
        let m = Map {
            id: 3,
            map_type: "array".into(),
            name: "m".into(),
            pinned_paths: vec!["/sys/fs/bpf/m".into()],
            frozen: Some(true),
            memlock_bytes: Some(4096),
            keepers: keepers.clone(),
            ..Default::default()
        };
        let map_read = |f: MapFields| {
            let mut m = m.clone();
            if !f.fdinfo {
                (m.frozen, m.memlock_bytes) = (None, None);
            }
            if !f.pins {
                m.pinned_paths.clear();
            }
            if !f.keepers {
                m.keepers = None;
            }
            m
        };
        let l = Link {
            id: 4,
            link_type: "cgroup".into(),
            target: Some("/brr.slice".into()),
            pinned_paths: vec!["/sys/fs/bpf/l".into()],
            keepers,
            ..Default::default()
        };
        let link_read = |f: LinkFields| {
            let mut l = l.clone();
            if !f.target_names {
                l.target = Some("cgroup_id 9".into());
            }
            if !f.pins {
                l.pinned_paths.clear();
            }
            if !f.keepers {
                l.keepers = None;
            }
            l
        };
        for format in FORMATS {
            for x in [false, true] {
                let f = map_fields(format, x);
                let out = |f| maps(&[map_read(f)], format, x);
                assert_eq!(out(f), out(MapFields::ALL), "map {format:?} -x {x}");
                for less in [
                    MapFields { fdinfo: false, ..f },
                    MapFields { pins: false, ..f },
                    MapFields {
                        keepers: false,
                        ..f
                    },
                ] {
                    assert!(
                        less == f || out(less) != out(f),
                        "map {format:?} {x} {less:?}"
                    );
                }
                let f = link_fields(format, x);
                let out = |f| links(&[link_read(f)], format, x);
                assert_eq!(out(f), out(LinkFields::ALL), "link {format:?} -x {x}");
                for less in [
                    LinkFields {
                        target_names: false,
                        ..f
                    },
                    LinkFields { pins: false, ..f },
                    LinkFields {
                        keepers: false,
                        ..f
                    },
                ] {
                    assert!(
                        less == f || out(less) != out(f),
                        "link {format:?} {x} {less:?}"
                    );
                }
            }
        }
        assert_eq!(map_fields(Format::Text, false), MapFields::default());
    }

    #[test]
    fn stream_windows_and_early_end() {
        let mut p = prog(7);
        p.pinned_paths.clear();
        let rows = [ActivityRow {
            prog: p,
            run_count_delta: 10,
            run_time_ns_delta: 1000,
            recursion_misses_delta: 0,
        }];
        let run = ActivityRun {
            duration: 5.0,
            measured: 1.2449,
            limit: 0,
            all: false,
            window: Some((100.0, 101.2449)),
        };
        let t = activity_window(&rows, run, Format::Text, false, false, false);
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(lines[0], "");
        assert_eq!(
            lines[1],
            "1970-01-01T00:01:41.245Z window 1.24 s (from 1970-01-01T00:01:40.000Z)"
        );
        assert!(lines[2].starts_with("ID  TYPE"));
        assert_eq!(
            lines.last().copied(),
            Some("window ended early after 1.24 s of 5 s")
        );
        assert!(t.ends_with('\n'));
        let j = activity_window(
            &rows,
            run,
            Format::Json { pretty: true },
            false,
            false,
            true,
        );
        assert_eq!(j.lines().count(), 1);
        assert!(j.ends_with(
            r#""measured_duration":1.2449,"window_start":100.0,"window_end":101.2449}}
"#
        ));
        let first = activity_window(&rows, run, Format::Csv, false, false, true);
        let header = first.lines().next().unwrap();
        let one_shot = activity(
            &rows,
            ActivityRun {
                window: None,
                ..run
            },
            Format::Csv,
            false,
            false,
        );
        assert_eq!(
            header,
            format!(
                "{},window_start,window_end",
                one_shot.lines().next().unwrap()
            )
        );
        assert!(header.ends_with(
            ",measured_duration,full_name,recursion_misses_delta,cpu_percent,execs_per_sec,window_start,window_end"
        ));
        let row = first.lines().nth(1).unwrap();
        assert!(
            row.ends_with(",1.2449,count_ingress,0,8.032773716764399e-05,8,100.0,101.2449"),
            "{row}"
        );
        let later = activity_window(&rows, run, Format::Csv, false, false, false);
        assert_eq!(later.lines().count(), 1);
        assert_eq!(Some(later.as_str()), first.split_once('\n').map(|x| x.1));
        assert_eq!(
            activity_window(&[], run, Format::Csv, false, false, false),
            ""
        );
        // A full window has no early-end line.
        let full = ActivityRun {
            measured: 5.001,
            window: None,
            ..run
        };
        assert_eq!(ended_early(&full), None);
        assert!(!activity(&rows, full, Format::Text, false, false).contains("early"));
        assert!(activity(&[], run, Format::Text, false, false)
            .ends_with("observed.\nwindow ended early after 1.24 s of 5 s"));
    }
}
