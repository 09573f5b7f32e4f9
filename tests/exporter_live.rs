//! Live tests of `brr exporter`: a real scrape checked by `promtool`, a real
//! Prometheus server scraping it, and the server under load and abuse.
//! Only loopback addresses are used.

// Test tooling: helpers outside #[test] functions fail the test by panicking,
// as the tests themselves do (clippy.toml only exempts #[test] code).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
// SIGINT and SIGTERM reach the child brr through libc::kill, which is unsafe.
#![allow(unsafe_code)]

#[path = "support/exporter.rs"]
mod exporter;
#[path = "support/prometheus.rs"]
mod prometheus;
mod support;

use prometheus::Prometheus;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use exporter::Exporter;
use support::SocketFilterFixture;

impl Exporter {
    /// Send `sig` and wait (bounded) for the exit status.
    fn stop(mut self, sig: i32) -> Option<i32> {
        // SAFETY: plain kill(2) on our own child.
        unsafe { libc::kill(self.child.id() as i32, sig) };
        let t = Instant::now();
        while t.elapsed() < Duration::from_secs(10) {
            if let Ok(Some(status)) = self.child.try_wait() {
                return status.code();
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        panic!("exporter did not stop within 10 s");
    }
}

/// One raw request; (status, body).
fn request(addr: SocketAddr, raw: &[u8]) -> (u16, String) {
    let mut s = TcpStream::connect(addr).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    s.write_all(raw).expect("send");
    let mut out = Vec::new();
    s.read_to_end(&mut out).expect("read response");
    let text = String::from_utf8(out).expect("utf-8 response");
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no status in {head:?}"));
    (status, body.to_string())
}

fn scrape(addr: SocketAddr) -> String {
    let (status, body) = request(addr, b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
    assert_eq!(status, 200, "{body}");
    body
}

/// The value of the sample `series` (its exact text up to the value).
fn sample(body: &str, series: &str) -> Option<f64> {
    body.lines()
        .find_map(|l| l.strip_prefix(series)?.strip_prefix(' '))
        .and_then(|v| v.parse().ok())
}

/// Every line a comment or `name{labels} value`, ending in a newline.
fn well_formed(body: &str) -> bool {
    body.ends_with('\n')
        && body.lines().all(|l| {
            if l.starts_with("# HELP ") || l.starts_with("# TYPE ") {
                return true;
            }
            let Some((series, value)) = l.rsplit_once(' ') else {
                return false;
            };
            let name = series.split('{').next().unwrap_or("");
            !name.is_empty()
                && name
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b':')
                && (!series.contains('{') || series.ends_with('}'))
                && value.parse::<f64>().is_ok()
        })
}

fn have(tool: &str) -> bool {
    Command::new(tool)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// A tool the test needs is missing: fail under BRR_REQUIRE_LIVE (CI
/// installs it), otherwise skip with the reason.
fn require(tool: &str) -> bool {
    if have(tool) {
        return true;
    }
    assert!(
        std::env::var_os(support::REQUIRE_LIVE_ENV).is_none(),
        "{tool} is not installed (Debian package prometheus)"
    );
    support::skip(format!("{tool} is not installed"));
    false
}

/// A `sleep` child that inherits a copy of `fd` (a dup without CLOEXEC,
/// closed here once the child has it), waited for until it has exec'd so
/// that an owner scan names it `sleep`.
fn child_holding(fd: BorrowedFd<'_>) -> Child {
    // SAFETY: dup of a live fd; the result is a fresh fd we own.
    let n = unsafe { libc::dup(fd.as_raw_fd()) };
    assert!(n >= 0, "dup: {}", std::io::Error::last_os_error());
    // SAFETY: `n` is a fresh fd owned by nothing else.
    let dup = unsafe { OwnedFd::from_raw_fd(n) };
    let child = Command::new("sleep")
        .arg("60")
        .stdin(Stdio::null())
        .spawn()
        .expect("spawn sleep");
    drop(dup);
    let comm = format!("/proc/{}/comm", child.id());
    assert!(
        support::wait_until(Duration::from_secs(5), || {
            std::fs::read_to_string(&comm).is_ok_and(|c| c.trim() == "sleep")
        }),
        "child did not exec"
    );
    child
}

/// The value of label `name` in one sample line (values here hold no `"`).
fn label<'a>(line: &'a str, name: &str) -> Option<&'a str> {
    let start = line.find(&format!(",{name}=\""))? + name.len() + 3;
    let rest = line.get(start..)?;
    rest.get(..rest.find('"')?)
}

#[test]
fn scrape_has_the_fixture_and_passes_promtool() {
    if !support::live() || !require("promtool") {
        return;
    }
    let fx = SocketFilterFixture::load().expect("load fixture");
    // Before the exporter starts: its first owner scan serves the next 10 s.
    let mut holder = child_holding(fx.prog.fd());
    let exp = Exporter::start(&[]);
    fx.prog.test_run(321).expect("test run");
    let body = scrape(exp.addr);
    let id = fx.prog.id;
    let info = body
        .lines()
        .find(|l| l.starts_with(&format!("brr_prog_info{{id=\"{id}\",")))
        .unwrap_or_else(|| panic!("no info series for {id}"));
    assert!(
        info.contains(&format!("tag=\"{}\"", fx.prog.tag_hex())),
        "{info}"
    );
    assert!(info.contains("type=\"socket_filter\""), "{info}");
    assert!(
        info.contains(&format!("full_name=\"{}\"", SocketFilterFixture::FUNC_NAME)),
        "{info}"
    );
    // No holder names on the info series: one owner series per holder.
    assert!(!info.contains("owners="), "{info}");
    // The child and this test process hold the program; the exporter
    // leaves itself out.
    let owner_series: Vec<&str> = body
        .lines()
        .filter(|l| l.starts_with(&format!("brr_prog_owner{{id=\"{id}\",")))
        .collect();
    let pids: Vec<&str> = owner_series
        .iter()
        .filter_map(|l| label(l, "pid"))
        .collect();
    let holder_pid = holder.id().to_string();
    let me = std::process::id().to_string();
    assert!(pids.contains(&holder_pid.as_str()), "{owner_series:?}");
    assert!(pids.contains(&me.as_str()), "{owner_series:?}");
    assert!(!pids.contains(&exp.pid().to_string().as_str()));
    let sleeper = owner_series
        .iter()
        .find(|l| label(l, "pid") == Some(holder_pid.as_str()))
        .unwrap();
    assert_eq!(label(sleeper, "comm"), Some("sleep"), "{sleeper}");
    assert!(sleeper.ends_with("\"} 1"), "{sleeper}");
    let _ = holder.kill();
    let _ = holder.wait();
    assert_eq!(
        sample(&body, &format!("brr_prog_run_count_total{{id=\"{id}\"}}")),
        Some(321.0)
    );
    assert!(sample(
        &body,
        &format!("brr_prog_run_time_seconds_total{{id=\"{id}\"}}")
    )
    .is_some_and(|s| s > 0.0));
    assert!(
        sample(&body, &format!("brr_prog_memlock_bytes{{id=\"{id}\"}}")).is_some_and(|b| b > 0.0)
    );
    assert_eq!(sample(&body, "brr_stats_enabled"), Some(1.0));
    assert!(sample(&body, "process_resident_memory_bytes").is_some_and(|b| b > 0.0));
    assert!(well_formed(&body));

    let mut check = Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run promtool");
    check
        .stdin
        .take()
        .expect("stdin")
        .write_all(body.as_bytes())
        .expect("feed promtool");
    let o = check.wait_with_output().expect("promtool");
    assert!(
        o.status.success(),
        "promtool: {}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(exp.stop(libc::SIGTERM), Some(0));
}

#[test]
fn no_stats_serves_everything_but_the_run_counters() {
    if !support::live() {
        return;
    }
    let fx = SocketFilterFixture::load().expect("load fixture");
    let exp = Exporter::start(&["--no-stats"]);
    let body = scrape(exp.addr);
    let id = fx.prog.id;
    assert!(!body.contains("brr_prog_run_count_total"));
    assert!(!body.contains("brr_prog_run_time_seconds_total"));
    assert!(body.contains(&format!("brr_prog_info{{id=\"{id}\",")));
    assert!(sample(&body, &format!("brr_prog_xlated_bytes{{id=\"{id}\"}}")).is_some());
    assert_eq!(sample(&body, "brr_stats_enabled"), Some(0.0));
    // The exporter holds no statistics fd.
    let holds_stats = std::fs::read_dir(format!("/proc/{}/fd", exp.pid()))
        .expect("fd dir")
        .flatten()
        .any(|e| {
            std::fs::read_link(e.path())
                .is_ok_and(|l| l.to_string_lossy() == "anon_inode:bpf-stats")
        });
    assert!(!holds_stats);
    assert_eq!(exp.stop(libc::SIGINT), Some(0));
}

#[test]
fn routes_and_malformed_requests() {
    if !support::live() {
        return;
    }
    let exp = Exporter::start(&[]);
    let (status, body) = request(exp.addr, b"GET / HTTP/1.1\r\n\r\n");
    assert_eq!(status, 200);
    assert!(body.contains("<a href=\"/metrics\">"));
    let huge = format!(
        "GET /metrics HTTP/1.1\r\nX: {}\r\n\r\n",
        "a".repeat(100_000)
    );
    let many = format!("GET /metrics HTTP/1.1\r\n{}\r\n", "X: y\r\n".repeat(1000));
    let long = format!("GET /{} HTTP/1.1\r\n\r\n", "m".repeat(100_000));
    let cases: [(&[u8], u16); 7] = [
        (b"GET /nope HTTP/1.1\r\n\r\n", 404),
        (b"POST /metrics HTTP/1.1\r\nContent-Length: 0\r\n\r\n", 405),
        (b"DELETE / HTTP/1.1\r\n\r\n", 405),
        (b"\x16\x03\x01\x00\xa5\x01\x00\x00\xa1\x03\x03\r\n\r\n", 400),
        (huge.as_bytes(), 431),
        (many.as_bytes(), 431),
        (long.as_bytes(), 414),
    ];
    for (raw, want) in cases {
        assert_eq!(request(exp.addr, raw).0, want);
    }
    let put = raw_response(exp.addr, b"PUT /metrics HTTP/1.1\r\n\r\n");
    assert!(put.contains("\r\nAllow: GET, HEAD\r\n"), "{put}");
    // HEAD: the status and headers of GET, and no body.
    for path in ["/", "/nope", "/debug/pprof/profile"] {
        let get = raw_response(exp.addr, format!("GET {path} HTTP/1.1\r\n\r\n").as_bytes());
        let head = raw_response(exp.addr, format!("HEAD {path} HTTP/1.1\r\n\r\n").as_bytes());
        let (get_head, body) = get.split_once("\r\n\r\n").unwrap();
        assert!(!body.is_empty());
        assert_eq!(head, format!("{get_head}\r\n\r\n"), "HEAD {path}");
    }
    // A scrape's length varies from one scrape to the next; the rest not.
    let head = raw_response(exp.addr, b"HEAD /metrics HTTP/1.1\r\n\r\n");
    let (lines, body) = head.split_once("\r\n\r\n").unwrap();
    assert_eq!(body, "", "no body");
    let lines: Vec<&str> = lines.split("\r\n").collect();
    assert_eq!(lines[0], "HTTP/1.1 200 OK");
    assert!(lines.contains(&"Content-Type: text/plain; version=0.0.4; charset=utf-8"));
    let length: usize = lines
        .iter()
        .find_map(|l| l.strip_prefix("Content-Length: "))
        .and_then(|n| n.parse().ok())
        .expect("Content-Length");
    // A whole scrape's worth (this host's own programs come and go).
    assert!(length > 500, "HEAD says {length} bytes");
    assert_eq!(exp.stop(libc::SIGTERM), Some(0));
}

/// The whole response to one raw request, as text.
fn raw_response(addr: SocketAddr, raw: &[u8]) -> String {
    let mut s = TcpStream::connect(addr).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    s.write_all(raw).expect("send");
    let mut out = String::new();
    s.read_to_string(&mut out).expect("read response");
    out
}

fn rss_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .expect("status")
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches(" kB").trim().parse().ok())
        .expect("VmRSS")
}

