//! Value parsers shared by the command line and the TUI's input fields, so
//! that both accept and reject exactly the same text, and their range
//! checks on numbers, which `profile::Request::validate` applies too.
//!
//! Numbers follow Python's `int()`/`float()` as the original did, with one
//! deliberate rule for digit separators: `_` is accepted only between two
//! digits (`1_0` is 10; `_1`, `1_`, `1__0` and `1_.5` are rejected).
//! Non-finite floats are rejected.

/// Longest accepted time value (about 115 days): anything longer is a typo,
/// and it keeps every deadline computation far from overflow.
pub const MAX_SECONDS: f64 = 1e7;

/// Why a value was rejected; [`ValueError::message`] is the command-line text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ValueError {
    NotANumber,
    NotAnInteger,
    NotPositive,
    Negative,
    /// Above the largest accepted value (its decimal text).
    AtMost(String),
    NotPowerOfTwo,
    NotAnAddress,
}

impl ValueError {
    pub fn message(&self) -> String {
        match self {
            ValueError::NotANumber => "must be a number".into(),
            ValueError::NotAnInteger => "must be an integer".into(),
            ValueError::NotPositive => "must be greater than 0".into(),
            ValueError::Negative => "must be 0 or greater".into(),
            ValueError::AtMost(max) => format!("must be at most {max}"),
            ValueError::NotPowerOfTwo => "must be 'auto' or a positive power of two".into(),
            ValueError::NotAnAddress => {
                "must be ADDRESS:PORT with a numeric address, e.g. 127.0.0.1:9435 or [::1]:9435"
                    .into()
            }
        }
    }
}

impl std::fmt::Display for ValueError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message())
    }
}

/// Drop `_` separators, or None when one is not between two ASCII digits.
fn without_separators(t: &str) -> Option<String> {
    let b = t.as_bytes();
    let mut out = String::with_capacity(t.len());
    for (i, c) in t.char_indices() {
        if c == '_' {
            let before = i.checked_sub(1).and_then(|j| b.get(j));
            let after = b.get(i + 1);
            if !matches!((before, after), (Some(x), Some(y)) if x.is_ascii_digit() && y.is_ascii_digit())
            {
                return None;
            }
        } else {
            out.push(c);
        }
    }
    Some(out)
}

/// A finite float; surrounding whitespace is ignored.
pub(crate) fn number(s: &str) -> Result<f64, ValueError> {
    let t = without_separators(s.trim()).ok_or(ValueError::NotANumber)?;
    // Rust also takes "infinity"/"nan"; they fail the finiteness check below.
    let v: f64 = t.parse().map_err(|_| ValueError::NotANumber)?;
    if v.is_finite() {
        Ok(v)
    } else {
        Err(ValueError::NotANumber)
    }
}

/// A time length in seconds: `0 < v <= MAX_SECONDS`.
pub(crate) fn seconds(s: &str) -> Result<f64, ValueError> {
    seconds_in_range(number(s)?)
}

/// [`seconds`]' range check on a number already parsed.
pub(crate) fn seconds_in_range(v: f64) -> Result<f64, ValueError> {
    if v.is_nan() {
        Err(ValueError::NotANumber)
    } else if v <= 0.0 {
        Err(ValueError::NotPositive)
    } else if v > MAX_SECONDS {
        Err(ValueError::AtMost(format!("{MAX_SECONDS}")))
    } else {
        Ok(v)
    }
}

/// An integer with optional sign; magnitudes beyond i128 saturate, which
/// every caller then rejects as too large.
pub(crate) fn integer(s: &str) -> Result<i128, ValueError> {
    let t = without_separators(s.trim()).ok_or(ValueError::NotAnInteger)?;
    let (neg, digits) = if let Some(rest) = t.strip_prefix('-') {
        (true, rest)
    } else {
        (false, t.strip_prefix('+').unwrap_or(&t))
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(ValueError::NotAnInteger);
    }
    let magnitude = digits.parse::<i128>().unwrap_or(i128::MAX);
    Ok(if neg { -magnitude } else { magnitude })
}

fn at_most<T: TryFrom<i128> + std::fmt::Display + Copy>(v: i128, max: T) -> Result<T, ValueError> {
    T::try_from(v).map_err(|_| ValueError::AtMost(max.to_string()))
}

/// An integer `> 0` that fits in u64.
pub(crate) fn positive_int(s: &str) -> Result<u64, ValueError> {
    let v = integer(s)?;
    if v <= 0 {
        return Err(ValueError::NotPositive);
    }
    at_most(v, u64::MAX)
}

