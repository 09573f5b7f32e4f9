//! Minimal CSV: quote only fields containing `,`, `"` or a newline.
//! (A few lines do not justify a dependency.)

pub fn field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// Header plus records, `\n`-terminated lines joined; no trailing newline.
pub fn render(headers: &[&str], rows: &[Vec<String>]) -> String {
    let mut out = headers.join(",");
    for row in rows {
        out.push('\n');
        let cells: Vec<String> = row.iter().map(|c| field(c)).collect();
        out.push_str(&cells.join(","));
    }
    out
}

pub fn opt<T: ToString>(v: Option<T>) -> String {
    v.map(|v| v.to_string()).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn minimal_quoting() {
        assert_eq!(field("    __u32 key = 0;"), "    __u32 key = 0;");
        assert_eq!(field("a,b"), "\"a,b\"");
        assert_eq!(field("say \"q\""), "\"say \"\"q\"\"\"");
        assert_eq!(field("x\ny"), "\"x\ny\"");
        assert_eq!(field("caf\u{e9}\r"), "caf\u{e9}\r");
        assert_eq!(
            render(&["a", "b"], &[vec!["1".into(), "".into()]]),
            "a,b\n1,"
        );
    }
}
