//! `brr exporter`: reads the kernel objects at scrape time, writes them with
//! [`super::prometheus`] and serves them with [`super::http`] until SIGTERM
//! or SIGINT.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::error::{BrrError, Result};
use std::os::fd::{AsFd, OwnedFd};

use super::http::{Handler, HttpRequest, Limits, Response, Server};
use super::prometheus::{self, Process, ProgSample, Scrape};
use crate::kernel::fdinfo::{self, OwnFdinfo};
use crate::kernel::owners::{self, Owners};
use crate::kernel::prog_extra::ExtraReader;
use crate::kernel::{objects, stats::StatsGuard};
use crate::model::Map;
use crate::session::Terminations;

/// Where the exporter listens unless told otherwise: loopback only, so
/// that the BPF inventory is not served to the network by accident.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:9435";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExporterConfig {
    pub listen: SocketAddr,
    /// Hold BPF_ENABLE_STATS for the exporter's life.
    pub stats: bool,
}

const INDEX_HTML: &str = "<!DOCTYPE html>\n<html><head><title>brr exporter</title></head>\n<body><h1>brr exporter</h1>\n<p>Per-program eBPF metrics: <a href=\"/metrics\">/metrics</a></p>\n</body></html>\n";

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

/// Map types whose memory is all allocated when the map is created, so
/// their memlock bytes never change (hash maps may grow; they are re-read).
const FIXED_SIZE_MAPS: [&str; 7] = [
    "array",
    "percpu_array",
    "prog_array",
    "perf_event_array",
    "cgroup_array",
    "array_of_maps",
    "bloom_filter",
];

/// What cannot change while an object lives, read once per object: a
/// program's full name and memlock (fixed when it is loaded) and the
/// memlock of fixed-size maps. Keyed on what also tells a reused ID apart,
/// and pruned to the objects of the last scrape. Reading fdinfo and BTF is
/// most of the cost of a scrape, so a steady host costs only the info
/// calls that bring the counters.
#[derive(Debug, Default)]
pub struct StaticCache {
    progs: HashMap<(u32, String), (Option<String>, Option<u64>)>,
    maps: HashMap<(u32, String, String), u64>,
    owners: OwnersCache,
}

/// How long one owner scan serves the `owners` labels. The scan walks every
/// fd of every process (milliseconds on a busy host), too much for every
/// scrape of a 1 s scrape interval; holders change rarely.
pub const OWNERS_REFRESH: Duration = Duration::from_secs(10);

/// The last owner scan and when it was taken.
#[derive(Debug, Default)]
pub struct OwnersCache {
    last: Option<(Instant, Arc<Owners>)>,
}

impl OwnersCache {
    /// The owners as of at most [`OWNERS_REFRESH`] before `now`, running
    /// `scan` when the last one is older (or there is none). A scan that
    /// cannot read /proc yields no owners, so the labels are empty.
    pub fn get(&mut self, now: Instant, scan: impl FnOnce() -> Owners) -> Arc<Owners> {
        if let Some((at, owners)) = &self.last {
            if now.saturating_duration_since(*at) < OWNERS_REFRESH {
                return Arc::clone(owners);
            }
        }
        let owners = Arc::new(scan());
        self.last = Some((now, Arc::clone(&owners)));
        owners
    }
}

fn map_key(m: &Map) -> (u32, String, String) {
    (m.id, m.name.clone(), m.map_type.clone())
}

impl StaticCache {
    fn update(&mut self, programs: &[ProgSample], maps: &[(Map, Option<u64>)]) {
        // A program whose extras could not be read is tried again.
        self.progs = programs
            .iter()
            .filter(|s| s.full_name.is_some())
            .map(|s| {
                (
                    (s.program.id, s.program.tag.clone()),
                    (s.full_name.clone(), s.memlock),
                )
            })
            .collect();
        self.maps = maps
            .iter()
            .filter(|(m, _)| FIXED_SIZE_MAPS.contains(&m.map_type.as_str()))
            .filter_map(|(m, b)| Some((map_key(m), (*b)?)))
            .collect();
    }
}