fn fd_count(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .expect("fd dir")
        .count()
}

/// Hostile clients, each on its own thread until `stop`: stalled requests,
/// half-open connections, garbage and wrong methods.
fn abuse(addr: SocketAddr, stop: &std::sync::atomic::AtomicBool) {
    use std::sync::atomic::Ordering;
    let mut round = 0u32;
    while !stop.load(Ordering::SeqCst) {
        round += 1;
        let Ok(mut s) = TcpStream::connect(addr) else {
            continue;
        };
        let _ = match round % 4 {
            // Stalled mid-request: held open until the server times it out.
            0 => s.write_all(b"GET /metrics HTTP/1.1\r\nHost: "),
            // Half-open: the client closes its sending side at once.
            1 => s.shutdown(std::net::Shutdown::Write),
            2 => s.write_all(&[0xff, 0x00, 0x13, 0x37, b'\n', b'\n']),
            _ => s.write_all(b"PUT /metrics HTTP/1.1\r\n\r\n"),
        };
        if round.is_multiple_of(4) {
            // Hold the stalled connection a while without reading.
            std::thread::sleep(Duration::from_millis(300));
        } else {
            let mut sink = Vec::new();
            let _ = s.read_to_end(&mut sink);
        }
    }
}

#[test]
fn thousand_scrapes_under_churn_and_abuse() {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    if !support::live() {
        return;
    }
    let exp = Exporter::start(&[]);
    let stop = Arc::new(AtomicBool::new(false));
    let churn = {
        let stop = Arc::clone(&stop);
        std::thread::spawn(move || {
            let mut loaded = 0u32;
            while !stop.load(Ordering::SeqCst) {
                let fx = SocketFilterFixture::load().expect("load fixture");
                fx.prog.test_run(3).expect("test run");
                drop(fx);
                loaded += 1;
            }
            loaded
        })
    };
    let abusers: Vec<_> = (0..4)
        .map(|_| {
            let stop = Arc::clone(&stop);
            let addr = exp.addr;
            std::thread::spawn(move || abuse(addr, &stop))
        })
        .collect();
    let pid = exp.pid();
    let mut slowest = Duration::ZERO;
    let mut baseline = None;
    for i in 0..1000 {
        let t = Instant::now();
        let body = scrape(exp.addr);
        slowest = slowest.max(t.elapsed());
        assert!(well_formed(&body), "scrape {i} malformed:\n{body}");
        assert_eq!(sample(&body, "brr_stats_enabled"), Some(1.0));
        if i == 100 {
            baseline = Some((rss_kib(pid), fd_count(pid)));
        }
    }
    stop.store(true, Ordering::SeqCst);
    let loaded = churn.join().expect("churn thread");
    for a in abusers {
        a.join().expect("abuser");
    }
    // Stalled connections end within the server's request deadline.
    std::thread::sleep(Duration::from_secs(1));
    let (rss0, fds0) = baseline.expect("baseline");
    let (rss1, fds1) = (rss_kib(pid), fd_count(pid));
    eprintln!(
        "1000 scrapes: slowest {slowest:?}; {loaded} fixture loads; RSS {rss0} -> {rss1} KiB; fds {fds0} -> {fds1}"
    );
    assert!(loaded > 0);
    // A scrape never waited for a stalled client (they hold 5 s each).
    assert!(
        slowest < Duration::from_secs(3),
        "slowest scrape {slowest:?}"
    );
    assert!(rss1 <= rss0 + 4096, "RSS grew {rss0} -> {rss1} KiB");
    // The stalled clients still open at the baseline may be gone by now.
    assert!(fds1 <= fds0, "fds grew {fds0} -> {fds1}");
    assert_eq!(exp.stop(libc::SIGTERM), Some(0));
}

