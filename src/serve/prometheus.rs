//! The Prometheus text exposition format (0.0.4) of one scrape: plain data
//! in, text out, so that every rule of the format is testable without a
//! kernel.
//!
//! Series are keyed on the program, map and link IDs, which the kernel never
//! reuses while the object lives, so two programs with the same 15-byte name
//! never collide; names and tags are labels of the `*_info` series only.

use std::fmt::Write;
use std::sync::Arc;

use crate::model::{Link, Map, Owner, Program};
use crate::session::context::{HeldKind, Owners};

/// Everything one scrape reports: programs with their full names and
/// memlock, maps with their memlock (`None` where the kernel did not say).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Scrape {
    pub programs: Vec<Program>,
    pub maps: Vec<Map>,
    pub links: Vec<Link>,
    /// Whether the exporter holds statistics on; without it the run
    /// counters are not served (they would not advance).
    pub stats_enabled: bool,
    /// Seconds spent reading the kernel objects for this scrape.
    pub scrape_seconds: f64,
    pub process: Process,
    /// The processes holding fds on each object, from the last owner scan
    /// (shared between scrapes: it is refreshed less often than they run).
    pub owners: Arc<Owners>,
}

/// At most this many holders are named in an `owners` label; the rest are
/// counted, so that a host where hundreds of workers share one map does not
/// mint a new series whenever one of them restarts.
pub const MAX_NAMED_OWNERS: usize = 5;

/// The `owners` label: `comm(pid)` per holder in pid order, joined by `,`,
/// then `+N` for holders beyond [`MAX_NAMED_OWNERS`]; empty when none.
pub fn owners_label(owners: &[Owner]) -> String {
    let mut out = String::new();
    for (i, o) in owners.iter().take(MAX_NAMED_OWNERS).enumerate() {
        if i > 0 {
            out.push(',');
        }
        let _ = write!(out, "{}({})", o.comm, o.pid);
    }
    if owners.len() > MAX_NAMED_OWNERS {
        let _ = write!(out, ",+{}", owners.len() - MAX_NAMED_OWNERS);
    }
    out
}

/// The exporter's own cost.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Process {
    pub cpu_seconds: Option<f64>,
    pub resident_bytes: Option<u64>,
}

/// The HTTP `Content-Type` of [`render`]'s text.
pub const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// A label value with `\`, `"` and newline escaped as the format requires.
pub fn label_value(v: &str, out: &mut String) {
    for c in v.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
}

/// A float sample value: Prometheus reads Go float syntax, which Rust's
/// shortest round-trip form is a subset of, plus its own spellings of the
/// non-finite values.
fn float(v: f64) -> String {
    if v.is_nan() {
        "NaN".into()
    } else if v.is_infinite() {
        if v > 0.0 { "+Inf" } else { "-Inf" }.into()
    } else {
        format!("{v:?}")
    }
}

/// One metric family: its HELP and TYPE lines, then samples.
struct Family<'a> {
    out: &'a mut String,
    name: &'static str,
}

impl<'a> Family<'a> {
    fn new(out: &'a mut String, name: &'static str, kind: &str, help: &str) -> Family<'a> {
        // HELP text escapes only `\` and newline; ours are fixed ASCII.
        let _ = writeln!(out, "# HELP {name} {help}");
        let _ = writeln!(out, "# TYPE {name} {kind}");
        Family { out, name }
    }

    fn sample(&mut self, labels: &[(&str, &str)], value: &str) {
        self.out.push_str(self.name);
        if !labels.is_empty() {
            self.out.push('{');
            for (i, (k, v)) in labels.iter().enumerate() {
                if i > 0 {
                    self.out.push(',');
                }
                self.out.push_str(k);
                self.out.push_str("=\"");
                label_value(v, self.out);
                self.out.push('"');
            }
            self.out.push('}');
        }
        self.out.push(' ');
        self.out.push_str(value);
        self.out.push('\n');
    }
}

/// What a link is attached to, as one label: the attach type and the
/// target object or BTF ID the kernel reports, `-` when it reports none.
pub fn link_target(l: &Link) -> String {
    let mut parts = Vec::new();
    if let Some(a) = &l.attach_type {
        parts.push(a.clone());
    }
    if let Some(o) = l.target_obj_id {
        parts.push(format!("obj:{o}"));
    }
    if let Some(b) = l.target_btf_id {
        parts.push(format!("btf:{b}"));
    }
    if parts.is_empty() {
        "-".into()
    } else {
        parts.join(" ")
    }
}