/// The memlock line of the fdinfo of one of brr's fds.
fn map_memlock(reader: &mut Option<OwnFdinfo>, fd: &OwnedFd) -> Option<u64> {
    let text = match reader {
        Some(r) => r.read(fd.as_fd()).ok()?,
        None => fdinfo::read_own(fd.as_fd()).ok()?,
    };
    fdinfo::parse_map(&text).memlock
}

/// Read everything one scrape reports.
pub fn scrape(stats_enabled: bool, cache: &Mutex<StaticCache>) -> Result<Scrape> {
    let t = Instant::now();
    // Held for the whole read: concurrent scrapes then share one cache
    // update instead of racing.
    let mut cache = cache.lock().unwrap_or_else(|e| e.into_inner());
    let mut extras: Option<ExtraReader> = None;
    let programs = objects::programs_with(|p, fd| {
        if let Some(known) = cache.progs.get(&(p.id, p.tag.clone())) {
            return known.clone();
        }
        match extras.get_or_insert_with(ExtraReader::new).read(fd) {
            Ok(e) => (Some(e.full_name), e.memlock_bytes),
            Err(_) => (None, None),
        }
    })?
    .into_iter()
    .map(|(program, (full_name, memlock))| ProgSample {
        program,
        full_name,
        memlock,
    })
    .collect::<Vec<_>>();
    let mut reader = None;
    let maps = objects::maps_with(|m, fd| {
        cache.maps.get(&map_key(m)).copied().or_else(|| {
            let r = reader.get_or_insert_with(|| OwnFdinfo::open().ok());
            map_memlock(r, fd)
        })
    })?;
    let links = objects::links()?;
    cache.update(&programs, &maps);
    // Under the lock: scrapes that find the scan stale together wait for one
    // scan, not one each.
    let owners = cache.owners.get(Instant::now(), owners::scan);
    drop(cache);
    let scrape_seconds = t.elapsed().as_secs_f64();
    Ok(Scrape {
        programs,
        maps,
        links,
        stats_enabled,
        scrape_seconds,
        process: process(),
        owners,
    })
}

/// The exporter's routes: `/metrics`, `/`, else 404; GET only.
pub fn route(req: &HttpRequest, metrics: &dyn Fn() -> Result<String>) -> Response {
    let known = matches!(req.path.as_str(), "/" | "/metrics");
    if !known {
        return Response::error(404);
    }
    if req.method != "GET" {
        let mut r = Response::error(405);
        r.allow = Some("GET");
        return r;
    }
    if req.path == "/" {
        return Response::new(200, "text/html; charset=utf-8", INDEX_HTML);
    }
    match metrics() {
        Ok(text) => Response::new(200, prometheus::CONTENT_TYPE, text),
        Err(e) => Response::new(
            500,
            "text/plain; charset=utf-8",
            format!("{}\n", e.render()),
        ),
    }
}

