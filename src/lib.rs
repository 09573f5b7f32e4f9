//! brr: ps and top for loaded Linux eBPF objects.
//!
//! The binary (`src/main.rs`) only parses the command line, runs it and maps
//! errors to exit codes; everything else lives here so that tests, fuzz
//! targets and benchmarks reach the same code.

pub mod activity;
pub mod bpftool;
pub mod cli;
pub mod commands;
pub mod error;
pub mod export;
pub mod inspect;
pub mod kernel;
pub mod model;
pub mod privilege;
pub mod profile;
pub mod render;
pub mod session;
pub mod sys;
pub mod top;
pub mod trace;
pub mod tui;
pub mod values;
