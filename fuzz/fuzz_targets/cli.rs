//! Fuzz the command-line parser: the input is split on NUL bytes into
//! arguments (what argv can hold). Any argument list ends in a command, a
//! text to print or a usage/argument error, and every accepted value is
//! within the bounds its option promises.
#![no_main]

use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;

use brr::cli::{parse, Command, Parsed, MAX_SECONDS};
use brr::error::BrrError;
use libfuzzer_sys::fuzz_target;

fn seconds(what: &str, v: f64) {
    assert!(
        v > 0.0 && v <= MAX_SECONDS,
        "{what} {v} out of (0, {MAX_SECONDS}]"
    );
}

fn pages(v: u64) {
    assert!(v.is_power_of_two() && v <= u64::from(u32::MAX), "pages {v}");
}

fuzz_target!(|data: &[u8]| {
    // Raw bytes, as argv holds them: non-UTF-8 arguments reach the parser.
    let args: Vec<OsString> = if data.is_empty() {
        Vec::new()
    } else {
        data.split(|&b| b == 0)
            .map(|a| OsString::from_vec(a.to_vec()))
            .collect()
    };
    match parse(&args) {
        Ok(Parsed::Print(text)) => assert!(!text.is_empty()),
        Ok(Parsed::Run(cli)) => match cli.command {
            Command::Activity {
                duration, interval, ..
            } => {
                seconds("duration", duration);
                if let Some(i) = interval {
                    seconds("interval", i);
                }
            }
            // Loopback unless an address was given, which the fuzzer may do.
            Command::Exporter { .. } => {}
            // `dump --devmode` alone browses a directory and names no program.
            Command::Dump { prog_id, devmode } => assert!(prog_id > 0 || devmode.is_some()),
            Command::DumpCompare { prog_id } => assert!(prog_id > 0, "program id 0"),
            Command::PerfEvents { frequency } => assert!(frequency > 0),
            Command::Top(t) => {
                seconds("delay", t.delay);
                seconds("profile duration", t.profile_duration);
                assert!(t.frequency > 0);
                assert!(t.program_id != Some(0));
                assert!(
                    t.call_graph == "fp" || t.call_graph == "lbr",
                    "{}",
                    t.call_graph
                );
                if t.perf_buffer_pages != 0 {
                    pages(t.perf_buffer_pages);
                }
                assert!(t.perf_drain_ms <= u64::from(u32::MAX));
            }
            Command::Profile(p) => {
                seconds("duration", p.duration);
                assert!(p.frequency > 0);
                assert!(p.program_id != Some(0));
                assert!(p.call_graph == "fp" || p.call_graph == "lbr");
                if let Some(n) = p.perf_buffer_pages {
                    pages(n);
                }
                assert!(p
                    .perf_drain_ms
                    .is_none_or(|ms| ms > 0 && ms <= u64::from(u32::MAX)));
            }
            Command::Prog { .. } | Command::Map | Command::Link | Command::Btf => {}
        },
        Err(BrrError::Usage(text)) => {
            // One line, whatever the input: control characters are escaped.
            assert!(!text.is_empty() && !text.contains('\n'), "{text:?}");
        }
        Err(e) => panic!("parsing alone failed with a non-usage error: {e}"),
    }
});
