//! Fuzz the BTF reader: any blob, including ones whose header offsets point
//! anywhere. Parsing never fails, and every name it hands out is a non-empty
//! string taken from inside the blob.
#![no_main]

use brr::BtfData;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let btf = BtfData::parse(data);
    // The string section is a slice of the blob, so no offset at or past the
    // blob's end can name anything.
    let len = u32::try_from(data.len()).unwrap_or(u32::MAX);
    assert_eq!(btf.string(len), None, "string offset past the blob");
    assert_eq!(btf.string(u32::MAX), None);
    let check = |name: Option<String>| {
        if let Some(n) = name {
            assert!(!n.is_empty(), "empty names are None");
            assert!(!n.contains('\0'), "a name ends at its NUL: {n:?}");
            // Invalid UTF-8 bytes become one U+FFFD each, so count characters.
            assert!(n.chars().count() <= data.len(), "name longer than the blob");
        }
    };
    // Every type takes at least 12 bytes, so IDs past len/12 cannot exist;
    // probe a few more to check the lookup of unknown IDs.
    let max_id = (data.len() / 12) as u32 + 2;
    for id in 0..=max_id {
        let name = btf.func_name(id);
        if id == 0 || id > (data.len() / 12) as u32 {
            assert_eq!(
                name,
                None,
                "FUNC id {id} cannot exist in {} bytes",
                data.len()
            );
        }
        check(name);
    }
    for off in (0..len.min(4096)).step_by(7) {
        check(btf.string(off));
    }
});
