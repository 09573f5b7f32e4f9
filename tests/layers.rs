//! The layering rules of the code base, checked on its sources.
//!
//! Kernel facts flow one way: `sys` -> `kernel` (with `bpftool`) -> `model`
//! -> analysis (`activity`, `profile`, `inspect`, `doctor`) -> views
//! (`render`, and `export`, the profile files) and `session` (the one
//! collector that the front ends share; it formats nothing, so it does not
//! reach the views) -> front ends (`cli`, `commands`, `top`, `tui`, and
//! `serve`, the exporter service, and `mcp`, the agent interface), which
//! only dispatch: they ask the
//! collector and never reach `kernel` or `sys` themselves. A module may
//! only import from below it, and only `src/sys/` may contain `unsafe`.
//! The views and front ends read a profile's `Report` and never call the
//! profile analysis that builds it (`profile::aggregate`, `who`, `hints`).
//! Test code (`#[cfg(test)]` modules, `tests.rs`, `*_tests.rs`) is exempt
//! from the import rules.

// Test tooling: a missing source tree is a broken checkout, and the comment
// cut is at an ASCII `//`.
#![allow(clippy::expect_used, clippy::string_slice)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("read src") {
        let path = entry.expect("dir entry").path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Source files as (top-level module, path relative to src, text).
fn files() -> Vec<(String, String, String)> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut paths = Vec::new();
    sources(&src, &mut paths);
    paths.sort();
    paths
        .into_iter()
        .map(|p| {
            let rel = p
                .strip_prefix(&src)
                .expect("under src")
                .to_string_lossy()
                .into_owned();
            let top = rel
                .split('/')
                .next()
                .unwrap_or("")
                .trim_end_matches(".rs")
                .to_string();
            let text = std::fs::read_to_string(&p).expect("read source");
            (top, rel, text)
        })
        .collect()
}