/// An integer `>= 0` that fits in u64.
pub(crate) fn non_negative_int(s: &str) -> Result<u64, ValueError> {
    let v = integer(s)?;
    if v < 0 {
        return Err(ValueError::Negative);
    }
    at_most(v, u64::MAX)
}

/// A kernel object ID: `> 0` and a u32, as the kernel's IDs are.
pub(crate) fn object_id(s: &str) -> Result<u32, ValueError> {
    let v = integer(s)?;
    if v <= 0 {
        return Err(ValueError::NotPositive);
    }
    at_most(v, u32::MAX)
}

/// A listening address: a numeric IPv4 or bracketed IPv6 address and a
/// port (0 lets the kernel choose). Host names are not resolved, so the
/// address served is always the one written.
pub(crate) fn listen_address(s: &str) -> Result<std::net::SocketAddr, ValueError> {
    s.trim().parse().map_err(|_| ValueError::NotAnAddress)
}

fn is_auto(s: &str) -> bool {
    s.trim().eq_ignore_ascii_case("auto")
}

/// Perf ring data pages per CPU: `auto` (None) or a power of two that fits
/// in u32. An empty value is not an integer.
pub(crate) fn perf_pages(s: &str) -> Result<Option<u64>, ValueError> {
    if is_auto(s) {
        return Ok(None);
    }
    let v = integer(s)?;
    if v <= 0 {
        return Err(ValueError::NotPositive);
    }
    let v = u64::try_from(v).map_err(|_| ValueError::NotPowerOfTwo)?;
    pages_in_range(v).map(Some)
}

/// [`perf_pages`]' check on a number: a power of two that fits in u32.
pub(crate) fn pages_in_range(v: u64) -> Result<u64, ValueError> {
    if v == 0 {
        Err(ValueError::NotPositive)
    } else if v > u64::from(u32::MAX) || !v.is_power_of_two() {
        Err(ValueError::NotPowerOfTwo)
    } else {
        Ok(v)
    }
}

/// Longest interval between ring sweeps in ms: `auto` (None) or `> 0`;
/// values past u32 are clamped (no sweep waits 49 days).
pub(crate) fn drain_ms(s: &str) -> Result<Option<u64>, ValueError> {
    if is_auto(s) {
        return Ok(None);
    }
    let v = integer(s)?;
    if v <= 0 {
        return Err(ValueError::NotPositive);
    }
    Ok(Some(v.min(i128::from(u32::MAX)) as u64))
}

/// [`drain_ms`]' range on a number: `1..=u32::MAX`.
pub(crate) fn drain_ms_in_range(v: u64) -> Result<u64, ValueError> {
    if v == 0 {
        Err(ValueError::NotPositive)
    } else {
        at_most(i128::from(v), u32::MAX).map(u64::from)
    }
}

/// [`perf_pages`] for `top` and the TUI form: empty means auto, and the
/// messages name the setting.
pub(crate) fn perf_pages_or_empty(s: &str) -> Result<Option<u64>, String> {
    if s.trim().is_empty() {
        return Ok(None);
    }
    perf_pages(s).map_err(|e| match e {
        ValueError::NotAnInteger => "perf buffer pages must be auto or an integer".to_string(),
        _ => "perf buffer pages must be auto or a positive power of two".to_string(),
    })
}