/// Serve until SIGTERM, SIGINT or SIGHUP; statistics (unless turned off)
/// stay on from start to stop.
pub fn run(config: ExporterConfig) -> Result<()> {
    let terminations = Terminations::catch()?;
    let stats = config.stats.then(StatsGuard::enable).transpose()?;
    let cache = Arc::new(Mutex::new(StaticCache::default()));
    // Fail before serving when brr cannot read the objects at all.
    scrape(stats.is_some(), &cache)?;
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
    let enabled = stats.is_some();
    let handler: Arc<Handler> = Arc::new(move |req: &HttpRequest| {
        route(req, &|| {
            scrape(enabled, &cache).map(|s| prometheus::render(&s))
        })
    });
    let running = server
        .start(handler, Limits::default())
        .map_err(|e| BrrError::Failed(format!("cannot start the exporter: {e}")))?;
    let mut err = std::io::stderr();
    {
        use std::io::Write;
        if !local.ip().is_loopback() {
            let _ = writeln!(
                err,
                "brr exporter: listening on a non-loopback address; anyone who can reach {local} can read this host's eBPF inventory"
            );
        }
        let _ = writeln!(err, "brr exporter: serving http://{local}/metrics");
    }
    crate::trace::ready("exporter");
    let mut terminations = terminations;
    terminations.wait();
    running.stop();
    drop(stats);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Program;

    fn req(method: &str, path: &str) -> HttpRequest {
        HttpRequest {
            method: method.into(),
            path: path.into(),
        }
    }

    #[test]
    fn routes() {
        let ok = || Ok("m 1\n".to_string());
        let r = route(&req("GET", "/metrics"), &ok);
        assert_eq!((r.status, r.content_type), (200, prometheus::CONTENT_TYPE));
        assert_eq!(r.body, b"m 1\n");
        let r = route(&req("GET", "/"), &ok);
        assert_eq!(r.status, 200);
        assert!(String::from_utf8(r.body)
            .unwrap()
            .contains("href=\"/metrics\""));
        assert_eq!(route(&req("GET", "/nope"), &ok).status, 404);
        assert_eq!(route(&req("POST", "/nope"), &ok).status, 404);
        let r = route(&req("POST", "/metrics"), &ok);
        assert_eq!((r.status, r.allow), (405, Some("GET")));
        assert_eq!(route(&req("HEAD", "/"), &ok).status, 405);
        let failing = || Err(BrrError::Failed("no".into()));
        let r = route(&req("GET", "/metrics"), &failing);
        assert_eq!((r.status, r.body.as_slice()), (500, &b"brr: no\n"[..]));
    }

    #[test]
    fn static_cache_keeps_only_what_cannot_change() {
        let prog = |id, tag: &str| Program {
            id,
            tag: tag.into(),
            ..Default::default()
        };
        let map = |id, ty: &str| Map {
            id,
            map_type: ty.into(),
            name: "m".into(),
            ..Default::default()
        };
        let sample = |p, name: Option<&str>, memlock| ProgSample {
            program: p,
            full_name: name.map(String::from),
            memlock,
        };
        let mut c = StaticCache::default();
        c.update(
            &[
                sample(prog(1, "aa"), Some("long_name"), Some(4096)),
                sample(prog(2, "bb"), None, None),
            ],
            &[(map(3, "array"), Some(8192)), (map(4, "hash"), Some(100))],
        );
        assert_eq!(
            c.progs.get(&(1, "aa".into())),
            Some(&(Some("long_name".into()), Some(4096)))
        );
        assert_eq!(c.progs.len(), 1, "unread extras are read again");
        assert_eq!(c.maps.get(&(3, "m".into(), "array".into())), Some(&8192));
        assert_eq!(c.maps.len(), 1, "hash maps can grow: not cached");
        // Objects gone from the last scrape leave the cache.
        c.update(&[], &[]);
        assert!(c.progs.is_empty() && c.maps.is_empty());
    }

    #[test]
    fn owner_scans_are_reused_for_the_refresh_period() {
        let held = |pid| Owners {
            progs: [(
                1,
                vec![crate::model::Owner {
                    pid,
                    comm: "x".into(),
                }],
            )]
            .into(),
            ..Default::default()
        };
        let mut c = OwnersCache::default();
        let mut scans = 0;
        let t0 = Instant::now();
        let mut at = |c: &mut OwnersCache, after: Duration, pid| {
            c.get(t0 + after, || {
                scans += 1;
                held(pid)
            })
        };
        assert_eq!(at(&mut c, Duration::ZERO, 10).progs[&1][0].pid, 10);
        let within = OWNERS_REFRESH - Duration::from_millis(1);
        assert_eq!(at(&mut c, within, 20).progs[&1][0].pid, 10, "cached");
        assert_eq!(at(&mut c, OWNERS_REFRESH, 30).progs[&1][0].pid, 30);
        // A clock read from before the last scan does not force a new one.
        assert_eq!(at(&mut c, Duration::ZERO, 40).progs[&1][0].pid, 30);
        assert_eq!(scans, 2);
        // A scan that found nothing (e.g. /proc unreadable) is cached too.
        let mut c = OwnersCache::default();
        assert!(c.get(t0, Owners::default).progs.is_empty());
    }

    #[test]
    fn own_process_figures() {
        let p = process();
        assert!(p.cpu_seconds.is_some_and(|c| c >= 0.0));
        assert!(p.resident_bytes.is_some_and(|r| r > 0));
    }
}