/// The text without comments, so a comment naming a module or `unsafe`
/// does not count.
fn code(text: &str) -> String {
    text.lines()
        .map(|l| match l.find("//") {
            Some(i) => &l[..i],
            None => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The product code of a file: without comments and without the items
/// under `#[cfg(test)]` (a test module, or a test-only import or function
/// anywhere in the file: the code after it is product code again).
fn product(text: &str) -> String {
    let code = code(text);
    let mut out = Vec::new();
    let mut lines = code.lines();
    while let Some(line) = lines.next() {
        if line.trim() != "#[cfg(test)]" {
            out.push(line);
            continue;
        }
        // Skip the item: further attributes, then one line ending in `;`
        // or the lines up to the brace that closes its body.
        let mut depth = 0i64;
        for item in lines.by_ref() {
            let t = item.trim();
            if depth == 0 && t.starts_with("#[") {
                continue;
            }
            depth += item.matches('{').count() as i64 - item.matches('}').count() as i64;
            if depth <= 0 && (t.ends_with(';') || t.ends_with('}')) {
                break;
            }
        }
    }
    out.join("\n")
}

fn is_test_file(rel: &str) -> bool {
    rel.ends_with("/tests.rs") || rel.ends_with("_tests.rs")
}

/// Top-level module -> the top-level modules its product code names.
fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (top, rel, text) in files() {
        if top == "main" || top == "lib" || is_test_file(&rel) {
            continue;
        }
        let product = product(&text);
        let deps = g.entry(top.clone()).or_default();
        let mut rest = product.as_str();
        while let Some(i) = rest.find("crate::") {
            rest = &rest[i + "crate::".len()..];
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if !name.is_empty() && name != top {
                deps.insert(name);
            }
        }
    }
    g
}

#[test]
fn unsafe_code_only_under_sys() {
    let mut found = Vec::new();
    for (top, rel, text) in files() {
        if top == "sys" {
            continue;
        }
        for (n, line) in code(&text).lines().enumerate() {
            let words = line.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'));
            if words.into_iter().any(|w| w == "unsafe") {
                found.push(format!("src/{rel}:{}", n + 1));
            }
        }
    }
    assert!(found.is_empty(), "unsafe outside src/sys/: {found:?}");
}

#[test]
fn modules_import_only_from_below() {
    // (module, modules it must not import)
    let views = ["render", "export"];
    let front_ends = ["commands", "top", "tui", "serve", "cli", "mcp"];
    let above_views: Vec<&str> = std::iter::once("session").chain(front_ends).collect();
    let mut rules: Vec<(&str, Vec<&str>)> = vec![
        (
            "sys",
            vec![
                "kernel", "bpftool", "model", "activity", "profile", "inspect", "render", "export",
                "session", "commands", "top", "tui", "serve", "cli", "mcp", "error",
            ],
        ),
        (
            "model",
            vec![
                "sys", "kernel", "bpftool", "activity", "profile", "inspect", "render", "export",
                "session", "commands", "top", "tui", "serve", "cli", "mcp",
            ],
        ),
        ("render", vec!["sys", "export"]),
        // The profile files sit with render: no collector, no service.
        ("export", vec!["render"]),
        // The collector gathers; formatting is the views' alone.
        ("session", [&front_ends[..], &["render"]].concat()),
        // The front ends ask the collector; none reads kernel/ itself.
        ("commands", vec!["kernel", "sys", "bpftool"]),
        ("cli", vec!["kernel", "sys", "bpftool", "commands", "top"]),
        (
            "tui",
            vec![
                "sys", "kernel", "bpftool", "commands", "top", "serve", "cli", "mcp",
            ],
        ),
        (
            "serve",
            vec!["kernel", "bpftool", "commands", "top", "tui", "cli", "mcp"],
        ),
        (
            "top",
            vec!["kernel", "sys", "bpftool", "commands", "serve", "mcp"],
        ),
        // The agent interface is given the commands that answer; it reads
        // no kernel and no command line itself.
        (
            "mcp",
            vec![
                "kernel", "sys", "bpftool", "commands", "top", "tui", "serve", "cli",
            ],
        ),
    ];
    for low in ["kernel", "bpftool"] {
        let mut banned = vec!["activity", "profile", "inspect", "doctor"];
        banned.extend(views);
        banned.extend(&above_views);
        rules.push((low, banned));
    }
    for analysis in ["activity", "profile", "inspect", "doctor"] {
        let mut banned: Vec<&str> = views.to_vec();
        banned.extend(&above_views);
        rules.push((analysis, banned));
    }
    for view in views {
        let rule = rules.iter_mut().find(|(m, _)| *m == view);
        if let Some((_, banned)) = rule {
            banned.extend(&above_views);
        }
    }
    let g = graph();
    let mut broken = Vec::new();
    for (module, banned) in rules {
        for dep in g.get(module).into_iter().flatten() {
            if banned.contains(&dep.as_str()) {
                broken.push(format!("{module} imports {dep}"));
            }
        }
    }
    assert!(broken.is_empty(), "layering broken: {broken:?}");
}

/// The profile engine opens perf events, maps their rings and reads
/// programs through `kernel` (`kernel::perf`, `kernel::prog_reads`), which
/// also hands it the perf ABI numbers; `profile/` names no `sys` path at
/// all, so every system call it makes is one `kernel` offers.
#[test]
fn profile_reaches_the_kernel_only_through_kernel() {
    let g = graph();
    let deps = g.get("profile").cloned().unwrap_or_default();
    assert!(!deps.contains("sys"), "profile imports sys");
    // The check can fail: it sees the profile engine's real edges.
    assert!(deps.contains("kernel"), "{deps:?}");
}

/// A cycle in `g` as the path that closes it, if there is one (depth-first
/// search; a grey node reached again closes a cycle).
fn find_cycle(g: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        n: &str,
        g: &BTreeMap<String, BTreeSet<String>>,
        state: &mut BTreeMap<String, u8>,
        path: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        match state.get(n) {
            Some(1) => {
                let start = path.iter().position(|p| p == n).unwrap_or(0);
                let mut cycle = path[start..].to_vec();
                cycle.push(n.to_string());
                return Some(cycle);
            }
            Some(_) => return None,
            None => {}
        }
        state.insert(n.to_string(), 1);
        path.push(n.to_string());
        for d in g.get(n).into_iter().flatten() {
            if let Some(c) = visit(d, g, state, path) {
                return Some(c);
            }
        }
        path.pop();
        state.insert(n.to_string(), 2);
        None
    }
    let mut state = BTreeMap::new();
    for n in g.keys() {
        let mut path = Vec::new();
        if let Some(cycle) = visit(n, g, &mut state, &mut path) {
            return Some(cycle);
        }
    }
    None
}

#[test]
fn no_import_cycle_between_modules() {
    let g = graph();
    if let Some(cycle) = find_cycle(&g) {
        panic!("import cycle: {}", cycle.join(" -> "));
    }
    // The check can fail: the graph must have real edges to look at.
    assert!(g.get("commands").is_some_and(|d| d.contains("session")));
    assert!(g.get("serve").is_some_and(|d| d.contains("session")));
}

/// The first path segment of each path that follows `prefix` in `code`
/// (one path, or each entry of a `{...}` group).
fn names_after(code: &str, prefix: &str) -> Vec<String> {
    let ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let mut found = Vec::new();
    let mut at = 0;
    while let Some(i) = code[at..].find(prefix) {
        let start = at + i;
        at = start + prefix.len();
        if code[..start]
            .chars()
            .next_back()
            .is_some_and(|c| ident(c) || c == ':')
        {
            continue;
        }
        let rest = &code[at..];
        if rest.starts_with("super::") {
            continue; // a longer `super::super::` path
        }
        let entries: Vec<&str> = match rest.strip_prefix('{') {
            Some(group) => top_level_entries(group),
            None => vec![rest],
        };
        for e in entries {
            let name: String = e.trim_start().chars().take_while(|&c| ident(c)).collect();
            if !name.is_empty() {
                found.push(name);
            }
        }
    }
    found
}

/// The comma-separated entries of a `{...}` group (`group` starts after
/// its `{`), nested groups kept inside their entry.
fn top_level_entries(group: &str) -> Vec<&str> {
    let mut entries = Vec::new();
    let (mut depth, mut from) = (0usize, 0usize);
    for (i, c) in group.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => break,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                entries.push(&group[from..i]);
                from = i + 1;
            }
            _ => continue,
        }
    }
    let end = group[from..].find('}').map_or(group.len(), |i| from + i);
    entries.push(&group[from..end]);
    entries
}

