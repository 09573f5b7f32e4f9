//! What the profiler needs to know about one loaded program: its JIT
//! functions (with BTF names) and its line records ordered by JIT address.
//! Read with the kernel's image reader, without xlated instructions or map
//! IDs, sharing one BTF fetch per BTF ID across a capture.

use std::os::fd::OwnedFd;

use crate::kernel::lines::BtfCache;
use crate::kernel::{prog_reads, Errno};
use crate::model::image::{JitRange, LineRecord, ProgramImage};

/// A program as the profiler sees it.
#[derive(Debug, Clone, Default)]
pub(crate) struct ProgMeta {
    pub id: u32,
    pub prog_type: String,
    pub name: String,
    pub tag: String,
    /// The kernel JIT-compiled it (whether or not it shows the addresses).
    pub jited: bool,
    /// JITed functions with a non-zero start and length (index 0 = main).
    pub funcs: Vec<JitRange>,
    /// Line records that have a JIT address, sorted by it (stable: equal
    /// addresses keep kernel order, so the last one wins a lookup).
    pub lines: Vec<LineRecord>,
}

/// A line record's JIT address (only records that have one are kept).
pub(crate) fn jit(l: &LineRecord) -> u64 {
    l.jited_addr.unwrap_or(0)
}

impl ProgMeta {
    /// The line record covering `addr`: greatest JIT address ≤ addr, with
    /// no upper bound (the kernel has no finer JIT -> insn table).
    pub(crate) fn line_index(&self, addr: u64) -> Option<usize> {
        self.lines
            .partition_point(|l| jit(l) <= addr)
            .checked_sub(1)
    }

    /// The function containing `addr`.
    pub(crate) fn func_at(&self, addr: u64) -> Option<&JitRange> {
        self.funcs
            .iter()
            .find(|f| f.start <= addr && addr < f.end())
    }

    /// The main function's BTF name.
    pub(crate) fn full_name(&self) -> Option<&str> {
        self.funcs.first().and_then(|f| f.func_name.as_deref())
    }
}

/// The profiler's view of an image: only lines that have a JIT address.
pub(crate) fn from_image(img: ProgramImage) -> ProgMeta {
    let mut recs: Vec<LineRecord> = img
        .lines
        .into_iter()
        .filter(|l| l.jited_addr.is_some())
        .collect();
    recs.sort_by_key(jit);
    ProgMeta {
        id: img.program.id,
        prog_type: img.program.prog_type.into(),
        name: img.program.name.into(),
        tag: img.program.tag.into(),
        jited: img.program.jited_size > 0,
        funcs: img.jit_ranges,
        lines: recs,
    }
}

/// Read one open program.
pub(crate) fn read_meta(fd: &OwnedFd, cache: &mut BtfCache) -> Result<ProgMeta, Errno> {
    prog_reads::sampled_image(fd, cache).map(from_image)
}

/// Read a program by ID (`Ok(None)` if it is gone).
pub(crate) fn read_meta_by_id(id: u32, cache: &mut BtfCache) -> Result<Option<ProgMeta>, Errno> {
    Ok(prog_reads::sampled_image_by_id(id, cache)?.map(from_image))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::kernel::btf::tests::blob;
    use crate::kernel::btf::BtfData;
    use crate::kernel::lines;
    use crate::sys::bpf::{self, ProgDetail};

    /// A line record at `jit` for tests.
    pub(crate) fn line(jit: u64, insn: u32, file: &str, line: u32, src: &str) -> LineRecord {
        LineRecord {
            insn_off: insn,
            file: Some(file.into()),
            line: Some(line),
            column: Some(1),
            source: Some(src.into()),
            jited_addr: Some(jit),
        }
    }

    pub(crate) fn range(start: u64, len: u32, i: usize, name: &str) -> JitRange {
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
        let btf = BtfData::parse(&data);
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
            info_len: 232,
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
        let m = from_image(lines::image_from_detail(d, &btf));
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
