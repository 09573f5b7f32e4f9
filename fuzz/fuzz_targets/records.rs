//! Fuzz the perf record parser: any bytes, split anywhere (as a wrapped
//! ring), with every sample layout brr requests and the side band's (whose
//! records end with a time trailer: program loads, JIT symbols, task
//! names). It must not panic or loop, and every byte must be either parsed
//! or counted as discarded.
#![no_main]

use libfuzzer_sys::fuzz_target;

use brr::records::*;

/// What brr requests (IP and TID, the cgroup where the kernel has it) and
/// the original's wider layout with time, CPU and period.
const DIRECT: u64 = SAMPLE_IP | SAMPLE_TID;
const WIDE: u64 = DIRECT | SAMPLE_TIME | SAMPLE_CPU | SAMPLE_PERIOD;
const LAYOUTS: [Layout; 9] = [
    Layout::samples(DIRECT),
    Layout::samples(DIRECT | SAMPLE_CALLCHAIN),
    Layout::samples(DIRECT | SAMPLE_BRANCH_STACK),
    Layout::samples(DIRECT | SAMPLE_CGROUP),
    Layout::samples(DIRECT | SAMPLE_CALLCHAIN | SAMPLE_CGROUP),
    Layout::samples(DIRECT | SAMPLE_BRANCH_STACK | SAMPLE_CGROUP),
    Layout::samples(WIDE | SAMPLE_CALLCHAIN),
    Layout::samples(0),
    Layout::SIDE_BAND,
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
    let layout = LAYOUTS[usize::from(selector) % LAYOUTS.len()];
    let mut stats = ParseStats::default();
    let mut scratch = Vec::new();
    let mut seen = 0u64;
    walk(
        first,
        second,
        layout,
        &mut scratch,
        &mut stats,
        |r| match r {
            // Touch the variable-length parts too.
            Record::Sample(s) => {
                seen += s.callchain.addresses().count() as u64;
                seen += s.branches.pairs().count() as u64;
            }
            Record::Comm {
                pid, comm, time, ..
            } => {
                seen = seen
                    .wrapping_add(u64::from(pid) + comm.len() as u64)
                    .wrapping_add(time.unwrap_or(0));
                assert!(!comm.contains(&0), "a name ends at its NUL");
                assert_eq!(time.is_some(), layout.time_trailer);
            }
            Record::Ksymbol { name, .. } => {
                seen += name.len() as u64;
                assert!(!name.contains(&0), "a name ends at its NUL");
            }
            Record::BpfEvent { id, time, .. } => {
                seen = seen
                    .wrapping_add(u64::from(id))
                    .wrapping_add(time.unwrap_or(0));
                assert_eq!(time.is_some(), layout.time_trailer);
            }
            Record::Task {
                pid, ppid, time, ..
            } => {
                seen = seen
                    .wrapping_add(u64::from(pid) + u64::from(ppid))
                    .wrapping_add(time.unwrap_or(0));
            }
        },
    );
    let _ = seen;
    assert_eq!(
        stats.parsed_bytes + stats.discarded_bytes,
        rest.len() as u64,
        "every byte is parsed or discarded"
    );
    assert!(stats.discarded_bytes == 0 || stats.malformed_records > 0);
});
