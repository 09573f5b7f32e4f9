//! Running `bpftool prog dump xlated id N linum` (optional; used by
//! `dump-compare` and for mixed-mode disassembly). bpftool only reads.

use std::io::Read;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::error::{BrrError, Result};

const TIMEOUT: Duration = Duration::from_secs(5);

/// One instruction entry of bpftool's JSON dump.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Entry {
    pub disasm: Option<String>,
    pub file: Option<String>,
    pub line_num: Option<i64>,
    pub line_col: Option<i64>,
    pub src: Option<String>,
}

/// bpftool in PATH, if any.
pub(crate) fn find() -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join("bpftool"))
        .find(|p| {
            p.metadata()
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
}

fn fail(msg: impl Into<String>) -> BrrError {
    BrrError::Failed(msg.into())
}

/// Run bpftool with `args`; stdout on success.
fn run(args: &[&str]) -> Result<String> {
    let exe = find().ok_or_else(|| fail("bpftool not found in PATH"))?;
    let mut child = Command::new(exe)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| fail(format!("failed to run bpftool: {e}")))?;
    let reader = |pipe: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            if let Some(mut p) = pipe {
                let _ = p.read_to_end(&mut buf);
            }
            String::from_utf8_lossy(&buf).into_owned()
        })
    };
    let out = reader(child.stdout.take().map(|p| Box::new(p) as _));
    let err = reader(child.stderr.take().map(|p| Box::new(p) as _));
    let deadline = Instant::now() + TIMEOUT;
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break s,
            Ok(None) if Instant::now() >= deadline => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(fail("bpftool dump timed out"));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(5)),
            Err(e) => return Err(fail(format!("failed to run bpftool: {e}"))),
        }
    };
    let stdout = out.join().unwrap_or_default();
    let stderr = err.join().unwrap_or_default();
    if !status.success() {
        let msg = [stderr.trim(), stdout.trim()]
            .into_iter()
            .find(|s| !s.is_empty())
            .unwrap_or("bpftool dump failed");
        return Err(fail(msg));
    }
    Ok(stdout)
}

/// Parse bpftool's JSON instruction list.
pub fn parse_json(text: &str) -> Result<Vec<Entry>> {
    let v: serde_json::Value = serde_json::from_str(text)
        .map_err(|e| fail(format!("bpftool returned invalid JSON: {e}")))?;
    let list = v
        .as_array()
        .ok_or_else(|| fail("bpftool JSON dump did not return an instruction list"))?;
    Ok(list
        .iter()
        .filter_map(|e| e.as_object())
        .map(|o| {
            let s = |k: &str| o.get(k).and_then(|v| v.as_str()).map(str::to_string);
            let i = |k: &str| o.get(k).and_then(|v| v.as_i64());
            Entry {
                disasm: s("disasm"),
                file: s("file"),
                line_num: i("line_num"),
                line_col: i("line_col"),
                src: s("src"),
            }
        })
        .collect())
}

/// Instruction indexes from bpftool's text dump (`   12: (bf) r1 = r6`).
pub fn parse_text_indexes(text: &str) -> Vec<u64> {
    text.lines()
        .filter_map(|l| {
            let t = l.trim_start_matches(' ');
            let (digits, rest) = t.split_at(t.bytes().take_while(u8::is_ascii_digit).count());
            let mut it = rest.chars();
            (!digits.is_empty()
                && it.next() == Some(':')
                && it.next().is_some_and(char::is_whitespace))
            .then(|| digits.parse().ok())
            .flatten()
        })
        .collect()
}

pub(crate) fn dump_json(id: u64) -> Result<Vec<Entry>> {
    let id = id.to_string();
    parse_json(&run(&["-j", "prog", "dump", "xlated", "id", &id, "linum"])?)
}

pub(crate) fn dump_text(id: u64) -> Result<Vec<u64>> {
    let id = id.to_string();
    let text = run(&["prog", "dump", "xlated", "id", &id, "linum"])?;
    let idx = parse_text_indexes(&text);
    if idx.is_empty() {
        return Err(fail(
            "bpftool text dump did not include instruction indexes",
        ));
    }
    Ok(idx)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_entries() {
        let e = parse_json(
            r#"[{"disasm":"(b7) r0 = 0","file":"/a.c","line_num":3,"line_col":5,"src":"x"},{"disasm":"exit"},7]"#,
        )
        .unwrap();
        assert_eq!(e.len(), 2);
        assert_eq!(e[0].line_num, Some(3));
        assert_eq!(e[1].src, None);
        assert_eq!(
            parse_json("{}").unwrap_err().render(),
            "brr: bpftool JSON dump did not return an instruction list"
        );
        assert!(parse_json("nope")
            .unwrap_err()
            .render()
            .starts_with("brr: bpftool returned invalid JSON: "));
    }

    #[test]
    fn text_indexes() {
        let t = "int f(void):\n; x = 1;\n   0: (b7) r0 = 0\n  12: (95) exit\n 3:x\n";
        assert_eq!(parse_text_indexes(t), vec![0, 12]);
    }
}
