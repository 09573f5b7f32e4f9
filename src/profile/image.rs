//! What the profiler needs to know about one loaded program: its JIT
//! functions (with BTF names) and its line table (JIT address -> xlated
//! offset -> source), read with `bpf()` and the program's BTF.
//!
//! (A profiler-local reader: the shared `kernel::btf` / `kernel::lines`
//! modules did not exist yet when this was written; swap over once they do.)

use std::collections::HashMap;
use std::os::fd::OwnedFd;
use std::sync::Arc;

use crate::kernel::names;
use crate::sys::bpf::{self, ObjKind, ProgDetail, ProgWant};
use crate::sys::Errno;

const BTF_MAGIC: u16 = 0xeb9f;
const BTF_KIND_FUNC: u32 = 12;

/// A BTF blob: string section and type offsets.
#[derive(Debug, Default)]
pub struct Btf {
    data: Vec<u8>,
    strings: std::ops::Range<usize>,
    /// Byte offset of each type record; index = type id − 1.
    types: Vec<usize>,
}

fn u32_at(b: &[u8], off: usize) -> Option<u32> {
    let s = b.get(off..off.checked_add(4)?)?;
    Some(u32::from_le_bytes([s[0], s[1], s[2], s[3]]))
}

impl Btf {
    /// Parse the header and index the types. Anything malformed leaves the
    /// affected part empty (no strings / no types) rather than failing.
    pub fn parse(data: Vec<u8>) -> Btf {
        let mut btf = Btf {
            data,
            ..Default::default()
        };
        let d = &btf.data;
        if d.len() < 24 || u16::from_le_bytes([d[0], d[1]]) != BTF_MAGIC {
            return btf;
        }
        let field = |i: usize| u32_at(d, 4 + 4 * i).unwrap_or(0) as usize;
        let (hdr_len, type_off, type_len, str_off, str_len) =
            (field(0), field(1), field(2), field(3), field(4));
        let s0 = hdr_len.saturating_add(str_off);
        if s0.checked_add(str_len).is_some_and(|e| e <= d.len()) {
            btf.strings = s0..s0 + str_len;
        }
        let t0 = hdr_len.saturating_add(type_off);
        if let Some(t1) = t0.checked_add(type_len).filter(|&e| e <= d.len()) {
            btf.types = index_types(d, t0, t1);
        }
        btf
    }

    /// The string at `off` (to the next NUL); empty or out of range is `None`.
    pub fn string(&self, off: u32) -> Option<String> {
        let s = self.data.get(self.strings.clone())?;
        let rest = s.get(off as usize..)?;
        let end = rest.iter().position(|&b| b == 0).unwrap_or(rest.len());
        (end > 0).then(|| String::from_utf8_lossy(&rest[..end]).into_owned())
    }

    /// Name of the FUNC with this type id.
    pub fn func_name(&self, type_id: u32) -> Option<String> {
        let off = *self.types.get((type_id as usize).checked_sub(1)?)?;
        let info = u32_at(&self.data, off + 4)?;
        if (info >> 24) & 0x1f != BTF_KIND_FUNC {
            return None;
        }
        self.string(u32_at(&self.data, off)?)
    }
}

/// Offsets of the type records in `d[t0..t1]`; stops at an unknown kind.
fn index_types(d: &[u8], t0: usize, t1: usize) -> Vec<usize> {
    let mut out = Vec::new();
    let mut pos = t0;
    while pos + 12 <= t1 {
        let Some(info) = u32_at(d, pos + 4) else {
            break;
        };
        let vlen = (info & 0xffff) as usize;
        let extra = match (info >> 24) & 0x1f {
            2 | 7 | 8 | 9 | 10 | 11 | 12 | 16 | 18 => 0, // ptr fwd typedef volatile const restrict func float type_tag
            1 | 14 | 17 => 4,                            // int var decl_tag
            3 => 12,                                     // array
            4 | 5 | 15 | 19 => vlen * 12,                // struct union datasec enum64
            6 | 13 => vlen * 8,                          // enum func_proto
            _ => break,
        };
        out.push(pos);
        pos += 12 + extra;
    }
    out
}

