//! A gzipped `profile.proto` read back for tests: every sample with its
//! labels and its frames, leaf first, as function, file and line. Decoded
//! with the same generated prost types brr writes them with; the format's
//! own reader, `go tool pprof`, is run by the tests beside this.

use std::collections::BTreeMap;
use std::io::Read;

#[path = "../../src/export/pprof_proto.rs"]
#[allow(clippy::all, clippy::pedantic, dead_code)]
mod pb;

use prost::Message;

/// One frame of a sample's stack.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Frame {
    pub function: String,
    pub file: String,
    pub line: i64,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Sample {
    /// `samples/count`.
    pub count: i64,
    /// String labels by key.
    pub labels: BTreeMap<String, String>,
    /// Numeric labels by key.
    pub nums: BTreeMap<String, i64>,
    /// Leaf first.
    pub frames: Vec<Frame>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Decoded {
    pub samples: Vec<Sample>,
    /// `period` (ns per sample) and `duration_nanos`.
    pub period: i64,
    pub duration_nanos: i64,
}

/// Decode gzipped profile bytes; panics on anything malformed.
pub(crate) fn decode(gz: &[u8]) -> Decoded {
    assert_eq!(gz.get(..2), Some(&[0x1f, 0x8b][..]), "gzip magic");
    let mut raw = Vec::new();
    flate2::read::GzDecoder::new(gz)
        .read_to_end(&mut raw)
        .expect("gunzip");
    let p = pb::PbProfile::decode(&raw[..]).expect("profile.proto");
    let s = |i: i64| p.string_table[usize::try_from(i).expect("string index")].clone();
    let frame = |loc: u64| -> Frame {
        let l = &p.location[usize::try_from(loc - 1).expect("location id")];
        let line = &l.line[0];
        let f = &p.function[usize::try_from(line.function_id - 1).expect("function id")];
        Frame {
            function: s(f.name),
            file: s(f.filename),
            line: line.line,
        }
    };
    let samples = p
        .sample
        .iter()
        .map(|x| Sample {
            count: x.value[0],
            labels: x
                .label
                .iter()
                .filter(|l| l.str != 0)
                .map(|l| (s(l.key), s(l.str)))
                .collect(),
            nums: x
                .label
                .iter()
                .filter(|l| l.str == 0)
                .map(|l| (s(l.key), l.num))
                .collect(),
            frames: x.location_id.iter().map(|&id| frame(id)).collect(),
        })
        .collect();
    Decoded {
        samples,
        period: p.period,
        duration_nanos: p.duration_nanos,
    }
}

impl Decoded {
    /// The samples of program `id` (its `prog_id` label).
    pub(crate) fn of_program(&self, id: u32) -> impl Iterator<Item = &Sample> {
        self.samples
            .iter()
            .filter(move |s| s.nums.get("prog_id") == Some(&i64::from(id)))
    }
}
