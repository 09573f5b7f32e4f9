//! The kernel features brr relies on, read from the kernel's own BTF
//! (`/sys/kernel/btf/vmlinux`, readable by every user) without loading
//! anything: a struct member or an enum value the kernel's types have is
//! a feature it implements.

use std::collections::HashMap;

const MAGIC: u16 = 0xEB9F;
const KIND_STRUCT: u32 = 4;
const KIND_UNION: u32 = 5;
const KIND_ENUM: u32 = 6;
const KIND_ENUM64: u32 = 19;

/// A feature as the BTF shows it: None when the type that would carry it
/// is not in the BTF at all (the answer then comes from the kernel
/// version).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Features {
    /// `BPF_ENABLE_STATS` in `enum bpf_cmd`.
    pub enable_stats: Option<bool>,
    /// `BPF_LINK_GET_NEXT_ID` in `enum bpf_cmd` and `struct bpf_link_info`.
    pub link_info: Option<bool>,
    /// `jited_line_info` in `struct bpf_prog_info`.
    pub jited_line_info: Option<bool>,
    /// `PERF_SAMPLE_CGROUP` in `enum perf_event_sample_format`.
    pub sample_cgroup: Option<bool>,
}

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

fn string(strings: &[u8], off: u32) -> Option<&[u8]> {
    let rest = strings.get(off as usize..)?;
    let end = rest.iter().position(|&b| b == 0).unwrap_or(rest.len());
    rest.get(..end)
}

/// For each struct, union or enum named in `wanted` (the first of that
/// name), the names of its members or values. A malformed blob yields
/// what was read before the damage.
pub(crate) fn members(data: &[u8], wanted: &[&str]) -> HashMap<String, Vec<String>> {
    let mut out = HashMap::new();
    if data.len() < 24 || u16::from_le_bytes([data[0], data[1]]) != MAGIC {
        return out;
    }
    let field = |i: usize| u32_at(data, 4 + 4 * i).map(|v| v as usize);
    let (Some(hdr), Some(type_off), Some(type_len), Some(str_off), Some(str_len)) =
        (field(0), field(1), field(2), field(3), field(4))
    else {
        return out;
    };
    let strings = data
        .get(hdr + str_off..hdr + str_off + str_len)
        .unwrap_or_default();
    let types = data
        .get(hdr + type_off..hdr + type_off + type_len)
        .unwrap_or_default();
    let mut pos = 0usize;
    while let (Some(name_off), Some(info)) = (u32_at(types, pos), u32_at(types, pos + 4)) {
        let kind = (info >> 24) & 0x1f;
        let vlen = (info & 0xffff) as usize;
        let Some((extra, entry)) = layout(kind, vlen) else {
            break;
        };
        let named = matches!(kind, KIND_STRUCT | KIND_UNION | KIND_ENUM | KIND_ENUM64);
        if named {
            let name = string(strings, name_off).unwrap_or_default();
            if let Some(w) = wanted.iter().find(|w| w.as_bytes() == name) {
                if !out.contains_key(*w) {
                    let names = (0..vlen)
                        .filter_map(|i| u32_at(types, pos + 12 + i * entry))
                        .filter_map(|off| string(strings, off))
                        .map(|s| String::from_utf8_lossy(s).into_owned())
                        .collect();
                    out.insert(w.to_string(), names);
                }
            }
        }
        pos += 12 + extra;
    }
    out
}

/// The features in a vmlinux BTF blob.
pub(crate) fn features(data: &[u8]) -> Features {
    let m = members(
        data,
        &[
            "bpf_cmd",
            "bpf_link_info",
            "bpf_prog_info",
            "perf_event_sample_format",
        ],
    );
    let has = |ty: &str, member: &str| m.get(ty).map(|v| v.iter().any(|x| x == member));
    let link_struct = m.contains_key("bpf_link_info");
    Features {
        enable_stats: has("bpf_cmd", "BPF_ENABLE_STATS"),
        link_info: match has("bpf_cmd", "BPF_LINK_GET_NEXT_ID") {
            Some(cmd) => Some(cmd && link_struct),
            None => link_struct.then_some(true),
        },
        jited_line_info: has("bpf_prog_info", "jited_line_info"),
        sample_cgroup: has("perf_event_sample_format", "PERF_SAMPLE_CGROUP"),
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A blob with one type per `(kind, name, member names)`.
    pub(crate) fn blob(types: &[(u32, &str, &[&str])]) -> Vec<u8> {
        let mut strs = vec![0u8];
        let mut add = |s: &str| {
            let off = strs.len() as u32;
            strs.extend_from_slice(s.as_bytes());
            strs.push(0);
            off
        };
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
        out.extend_from_slice(&types);
        out.extend_from_slice(&strs);
        out
    }

    #[test]
    fn features_from_types() {
        let data = blob(&[
            (1, "int", &[]),
            (
                KIND_ENUM,
                "bpf_cmd",
                &["BPF_MAP_CREATE", "BPF_LINK_GET_NEXT_ID", "BPF_ENABLE_STATS"],
            ),
            (KIND_STRUCT, "bpf_link_info", &["type", "id", "prog_id"]),
            (KIND_STRUCT, "bpf_prog_info", &["type", "jited_line_info"]),
            (
                KIND_ENUM64,
                "perf_event_sample_format",
                &["PERF_SAMPLE_IP", "PERF_SAMPLE_CGROUP"],
            ),
        ]);
        assert_eq!(
            features(&data),
            Features {
                enable_stats: Some(true),
                link_info: Some(true),
                jited_line_info: Some(true),
                sample_cgroup: Some(true),
            }
        );
        // An older kernel: the types are there, the values are not.
        let old = blob(&[
            (KIND_ENUM, "bpf_cmd", &["BPF_MAP_CREATE"]),
            (KIND_STRUCT, "bpf_prog_info", &["type"]),
            (KIND_ENUM, "perf_event_sample_format", &["PERF_SAMPLE_IP"]),
        ]);
        assert_eq!(
            features(&old),
            Features {
                enable_stats: Some(false),
                link_info: Some(false),
                jited_line_info: Some(false),
                sample_cgroup: Some(false),
            }
        );
        // Types not described at all: no answer.
        assert_eq!(features(&blob(&[(1, "int", &[])])), Features::default());
    }

    #[test]
    fn garbage_is_harmless() {
        assert!(members(&[], &["x"]).is_empty());
        let mut data = blob(&[(KIND_STRUCT, "bpf_prog_info", &["a", "b"])]);
        data.truncate(40);
        let _ = members(&data, &["bpf_prog_info"]);
        let mut junk = vec![0x9f, 0xeb, 1, 0];
        junk.extend(std::iter::repeat_n(0xff, 60));
        assert!(members(&junk, &["x"]).is_empty());
        // An unknown kind stops the walk without an answer.
        let data = blob(&[(31, "x", &[]), (KIND_STRUCT, "bpf_prog_info", &["a"])]);
        assert!(members(&data, &["bpf_prog_info"]).is_empty());
    }
}
