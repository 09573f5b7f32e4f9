//! Reading a program's translated image with its source metadata: line
//! records from `line_info` + BTF strings, their JIT addresses, and the
//! address range and BTF name of every JITed (sub)function. The one reader
//! behind `dump`, the drilldown and the profiler.

use std::collections::HashMap;
use std::os::fd::OwnedFd;
use std::sync::Arc;

use crate::error::{BrrError, Result};
use crate::kernel::btf::BtfData;
use crate::kernel::objects::{self, open_action, program_from_info};
pub(crate) use crate::model::image::{FuncRecord, JitCode, JitRange, LineRecord, ProgramImage};
use crate::sys::bpf::{self, JitedInsns, ObjKind, ProgDetail, ProgWant};
use crate::sys::Errno;

fn u32s(rec: &[u8]) -> [u32; 4] {
    let mut out = [0u32; 4];
    for (i, v) in out.iter_mut().enumerate() {
        if let Some(b) = rec.get(i * 4..i * 4 + 4) {
            *v = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
        }
    }
    out
}

/// Decode raw `line_info` records (first 16 bytes of each `rec_size` slot;
/// smaller records are ignored) and pair them with JIT addresses by index.
pub(crate) fn parse_lines(
    raw: &[u8],
    rec_size: u32,
    jited: &[u64],
    btf: &BtfData,
) -> Vec<LineRecord> {
    if rec_size < 16 {
        return Vec::new();
    }
    raw.chunks_exact(rec_size as usize)
        .enumerate()
        .map(|(i, rec)| {
            let [insn_off, file_off, line_off, line_col] = u32s(rec);
            let line = line_col >> 10;
            let col = line_col & 0x3ff;
            LineRecord {
                insn_off,
                file: btf.string(file_off),
                line: (line != 0).then_some(line),
                column: (col != 0).then_some(col),
                source: btf.string(line_off),
                jited_addr: jited.get(i).copied().filter(|&a| a != 0),
            }
        })
        .collect()
}

/// Decode `func_info` records {insn_off, type_id}.
pub(crate) fn parse_funcs(raw: &[u8], rec_size: u32, btf: &BtfData) -> Vec<FuncRecord> {
    if rec_size < 8 {
        return Vec::new();
    }
    raw.chunks_exact(rec_size as usize)
        .map(|rec| {
            let [insn_off, type_id, ..] = u32s(rec);
            FuncRecord {
                insn_off,
                name: btf.func_name(type_id),
            }
        })
        .collect()
}

/// Pair `jited_ksyms[i]` with `jited_func_lens[i]`; zero entries are dropped
/// (kernels hiding addresses give none). func_info is in the same order.
pub(crate) fn jit_ranges(ksyms: &[u64], lens: &[u32], funcs: &[FuncRecord]) -> Vec<JitRange> {
    ksyms
        .iter()
        .zip(lens)
        .enumerate()
        .filter(|(_, (&s, &l))| s != 0 && l != 0)
        .map(|(i, (&start, &len))| JitRange {
            start,
            len,
            func_index: i,
            func_name: funcs.get(i).and_then(|f| f.name.clone()),
        })
        .collect()
}

/// Fetch a program's BTF; a BTF object that vanished means no source metadata.
fn program_btf(btf_id: u32) -> BtfData {
    if btf_id == 0 {
        return BtfData::default();
    }
    bpf::fd_by_id(ObjKind::Btf, btf_id)
        .and_then(|fd| bpf::btf_info(&fd, true))
        .map(|(_, _, data)| BtfData::parse(&data))
        .unwrap_or_default()
}

/// BTF objects fetched once per ID: a capture reads many programs, and
/// many of them share one BTF object.
#[derive(Default)]
pub(crate) struct BtfCache {
    by_id: HashMap<u32, Arc<BtfData>>,
}

impl BtfCache {
    /// The BTF object; empty if there is none or it vanished.
    pub(crate) fn get(&mut self, id: u32) -> Arc<BtfData> {
        self.by_id
            .entry(id)
            .or_insert_with(|| Arc::new(program_btf(id)))
            .clone()
    }
}

/// The image from a program's info arrays and its BTF (`xlated` and map IDs
/// are empty unless they were asked for).
pub(crate) fn image_from_detail(d: ProgDetail, btf: &BtfData) -> ProgramImage {
    let lines = parse_lines(&d.line_info, d.line_info_rec_size, &d.jited_line_info, btf);
    let funcs = parse_funcs(&d.func_info, d.func_info_rec_size, btf);
    let jit = jit_ranges(&d.jited_ksyms, &d.jited_func_lens, &funcs);
    let mut program = program_from_info(&d.info, d.info_len, d.map_ids);
    // The main function is the func_info record at instruction 0.
    if let Some(name) = funcs
        .iter()
        .find(|f| f.insn_off == 0)
        .and_then(|f| f.name.clone())
    {
        program.full_name = name.into();
    }
    ProgramImage {
        program,
        xlated: d.xlated,
        lines,
        jit_ranges: jit,
        jited: JitCode::NotRead,
    }
}

/// What the kernel's answer about the native image means; `offloaded`:
/// the program is bound to a device (`ifindex`), whose JIT made the image.
pub(crate) fn jit_code(j: JitedInsns, offloaded: bool) -> JitCode {
    if offloaded {
        JitCode::Offloaded
    } else if j.withheld {
        JitCode::Withheld
    } else if j.len == 0 || j.bytes.is_empty() {
        JitCode::NotJited
    } else {
        JitCode::Bytes(j.bytes)
    }
}

