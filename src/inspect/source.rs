//! `--devmode [DIR]`: find the source files named in BTF under a local tree,
//! insert the lines BTF does not mention ("context"), and flag BTF snippets
//! that differ from the files; shared by `brr dump --devmode` and the
//! drilldown.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

pub(crate) use crate::model::source::{ContextRow, DumpContext, Mismatch};

/// What a BTF file name resolved to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Resolution {
    Resolved { path: String, lines: Vec<String> },
    Ambiguous,
    Unresolved,
}

impl Resolution {
    pub(crate) fn resolved(&self) -> Option<(&str, &[String])> {
        match self {
            Resolution::Resolved { path, lines } => Some((path, lines)),
            _ => None,
        }
    }
}

/// Split like Python's `str.splitlines()`.
pub(crate) fn split_lines(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\r' => {
                if chars.peek() == Some(&'\n') {
                    chars.next();
                }
                out.push(std::mem::take(&mut cur));
            }
            '\n' | '\u{b}' | '\u{c}' | '\u{1c}' | '\u{1d}' | '\u{1e}' | '\u{85}' | '\u{2028}'
            | '\u{2029}' => out.push(std::mem::take(&mut cur)),
            c => cur.push(c),
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

fn components(path: &str) -> Vec<&str> {
    path.split('/')
        .filter(|c| !c.is_empty() && *c != ".")
        .collect()
}

/// A local source tree, indexed lazily by file basename.
#[derive(Debug)]
pub(crate) struct SourceTree {
    dir: PathBuf,
    index: Option<HashMap<String, Vec<Vec<String>>>>,
    cache: HashMap<String, Resolution>,
}

impl SourceTree {
    pub(crate) fn new(dir: impl Into<PathBuf>) -> SourceTree {
        SourceTree {
            dir: dir.into(),
            index: None,
            cache: HashMap::new(),
        }
    }

    pub(crate) fn dir(&self) -> &Path {
        &self.dir
    }

    fn build_index(dir: &Path) -> HashMap<String, Vec<Vec<String>>> {
        let mut index: HashMap<String, Vec<Vec<String>>> = HashMap::new();
        let mut stack = vec![(dir.to_path_buf(), Vec::<String>::new())];
        while let Some((d, rel)) = stack.pop() {
            let Ok(entries) = std::fs::read_dir(&d) else {
                continue;
            };
            let mut entries: Vec<_> = entries.flatten().collect();
            entries.sort_by_key(|e| e.file_name());
            for e in entries {
                let name = e.file_name().to_string_lossy().into_owned();
                let Ok(ft) = e.file_type() else { continue };
                let mut sub = rel.clone();
                sub.push(name.clone());
                if ft.is_dir() {
                    stack.push((e.path(), sub));
                } else if ft.is_file() || (ft.is_symlink() && e.path().is_file()) {
                    index.entry(name).or_default().push(sub);
                }
            }
        }
        index
    }

    /// Resolve a BTF file name (cached).
    pub(crate) fn resolve(&mut self, btf_name: &str) -> &Resolution {
        if !self.cache.contains_key(btf_name) {
            let r = self.lookup(btf_name);
            self.cache.insert(btf_name.to_string(), r);
        }
        &self.cache[btf_name]
    }

    fn lookup(&mut self, btf_name: &str) -> Resolution {
        if Path::new(btf_name).is_file() {
            return read(btf_name.to_string(), Path::new(btf_name));
        }
        let want = components(btf_name);
        let Some(base) = want.last() else {
            return Resolution::Unresolved;
        };
        let dir = self.dir.clone();
        let index = self.index.get_or_insert_with(|| Self::build_index(&dir));
        let hits: Vec<&Vec<String>> = index
            .get(*base)
            .map(|v| {
                v.iter()
                    .filter(|rel| {
                        let n = rel.len().min(want.len());
                        rel[rel.len() - n..]
                            .iter()
                            .zip(&want[want.len() - n..])
                            .all(|(a, b)| a == b)
                    })
                    .collect()
            })
            .unwrap_or_default();
        match hits.as_slice() {
            [] => Resolution::Unresolved,
            [one] => {
                let path = self.dir.join(one.join("/"));
                read(path.to_string_lossy().into_owned(), &path)
            }
            _ => Resolution::Ambiguous,
        }
    }
}

