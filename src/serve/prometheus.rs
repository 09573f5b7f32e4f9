//! The Prometheus text exposition format (0.0.4) of one scrape: plain data
//! in, text out, so that every rule of the format is testable without a
//! kernel.
//!
//! Series are keyed on the program, map and link IDs, which the kernel never
//! reuses while the object lives, so two programs with the same 15-byte name
//! never collide; names and tags are labels of the `*_info` series only,
//! whose labels never change while the object lives. Who holds an object
//! is one `*_owner` series per holder, so that a holder starting or exiting
//! adds or ends its own series and leaves the others alone.

use std::fmt::Write;
use std::sync::Arc;

use crate::model::{Link, Map, Program};
use crate::session::context::{HeldKind, OwnerScan};

/// Everything one scrape reports: programs with their full names and
/// memlock, maps with their memlock (`None` where the kernel did not say).
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Scrape {
    pub programs: Vec<Program>,
    pub maps: Vec<Map>,
    pub links: Vec<Link>,
    /// Whether the exporter holds statistics on; without it the run
    /// counters are not served (they would not advance).
    pub stats_enabled: bool,
    /// Seconds spent reading the kernel objects for this scrape.
    pub scrape_seconds: f64,
    pub process: Process,
    /// The processes holding fds on each object and where they run, from
    /// the last owner scan (shared between scrapes: it is refreshed less
    /// often than they run).
    pub owners: Arc<OwnerScan>,
}

/// The exporter's own cost.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct Process {
    pub cpu_seconds: Option<f64>,
    pub resident_bytes: Option<u64>,
}

/// The HTTP `Content-Type` of [`render`]'s text.
pub(crate) const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// A label value with `\`, `"` and newline escaped as the format requires.
pub(crate) fn label_value(v: &str, out: &mut String) {
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

/// What a link is attached to, as one label: the TARGET `brr link`
/// prints (one decoder for both), `-` when the kernel reports none.
pub(crate) fn link_target(l: &Link) -> String {
    l.target.clone().unwrap_or_else(|| "-".into())
}

/// Per-program families.
fn programs(s: &Scrape, out: &mut String) {
    let progs = &s.programs;
    let mut f = Family::new(
        out,
        "brr_prog_info",
        "gauge",
        "Loaded eBPF program (value 1); its tag, names and type as labels.",
    );
    for p in progs {
        let id = p.id.to_string();
        f.sample(
            &[
                ("id", &id),
                ("tag", &p.tag),
                ("name", &p.name),
                ("full_name", p.display_name()),
                ("type", &p.prog_type),
            ],
            "1",
        );
    }
    owner_family(
        out,
        "brr_prog_owner",
        "A process holding an fd on the program (value 1), one series per holder, with its container and pod.",
        &s.owners,
        HeldKind::Prog,
        progs.iter().map(|p| p.id),
    );
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
            (|p| p.recursion_misses.map(|m| m.to_string())) as Getter,
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
        "Loaded eBPF map (value 1); its name and type as labels.",
    );
    for m in &s.maps {
        f.sample(
            &[
                ("id", &m.id.to_string()),
                ("name", &m.name),
                ("type", &m.map_type),
            ],
            "1",
        );
    }
    owner_family(
        out,
        "brr_map_owner",
        "A process holding an fd on the map (value 1), one series per holder, with its container and pod.",
        &s.owners,
        HeldKind::Map,
        s.maps.iter().map(|m| m.id),
    );
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
        "eBPF link (value 1): the program it attaches, its type and target.",
    );
    for l in &s.links {
        f.sample(
            &[
                ("id", &l.id.to_string()),
                ("prog_id", &l.prog_id.to_string()),
                ("type", &l.link_type),
                ("target", &link_target(l)),
            ],
            "1",
        );
    }
    owner_family(
        out,
        "brr_link_owner",
        "A process holding an fd on the link (value 1), one series per holder, with its container and pod.",
        &s.owners,
        HeldKind::Link,
        s.links.iter().map(|l| l.id),
    );
}

