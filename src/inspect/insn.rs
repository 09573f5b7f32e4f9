//! Translated instructions as 8-byte slots, and which line record each
//! slot belongs to.

use crate::model::image::LineRecord;

/// Opcode of the 16-byte `ld_imm64` (it occupies two slots).
pub(crate) const LD_IMM64: u8 = 0x18;

/// One 8-byte slot of the xlated image.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Slot {
    /// Byte offset in the image.
    pub offset: usize,
    pub raw: [u8; 8],
    pub opcode: u8,
    pub dst: u8,
    pub src: u8,
    /// Jump/memory offset field (signed).
    pub off: i16,
    pub imm: i32,
}

impl Slot {
    pub(crate) fn from_bytes(offset: usize, raw: [u8; 8]) -> Slot {
        Slot {
            offset,
            raw,
            opcode: raw[0],
            dst: raw[1] & 0x0f,
            src: raw[1] >> 4,
            off: i16::from_le_bytes([raw[2], raw[3]]),
            imm: i32::from_le_bytes([raw[4], raw[5], raw[6], raw[7]]),
        }
    }

    /// Instruction index (8-byte units).
    pub(crate) fn index(&self) -> usize {
        self.offset / 8
    }

    pub(crate) fn raw_hex(&self) -> String {
        crate::kernel::names::hex(&self.raw)
    }

    /// `  0x0020: raw=... op=0x85 dst=0 src=0 off=0 imm=1` without the indent.
    #[cfg(test)]
    pub(crate) fn internal_text(&self) -> String {
        format!(
            "0x{:04x}: raw={} op=0x{:02x} dst={} src={} off={} imm={}",
            self.offset,
            self.raw_hex(),
            self.opcode,
            self.dst,
            self.src,
            self.off,
            self.imm
        )
    }
}

/// Cut the image into slots; a trailing partial slot is ignored.
pub(crate) fn slots(xlated: &[u8]) -> Vec<Slot> {
    xlated
        .chunks_exact(8)
        .enumerate()
        .map(|(i, c)| {
            let mut raw = [0u8; 8];
            raw.copy_from_slice(c);
            Slot::from_bytes(i * 8, raw)
        })
        .collect()
}

/// Whether slot `i` is the second half of an `ld_imm64` (walking from the
/// start, so a `0x18` inside a pair's second half does not start a pair).
pub(crate) fn second_halves(slots: &[Slot]) -> Vec<bool> {
    let mut out = vec![false; slots.len()];
    let mut i = 0;
    while i < slots.len() {
        if slots[i].opcode == LD_IMM64 && i + 1 < slots.len() {
            out[i + 1] = true;
            i += 2;
        } else {
            i += 1;
        }
    }
    out
}

/// For every slot, the index into `lines` of its line record: the record
/// with the greatest `insn_off <= slot index`; among records sharing that
/// offset the last in kernel order. Slots before the first record get None.
pub(crate) fn match_lines(slot_count: usize, lines: &[LineRecord]) -> Vec<Option<usize>> {
    let mut order: Vec<usize> = (0..lines.len()).collect();
    order.sort_by_key(|&i| lines[i].insn_off); // stable
    let mut out = Vec::with_capacity(slot_count);
    let mut next = 0;
    let mut current = None;
    for idx in 0..slot_count {
        while next < order.len() && lines[order[next]].insn_off as usize <= idx {
            current = Some(order[next]);
            next += 1;
        }
        out.push(current);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(insn_off: u32, line: u32) -> LineRecord {
        LineRecord {
            insn_off,
            file: Some("f.c".into()),
            line: Some(line),
            ..Default::default()
        }
    }

    #[test]
    fn decode_fields() {
        let s = slots(&[
            0x63, 0x1a, 0xfc, 0xff, 0, 0, 0, 0, 0x07, 0x02, 0, 0, 0xfc, 0xff, 0xff, 0xff, 1, 2,
        ]);
        assert_eq!(s.len(), 2);
        assert_eq!(
            (s[0].opcode, s[0].dst, s[0].src, s[0].off),
            (0x63, 10, 1, -4)
        );
        assert_eq!(s[1].imm, -4);
        assert_eq!(s[1].offset, 8);
        assert_eq!(s[0].raw_hex(), "631afcff00000000");
        assert_eq!(
            s[1].internal_text(),
            "0x0008: raw=07020000fcffffff op=0x07 dst=2 src=0 off=0 imm=-4"
        );
    }

    #[test]
    fn line_matching_rules() {
        // Unsorted input, two records at 2 (the later wins), none before 1.
        let lines = vec![rec(5, 50), rec(1, 10), rec(2, 20), rec(2, 21)];
        let m = match_lines(7, &lines);
        assert_eq!(
            m,
            vec![None, Some(1), Some(3), Some(3), Some(3), Some(0), Some(0)]
        );
        assert_eq!(match_lines(2, &[]), vec![None, None]);
    }

    #[test]
    fn wide_pairs() {
        let mut img = vec![0u8; 40];
        img[0] = 0x18;
        img[8] = 0x18; // second half that happens to look like ld_imm64
        img[16] = 0xb7;
        img[24] = 0x18;
        let s = slots(&img);
        assert_eq!(second_halves(&s), vec![false, true, false, false, true]);
    }
}
