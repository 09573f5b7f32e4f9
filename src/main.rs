//! brr: ps and top for loaded Linux eBPF objects.

use std::io::Write;

use brr::sys::Errno;
use brr::{cli, commands};

/// Exit status of a failed stdout write that is not a closed pipe.
const WRITE_ERROR_STATUS: i32 = 1;

/// Write the whole output plus one newline.
fn print_stdout(text: &str) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.write_all(b"\n")?;
    out.flush()
}

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

fn main() {
    install_panic_hook();
    let args: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    let outcome = cli::parse(&args).and_then(|parsed| match parsed {
        cli::Parsed::Print(text) => Ok((text, 0)),
        cli::Parsed::Run(c) => commands::run(&c),
    });
    let code = match outcome {
        Ok((text, code)) => match print_stdout(&text) {
            Ok(()) => code,
            // A reader that went away (`brr prog | head -1`) is not an error.
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => code,
            Err(e) => {
                let reason = e
                    .raw_os_error()
                    .map(|n| Errno(n).text())
                    .unwrap_or_else(|| e.to_string());
                let _ = writeln!(std::io::stderr(), "brr: write error: {reason}");
                WRITE_ERROR_STATUS
            }
        },
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "{}", e.render());
            e.exit_code()
        }
    };
    std::process::exit(code);
}
