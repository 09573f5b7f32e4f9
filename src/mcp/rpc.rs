//! JSON-RPC 2.0 as MCP's stdio transport carries it: one message per line,
//! each line bounded, parsed into a request, a notification or something
//! to refuse, and the answers written back one line each.

use std::io::{BufRead, Write};

use serde_json::{json, Value};

/// The longest line a peer may send. Tool arguments are a few numbers and
/// flags; a megabyte is far beyond any honest request and small enough
/// that a peer cannot make brr hold much memory.
pub(crate) const MAX_LINE: usize = 1 << 20;

/// JSON-RPC's error codes.
pub(crate) const PARSE_ERROR: i64 = -32700;
pub(crate) const INVALID_REQUEST: i64 = -32600;
pub(crate) const METHOD_NOT_FOUND: i64 = -32601;
pub(crate) const INVALID_PARAMS: i64 = -32602;
/// A server error (the range JSON-RPC leaves to implementations): too many
/// requests at once.
pub(crate) const BUSY: i64 = -32000;

/// One line read from the peer.
#[derive(Debug, PartialEq)]
pub(crate) enum Line {
    Text(String),
    /// Longer than [`MAX_LINE`]; the rest of it was read and dropped.
    TooLong,
    /// Not UTF-8.
    Garbled,
    End,
}

/// Read one line of at most `max` bytes; a longer one is consumed to its
/// end without being kept.
pub(crate) fn read_line(input: &mut dyn BufRead, max: usize) -> std::io::Result<Line> {
    let mut kept = Vec::new();
    let mut too_long = false;
    let mut any = false;
    loop {
        let buf = match input.fill_buf() {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if buf.is_empty() {
            break;
        }
        any = true;
        let (chunk, done) = match buf.iter().position(|&b| b == b'\n') {
            Some(i) => (buf.get(..i).unwrap_or_default(), Some(i + 1)),
            None => (buf, None),
        };
        if !too_long && kept.len() + chunk.len() <= max {
            kept.extend_from_slice(chunk);
        } else {
            too_long = true;
            kept = Vec::new();
        }
        let used = done.unwrap_or(buf.len());
        input.consume(used);
        if done.is_some() {
            break;
        }
    }
    if too_long {
        return Ok(Line::TooLong);
    }
    if !any {
        return Ok(Line::End);
    }
    if kept.last() == Some(&b'\r') {
        kept.pop();
    }
    Ok(String::from_utf8(kept).map_or(Line::Garbled, Line::Text))
}

/// What a line asks for.
#[derive(Debug, PartialEq)]
pub(crate) enum Message {
    /// A call that wants an answer.
    Request {
        id: Value,
        method: String,
        params: Value,
    },
    /// A call that wants none.
    Notification { method: String, params: Value },
    /// An answer from the peer (brr sends no requests, so it is ignored).
    Response,
    /// Not a valid message: answer with this error (to `id` when the line
    /// had one).
    Invalid {
        id: Value,
        code: i64,
        message: String,
    },
    /// A blank line.
    Blank,
}

/// Parse one line into a message.
pub(crate) fn parse(line: &str) -> Message {
    if line.trim().is_empty() {
        return Message::Blank;
    }
    let value: Value = match serde_json::from_str(line) {
        Ok(v) => v,
        Err(e) => return invalid(Value::Null, PARSE_ERROR, &format!("not JSON: {e}")),
    };
    let Value::Object(mut obj) = value else {
        // MCP 2025-06-18 has no batches; older peers do not send them.
        return invalid(
            Value::Null,
            INVALID_REQUEST,
            "a message must be one JSON object (batches are not supported)",
        );
    };
    let id = obj.remove("id");
    if id
        .as_ref()
        .is_some_and(|i| !matches!(i, Value::String(_) | Value::Number(_)))
    {
        return invalid(
            Value::Null,
            INVALID_REQUEST,
            "the id must be a string or a number",
        );
    }
    if obj.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return invalid(
            id.unwrap_or(Value::Null),
            INVALID_REQUEST,
            "jsonrpc must be \"2.0\"",
        );
    }
    let method = match obj.remove("method") {
        Some(Value::String(m)) => m,
        Some(_) => {
            return invalid(
                id.unwrap_or(Value::Null),
                INVALID_REQUEST,
                "the method must be a string",
            )
        }
        None if obj.contains_key("result") || obj.contains_key("error") => {
            return Message::Response
        }
        None => return invalid(id.unwrap_or(Value::Null), INVALID_REQUEST, "no method"),
    };
    let params = obj.remove("params").unwrap_or(Value::Null);
    if !matches!(params, Value::Object(_) | Value::Array(_) | Value::Null) {
        return invalid(
            id.unwrap_or(Value::Null),
            INVALID_REQUEST,
            "params must be an object",
        );
    }
    match id {
        Some(id) => Message::Request { id, method, params },
        None => Message::Notification { method, params },
    }
}

