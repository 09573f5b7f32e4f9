//! Fuzz the reading of bpftool's output: the JSON instruction list and the
//! instruction indexes of the text dump. Malformed JSON is an error, never a
//! panic, and a valid list yields one entry per object in it.
#![no_main]

use brr::{parse_json, parse_text_indexes};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let value: Option<serde_json::Value> = serde_json::from_str(&text).ok();
    match parse_json(&text) {
        Ok(entries) => {
            let list = value
                .as_ref()
                .and_then(|v| v.as_array())
                .expect("accepted input is a JSON array");
            let objects: Vec<_> = list.iter().filter_map(|v| v.as_object()).collect();
            assert_eq!(entries.len(), objects.len());
            for (e, o) in entries.iter().zip(objects) {
                let s = |k: &str| o.get(k).and_then(|v| v.as_str());
                assert_eq!(e.disasm.as_deref(), s("disasm"));
                assert_eq!(e.file.as_deref(), s("file"));
                assert_eq!(e.src.as_deref(), s("src"));
                assert_eq!(e.line_num, o.get("line_num").and_then(|v| v.as_i64()));
                assert_eq!(e.line_col, o.get("line_col").and_then(|v| v.as_i64()));
            }
        }
        Err(e) => {
            assert!(value.as_ref().is_none_or(|v| !v.is_array()));
            assert_eq!(e.exit_code(), 1);
            assert!(e.render().starts_with("brr: bpftool "), "{}", e.render());
        }
    }
    let indexes = parse_text_indexes(&text);
    assert!(indexes.len() <= text.lines().count());
});
