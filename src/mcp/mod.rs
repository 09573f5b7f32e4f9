//! `brr mcp` and `brr serve-mcp`, the agent front end: a Model Context
//! Protocol server whose tools answer with the JSON documents of the CLI's
//! own commands. [`rpc`] is JSON-RPC over lines, [`tools`] the tool table,
//! [`conversation`] one peer's requests, [`socket`] the privilege split (a
//! root server on a Unix socket and a relay the agent's user runs).
//!
//! The commands that answer are given by the caller ([`Tools`]), so that
//! this front end dispatches through the same code as the command line
//! without importing it.

pub(crate) mod conversation;
pub(crate) mod rpc;
pub(crate) mod socket;
pub(crate) mod tools;

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

pub(crate) use socket::{relay, serve, SocketConfig};

/// What answers the tools: the CLI's dispatch.
pub(crate) trait Tools: Send + Sync {
    /// The JSON document of the command line `argv` (after `brr`), or
    /// brr's one-line error message. A capture it starts is stopped at once
    /// when `cancelled` is already set (a cancel that came before it began).
    fn answer(
        &self,
        argv: &[String],
        cancelled: &std::sync::atomic::AtomicBool,
    ) -> Result<String, String>;
    /// Stop the running profile's capture (what was sampled is reported).
    fn cancel(&self) -> bool;
}

/// How `brr mcp` runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mode {
    /// Answer on stdin and stdout in this process.
    Stdio,
    /// Relay stdin and stdout to a `brr serve-mcp` socket.
    Connect(PathBuf),
}

/// Serve one MCP client on stdin and stdout until stdin ends.
pub(crate) fn serve_stdio(tools: Arc<dyn Tools>) {
    let mut input = std::io::stdin().lock();
    conversation::converse(&mut input, Arc::new(Mutex::new(std::io::stdout())), tools);
}
