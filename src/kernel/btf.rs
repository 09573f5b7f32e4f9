//! Just enough BTF: the string table and FUNC names by type ID.
//!
//! A program's BTF blob is walked once; malformed or truncated blobs yield
//! fewer strings or names, never an error.

use std::collections::HashMap;

const MAGIC: u16 = 0xEB9F;
const KIND_FUNC: u32 = 12;

#[derive(Debug, Clone, Default)]
pub struct BtfData {
    strings: Vec<u8>,
    /// FUNC type id -> name offset.
    funcs: HashMap<u32, u32>,
}

fn u32_at(b: &[u8], off: usize) -> Option<u32> {
    b.get(off..off + 4)
        .map(|s| u32::from_le_bytes([s[0], s[1], s[2], s[3]]))
}

/// Bytes of kind-specific data following a type's 12-byte header.
fn extra_len(kind: u32, vlen: usize) -> Option<usize> {
    Some(match kind {
        1 | 14 | 17 => 4,             // INT, VAR, DECL_TAG
        2 | 7..=12 | 16 | 18 => 0,    // PTR, FWD, TYPEDEF, qualifiers, FUNC, FLOAT, TYPE_TAG
        3 => 12,                      // ARRAY
        4 | 5 | 15 | 19 => 12 * vlen, // STRUCT, UNION, DATASEC, ENUM64
        6 | 13 => 8 * vlen,           // ENUM, FUNC_PROTO
        _ => return None,
    })
}

impl BtfData {
    /// Parse a raw blob. Only little-endian BTF (the host's) is understood.
    pub fn parse(data: &[u8]) -> BtfData {
        let mut btf = BtfData::default();
        if data.len() < 24 || u16::from_le_bytes([data[0], data[1]]) != MAGIC {
            return btf;
        }
        let (Some(hdr_len), Some(type_off), Some(type_len), Some(str_off), Some(str_len)) = (
            u32_at(data, 4),
            u32_at(data, 8),
            u32_at(data, 12),
            u32_at(data, 16),
            u32_at(data, 20),
        ) else {
            return btf;
        };
        let (hdr, soff, slen) = (hdr_len as usize, str_off as usize, str_len as usize);
        if let Some(s) = data.get(hdr + soff..hdr + soff + slen) {
            btf.strings = s.to_vec();
        }
        let tstart = hdr + type_off as usize;
        let Some(types) = data.get(tstart..tstart + type_len as usize) else {
            return btf;
        };
        let mut pos = 0usize;
        let mut id = 1u32;
        while pos + 12 <= types.len() {
            let (Some(name_off), Some(info)) = (u32_at(types, pos), u32_at(types, pos + 4)) else {
                break;
            };
            let kind = (info >> 24) & 0x1f;
            let vlen = (info & 0xffff) as usize;
            if kind == KIND_FUNC {
                btf.funcs.insert(id, name_off);
            }
            let Some(extra) = extra_len(kind, vlen) else {
                break;
            };
            pos += 12 + extra;
            id += 1;
        }
        btf
    }

    /// The string at `off`: up to the next NUL, lossy UTF-8; empty -> None.
    pub fn string(&self, off: u32) -> Option<String> {
        let rest = self.strings.get(off as usize..)?;
        let end = rest.iter().position(|&b| b == 0).unwrap_or(rest.len());
        if end == 0 {
            None
        } else {
            Some(String::from_utf8_lossy(&rest[..end]).into_owned())
        }
    }

    /// Name of the FUNC type `type_id`.
    pub fn func_name(&self, type_id: u32) -> Option<String> {
        self.funcs.get(&type_id).and_then(|&off| self.string(off))
    }
}

#[cfg(test)]
pub mod tests {
    use super::*;

    /// Build a minimal blob: one INT "int", one FUNC_PROTO, one FUNC `name`.
    pub fn blob(func: &str, extra_strings: &[&str]) -> (Vec<u8>, Vec<u32>) {
        let mut strs = vec![0u8];
        let mut add = |s: &str| {
            let off = strs.len() as u32;
            strs.extend_from_slice(s.as_bytes());
            strs.push(0);
            off
        };
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
        let mut out = Vec::new();
        for v in [
            0xEB9Fu16 as u32 | (1 << 16),
            24,
            0,
            types.len() as u32,
            types.len() as u32,
            strs.len() as u32,
        ] {
            out.extend_from_slice(&v.to_le_bytes());
        }
        out.extend_from_slice(&types);
        out.extend_from_slice(&strs);
        (out, offs)
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
}
