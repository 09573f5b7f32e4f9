//! brr run with its readiness trace on (`BRR_TRACE_READY=1`), so that a
//! test acts on brr's state (a window or a capture has started) instead of
//! guessing with sleeps.

use std::io::{BufRead, BufReader, Read};
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// How long brr may take to reach a readiness point: far above any normal
/// start-up, so only a hang or a missing trace line trips it.
pub(crate) const READY_TIMEOUT: Duration = Duration::from_secs(60);

/// brr started with `BRR_TRACE_READY=1`, its stdout and stderr read on
/// threads so that the test can wait for a readiness line and still see
/// everything else brr wrote.
pub(crate) struct Traced {
    child: Child,
    lines: mpsc::Receiver<String>,
    stderr: Vec<String>,
    stdout: std::thread::JoinHandle<Vec<u8>>,
}

impl Traced {
    pub(crate) fn spawn(args: &[&str], env: &[(&str, &str)]) -> Traced {
        let mut child = Command::new(env!("CARGO_BIN_EXE_brr"))
            .args(args)
            .envs(env.iter().copied())
            .env("BRR_TRACE_READY", "1")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start brr");
        let mut out = child.stdout.take().expect("piped stdout");
        let stdout = std::thread::spawn(move || {
            let mut buf = Vec::new();
            let _ = out.read_to_end(&mut buf);
            buf
        });
        let err = BufReader::new(child.stderr.take().expect("piped stderr"));
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in err.lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Traced {
            child,
            lines,
            stderr: Vec::new(),
            stdout,
        }
    }

    pub(crate) fn pid(&self) -> i32 {
        self.child.id() as i32
    }

    /// Block until brr reports `brr-trace: ready <point>`.
    pub(crate) fn wait_ready(&mut self, point: &str) {
        let want = format!("brr-trace: ready {point}");
        let deadline = Instant::now() + READY_TIMEOUT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    let found = line == want;
                    self.stderr.push(line);
                    if found {
                        return;
                    }
                }
                Err(e) => {
                    let _ = self.child.kill();
                    let _ = self.child.wait();
                    panic!(
                        "brr did not report {want:?} within {READY_TIMEOUT:?} ({}); stderr so far:\n{}",
                        match e {
                            mpsc::RecvTimeoutError::Timeout => "timed out",
                            mpsc::RecvTimeoutError::Disconnected => "stderr closed",
                        },
                        self.stderr.join("\n")
                    );
                }
            }
        }
    }

    /// Wait for brr to exit. The returned stderr holds every line except
    /// the `brr-trace:` ones, which come back separately.
    pub(crate) fn finish(mut self) -> (Output, Vec<String>) {
        let status = self.child.wait().expect("brr finished");
        self.stderr.extend(self.lines.iter());
        let stdout = self.stdout.join().expect("stdout reader");
        let (trace, rest): (Vec<String>, Vec<String>) = self
            .stderr
            .into_iter()
            .partition(|l| l.starts_with("brr-trace: "));
        let stderr = rest.iter().map(|l| format!("{l}\n")).collect::<String>();
        let o = Output {
            status,
            stdout,
            stderr: stderr.into_bytes(),
        };
        (o, trace)
    }
}
