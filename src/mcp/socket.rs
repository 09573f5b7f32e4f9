//! The privilege split: `brr serve-mcp` answers MCP on a Unix socket as
//! root, with the mode and group the administrator gives it, so that
//! `brr mcp --connect` can relay an agent's stdio to it as an ordinary
//! user (the agent gets the tools and nothing else root could do).

use std::io::{BufReader, Read, Write};
use std::os::unix::fs::{FileTypeExt, PermissionsExt};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use crate::error::{BrrError, Result};
use crate::session::Terminations;

use super::{conversation, Tools};

/// The most clients served at once; more are turned away with an error.
pub(crate) const MAX_CLIENTS: usize = 8;

/// The socket's default mode: its owner (root) and its group.
pub(crate) const DEFAULT_MODE: u32 = 0o660;

/// Where and how `brr serve-mcp` listens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SocketConfig {
    pub path: PathBuf,
    pub mode: u32,
    /// A group name or number; the socket keeps the server's group
    /// without one.
    pub group: Option<String>,
}

fn failed(what: &str, path: &Path, e: &std::io::Error) -> BrrError {
    BrrError::Failed(format!("cannot {what} {}: {e}", path.display()))
}

/// Serve MCP on the socket until SIGTERM or SIGINT, then remove it.
pub(crate) fn serve(config: &SocketConfig, tools: Arc<dyn Tools>) -> Result<()> {
    // Before any thread starts, so that every thread leaves the signals to
    // the wait below.
    let mut terminations = Terminations::catch()?;
    let gid = config.group.as_deref().map(group_id).transpose()?;
    let path = &config.path;
    clear_stale(path)?;
    // Nobody may connect before the mode and group are set: the socket is
    // made private and opened up afterwards.
    let old = rustix::process::umask(rustix::fs::Mode::from_raw_mode(0o177));
    let bound = UnixListener::bind(path);
    rustix::process::umask(old);
    let listener = bound.map_err(|e| failed("listen on", path, &e))?;
    let opened = std::os::unix::fs::chown(path, None, gid).and_then(|()| {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(config.mode))
    });
    if let Err(e) = opened {
        let _ = std::fs::remove_file(path);
        return Err(failed("set the mode and group of", path, &e));
    }
    crate::trace::ready("mcp-socket");
    let clients = Arc::new(AtomicUsize::new(0));
    let accepting = move || {
        for stream in listener.incoming().flatten() {
            client(stream, &clients, &tools);
        }
    };
    std::thread::Builder::new()
        .name("brr-mcp-accept".into())
        .spawn(accepting)
        .map_err(|e| BrrError::Failed(format!("cannot start the listener thread: {e}")))?;
    terminations.wait();
    let _ = std::fs::remove_file(path);
    Ok(())
}

/// Counts a client while it is served.
struct Counted(Arc<AtomicUsize>);

impl Drop for Counted {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Serve one client on a thread of its own, unless too many are served.
fn client(mut stream: UnixStream, clients: &Arc<AtomicUsize>, tools: &Arc<dyn Tools>) {
    if clients.fetch_add(1, Ordering::SeqCst) >= MAX_CLIENTS {
        clients.fetch_sub(1, Ordering::SeqCst);
        let message = format!("brr serves at most {MAX_CLIENTS} clients at once");
        let refusal = super::rpc::error(&serde_json::Value::Null, super::rpc::BUSY, &message);
        let _ = super::rpc::write(&mut stream, &refusal);
        return;
    }
    let counted = Counted(Arc::clone(clients));
    let tools = Arc::clone(tools);
    let body = move || {
        let _counted = counted;
        let (Ok(reader), Ok(writer)) = (stream.try_clone(), stream.try_clone()) else {
            return;
        };
        let out: Arc<Mutex<dyn Write + Send>> = Arc::new(Mutex::new(writer));
        conversation::converse(&mut BufReader::new(reader), out, tools);
        // Calls still running hold a copy of the stream: the client hears
        // the end now, not when they finish.
        let _ = stream.shutdown(std::net::Shutdown::Both);
    };
    let _ = std::thread::Builder::new()
        .name("brr-mcp-client".into())
        .spawn(body);
}

/// A socket left by a server that is gone is removed; a live one, or
/// anything that is not a socket, is left alone and refused.
fn clear_stale(path: &Path) -> Result<()> {
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return Ok(());
    };
    if !meta.file_type().is_socket() {
        return Err(BrrError::Failed(format!(
            "{} exists and is not a socket",
            path.display()
        )));
    }
    if UnixStream::connect(path).is_ok() {
        return Err(BrrError::Failed(format!(
            "another server listens on {}",
            path.display()
        )));
    }
    std::fs::remove_file(path).map_err(|e| failed("remove the old socket", path, &e))
}

