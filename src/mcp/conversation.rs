//! One MCP conversation: read the peer's lines, answer `initialize`,
//! `ping`, `tools/list` and `tools/call`, each call on a thread of its own
//! so that a cancel or a ping is heard while a capture runs, at most
//! [`MAX_IN_FLIGHT`] at a time.

use std::collections::HashMap;
use std::io::{BufRead, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::rpc::{self, Line, Message};
use super::tools;
use super::Tools;

/// The protocol versions brr speaks, newest first: a client asking for
/// one of them gets it, any other client the newest.
pub(crate) const PROTOCOL_VERSIONS: [&str; 4] =
    ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

/// The most tool calls one peer may have running at once.
pub(crate) const MAX_IN_FLIGHT: usize = 4;

/// How long calls still running may take to answer once the peer's input
/// has ended.
const GRACE: Duration = Duration::from_secs(10);

/// What the server tells the model about itself when it connects.
const INSTRUCTIONS: &str = "brr observes the eBPF programs loaded in this Linux kernel: it reads their counters and samples the CPUs, and never loads, attaches or changes anything. Start with list_programs; activity measures run counts and run time over a window; profile finds the hot source lines, helpers and kernel functions and says who pays; cost splits what each program costs the host into its own code, its hook's dispatch and the statistics' clock reads; dump shows the instructions under a line; doctor says why a tool cannot work here. Every answer is the JSON document of the matching brr command with --json.";

/// A call being answered.
struct Flight {
    samples: bool,
    /// The peer cancelled it: its answer is not sent, and a capture it
    /// starts after the cancel is stopped as it starts.
    cancelled: Arc<AtomicBool>,
}

type Out = Arc<Mutex<dyn Write + Send + 'static>>;
type Flights = Arc<Mutex<HashMap<String, Flight>>>;

fn lock<T: ?Sized>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Send one message; a peer that went away is noticed by the reader.
fn send(out: &Out, message: &Value) {
    let _ = rpc::write(&mut *lock(out), message);
}

/// The key of a request ID (a string and a number with the same digits
/// are different IDs).
fn key(id: &Value) -> String {
    id.to_string()
}

/// Talk to one peer until its input ends; then stop the capture one of its
/// calls runs and give the calls running [`GRACE`] to answer.
pub(crate) fn converse(input: &mut dyn BufRead, out: Out, tools: Arc<dyn Tools>) {
    let flights: Flights = Arc::default();
    loop {
        let line = match rpc::read_line(input, rpc::MAX_LINE) {
            Ok(Line::Text(text)) => text,
            Ok(Line::TooLong) => {
                let message = format!("a message must be at most {} bytes", rpc::MAX_LINE);
                send(
                    &out,
                    &rpc::error(&Value::Null, rpc::INVALID_REQUEST, &message),
                );
                continue;
            }
            Ok(Line::Garbled) => {
                let message = "a message must be UTF-8 JSON";
                send(&out, &rpc::error(&Value::Null, rpc::PARSE_ERROR, message));
                continue;
            }
            Ok(Line::End) | Err(_) => break,
        };
        match rpc::parse(&line) {
            Message::Request { id, method, params } => {
                request(&out, &flights, &tools, id, &method, &params);
            }
            Message::Notification { method, params } => {
                if method == "notifications/cancelled" {
                    cancelled(&flights, &*tools, &params);
                }
            }
            Message::Invalid { id, code, message } => send(&out, &rpc::error(&id, code, &message)),
            Message::Response | Message::Blank => {}
        }
    }
    let sampling = lock(&flights).values().any(|f| f.samples);
    if sampling {
        tools.cancel();
    }
    // A peer that closed its input may still read (`... | brr mcp`): the
    // calls running get a moment to answer, the captures among them cut
    // short above.
    let ends = Instant::now() + GRACE;
    while !lock(&flights).is_empty() && Instant::now() < ends {
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn request(
    out: &Out,
    flights: &Flights,
    tools: &Arc<dyn Tools>,
    id: Value,
    method: &str,
    params: &Value,
) {
    let answer = match method {
        "initialize" => rpc::result(&id, initialize(params)),
        "ping" => rpc::result(&id, json!({})),
        "tools/list" => {
            let listed: Vec<Value> = tools::TOOLS.iter().map(tools::Tool::listed).collect();
            rpc::result(&id, json!({ "tools": listed }))
        }
        "tools/call" => match call(out, flights, tools, &id, params) {
            Ok(()) => return,
            Err((code, message)) => rpc::error(&id, code, &message),
        },
        _ => rpc::error(
            &id,
            rpc::METHOD_NOT_FOUND,
            &format!("brr has no method {method:?}"),
        ),
    };
    send(out, &answer);
}

/// The answer to `initialize`: the client's protocol version when brr
/// speaks it, else brr's newest.
fn initialize(params: &Value) -> Value {
    let asked = params.get("protocolVersion").and_then(Value::as_str);
    let version = PROTOCOL_VERSIONS
        .iter()
        .find(|v| Some(**v) == asked)
        .unwrap_or(&PROTOCOL_VERSIONS[0]);
    json!({
        "protocolVersion": version,
        "capabilities": { "tools": { "listChanged": false } },
        "serverInfo": { "name": "brr", "title": "brr: eBPF Runtime Reporter", "version": env!("CARGO_PKG_VERSION") },
        "instructions": INSTRUCTIONS,
    })
}

/// Start a `tools/call` on a thread of its own, which sends its answer.
fn call(
    out: &Out,
    flights: &Flights,
    tools: &Arc<dyn Tools>,
    id: &Value,
    params: &Value,
) -> Result<(), (i64, String)> {
    let name = params
        .get("name")
        .and_then(Value::as_str)
        .ok_or((rpc::INVALID_PARAMS, "tools/call needs a tool name".into()))?;
    let tool = tools::find(name)
        .ok_or_else(|| (rpc::INVALID_PARAMS, format!("brr has no tool {name:?}")))?;
    let arguments = params.get("arguments").cloned().unwrap_or(Value::Null);
    let cancel = Arc::new(AtomicBool::new(false));
    {
        let mut f = lock(flights);
        if f.len() >= MAX_IN_FLIGHT {
            return Err((
                rpc::BUSY,
                format!("at most {MAX_IN_FLIGHT} tool calls may run at once"),
            ));
        }
        if f.contains_key(&key(id)) {
            return Err((rpc::INVALID_REQUEST, "this request ID is in use".into()));
        }
        f.insert(
            key(id),
            Flight {
                samples: tool.samples,
                cancelled: Arc::clone(&cancel),
            },
        );
    }
    let (out, flights, tools, id) = (
        Arc::clone(out),
        Arc::clone(flights),
        Arc::clone(tools),
        id.clone(),
    );
    let body = move || {
        let result = match tool.command_line(&arguments) {
            Ok(argv) => tools.answer(&argv, &cancel),
            Err(why) => Err(format!("brr: {}: {why}", tool.name)),
        };
        let content = |text: String, failed: bool| json!({ "content": [{ "type": "text", "text": text }], "isError": failed });
        let answer = match result {
            Ok(text) => content(text, false),
            Err(message) => content(message, true),
        };
        let mut f = lock(&flights);
        let cancelled = f
            .remove(&key(&id))
            .is_some_and(|f| f.cancelled.load(Ordering::SeqCst));
        // Under the lock, so that a cancel is either before (no answer)
        // or after (it finds nothing).
        if !cancelled {
            send(&out, &rpc::result(&id, answer));
        }
    };
    std::thread::Builder::new()
        .name("brr-mcp-call".into())
        .spawn(body)
        .map(|_| ())
        .map_err(|e| {
            (
                rpc::BUSY,
                format!("cannot start a thread for the call: {e}"),
            )
        })
}

/// `notifications/cancelled`: the call's answer is dropped, and a capture
/// it runs stops.
fn cancelled(flights: &Flights, tools: &dyn Tools, params: &Value) {
    let Some(id) = params.get("requestId") else {
        return;
    };
    let mut f = lock(flights);
    if let Some(flight) = f.get_mut(&key(id)) {
        flight.cancelled.store(true, Ordering::SeqCst);
        if flight.samples {
            tools.cancel();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    /// Answers with the command line it was given; `profile` waits for a
    /// cancel.
    #[derive(Default)]
    struct Echo {
        cancels: AtomicUsize,
    }

    impl Tools for Echo {
        fn answer(&self, argv: &[String], _cancelled: &AtomicBool) -> Result<String, String> {
            if argv.first().map(String::as_str) == Some("profile") {
                let t = Instant::now();
                while self.cancels.load(Ordering::SeqCst) == 0 {
                    if t.elapsed() > Duration::from_secs(10) {
                        return Err("never cancelled".into());
                    }
                    std::thread::sleep(Duration::from_millis(5));
                }
            }
            Ok(argv.join(" "))
        }

        fn cancel(&self) -> bool {
            self.cancels.fetch_add(1, Ordering::SeqCst);
            true
        }
    }

    #[derive(Clone, Default)]
    struct Sink(Arc<Mutex<Vec<u8>>>);

    impl Write for Sink {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            lock(&self.0).extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    impl Sink {
        fn messages(&self) -> Vec<Value> {
            let text = String::from_utf8(lock(&self.0).clone()).unwrap();
            text.lines()
                .map(|l| serde_json::from_str(l).unwrap())
                .collect()
        }

        /// The answers, once `n` have come.
        fn wait(&self, n: usize) -> Vec<Value> {
            let t = Instant::now();
            loop {
                let got = self.messages();
                if got.len() >= n || t.elapsed() > Duration::from_secs(10) {
                    return got;
                }
                std::thread::sleep(Duration::from_millis(5));
            }
        }
    }

    fn talk(input: &str) -> (Sink, Arc<Echo>) {
        let sink = Sink::default();
        let echo = Arc::new(Echo::default());
        let tools: Arc<dyn Tools> = echo.clone();
        converse(
            &mut std::io::BufReader::new(input.as_bytes()),
            Arc::new(Mutex::new(sink.clone())),
            tools,
        );
        (sink, echo)
    }

    fn by_id(messages: &[Value], id: Value) -> Value {
        messages
            .iter()
            .find(|m| m["id"] == id)
            .cloned()
            .unwrap_or(Value::Null)
    }

    #[test]
    fn initialize_negotiates_the_version_and_lists_the_tools() {
        let (sink, _) = talk(concat!(
            r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26"}}"#,
            "\n",
            r#"{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"1999-01-01"}}"#,
            "\n",
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            "\n",
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/list"}"#,
            "\n",
            r#"{"jsonrpc":"2.0","id":4,"method":"ping"}"#,
            "\n"
        ));
        let got = sink.wait(4);
        assert_eq!(got.len(), 4, "no answer to a notification: {got:?}");
        let v = |id: i64| by_id(&got, json!(id));
        assert_eq!(v(1)["result"]["protocolVersion"], "2025-03-26");
        assert_eq!(v(2)["result"]["protocolVersion"], "2025-11-25");
        assert_eq!(v(1)["result"]["serverInfo"]["name"], "brr");
        let listed = v(3);
        let names: Vec<&str> = listed["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|t| t["name"].as_str())
            .collect();
        assert_eq!(
            names,
            [
                "list_programs",
                "list_maps",
                "list_links",
                "activity",
                "profile",
                "cost",
                "dump",
                "doctor"
            ]
        );
        assert_eq!(v(4)["result"], json!({}));
    }

    #[test]
    fn calls_answer_with_content_and_bad_ones_with_errors() {
        let (sink, _) = talk(concat!(
            r#"{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"dump","arguments":{"program_id":5}}}"#,
            "\n",
            r#"{"jsonrpc":"2.0","id":"b","method":"tools/call","params":{"name":"activity","arguments":{"seconds":600}}}"#,
            "\n",
            r#"{"jsonrpc":"2.0","id":"c","method":"tools/call","params":{"name":"rm"}}"#,
            "\n",
            r#"{"jsonrpc":"2.0","id":"d","method":"resources/list"}"#,
            "\n",
            "{garbage\n",
        ));
        let got = sink.wait(5);
        let a = by_id(&got, json!("a"));
        assert_eq!(a["result"]["isError"], false);
        assert_eq!(a["result"]["content"][0]["text"], "dump --json 5");
        let b = by_id(&got, json!("b"));
        assert_eq!(b["result"]["isError"], true);
        let text = b["result"]["content"][0]["text"].as_str().unwrap();
        assert!(
            text.starts_with("brr: activity: argument seconds: 600"),
            "{text}"
        );
        assert_eq!(
            by_id(&got, json!("c"))["error"]["code"],
            rpc::INVALID_PARAMS
        );
        assert_eq!(
            by_id(&got, json!("d"))["error"]["code"],
            rpc::METHOD_NOT_FOUND
        );
        assert_eq!(by_id(&got, Value::Null)["error"]["code"], rpc::PARSE_ERROR);
    }

    #[test]
    fn an_oversized_line_is_refused_and_the_next_one_answered() {
        let big = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{{\"x\":\"{}\"}}}}\n",
            "a".repeat(rpc::MAX_LINE)
        );
        let (sink, _) = talk(&(big + "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}\n"));
        let got = sink.wait(2);
        assert_eq!(got[0]["error"]["code"], rpc::INVALID_REQUEST);
        assert_eq!(got[1]["id"], 2);
    }

    #[test]
    fn a_cancel_stops_the_capture_and_drops_its_answer_and_eof_stops_it_too() {
        let (sink, echo) = talk(concat!(
            r#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"profile"}}"#,
            "\n",
            r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9}}"#,
            "\n",
            r#"{"jsonrpc":"2.0","id":10,"method":"ping"}"#,
            "\n",
        ));
        assert!(echo.cancels.load(Ordering::SeqCst) >= 1);
        std::thread::sleep(Duration::from_millis(100));
        let got = sink.wait(1);
        assert_eq!(got.len(), 1, "the cancelled call was answered: {got:?}");
        assert_eq!(got[0]["id"], 10);
        // Input ends while a capture runs: it is stopped.
        let (_, echo) = talk(concat!(
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"profile"}}"#,
            "\n"
        ));
        assert_eq!(echo.cancels.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn at_most_a_few_calls_run_at_once() {
        let mut input = String::new();
        for id in 0..=MAX_IN_FLIGHT {
            input.push_str(&format!(
                "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"tools/call\",\"params\":{{\"name\":\"profile\"}}}}\n"
            ));
        }
        let (sink, _) = talk(&input);
        let got = sink.wait(MAX_IN_FLIGHT + 1);
        let busy = by_id(&got, json!(MAX_IN_FLIGHT));
        assert_eq!(busy["error"]["code"], rpc::BUSY, "{got:?}");
    }
}