/// One JITed function of a program: index 0 is the main program.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JitFunc {
    pub start: u64,
    pub len: u32,
    /// BTF name from func_info (the full name, not the 15-byte one).
    pub name: Option<Arc<str>>,
}

impl JitFunc {
    pub fn end(&self) -> u64 {
        self.start.saturating_add(self.len as u64)
    }
}

/// One line_info record that has a JIT address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineRec {
    pub jit: u64,
    /// Index into the xlated instruction stream (8-byte units).
    pub insn_off: u32,
    pub file: Option<Arc<str>>,
    pub line: Option<u32>,
    pub column: Option<u32>,
    pub source: Option<Arc<str>>,
}

/// A program as the profiler sees it.
#[derive(Debug, Clone, Default)]
pub struct ProgMeta {
    pub id: u32,
    pub prog_type: String,
    pub name: String,
    pub tag: String,
    /// Functions with a non-zero start and length.
    pub funcs: Vec<JitFunc>,
    /// Line records with a JIT address, sorted by it (stable: equal
    /// addresses keep kernel order, so the last one wins a lookup).
    pub lines: Vec<LineRec>,
}

impl ProgMeta {
    /// The line record covering `addr`: greatest JIT address ≤ addr.
    pub fn line_index(&self, addr: u64) -> Option<usize> {
        self.lines.partition_point(|l| l.jit <= addr).checked_sub(1)
    }

    /// The function containing `addr`.
    pub fn func_at(&self, addr: u64) -> Option<&JitFunc> {
        self.funcs
            .iter()
            .find(|f| f.start <= addr && addr < f.end())
    }

    /// The main function's BTF name.
    pub fn full_name(&self) -> Option<&str> {
        self.funcs.first().and_then(|f| f.name.as_deref())
    }
}

/// Interns strings per BTF string offset so repeated file names share memory.
struct Interner<'a> {
    btf: Option<&'a Btf>,
    cache: HashMap<u32, Option<Arc<str>>>,
}

impl Interner<'_> {
    fn get(&mut self, off: u32) -> Option<Arc<str>> {
        let btf = self.btf?;
        self.cache
            .entry(off)
            .or_insert_with(|| btf.string(off).map(Arc::from))
            .clone()
    }
}

fn u32_ne(b: &[u8], off: usize) -> u32 {
    u32::from_ne_bytes([b[off], b[off + 1], b[off + 2], b[off + 3]])
}

/// Build the profiler's view from a program's info arrays and BTF.
pub fn build_meta(d: &ProgDetail, btf: Option<&Btf>) -> ProgMeta {
    let mut strings = Interner {
        btf,
        cache: HashMap::new(),
    };
    // func_info[i] describes JIT function i.
    let func_rec = d.func_info_rec_size as usize;
    let func_names: Vec<Option<Arc<str>>> = if func_rec >= 8 {
        d.func_info
            .chunks_exact(func_rec)
            .map(|r| btf.and_then(|b| b.func_name(u32_ne(r, 4))).map(Arc::from))
            .collect()
    } else {
        Vec::new()
    };
    let funcs = d
        .jited_ksyms
        .iter()
        .zip(&d.jited_func_lens)
        .enumerate()
        .filter(|(_, (&s, &l))| s != 0 && l != 0)
        .map(|(i, (&start, &len))| JitFunc {
            start,
            len,
            name: func_names.get(i).cloned().flatten(),
        })
        .collect();
    let rec = d.line_info_rec_size as usize;
    let mut lines = Vec::new();
    if rec >= 16 {
        for (i, r) in d.line_info.chunks_exact(rec).enumerate() {
            let Some(&jit) = d.jited_line_info.get(i).filter(|&&a| a != 0) else {
                continue;
            };
            let line_col = u32_ne(r, 12);
            lines.push(LineRec {
                jit,
                insn_off: u32_ne(r, 0),
                file: strings.get(u32_ne(r, 4)),
                line: Some(line_col >> 10).filter(|&l| l != 0),
                column: Some(line_col & 0x3ff).filter(|&c| c != 0),
                source: strings.get(u32_ne(r, 8)),
            });
        }
    }
    lines.sort_by_key(|l| l.jit);
    ProgMeta {
        id: d.info.id,
        prog_type: names::prog_type(d.info.prog_type),
        name: names::object_name(&d.info.name),
        tag: names::hex(&d.info.tag),
        funcs,
        lines,
    }
}