/// Everything `dump` and the drilldown show.
pub(crate) const FULL: ProgWant = ProgWant {
    map_ids: true,
    xlated: true,
    jit_ranges: true,
    line_info: true,
    func_info: true,
};

/// Read the parts `want` names of one open program.
pub(crate) fn read_image(
    fd: &OwnedFd,
    want: ProgWant,
    btf: &mut BtfCache,
) -> std::result::Result<ProgramImage, Errno> {
    let d = bpf::prog_detail(fd, want)?;
    let data = btf.get(d.info.btf_id);
    Ok(image_from_detail(d, &data))
}

/// `kernel.kptr_restrict`, which decides whether root may see kernel
/// addresses (None when unreadable).
pub(crate) fn kptr_restrict() -> Option<u32> {
    std::fs::read_to_string("/proc/sys/kernel/kptr_restrict")
        .ok()
        .and_then(|s| s.trim().parse().ok())
}

pub(crate) fn image_from_fd(fd: &OwnedFd) -> std::result::Result<ProgramImage, Errno> {
    read_image(fd, FULL, &mut BtfCache::default())
}

/// [`image_from_fd`] with the native JIT code (`dump --jited`); the
/// translated instructions only with `xlated`.
pub(crate) fn jited_image_from_fd(
    fd: &OwnedFd,
    xlated: bool,
) -> std::result::Result<ProgramImage, Errno> {
    jited_with(fd, ProgWant { xlated, ..FULL })
}

fn jited_with(fd: &OwnedFd, want: ProgWant) -> std::result::Result<ProgramImage, Errno> {
    let (d, code) = bpf::prog_detail_jited(fd, want)?;
    let btf = BtfCache::default().get(d.info.btf_id);
    let offloaded = d.info.ifindex != 0;
    let mut image = image_from_detail(d, &btf);
    image.jited = jit_code(code, offloaded);
    Ok(image)
}

/// The image of a program the user named by ID.
pub(crate) fn image_by_id(id: u64) -> Result<ProgramImage> {
    by_id(id, image_from_fd)
}

/// [`image_by_id`] with the native JIT code (and the translated
/// instructions only with `xlated`).
pub(crate) fn jited_image_by_id(id: u64, xlated: bool) -> Result<ProgramImage> {
    by_id(id, |fd| jited_image_from_fd(fd, xlated))
}

/// The native JIT code and its functions' ranges and names, without the
/// line records (their files and source text, thousands of strings for a
/// large program) or the translated instructions: what naming a profile's
/// sampled instructions needs.
pub(crate) fn jited_code_by_id(id: u64) -> Result<ProgramImage> {
    let want = ProgWant {
        map_ids: false,
        xlated: false,
        jit_ranges: true,
        line_info: false,
        func_info: true,
    };
    by_id(id, |fd| jited_with(fd, want))
}

fn by_id(
    id: u64,
    read: impl FnOnce(&OwnedFd) -> std::result::Result<ProgramImage, Errno>,
) -> Result<ProgramImage> {
    let fd = objects::open_program(id)?;
    read(&fd).map_err(|e| match e.0 {
        libc::ENOENT => BrrError::NoProgram(id),
        _ => BrrError::bpf(&open_action(id as u32), e),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::btf::tests::blob;

    fn rec(v: [u32; 4]) -> Vec<u8> {
        v.iter().flat_map(|x| x.to_le_bytes()).collect()
    }

    #[test]
    fn line_records() {
        let (data, offs) = blob("main_func", &["/src/p.c", "    x = 1;"]);
        let btf = BtfData::parse(&data);
        let mut raw = rec([0, offs[0], offs[1], (12 << 10) | 5]);
        raw.extend(rec([3, offs[0], 0, 0]));
        raw.extend([0u8; 4]); // trailing partial record
        let lines = parse_lines(&raw, 16, &[0xffff_0000, 0], &btf);
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0].file.as_deref(), Some("/src/p.c"));
        assert_eq!((lines[0].line, lines[0].column), (Some(12), Some(5)));
        assert_eq!(lines[0].source.as_deref(), Some("    x = 1;"));
        assert_eq!(lines[0].jited_addr, Some(0xffff_0000));
        assert_eq!(
            (lines[1].line, lines[1].column, lines[1].source.clone()),
            (None, None, None)
        );
        assert_eq!(lines[1].jited_addr, None);
        assert!(parse_lines(&raw, 8, &[], &btf).is_empty());
    }

    #[test]
    fn ranges_and_names() {
        let (data, _) = blob("a_long_subprogram_name", &[]);
        let btf = BtfData::parse(&data);
        let funcs = parse_funcs(&rec([0, 3, 0, 0])[..8], 8, &btf);
        assert_eq!(funcs[0].name.as_deref(), Some("a_long_subprogram_name"));
        let r = jit_ranges(&[100, 0, 300], &[10, 5, 0], &funcs);
        assert_eq!(r.len(), 1);
        assert_eq!((r[0].start, r[0].end(), r[0].func_index), (100, 110, 0));
        assert_eq!(r[0].func_name.as_deref(), Some("a_long_subprogram_name"));
    }

    #[test]
    fn native_image_states() {
        let j = |len, bytes: &[u8], withheld| JitedInsns {
            len,
            bytes: bytes.to_vec(),
            withheld,
        };
        assert_eq!(jit_code(j(3, &[], true), false), JitCode::Withheld);
        assert_eq!(jit_code(j(0, &[], false), false), JitCode::NotJited);
        assert_eq!(jit_code(j(4, &[1, 2], false), true), JitCode::Offloaded);
        assert_eq!(
            jit_code(j(2, &[0xc3, 0xcc], false), false),
            JitCode::Bytes(vec![0xc3, 0xcc])
        );
    }
}
