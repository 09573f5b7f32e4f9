//! Just enough BTF: the one reader of a blob's header, string table and
//! type walk, and from it FUNC names by type ID and the member names of
//! named types.
//!
//! Malformed or truncated blobs yield fewer strings, names or types, never
//! an error.

use std::collections::HashMap;

const MAGIC: u16 = 0xEB9F;
pub(crate) const KIND_STRUCT: u32 = 4;
pub(crate) const KIND_UNION: u32 = 5;
pub(crate) const KIND_ENUM: u32 = 6;
const KIND_FUNC: u32 = 12;
pub(crate) const KIND_ENUM64: u32 = 19;

fn u32_at(b: &[u8], off: usize) -> Option<u32> {
    let s = b.get(off..off.checked_add(4)?)?;
    Some(u32::from_le_bytes([s[0], s[1], s[2], s[3]]))
}

/// Bytes of kind-specific data after a type's 12-byte header, and the
/// size of each of its `vlen` entries (0 when it has none).
fn layout(kind: u32, vlen: usize) -> Option<(usize, usize)> {
    Some(match kind {
        1 | 14 | 17 => (4, 0),              // INT, VAR, DECL_TAG
        2 | 7..=12 | 16 | 18 => (0, 0),     // PTR, FWD, TYPEDEF, qualifiers, FUNC, FLOAT, TYPE_TAG
        3 => (12, 0),                       // ARRAY
        4 | 5 | 15 | 19 => (12 * vlen, 12), // STRUCT, UNION, DATASEC, ENUM64
        6 | 13 => (8 * vlen, 8),            // ENUM, FUNC_PROTO
        _ => return None,
    })
}

/// A blob's type and string sections, as its header places them; each is
/// empty when the header does not describe it. Only little-endian BTF (the
/// host's) is understood.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Sections<'a> {
    types: &'a [u8],
    strings: &'a [u8],
}

impl<'a> Sections<'a> {
    pub(crate) fn of(data: &'a [u8]) -> Sections<'a> {
        if data.len() < 24 || u16::from_le_bytes([data[0], data[1]]) != MAGIC {
            return Sections::default();
        }
        let field = |i: usize| u32_at(data, 4 + 4 * i).map(|v| v as usize);
        let (Some(hdr), Some(type_off), Some(type_len), Some(str_off), Some(str_len)) =
            (field(0), field(1), field(2), field(3), field(4))
        else {
            return Sections::default();
        };
        Sections {
            types: data
                .get(hdr + type_off..hdr + type_off + type_len)
                .unwrap_or_default(),
            strings: data
                .get(hdr + str_off..hdr + str_off + str_len)
                .unwrap_or_default(),
        }
    }

    /// The string at `off`, up to the next NUL (possibly empty).
    pub(crate) fn string(&self, off: u32) -> Option<&'a [u8]> {
        string(self.strings, off)
    }

    /// The types in ID order, up to the first of an unknown kind.
    pub(crate) fn types(&self) -> Types<'a> {
        Types {
            types: self.types,
            pos: 0,
            id: 1,
        }
    }
}

fn string(strings: &[u8], off: u32) -> Option<&[u8]> {
    let rest = strings.get(off as usize..)?;
    let end = rest.iter().position(|&b| b == 0).unwrap_or(rest.len());
    rest.get(..end)
}

/// One type of a blob.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Type<'a> {
    pub id: u32,
    pub kind: u32,
    pub name_off: u32,
    pub vlen: usize,
    /// The header's size-or-type word: the type a PTR or TYPEDEF refers to.
    pub size_type: u32,
    /// The bytes after the header: `vlen` entries of `entry` bytes each
    /// (fewer when the blob is cut short).
    data: &'a [u8],
    entry: usize,
}

impl Type<'_> {
    /// The first word of each entry: a member's or an enum value's name.
    pub(crate) fn entry_names(&self) -> impl Iterator<Item = u32> + '_ {
        (0..self.vlen).filter_map(|i| u32_at(self.data, i * self.entry))
    }
}

/// The type walk of [`Sections::types`].
pub(crate) struct Types<'a> {
    types: &'a [u8],
    pos: usize,
    id: u32,
}

impl<'a> Iterator for Types<'a> {
    type Item = Type<'a>;

    fn next(&mut self) -> Option<Type<'a>> {
        let header = self.types.get(self.pos..self.pos.checked_add(12)?)?;
        let (name_off, info) = (u32_at(header, 0)?, u32_at(header, 4)?);
        let kind = (info >> 24) & 0x1f;
        let vlen = (info & 0xffff) as usize;
        let Some((extra, entry)) = layout(kind, vlen) else {
            // The size of an unknown kind is unknown, so nothing after it
            // can be found.
            self.pos = self.types.len();
            return None;
        };
        let start = self.pos + 12;
        let rest = self.types.get(start..).unwrap_or_default();
        let ty = Type {
            id: self.id,
            kind,
            name_off,
            vlen,
            size_type: u32_at(header, 8)?,
            data: rest.get(..extra).unwrap_or(rest),
            entry,
        };
        self.pos = start + extra;
        self.id += 1;
        Some(ty)
    }
}

