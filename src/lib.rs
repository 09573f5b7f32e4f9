//! brr: ps and top for loaded Linux eBPF objects.
//!
//! The binary (`src/main.rs`) only parses the command line, runs it and maps
//! errors to exit codes; everything else lives here so that tests, fuzz
//! targets and benchmarks reach the same code.
//!
//! Kernel facts flow one way, each layer calling the ones below it with
//! plain data:
//!
//! 1. `sys`: raw `bpf()` and `perf_event_open()` syscalls, the mmap'ed
//!    perf ring and signals. The only module allowed `unsafe` code (the
//!    crate denies `unsafe_code` everywhere else).
//! 2. `kernel`: safe, typed views of the kernel's BPF objects, stats,
//!    BTF, kallsyms and bpffs pins; `bpftool` runs the optional external
//!    tool. `privilege` names the capabilities an operation needs and
//!    `error` turns failures into one-line messages and exit codes.
//! 3. `model`: the plain data the kernel views fill and every layer above
//!    reads.
//! 4. Analysis of that data: `activity` (run counts and run time over a
//!    window), `profile` (sampling, attribution, aggregation, the
//!    report), `inspect` (instruction slots, source lines, native code,
//!    drilldown rows) and `doctor` (what brr can do on this host, and
//!    why not).
//! 5. Views: `render` (plain data to text tables, JSON, CSV and
//!    textmode) and `export` (profile files: folded stacks, flame graph,
//!    pprof). Nothing below them formats output.
//! 6. `session`: the one collector the front ends share: the measuring
//!    window, object context (one owner scan, full names and memlock read
//!    once), the listings with the fields each view prints, a capture that
//!    Ctrl-C ends early and the one Report every view of it reads, pins,
//!    the `--devmode` tree.
//! 7. Front ends: `cli` (the command line), `commands` (dispatch),
//!    `top` (`brr top` as textmode or interactive), `tui` (the
//!    interactive view, the only module that knows a key) and `serve`
//!    (`brr exporter`, the Prometheus service). The TUI and the exporter
//!    ask `session` rather than read the kernel themselves; nothing below
//!    the front ends imports them.
//!
//! Three leaf modules serve any layer: `values` (number parsers shared by
//! the command line and the TUI's input fields), `utc` (Unix times as
//! ISO 8601 dates) and `trace` (readiness lines for tests and scripts).
//!
//! Every module is `pub(crate)`. The library's public surface is the
//! re-exports below, exactly what the binary, the integration tests, the
//! fuzz targets and the examples use: flat names where they read well on
//! their own, and a few small modules (`bpf`, `native`, `fdinfo`, `pprof`,
//! ...) where flat names would clash or say too little. The crate warns on
//! an unreachable `pub` (`unreachable_pub`), so `dead_code` sees everything
//! else.

// Add a name here only when the binary, a test, a fuzz target or an
// example needs it: anything exported is out of `dead_code`'s sight.

pub use bpftool::{parse_json, parse_text_indexes};
pub use cli::{parse, Command, Parsed, MAX_SECONDS};
pub use commands::{bpffs_warning, print, run, Streamed};
pub use error::{BrrError, Result};
pub use kernel::btf::BtfData;
pub use kernel::objects::{MapReader, ProgramReader};
pub use kernel::prog_extra::ExtraReader;
pub use model::image::{JitCode, JitRange, LineRecord, ProgramImage};
pub use model::profile::{Frame, Profile, ProgramProfile, Stack};
pub use model::{Container, Pod, Qos, Runtime, Workload};
pub use profile::{CallGraph, Event, Request};
pub use render::listing::{map_fields, program_fields};
pub use render::Format;
pub use sys::Errno;
pub use utc::iso8601;

/// The `bpf()` wrapper, object enumeration and info structs, for tests that
/// load and inspect their own fixtures.
pub mod bpf {
    pub use crate::sys::bpf::{
        btf_info, command, command_fd, enable_stats, fd_by_id, map_info, next_id, obj_get,
        obj_info, prog_detail, prog_info_first_func, BtfInfo, MapInfo, ObjKind, ProgDetail,
        ProgInfo, ProgWant,
    };
    pub use crate::sys::link_info::{link_info, link_info_with_name};
}

/// Native (JIT) code decoding.
pub mod native {
    pub use crate::inspect::native::roles::roles;
    pub use crate::inspect::native::{build, Arch, Decoded, Dest};

    /// The x86-64 decoder and the reference it is checked against.
    pub mod x86 {
        pub use crate::inspect::native::x86::{decode, reference, reference_all, subset};
    }
}

/// `/proc/*/fdinfo` of bpf objects.
pub mod fdinfo {
    pub use crate::kernel::fdinfo::{own_link, own_map, own_prog, parse_prog, read_own, OwnFdinfo};
}

/// What a bpf link is attached to.
pub mod link_target {
    pub use crate::kernel::link_target::{read, read_ifnames, LinkTarget, SystemNames};
}

/// Which processes hold bpf objects.
pub mod owners {
    pub use crate::kernel::owners::{scan, HeldKind, Owner};
}

/// cgroup v2 paths and the workloads they name.
pub mod cgroups {
    pub use crate::kernel::cgroups::{
        cgroup2_mount, paths_by_id, paths_of, task_paths, Cgroup2Mount, Workloads,
    };
}

/// `/proc/self/mountinfo`.
pub mod mountinfo {
    pub use crate::kernel::mountinfo::{read, Mount};
}

/// `/proc/kallsyms`.
pub mod kallsyms {
    pub use crate::kernel::kallsyms::{fields, Kallsyms};
}

/// The perf ring's record parser.
pub mod records {
    pub use crate::profile::records::{
        walk, Layout, ParseStats, Record, SAMPLE_BRANCH_STACK, SAMPLE_CALLCHAIN, SAMPLE_CGROUP,
        SAMPLE_CPU, SAMPLE_IP, SAMPLE_PERIOD, SAMPLE_TID, SAMPLE_TIME,
    };
}

/// Profile files: folded stacks.
pub mod folded {
    pub use crate::export::folded::render;
}

/// Profile files: pprof.
pub mod pprof {
    pub use crate::export::pprof::{write, Context};
}

/// Profile files: flame graph SVG.
pub mod flamegraph {
    pub use crate::export::flamegraph::{write, Host};
}

pub(crate) mod activity;
pub(crate) mod bpftool;
pub(crate) mod cli;
pub(crate) mod commands;
pub(crate) mod doctor;
pub(crate) mod error;
pub(crate) mod export;
pub(crate) mod inspect;
pub(crate) mod kernel;
pub(crate) mod mcp;
pub(crate) mod model;
pub(crate) mod privilege;
pub(crate) mod profile;
pub(crate) mod render;
pub(crate) mod serve;
pub(crate) mod session;
// Cargo.toml denies unsafe_code crate-wide; the syscall layer is the one
// exemption, so unsafe cannot spread to other modules unnoticed.
#[allow(unsafe_code)]
pub(crate) mod sys;
pub(crate) mod top;
pub(crate) mod trace;
pub(crate) mod tui;
pub(crate) mod utc;
pub(crate) mod values;