#[test]
fn a_real_prometheus_sees_exactly_the_runs_made() {
    if !support::live() || !require("prometheus") {
        return;
    }
    let fx = SocketFilterFixture::load().expect("load fixture");
    let exp = Exporter::start(&[]);
    let prom = Prometheus::scraping("brr-prom", exp.addr);
    const RUNS: u32 = 4_242;
    fx.prog.test_run(RUNS).expect("test run");
    let q = format!("brr_prog_run_count_total{{id=\"{}\"}}", fx.prog.id);
    let t = Instant::now();
    let mut seen = None;
    while t.elapsed() < Duration::from_secs(60) {
        seen = prom.query(&q);
        if seen == Some(f64::from(RUNS)) {
            break;
        }
        std::thread::sleep(Duration::from_millis(500));
    }
    drop(prom);
    assert_eq!(seen, Some(f64::from(RUNS)), "prometheus saw {seen:?}");
    assert_eq!(exp.stop(libc::SIGTERM), Some(0));
}

/// The distinct series matching `selector` that `prometheus` on `port`
/// stored between Unix times `start` and `end`.
fn series(port: u16, selector: &str, start: f64, end: f64) -> Vec<serde_json::Value> {
    let encoded: String = selector
        .bytes()
        .map(|b| match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'_' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect();
    let raw = format!(
        "GET /api/v1/series?match%5B%5D={encoded}&start={start:.3}&end={end:.3} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n"
    );
    let addr: SocketAddr = ([127, 0, 0, 1], port).into();
    let out = raw_response(addr, raw.as_bytes());
    let body = out.split_once("\r\n\r\n").map_or("", |(_, b)| b);
    let v: serde_json::Value =
        serde_json::from_str(body).unwrap_or_else(|e| panic!("series answer {body:?}: {e}"));
    assert_eq!(v["status"], "success", "{v}");
    v["data"].as_array().cloned().unwrap_or_default()
}

fn unix_now() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs_f64()
}

