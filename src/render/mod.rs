//! Turning plain data into text tables, JSON and CSV.

pub mod csv;
pub mod dump;
pub mod json;
pub mod listing;
pub mod table;
pub mod textmode;

/// The output format chosen on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Text,
    Json { pretty: bool },
    Csv,
}

/// Python-style shortest round-trip float text (`5.0`, `2.5e-05`, `1e+16`),
/// used by both JSON and CSV.
pub fn float(v: f64) -> String {
    if !v.is_finite() {
        return if v.is_nan() {
            "NaN".into()
        } else if v > 0.0 {
            "Infinity".into()
        } else {
            "-Infinity".into()
        };
    }
    if v == 0.0 {
        return if v.is_sign_negative() { "-0.0" } else { "0.0" }.into();
    }
    let sci = format!("{v:e}");
    let (mant, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    if (-4..16).contains(&exp) {
        let plain = format!("{v}");
        if plain.contains('.') {
            plain
        } else {
            format!("{plain}.0")
        }
    } else {
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{mant}e{sign}{:02}", exp.abs())
    }
}

/// Join pinned paths (or other lists) for a text cell: `-` when empty.
pub fn dash_join(items: &[String], sep: &str) -> String {
    if items.is_empty() {
        "-".into()
    } else {
        items.join(sep)
    }
}

#[cfg(test)]
mod tests {
    use super::float;

    #[test]
    fn python_float_repr() {
        assert_eq!(float(5.0), "5.0");
        assert_eq!(float(0.5), "0.5");
        assert_eq!(float(2.25), "2.25");
        assert_eq!(float(1e-9), "1e-09");
        assert_eq!(float(2.5e-5), "2.5e-05");
        assert_eq!(float(1e16), "1e+16");
        assert_eq!(float(1e15), "1000000000000000.0");
        assert_eq!(float(0.0001), "0.0001");
        assert_eq!(float(1.0000001), "1.0000001");
        assert_eq!(float(123456.789), "123456.789");
        assert_eq!(float(0.0), "0.0");
    }
}
