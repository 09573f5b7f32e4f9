//! Live tests of `brr exporter --serve-profiles` (root, real kernel): `go
//! tool pprof` fetches a profile of fixture programs from
//! `/debug/pprof/profile`, bad `seconds` are refused, one capture runs at a
//! time, `/metrics` stays fast during one, SIGTERM ends one at once, and
//! nothing samples when profiles are not asked for.

// Test tooling: helpers outside #[test] functions fail the test by panicking,
// as the tests themselves do (clippy.toml only exempts #[test] code).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
// SIGTERM reaches the child brr through libc::kill, which is unsafe.
#![allow(unsafe_code)]

#[path = "support/exporter.rs"]
mod exporter;
#[path = "support/pprof.rs"]
mod pprof;
#[path = "support/run.rs"]
mod run;
mod support;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use exporter::Exporter;
use run::serial;
use support::{go_available, HelperFixture, HotFixture};

const PATH: &str = "/debug/pprof/profile";

/// An answer: status, headers (lowercase names) and body.
struct Answer {
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Answer {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

fn request(addr: SocketAddr, method: &str, target: &str) -> Answer {
    let mut s = TcpStream::connect(addr).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(120))).unwrap();
    write!(s, "{method} {target} HTTP/1.1\r\nHost: test\r\n\r\n").expect("send");
    let mut out = Vec::new();
    s.read_to_end(&mut out).expect("read response");
    let split = out
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .unwrap_or_else(|| panic!("no header end in {:?}", String::from_utf8_lossy(&out)));
    let head = String::from_utf8(out[..split].to_vec()).expect("ASCII head");
    let mut lines = head.split("\r\n");
    let status = lines
        .next()
        .and_then(|l| l.split(' ').nth(1))
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no status in {head:?}"));
    let headers = lines
        .filter_map(|l| l.split_once(": "))
        .map(|(n, v)| (n.to_ascii_lowercase(), v.to_string()))
        .collect();
    Answer {
        status,
        headers,
        body: out[split + 4..].to_vec(),
    }
}

