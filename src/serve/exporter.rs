//! `brr exporter`: asks the collector for the kernel objects at scrape
//! time, writes them with [`super::prometheus`] and serves them with
//! [`super::http`] until SIGTERM or SIGINT; with `--serve-profiles` also
//! CPU profiles ([`super::profiles`]); with `--web-config` over TLS and
//! behind basic auth ([`super::webconfig`]).

use std::io::Write as _;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::mpsc::{self, Sender};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::http::{Handler, HttpRequest, Limits, Response, Server, Serving};
use super::profiles::{self, ProfileServing, Profiler};
use super::prometheus::{self, Process, Scrape};
use super::webconfig::{self, AuthScope};
use crate::error::{BrrError, Result};
use crate::model::{LinkFields, MapFields, ProgFields};
use crate::session::{Collector, InventoryRecall, StatsGuard, Terminations};

/// Where the exporter listens unless told otherwise: loopback only, so
/// that the BPF inventory is not served to the network by accident.
pub(crate) const DEFAULT_LISTEN: &str = "127.0.0.1:9435";

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ExporterConfig {
    pub listen: SocketAddr,
    /// Hold BPF_ENABLE_STATS for the exporter's life.
    pub stats: bool,
    /// Serve CPU profiles (`--serve-profiles`), and how.
    pub profiles: Option<ProfileServing>,
    /// `--web-config`: TLS, client certificates, basic auth.
    pub web_config: Option<PathBuf>,
    /// Which paths basic auth guards (`--profiles-auth-only`).
    pub auth_scope: AuthScope,
}

/// The page at `/`: links to what is served.
fn index_html(profiles: bool) -> String {
    let profile = if profiles {
        format!(
            "<p>CPU profile of the eBPF programs (pprof): <a href=\"{0}?seconds=10\">{0}?seconds=N</a></p>\n",
            profiles::PATH
        )
    } else {
        String::new()
    };
    format!("<!DOCTYPE html>\n<html><head><title>brr exporter</title></head>\n<body><h1>brr exporter</h1>\n<p>Per-program eBPF metrics: <a href=\"/metrics\">/metrics</a></p>\n{profile}</body></html>\n")
}

/// This process's CPU time and resident memory, from /proc/self.
fn process() -> Process {
    let ticks = rustix::param::clock_ticks_per_second() as f64;
    let cpu_seconds = std::fs::read_to_string("/proc/self/stat")
        .ok()
        .and_then(|s| {
            // Fields after the parenthesised command name, which may hold spaces.
            let rest = s.rsplit_once(')')?.1;
            let f: Vec<&str> = rest.split_whitespace().collect();
            let utime: u64 = f.get(11)?.parse().ok()?;
            let stime: u64 = f.get(12)?.parse().ok()?;
            (ticks > 0.0).then(|| (utime + stime) as f64 / ticks)
        });
    let page = rustix::param::page_size() as u64;
    let resident_bytes = std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|s| s.split_whitespace().nth(1)?.parse::<u64>().ok())
        .map(|pages| pages * page);
    Process {
        cpu_seconds,
        resident_bytes,
    }
}

/// How old an owner scan may be for the `*_owner` series. The scan walks
/// every fd of every process (milliseconds on a busy host), too much for
/// every scrape of a 1 s scrape interval; holders change rarely.
pub(crate) const OWNERS_REFRESH: Duration = Duration::from_secs(10);

/// How often objects never scanned for may force an owner scan before
/// [`OWNERS_REFRESH`] would: a new object's holders are served with it,
/// while hosts that load and unload programs all the time cost at most one
/// scan every 2 s, not one per scrape.
pub(crate) const NEW_OBJECT_SCAN_GAP: Duration = Duration::from_secs(2);

/// What the exporter serves of each program: its full name and memlock
/// (both read once per program, then recalled), beside the info struct.
pub(crate) const PROGRAM_FIELDS: ProgFields = ProgFields {
    full_name: true,
    map_ids: false,
    memlock: true,
    pins: false,
    context: false,
};