#[derive(Debug, Clone, Default)]
pub struct BtfData {
    strings: Vec<u8>,
    /// FUNC type id -> name offset.
    funcs: HashMap<u32, u32>,
}

impl BtfData {
    /// Parse a raw blob. Only little-endian BTF (the host's) is understood.
    pub fn parse(data: &[u8]) -> BtfData {
        let s = Sections::of(data);
        BtfData {
            strings: s.strings.to_vec(),
            funcs: s
                .types()
                .filter(|t| t.kind == KIND_FUNC)
                .map(|t| (t.id, t.name_off))
                .collect(),
        }
    }

    /// The string at `off`: up to the next NUL, lossy UTF-8; empty -> None.
    pub fn string(&self, off: u32) -> Option<String> {
        let s = string(&self.strings, off)?;
        (!s.is_empty()).then(|| String::from_utf8_lossy(s).into_owned())
    }

    /// Name of the FUNC type `type_id`.
    pub fn func_name(&self, type_id: u32) -> Option<String> {
        self.funcs.get(&type_id).and_then(|&off| self.string(off))
    }
}

/// For each struct, union or enum named in `wanted` (the first of that
/// name), the names of its members or values. A malformed blob yields
/// what was read before the damage.
/// How many arguments each of the tracepoints `tps` passes to a raw
/// tracepoint program, from the kernel BTF `data`: the parameters of the
/// prototype `btf_trace_<tp>` points to, less its leading `void *`.
pub(crate) fn tracepoint_args(data: &[u8], tps: &[&str]) -> HashMap<String, usize> {
    const KIND_PTR: u32 = 2;
    const KIND_TYPEDEF: u32 = 8;
    const KIND_FUNC_PROTO: u32 = 13;
    let sections = Sections::of(data);
    let types: Vec<Type<'_>> = sections.types().collect();
    let by_id = |id: u32| types.get((id as usize).checked_sub(1)?);
    let mut out = HashMap::new();
    for t in types.iter().filter(|t| t.kind == KIND_TYPEDEF) {
        let Some(name) = sections.string(t.name_off) else {
            continue;
        };
        let Some(tp) = name.strip_prefix(b"btf_trace_") else {
            continue;
        };
        let Some(tp) = tps.iter().find(|w| w.as_bytes() == tp) else {
            continue;
        };
        let proto = by_id(t.size_type)
            .filter(|p| p.kind == KIND_PTR)
            .and_then(|p| by_id(p.size_type))
            .filter(|f| f.kind == KIND_FUNC_PROTO);
        if let Some(f) = proto {
            out.insert((*tp).to_string(), f.vlen.saturating_sub(1));
        }
    }
    out
}

/// [`tracepoint_args`] of the running kernel (`/sys/kernel/btf/vmlinux`);
/// empty when it has no BTF.
pub(crate) fn kernel_tracepoint_args(tps: &[&str]) -> HashMap<String, usize> {
    if tps.is_empty() {
        return HashMap::new();
    }
    std::fs::read("/sys/kernel/btf/vmlinux")
        .map(|data| tracepoint_args(&data, tps))
        .unwrap_or_default()
}

