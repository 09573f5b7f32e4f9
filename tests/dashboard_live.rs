//! The shipped Grafana dashboard and Prometheus rules against a real
//! Prometheus that scrapes a brr exporter while a fixture program runs:
//! every panel query returns data, and every rule loads and evaluates.
//! Only loopback addresses are used.

// Test tooling: helpers outside #[test] functions fail the test by panicking,
// as the tests themselves do (clippy.toml only exempts #[test] code).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "support/exporter.rs"]
mod exporter;
#[path = "support/prometheus.rs"]
mod prometheus;
mod support;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use exporter::Exporter;
use support::{LoadDriver, SocketFilterFixture};

const DASHBOARD: &str = "deploy/grafana/brr-dashboard.json";
const RULES: &str = "deploy/prometheus/brr-rules.yml";
/// What Grafana puts for `$__rate_interval` at a 1 s scrape interval is
/// 4 s; a longer window keeps every rate defined across scrape jitter.
const RATE_INTERVAL: &str = "10s";

fn repo(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

/// A Prometheus server scraping `target` every second as job `brr`, with
/// the shipped rules loaded.
struct Prometheus(prometheus::Prometheus);

impl Prometheus {
    fn start(target: SocketAddr) -> Prometheus {
        Prometheus(prometheus::Prometheus::start("brr-dashboard", |dir| {
            // The rules' own group interval is 30 s; evaluate them every
            // second here so that the test need not wait for it.
            let rules = std::fs::read_to_string(repo(RULES)).expect("read rules");
            let rules = rules.replace("interval: 30s", "interval: 1s");
            std::fs::write(dir.join("rules.yml"), rules).expect("rules");
            format!(
                "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nrule_files:\n  - {}\nscrape_configs:\n  - job_name: brr\n    static_configs:\n      - targets: ['{target}']\n",
                dir.join("rules.yml").display()
            )
        }))
    }

    fn api(&self, path: &str, params: &[(&str, &str)]) -> Option<serde_json::Value> {
        self.0.api(path, params)
    }

    /// The series a range query over the last `seconds` returns, each as
    /// its labels and how many of its points are numbers (not NaN).
    fn range(&self, expr: &str, seconds: u64) -> Result<Vec<(String, usize)>, String> {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .expect("clock")
            .as_secs();
        let (start, end) = ((now - seconds).to_string(), now.to_string());
        let v = self
            .api(
                "/api/v1/query_range",
                &[
                    ("query", expr),
                    ("start", &start),
                    ("end", &end),
                    ("step", "1"),
                ],
            )
            .ok_or("no answer")?;
        if v["status"] != "success" {
            return Err(format!("{}: {}", v["errorType"], v["error"]));
        }
        let result = v["data"]["result"].as_array().ok_or("no result")?;
        Ok(result
            .iter()
            .map(|s| {
                let numbers = s["values"].as_array().map_or(0, |vals| {
                    vals.iter()
                        .filter(|p| {
                            p[1].as_str()
                                .is_some_and(|x| x.parse::<f64>().is_ok_and(f64::is_finite))
                        })
                        .count()
                });
                (s["metric"].to_string(), numbers)
            })
            .collect())
    }
}

/// Every panel's queries, as (panel title, expr), rows' panels included.
fn panel_queries(dashboard: &serde_json::Value) -> Vec<(String, String)> {
    fn walk(panels: &serde_json::Value, out: &mut Vec<(String, String)>) {
        for p in panels.as_array().into_iter().flatten() {
            let title = p["title"].as_str().unwrap_or("").to_string();
            for t in p["targets"].as_array().into_iter().flatten() {
                if let Some(expr) = t["expr"].as_str() {
                    out.push((title.clone(), expr.to_string()));
                }
            }
            walk(&p["panels"], out);
        }
    }
    let mut out = Vec::new();
    walk(&dashboard["panels"], &mut out);
    out
}

/// What Grafana sends for the dashboard's variables: every host.
fn substitute(expr: &str) -> String {
    expr.replace("$__rate_interval", RATE_INTERVAL)
        .replace("$instance", ".+")
}

#[test]
fn every_dashboard_panel_and_rule_has_data_from_a_real_prometheus() {
    if !support::live() || !prometheus::require() {
        return;
    }
    let dashboard: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(repo(DASHBOARD)).expect("read dashboard"))
            .expect("dashboard is JSON");
    let queries = panel_queries(&dashboard);
    let panels = dashboard["panels"].as_array().map_or(0, Vec::len);
    assert!(panels >= 8, "{panels} panels");
    for p in dashboard["panels"].as_array().into_iter().flatten() {
        assert!(
            p["targets"].as_array().is_some_and(|t| !t.is_empty()),
            "panel {} has no query",
            p["title"]
        );
    }
    // The variables Grafana fills in are the only ones used.
    for (title, expr) in &queries {
        let rest = substitute(expr);
        assert!(
            !rest.contains('$'),
            "panel {title:?}: unknown variable in {expr}"
        );
    }

    // A program that runs all the time, held by this test process (so it
    // has an owner series), with its map.
    let fx = SocketFilterFixture::load().expect("load fixture");
    let load = LoadDriver::start(fx.prog.fd(), 1, 1_000).expect("drive the fixture");
    let exp = Exporter::start(&[]);
    let prom = Prometheus::start(exp.addr);

    // Wait until the fixture's CPU shows in a rate, i.e. a few scrapes.
    let cpu = format!(
        "rate(brr_prog_run_time_seconds_total{{id=\"{}\"}}[{RATE_INTERVAL}])",
        fx.prog.id
    );
    let t = Instant::now();
    while t.elapsed() < Duration::from_secs(60) {
        if prom
            .range(&cpu, 5)
            .is_ok_and(|r| r.iter().any(|(_, n)| *n > 0))
        {
            break;
        }
        std::thread::sleep(Duration::from_millis(500));
    }
    std::thread::sleep(Duration::from_secs(3));

    let mut empty = Vec::new();
    for (title, expr) in &queries {
        match prom.range(&substitute(expr), 15) {
            Ok(series) if series.iter().any(|(_, n)| *n > 0) => {}
            Ok(series) => empty.push(format!("{title}: {expr} -> {series:?}")),
            Err(e) => empty.push(format!("{title}: {expr} -> error {e}")),
        }
    }

    // Every rule loaded and evaluated without error; the recording rules
    // that need no Kubernetes pod have data.
    let rules = prom.api("/api/v1/rules", &[]).expect("rules API");
    let mut rule_names = Vec::new();
    for g in rules["data"]["groups"].as_array().into_iter().flatten() {
        for r in g["rules"].as_array().into_iter().flatten() {
            let name = r["name"].as_str().unwrap_or("").to_string();
            if r["health"] != "ok" {
                empty.push(format!(
                    "rule {name}: health {} {}",
                    r["health"], r["lastError"]
                ));
            }
            rule_names.push(name);
        }
    }
    assert_eq!(rule_names.len(), 8, "rules loaded: {rule_names:?}");
    for rec in [
        "brr:prog_cpu:rate5m",
        "brr:prog_cpu_by_full_name:rate5m",
        "brr:host_prog_cpu:rate5m",
        "brr:prog_recursion_misses:rate5m",
    ] {
        let sel = format!("{rec}{{full_name=~\".*\"}}");
        match prom.range(&sel, 5) {
            Ok(series) if series.iter().any(|(_, n)| *n > 0) => {}
            other => empty.push(format!("recording rule {rec} -> {other:?}")),
        }
    }
    drop(prom);
    drop(exp);
    load.stop().expect("fixture runs");
    assert!(empty.is_empty(), "without data:\n{}", empty.join("\n"));
}