/// Poll `cond` every 20 ms for up to `limit`.
fn within(limit: Duration, mut cond: impl FnMut() -> bool) -> bool {
    let t = Instant::now();
    while t.elapsed() < limit {
        if cond() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

/// Send `sig` and wait (bounded) for the exit status and how long it took.
fn stop(mut exp: Exporter, sig: i32) -> (Option<i32>, Duration) {
    // SAFETY: plain kill(2) on our own child.
    unsafe { libc::kill(exp.child.id() as i32, sig) };
    let t = Instant::now();
    while t.elapsed() < Duration::from_secs(20) {
        if let Ok(Some(status)) = exp.child.try_wait() {
            return (status.code(), t.elapsed());
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    panic!("exporter did not stop within 20 s");
}

/// The most sampled leaf line of a program's own code: (file, line).
fn top_line(samples: &[&pprof::Sample], file: &str) -> Option<(String, i64)> {
    let mut by_line: std::collections::BTreeMap<i64, i64> = Default::default();
    for s in samples {
        if let Some(f) = s.frames.first().filter(|f| f.file == file) {
            *by_line.entry(f.line).or_default() += s.count;
        }
    }
    by_line
        .into_iter()
        .max_by_key(|&(_, n)| n)
        .map(|(line, _)| (file.to_string(), line))
}

#[test]
fn go_tool_pprof_fetches_source_lines_with_helpers_under_their_call() {
    if !support::live() || !go_available() {
        return;
    }
    let _g = serial();
    let hot = HotFixture::load().expect("load hot fixture");
    let helper = HelperFixture::load().expect("load helper fixture");
    // Both run for longer than go's fetch and the capture's start-up.
    let loads = [
        hot.spawn_load(Duration::from_secs(8)),
        helper.spawn_load(Duration::from_secs(8)),
    ];
    // A higher rate than the default only for enough samples on a busy
    // 2-CPU host within 3 s.
    let exp = Exporter::start(&["--serve-profiles", "--profile-hz", "997"]);
    let url = format!("http://{}{PATH}", exp.addr);
    let dir = std::env::temp_dir().join(format!("brr-pprof-http-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let o = Command::new("go")
        .args(["tool", "pprof", "-proto", "-seconds", "3", &url])
        .env("HOME", &dir)
        .env("PPROF_TMPDIR", &dir)
        .stdin(Stdio::null())
        .output()
        .expect("run go tool pprof");
    for l in loads {
        l.join().expect("load thread");
    }
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        o.status.success(),
        "go tool pprof failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let p = pprof::decode(&o.stdout);
    assert_eq!(p.period, 1_003_009, "1e9 / 997 ns per sample");
    assert!(
        (3_000_000_000..5_000_000_000).contains(&p.duration_nanos),
        "a capture of the 3 s asked for: {} ns",
        p.duration_nanos
    );

    // The hot fixture: its hot line is its top line, under its function.
    let mine: Vec<&pprof::Sample> = p.of_program(hot.prog.id).collect();
    let n: i64 = mine.iter().map(|s| s.count).sum();
    assert!(n >= 100, "hot fixture samples: {n}");
    assert_eq!(
        top_line(&mine, HotFixture::FILE),
        Some((
            HotFixture::FILE.to_string(),
            i64::from(HotFixture::HOT_LINE)
        ))
    );
    let leaf = &mine.iter().max_by_key(|s| s.count).unwrap().frames[0];
    assert_eq!(leaf.function, HotFixture::FUNC_NAME);

    // The helper fixture: kernel frames sit under the line that calls the
    // helper (the only line that calls one), and bpf_ktime_get_ns is among
    // them.
    let calls: Vec<&pprof::Sample> = p.of_program(helper.prog.id).collect();
    let under: Vec<&&pprof::Sample> = calls.iter().filter(|s| s.frames.len() > 1).collect();
    let n_under: i64 = under.iter().map(|s| s.count).sum();
    assert!(
        n_under >= 50,
        "samples in the helper and the kernel: {n_under}"
    );
    let mut on_line = 0;
    for s in &under {
        let caller = s
            .frames
            .iter()
            .find(|f| f.function == HelperFixture::FUNC_NAME)
            .unwrap_or_else(|| panic!("the program above the kernel frames: {s:?}"));
        assert_ne!(s.frames[0].function, HelperFixture::FUNC_NAME, "{s:?}");
        if caller.file == HelperFixture::FILE {
            assert_eq!(caller.line, i64::from(HelperFixture::HOT_LINE), "{s:?}");
            on_line += s.count;
        }
    }
    assert!(
        on_line * 10 >= n_under * 9,
        "{on_line} of {n_under} under the calling line"
    );
    assert!(
        under
            .iter()
            .any(|s| s.frames.iter().any(|f| f.function == "bpf_ktime_get_ns")),
        "bpf_ktime_get_ns sampled"
    );
    // Every sample names its task and program.
    for s in &p.samples {
        assert!(s.nums.contains_key("pid") && s.labels.contains_key("prog_tag"));
    }
    let (code, _) = stop(exp, libc::SIGTERM);
    assert_eq!(code, Some(0));
}

#[test]
fn bad_seconds_one_capture_at_a_time_fast_metrics_and_sigterm() {
    if !support::live() {
        return;
    }
    let _g = serial();
    let exp = Exporter::start(&["--serve-profiles"]);
    let addr = exp.addr;
    for bad in ["0", "61", "-1", "abc", "1e3", ""] {
        let a = request(addr, "GET", &format!("{PATH}?seconds={bad}"));
        assert_eq!(a.status, 400, "seconds={bad}");
        assert_eq!(
            String::from_utf8_lossy(&a.body),
            "seconds must be a whole number from 1 to 60 (--max-profile-seconds)\n"
        );
    }
    assert_eq!(exp.perf_fds(), 0, "nothing samples between requests");

    // A 4 s capture; while it runs a second request gets 429 and a scrape
    // is answered as usual.
    let first = std::thread::spawn(move || request(addr, "GET", &format!("{PATH}?seconds=4")));
    assert!(
        within(Duration::from_secs(10), || request(addr, "HEAD", PATH)
            .status
            == 429),
        "the capture started"
    );
    let busy = request(addr, "GET", &format!("{PATH}?seconds=1"));
    assert_eq!(busy.status, 429);
    let after: u64 = busy
        .header("retry-after")
        .and_then(|v| v.parse().ok())
        .expect("Retry-After");
    assert!((1..=6).contains(&after), "Retry-After: {after}");
    assert!(
        within(Duration::from_secs(10), || exp.perf_fds() > 0),
        "sampling"
    );
    let t = Instant::now();
    let scrape = request(addr, "GET", "/metrics");
    let scrape_time = t.elapsed();
    assert_eq!(scrape.status, 200);
    assert!(String::from_utf8_lossy(&scrape.body).contains("brr_stats_enabled 1\n"));
    eprintln!("a scrape during a capture took {scrape_time:?}");
    assert!(
        scrape_time < Duration::from_secs(2),
        "scrape during a capture: {scrape_time:?}"
    );
    let done = first.join().expect("first request");
    assert_eq!(done.status, 200);
    assert_eq!(
        done.header("content-type"),
        Some("application/octet-stream")
    );
    assert_eq!(
        done.header("content-length"),
        Some(done.body.len().to_string().as_str())
    );
    let p = pprof::decode(&done.body);
    assert!(p.duration_nanos >= 3_900_000_000, "{}", p.duration_nanos);
    assert_eq!(p.period, 10_101_010, "99 Hz by default");
    assert!(
        within(Duration::from_secs(5), || exp.perf_fds() == 0),
        "the events are closed after the capture"
    );
    // Free again.
    assert_eq!(request(addr, "HEAD", PATH).status, 200);

    // SIGTERM during a 60 s capture: exit 0 at once.
    let hung = std::thread::spawn(move || {
        let mut s = TcpStream::connect(addr).expect("connect");
        let _ = write!(s, "GET {PATH}?seconds=60 HTTP/1.1\r\n\r\n");
        let mut sink = Vec::new();
        let _ = s.read_to_end(&mut sink);
    });
    assert!(
        within(Duration::from_secs(10), || exp.perf_fds() > 0),
        "the long capture started"
    );
    let (code, took) = stop(exp, libc::SIGTERM);
    eprintln!("SIGTERM during a capture: exit {code:?} after {took:?}");
    assert_eq!(code, Some(0));
    assert!(took < Duration::from_secs(3), "exit took {took:?}");
    hung.join().expect("client thread");
}

#[test]
fn without_serve_profiles_the_path_is_404_and_nothing_samples() {
    if !support::live() {
        return;
    }
    let exp = Exporter::start(&[]);
    for method in ["GET", "HEAD"] {
        let a = request(exp.addr, method, &format!("{PATH}?seconds=1"));
        assert_eq!(a.status, 404, "{method}");
    }
    let page = request(exp.addr, "GET", "/");
    assert!(!String::from_utf8_lossy(&page.body).contains("pprof"));
    assert_eq!(exp.perf_fds(), 0);
    let (code, _) = stop(exp, libc::SIGINT);
    assert_eq!(code, Some(0));
}
