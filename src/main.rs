//! brr: ps and top for loaded Linux eBPF objects.

use std::io::Write;

use brr::{cli, commands};

/// Write the whole output plus one newline; a closed pipe ends quietly.
fn print_stdout(text: &str) {
    let mut out = std::io::stdout().lock();
    let _ = out
        .write_all(text.as_bytes())
        .and_then(|_| out.write_all(b"\n"))
        .and_then(|_| out.flush());
}

fn main() {
    let args: Vec<String> = std::env::args_os()
        .skip(1)
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let code = match cli::parse(&args).and_then(|parsed| match parsed {
        cli::Parsed::Print(text) => Ok((text, 0)),
        cli::Parsed::Run(c) => commands::run(&c),
    }) {
        Ok((text, code)) => {
            print_stdout(&text);
            code
        }
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "{}", e.render());
            e.exit_code()
        }
    };
    std::process::exit(code);
}