fn read(display: String, path: &Path) -> Resolution {
    let text = std::fs::read(path)
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .unwrap_or_default();
    Resolution::Resolved {
        path: display,
        lines: split_lines(&text),
    }
}

/// One mapped source line as the context walk sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Mapped {
    pub file: String,
    pub line: u32,
}

/// An output position: a mapped entry (by index) or an inserted file line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Placed {
    Mapped(usize),
    Context {
        file: String,
        line: u32,
        text: String,
        resolved_path: String,
    },
}

/// Insert context lines around `mapped` (in display order).
pub(crate) fn with_context(mapped: &[Mapped], tree: &mut SourceTree) -> Vec<Placed> {
    let mut seen: HashSet<(String, u32)> =
        mapped.iter().map(|m| (m.file.clone(), m.line)).collect();
    let mut out = Vec::new();
    // Threshold of the suppressed stretch after a backward jump.
    let mut stretch: Option<u32> = None;
    let mut tail_ok = mapped.len() == 1;
    let context = |file: &str, lines: std::ops::Range<u32>, tree: &mut SourceTree| {
        let mut got = Vec::new();
        if let Some((path, text)) = tree.resolve(file).resolved() {
            for n in lines {
                if let Some(t) = text.get(n as usize - 1) {
                    got.push((n, t.clone(), path.to_string()));
                }
            }
        }
        got
    };
    for (i, m) in mapped.iter().enumerate() {
        if i > 0 {
            let prev = &mapped[i - 1];
            let same = prev.file == m.file;
            tail_ok = false;
            let mut insert = None;
            if let Some(th) = stretch {
                if !same || m.line >= th {
                    stretch = None;
                } else if m.line < prev.line {
                    stretch = Some(th.max(prev.line));
                }
            } else if same && m.line < prev.line {
                stretch = Some(prev.line);
            } else if same {
                tail_ok = true;
                if m.line > prev.line + 1 {
                    insert = Some(prev.line + 1..m.line);
                }
            }
            if let Some(range) = insert {
                for (n, text, path) in context(&m.file, range, tree) {
                    if seen.insert((m.file.clone(), n)) {
                        out.push(Placed::Context {
                            file: m.file.clone(),
                            line: n,
                            text,
                            resolved_path: path,
                        });
                    }
                }
            }
        }
        out.push(Placed::Mapped(i));
    }
    if let (true, Some(last)) = (tail_ok, mapped.last()) {
        let following = context(&last.file, last.line + 1..last.line + 21, tree);
        if let Some(end) = following.iter().position(|(_, t, _)| t.trim() == "}") {
            for (n, text, path) in following.into_iter().take(end + 1) {
                if seen.insert((last.file.clone(), n)) {
                    out.push(Placed::Context {
                        file: last.file.clone(),
                        line: n,
                        text,
                        resolved_path: path,
                    });
                }
            }
        }
    }
    out
}

pub(crate) fn mismatch(
    tree: &mut SourceTree,
    file: &str,
    line: u32,
    btf_source: &str,
) -> Option<Mismatch> {
    let (path, lines) = tree.resolve(file).resolved()?;
    let text = lines.get((line as usize).checked_sub(1)?)?;
    (text.trim_end() != btf_source.trim_end()).then(|| Mismatch {
        file: file.to_string(),
        line,
        btf_source: btf_source.to_string(),
        file_source: text.clone(),
        resolved_path: path.to_string(),
    })
}

