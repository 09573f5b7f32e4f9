//! Live tests of `brr mcp` and `brr serve-mcp` (root, real kernel) against
//! a real MCP client, the Python SDK's (`tests/mcp/client.py`), about
//! fixture programs this test loads and drives.
//!
//! The SDK is found in `BRR_MCP_PYTHON` (an interpreter that imports
//! `mcp`; `.ci/run` installs one), else in `~/.cache/brr-mcp-venv`, else
//! the `python3` on PATH; without it the tests skip (fail under
//! `BRR_REQUIRE_LIVE=1`).

// Test tooling: helpers outside #[test] functions fail the test by panicking,
// as the tests themselves do (clippy.toml only exempts #[test] code).
#![allow(clippy::expect_used, clippy::panic)]

#[path = "support/run.rs"]
mod run;
mod support;

use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use run::{serial, stderr, stdout};
use support::*;

const BRR: &str = env!("CARGO_BIN_EXE_brr");
const CLIENT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/mcp/client.py");

/// An interpreter with the MCP SDK, or why there is none.
fn python() -> Option<String> {
    let home = std::env::var("HOME").unwrap_or_default();
    let candidates = [
        std::env::var("BRR_MCP_PYTHON").ok(),
        Some(format!("{home}/.cache/brr-mcp-venv/bin/python")),
        Some("python3".to_string()),
    ];
    let found = candidates.into_iter().flatten().find(|p| {
        Command::new(p)
            .args(["-c", "import mcp.client.stdio"])
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    });
    if found.is_none() {
        let why = "no Python with the mcp SDK (python3 -m pip install mcp)";
        if std::env::var(REQUIRE_LIVE_ENV).as_deref() == Ok("1") {
            panic!("{REQUIRE_LIVE_ENV}=1 but {why}");
        }
        skip(why);
    }
    found
}

fn client(python: &str, args: &[&str]) -> Output {
    let o = Command::new(python)
        .arg(CLIENT)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("run the MCP client");
    println!("{}", stdout(&o));
    assert!(
        o.status.success(),
        "client {args:?} failed:\n{}\n{}",
        stdout(&o),
        stderr(&o)
    );
    o
}

#[test]
fn an_mcp_client_calls_every_tool_about_the_fixtures() {
    if !live() {
        return;
    }
    let Some(py) = python() else { return };
    let _g = serial();
    let hot = HotFixture::load().expect("load hot fixture");
    let helper = HelperFixture::load().expect("load helper fixture");
    let hot_load = LoadDriver::start(hot.prog.fd(), 1, HOT_REPEAT).expect("drive hot");
    let helper_load =
        LoadDriver::start(helper.prog.fd(), 1, HelperFixture::REPEAT).expect("drive helper");
    let renamed =
        support::renamed::RenameFixture::start("brr_fx_mcp_cost").expect("raw tp fixture");
    let ids = [
        hot.prog.id.to_string(),
        helper.prog.id.to_string(),
        renamed.prog.id.to_string(),
    ];
    let lines = [
        HotFixture::HOT_LINE.to_string(),
        HelperFixture::HOT_LINE.to_string(),
    ];
    let o = client(
        &py,
        &[
            "stdio",
            BRR,
            &ids[0],
            &ids[1],
            &lines[0],
            HotFixture::FILE,
            &lines[1],
            &ids[2],
        ],
    );
    drop(renamed);
    hot_load.stop().expect("hot load");
    helper_load.stop().expect("helper load");
    let out = stdout(&o);
    for check in [
        "ok the hot line of the hot fixture ranks first",
        "ok the helper sits under its line",
        "ok a concurrent profile is refused",
        "ok a cancel stops the capture",
        "ok cost splits the raw tracepoint fixture",
        "ok EOF mid-capture: exit 0",
    ] {
        assert!(out.contains(check), "{check} missing:\n{out}");
    }
}

