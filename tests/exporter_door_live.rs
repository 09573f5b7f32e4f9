//! Live tests of `brr exporter --web-config` (root, real kernel): a real
//! Prometheus scrapes over TLS with basic auth and a wrong password is
//! refused, curl with and without a client certificate against mutual TLS,
//! a refused profile request starts no capture, gzip on `/metrics`, and a
//! bad web config stops the start. Certificates are made by `openssl` in a
//! temporary directory for each run.

// Test tooling: helpers outside #[test] functions fail the test by panicking,
// as the tests themselves do (clippy.toml only exempts #[test] code).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "support/exporter.rs"]
mod exporter;
#[path = "support/prometheus.rs"]
mod prometheus;
mod support;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use exporter::Exporter;
use prometheus::Prometheus;
use support::SocketFilterFixture;

const PASSWORD: &str = "correct horse";

/// A fresh directory, removed when dropped.
struct Dir(PathBuf);

impl Dir {
    fn new(name: &str) -> Dir {
        let d = std::env::temp_dir().join(format!("brr-door-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).expect("temp dir");
        Dir(d)
    }

    fn path(&self, name: &str) -> String {
        self.0.join(name).display().to_string()
    }

    fn write(&self, name: &str, text: &str) -> String {
        std::fs::write(self.0.join(name), text).expect("write");
        self.path(name)
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn tool(name: &str) -> bool {
    let there = Command::new(name)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
        || Command::new(name)
            .arg("version")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
    if !there {
        assert!(
            std::env::var_os(support::REQUIRE_LIVE_ENV).is_none(),
            "{name} is not installed"
        );
        support::skip(format!("{name} is not installed"));
    }
    there
}

fn openssl(dir: &Dir, args: &[&str]) {
    let out = Command::new("openssl")
        .args(args)
        .current_dir(&dir.0)
        .output()
        .expect("run openssl");
    assert!(
        out.status.success(),
        "openssl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A CA, a server certificate for 127.0.0.1 and a client certificate, both
/// signed by the CA, and a second CA's client certificate (`other-client`).
fn certificates(dir: &Dir) {
    dir.write("server.ext", "subjectAltName=IP:127.0.0.1\n");
    dir.write("client.ext", "extendedKeyUsage=clientAuth\n");
    for ca in ["ca", "other-ca"] {
        openssl(
            dir,
            &[
                "req",
                "-x509",
                "-newkey",
                "ec",
                "-pkeyopt",
                "ec_paramgen_curve:P-256",
                "-nodes",
                "-keyout",
                &format!("{ca}.key"),
                "-out",
                &format!("{ca}.pem"),
                "-days",
                "1",
                "-subj",
                &format!("/CN=brr test {ca}"),
            ],
        );
    }
    for (name, ca, ext) in [
        ("server", "ca", "server.ext"),
        ("client", "ca", "client.ext"),
        ("other-client", "other-ca", "client.ext"),
    ] {
        openssl(
            dir,
            &[
                "req",
                "-newkey",
                "ec",
                "-pkeyopt",
                "ec_paramgen_curve:P-256",
                "-nodes",
                "-keyout",
                &format!("{name}.key"),
                "-out",
                &format!("{name}.csr"),
                "-subj",
                &format!("/CN=brr test {name}"),
            ],
        );
        openssl(
            dir,
            &[
                "x509",
                "-req",
                "-in",
                &format!("{name}.csr"),
                "-CA",
                &format!("{ca}.pem"),
                "-CAkey",
                &format!("{ca}.key"),
                "-CAcreateserial",
                "-out",
                &format!("{name}.pem"),
                "-days",
                "1",
                "-extfile",
                ext,
            ],
        );
    }
}

fn hash(password: &str) -> String {
    bcrypt::hash(password, 6).expect("bcrypt")
}

/// `curl ARGS -w '%{http_code}'`: (curl's exit code, status, body).
fn curl(args: &[&str]) -> (i32, u16, Vec<u8>) {
    let out = Command::new("curl")
        .args(["-s", "--max-time", "30", "-w", "\n%{http_code}"])
        .args(args)
        .output()
        .expect("run curl");
    let mut body = out.stdout;
    let split = body.iter().rposition(|&b| b == b'\n').unwrap_or(0);
    let status = String::from_utf8_lossy(&body[split..])
        .trim()
        .parse()
        .unwrap_or(0);
    body.truncate(split);
    (out.status.code().unwrap_or(-1), status, body)
}

fn url(addr: SocketAddr, path: &str) -> String {
    format!("https://{addr}{path}")
}

/// A real Prometheus scrapes over TLS with the right and with a wrong
/// password: the first job gets the fixture's series, the second is down
/// with 401. Prometheus asks for gzip, so its scrapes are gzipped too.
#[test]
fn a_real_prometheus_scrapes_over_tls_with_basic_auth() {
    if !support::live() || !tool("openssl") || !tool("prometheus") {
        return;
    }
    let dir = Dir::new("prom");
    certificates(&dir);
    let web = dir.write(
        "web.yml",
        &format!(
            "tls_server_config:\n  cert_file: server.pem\n  key_file: server.key\nbasic_auth_users:\n  prometheus: '{}'\n",
            hash(PASSWORD)
        ),
    );
    let fx = SocketFilterFixture::load().expect("load fixture");
    fx.prog.test_run(7).expect("test run");
    let exp = Exporter::start(&["--web-config", &web]);
    let job = |name: &str, password: &str| {
        format!(
            "  - job_name: {name}\n    scheme: https\n    tls_config:\n      ca_file: {}\n    basic_auth:\n      username: prometheus\n      password: '{password}'\n    static_configs:\n      - targets: ['{}']\n",
            dir.path("ca.pem"),
            exp.addr
        )
    };
    let prom = Prometheus::start("brr-prom-tls", |_| {
        format!(
            "global:\n  scrape_interval: 1s\nscrape_configs:\n{}{}",
            job("good", PASSWORD),
            job("bad", "wrong")
        )
    });
    let q = format!("brr_prog_run_count_total{{id=\"{}\"}}", fx.prog.id);
    let t = Instant::now();
    let (mut seen, mut bad_error) = (None, None);
    while t.elapsed() < Duration::from_secs(60) && (seen.is_none() || bad_error.is_none()) {
        std::thread::sleep(Duration::from_millis(500));
        if let Some(v) = prom.api("/api/v1/query", &[("query", &q)]) {
            seen = v["data"]["result"]
                .as_array()
                .and_then(|r| r.first())
                .map(|s| (s["metric"]["job"].clone(), s["value"][1].clone()));
        }
        if let Some(v) = prom.api("/api/v1/targets", &[]) {
            bad_error = v["data"]["activeTargets"]
                .as_array()
                .and_then(|ts| ts.iter().find(|t| t["labels"]["job"] == "bad"))
                .and_then(|t| t["lastError"].as_str().map(str::to_string))
                .filter(|e| !e.is_empty());
        }
    }
    drop(prom);
    assert_eq!(
        seen,
        Some((serde_json::json!("good"), serde_json::json!("7"))),
        "the good job's sample"
    );
    let bad_error = bad_error.unwrap_or_default();
    assert!(
        bad_error.contains("401"),
        "the bad job's error: {bad_error}"
    );
}

/// Mutual TLS: curl with the CA's client certificate gets `/metrics`,
/// without one (or with another CA's) the handshake fails; a plain-text
/// client is closed at once.
#[test]
fn mutual_tls_refuses_a_client_without_a_certificate() {
    if !support::live() || !tool("openssl") || !tool("curl") {
        return;
    }
    let dir = Dir::new("mtls");
    certificates(&dir);
    let web = dir.write(
        "web.yml",
        "tls_server_config:\n  cert_file: server.pem\n  key_file: server.key\n  client_ca_file: ca.pem\n  client_auth_type: RequireAndVerifyClientCert\n  min_version: TLS12\nhttp_server_config:\n  headers:\n    Strict-Transport-Security: max-age=31536000\n",
    );
    let exp = Exporter::start(&["--web-config", &web]);
    let ca = dir.path("ca.pem");
    let metrics = url(exp.addr, "/metrics");
    // curl with the client certificate `name` (none when empty) and `extra`.
    let with_cert = |name: &str, extra: &[&str]| {
        let (cert, key) = (
            dir.path(&format!("{name}.pem")),
            dir.path(&format!("{name}.key")),
        );
        let mut args = vec!["--cacert", &ca];
        if !name.is_empty() {
            args.extend(["--cert", &cert, "--key", &key]);
        }
        args.extend_from_slice(extra);
        args.push(&metrics);
        curl(&args)
    };
    let (code, status, body) = with_cert("client", &[]);
    assert_eq!((code, status), (0, 200));
    assert!(String::from_utf8_lossy(&body).contains("# TYPE brr_prog_info gauge"));
    for name in ["", "other-client"] {
        let (code, status, _) = with_cert(name, &[]);
        assert!(code != 0 && status == 0, "{name:?}: curl {code}, {status}");
    }
    // The configured header is sent.
    let (code, status, head) = with_cert("client", &["-D", "-", "-o", "/dev/null"]);
    assert_eq!((code, status), (0, 200));
    assert!(String::from_utf8_lossy(&head).contains("Strict-Transport-Security: max-age=31536000"));
    // Plain HTTP to the TLS port: closed without an answer, at once.
    let mut s = TcpStream::connect(exp.addr).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(15))).unwrap();
    let t = Instant::now();
    s.write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
        .unwrap();
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
    assert!(!out.starts_with(b"HTTP/1.1 200"), "{out:?}");
}

/// `--profiles-auth-only`: `/metrics` needs no password, the profile does,
/// and a refused profile request opens no perf event.
#[test]
fn a_profile_without_the_password_is_refused_before_any_capture() {
    if !support::live() || !tool("curl") {
        return;
    }
    let dir = Dir::new("profiles");
    let web = dir.write(
        "web.yml",
        &format!("basic_auth_users:\n  parca: {}\n", hash(PASSWORD)),
    );
    let exp = Exporter::start(&[
        "--serve-profiles",
        "--profiles-auth-only",
        "--web-config",
        &web,
    ]);
    let http = |path: &str| format!("http://{}{path}", exp.addr);
    let (_, status, _) = curl(&[&http("/metrics")]);
    assert_eq!(status, 200);
    let profile = http("/debug/pprof/profile?seconds=2");
    for creds in [None, Some("parca:wrong"), Some("nobody:correct horse")] {
        let mut args = vec!["-D", "-"];
        if let Some(c) = creds {
            args.extend(["-u", c]);
        }
        args.push(&profile);
        let (_, status, out) = curl(&args);
        assert_eq!(status, 401, "{creds:?}");
        assert!(String::from_utf8_lossy(&out).contains("WWW-Authenticate: Basic realm=\"brr\""));
        assert_eq!(exp.perf_fds(), 0, "a refused request started a capture");
    }
    let user = format!("parca:{PASSWORD}");
    let (_, status, body) = curl(&["-u", &user, &profile]);
    assert_eq!(status, 200);
    assert!(body.starts_with(&[0x1f, 0x8b]), "a gzipped profile");
}

/// gzip when asked, identity otherwise; the gzipped text is the same
/// exposition in fewer bytes.
#[test]
fn metrics_are_gzipped_for_clients_that_ask() {
    if !support::live() || !tool("curl") {
        return;
    }
    let _fx = SocketFilterFixture::load().expect("load fixture");
    let exp = Exporter::start(&[]);
    let metrics = format!("http://{}/metrics", exp.addr);
    let size = |args: &[&str]| {
        let mut all = vec![
            "-D",
            "-",
            "-o",
            "/dev/null",
            "-w",
            "%{size_download} \n%{http_code}",
        ];
        all.extend_from_slice(args);
        all.push(&metrics);
        let (code, status, out) = curl(&all);
        assert_eq!((code, status), (0, 200));
        let text = String::from_utf8_lossy(&out).to_string();
        let bytes: usize = text
            .lines()
            .last()
            .and_then(|l| l.split_whitespace().next())
            .and_then(|n| n.parse().ok())
            .unwrap_or(0);
        (text.to_ascii_lowercase(), bytes)
    };
    let (plain_head, plain) = size(&[]);
    let (gz_head, gz) = size(&["--compressed"]);
    assert!(plain_head.contains("vary: accept-encoding"));
    assert!(!plain_head.contains("content-encoding"));
    assert!(gz_head.contains("content-encoding: gzip"));
    assert!(gz_head.contains("vary: accept-encoding"));
    eprintln!("/metrics: {plain} bytes plain, {gz} gzipped");
    assert!(gz > 0 && gz * 2 < plain, "{gz} vs {plain}");
    // curl --compressed decodes it to the exposition text.
    let (_, _, body) = curl(&["--compressed", &metrics]);
    let text = String::from_utf8(body).expect("text");
    assert!(text.contains("# TYPE brr_prog_info gauge") && text.ends_with('\n'));
}

fn brr_exporter(web: &Path, extra: &[&str]) -> (Option<i32>, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_brr"));
    cmd.args(["exporter", "--listen", "127.0.0.1:0", "--web-config"])
        .arg(web)
        .args(extra);
    let out = cmd.output().expect("run brr");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).to_string(),
    )
}

/// A bad web config stops the start with one `brr:` line naming the file
/// (exit 2); it is read before anything else, so no root is needed.
#[test]
fn a_bad_web_config_fails_at_start() {
    let dir = Dir::new("bad");
    for (text, problem) in [
        (
            "tls_server_config:\n  cert_file: missing.pem\n  key_file: missing.key\n",
            "missing.pem",
        ),
        ("basic_auth_users:\n  a: not-a-hash\n", "is not bcrypt"),
        ("tls_config: {}\n", "unknown field `tls_config`"),
    ] {
        let web = dir.write("web.yml", text);
        let (code, err) = brr_exporter(Path::new(&web), &[]);
        assert_eq!(code, Some(2), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.starts_with(&format!("brr: {web}: ")) && err.contains(problem),
            "{err}"
        );
    }
    let (code, err) = brr_exporter(Path::new(&dir.path("nope.yml")), &[]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("nope.yml: cannot read it"), "{err}");
    let (code, err) = brr_exporter(Path::new(&dir.path("nope.yml")), &["--profiles-auth-only"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("requires --serve-profiles"), "{err}");
}
