//! brr: ps and top for loaded Linux eBPF objects.

use std::io::Write;

use brr::{Errno, Parsed, Streamed};

/// Exit status of a failed stdout write that is not a closed pipe.
const WRITE_ERROR_STATUS: i32 = 1;

/// One line for any panic, without a backtrace: the user gets a report to
/// pass on, not a wall of frames. The TUI chains its own hook in front of
/// this one to restore the terminal first.
fn install_panic_hook() {
    std::panic::set_hook(Box::new(|info| {
        let payload = info.payload();
        let message = payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown panic".to_string());
        let line = message.replace('\n', " ");
        let _ = writeln!(std::io::stderr(), "brr: internal error: {line}");
        // Whatever thread panicked, brr ends here: a half-working capture or
        // view would only report wrong figures.
        std::process::exit(101);
    }));
}

/// The exit status after a failed stdout write; `code` is the command's.
fn write_failed(e: &std::io::Error, code: i32) -> i32 {
    // A reader that went away (`brr prog | head -1`) is not an error.
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        return code;
    }
    let reason = e
        .raw_os_error()
        .map(|n| Errno(n).text())
        .unwrap_or_else(|| e.to_string());
    let _ = writeln!(std::io::stderr(), "brr: write error: {reason}");
    WRITE_ERROR_STATUS
}

fn run(args: &[std::ffi::OsString]) -> brr::Result<Streamed> {
    let mut stdout = std::io::stdout();
    let c = match brr::parse(args)? {
        Parsed::Print(text) => return Ok(brr::print(&mut stdout, &text, 0)),
        Parsed::Run(c) => c,
    };
    if let Some(w) = brr::bpffs_warning(&c) {
        let _ = writeln!(std::io::stderr(), "brr: warning: {w}");
    }
    brr::run(&c, &mut stdout)
}

fn main() {
    install_panic_hook();
    let args: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    let code = match run(&args) {
        Ok(Streamed::Done(code)) => code,
        Ok(Streamed::WriteFailed(e, code)) => write_failed(&e, code),
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "{}", e.render());
            e.exit_code()
        }
    };
    std::process::exit(code);
}
