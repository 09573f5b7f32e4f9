//! A small synchronous HTTP/1.1 server for the exporter: one request per
//! connection, one short-lived thread per connection up to a fixed bound,
//! over TLS ([`rustls`]) when a web config gives a certificate.
//! HEAD is answered like GET without the body.
//!
//! Every resource a client can make the server hold is bounded: the request
//! line, the number and total size of the headers, the time to send them
//! (a per-read timeout and a deadline for the whole request, so a client
//! trickling one byte at a time cannot hold a thread), and the number of
//! connections served at once (beyond it a client gets 503 at once). A
//! TLS handshake happens inside the first read, so the same deadline bounds
//! it, and rustls bounds the size of what a client may send during it. A
//! scrape therefore never waits behind a slow or hostile client unless all
//! connection slots are taken.

use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// What a client may send and how long it may take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Limits {
    pub max_connections: usize,
    pub request_line_bytes: usize,
    pub header_count: usize,
    pub header_bytes: usize,
    /// Longest wait for any one read.
    pub read_timeout: Duration,
    /// Longest time from accepting a connection to its last header byte.
    pub request_deadline: Duration,
    pub write_timeout: Duration,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_connections: 32,
            request_line_bytes: 8 * 1024,
            header_count: 100,
            header_bytes: 16 * 1024,
            read_timeout: Duration::from_secs(5),
            request_deadline: Duration::from_secs(10),
            write_timeout: Duration::from_secs(10),
        }
    }
}

/// The parts of a request the exporter routes on.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct HttpRequest {
    pub method: String,
    /// The target without its query string.
    pub path: String,
    /// The query string (after `?`), as sent; empty without one.
    pub query: String,
    /// The `Authorization` header's value, as sent.
    pub authorization: Option<String>,
    /// Whether `Accept-Encoding` accepts gzip.
    pub accept_gzip: bool,
}

