//! clap value parsers: option text to typed values, checked by the shared
//! parsers in `crate::values` while clap reads the arguments (as argparse
//! converted them), so that a rejected value stops the parse at the level
//! it was given to. The rejection is the text after `argument LABEL: `;
//! `super::clap_outcome` adds the parser's name and the option's label.

use super::{py_repr, quoted_list};
use crate::profile::events::{above_sample_rate, max_sample_rate, Event, EVENT_NAMES};
use crate::profile::CallGraph;
use crate::values::{self, ValueError};

/// Why an option's value was rejected, in the words the error line ends in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Rejected(pub String);

impl std::fmt::Display for Rejected {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Rejected {}

impl From<ValueError> for Rejected {
    fn from(e: ValueError) -> Rejected {
        Rejected(e.message())
    }
}

/// One of the shared parsers in `crate::values` as a clap value parser.
pub(super) fn checked<T: Clone + Send + Sync + 'static>(
    parse: fn(&str) -> Result<T, ValueError>,
) -> impl Fn(&str) -> Result<T, Rejected> + Clone + Send + Sync + 'static {
    move |s| Ok(parse(s)?)
}

/// A frequency above the readable `kernel.perf_event_max_sample_rate`
/// that no integer type holds: refused in the sysctl's words, as a
/// smaller one above the limit is when the capture starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct AboveSampleRate(pub String);

impl std::fmt::Display for AboveSampleRate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for AboveSampleRate {}

/// `-F`: a positive integer; one too large for u64 is above any sample
/// rate the kernel allows, so it gets the sysctl's message when that
/// limit is readable.
pub(super) fn frequency(s: &str) -> Result<u64, Box<dyn std::error::Error + Send + Sync>> {
    match values::positive_int(s) {
        Err(ValueError::AtMost(m)) => match max_sample_rate() {
            Some(max) if max > 0 => Err(AboveSampleRate(above_sample_rate(s.trim(), max)).into()),
            _ => Err(Rejected::from(ValueError::AtMost(m)).into()),
        },
        r => r.map_err(|e| Rejected::from(e).into()),
    }
}

pub(super) fn event(s: &str) -> Result<Event, Rejected> {
    Event::from_name(s).ok_or_else(|| {
        Rejected(format!(
            "unsupported perf event {}; run 'brr perf-events' to list openable events; expected one of: {}",
            py_repr(s),
            EVENT_NAMES.join(", ")
        ))
    })
}

/// One of a fixed set of words, in argparse's words when it is not.
fn choice<T: Copy>(s: &str, choices: &[(&'static str, T)]) -> Result<T, Rejected> {
    choices
        .iter()
        .find(|(name, _)| *name == s)
        .map(|&(_, v)| v)
        .ok_or_else(|| {
            let names: Vec<&str> = choices.iter().map(|(n, _)| *n).collect();
            Rejected(format!(
                "invalid choice: {} (choose from {})",
                py_repr(s),
                quoted_list(&names)
            ))
        })
}

/// `serve-mcp --socket-mode`: permission bits in octal (`0660`, `660`).
pub(super) fn socket_mode(s: &str) -> Result<u32, Rejected> {
    u32::from_str_radix(s, 8)
        .ok()
        .filter(|&m| m <= 0o777 && !s.is_empty())
        .ok_or_else(|| {
            Rejected(format!(
                "invalid mode: {} (octal, at most 0777)",
                py_repr(s)
            ))
        })
}

pub(super) fn call_graph(s: &str) -> Result<CallGraph, Rejected> {
    choice(s, &CallGraph::ALL.map(|c| (c.name(), c)))
}

/// `top --inspect-mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum InspectMode {
    Source,
    Mixed,
    Native,
}

pub(super) fn inspect_mode(s: &str) -> Result<InspectMode, Rejected> {
    choice(
        s,
        &[
            ("source", InspectMode::Source),
            ("mixed", InspectMode::Mixed),
            ("native", InspectMode::Native),
        ],
    )
}

/// A perf ring setting: `auto` (None) or a number. (Not a bare `Option`:
/// clap reads `Option<Option<T>>` as an option whose value may be left out.)
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Auto(pub Option<u64>);

/// How `top` (and bare `brr`) and `profile` differ on the capture options
/// they share: `top`, like the TUI's profile form, also reads an empty
/// value as auto and names the setting in its messages.
pub(super) trait Dialect:
    Clone + Copy + std::fmt::Debug + Default + Send + Sync + 'static
{
    fn perf_pages(s: &str) -> Result<Auto, Rejected>;
    fn drain_ms(s: &str) -> Result<Auto, Rejected>;
}

#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(super) struct TopDialect;

impl Dialect for TopDialect {
    fn perf_pages(s: &str) -> Result<Auto, Rejected> {
        values::perf_pages_or_empty(s).map(Auto).map_err(Rejected)
    }
    fn drain_ms(s: &str) -> Result<Auto, Rejected> {
        values::drain_ms_or_empty(s).map(Auto).map_err(Rejected)
    }
}

#[derive(Debug, Clone, Copy, Default)]
pub(super) struct ProfileDialect;

impl Dialect for ProfileDialect {
    fn perf_pages(s: &str) -> Result<Auto, Rejected> {
        Ok(Auto(values::perf_pages(s)?))
    }
    fn drain_ms(s: &str) -> Result<Auto, Rejected> {
        Ok(Auto(values::drain_ms(s)?))
    }
}