/// BTF objects fetched once per ID (many programs share one).
#[derive(Default)]
pub struct BtfCache {
    by_id: HashMap<u32, Option<Arc<Btf>>>,
}

impl BtfCache {
    /// The BTF object, or `None` if it vanished or cannot be read.
    pub fn get(&mut self, id: u32) -> Option<Arc<Btf>> {
        if id == 0 {
            return None;
        }
        self.by_id
            .entry(id)
            .or_insert_with(|| {
                let fd = bpf::fd_by_id(ObjKind::Btf, id).ok()?;
                let (_, _, data) = bpf::btf_info(&fd, true).ok()?;
                Some(Arc::new(Btf::parse(data)))
            })
            .clone()
    }
}

/// What the profiler asks the kernel for: ranges, lines, function names
/// (no xlated instructions, no map IDs).
pub const WANT: ProgWant = ProgWant {
    map_ids: false,
    xlated: false,
    jit_ranges: true,
    line_info: true,
    func_info: true,
};

/// Read one open program.
pub fn read_meta(fd: &OwnedFd, cache: &mut BtfCache) -> Result<ProgMeta, Errno> {
    let d = bpf::prog_detail(fd, WANT)?;
    let btf = cache.get(d.info.btf_id);
    Ok(build_meta(&d, btf.as_deref()))
}