impl HttpRequest {
    /// HEAD: answered like GET, without the body.
    pub(crate) fn is_head(&self) -> bool {
        self.method == "HEAD"
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Response {
    pub status: u16,
    pub content_type: &'static str,
    pub body: Vec<u8>,
    /// The `Allow` header of a 405.
    pub allow: Option<&'static str>,
    /// The `Retry-After` header (seconds) of a 429 or 503.
    pub retry_after: Option<u64>,
    /// The answer to a HEAD whose GET would make a body that is not made
    /// for HEAD (a capture): no `Content-Length`, which HTTP lets a server
    /// leave out of a HEAD answer when only making the body tells it.
    pub length_unknown: bool,
    /// Further headers (`Content-Encoding`, `Vary`, `WWW-Authenticate`).
    pub headers: Vec<(&'static str, String)>,
}

impl Response {
    pub(crate) fn new(
        status: u16,
        content_type: &'static str,
        body: impl Into<Vec<u8>>,
    ) -> Response {
        Response {
            status,
            content_type,
            body: body.into(),
            allow: None,
            retry_after: None,
            length_unknown: false,
            headers: Vec::new(),
        }
    }

    /// A plain-text error response with the status's reason as its body.
    pub(crate) fn error(status: u16) -> Response {
        Response::new(
            status,
            "text/plain; charset=utf-8",
            format!("{}\n", reason(status)),
        )
    }

    /// Status line, headers and body as sent.
    pub(crate) fn to_bytes(&self) -> Vec<u8> {
        self.to_bytes_with("")
    }

    /// Status line, headers, `extra` (whole header lines, each ending in
    /// CRLF) and body.
    fn to_bytes_with(&self, extra: &str) -> Vec<u8> {
        let mut out = self.head_with(extra).into_bytes();
        out.extend_from_slice(&self.body);
        out
    }

    /// Status line and headers: the whole answer to a HEAD request.
    #[cfg(test)]
    pub(crate) fn head(&self) -> String {
        self.head_with("")
    }

    fn head_with(&self, extra: &str) -> String {
        let mut head = format!(
            "HTTP/1.1 {} {}\r\nContent-Type: {}\r\n",
            self.status,
            reason(self.status),
            self.content_type,
        );
        if !self.length_unknown {
            head.push_str(&format!("Content-Length: {}\r\n", self.body.len()));
        }
        head.push_str("Connection: close\r\n");
        if let Some(allow) = self.allow {
            head.push_str(&format!("Allow: {allow}\r\n"));
        }
        if let Some(after) = self.retry_after {
            head.push_str(&format!("Retry-After: {after}\r\n"));
        }
        for (name, value) in &self.headers {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
        head.push_str(extra);
        head.push_str("\r\n");
        head
    }
}

pub(crate) fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        414 => "URI Too Long",
        429 => "Too Many Requests",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        505 => "HTTP Version Not Supported",
        _ => "Unknown",
    }
}

/// Why no request was read.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Rejected {
    /// The client closed (or reset) before sending anything: nothing to
    /// answer.
    Closed,
    /// Answer with this status, then close.
    Status(u16),
}

fn io_rejection(e: &io::Error) -> Rejected {
    match e.kind() {
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => Rejected::Status(408),
        _ => Rejected::Closed,
    }
}

/// One line of at most `max` bytes (without its line end); `Ok(None)` at
/// a clean end of input, `too_long` when the line does not end in time.
fn line(r: &mut impl BufRead, max: usize, too_long: u16) -> Result<Option<Vec<u8>>, Rejected> {
    let mut buf = Vec::new();
    let limit = u64::try_from(max).unwrap_or(u64::MAX).saturating_add(2);
    r.by_ref()
        .take(limit)
        .read_until(b'\n', &mut buf)
        .map_err(|e| io_rejection(&e))?;
    if buf.is_empty() {
        return Ok(None);
    }
    if buf.last() != Some(&b'\n') {
        return Err(if buf.len() > max {
            Rejected::Status(too_long)
        } else {
            // The client stopped in the middle of a line.
            Rejected::Status(400)
        });
    }
    buf.pop();
    if buf.last() == Some(&b'\r') {
        buf.pop();
    }
    if buf.len() > max {
        return Err(Rejected::Status(too_long));
    }
    Ok(Some(buf))
}

/// Read one request head (request line and headers) within `limits`.
pub(crate) fn read_request(r: &mut impl BufRead, limits: &Limits) -> Result<HttpRequest, Rejected> {
    let first = line(r, limits.request_line_bytes, 414)?.ok_or(Rejected::Closed)?;
    let text = std::str::from_utf8(&first).map_err(|_| Rejected::Status(400))?;
    let mut parts = text.split(' ');
    let (Some(method), Some(target), Some(version), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(Rejected::Status(400));
    };
    if method.is_empty() || !method.bytes().all(|b| b.is_ascii_uppercase()) {
        return Err(Rejected::Status(400));
    }
    if !target.starts_with('/') && target != "*" {
        return Err(Rejected::Status(400));
    }
    match version {
        "HTTP/1.1" | "HTTP/1.0" => {}
        v if v.starts_with("HTTP/") => return Err(Rejected::Status(505)),
        _ => return Err(Rejected::Status(400)),
    }
    let mut count = 0usize;
    let mut bytes = 0usize;
    let mut authorization = None;
    let mut accept_gzip = false;
    loop {
        let left = limits.header_bytes.saturating_sub(bytes);
        let Some(h) = line(r, left, 431)? else {
            return Err(Rejected::Status(400));
        };
        if h.is_empty() {
            break;
        }
        count += 1;
        bytes += h.len() + 2;
        if count > limits.header_count {
            return Err(Rejected::Status(431));
        }
        let Some(colon) = h.iter().position(|&b| b == b':') else {
            return Err(Rejected::Status(400));
        };
        if colon == 0 || h.iter().take(colon).any(|b| b.is_ascii_whitespace()) {
            return Err(Rejected::Status(400));
        }
        let (name, value) = h.split_at(colon);
        let value = String::from_utf8_lossy(value.get(1..).unwrap_or_default());
        if name.eq_ignore_ascii_case(b"authorization") {
            authorization = Some(value.trim().to_string());
        } else if name.eq_ignore_ascii_case(b"accept-encoding") {
            accept_gzip |= accepts_gzip(&value);
        }
    }
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    Ok(HttpRequest {
        method: method.to_string(),
        path: path.to_string(),
        query: query.to_string(),
        authorization,
        accept_gzip,
    })
}

/// Whether an `Accept-Encoding` value lists gzip with a weight above 0
/// (`*` is not taken for gzip: identity is always acceptable).
fn accepts_gzip(value: &str) -> bool {
    value.split(',').any(|item| {
        let mut parts = item.split(';');
        let coding = parts.next().unwrap_or_default().trim();
        let refused = parts.any(|p| {
            p.trim()
                .strip_prefix("q=")
                .and_then(|q| q.trim().parse::<f64>().ok())
                .is_some_and(|q| q <= 0.0)
        });
        (coding.eq_ignore_ascii_case("gzip") || coding.eq_ignore_ascii_case("x-gzip")) && !refused
    })
}

/// A socket whose reads each have their timeout cut to what is left of a
/// deadline for the whole request (TLS handshake included).
struct DeadlineStream<'a> {
    stream: &'a TcpStream,
    deadline: Instant,
    per_read: Duration,
}

