//! Fuzz the command-line parser: the input is split on NUL bytes into
//! arguments (what argv can hold). Any argument list ends in a command, a
//! text to print or a usage/argument error, and every accepted value is
//! within the bounds its option promises.
#![no_main]

use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;

use brr::{parse, BrrError, CallGraph, Command, Event, Parsed, Request, MAX_SECONDS};
use libfuzzer_sys::fuzz_target;

fn seconds(what: &str, v: f64) {
    assert!(
        v > 0.0 && v <= MAX_SECONDS,
        "{what} {v} out of (0, {MAX_SECONDS}]"
    );
}

/// What every front end promises the capture engine: a request that
/// passes its own validation, in the ranges each option allows.
fn request(r: &Request) {
    assert_eq!(r.validate(), Ok(()), "{r:?}");
    seconds("profile duration", r.duration);
    assert!(r.frequency > 0);
    assert!(!r.program_ids.contains(&0));
    if let Some(n) = r.pages {
        assert!(n.is_power_of_two() && n <= u64::from(u32::MAX), "pages {n}");
    }
    assert!(r
        .drain_ms
        .is_none_or(|ms| ms > 0 && ms <= u64::from(u32::MAX)));
    // Typed values: the names reports print are the ones the options take.
    assert_eq!(Event::from_name(r.event.name()), Some(r.event));
    assert_eq!(
        CallGraph::from_name(r.call_graph.name()),
        Some(r.call_graph)
    );
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
            Command::Dump {
                prog_id, devmode, ..
            } => assert!(prog_id > 0 || devmode.is_some()),
            Command::DumpCompare { prog_id } => assert!(prog_id > 0, "program id 0"),
            Command::PerfEvents { frequency } => assert!(frequency > 0),
            Command::Top(t) => {
                seconds("delay", t.delay);
                assert!(t.program_id != Some(0));
                request(&t.profile);
                // Top names its program when it profiles.
                assert!(t.profile.program_ids.is_empty());
            }
            Command::Profile(p) => request(&p.request),
            // `cost` takes the capture options of `profile`, with callchains.
            Command::Cost { request: r } => {
                request(&r);
                assert!(r.kernel_samples);
            }
            Command::Prog { .. }
            | Command::Map
            | Command::Link
            | Command::Btf
            | Command::Doctor
            | Command::ManPages { .. }
            | Command::Mcp(_)
            | Command::ServeMcp(_) => {}
        },
        Err(BrrError::Usage(text)) => {
            // One line, whatever the input: control characters are escaped.
            assert!(!text.is_empty() && !text.contains('\n'), "{text:?}");
        }
        Err(e) => panic!("parsing alone failed with a non-usage error: {e}"),
    }
});