/// A `serve-mcp` server, removed (and its socket) when dropped.
struct Server {
    child: std::process::Child,
    dir: PathBuf,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn serve_mcp(name: &str, mode: &str, group: &str) -> (Server, PathBuf) {
    let dir = std::env::temp_dir().join(format!("brr-mcp-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    // Others must reach the socket inside.
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let socket = dir.join("brr.sock");
    let mut child = Command::new(BRR)
        .args(["serve-mcp", "--socket"])
        .arg(&socket)
        .args(["--socket-mode", mode, "--socket-group", group])
        .env("BRR_TRACE_READY", "1")
        .stdin(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start serve-mcp");
    let err = child.stderr.take().expect("stderr");
    let mut lines = BufReader::new(err).lines();
    let ready = lines.next().and_then(Result::ok).unwrap_or_default();
    assert_eq!(ready, "brr-trace: ready mcp-socket");
    (Server { child, dir }, socket)
}

/// `brr mcp --connect SOCKET` run as `uid`:`gid`, sent `lines`.
fn relay_as(uid: u32, gid: u32, socket: &Path, lines: &str) -> Output {
    let mut child = Command::new("setpriv")
        .args(["--reuid", &uid.to_string(), "--regid", &gid.to_string()])
        .args([
            "--clear-groups",
            "--inh-caps",
            "-all",
            BRR,
            "mcp",
            "--connect",
        ])
        .arg(socket)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("setpriv (util-linux) runs");
    let mut input = child.stdin.take().expect("stdin");
    input.write_all(lines.as_bytes()).expect("write");
    drop(input);
    child.wait_with_output().expect("relay ends")
}

#[test]
fn an_unprivileged_relay_reaches_a_root_server_through_its_socket() {
    if !live() {
        return;
    }
    let Some(py) = python() else { return };
    let _g = serial();
    let hot = HotFixture::load().expect("load hot fixture");
    let load = LoadDriver::start(hot.prog.fd(), 1, HOT_REPEAT).expect("drive hot");
    let (server, socket) = serve_mcp("relay", "0660", "65534");
    let meta = std::fs::metadata(&socket).expect("socket made");
    assert_eq!(meta.permissions().mode() & 0o777, 0o660);
    assert_eq!(meta.gid(), 65534);
    client(
        &py,
        &[
            "connect",
            BRR,
            socket.to_str().expect("utf-8"),
            &hot.prog.id.to_string(),
        ],
    );
    load.stop().expect("hot load");

    // The socket's group may connect without any privilege of its own and
    // sees the fixture that only root can list.
    let call = concat!(
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2024-11-05","capabilities":{},"clientInfo":{"name":"sh","version":"0"}}}"#,
        "\n",
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"list_programs"}}"#,
        "\n"
    );
    let t = Instant::now();
    let o = relay_as(65534, 65534, &socket, call);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(t.elapsed() < Duration::from_secs(30));
    let answers: Vec<serde_json::Value> = stdout(&o)
        .lines()
        .map(|l| serde_json::from_str(l).expect("one JSON message a line"))
        .collect();
    assert_eq!(answers.len(), 2, "{answers:?}");
    assert_eq!(answers[0]["result"]["protocolVersion"], "2024-11-05");
    let listing = answers[1]["result"]["content"][0]["text"]
        .as_str()
        .expect("text");
    let marker = format!("\"id\":{},", hot.prog.id);
    assert!(listing.contains(&marker), "{listing}");

    // Anyone else is refused by the socket's mode, with brr's message.
    let o = relay_as(65533, 65533, &socket, call);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).starts_with("brr: permission denied while connecting to"),
        "{}",
        stderr(&o)
    );
    drop(server);
}

#[test]
fn serve_mcp_removes_its_socket_on_sigterm() {
    if !live() {
        return;
    }
    let (mut server, socket) = serve_mcp("term", "0600", "0");
    let pid = server.child.id().to_string();
    let killed = Command::new("kill").args(["-TERM", &pid]).status();
    assert!(killed.is_ok_and(|s| s.success()));
    let status = server.child.wait().expect("serve-mcp ends");
    assert_eq!(status.code(), Some(0));
    assert!(!socket.exists(), "the socket is removed");
}
