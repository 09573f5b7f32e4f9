//! A private Prometheus server for live tests: started on a free loopback
//! port with a configuration the test writes, asked through its HTTP API,
//! stopped and its directory removed on drop. The distribution's service
//! is never touched.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// Whether `prometheus` runs here: when it does not, the test fails under
/// `BRR_REQUIRE_LIVE=1` and skips with a printed reason otherwise.
pub(crate) fn require() -> bool {
    if Command::new("prometheus")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
    {
        return true;
    }
    assert!(
        std::env::var_os(crate::support::REQUIRE_LIVE_ENV).is_none(),
        "prometheus is not installed (Debian package prometheus)"
    );
    crate::support::skip("prometheus is not installed");
    false
}

/// A loopback port nobody listens on now.
pub(crate) fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

/// `s` percent-encoded for a query string.
pub(crate) fn encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'_' | b'-' | b'.' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

pub(crate) struct Prometheus {
    child: Child,
    dir: PathBuf,
    pub(crate) port: u16,
}

impl Prometheus {
    /// Starts a server in a fresh temporary directory named after `name`;
    /// `config` gets that directory (to write rule files or certificates
    /// into) and returns the `prometheus.yml` text.
    pub(crate) fn start(name: &str, config: impl FnOnce(&Path) -> String) -> Prometheus {
        let dir = std::env::temp_dir().join(format!("{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("temp dir");
        let file = dir.join("prometheus.yml");
        std::fs::write(&file, config(&dir)).expect("config");
        let port = free_port();
        let child = Command::new("prometheus")
            .arg(format!("--config.file={}", file.display()))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.join("data").display()
            ))
            .arg(format!("--web.listen-address=127.0.0.1:{port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("run prometheus");
        Prometheus { child, dir, port }
    }

    /// One scrape job `brr` of `target` every second, the usual test setup.
    pub(crate) fn scraping(name: &str, target: SocketAddr) -> Prometheus {
        Prometheus::start(name, |_| {
            format!(
                "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nscrape_configs:\n  - job_name: brr\n    static_configs:\n      - targets: ['{target}']\n"
            )
        })
    }

    pub(crate) fn addr(&self) -> SocketAddr {
        ([127, 0, 0, 1], self.port).into()
    }

    /// GET `path` with `params` (percent-encoded here) from the HTTP API,
    /// as JSON; None while the server is not up or answers no JSON.
    pub(crate) fn api(&self, path: &str, params: &[(&str, &str)]) -> Option<serde_json::Value> {
        let query: Vec<String> = params
            .iter()
            .map(|(k, v)| format!("{k}={}", encode(v)))
            .collect();
        let raw = format!(
            "GET {path}?{} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n",
            query.join("&")
        );
        let mut s = TcpStream::connect(self.addr()).ok()?;
        s.set_read_timeout(Some(Duration::from_secs(10))).ok()?;
        s.write_all(raw.as_bytes()).ok()?;
        let mut out = String::new();
        s.read_to_string(&mut out).ok()?;
        serde_json::from_str(out.split_once("\r\n\r\n")?.1).ok()
    }

    /// An instant query's first sample's value.
    pub(crate) fn query(&self, q: &str) -> Option<f64> {
        let v = self.api("/api/v1/query", &[("query", q)])?;
        v["data"]["result"][0]["value"][1].as_str()?.parse().ok()
    }
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