/// Maps' memlock (recalled for fixed-size maps); links with their targets
/// named, so the `target` label is the TARGET `brr link` prints.
pub(crate) const MAP_FIELDS: MapFields = MapFields {
    fdinfo: true,
    pins: false,
    keepers: false,
};
pub(crate) const LINK_FIELDS: LinkFields = LinkFields {
    target_names: true,
    pins: false,
    keepers: false,
};

/// The size from which the exporter's allocations get their own mappings
/// (glibc's initial threshold, kept from rising).
const LARGE_BLOCK: usize = 128 * 1024;

/// Read everything one scrape reports, through `collector`.
/// `recall` carries what cannot change from one scrape to the next.
pub(crate) fn scrape(
    collector: &Collector,
    stats_enabled: bool,
    recall: &mut InventoryRecall,
) -> Result<Scrape> {
    let t = Instant::now();
    let inv = collector.inventory(
        (PROGRAM_FIELDS, MAP_FIELDS, LINK_FIELDS),
        OWNERS_REFRESH,
        NEW_OBJECT_SCAN_GAP,
        recall,
    )?;
    let scrape_seconds = t.elapsed().as_secs_f64();
    Ok(Scrape {
        programs: inv.programs,
        maps: inv.maps,
        links: inv.links,
        stats_enabled,
        scrape_seconds,
        process: process(),
        owners: inv.owners,
    })
}

/// Where scrapes run: one thread, one scrape at a time. A scrape builds a
/// few hundred KiB of rows and text, and the allocator keeps a pool for
/// each thread that allocates; run on the server's per-connection threads,
/// scrapes would leave memory in as many pools as threads ever scraped.
/// The answer is made there too, gzip included: deflate's state is large
/// for a connection thread's small stack.
struct Scraper {
    requests: Sender<(bool, Sender<Result<Response>>)>,
}

impl Scraper {
    fn spawn(
        collector: Arc<Collector>,
        stats_enabled: bool,
        mut recall: InventoryRecall,
    ) -> Scraper {
        let (requests, rx) = mpsc::channel::<(bool, Sender<Result<Response>>)>();
        std::thread::spawn(move || {
            for (gzip, reply) in rx {
                let scraped = scrape(&collector, stats_enabled, &mut recall);
                let _ = reply.send(scraped.map(|s| metrics_response(prometheus::render(&s), gzip)));
                // The scrape's rows are freed by now: between scrapes they
                // need not stay resident.
                crate::session::give_back_free_pages();
            }
        });
        Scraper { requests }
    }

    /// The answer to `/metrics` from a scrape run now on the scrape
    /// thread, gzipped when `gzip`.
    fn metrics(&self, gzip: bool) -> Result<Response> {
        let gone = || BrrError::Failed("the exporter's scrape thread has stopped".into());
        let (reply, answer) = mpsc::channel();
        self.requests.send((gzip, reply)).map_err(|_| gone())?;
        answer.recv().map_err(|_| gone())?
    }
}

/// The exporter's routes: `/metrics`, `/` and, when `profile` serves
/// them, [`profiles::PATH`]; else 404. GET and HEAD only.
pub(crate) fn route(
    req: &HttpRequest,
    metrics: &dyn Fn(bool) -> Result<Response>,
    profile: Option<&dyn Fn(&HttpRequest) -> Response>,
) -> Response {
    let known = match req.path.as_str() {
        "/" | "/metrics" => true,
        profiles::PATH => profile.is_some(),
        _ => false,
    };
    if !known {
        return Response::error(404);
    }
    if req.method != "GET" && !req.is_head() {
        let mut r = Response::error(405);
        r.allow = Some("GET, HEAD");
        return r;
    }
    match (req.path.as_str(), profile) {
        ("/", _) => Response::new(
            200,
            "text/html; charset=utf-8",
            index_html(profile.is_some()),
        ),
        (profiles::PATH, Some(answer)) => answer(req),
        _ => match metrics(req.accept_gzip) {
            Ok(answer) => answer,
            Err(e) => Response::new(
                500,
                "text/plain; charset=utf-8",
                format!("{}\n", e.render()),
            ),
        },
    }
}

