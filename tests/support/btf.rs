//! Minimal BTF encoder (INT, PTR, FUNC_PROTO, FUNC) plus a loader
//! (`BPF_BTF_LOAD`) and a tiny reader for the string section of a blob.

use std::collections::HashMap;
use std::io;
use std::os::fd::OwnedFd;

use super::sys;

pub(crate) const BTF_MAGIC: u16 = 0xeb9f;
pub(crate) const BTF_VERSION: u8 = 1;
pub(crate) const BTF_HDR_LEN: u32 = 24;

pub(crate) const BTF_KIND_INT: u32 = 1;
pub(crate) const BTF_KIND_PTR: u32 = 2;
pub(crate) const BTF_KIND_FUNC: u32 = 12;
pub(crate) const BTF_KIND_FUNC_PROTO: u32 = 13;

/// `BTF_INT_SIGNED` encoding bit.
pub(crate) const BTF_INT_SIGNED: u32 = 1;

/// FUNC linkage (stored in the FUNC's vlen).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Linkage {
    Static = 0,
    Global = 1,
}

/// Encode a BTF type `info` word.
pub(crate) const fn info(kind: u32, vlen: u32, kind_flag: bool) -> u32 {
    (vlen & 0xffff) | ((kind & 0x1f) << 24) | ((kind_flag as u32) << 31)
}

/// Builder for a raw BTF blob. Type ids start at 1 (0 is `void`); string
/// offset 0 is the empty string.
#[derive(Debug, Clone)]
pub(crate) struct BtfBuilder {
    types: Vec<u8>,
    strings: Vec<u8>,
    string_offs: HashMap<String, u32>,
    next_id: u32,
}

impl Default for BtfBuilder {
    fn default() -> Self {
        Self::new()
    }
}

impl BtfBuilder {
    pub(crate) fn new() -> BtfBuilder {
        let mut string_offs = HashMap::new();
        string_offs.insert(String::new(), 0);
        BtfBuilder {
            types: Vec::new(),
            strings: vec![0],
            string_offs,
            next_id: 1,
        }
    }

    /// Add (or reuse) a NUL-terminated string; returns its offset.
    pub(crate) fn add_string(&mut self, s: &str) -> u32 {
        assert!(!s.contains('\0'), "BTF strings cannot contain NUL");
        if let Some(&off) = self.string_offs.get(s) {
            return off;
        }
        let off = self.strings.len() as u32;
        self.strings.extend_from_slice(s.as_bytes());
        self.strings.push(0);
        self.string_offs.insert(s.to_string(), off);
        off
    }

    fn push_u32(&mut self, v: u32) {
        self.types.extend_from_slice(&v.to_le_bytes());
    }

    fn push_type(&mut self, name_off: u32, info_word: u32, size_or_type: u32) -> u32 {
        self.push_u32(name_off);
        self.push_u32(info_word);
        self.push_u32(size_or_type);
        let id = self.next_id;
        self.next_id += 1;
        id
    }

    /// INT type of `size` bytes (bits = size * 8, offset 0).
    pub(crate) fn add_int(&mut self, name: &str, size: u32, signed: bool) -> u32 {
        let name_off = self.add_string(name);
        let id = self.push_type(name_off, info(BTF_KIND_INT, 0, false), size);
        let encoding = if signed { BTF_INT_SIGNED } else { 0 };
        self.push_u32((encoding << 24) | (size * 8));
        id
    }

    /// Anonymous pointer to `target`.
    pub(crate) fn add_ptr(&mut self, target: u32) -> u32 {
        self.push_type(0, info(BTF_KIND_PTR, 0, false), target)
    }

    /// Anonymous FUNC_PROTO returning `ret` with the given (name, type)
    /// params.
    pub(crate) fn add_func_proto(&mut self, ret: u32, params: &[(&str, u32)]) -> u32 {
        let id = self.push_type(
            0,
            info(BTF_KIND_FUNC_PROTO, params.len() as u32, false),
            ret,
        );
        for (name, ty) in params {
            let off = self.add_string(name);
            self.push_u32(off);
            self.push_u32(*ty);
        }
        id
    }

