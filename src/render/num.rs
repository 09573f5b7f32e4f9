//! Number and string formatting shared by every output (text, JSON, CSV,
//! textmode), the TUI and the command line: the original's Python
//! `repr`/`format` rules in one place.

use std::fmt::Write as _;

/// Python-style shortest round-trip float text (`5.0`, `2.5e-05`, `1e+16`),
/// used by both JSON and CSV.
pub(crate) fn float(v: f64) -> String {
    let mut out = String::new();
    float_into(v, &mut out);
    out
}

/// [`float`] appended to `out`: a document writes a float per row.
pub(crate) fn float_into(v: f64, out: &mut String) {
    // The common case formats in place: reports write a percentage per
    // row, thousands of rows. Python writes the shortest digits in fixed
    // notation for decimal exponents in [-4, 16): exactly the magnitudes
    // from the double nearest 1e-4 up to the one nearest 1e16 (no other
    // double's shortest digits round across either).
    if (1e-4..1e16).contains(&v.abs()) {
        // ryu writes Python's shortest digits in the same fixed notation
        // over this whole range (`5.0`, `0.0001`, `1234567890123456.0`),
        // faster than `core::fmt`, which also rounds a tie between two
        // 17-digit texts up where Python takes the even one. The rest is a
        // safety net.
        let mut buf = ryu::Buffer::new();
        let text = buf.format_finite(v);
        if !text.contains('e') {
            out.push_str(text);
            return;
        }
        let from = out.len();
        let _ = write!(out, "{v}");
        if !out.get(from..).is_some_and(|t| t.contains('.')) {
            out.push_str(".0");
        }
        return;
    }
    out.push_str(&float_other(v));
}

/// [`float`] of the values outside its fixed-notation shortcut.
fn float_other(v: f64) -> String {
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
    float_by_exponent(v)
}