/// [`drain_ms`] for `top` and the TUI form: empty means auto.
pub(crate) fn drain_ms_or_empty(s: &str) -> Result<Option<u64>, String> {
    if s.trim().is_empty() {
        return Ok(None);
    }
    drain_ms(s).map_err(|e| match e {
        ValueError::NotAnInteger => {
            "perf drain milliseconds must be auto or an integer".to_string()
        }
        _ => "perf drain milliseconds must be greater than zero".to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn separators_only_between_digits() {
        assert_eq!(number("1_0"), Ok(10.0));
        assert_eq!(number(" 1_000.2_5 "), Ok(1000.25));
        assert_eq!(integer("1_0"), Ok(10));
        for bad in ["_1", "1_", "1__0", "1_.5", "+_1", "_"] {
            assert_eq!(number(bad), Err(ValueError::NotANumber), "{bad}");
            assert_eq!(integer(bad), Err(ValueError::NotAnInteger), "{bad}");
        }
    }

    #[test]
    fn numbers() {
        assert_eq!(number("+2.5"), Ok(2.5));
        assert_eq!(number("1e-9"), Ok(1e-9));
        for bad in [
            "nan", "inf", "-inf", "infinity", "1e400", "", "abc", "1,5", "é",
        ] {
            assert_eq!(number(bad), Err(ValueError::NotANumber), "{bad}");
        }
    }

    #[test]
    fn seconds_range() {
        assert_eq!(seconds("0.5"), Ok(0.5));
        assert_eq!(seconds("1e7"), Ok(1e7));
        assert_eq!(seconds("0"), Err(ValueError::NotPositive));
        assert_eq!(seconds("-3"), Err(ValueError::NotPositive));
        assert_eq!(
            seconds("1e300").unwrap_err().message(),
            "must be at most 10000000"
        );
    }

    #[test]
    fn integers() {
        assert_eq!(positive_int(" +5 "), Ok(5));
        assert_eq!(positive_int("0"), Err(ValueError::NotPositive));
        assert_eq!(positive_int("1.5"), Err(ValueError::NotAnInteger));
        assert_eq!(non_negative_int("0"), Ok(0));
        assert_eq!(non_negative_int("-1"), Err(ValueError::Negative));
        assert_eq!(non_negative_int("18446744073709551615"), Ok(u64::MAX));
        assert_eq!(
            non_negative_int("99999999999999999999999999999999999999999999")
                .unwrap_err()
                .message(),
            "must be at most 18446744073709551615"
        );
        assert_eq!(
            non_negative_int("-99999999999999999999999999999999999999999999"),
            Err(ValueError::Negative)
        );
        assert_eq!(object_id("4294967295"), Ok(u32::MAX));
        assert_eq!(
            object_id("4294967296").unwrap_err().message(),
            "must be at most 4294967295"
        );
        assert_eq!(object_id("-5"), Err(ValueError::NotPositive));
    }

    #[test]
    fn pages_and_drain() {
        assert_eq!(perf_pages(" AUTO "), Ok(None));
        assert_eq!(perf_pages("64"), Ok(Some(64)));
        assert_eq!(perf_pages(""), Err(ValueError::NotAnInteger));
        assert_eq!(perf_pages("0"), Err(ValueError::NotPositive));
        assert_eq!(perf_pages("3"), Err(ValueError::NotPowerOfTwo));
        assert_eq!(perf_pages("8589934592"), Err(ValueError::NotPowerOfTwo));
        assert_eq!(drain_ms("auto"), Ok(None));
        assert_eq!(drain_ms("99999999999"), Ok(Some(u64::from(u32::MAX))));
        assert_eq!(drain_ms("0"), Err(ValueError::NotPositive));
        assert_eq!(perf_pages_or_empty(" "), Ok(None));
        assert_eq!(
            perf_pages_or_empty("x").unwrap_err(),
            "perf buffer pages must be auto or an integer"
        );
        assert_eq!(
            perf_pages_or_empty("3").unwrap_err(),
            "perf buffer pages must be auto or a positive power of two"
        );
        assert_eq!(drain_ms_or_empty(""), Ok(None));
        assert_eq!(
            drain_ms_or_empty("-1").unwrap_err(),
            "perf drain milliseconds must be greater than zero"
        );
    }

    #[test]
    fn range_checks_agree_with_the_parsers() {
        assert_eq!(seconds_in_range(1e7), Ok(1e7));
        assert_eq!(seconds_in_range(0.0), Err(ValueError::NotPositive));
        assert_eq!(seconds_in_range(f64::NAN), Err(ValueError::NotANumber));
        assert_eq!(seconds_in_range(2e7), seconds("2e7"));
        assert_eq!(pages_in_range(64), Ok(64));
        assert_eq!(pages_in_range(0), perf_pages("0").map(|_| 0));
        assert_eq!(pages_in_range(12), Err(ValueError::NotPowerOfTwo));
        assert_eq!(pages_in_range(1 << 32), Err(ValueError::NotPowerOfTwo));
        assert_eq!(drain_ms_in_range(1), Ok(1));
        assert_eq!(drain_ms_in_range(0), Err(ValueError::NotPositive));
        assert_eq!(
            drain_ms_in_range(1 << 32).unwrap_err().message(),
            "must be at most 4294967295"
        );
    }

    #[test]
    fn listen_addresses() {
        assert_eq!(listen_address("127.0.0.1:9435").map(|a| a.port()), Ok(9435));
        assert!(listen_address("[::1]:0").is_ok_and(|a| a.ip().is_loopback()));
        for bad in [
            "localhost:9435",
            "127.0.0.1",
            ":9435",
            "1.2.3.4:70000",
            "::1:80",
            "",
        ] {
            assert_eq!(listen_address(bad), Err(ValueError::NotAnAddress), "{bad}");
        }
    }
}