impl Read for DeadlineStream<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let left = self.deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(io::ErrorKind::TimedOut.into());
        }
        self.stream
            .set_read_timeout(Some(left.min(self.per_read)))?;
        self.stream.read(buf)
    }
}

impl Write for DeadlineStream<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        (&mut &*self.stream).write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// What every connection is served with.
#[derive(Clone)]
pub(crate) struct Serving {
    pub handler: Arc<Handler>,
    pub limits: Limits,
    /// TLS for every connection, when set.
    pub tls: Option<Arc<rustls::ServerConfig>>,
    /// Header lines added to every response (each ending in CRLF).
    pub extra_headers: String,
}

pub(crate) type Handler = dyn Fn(&HttpRequest) -> Response + Send + Sync;

/// Read one request from `io`, answer it; false when the client went
/// away (or failed its handshake) before a request.
fn exchange(io: impl Read + Write, serving: &Serving) -> bool {
    // Small: the limits bound what is kept, not this buffer.
    let mut reader = BufReader::with_capacity(4096, io);
    let extra = serving.extra_headers.as_str();
    let bytes = match read_request(&mut reader, &serving.limits) {
        Ok(req) if req.is_head() => (serving.handler)(&req).head_with(extra).into_bytes(),
        Ok(req) => (serving.handler)(&req).to_bytes_with(extra),
        Err(Rejected::Closed) => return false,
        Err(Rejected::Status(s)) => Response::error(s).to_bytes_with(extra),
    };
    let w = reader.get_mut();
    let _ = w.write_all(&bytes).and_then(|()| w.flush());
    true
}

fn serve_connection(stream: TcpStream, serving: &Serving) {
    let limits = &serving.limits;
    let _ = stream.set_write_timeout(Some(limits.write_timeout));
    let _ = stream.set_nodelay(true);
    let io = DeadlineStream {
        stream: &stream,
        deadline: Instant::now() + limits.request_deadline,
        per_read: limits.read_timeout,
    };
    let answered = match &serving.tls {
        None => exchange(io, serving),
        Some(config) => {
            let Ok(conn) = rustls::ServerConnection::new(Arc::clone(config)) else {
                return;
            };
            let mut tls = rustls::StreamOwned::new(conn, io);
            let answered = exchange(&mut tls, serving);
            if answered {
                tls.conn.send_close_notify();
                let _ = tls.conn.complete_io(&mut tls.sock);
            }
            answered
        }
    };
    if !answered {
        return;
    }
    // Unread request bytes would turn the close into a reset that can
    // discard the response before the client reads it.
    let _ = stream.shutdown(Shutdown::Write);
    let _ = stream.set_read_timeout(Some(Duration::from_millis(200)));
    let mut sink = [0u8; 1024];
    let mut drained = 0usize;
    while let Ok(n) = (&stream).read(&mut sink) {
        drained += n;
        if n == 0 || drained > 64 * 1024 {
            break;
        }
    }
}