/// A finite, non-zero `v` as Python's `repr` writes it, decided by the
/// decimal exponent of its shortest digits (what [`float`] does for every
/// magnitude outside its fixed-notation shortcut).
fn float_by_exponent(v: f64) -> String {
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

/// Python `format(x, "g")`: 6 significant digits, fixed notation for
/// decimal exponents in [-4, 6), trailing zeros dropped.
pub(crate) fn fmt_g(x: f64) -> String {
    if x == 0.0 {
        return "0".into();
    }
    if !x.is_finite() {
        return if x.is_nan() {
            "nan"
        } else if x > 0.0 {
            "inf"
        } else {
            "-inf"
        }
        .into();
    }
    let sci = format!("{x:.5e}");
    let (mant, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let trim = |s: String| {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s
        }
    };
    if (-4..6).contains(&exp) {
        let decimals = (5 - exp).max(0) as usize;
        trim(format!("{x:.decimals$}"))
    } else {
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{}e{sign}{:02}", trim(mant.to_string()), exp.abs())
    }
}

/// How many characters `commas(n)` has, without making it.
pub(crate) fn commas_width(n: u64) -> usize {
    let digits = n.checked_ilog10().map_or(1, |l| l as usize + 1);
    digits + (digits - 1) / 3
}

/// How many characters `args` formats to, without making the text.
pub(crate) fn fmt_width(args: std::fmt::Arguments<'_>) -> usize {
    struct Count(usize);
    impl std::fmt::Write for Count {
        fn write_str(&mut self, s: &str) -> std::fmt::Result {
            self.0 += s.chars().count();
            Ok(())
        }
    }
    let mut c = Count(0);
    // Counting never fails, and neither do the Display impls given here.
    let _ = std::fmt::write(&mut c, args);
    c.0
}

/// Digits grouped by three with `,`.
pub(crate) fn commas(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A CPU share with the four decimals every table shows.
pub(crate) fn percent4(v: f64) -> String {
    format!("{v:.4}")
}

/// Python `repr()` of a string: the command line's `invalid choice: 'x'`
/// messages and the TUI's search messages quote what was typed this way.
pub(crate) fn py_repr(s: &str) -> String {
    let quote = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
    let mut out = String::new();
    out.push(quote);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            c => out.push(c),
        }
    }
    out.push(quote);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_string_repr() {
        assert_eq!(py_repr("xyz"), "'xyz'");
        assert_eq!(py_repr("it's"), "\"it's\"");
        assert_eq!(py_repr("a'\"b"), "'a\\'\"b'");
        assert_eq!(py_repr("a\\b\t\u{1}"), "'a\\\\b\\t\\x01'");
    }

    #[test]
    fn float_shortcut_agrees_with_the_exponent_rule() {
        let mut edges = vec![
            1e-4,
            1e16,
            9.999999999999999e-5,
            9999999999999998.0,
            0.1,
            1.0,
        ];
        for e in [1e-4_f64, 1e16] {
            let mut x = e;
            for _ in 0..4 {
                x = f64::from_bits(x.to_bits() - 1);
                edges.push(x);
            }
            let mut x = e;
            for _ in 0..4 {
                x = f64::from_bits(x.to_bits() + 1);
                edges.push(x);
            }
        }
        for v in edges.iter().flat_map(|&v| [v, -v]) {
            assert_eq!(float(v), float_by_exponent(v), "{v:e}");
        }
    }

    #[test]
    fn float_takes_the_even_digit_on_a_tie_as_python_does() {
        // Exactly -633308345470438.25: .2 and .3 are equally near; Python's
        // repr writes .2.
        let v = f64::from_bits(14_051_793_704_532_340_530);
        assert_eq!(float(v), "-633308345470438.2");
    }

    proptest::proptest! {
        #[test]
        fn float_shortcut_agrees_on_any_double(bits in proptest::num::u64::ANY, pct in 0u32..1_000_000) {
            let v = f64::from_bits(bits);
            if v.is_finite() && v != 0.0 {
                let ours = float(v);
                let reference = float_by_exponent(v);
                if ours != reference {
                    // `core::fmt` rounds a tie between two shortest texts
                    // up; Python (and the shortcut) take the even digit.
                    // Both must still read back as `v`, with as many digits.
                    proptest::prop_assert_eq!(ours.parse::<f64>().ok(), Some(v));
                    proptest::prop_assert_eq!(reference.parse::<f64>().ok(), Some(v));
                    proptest::prop_assert_eq!(ours.len(), reference.len());
                    let last = ours.bytes().rev().find(u8::is_ascii_digit);
                    proptest::prop_assert!(last.is_some_and(|d| (d - b'0').is_multiple_of(2)), "{ours} vs {reference}");
                }
            }
            // Percentages to 2 decimals, as reports round them.
            let p = f64::from(pct) / 100.0;
            if p != 0.0 {
                proptest::prop_assert_eq!(float(p), float_by_exponent(p));
            }
        }
    }

    #[test]
    fn float_into_appends_and_reads_only_its_own_text() {
        let mut out = String::from("[1.5,");
        for v in [5.0, 0.25, 1e20, 0.0] {
            float_into(v, &mut out);
            out.push(',');
        }
        assert_eq!(out, "[1.5,5.0,0.25,1e+20,0.0,");
    }

    #[test]
    fn fixed_range_matches_core_fmt_but_ties_round_to_even() {
        // What the fixed range wrote before ryu: Rust's shortest digits,
        // with `.0` on integers.
        let core = |v: f64| {
            let t = format!("{v}");
            if t.contains('.') {
                t
            } else {
                t + ".0"
            }
        };
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let (mut checked, mut ties) = (0, 0);
        for _ in 0..200_000 {
            // Random bits across every exponent, and round percentages.
            let bits = f64::from_bits(next());
            let pct = (next() % 1_000_000) as f64 / 100.0;
            for v in [bits, pct, -pct, 1e-4, 1e16 - 2.0, 0.1 + 0.2] {
                if (1e-4..1e16).contains(&v.abs()) {
                    let (ours, theirs) = (float(v), core(v));
                    checked += 1;
                    if ours == theirs {
                        continue;
                    }
                    // Only a tie between two 17-digit texts may differ:
                    // Python (and ryu) round it to the even digit, where
                    // core::fmt rounds up. Both read back as `v`.
                    assert_eq!(ours.len(), theirs.len(), "{v:e}");
                    assert_eq!(ours.parse::<f64>().ok(), Some(v), "{v:e}");
                    assert_eq!(theirs.parse::<f64>().ok(), Some(v), "{v:e}");
                    let last = |t: &str| t.bytes().last().map(|b| b - b'0');
                    assert_eq!(last(&ours).map(|d| d % 2), Some(0), "{v:e}");
                    assert_eq!(last(&ours).map(|d| d + 1), last(&theirs), "{v:e}");
                    ties += 1;
                }
            }
        }
        assert!(checked > 800_000);
        assert!(ties < checked / 1000, "{ties}");
        // Python: repr(1690060720831323.25) == '1690060720831323.2' (the
        // double is that tie exactly).
        assert_eq!(float(1.690_060_720_831_323_3e15), "1690060720831323.2");
    }

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

    #[test]
    fn python_g() {
        for (x, s) in [
            (1.0, "1"),
            (0.5, "0.5"),
            (2.5, "2.5"),
            (0.0001, "0.0001"),
            (1e-5, "1e-05"),
            (123456.7, "123457"),
            (1234567.0, "1.23457e+06"),
            (10.0, "10"),
            (100000.0, "100000"),
            (1e6, "1e+06"),
        ] {
            assert_eq!(fmt_g(x), s, "{x}");
        }
    }

    #[test]
    fn grouping() {
        assert_eq!(commas(0), "0");
        assert_eq!(commas(997), "997");
        assert_eq!(commas(1509314), "1,509,314");
        assert_eq!(commas(100000), "100,000");
    }

    #[test]
    fn four_decimals() {
        assert_eq!(percent4(1.0), "1.0000");
        assert_eq!(percent4(0.12345), "0.1235");
    }
}