/// The dump's source context: mapped lines (rows with file and line, a
/// repeat of the previous kept line dropped) with context lines between.
pub(crate) fn dump_context<'a>(
    rows: impl Iterator<Item = (Option<&'a str>, Option<u32>, Option<&'a str>)>,
    tree: &mut SourceTree,
) -> DumpContext {
    let mut kept: Vec<(&str, u32, Option<&str>)> = Vec::new();
    for (file, line, src) in rows {
        let (Some(file), Some(line)) = (file, line) else {
            continue;
        };
        if kept.last() != Some(&(file, line, src)) {
            kept.push((file, line, src));
        }
    }
    let mut ctx = DumpContext::default();
    let mut names: Vec<&str> = kept.iter().map(|k| k.0).collect();
    names.sort_unstable();
    names.dedup();
    for name in names {
        match tree.resolve(name) {
            Resolution::Resolved { .. } => ctx.any_resolved = true,
            Resolution::Ambiguous => ctx.ambiguous_files.push(name.to_string()),
            Resolution::Unresolved => ctx.unresolved_files.push(name.to_string()),
        }
    }
    for &(file, line, src) in &kept {
        if let Some(m) = src.and_then(|s| mismatch(tree, file, line, s)) {
            ctx.mismatches.push(m);
        }
    }
    let mapped: Vec<Mapped> = kept
        .iter()
        .map(|k| Mapped {
            file: k.0.to_string(),
            line: k.1,
        })
        .collect();
    for p in with_context(&mapped, tree) {
        ctx.rows.push(match p {
            Placed::Mapped(i) => {
                let (file, line, btf_text) = kept[i];
                let resolved = tree.resolve(file).resolved();
                // BTF text missing (or blank): fill it from the source tree.
                let source = btf_text
                    .filter(|t| !t.trim().is_empty())
                    .map(str::to_string)
                    .or_else(|| {
                        let (_, lines) = resolved?;
                        lines.get((line as usize).checked_sub(1)?).cloned()
                    });
                ContextRow {
                    kind: "mapped",
                    file: file.to_string(),
                    line,
                    source,
                    resolved_path: resolved.map(|r| r.0.to_string()),
                }
            }
            Placed::Context {
                file,
                line,
                text,
                resolved_path,
            } => ContextRow {
                kind: "context",
                file,
                line,
                source: Some(text),
                resolved_path: Some(resolved_path),
            },
        });
    }
    ctx
}

