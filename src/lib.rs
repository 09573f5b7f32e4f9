//! brr: ps and top for loaded Linux eBPF objects.
//!
//! The binary (`src/main.rs`) only parses the command line, runs it and maps
//! errors to exit codes; everything else lives here so that tests, fuzz
//! targets and benchmarks reach the same code.
//!
//! Kernel facts flow one way, each layer calling the ones below it with
//! plain data:
//!
//! 1. [`sys`]: raw `bpf()` and `perf_event_open()` syscalls, the mmap'ed
//!    perf ring and signals. The only module allowed `unsafe` code (the
//!    crate denies `unsafe_code` everywhere else).
//! 2. [`kernel`]: safe, typed views of the kernel's BPF objects, stats,
//!    BTF, kallsyms and bpffs pins; [`bpftool`] runs the optional external
//!    tool. `privilege` names the capabilities an operation needs and
//!    [`error`] turns failures into one-line messages and exit codes.
//! 3. [`model`]: the plain data the kernel views fill and every layer above
//!    reads.
//! 4. Analysis of that data: `activity` (run counts and run time over a
//!    window), [`profile`] (sampling, attribution, aggregation, the
//!    report), [`inspect`] (instruction slots, source lines, native code,
//!    drilldown rows) and `doctor` (what brr can do on this host, and
//!    why not).
//! 5. Views: [`render`] (plain data to text tables, JSON, CSV and
//!    textmode) and [`export`] (profile files: folded stacks, flame graph,
//!    pprof). Nothing below them formats output.
//! 6. `session`: the one collector the front ends share: the measuring
//!    window, object context (one owner scan, full names and memlock read
//!    once), the listings with the fields each view prints, a capture that
//!    Ctrl-C ends early and the one Report every view of it reads, pins,
//!    the `--devmode` tree.
//! 7. Front ends: [`cli`] (the command line), [`commands`] (dispatch),
//!    `top` (`brr top` as textmode or interactive), `tui` (the
//!    interactive view, the only module that knows a key) and `serve`
//!    (`brr exporter`, the Prometheus service). The TUI and the exporter
//!    ask `session` rather than read the kernel themselves; nothing below
//!    the front ends imports them.
//!
//! Three leaf modules serve any layer: `values` (number parsers shared by
//! the command line and the TUI's input fields), [`utc`] (Unix times as
//! ISO 8601 dates) and `trace` (readiness lines for tests and scripts).
//!
//! The library's public surface is what the binary, the integration tests,
//! the fuzz targets and the examples use; everything else is `pub(crate)`
//! and the crate warns on an unreachable `pub` (`unreachable_pub`), so the
//! compiler sees dead code.

pub(crate) mod activity;
pub mod bpftool;
pub mod cli;
pub mod commands;
pub(crate) mod doctor;
pub mod error;
pub mod export;
pub mod inspect;
pub mod kernel;
pub mod model;
pub(crate) mod privilege;
pub mod profile;
pub mod render;
pub(crate) mod serve;
pub(crate) mod session;
// Cargo.toml denies unsafe_code crate-wide; the syscall layer is the one
// exemption, so unsafe cannot spread to other modules unnoticed.
#[allow(unsafe_code)]
pub mod sys;
pub(crate) mod top;
pub(crate) mod trace;
pub(crate) mod tui;
pub mod utc;
pub(crate) mod values;