/// A real Prometheus scraping every second while programs load, gain and
/// lose holders and unload stores exactly one `brr_prog_info` series per
/// program ID over the program's life; the holders come and go as their
/// own `brr_prog_owner` series.
#[test]
fn a_real_prometheus_sees_one_info_series_per_program_over_its_life() {
    if !support::live() || !require("prometheus") {
        return;
    }
    let exp = Exporter::start(&[]);
    let prom = Prometheus::scraping("brr-prom-ids", exp.addr);
    let port = prom.port;
    let up = support::wait_until(Duration::from_secs(60), || {
        prom.query("up{job=\"brr\"}") == Some(1.0)
    });
    let start = unix_now();
    let mut ids = Vec::new();
    let mut holders = Vec::new();
    if up {
        // Loaded under the exporter: its first scrape already has its
        // holder (this process), ...
        let fx = SocketFilterFixture::load().expect("load fixture");
        ids.push(fx.prog.id);
        std::thread::sleep(Duration::from_millis(2500));
        // ... then a second holder comes for longer than the owner scan's
        // 10 s refresh and goes, ...
        let mut holder = child_holding(fx.prog.fd());
        holders.push(holder.id());
        std::thread::sleep(Duration::from_secs(11));
        let _ = holder.kill();
        let _ = holder.wait();
        std::thread::sleep(Duration::from_millis(2500));
        // ... and it unloads.
        drop(fx);
        // Programs that live about two and one scrape intervals.
        for ms in [2000, 1200] {
            let brief = SocketFilterFixture::load().expect("load fixture");
            ids.push(brief.prog.id);
            std::thread::sleep(Duration::from_millis(ms));
            drop(brief);
        }
        std::thread::sleep(Duration::from_secs(3));
    }
    let end = unix_now();
    let info: Vec<usize> = ids
        .iter()
        .map(|id| series(port, &format!("brr_prog_info{{id=\"{id}\"}}"), start, end).len())
        .collect();
    let me = std::process::id();
    let owners: Vec<(usize, usize)> = ids
        .iter()
        .zip(holders.iter().map(Some).chain(std::iter::repeat(None)))
        .map(|(id, holder)| {
            let mine = series(
                port,
                &format!("brr_prog_owner{{id=\"{id}\",pid=\"{me}\"}}"),
                start,
                end,
            );
            let theirs = holder.map_or(0, |h| {
                series(
                    port,
                    &format!("brr_prog_owner{{id=\"{id}\",pid=\"{h}\"}}"),
                    start,
                    end,
                )
                .len()
            });
            (mine.len(), theirs)
        })
        .collect();
    drop(prom);
    assert!(up, "prometheus never scraped the exporter");
    assert_eq!(
        info,
        vec![1; ids.len()],
        "brr_prog_info series per id {ids:?}"
    );
    // (this process, the second holder): one series each for the program
    // that lived long enough; a brief one loaded within 2 s of the last
    // forced owner scan may be served before a scan sees its holder.
    assert_eq!(owners[0], (1, 1), "owner series of {}", ids[0]);
    assert!(
        owners.iter().all(|&(mine, _)| mine <= 1),
        "owner series per id {ids:?}: {owners:?}"
    );
    assert_eq!(exp.stop(libc::SIGTERM), Some(0));
}

/// A program loaded under a running exporter is first served with its
/// holders: an object never scanned for forces an owner scan, although
/// the last one is younger than the 10 s refresh (but older than the 2 s
/// that bound how often that can happen).
#[test]
fn a_new_program_is_first_served_with_its_holders() {
    if !support::live() {
        return;
    }
    let exp = Exporter::start(&[]);
    // The exporter scanned when it started; wait out the 2 s gap.
    std::thread::sleep(Duration::from_millis(2200));
    let fx = SocketFilterFixture::load().expect("load fixture");
    let body = scrape(exp.addr);
    let id = fx.prog.id;
    assert!(body.contains(&format!("brr_prog_info{{id=\"{id}\",")));
    let me = format!(
        "brr_prog_owner{{id=\"{id}\",pid=\"{}\",",
        std::process::id()
    );
    assert!(
        body.lines().any(|l| l.starts_with(&me)),
        "first served without its holder:\n{}",
        body.lines()
            .filter(|l| l.contains(&format!("id=\"{id}\"")))
            .collect::<Vec<_>>()
            .join("\n")
    );
    assert_eq!(exp.stop(libc::SIGTERM), Some(0));
}