/// Gives its connection slot back however the connection thread ends.
struct ConnectionSlot(Arc<AtomicUsize>);

impl Drop for ConnectionSlot {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// A bound listening socket, not yet serving.
pub(crate) struct Server {
    listener: TcpListener,
    local: SocketAddr,
}

impl Server {
    pub(crate) fn bind(addr: SocketAddr) -> io::Result<Server> {
        let listener = TcpListener::bind(addr)?;
        let local = listener.local_addr()?;
        Ok(Server { listener, local })
    }

    /// The address actually bound (the port the kernel chose for port 0).
    pub(crate) fn local_addr(&self) -> SocketAddr {
        self.local
    }

    /// Serve on a thread of its own until [`RunningServer::stop`].
    pub(crate) fn start(self, serving: Serving) -> io::Result<RunningServer> {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let local = self.local;
        let active = Arc::new(AtomicUsize::new(0));
        let counter = Arc::clone(&active);
        let thread = std::thread::Builder::new()
            .name("brr-http".into())
            .spawn(move || accept_loop(self.listener, &serving, &flag, &counter))?;
        Ok(RunningServer {
            stop,
            local,
            thread,
            #[cfg(test)]
            active,
        })
    }
}

fn accept_loop(
    listener: TcpListener,
    serving: &Serving,
    stop: &AtomicBool,
    active: &Arc<AtomicUsize>,
) {
    for conn in listener.incoming() {
        if stop.load(Ordering::SeqCst) {
            break;
        }
        let Ok(stream) = conn else {
            // EMFILE and friends: back off instead of spinning on a
            // listener that stays readable.
            std::thread::sleep(Duration::from_millis(50));
            continue;
        };
        if active.fetch_add(1, Ordering::SeqCst) >= serving.limits.max_connections {
            let slot = ConnectionSlot(Arc::clone(active));
            if serving.tls.is_some() {
                // Plain text would not reach a TLS client: just close.
                drop(slot);
                continue;
            }
            // A fresh socket's send buffer takes this without blocking.
            let _ = stream.set_write_timeout(Some(Duration::from_millis(100)));
            let _ = (&stream).write_all(&Response::error(503).to_bytes());
            // What the client already sent is read without waiting, so that
            // closing does not reset the connection over unread bytes.
            let _ = stream.shutdown(Shutdown::Write);
            if stream.set_nonblocking(true).is_ok() {
                let mut sink = [0u8; 4096];
                let _ = (&stream).read(&mut sink);
            }
            drop(slot);
            continue;
        }
        let slot = ConnectionSlot(Arc::clone(active));
        let serving = serving.clone();
        let spawned = std::thread::Builder::new()
            .name("brr-http-conn".into())
            .stack_size(256 * 1024)
            .spawn(move || {
                let _slot = slot;
                serve_connection(stream, &serving);
            });
        // A thread that could not start dropped its closure, and with it
        // the slot and the connection.
        drop(spawned);
    }
}

/// A serving server.
pub(crate) struct RunningServer {
    stop: Arc<AtomicBool>,
    local: SocketAddr,
    thread: JoinHandle<()>,
    #[cfg(test)]
    active: Arc<AtomicUsize>,
}

impl RunningServer {
    /// Connections being served now.
    #[cfg(test)]
    pub(crate) fn connections(&self) -> usize {
        self.active.load(Ordering::SeqCst)
    }