    /// FUNC named `name` of prototype `proto`.
    pub(crate) fn add_func(&mut self, name: &str, proto: u32, linkage: Linkage) -> u32 {
        let name_off = self.add_string(name);
        self.push_type(name_off, info(BTF_KIND_FUNC, linkage as u32, false), proto)
    }

    /// Number of types added so far.
    pub(crate) fn type_count(&self) -> u32 {
        self.next_id - 1
    }

    /// Serialize: header, type section, string section.
    pub(crate) fn build(&self) -> Vec<u8> {
        let type_len = self.types.len() as u32;
        let str_len = self.strings.len() as u32;
        let mut out = Vec::with_capacity(24 + self.types.len() + self.strings.len());
        out.extend_from_slice(&BTF_MAGIC.to_le_bytes());
        out.push(BTF_VERSION);
        out.push(0); // flags
        out.extend_from_slice(&BTF_HDR_LEN.to_le_bytes());
        out.extend_from_slice(&0u32.to_le_bytes()); // type_off
        out.extend_from_slice(&type_len.to_le_bytes());
        out.extend_from_slice(&type_len.to_le_bytes()); // str_off
        out.extend_from_slice(&str_len.to_le_bytes());
        out.extend_from_slice(&self.types);
        out.extend_from_slice(&self.strings);
        out
    }

    /// Build and load with `BPF_BTF_LOAD`; the error carries the kernel's
    /// BTF verifier log.
    pub(crate) fn load(&self) -> io::Result<OwnedFd> {
        load_btf(&self.build())
    }
}

/// Load a raw BTF blob; on failure retries with a log and returns it in the
/// error message.
pub(crate) fn load_btf(blob: &[u8]) -> io::Result<OwnedFd> {
    let mut attr = sys::BtfLoadAttr {
        btf: blob.as_ptr() as u64,
        btf_size: blob.len() as u32,
        ..Default::default()
    };
    // SAFETY: btf points at btf_size readable bytes; no log buffer.
    match unsafe { sys::sys_bpf_fd(sys::BPF_BTF_LOAD, &mut attr) } {
        Ok(fd) => Ok(fd),
        Err(first) => {
            let mut log = vec![0u8; 64 * 1024];
            let mut attr = sys::BtfLoadAttr {
                btf: blob.as_ptr() as u64,
                btf_size: blob.len() as u32,
                btf_log_buf: log.as_mut_ptr() as u64,
                btf_log_size: log.len() as u32,
                btf_log_level: 1,
                ..Default::default()
            };
            // SAFETY: btf points at btf_size readable bytes and the log
            // buffer at btf_log_size writable bytes.
            match unsafe { sys::sys_bpf_fd(sys::BPF_BTF_LOAD, &mut attr) } {
                Ok(fd) => Ok(fd),
                Err(_) => Err(io::Error::new(
                    first.kind(),
                    format!("BPF_BTF_LOAD: {first}\n{}", sys::name_str(&log)),
                )),
            }
        }
    }
}

/// Read the string at `off` in the string section of a raw BTF blob
/// (as returned by `sys::btf_data`). Returns `None` when out of range.
pub(crate) fn blob_string(blob: &[u8], off: u32) -> Option<String> {
    if blob.len() < BTF_HDR_LEN as usize {
        return None;
    }
    let rd = |at: usize| u32::from_le_bytes(blob[at..at + 4].try_into().unwrap()) as usize;
    let hdr_len = rd(4);
    let str_off = rd(16);
    let str_len = rd(20);
    let start = hdr_len + str_off;
    let strs = blob.get(start..start + str_len)?;
    let tail = strs.get(off as usize..)?;
    Some(sys::name_str(tail))
}