fn invalid(id: Value, code: i64, message: &str) -> Message {
    Message::Invalid {
        id,
        code,
        message: message.to_string(),
    }
}

/// A successful answer to request `id`.
pub(crate) fn result(id: &Value, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

/// An error answer to request `id`.
pub(crate) fn error(id: &Value, code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

/// Write one message as one line and flush it.
pub(crate) fn write(out: &mut dyn Write, message: &Value) -> std::io::Result<()> {
    let mut line = serde_json::to_vec(message)?;
    line.push(b'\n');
    out.write_all(&line)?;
    out.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(input: &[u8], max: usize) -> Vec<Line> {
        let mut r = std::io::BufReader::with_capacity(4, input);
        let mut out = Vec::new();
        loop {
            match read_line(&mut r, max).unwrap() {
                Line::End => return out,
                l => out.push(l),
            }
        }
    }

    #[test]
    fn lines_are_bounded_and_an_oversized_one_is_skipped_whole() {
        let input = b"{\"a\":1}\r\n0123456789abcdef\nok\nlast";
        assert_eq!(
            lines(input, 10),
            vec![
                Line::Text("{\"a\":1}".into()),
                Line::TooLong,
                Line::Text("ok".into()),
                Line::Text("last".into()),
            ]
        );
        assert_eq!(lines(b"\xff\xfe\n", 10), vec![Line::Garbled]);
        assert_eq!(lines(b"", 10), vec![]);
    }

    #[test]
    fn requests_notifications_and_responses() {
        assert_eq!(
            parse(r#"{"jsonrpc":"2.0","id":7,"method":"ping"}"#),
            Message::Request {
                id: json!(7),
                method: "ping".into(),
                params: Value::Null
            }
        );
        assert_eq!(
            parse(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#),
            Message::Notification {
                method: "notifications/initialized".into(),
                params: Value::Null
            }
        );
        assert_eq!(
            parse(r#"{"jsonrpc":"2.0","id":"x","result":{}}"#),
            Message::Response
        );
        assert_eq!(parse("  "), Message::Blank);
    }

    fn code(m: Message) -> (Value, i64) {
        match m {
            Message::Invalid { id, code, .. } => (id, code),
            other => panic!("accepted: {other:?}"),
        }
    }

    #[test]
    fn malformed_lines_are_refused_with_their_codes() {
        assert_eq!(code(parse("{not json")), (Value::Null, PARSE_ERROR));
        assert_eq!(code(parse("[1,2]")), (Value::Null, INVALID_REQUEST));
        assert_eq!(code(parse("42")), (Value::Null, INVALID_REQUEST));
        assert_eq!(
            code(parse(r#"{"id":1,"method":"ping"}"#)),
            (json!(1), INVALID_REQUEST),
            "no jsonrpc member"
        );
        assert_eq!(
            code(parse(r#"{"jsonrpc":"2.0","id":{},"method":"ping"}"#)),
            (Value::Null, INVALID_REQUEST)
        );
        assert_eq!(
            code(parse(r#"{"jsonrpc":"2.0","id":2,"method":3}"#)),
            (json!(2), INVALID_REQUEST)
        );
        assert_eq!(
            code(parse(r#"{"jsonrpc":"2.0","id":2,"method":"x","params":5}"#)),
            (json!(2), INVALID_REQUEST)
        );
        assert_eq!(
            code(parse(r#"{"jsonrpc":"2.0","id":3}"#)),
            (json!(3), INVALID_REQUEST)
        );
    }

    #[test]
    fn answers_are_one_line_each() {
        let mut out = Vec::new();
        write(&mut out, &result(&json!(1), json!({"a": "b\nc"}))).unwrap();
        write(&mut out, &error(&json!("q"), METHOD_NOT_FOUND, "no")).unwrap();
        let text = String::from_utf8(out).unwrap();
        let got: Vec<Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(got.len(), 2);
        assert_eq!(got[0]["result"]["a"], "b\nc");
        assert_eq!(got[1]["error"]["code"], METHOD_NOT_FOUND);
        assert_eq!(got[1]["id"], "q");
    }
}
