//! A program's source keys (file, line, text) and the slots each maps to,
//! with the facts that become its markers.

use std::collections::{BTreeSet, HashMap};

use super::{Marker, SourceKey};
use crate::inspect::source;
use crate::model::image::LineRecord;

fn header_file(file: &str) -> bool {
    let base = source::basename(file);
    base.rsplit_once('.').is_some_and(|(_, ext)| {
        matches!(
            ext.to_ascii_lowercase().as_str(),
            "h" | "hh" | "hpp" | "hxx"
        )
    })
}

/// Per-key facts gathered while walking the slots.
#[derive(Default)]
struct KeyFacts {
    slots: usize,
    columns: BTreeSet<Option<u32>>,
    blocks: usize,
    backjump: bool,
    file_switch: bool,
}

/// The program's source keys and which slot maps to which.
pub(super) struct KeyTable {
    pub(super) keys: Vec<SourceKey>,
    facts: Vec<KeyFacts>,
    pub(super) index: HashMap<SourceKey, usize>,
    /// Per slot: its key (records with no file, line or text map to none).
    pub(super) slot_key: Vec<Option<usize>>,
}

impl KeyTable {
    pub(super) fn new(lines: &[LineRecord], rec_of_slot: &[Option<usize>]) -> KeyTable {
        let mut t = KeyTable {
            keys: Vec::new(),
            facts: Vec::new(),
            index: HashMap::new(),
            slot_key: vec![None; rec_of_slot.len()],
        };
        for (i, rec) in rec_of_slot.iter().enumerate() {
            let Some(rec) = rec.and_then(|r| lines.get(r)) else {
                continue;
            };
            let Some(k) = t.key_of(rec) else {
                continue;
            };
            t.slot_key[i] = Some(k);
            t.facts[k].slots += 1;
            t.facts[k].columns.insert(rec.column);
        }
        t.count_blocks();
        t
    }

    /// The key of every line record (None for one with no file, line or
    /// text), adding those no translated slot maps to.
    pub(super) fn record_keys(&mut self, lines: &[LineRecord]) -> Vec<Option<usize>> {
        lines.iter().map(|rec| self.key_of(rec)).collect()
    }

    /// The key of one line record, added when new; None for a record with
    /// no file, line or text.
    fn key_of(&mut self, rec: &LineRecord) -> Option<usize> {
        if rec.file.is_none() && rec.line.is_none() && rec.source.is_none() {
            return None;
        }
        let key = SourceKey {
            file: rec.file.clone(),
            line: rec.line,
            source: rec.source.clone(),
        };
        let k = *self.index.entry(key.clone()).or_insert_with(|| {
            self.keys.push(key);
            self.facts.push(KeyFacts::default());
            self.keys.len() - 1
        });
        Some(k)
    }

    /// Blocks are maximal runs of slots with the same key (unmapped runs
    /// count as runs too, so they separate blocks).
    fn count_blocks(&mut self) {
        let mut prev_block: Option<Option<usize>> = None;
        for &k in &self.slot_key {
            if prev_block == Some(k) {
                continue;
            }
            if let Some(k) = k {
                self.facts[k].blocks += 1;
                if let Some(Some(p)) = prev_block {
                    let (a, b) = (&self.keys[p], &self.keys[k]);
                    if a.file != b.file {
                        self.facts[k].file_switch = true;
                    } else if let (Some(la), Some(lb)) = (a.line, b.line) {
                        if la > lb {
                            self.facts[k].backjump = true;
                        }
                    }
                }
            }
            prev_block = Some(k);
        }
    }

    /// Each key's markers, in display order.
    pub(super) fn markers(&self) -> Vec<Vec<Marker>> {
        self.keys
            .iter()
            .zip(&self.facts)
            .map(|(key, f)| {
                let mut m = Vec::new();
                if f.blocks > 1 {
                    m.push(Marker::Split);
                }
                if f.backjump {
                    m.push(Marker::Backjump);
                }
                if f.file_switch {
                    m.push(Marker::FileSwitch);
                }
                if key.file.as_deref().is_some_and(header_file) {
                    m.push(Marker::Header);
                }
                if f.columns.len() > 1 {
                    m.push(Marker::SameLineCols);
                }
                if f.slots >= 8 {
                    m.push(Marker::ManyInsns);
                }
                m
            })
            .collect()
    }
}