/// The TUI's submodules (`tui/app/`, `tui/drill/`, `tui/ui.rs`, ...) -> the
/// sibling submodules their product code names. The root `tui/mod.rs`
/// declares them all and is left out, as are test files.
fn tui_graph() -> BTreeMap<String, BTreeSet<String>> {
    let mut found: Vec<(String, usize, String)> = Vec::new();
    for (top, rel, text) in files() {
        let parts: Vec<&str> = rel.split('/').collect();
        if top != "tui" || parts.len() < 2 || rel == "tui/mod.rs" || is_test_file(&rel) {
            continue;
        }
        let name = parts[1].trim_end_matches(".rs").to_string();
        // `tui/x.rs` and `tui/x/mod.rs` reach a sibling through `super::`;
        // `tui/x/y.rs` through `super::super::`.
        let nested = parts.len() == 3 && parts[2] != "mod.rs";
        found.push((name, usize::from(nested), product(&text)));
    }
    let modules: BTreeSet<String> = found.iter().map(|(n, _, _)| n.clone()).collect();
    let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (name, nested, code) in found {
        let sup = "super::".repeat(nested + 1);
        let mut deps = names_after(&code, "crate::tui::");
        deps.extend(names_after(&code, &sup));
        let entry = g.entry(name.clone()).or_default();
        for d in deps {
            if d != name && modules.contains(&d) {
                entry.insert(d);
            }
        }
    }
    g
}