    /// Stop accepting; connections in progress finish on their own
    /// threads (each within its limits).
    pub(crate) fn stop(self) {
        self.stop.store(true, Ordering::SeqCst);
        // accept() has no timeout: a connection of our own wakes it.
        let mut wake = self.local;
        if wake.ip().is_unspecified() {
            wake.set_ip(match wake {
                SocketAddr::V4(_) => std::net::Ipv4Addr::LOCALHOST.into(),
                SocketAddr::V6(_) => std::net::Ipv6Addr::LOCALHOST.into(),
            });
        }
        if TcpStream::connect_timeout(&wake, Duration::from_secs(1)).is_ok() {
            let _ = self.thread.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(bytes: &[u8]) -> Result<HttpRequest, Rejected> {
        read_request(&mut &bytes[..], &Limits::default())
    }

    #[test]
    fn requests() {
        assert_eq!(
            parse(b"GET /metrics?x=1 HTTP/1.1\r\nHost: a\r\nAccept: */*\r\n\r\n"),
            Ok(HttpRequest {
                method: "GET".into(),
                path: "/metrics".into(),
                query: "x=1".into(),
                ..HttpRequest::default()
            })
        );
        let r = parse(b"GET / HTTP/1.1\r\nauthorization:  Basic eDp5 \r\nAccept-Encoding: br, GZIP;q=0.5\r\n\r\n").unwrap();
        assert_eq!(
            (r.authorization.as_deref(), r.accept_gzip),
            (Some("Basic eDp5"), true)
        );
        assert_eq!(
            parse(b"POST / HTTP/1.0\n\n").map(|r| r.method),
            Ok("POST".into())
        );
        let r = parse(b"HEAD /p?seconds=3&a=b?c HTTP/1.1\r\n\r\n").unwrap();
        assert!(r.is_head());
        assert_eq!(
            (r.path.as_str(), r.query.as_str()),
            ("/p", "seconds=3&a=b?c")
        );
        assert_eq!(parse(b"GET /m? HTTP/1.1\r\n\r\n").unwrap().query, "");
        assert_eq!(parse(b""), Err(Rejected::Closed));
        for bad in [
            &b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\r\n\r\n"[..],
            b"GET /\r\n\r\n",
            b"GET  / HTTP/1.1\r\n\r\n",
            b"get / HTTP/1.1\r\n\r\n",
            b"GET metrics HTTP/1.1\r\n\r\n",
            b"GET / FTP/1.0\r\n\r\n",
            b"GET / HTTP/1.1\r\nno colon\r\n\r\n",
            b"GET / HTTP/1.1\r\n: empty name\r\n\r\n",
            b"GET / HTTP/1.1\r\nHost: a\r\n",
            b"GET / HTTP/1.1\r\nHo",
            b"GET / HT",
        ] {
            assert_eq!(parse(bad), Err(Rejected::Status(400)), "{bad:?}");
        }
        assert_eq!(parse(b"GET / HTTP/2.0\r\n\r\n"), Err(Rejected::Status(505)));
    }

    #[test]
    fn gzip_is_accepted_when_listed_with_a_weight() {
        for (value, gzip) in [
            ("gzip", true),
            ("deflate, gzip", true),
            ("x-gzip;q=1", true),
            ("gzip;q=0", false),
            ("gzip; q=0.0", false),
            ("identity", false),
            ("*", false),
            ("gzipped", false),
            ("", false),
        ] {
            assert_eq!(accepts_gzip(value), gzip, "{value}");
        }
    }

    #[test]
    fn limits() {
        let l = Limits::default();
        let long = format!("GET /{} HTTP/1.1\r\n\r\n", "a".repeat(l.request_line_bytes));
        assert_eq!(parse(long.as_bytes()), Err(Rejected::Status(414)));
        let endless = vec![b'G'; 1 << 20];
        assert_eq!(parse(&endless), Err(Rejected::Status(414)));
        let many = format!(
            "GET / HTTP/1.1\r\n{}\r\n",
            "A: b\r\n".repeat(l.header_count + 1)
        );
        assert_eq!(parse(many.as_bytes()), Err(Rejected::Status(431)));
        let ok = format!(
            "GET / HTTP/1.1\r\n{}\r\n",
            "A: b\r\n".repeat(l.header_count)
        );
        assert!(parse(ok.as_bytes()).is_ok());
        let big = format!(
            "GET / HTTP/1.1\r\nA: {}\r\n\r\n",
            "b".repeat(l.header_bytes)
        );
        assert_eq!(parse(big.as_bytes()), Err(Rejected::Status(431)));
        let split = format!(
            "GET / HTTP/1.1\r\nA: {}\r\nB: {}\r\n\r\n",
            "b".repeat(l.header_bytes / 2),
            "c".repeat(l.header_bytes / 2)
        );
        assert_eq!(parse(split.as_bytes()), Err(Rejected::Status(431)));
    }

    #[test]
    fn responses() {
        let mut r = Response::error(405);
        r.allow = Some("GET");
        let text = String::from_utf8(r.to_bytes()).unwrap();
        assert_eq!(
            text,
            "HTTP/1.1 405 Method Not Allowed\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: 19\r\nConnection: close\r\nAllow: GET\r\n\r\nMethod Not Allowed\n"
        );
        let mut r = Response::error(429);
        r.retry_after = Some(7);
        assert_eq!(
            r.head(),
            "HTTP/1.1 429 Too Many Requests\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: 18\r\nConnection: close\r\nRetry-After: 7\r\n\r\n"
        );
        let mut r = Response::new(200, "application/octet-stream", "");
        r.length_unknown = true;
        assert_eq!(
            r.head(),
            "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nConnection: close\r\n\r\n"
        );
    }

    fn get(addr: SocketAddr, raw: &[u8]) -> String {
        let mut s = TcpStream::connect(addr).unwrap();
        s.write_all(raw).unwrap();
        let mut out = String::new();
        s.read_to_string(&mut out).unwrap();
        out
    }

    #[test]
    fn serves_stalled_clients_do_not_block_and_stop_ends_it() {
        let server = Server::bind("127.0.0.1:0".parse().unwrap()).unwrap();
        let addr = server.local_addr();
        let limits = Limits {
            max_connections: 3,
            read_timeout: Duration::from_secs(2),
            request_deadline: Duration::from_secs(3),
            ..Limits::default()
        };
        let handler: Arc<Handler> =
            Arc::new(|r: &HttpRequest| Response::new(200, "text/plain", r.path.clone()));
        let running = server
            .start(Serving {
                handler,
                limits,
                tls: None,
                extra_headers: "X-Frame-Options: deny\r\n".into(),
            })
            .unwrap();
        // Two stalled connections hold two of the three slots.
        let stalled: Vec<TcpStream> = (0..2)
            .map(|_| {
                let mut s = TcpStream::connect(addr).unwrap();
                s.write_all(b"GET / HT").unwrap();
                s
            })
            .collect();
        let settle = |n: usize| {
            let t = Instant::now();
            while running.connections() != n && t.elapsed() < Duration::from_secs(5) {
                std::thread::sleep(Duration::from_millis(5));
            }
            assert_eq!(running.connections(), n);
        };
        settle(2);
        let t = Instant::now();
        let ok = get(addr, b"GET /x HTTP/1.1\r\n\r\n");
        assert!(
            ok.starts_with("HTTP/1.1 200 OK\r\n") && ok.ends_with("\r\n\r\n/x"),
            "{ok}"
        );
        assert!(t.elapsed() < Duration::from_secs(1));
        // HEAD: the GET answer's status and headers, no body.
        settle(2);
        let head = get(addr, b"HEAD /xyz HTTP/1.1\r\n\r\n");
        assert_eq!(
            head,
            "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 4\r\nConnection: close\r\nX-Frame-Options: deny\r\n\r\n"
        );
        // With every slot taken, the next client hears 503 at once.
        settle(2);
        let third = TcpStream::connect(addr).unwrap();
        settle(3);
        let mut busy = String::new();
        TcpStream::connect(addr)
            .unwrap()
            .read_to_string(&mut busy)
            .unwrap();
        assert!(busy.starts_with("HTTP/1.1 503 "), "{busy}");
        drop(third);
        // The stalled clients are timed out with 408.
        for mut s in stalled {
            let mut out = String::new();
            s.read_to_string(&mut out).unwrap();
            assert!(out.starts_with("HTTP/1.1 408 "), "{out}");
        }
        running.stop();
        assert!(TcpStream::connect(addr).is_err());
    }
}
