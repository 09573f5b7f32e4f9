//! Fuzz the perf record parser: any bytes, split anywhere (as a wrapped
//! ring), with every sample layout brr requests. It must not panic or loop,
//! and every byte must be either parsed or counted as discarded.
#![no_main]

use libfuzzer_sys::fuzz_target;

use brr::profile::records::*;

/// What brr requests (IP and TID, the cgroup where the kernel has it) and
/// the original's wider layout with time, CPU and period.
const DIRECT: u64 = SAMPLE_IP | SAMPLE_TID;
const WIDE: u64 = DIRECT | SAMPLE_TIME | SAMPLE_CPU | SAMPLE_PERIOD;
const LAYOUTS: [u64; 8] = [
    DIRECT,
    DIRECT | SAMPLE_CALLCHAIN,
    DIRECT | SAMPLE_BRANCH_STACK,
    DIRECT | SAMPLE_CGROUP,
    DIRECT | SAMPLE_CALLCHAIN | SAMPLE_CGROUP,
    DIRECT | SAMPLE_BRANCH_STACK | SAMPLE_CGROUP,
    WIDE | SAMPLE_CALLCHAIN,
    0,
];

fuzz_target!(|data: &[u8]| {
    let Some((&selector, rest)) = data.split_first() else {
        return;
    };
    let cut = if rest.is_empty() {
        0
    } else {
        usize::from(selector) * rest.len() / 255
    };
    let (first, second) = rest.split_at(cut.min(rest.len()));
    let sample_type = LAYOUTS[usize::from(selector) % LAYOUTS.len()];
    let mut stats = ParseStats::default();
    let mut scratch = Vec::new();
    let mut seen = 0u64;
    walk(first, second, sample_type, &mut scratch, &mut stats, |r| {
        if let Record::Sample(s) = r {
            // Touch the variable-length parts too.
            seen += s.callchain.addresses().count() as u64;
            seen += s.branches.pairs().count() as u64;
        }
    });
    let _ = seen;
    assert_eq!(
        stats.parsed_bytes + stats.discarded_bytes,
        rest.len() as u64,
        "every byte is parsed or discarded"
    );
    assert!(stats.discarded_bytes == 0 || stats.malformed_records > 0);
});