/// The ID of group `name` (a number, or a name in /etc/group).
fn group_id(name: &str) -> Result<u32> {
    if let Ok(n) = name.parse::<u32>() {
        return Ok(n);
    }
    let groups = std::fs::read_to_string("/etc/group").unwrap_or_default();
    find_group(&groups, name)
        .ok_or_else(|| BrrError::Failed(format!("no group {name:?} in /etc/group")))
}

fn find_group(groups: &str, name: &str) -> Option<u32> {
    groups.lines().find_map(|l| {
        let mut f = l.split(':');
        (f.next() == Some(name))
            .then(|| f.nth(1).and_then(|g| g.parse().ok()))
            .flatten()
    })
}

/// `brr mcp --connect`: copy stdin to the server's socket and its answers
/// to stdout until the server hangs up.
pub(crate) fn relay(path: &Path) -> Result<()> {
    let stream = UnixStream::connect(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::PermissionDenied => BrrError::Permission(format!(
            "permission denied while connecting to {}; the socket's group may connect (see brr serve-mcp --socket-group)",
            path.display()
        )),
        _ => failed("connect to", path, &e),
    })?;
    let mut up = stream
        .try_clone()
        .map_err(|e| failed("use the socket", path, &e))?;
    let forward = move || {
        pass(&mut std::io::stdin().lock(), &mut up);
        // The server sees the end of the input and stops what runs.
        let _ = up.shutdown(std::net::Shutdown::Write);
    };
    std::thread::Builder::new()
        .name("brr-mcp-relay".into())
        .spawn(forward)
        .map_err(|e| BrrError::Failed(format!("cannot start the relay thread: {e}")))?;
    let mut down = stream;
    pass(&mut down, &mut std::io::stdout().lock());
    Ok(())
}

/// Copy `from` to `to` until `from` ends or either fails, each read
/// passed on at once. (`std::io::copy` splices between a pipe and a
/// socket, and a splice into a socket may wait for more input than one
/// message before it sends any.)
fn pass(from: &mut dyn Read, to: &mut dyn Write) {
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = match from.read(&mut buf) {
            Ok(0) => return,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => return,
        };
        let chunk = buf.get(..n).unwrap_or_default();
        if to.write_all(chunk).and_then(|()| to.flush()).is_err() {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_are_found_by_name() {
        let groups = "root:x:0:\nbrr-agents:x:1234:alice,bob\nbad:x:nan:\n";
        assert_eq!(find_group(groups, "brr-agents"), Some(1234));
        assert_eq!(find_group(groups, "root"), Some(0));
        assert_eq!(find_group(groups, "bad"), None);
        assert_eq!(find_group(groups, "brr"), None);
        assert_eq!(group_id("42").unwrap(), 42);
    }

    #[test]
    fn only_a_dead_socket_is_replaced() {
        let dir = std::env::temp_dir().join(format!("brr-mcp-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("plain");
        std::fs::write(&file, "x").unwrap();
        assert!(clear_stale(&file).is_err(), "not a socket");
        let sock = dir.join("sock");
        let live = UnixListener::bind(&sock).unwrap();
        assert!(clear_stale(&sock).is_err(), "someone listens");
        drop(live);
        clear_stale(&sock).unwrap();
        assert!(!sock.exists());
        clear_stale(&sock).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
