//! Fuzz the hand-written decoder of the x86-64 BPF JIT's instruction
//! subset against iced-x86, its reference: whenever the subset decodes
//! the first instruction of arbitrary bytes it must give iced-x86's
//! length, text and branch destination, and a whole function decoded with
//! the subset (iced-x86 for the rest) must list what iced-x86 alone lists.
#![no_main]

use libfuzzer_sys::fuzz_target;

use brr::native::x86;

fuzz_target!(|data: &[u8]| {
    if let Some(ours) = x86::subset(data) {
        let theirs = x86::reference(data);
        assert_eq!(
            (ours.len, &ours.text, ours.dest),
            (theirs.len, &theirs.text, theirs.dest),
            "{data:02x?}"
        );
    }
    assert_eq!(x86::decode(data), x86::reference_all(data), "{data:02x?}");
});
