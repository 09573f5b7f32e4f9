//! What the profiler needs to know about one loaded program: its JIT
//! functions (with BTF names) and its line records ordered by JIT address,
//! read with `bpf()` (no xlated instructions, no map IDs) and the program's
//! BTF, which is fetched once per BTF ID.

use std::collections::HashMap;
use std::os::fd::OwnedFd;
use std::sync::Arc;

use crate::kernel::btf::Btf;
use crate::kernel::lines::{self, JitRange, LineRecord};
use crate::kernel::names;
use crate::sys::bpf::{self, ObjKind, ProgDetail, ProgWant};
use crate::sys::Errno;

/// A program as the profiler sees it.
#[derive(Debug, Clone, Default)]
pub struct ProgMeta {
    pub id: u32,
    pub prog_type: String,
    pub name: String,
    pub tag: String,
    /// JITed functions with a non-zero start and length (index 0 = main).
    pub funcs: Vec<JitRange>,
    /// Line records that have a JIT address, sorted by it (stable: equal
    /// addresses keep kernel order, so the last one wins a lookup).
    pub lines: Vec<LineRecord>,
}

/// A line record's JIT address (only records that have one are kept).
pub fn jit(l: &LineRecord) -> u64 {
    l.jited_addr.unwrap_or(0)
}

impl ProgMeta {
    /// The line record covering `addr`: greatest JIT address ≤ addr, with
    /// no upper bound (the kernel has no finer JIT -> insn table).
    pub fn line_index(&self, addr: u64) -> Option<usize> {
        self.lines
            .partition_point(|l| jit(l) <= addr)
            .checked_sub(1)
    }

    /// The function containing `addr`.
    pub fn func_at(&self, addr: u64) -> Option<&JitRange> {
        self.funcs
            .iter()
            .find(|f| f.start <= addr && addr < f.end())
    }

    /// The main function's BTF name.
    pub fn full_name(&self) -> Option<&str> {
        self.funcs.first().and_then(|f| f.func_name.as_deref())
    }
}

/// Build the profiler's view from a program's info arrays and BTF.
pub fn build_meta(d: &ProgDetail, btf: &Btf) -> ProgMeta {
    let funcs = lines::parse_funcs(&d.func_info, d.func_info_rec_size, btf);
    let mut recs: Vec<LineRecord> =
        lines::parse_lines(&d.line_info, d.line_info_rec_size, &d.jited_line_info, btf)
            .into_iter()
            .filter(|l| l.jited_addr.is_some())
            .collect();
    recs.sort_by_key(jit);
    ProgMeta {
        id: d.info.id,
        prog_type: names::prog_type(d.info.prog_type),
        name: names::object_name(&d.info.name),
        tag: names::hex(&d.info.tag),
        funcs: lines::jit_ranges(&d.jited_ksyms, &d.jited_func_lens, &funcs),
        lines: recs,
    }
}

/// BTF objects fetched once per ID (many programs share one).
#[derive(Default)]
pub struct BtfCache {
    by_id: HashMap<u32, Arc<Btf>>,
}

impl BtfCache {
    /// The BTF object; empty if there is none or it vanished.
    pub fn get(&mut self, id: u32) -> Arc<Btf> {
        if id == 0 {
            return Arc::default();
        }
        self.by_id
            .entry(id)
            .or_insert_with(|| {
                let btf = bpf::fd_by_id(ObjKind::Btf, id)
                    .and_then(|fd| bpf::btf_info(&fd, true))
                    .map(|(_, _, data)| Btf::parse(&data))
                    .unwrap_or_default();
                Arc::new(btf)
            })
            .clone()
    }
}

/// What the profiler asks the kernel for.
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
    Ok(build_meta(&d, &btf))
}

/// Read a program by ID (`Ok(None)` if it is gone).
pub fn read_meta_by_id(id: u32, cache: &mut BtfCache) -> Result<Option<ProgMeta>, Errno> {
    let read = bpf::fd_by_id(ObjKind::Prog, id).and_then(|fd| read_meta(&fd, cache));
    match read {
        Ok(m) => Ok(Some(m)),
        Err(Errno(libc::ENOENT)) => Ok(None),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
pub mod tests {
    use super::*;
    use crate::kernel::btf::tests::blob;

    /// A line record at `jit` for tests.
    pub fn line(jit: u64, insn: u32, file: &str, line: u32, src: &str) -> LineRecord {
        LineRecord {
            insn_off: insn,
            file: Some(file.into()),
            line: Some(line),
            column: Some(1),
            source: Some(src.into()),
            jited_addr: Some(jit),
        }
    }

    pub fn range(start: u64, len: u32, i: usize, name: &str) -> JitRange {
        JitRange {
            start,
            len,
            func_index: i,
            func_name: Some(name.into()),
        }
    }

    #[test]
    fn meta_from_info_arrays() {
        let (data, offs) = blob("main_fn", &["/src/x.c", "a = 1;", "b = 2;"]);
        let btf = Btf::parse(&data);
        let mut line_info = Vec::new();
        for (insn, line_off, line, col) in [
            (0u32, offs[1], 10u32, 5u32),
            (4, offs[2], 11, 0),
            (9, offs[1], 0, 3),
            (12, offs[1], 12, 1),
        ] {
            for v in [insn, offs[0], line_off, (line << 10) | col] {
                line_info.extend_from_slice(&v.to_le_bytes());
            }
        }
        let mut func_info = Vec::new();
        for (insn, ty) in [(0u32, 3u32), (9, 99)] {
            func_info.extend_from_slice(&insn.to_le_bytes());
            func_info.extend_from_slice(&ty.to_le_bytes());
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
            // Out of order on purpose (subprogram JITed first); one hidden.
            jited_line_info: vec![0x2000, 0x2020, 0x1000, 0],
            func_info,
            func_info_rec_size: 8,
        };
        let m = build_meta(&d, &btf);
        assert_eq!((m.id, m.name.as_str()), (42, "prog"));
        assert_eq!(m.full_name(), Some("main_fn"));
        assert_eq!(m.funcs[1].func_name, None);
        let by_addr: Vec<(u64, u32)> = m.lines.iter().map(|l| (jit(l), l.insn_off)).collect();
        assert_eq!(by_addr, vec![(0x1000, 9), (0x2000, 0), (0x2020, 4)]);
        assert_eq!(m.line_index(0xfff), None);
        assert_eq!(m.line_index(0x1fff), Some(0), "no upper bound");
        assert_eq!(m.line_index(0x2020), Some(2));
        assert_eq!(m.func_at(0x2010).map(|f| f.func_index), Some(1));
        assert_eq!(m.func_at(0x2040), None);
    }
}
