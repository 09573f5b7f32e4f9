//! Fuzz the `/proc/kallsyms` parser and the address lookup on its table:
//! any text parses, and every lookup returns the symbol with the greatest
//! start address at or below the probed address.
#![no_main]

use brr::kallsyms::{fields, Kallsyms};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let mut starts = Vec::new();
    let mut lines = 0usize;
    for line in text.lines() {
        if let Some((addr, name, module)) = fields(line) {
            lines += 1;
            assert!(!name.is_empty() && !name.contains(char::is_whitespace));
            if let Some(m) = module {
                assert!(!m.is_empty() && !m.ends_with(']'));
            }
            if addr != 0 {
                starts.push(addr);
            }
        }
    }
    let k = Kallsyms::parse(&text);
    assert_eq!(k.hidden, lines > 0 && starts.is_empty());
    starts.sort_unstable();
    let probe = |ip: u64| {
        let expected = starts
            .partition_point(|&s| s <= ip)
            .checked_sub(1)
            .map(|i| starts[i]);
        let got = k.resolve(ip);
        assert_eq!(got.map(|s| s.start), expected, "resolve({ip:#x})");
        if let Some(s) = got {
            assert!(!s.name.is_empty() && !s.name.contains(char::is_whitespace));
        }
    };
    probe(0);
    probe(u64::MAX);
    for &s in starts.iter().take(64) {
        probe(s);
        probe(s.wrapping_sub(1));
        probe(s.saturating_add(1));
    }
});
