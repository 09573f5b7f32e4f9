//! The KIND column of a kernel symbol: map implementation, helper, or
//! other kernel code.

/// Prefixes of the kernel's map implementations (kernel/bpf/*map*.c,
/// hashtab.c, lpm_trie.c, ...) and their private helpers.
const MAP_IMPL_PREFIXES: &[&str] = &[
    "bpf_map_",
    "htab_",
    "__htab_",
    "array_map_",
    "percpu_array_map_",
    "prog_array_map_",
    "fd_array_map_",
    "bpf_fd_array_map_",
    "bpf_fd_htab_map_",
    "array_of_map_",
    "htab_of_map_",
    "perf_event_fd_array_",
    "cgroup_fd_array_",
    "stack_map_",
    "queue_stack_map_",
    "bloom_map_",
    "ringbuf_map_",
    "user_ringbuf_map_",
    "trie_",
    "dev_map_",
    "cpu_map_",
    "xsk_map_",
    "sock_map_",
    "sock_hash_",
    "reuseport_array_",
    "arena_map_",
    "cgroup_storage_",
    "bpf_local_storage_",
    "bpf_lru_",
    "pcpu_freelist_",
    "__pcpu_freelist_",
    "lookup_nulls_elem_raw",
    "lookup_elem_raw",
    "alloc_htab_elem",
    "free_htab_elem",
    "prealloc_lru_pop",
];

/// Generic map operation names (`<type>_map_<op>`) regardless of prefix.
const MAP_OP_SUFFIXES: &[&str] = &["_map_lookup_elem", "_map_update_elem", "_map_delete_elem"];

/// KIND of a kernel symbol: `unknown`, `bpf_map`, `bpf_helper` or `kernel`.
///
/// Decided by whole-name prefixes and suffixes, never by a substring in the
/// middle of a name: the original's `_map_` substring rule called
/// `filemap_map_pages` a map function and missed hash-table internals such
/// as `lookup_nulls_elem_raw`; BPF program symbols (`bpf_prog_<tag>_...`),
/// trampolines and dispatchers are not helpers.
pub(crate) fn classify(name: Option<&str>, module: Option<&str>) -> &'static str {
    let Some(name) = name.filter(|n| !n.is_empty()) else {
        return "unknown";
    };
    let lower = name.to_ascii_lowercase();
    // Compiler clones (`foo.cold`, `foo.isra.0`) belong to `foo`.
    let base = lower.split('.').next().unwrap_or(&lower);
    if MAP_IMPL_PREFIXES.iter().any(|p| base.starts_with(p))
        || MAP_OP_SUFFIXES.iter().any(|s| base.ends_with(s))
    {
        return "bpf_map";
    }
    let helper = ["bpf_", "__bpf_", "____bpf_"]
        .iter()
        .find_map(|p| base.strip_prefix(p));
    let is_bpf_text = module == Some("bpf")
        || base.starts_with("bpf_prog_")
        || base.starts_with("bpf_trampoline_")
        || base.starts_with("bpf_dispatcher_");
    if helper.is_some() && !is_bpf_text {
        return "bpf_helper";
    }
    "kernel"
}
