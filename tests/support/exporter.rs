//! `brr exporter` started on a free port for a test, with the address it
//! serves on read from its first line. Included with `#[path]` because it
//! names `CARGO_BIN_EXE_brr`, which only integration tests have.
// Each test crate uses a different subset of these helpers.
#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};

/// A running exporter, killed when dropped.
pub(crate) struct Exporter {
    pub(crate) child: Child,
    pub(crate) addr: SocketAddr,
}

impl Exporter {
    /// `brr exporter --listen 127.0.0.1:0 EXTRA`, once it says where it
    /// serves.
    pub(crate) fn start(extra: &[&str]) -> Exporter {
        let mut args = vec!["exporter", "--listen", "127.0.0.1:0"];
        args.extend_from_slice(extra);
        Exporter::spawn(&args)
    }

    /// `brr ARGS`, which must start an exporter on a free port, once it
    /// says where it serves.
    pub(crate) fn spawn(args: &[&str]) -> Exporter {
        let mut child = Command::new(env!("CARGO_BIN_EXE_brr"))
            .args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("run brr exporter");
        let mut err = BufReader::new(child.stderr.take().expect("stderr"));
        let mut line = String::new();
        err.read_line(&mut line).expect("read stderr");
        let line = line.trim().replace("serving https://", "serving http://");
        let addr = line
            .strip_prefix("brr exporter: serving http://")
            .and_then(|r| r.strip_suffix("/metrics"))
            .unwrap_or_else(|| panic!("unexpected first line: {line:?}"))
            .parse()
            .expect("an address");
        // Keep draining stderr so the exporter never blocks on it.
        std::thread::spawn(move || std::io::copy(&mut err, &mut std::io::sink()));
        Exporter { child, addr }
    }

    pub(crate) fn pid(&self) -> u32 {
        self.child.id()
    }

    /// perf events the exporter has open now.
    pub(crate) fn perf_fds(&self) -> usize {
        std::fs::read_dir(format!("/proc/{}/fd", self.pid()))
            .expect("fd dir")
            .flatten()
            .filter(|e| {
                std::fs::read_link(e.path())
                    .is_ok_and(|l| l.to_string_lossy() == "anon_inode:[perf_event]")
            })
            .count()
    }
}

impl Drop for Exporter {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