/// `/metrics`' answer, gzipped when the client takes gzip. The fastest
/// level: exposition text repeats itself so much that it still shrinks
/// about 15-fold, for a fraction of the default level's CPU.
fn metrics_response(text: String, gzip: bool) -> Response {
    let mut r = Response::new(200, prometheus::CONTENT_TYPE, text);
    r.headers.push(("Vary", "Accept-Encoding".into()));
    if gzip {
        let mut z = flate2::write::GzEncoder::new(
            Vec::with_capacity(r.body.len() / 8),
            flate2::Compression::fast(),
        );
        if let Ok(body) = z.write_all(&r.body).and_then(|()| z.finish()) {
            r.body = body;
            r.headers.push(("Content-Encoding", "gzip".into()));
        }
    }
    r
}

/// Serve until SIGTERM, SIGINT or SIGHUP; statistics (unless turned off)
/// stay on from start to stop. A capture in progress is ended and not
/// waited for. Scrapes and captures read through `collector`.
pub(crate) fn run(config: ExporterConfig, collector: Arc<Collector>) -> Result<()> {
    let web = config
        .web_config
        .as_deref()
        .map(|path| webconfig::load(path, config.auth_scope))
        .transpose()?;
    let terminations = Terminations::catch()?;
    // A scrape's rows and text are each hundreds of KiB; from their own
    // mappings they are given back once served instead of staying
    // resident between scrapes.
    crate::session::give_back_large_blocks(LARGE_BLOCK);
    if let Some(p) = config.profiles {
        // A rate the kernel refuses fails now, not at every request.
        crate::profile::events::check_frequency(p.frequency)?;
    }
    let stats = config.stats.then(StatsGuard::enable).transpose()?;
    // Fail before serving when brr cannot read the objects at all.
    let mut recall = InventoryRecall::default();
    scrape(&collector, stats.is_some(), &mut recall)?;
    let server = Server::bind(config.listen).map_err(|e| {
        BrrError::Failed(format!(
            "cannot listen on {}: {}",
            config.listen,
            e.raw_os_error()
                .map(|n| crate::sys::Errno(n).text())
                .unwrap_or_else(|| e.to_string())
        ))
    })?;
    let local = server.local_addr();
    let scraper = Scraper::spawn(Arc::clone(&collector), stats.is_some(), recall);
    let profiler = config
        .profiles
        .map(|p| Arc::new(Profiler::new(p, Arc::clone(&collector))));
    let answer = profiler.clone();
    let (tls, extra_headers, door) = match web {
        Some(w) => (w.tls, w.extra_headers, Some(w.door)),
        None => (None, String::new(), None),
    };
    let scheme = if tls.is_some() { "https" } else { "http" };
    let handler: Arc<Handler> = Arc::new(move |req: &HttpRequest| {
        if let Some(refused) = door.as_ref().and_then(|d| d.refuse(req)) {
            return refused;
        }
        let metrics = |gzip| scraper.metrics(gzip);
        match &answer {
            Some(p) => {
                let profile = |r: &HttpRequest| p.answer(r);
                route(req, &metrics, Some(&profile))
            }
            None => route(req, &metrics, None),
        }
    });
    let running = server
        .start(Serving {
            handler,
            limits: Limits::default(),
            tls,
            extra_headers,
        })
        .map_err(|e| BrrError::Failed(format!("cannot start the exporter: {e}")))?;
    let mut err = std::io::stderr();
    {
        if !local.ip().is_loopback() {
            let _ = writeln!(
                err,
                "brr exporter: listening on a non-loopback address; anyone who can reach {local} can read this host's eBPF inventory"
            );
        }
        let _ = writeln!(err, "brr exporter: serving {scheme}://{local}/metrics");
        if profiler.is_some() {
            let _ = writeln!(
                err,
                "brr exporter: serving {scheme}://{local}{}?seconds=N",
                profiles::PATH
            );
        }
    }
    crate::trace::ready("exporter");
    let mut terminations = terminations;
    terminations.wait();
    if let Some(p) = &profiler {
        p.cancel();
    }
    running.stop();
    drop(stats);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(method: &str, target: &str) -> HttpRequest {
        let (path, query) = target.split_once('?').unwrap_or((target, ""));
        HttpRequest {
            method: method.into(),
            path: path.into(),
            query: query.into(),
            ..HttpRequest::default()
        }
    }

    #[test]
    fn routes() {
        let ok = |gzip| Ok(metrics_response("m 1\n".into(), gzip));
        let r = route(&req("GET", "/metrics"), &ok, None);
        assert_eq!((r.status, r.content_type), (200, prometheus::CONTENT_TYPE));
        assert_eq!(r.body, b"m 1\n");
        let r = route(&req("GET", "/"), &ok, None);
        assert_eq!(r.status, 200);
        let page = String::from_utf8(r.body).unwrap();
        assert!(page.contains("href=\"/metrics\""));
        assert!(!page.contains("pprof"), "{page}");
        assert_eq!(route(&req("GET", "/nope"), &ok, None).status, 404);
        assert_eq!(route(&req("POST", "/nope"), &ok, None).status, 404);
        let r = route(&req("POST", "/metrics"), &ok, None);
        assert_eq!((r.status, r.allow), (405, Some("GET, HEAD")));
        // HEAD is routed like GET (the server leaves the body out).
        let head = route(&req("HEAD", "/metrics"), &ok, None);
        assert_eq!((head.status, head.body.len()), (200, 4));
        assert_eq!(route(&req("HEAD", "/"), &ok, None).status, 200);
        let failing = |_| Err(BrrError::Failed("no".into()));
        let r = route(&req("GET", "/metrics"), &failing, None);
        assert_eq!((r.status, r.body.as_slice()), (500, &b"brr: no\n"[..]));
    }

    #[test]
    fn the_profile_path_exists_only_when_profiles_are_served() {
        let ok = |gzip| Ok(metrics_response(String::new(), gzip));
        let path = format!("{}?seconds=3", profiles::PATH);
        for method in ["GET", "HEAD"] {
            assert_eq!(route(&req(method, &path), &ok, None).status, 404);
        }
        let asked = std::cell::RefCell::new(Vec::new());
        let profile = |r: &HttpRequest| {
            asked.borrow_mut().push((r.method.clone(), r.query.clone()));
            Response::new(200, profiles::CONTENT_TYPE, "pb")
        };
        let r = route(&req("GET", &path), &ok, Some(&profile));
        assert_eq!((r.status, r.body.as_slice()), (200, &b"pb"[..]));
        assert_eq!(route(&req("HEAD", &path), &ok, Some(&profile)).status, 200);
        assert_eq!(route(&req("PUT", &path), &ok, Some(&profile)).status, 405);
        let page = route(&req("GET", "/"), &ok, Some(&profile)).body;
        assert!(String::from_utf8(page)
            .unwrap()
            .contains("/debug/pprof/profile?seconds=N"));
        assert_eq!(
            asked.take(),
            vec![
                ("GET".to_string(), "seconds=3".to_string()),
                ("HEAD".to_string(), "seconds=3".to_string())
            ]
        );
    }

    #[test]
    fn metrics_are_gzipped_when_asked() {
        use std::io::Read as _;
        let text = "brr_prog_run_count{id=\"1\"} 5\n".repeat(200);
        let ok = |gzip| Ok(metrics_response(text.clone(), gzip));
        let mut r = req("GET", "/metrics");
        let plain = route(&r, &ok, None);
        assert_eq!(plain.body, text.as_bytes());
        assert_eq!(plain.headers, vec![("Vary", "Accept-Encoding".to_string())]);
        r.accept_gzip = true;
        let zipped = route(&r, &ok, None);
        assert!(zipped
            .headers
            .contains(&("Content-Encoding", "gzip".to_string())));
        assert!(zipped.body.len() * 10 < text.len(), "{}", zipped.body.len());
        let mut back = String::new();
        flate2::read::GzDecoder::new(zipped.body.as_slice())
            .read_to_string(&mut back)
            .unwrap();
        assert_eq!(back, text);
        // The index page and errors are never gzipped.
        assert!(route(&r, &ok, None).status == 200);
        assert!(route(&req("GET", "/"), &ok, None).headers.is_empty());
    }

    #[test]
    fn own_process_figures() {
        let p = process();
        assert!(p.cpu_seconds.is_some_and(|c| c >= 0.0));
        assert!(p.resident_bytes.is_some_and(|r| r > 0));
    }
}
