//! The kernel features brr relies on, read from the kernel's own BTF
//! (`/sys/kernel/btf/vmlinux`, readable by every user) without loading
//! anything: a struct member or an enum value the kernel's types have is
//! a feature it implements.

use crate::kernel::btf::members;

/// A feature as the BTF shows it: None when the type that would carry it
/// is not in the BTF at all (the answer then comes from the kernel
/// version).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Features {
    /// `BPF_ENABLE_STATS` in `enum bpf_cmd`.
    pub enable_stats: Option<bool>,
    /// `BPF_LINK_GET_NEXT_ID` in `enum bpf_cmd` and `struct bpf_link_info`.
    pub link_info: Option<bool>,
    /// `jited_line_info` in `struct bpf_prog_info`.
    pub jited_line_info: Option<bool>,
    /// `PERF_SAMPLE_CGROUP` in `enum perf_event_sample_format`.
    pub sample_cgroup: Option<bool>,
    /// `recursion_misses` in `struct bpf_prog_info`.
    pub recursion_misses: Option<bool>,
    /// `verified_insns` in `struct bpf_prog_info`.
    pub verified_insns: Option<bool>,
}

/// The features in a vmlinux BTF blob.
pub(crate) fn features(data: &[u8]) -> Features {
    let m = members(
        data,
        &[
            "bpf_cmd",
            "bpf_link_info",
            "bpf_prog_info",
            "perf_event_sample_format",
        ],
    );
    let has = |ty: &str, member: &str| m.get(ty).map(|v| v.iter().any(|x| x == member));
    let link_struct = m.contains_key("bpf_link_info");
    Features {
        enable_stats: has("bpf_cmd", "BPF_ENABLE_STATS"),
        link_info: match has("bpf_cmd", "BPF_LINK_GET_NEXT_ID") {
            Some(cmd) => Some(cmd && link_struct),
            None => link_struct.then_some(true),
        },
        jited_line_info: has("bpf_prog_info", "jited_line_info"),
        sample_cgroup: has("perf_event_sample_format", "PERF_SAMPLE_CGROUP"),
        recursion_misses: has("bpf_prog_info", "recursion_misses"),
        verified_insns: has("bpf_prog_info", "verified_insns"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::btf::tests::types_blob as blob;
    use crate::kernel::btf::{KIND_ENUM, KIND_ENUM64, KIND_STRUCT};

    #[test]
    fn features_from_types() {
        let data = blob(&[
            (1, "int", &[]),
            (
                KIND_ENUM,
                "bpf_cmd",
                &["BPF_MAP_CREATE", "BPF_LINK_GET_NEXT_ID", "BPF_ENABLE_STATS"],
            ),
            (KIND_STRUCT, "bpf_link_info", &["type", "id", "prog_id"]),
            (
                KIND_STRUCT,
                "bpf_prog_info",
                &[
                    "type",
                    "jited_line_info",
                    "recursion_misses",
                    "verified_insns",
                ],
            ),
            (
                KIND_ENUM64,
                "perf_event_sample_format",
                &["PERF_SAMPLE_IP", "PERF_SAMPLE_CGROUP"],
            ),
        ]);
        assert_eq!(
            features(&data),
            Features {
                enable_stats: Some(true),
                link_info: Some(true),
                jited_line_info: Some(true),
                sample_cgroup: Some(true),
                recursion_misses: Some(true),
                verified_insns: Some(true),
            }
        );
        // An older kernel: the types are there, the values are not.
        let old = blob(&[
            (KIND_ENUM, "bpf_cmd", &["BPF_MAP_CREATE"]),
            (KIND_STRUCT, "bpf_prog_info", &["type"]),
            (KIND_ENUM, "perf_event_sample_format", &["PERF_SAMPLE_IP"]),
        ]);
        assert_eq!(
            features(&old),
            Features {
                enable_stats: Some(false),
                link_info: Some(false),
                jited_line_info: Some(false),
                sample_cgroup: Some(false),
                recursion_misses: Some(false),
                verified_insns: Some(false),
            }
        );
        // Types not described at all: no answer.
        assert_eq!(features(&blob(&[(1, "int", &[])])), Features::default());
    }
}