/// Read a program by ID (`Ok(None)` if it is gone).
pub fn read_meta_by_id(id: u32, cache: &mut BtfCache) -> Result<Option<ProgMeta>, Errno> {
    match bpf::fd_by_id(ObjKind::Prog, id) {
        Ok(fd) => match read_meta(&fd, cache) {
            Ok(m) => Ok(Some(m)),
            Err(Errno(libc::ENOENT)) => Ok(None),
            Err(e) => Err(e),
        },
        Err(Errno(libc::ENOENT)) => Ok(None),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
pub mod tests {
    use super::*;

    /// A BTF blob with the given strings and FUNC types (name offsets).
    pub fn btf_blob(strings: &[&str], funcs: &[u32]) -> Vec<u8> {
        let mut str_sec = vec![0u8];
        let mut offs = Vec::new();
        for s in strings {
            offs.push(str_sec.len() as u32);
            str_sec.extend_from_slice(s.as_bytes());
            str_sec.push(0);
        }
        let mut types = Vec::new();
        // type 1: an INT (exercises the skip of its 4 extra bytes)
        types.extend_from_slice(&0u32.to_le_bytes());
        types.extend_from_slice(&(1u32 << 24).to_le_bytes());
        types.extend_from_slice(&4u32.to_le_bytes());
        types.extend_from_slice(&32u32.to_le_bytes());
        // type 2: FUNC_PROTO with one param
        types.extend_from_slice(&0u32.to_le_bytes());
        types.extend_from_slice(&((13u32 << 24) | 1).to_le_bytes());
        types.extend_from_slice(&1u32.to_le_bytes());
        types.extend_from_slice(&[0u8; 8]);
        for &f in funcs {
            types.extend_from_slice(&offs[f as usize].to_le_bytes());
            types.extend_from_slice(&(12u32 << 24).to_le_bytes());
            types.extend_from_slice(&2u32.to_le_bytes());
        }
        let mut b = Vec::new();
        b.extend_from_slice(&BTF_MAGIC.to_le_bytes());
        b.extend_from_slice(&[1, 0]);
        for v in [
            24u32,
            0,
            types.len() as u32,
            types.len() as u32,
            str_sec.len() as u32,
        ] {
            b.extend_from_slice(&v.to_le_bytes());
        }
        b.extend_from_slice(&types);
        b.extend_from_slice(&str_sec);
        b
    }

    #[test]
    fn btf_strings_and_funcs() {
        let btf = Btf::parse(btf_blob(&["main_fn", "sub_fn", "x.c"], &[0, 1]));
        assert_eq!(btf.string(1).as_deref(), Some("main_fn"));
        assert_eq!(btf.string(0), None);
        assert_eq!(btf.string(9999), None);
        assert_eq!(btf.func_name(3).as_deref(), Some("main_fn"));
        assert_eq!(btf.func_name(4).as_deref(), Some("sub_fn"));
        assert_eq!(btf.func_name(1), None, "INT is not a FUNC");
        assert_eq!(btf.func_name(0), None);
        assert_eq!(btf.func_name(5), None);
        let bad = Btf::parse(vec![1, 2, 3]);
        assert_eq!(bad.string(1), None);
    }

    #[test]
    fn meta_from_info_arrays() {
        let blob = btf_blob(
            &["main_fn", "sub_fn", "/src/x.c", "a = 1;", "b = 2;"],
            &[0, 1],
        );
        let btf = Btf::parse(blob);
        // string offsets: main_fn=1, sub_fn=9, /src/x.c=16, "a = 1;"=25, "b = 2;"=32
        let mut line_info = Vec::new();
        for (insn, line_off, line, col) in
            [(0u32, 25u32, 10u32, 5u32), (4, 32, 11, 0), (9, 25, 0, 3)]
        {
            for v in [insn, 16, line_off, (line << 10) | col] {
                line_info.extend_from_slice(&v.to_ne_bytes());
            }
        }
        let mut func_info = Vec::new();
        for (insn, ty) in [(0u32, 3u32), (9, 4)] {
            func_info.extend_from_slice(&insn.to_ne_bytes());
            func_info.extend_from_slice(&ty.to_ne_bytes());
        }
        let mut info = bpf::ProgInfo::default();
        info.id = 42;
        info.name[..4].copy_from_slice(b"prog");
        let d = ProgDetail {
            info,
            map_ids: vec![],
            xlated: vec![],
            jited_ksyms: vec![0x1000, 0x2000],
            jited_func_lens: vec![0x100, 0x40],
            line_info,
            line_info_rec_size: 16,
            jited_line_info: vec![0x1000, 0x1020, 0x2000],
            func_info,
            func_info_rec_size: 8,
        };
        let m = build_meta(&d, Some(&btf));
        assert_eq!(m.id, 42);
        assert_eq!(m.name, "prog");
        assert_eq!(m.full_name(), Some("main_fn"));
        assert_eq!(m.funcs[1].name.as_deref(), Some("sub_fn"));
        assert_eq!(m.lines.len(), 3);
        assert_eq!(m.lines[1].line, Some(11));
        assert_eq!(m.lines[1].column, None);
        assert_eq!(m.lines[2].line, None);
        assert_eq!(m.lines[2].source.as_deref(), Some("a = 1;"));
        assert_eq!(m.lines[0].file.as_deref(), Some("/src/x.c"));
        assert_eq!(m.line_index(0xfff), None);
        assert_eq!(m.line_index(0x101f), Some(0));
        assert_eq!(m.line_index(0x1020), Some(1));
        assert_eq!(m.line_index(0x1fff), Some(1), "no upper bound");
        assert_eq!(m.func_at(0x2010).unwrap().name.as_deref(), Some("sub_fn"));
        assert_eq!(m.func_at(0x2040), None);
    }
}
