//! How the C library's allocator gives memory back, for a long-running
//! process whose large buffers come and go (the exporter's scrapes).

/// Serve allocations of `bytes` and more from their own mappings, given
/// back to the kernel when freed. glibc otherwise raises this threshold to
/// the largest block freed so far, so that after the first scrape each
/// scrape's rows and text come from the heap, whose freed pages stay
/// resident until the next scrape reuses them. Other C libraries (musl)
/// give large blocks back already; there this does nothing.
pub(crate) fn give_back_large_blocks(bytes: usize) {
    #[cfg(target_env = "gnu")]
    {
        let bytes = libc::c_int::try_from(bytes).unwrap_or(libc::c_int::MAX);
        // SAFETY: mallopt takes two integers and changes only the
        // allocator's tuning; it is safe to call at any time.
        unsafe { libc::mallopt(libc::M_MMAP_THRESHOLD, bytes) };
    }
    #[cfg(not(target_env = "gnu"))]
    let _ = bytes;
}

/// Give the kernel back the free pages inside the allocator's heaps, which
/// small blocks freed out of order leave behind (glibc; elsewhere nothing).
pub(crate) fn give_back_free_pages() {
    #[cfg(target_env = "gnu")]
    // SAFETY: malloc_trim takes a byte count and only releases memory the
    // allocator holds free; it is safe to call at any time.
    unsafe {
        libc::malloc_trim(0);
    }
}