/// One `*_owner` family: a series per holder of each served object, labelled
/// with the object's `id`, the holder's `pid` and `comm`, and its
/// `container` (name), `container_id`, `pod` and `namespace`, empty where
/// it runs outside one or the host does not name it.
fn owner_family(
    out: &mut String,
    name: &'static str,
    help: &str,
    scan: &OwnerScan,
    kind: HeldKind,
    ids: impl Iterator<Item = u32>,
) {
    let mut f = Family::new(out, name, "gauge", help);
    for id in ids {
        let id_text = id.to_string();
        for o in scan.of(kind, id) {
            let w = scan.workload(o.pid);
            let c = w.and_then(|w| w.container.as_ref());
            let p = w.and_then(|w| w.pod.as_ref());
            f.sample(
                &[
                    ("id", &id_text),
                    ("pid", &o.pid.to_string()),
                    ("comm", &o.comm),
                    ("container", c.and_then(|c| c.name.as_deref()).unwrap_or("")),
                    ("container_id", c.map_or("", |c| c.id.as_str())),
                    ("pod", p.and_then(|p| p.name.as_deref()).unwrap_or("")),
                    (
                        "namespace",
                        p.and_then(|p| p.namespace.as_deref()).unwrap_or(""),
                    ),
                ],
                "1",
            );
        }
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
pub(crate) fn render(s: &Scrape) -> String {
    let mut out = String::with_capacity(256 + s.programs.len() * 400);
    programs(s, &mut out);
    maps_and_links(s, &mut out);
    own_state(s, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Owner;
    use crate::session::context::Owners;

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
                recursion_misses: Some(2),
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
                target: Some("/brr.slice".into()),
                ..Default::default()
            }],
            stats_enabled: stats,
            scrape_seconds: 0.00125,
            process: Process {
                cpu_seconds: Some(0.5),
                resident_bytes: Some(1 << 20),
            },
            owners: Arc::new(owners()),
        }
    }

    fn owner(pid: u32, comm: &str) -> Owner {
        Owner {
            pid,
            comm: comm.into(),
        }
    }

    /// Two holders of program 7, one of them in a pod's container; one of
    /// link 3; one of program 8, which is not served.
    fn owners() -> OwnerScan {
        let pod = format!(
            "/kubepods.slice/kubepods-pod{}.slice/cri-containerd-{}.scope",
            "0123abcd_0000_4000_8000_000000000001",
            "c1".repeat(32)
        );
        let mut w = crate::kernel::cgroups::workload(&pod);
        if let Some(c) = w.container.as_mut() {
            c.name = Some("agent".into());
        }
        if let Some(p) = w.pod.as_mut() {
            p.namespace = Some("kube-system".into());
            p.name = Some("agent-x7k2p".into());
        }
        OwnerScan {
            owners: Owners {
                progs: [
                    (7, vec![owner(12, "loader"), owner(300, "a\"b\\c")]),
                    (8, vec![owner(12, "loader")]),
                ]
                .into(),
                maps: Default::default(),
                links: [(3, vec![owner(1, "systemd")])].into(),
                ..Owners::default()
            },
            workloads: [(300, w)].into(),
        }
    }

    #[test]
    fn one_owner_series_per_holder_with_its_pod() {
        let text = render(&scrape(true));
        let owners: Vec<&str> = text.lines().filter(|l| l.contains("_owner{")).collect();
        assert_eq!(
            owners,
            vec![
                "brr_prog_owner{id=\"7\",pid=\"12\",comm=\"loader\",container=\"\",container_id=\"\",pod=\"\",namespace=\"\"} 1",
                &format!("brr_prog_owner{{id=\"7\",pid=\"300\",comm=\"a\\\"b\\\\c\",container=\"agent\",container_id=\"{}\",pod=\"agent-x7k2p\",namespace=\"kube-system\"}} 1", "c1".repeat(32)),
                "brr_link_owner{id=\"3\",pid=\"1\",comm=\"systemd\",container=\"\",container_id=\"\",pod=\"\",namespace=\"\"} 1",
            ]
        );
        // Every family is there even when nobody holds anything.
        for family in ["brr_prog_owner", "brr_map_owner", "brr_link_owner"] {
            assert!(
                text.contains(&format!("# TYPE {family} gauge\n")),
                "{family}"
            );
        }
        // No holder names appear on the info series.
        assert!(text
            .lines()
            .filter(|l| l.contains("_info{"))
            .all(|l| !l.contains("owners")));
    }

    #[test]
    fn families_and_escaping() {
        let text = render(&scrape(true));
        assert!(text.contains(
            "brr_prog_info{id=\"7\",tag=\"00ff\",name=\"a\\\"b\\\\c\\nd\",full_name=\"a_much_longer_function_name\",type=\"socket_filter\"} 1\n"
        ));
        assert!(text.contains(
            "# TYPE brr_prog_run_count_total counter\nbrr_prog_run_count_total{id=\"7\"} 3\n"
        ));
        assert!(text.contains("brr_prog_run_time_seconds_total{id=\"7\"} 1.5\n"));
        assert!(text.contains("brr_prog_recursion_misses_total{id=\"7\"} 2\n"));
        assert!(text.contains("brr_prog_memlock_bytes{id=\"7\"} 4096\n"));
        assert!(text.contains("brr_prog_xlated_bytes{id=\"7\"} 16\n"));
        assert!(text.contains("brr_prog_jited_bytes{id=\"7\"} 20\n"));
        assert!(text.contains("brr_map_info{id=\"9\",name=\"m\",type=\"array\"} 1\n"));
        // A map whose memlock is unknown has no sample, but the family stays.
        assert!(text.contains("# TYPE brr_map_memlock_bytes gauge\n# HELP brr_link_info"));
        assert!(text.contains(
            "brr_link_info{id=\"3\",prog_id=\"7\",type=\"cgroup\",target=\"/brr.slice\"} 1\n"
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
        // The target `brr link` prints, not the attach type and IDs.
        l.attach_type = Some("tracepoint".into());
        l.target_btf_id = Some(5);
        l.target = Some("sys_enter_execve".into());
        assert_eq!(link_target(&l), "sys_enter_execve");
    }
}