/// The last path component.
pub(crate) fn basename(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree_with(files: &[(&str, &str)]) -> (tempdir::Dir, SourceTree) {
        let d = tempdir::Dir::new();
        for (rel, text) in files {
            let p = d.path.join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
        let t = SourceTree::new(&d.path);
        (d, t)
    }

    mod tempdir {
        pub(super) struct Dir {
            pub path: std::path::PathBuf,
        }
        impl Dir {
            pub(super) fn new() -> Dir {
                use std::sync::atomic::{AtomicUsize, Ordering};
                static N: AtomicUsize = AtomicUsize::new(0);
                let path = std::env::temp_dir().join(format!(
                    "brr-src-{}-{}",
                    std::process::id(),
                    N.fetch_add(1, Ordering::Relaxed)
                ));
                std::fs::create_dir_all(&path).unwrap();
                Dir { path }
            }
        }
        impl Drop for Dir {
            fn drop(&mut self) {
                let _ = std::fs::remove_dir_all(&self.path);
            }
        }
    }

    fn m(file: &str, line: u32) -> Mapped {
        Mapped {
            file: file.into(),
            line,
        }
    }

    fn lines_of(p: &[Placed], mapped: &[Mapped]) -> Vec<String> {
        p.iter()
            .map(|x| match x {
                Placed::Mapped(i) => format!("m{}", mapped[*i].line),
                Placed::Context { line, .. } => format!("c{line}"),
            })
            .collect()
    }

    #[test]
    fn splitlines_like_python() {
        assert_eq!(
            split_lines("a\r\nb\rc\nd\u{b}e\u{2028}f\n"),
            ["a", "b", "c", "d", "e", "f"]
        );
        assert_eq!(split_lines(""), Vec::<String>::new());
        assert_eq!(split_lines("x\n\ny"), ["x", "", "y"]);
    }

    #[test]
    fn resolution_by_suffix() {
        let (_d, mut t) = tree_with(&[
            ("libbpf-tools/prog.c", "x"),
            ("other/sub/prog.c", "y"),
            ("a/h.h", "1"),
            ("b/h.h", "2"),
        ]);
        let r = t.resolve("/build/x/libbpf-tools/./prog.c").clone();
        assert!(
            matches!(r, Resolution::Resolved { ref path, .. } if path.ends_with("libbpf-tools/prog.c"))
        );
        assert_eq!(*t.resolve("/elsewhere/h.h"), Resolution::Unresolved);
        assert_eq!(*t.resolve("/x/a/h.h").resolved().unwrap().1, ["1"]);
        let (_d1, mut t1) = tree_with(&[("tools/s.c", "1"), ("s.c", "2")]);
        assert_eq!(*t1.resolve("/build/tools/s.c"), Resolution::Ambiguous);
        assert_eq!(*t.resolve("nothing.c"), Resolution::Unresolved);
        // `sub/prog.c` is no suffix of `/q/prog.c` (nor the reverse).
        let (_d2, mut t2) = tree_with(&[("sub/prog.c", "z")]);
        assert_eq!(*t2.resolve("/q/prog.c"), Resolution::Unresolved);
        assert!(t2.resolve("/q/sub/prog.c").resolved().is_some());
    }

    #[test]
    fn context_gaps_backjumps_and_tail() {
        let src: String = (1..=30)
            .map(|i| {
                if i == 20 {
                    "  }  \n".to_string()
                } else {
                    format!("l{i}\n")
                }
            })
            .collect();
        let (_d, mut t) = tree_with(&[("p.c", &src)]);
        let mapped = [
            m("/b/p.c", 3),
            m("/b/p.c", 6),
            m("/b/p.c", 6),
            m("/b/p.c", 4),
            m("/b/p.c", 5),
            m("/b/p.c", 9),
            m("/b/p.c", 12),
            m("/b/p.c", 15),
        ];
        let got = with_context(&mapped, &mut t);
        // 3->6: 4 and 5 are mapped elsewhere, so nothing. 6->4 starts a
        // stretch (threshold 6); 5->9 ends it without context; 9->12 adds
        // 10, 11; 12->15 adds 13, 14; the tail runs to the `}` on line 20.
        assert_eq!(
            lines_of(&got, &mapped),
            [
                "m3", "m6", "m6", "m4", "m5", "m9", "c10", "c11", "m12", "c13", "c14", "m15",
                "c16", "c17", "c18", "c19", "c20"
            ]
        );
        // A backward last step allows no tail; other files break adjacency.
        let mapped = [m("/b/p.c", 8), m("/b/p.c", 2)];
        assert_eq!(
            lines_of(&with_context(&mapped, &mut t), &mapped),
            ["m8", "m2"]
        );
        let mapped = [m("/b/p.c", 2), m("/b/q.c", 9), m("/b/p.c", 5)];
        assert_eq!(
            lines_of(&with_context(&mapped, &mut t), &mapped),
            ["m2", "m9", "m5"]
        );
        // A single mapped line gets a tail; no `}` within 20 lines: none.
        let mapped = [m("/b/p.c", 18)];
        assert_eq!(
            lines_of(&with_context(&mapped, &mut t), &mapped),
            ["m18", "c19", "c20"]
        );
        let mapped = [m("/b/p.c", 21)];
        assert_eq!(lines_of(&with_context(&mapped, &mut t), &mapped), ["m21"]);
    }

    #[test]
    fn mismatches_ignore_trailing_whitespace() {
        let (_d, mut t) = tree_with(&[("p.c", "int x;  \n  y = a ? b : c;\n")]);
        assert_eq!(mismatch(&mut t, "/z/p.c", 1, "int x;"), None);
        assert_eq!(mismatch(&mut t, "/z/p.c", 2, "  y = a ? b : c;"), None);
        let got = mismatch(&mut t, "/z/p.c", 2, "  y = 1;").unwrap();
        assert_eq!(got.file_source, "  y = a ? b : c;");
        assert_eq!(mismatch(&mut t, "/z/p.c", 3, "x"), None);
        assert_eq!(mismatch(&mut t, "/z/none.c", 1, "x"), None);
    }

    #[test]
    fn missing_btf_text_is_filled_from_the_file() {
        let (_d, mut t) = tree_with(&[("src/p.c", "int f(void)\n{\n    return 1;\n}\n")]);
        let rows = [
            (Some("/build/src/p.c"), Some(1), Some("int f(void)")),
            (Some("/build/src/p.c"), Some(3), None),
            (Some("/other/q.c"), Some(7), Some("")),
        ];
        let ctx = dump_context(rows.into_iter(), &mut t);
        let got: Vec<(&str, u32, Option<&str>)> = ctx
            .rows
            .iter()
            .map(|r| (r.kind, r.line, r.source.as_deref()))
            .collect();
        assert_eq!(
            got,
            [
                ("mapped", 1, Some("int f(void)")),
                ("context", 2, Some("{")),
                ("mapped", 3, Some("    return 1;")),
                ("mapped", 7, None),
            ]
        );
        assert!(ctx.mismatches.is_empty());
    }
}
