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

/// A listing written row by row; None when the command is not one.
fn write_listing(c: &cli::Cli) -> Option<i32> {
    let stdout = std::io::stdout().lock();
    let mut out = std::io::BufWriter::with_capacity(64 * 1024, stdout);
    let outcome = commands::write_listing(c, &mut out)?;
    Some(match outcome {
        Ok(None) => match out.write_all(b"\n").and_then(|()| out.flush()) {
            Ok(()) => 0,
            Err(e) => write_failed(&e, 0),
        },
        Ok(Some(e)) => write_failed(&e, 0),
        Err(e) => {
            // What was written before the error is kept, as for any output
            // cut short; the message says why it ends there.
            let _ = out.flush();
            let _ = writeln!(std::io::stderr(), "{}", e.render());
            e.exit_code()
        }
    })
}

fn main() {
    install_panic_hook();
    let args: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    let parsed = cli::parse(&args);
    if let Ok(cli::Parsed::Run(c)) = &parsed {
        if let Some(code) = write_listing(c) {
            std::process::exit(code);
        }
    }
    let outcome = parsed.and_then(|parsed| match parsed {
        cli::Parsed::Print(text) => Ok((text, 0)),
        cli::Parsed::Run(c) => commands::run(&c),
    });
    let code = match outcome {
        Ok((text, code)) => match print_stdout(&text) {
            Ok(()) => code,
            Err(e) => write_failed(&e, code),
        },
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "{}", e.render());
            e.exit_code()
        }
    };
    std::process::exit(code);
}
