//! BPF_ENABLE_STATS held for exactly as long as brr measures.

use std::os::fd::OwnedFd;

use crate::error::{BrrError, Result};
use crate::sys::bpf;

/// Run-time statistics stay enabled while this guard lives (the kernel
/// reference-counts holders, so others' enablement is never disturbed).
pub(crate) struct StatsGuard {
    _fd: OwnedFd,
}

impl StatsGuard {
    pub(crate) fn enable() -> Result<StatsGuard> {
        bpf::enable_stats()
            .map(|fd| StatsGuard { _fd: fd })
            .map_err(|e| BrrError::bpf("enable eBPF runtime statistics", e))
    }
}