/// Per-program families.
fn programs(s: &Scrape, out: &mut String) {
    let progs = &s.programs;
    let mut f = Family::new(
        out,
        "brr_prog_info",
        "gauge",
        "Loaded eBPF program (value 1); its tag, names, type and holders as labels.",
    );
    for p in progs {
        let id = p.id.to_string();
        let owners = owners_label(s.owners.of(HeldKind::Prog, p.id));
        f.sample(
            &[
                ("id", &id),
                ("tag", &p.tag),
                ("name", &p.name),
                ("full_name", p.display_name()),
                ("type", &p.prog_type),
                ("owners", &owners),
            ],
            "1",
        );
    }
    type Getter = fn(&Program) -> Option<String>;
    let mut per_prog: Vec<(&'static str, &str, &str, Getter)> = Vec::new();
    if s.stats_enabled {
        per_prog.push((
            "brr_prog_run_count_total",
            "counter",
            "Runs of the program counted while statistics were enabled.",
            |p| Some(p.run_count.to_string()),
        ));
        per_prog.push((
            "brr_prog_run_time_seconds_total",
            "counter",
            "Time spent running the program while statistics were enabled.",
            |p| Some(float(p.run_time_ns as f64 / 1e9)),
        ));
    }
    per_prog.extend([
        (
            "brr_prog_recursion_misses_total",
            "counter",
            "Runs skipped because the program was already running on that CPU.",
            (|p| Some(p.recursion_misses.to_string())) as Getter,
        ),
        (
            "brr_prog_memlock_bytes",
            "gauge",
            "Memory the kernel charges for the program (fdinfo memlock).",
            |p| p.memlock_bytes.map(|m| m.to_string()),
        ),
        (
            "brr_prog_xlated_bytes",
            "gauge",
            "Size of the program's translated instructions.",
            |p| Some(p.xlated_size.to_string()),
        ),
        (
            "brr_prog_jited_bytes",
            "gauge",
            "Size of the program's JIT-compiled code.",
            |p| Some(p.jited_size.to_string()),
        ),
    ]);
    for (name, kind, help, value) in per_prog {
        let mut f = Family::new(out, name, kind, help);
        for p in progs {
            if let Some(v) = value(p) {
                f.sample(&[("id", &p.id.to_string())], &v);
            }
        }
    }
}

fn maps_and_links(s: &Scrape, out: &mut String) {
    let mut f = Family::new(
        out,
        "brr_map_info",
        "gauge",
        "Loaded eBPF map (value 1); its name, type and holders as labels.",
    );
    for m in &s.maps {
        f.sample(
            &[
                ("id", &m.id.to_string()),
                ("name", &m.name),
                ("type", &m.map_type),
                ("owners", &owners_label(s.owners.of(HeldKind::Map, m.id))),
            ],
            "1",
        );
    }
    let mut f = Family::new(
        out,
        "brr_map_memlock_bytes",
        "gauge",
        "Memory the kernel charges for the map (fdinfo memlock).",
    );
    for m in &s.maps {
        if let Some(b) = m.memlock_bytes {
            f.sample(&[("id", &m.id.to_string())], &b.to_string());
        }
    }
    let mut f = Family::new(
        out,
        "brr_link_info",
        "gauge",
        "eBPF link (value 1): the program it attaches, its type, target and holders.",
    );
    for l in &s.links {
        f.sample(
            &[
                ("id", &l.id.to_string()),
                ("prog_id", &l.prog_id.to_string()),
                ("type", &l.link_type),
                ("target", &link_target(l)),
                ("owners", &owners_label(s.owners.of(HeldKind::Link, l.id))),
            ],
            "1",
        );
    }
}

fn own_state(s: &Scrape, out: &mut String) {
    Family::new(
        out,
        "brr_scrape_duration_seconds",
        "gauge",
        "Time this scrape spent reading the kernel's eBPF objects.",
    )
    .sample(&[], &float(s.scrape_seconds));
    Family::new(
        out,
        "brr_stats_enabled",
        "gauge",
        "1 when the exporter holds BPF_ENABLE_STATS, so run counters advance.",
    )
    .sample(&[], if s.stats_enabled { "1" } else { "0" });
    if let Some(cpu) = s.process.cpu_seconds {
        Family::new(
            out,
            "process_cpu_seconds_total",
            "counter",
            "Total user and system CPU time spent in seconds.",
        )
        .sample(&[], &float(cpu));
    }
    if let Some(rss) = s.process.resident_bytes {
        Family::new(
            out,
            "process_resident_memory_bytes",
            "gauge",
            "Resident memory size in bytes.",
        )
        .sample(&[], &rss.to_string());
    }
}

/// The exposition text of one scrape.
pub fn render(s: &Scrape) -> String {
    let mut out = String::with_capacity(256 + s.programs.len() * 400);
    programs(s, &mut out);
    maps_and_links(s, &mut out);
    own_state(s, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scrape(stats: bool) -> Scrape {
        Scrape {
            programs: vec![Program {
                id: 7,
                prog_type: "socket_filter".into(),
                name: "a\"b\\c\nd".into(),
                tag: "00ff".into(),
                xlated_size: 16,
                jited_size: 20,
                run_count: 3,
                run_time_ns: 1_500_000_000,
                recursion_misses: 2,
                full_name: "a_much_longer_function_name".into(),
                memlock_bytes: Some(4096),
                ..Default::default()
            }],
            maps: vec![Map {
                id: 9,
                map_type: "array".into(),
                name: "m".into(),
                ..Default::default()
            }],
            links: vec![Link {
                id: 3,
                link_type: "cgroup".into(),
                prog_id: 7,
                attach_type: Some("cgroup_inet_ingress".into()),
                target_obj_id: Some(11),
                ..Default::default()
            }],
            stats_enabled: stats,
            scrape_seconds: 0.00125,
            process: Process {
                cpu_seconds: Some(0.5),
                resident_bytes: Some(1 << 20),
            },
            owners: Arc::new(Owners {
                progs: [(7, vec![owner(12, "loader"), owner(300, "a\"b\\c")])].into(),
                maps: Default::default(),
                links: [(3, vec![owner(1, "systemd")])].into(),
                perf_attached: Default::default(),
            }),
        }
    }

    fn owner(pid: u32, comm: &str) -> Owner {
        Owner {
            pid,
            comm: comm.into(),
        }
    }

    #[test]
    fn owners_label_text() {
        assert_eq!(owners_label(&[]), "");
        assert_eq!(owners_label(&[owner(4, "bpftrace")]), "bpftrace(4)");
        assert_eq!(owners_label(&[owner(4, ""), owner(9, "x y")]), "(4),x y(9)");
        let many: Vec<_> = (1..=7).map(|p| owner(p, "w")).collect();
        assert_eq!(owners_label(&many), "w(1),w(2),w(3),w(4),w(5),+2");
        assert_eq!(owners_label(&many[..5]), "w(1),w(2),w(3),w(4),w(5)");
        assert_eq!(owners_label(&many[..6]), "w(1),w(2),w(3),w(4),w(5),+1");
    }

    #[test]
    fn families_and_escaping() {
        let text = render(&scrape(true));
        assert!(text.contains(
            "brr_prog_info{id=\"7\",tag=\"00ff\",name=\"a\\\"b\\\\c\\nd\",full_name=\"a_much_longer_function_name\",type=\"socket_filter\",owners=\"loader(12),a\\\"b\\\\c(300)\"} 1\n"
        ));
        assert!(text.contains(
            "# TYPE brr_prog_run_count_total counter\nbrr_prog_run_count_total{id=\"7\"} 3\n"
        ));
        assert!(text.contains("brr_prog_run_time_seconds_total{id=\"7\"} 1.5\n"));
        assert!(text.contains("brr_prog_recursion_misses_total{id=\"7\"} 2\n"));
        assert!(text.contains("brr_prog_memlock_bytes{id=\"7\"} 4096\n"));
        assert!(text.contains("brr_prog_xlated_bytes{id=\"7\"} 16\n"));
        assert!(text.contains("brr_prog_jited_bytes{id=\"7\"} 20\n"));
        assert!(text.contains("brr_map_info{id=\"9\",name=\"m\",type=\"array\",owners=\"\"} 1\n"));
        // A map whose memlock is unknown has no sample, but the family stays.
        assert!(text.contains("# TYPE brr_map_memlock_bytes gauge\n# HELP brr_link_info"));
        assert!(text.contains(
            "brr_link_info{id=\"3\",prog_id=\"7\",type=\"cgroup\",target=\"cgroup_inet_ingress obj:11\",owners=\"systemd(1)\"} 1\n"
        ));
        assert!(text.contains("brr_scrape_duration_seconds 0.00125\n"));
        assert!(text.contains("brr_stats_enabled 1\n"));
        assert!(text.contains("process_cpu_seconds_total 0.5\n"));
        assert!(text.contains("process_resident_memory_bytes 1048576\n"));
        assert!(text.ends_with('\n'));
        // Every line is a comment or one sample with a value.
        for line in text.lines() {
            assert!(
                line.starts_with("# ") || line.rsplit_once(' ').is_some(),
                "{line}"
            );
        }
    }

    #[test]
    fn without_stats_the_run_counters_are_not_served() {
        let text = render(&scrape(false));
        assert!(!text.contains("brr_prog_run_count_total"));
        assert!(!text.contains("brr_prog_run_time_seconds_total"));
        assert!(text.contains("brr_prog_recursion_misses_total{id=\"7\"} 2\n"));
        assert!(text.contains("brr_stats_enabled 0\n"));
    }

    #[test]
    fn empty_host_and_unknown_process_figures() {
        let text = render(&Scrape::default());
        assert!(!text.contains("process_"));
        assert!(!text.contains("{"));
        assert!(text.contains("brr_scrape_duration_seconds 0.0\n"));
    }

    #[test]
    fn float_values() {
        assert_eq!(float(1.5), "1.5");
        assert_eq!(float(1e-9), "1e-9");
        assert_eq!(float(f64::NAN), "NaN");
        assert_eq!(float(f64::NEG_INFINITY), "-Inf");
        assert_eq!(float(12345678.0), "12345678.0");
    }

    #[test]
    fn link_targets() {
        let mut l = Link::default();
        assert_eq!(link_target(&l), "-");
        l.target_btf_id = Some(5);
        assert_eq!(link_target(&l), "btf:5");
    }
}
