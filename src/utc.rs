//! Unix times as ISO 8601 UTC dates, for any layer: a program's load time
//! (read in `kernel`) and a stream window's bounds (written by `render`)
//! share this one calendar computation.

/// Days since 1970-01-01 -> (year, month, day) in the proleptic Gregorian
/// calendar, counting in 400-year eras of 146097 days.
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468; // shift the epoch to 0000-03-01
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097); // day of era [0, 146096]
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365; // [0, 399]
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100); // day of March-based year
    let mp = (5 * doy + 2) / 153; // March = 0
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// Seconds since the epoch as `YYYY-MM-DDTHH:MM:SSZ`.
pub fn iso8601(unix_secs: i64) -> String {
    let days = unix_secs.div_euclid(86_400);
    let secs = unix_secs.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    let (hh, mm, ss) = (secs / 3600, secs % 3600 / 60, secs % 60);
    // Every listed program has a date: fill the fixed shape digit by
    // digit rather than through the formatter.
    if let Ok(year @ 0..=9999) = u32::try_from(y) {
        let mut b = *b"0000-00-00T00:00:00Z";
        let fields = [(0, year, 4), (5, m, 2), (8, d, 2)];
        let times = [(11, hh, 2), (14, mm, 2), (17, ss, 2)];
        let times = times.map(|(at, v, n)| (at, u32::try_from(v).unwrap_or(0), n));
        for (at, mut v, n) in fields.into_iter().chain(times) {
            for i in (at..at + n).rev() {
                b[i] = b'0' + (v % 10) as u8;
                v /= 10;
            }
        }
        return String::from_utf8_lossy(&b).into_owned();
    }
    format!("{y:04}-{m:02}-{d:02}T{hh:02}:{mm:02}:{ss:02}Z")
}

/// Unix seconds `t` to the millisecond, `2026-12-01T09:30:05.123Z`
/// (clamped to 0 and below the year 10000, so that it always has this
/// shape).
pub(crate) fn iso8601_millis(t: f64) -> String {
    let t = if t.is_finite() {
        t.clamp(0.0, 253_402_300_799.999)
    } else {
        0.0
    };
    let millis = (t * 1000.0).round() as i64;
    let mut out = iso8601(millis.div_euclid(1000));
    out.pop(); // the `Z`, after the fraction
    out.push_str(&format!(".{:03}Z", millis.rem_euclid(1000)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds() {
        assert_eq!(iso8601(0), "1970-01-01T00:00:00Z");
        assert_eq!(iso8601(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(iso8601(1_796_115_738), "2026-12-01T09:02:18Z");
        assert_eq!(iso8601(4_107_542_399), "2100-02-28T23:59:59Z");
        assert_eq!(iso8601(-1), "1969-12-31T23:59:59Z");
        assert_eq!(iso8601(253_402_300_800), "10000-01-01T00:00:00Z");
        let _ = iso8601(i64::MAX);
        let _ = iso8601(i64::MIN);
    }

    #[test]
    fn millis() {
        assert_eq!(iso8601_millis(0.0), "1970-01-01T00:00:00.000Z");
        assert_eq!(iso8601_millis(951_782_400.5), "2000-02-29T00:00:00.500Z");
        assert_eq!(
            iso8601_millis(1_796_117_985.659_2),
            "2026-12-01T09:39:45.659Z"
        );
        assert_eq!(iso8601_millis(-5.0), "1970-01-01T00:00:00.000Z");
        assert_eq!(iso8601_millis(f64::NAN), "1970-01-01T00:00:00.000Z");
        assert_eq!(iso8601_millis(1e300), "9999-12-31T23:59:59.999Z");
    }
}