pub(crate) fn members(data: &[u8], wanted: &[&str]) -> HashMap<String, Vec<String>> {
    let mut out = HashMap::new();
    let s = Sections::of(data);
    let named = |t: &Type<'_>| matches!(t.kind, KIND_STRUCT | KIND_UNION | KIND_ENUM | KIND_ENUM64);
    for t in s.types().filter(named) {
        let name = s.string(t.name_off).unwrap_or_default();
        let Some(w) = wanted.iter().find(|w| w.as_bytes() == name) else {
            continue;
        };
        if !out.contains_key(*w) {
            let names = t
                .entry_names()
                .filter_map(|off| s.string(off))
                .map(|s| String::from_utf8_lossy(s).into_owned())
                .collect();
            out.insert(w.to_string(), names);
        }
    }
    out
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// The running kernel's tracepoints, where it has BTF: task_rename and
    /// sys_enter pass two arguments on every kernel brr supports.
    #[test]
    fn tracepoint_argument_counts_from_kernel_btf() {
        let Ok(data) = std::fs::read("/sys/kernel/btf/vmlinux") else {
            return;
        };
        let got = tracepoint_args(&data, &["task_rename", "sys_enter", "no_such_tp"]);
        assert_eq!(got.get("task_rename"), Some(&2));
        assert_eq!(got.get("sys_enter"), Some(&2));
        assert_eq!(got.get("no_such_tp"), None);
    }

    /// Build a minimal blob: one INT "int", one FUNC_PROTO, one FUNC `name`.
    pub(crate) fn blob(func: &str, extra_strings: &[&str]) -> (Vec<u8>, Vec<u32>) {
        let mut strs = Strings::default();
        let mut add = |s: &str| strs.add(s);
        let int_name = add("int");
        let func_name = add(func);
        let offs: Vec<u32> = extra_strings.iter().map(|s| add(s)).collect();
        let mut types = Vec::new();
        let mut push = |v: &[u32]| {
            v.iter()
                .for_each(|x| types.extend_from_slice(&x.to_le_bytes()))
        };
        push(&[int_name, 1 << 24, 4, 32]); // id 1 INT
        push(&[0, 13 << 24, 1]); // id 2 FUNC_PROTO returning int
        push(&[func_name, (12 << 24) | 1, 2]); // id 3 FUNC
        (wrap(&types, &strs.0), offs)
    }

    /// A string section being built; offset 0 is the empty string.
    struct Strings(Vec<u8>);

    impl Default for Strings {
        fn default() -> Strings {
            Strings(vec![0])
        }
    }

    impl Strings {
        fn add(&mut self, s: &str) -> u32 {
            let off = self.0.len() as u32;
            self.0.extend_from_slice(s.as_bytes());
            self.0.push(0);
            off
        }
    }

    /// A version 1 blob: a 24-byte header, the types, then the strings.
    fn wrap(types: &[u8], strs: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        for v in [
            0xEB9Fu32 | (1 << 16),
            24,
            0,
            types.len() as u32,
            types.len() as u32,
            strs.len() as u32,
        ] {
            out.extend_from_slice(&v.to_le_bytes());
        }
        out.extend_from_slice(types);
        out.extend_from_slice(strs);
        out
    }

    /// A blob with one type per `(kind, name, member names)`.
    pub(crate) fn types_blob(types: &[(u32, &str, &[&str])]) -> Vec<u8> {
        let mut strs = Strings::default();
        let mut add = |s: &str| strs.add(s);
        let mut body: Vec<u32> = Vec::new();
        for (kind, name, members) in types {
            let name_off = add(name);
            body.extend([name_off, (kind << 24) | members.len() as u32, 4]);
            if *kind == 1 {
                body.push(32); // INT encoding
            }
            for m in *members {
                let off = add(m);
                match *kind {
                    KIND_ENUM => body.extend([off, 0]),
                    _ => body.extend([off, 1, 0]),
                }
            }
        }
        let types: Vec<u8> = body.iter().flat_map(|v| v.to_le_bytes()).collect();
        wrap(&types, &strs.0)
    }

    #[test]
    fn strings_and_funcs() {
        let (data, offs) = blob("a_really_long_function_name", &["/src/x.c", "  x++;"]);
        let btf = BtfData::parse(&data);
        assert_eq!(
            btf.func_name(3).as_deref(),
            Some("a_really_long_function_name")
        );
        assert_eq!(btf.func_name(1), None);
        assert_eq!(btf.string(offs[0]).as_deref(), Some("/src/x.c"));
        assert_eq!(btf.string(offs[1]).as_deref(), Some("  x++;"));
        assert_eq!(btf.string(0), None);
        assert_eq!(btf.string(100_000), None);
    }

    #[test]
    fn garbage_is_harmless() {
        assert_eq!(BtfData::parse(&[]).string(1), None);
        assert_eq!(
            BtfData::parse(&[0x9f, 0xeb, 1, 0, 200, 0, 0, 0]).string(0),
            None
        );
        let (mut data, _) = blob("f", &[]);
        data.truncate(40);
        let btf = BtfData::parse(&data);
        assert_eq!(btf.func_name(3), None);
        let mut junk = vec![0x9f, 0xeb, 1, 0];
        junk.extend(std::iter::repeat_n(0xff, 60));
        let _ = BtfData::parse(&junk);
    }

    #[test]
    fn members_of_garbage() {
        assert!(members(&[], &["x"]).is_empty());
        let mut data = types_blob(&[(KIND_STRUCT, "bpf_prog_info", &["a", "b"])]);
        data.truncate(40);
        let _ = members(&data, &["bpf_prog_info"]);
        let mut junk = vec![0x9f, 0xeb, 1, 0];
        junk.extend(std::iter::repeat_n(0xff, 60));
        assert!(members(&junk, &["x"]).is_empty());
        // An unknown kind stops the walk without an answer.
        let data = types_blob(&[(31, "x", &[]), (KIND_STRUCT, "bpf_prog_info", &["a"])]);
        assert!(members(&data, &["bpf_prog_info"]).is_empty());
        // A member list cut short (the type section ends after the first
        // of two members): the names before the cut.
        let mut data = types_blob(&[(KIND_STRUCT, "s", &["a", "b"])]);
        data[12..16].copy_from_slice(&24u32.to_le_bytes());
        assert_eq!(members(&data, &["s"])["s"], ["a"]);
    }
}