#[test]
fn no_import_cycle_inside_the_tui() {
    // The live table opens the drilldown; the drilldown does not reach
    // back into the table's state (both return `effect::Effect`).
    let g = tui_graph();
    if let Some(cycle) = find_cycle(&g) {
        panic!("import cycle inside src/tui/: {}", cycle.join(" -> "));
    }
    let deps = |m: &str| g.get(m).cloned().unwrap_or_default();
    assert!(!deps("drill").contains("app"), "drill imports app");
    // The check can fail: it sees the real edges, through `super::` and
    // `crate::tui::` paths alike.
    assert!(deps("app").contains("drill"), "{g:?}");
    assert!(deps("drill").contains("effect"), "{g:?}");
    assert!(deps("ui").contains("app"), "{g:?}");
    let looped: BTreeMap<String, BTreeSet<String>> = [("a", "b"), ("b", "a")]
        .iter()
        .map(|(m, d)| (m.to_string(), BTreeSet::from([d.to_string()])))
        .collect();
    assert!(find_cycle(&looped).is_some());
    assert_eq!(
        names_after(
            "use super::{drill::{A, B}, effect::Effect};\nsuper::super::x::y",
            "super::"
        ),
        ["drill", "effect"]
    );
}

/// The profile analysis modules that only `profile::report` (and the
/// profile engine itself) may call.
const PROFILE_ANALYSIS: [&str; 3] = ["aggregate", "who", "hints"];

/// The analysis modules named in `code` through a `profile::` path (one
/// path, or a `{...}` group of them); `render::profile::` is the renderer,
/// not the engine.
fn analysis_paths(code: &str) -> Vec<String> {
    let ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let mut found = Vec::new();
    let mut at = 0;
    while let Some(i) = code[at..].find("profile::") {
        let start = at + i;
        at = start + "profile::".len();
        let before = &code[..start];
        if before.ends_with("render::") || before.chars().next_back().is_some_and(ident) {
            continue;
        }
        let rest = &code[at..];
        let names: Vec<&str> = match rest.strip_prefix('{') {
            Some(group) => group
                .split('}')
                .next()
                .unwrap_or("")
                .split(|c: char| !ident(c))
                .collect(),
            None => vec![rest.split(|c: char| !ident(c)).next().unwrap_or("")],
        };
        for n in names {
            if PROFILE_ANALYSIS.contains(&n) {
                found.push(format!("profile::{n}"));
            }
        }
    }
    found
}

#[test]
fn views_and_front_ends_read_the_profile_report() {
    // A profile's rows, payers and hints are assembled once, by
    // `profile::report`; what shows them only reads the `Report`.
    let readers = ["render", "tui", "top", "commands"];
    let mut broken = Vec::new();
    let mut reads_report = BTreeSet::new();
    for (top, rel, text) in files() {
        if !readers.contains(&top.as_str()) || is_test_file(&rel) {
            continue;
        }
        let product = product(&text);
        for path in analysis_paths(&product) {
            broken.push(format!("src/{rel} calls {path}"));
        }
        // The Report is assembled by session::report alone.
        for call in ["report::build_with(", "image::annotate"] {
            if product.contains(call) {
                broken.push(format!("src/{rel} assembles a report ({call}...)"));
            }
        }
        if product.contains("report::") || product.contains("Report") {
            reads_report.insert(top);
        }
    }
    assert!(broken.is_empty(), "views call profile analysis: {broken:?}");
    // The check can fail: it sees the paths it bans...
    let banned = analysis_paths(
        "use crate::profile::{self, hints};\nlet t = profile::who::tasks(p, q);\ncrate::render::profile::hints_text(&h);",
    );
    assert_eq!(banned, ["profile::hints", "profile::who"]);
    // ...and every reader reaches the report.
    assert_eq!(reads_report.len(), readers.len(), "{reads_report:?}");
}
