//! The `P` profile-options form: its fields, their validation into a
//! profile request, and its keys.

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::Drill;
use crate::profile::{self, CallGraph, Event, Invalid};
use crate::render::num::fmt_g;
use crate::tui::effect::Effect;
use crate::tui::text::Input;
use crate::values::{self, ValueError};

pub(crate) const FORM_PROMPT: &str =
    "Edit duration, frequency, event, call graph, perf buffers, and samples; press Enter to profile";

/// Labels of the profile form's fields, in order.
pub(crate) const FORM_LABELS: [&str; 7] = [
    "duration (s)",
    "frequency (Hz)",
    "event",
    "call graph",
    "perf pages",
    "drain ms",
    "kernel/helper samples",
];

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Form {
    /// duration, frequency, event, call graph, pages, drain ms.
    pub fields: [Input; 6],
    pub kernel: bool,
    /// 0..=5 the inputs, 6 the checkbox.
    pub focus: usize,
}

impl Form {
    /// Prefilled from the profile defaults.
    pub(super) fn new(o: &profile::Request) -> Form {
        let auto = |v: Option<u64>| v.map_or_else(|| "auto".to_string(), |v| v.to_string());
        Form {
            fields: [
                Input::new(&crate::render::num::float(o.duration)),
                Input::new(&o.frequency.to_string()),
                Input::new(o.event.name()),
                Input::new(o.call_graph.name()),
                Input::new(&auto(o.pages)),
                Input::new(&auto(o.drain_ms)),
            ],
            // Prefilled on, so that P + Enter profiles like p does.
            kernel: true,
            focus: 0,
        }
    }

    /// The request these fields describe, or the first message: each
    /// field's text first, then the request's own rules
    /// ([`profile::Request::validate`]) in the form's words.
    pub(crate) fn request(&self, id: u32) -> Result<profile::Request, String> {
        const NUMBERS: &str = "duration must be numeric and frequency must be an integer";
        let f = |i: usize| self.fields[i].text.trim();
        let duration = values::number(f(0)).map_err(|_| NUMBERS)?;
        let frequency = match values::positive_int(f(1)) {
            Ok(v) => v.min(u64::from(u32::MAX)),
            Err(ValueError::NotAnInteger) => return Err(NUMBERS.into()),
            // Zero or below: the request's rule words it.
            Err(ValueError::NotPositive) => 0,
            Err(e) => return Err(format!("frequency {e}")),
        };
        let event = match f(2) {
            "" => Some(Event::Auto),
            name => Event::from_name(name),
        }
        .ok_or("event is not supported by brr; run brr perf-events to list options")?;
        let call_graph = match f(3) {
            "" => Some(CallGraph::Fp),
            name => CallGraph::from_name(name),
        }
        .ok_or("call graph must be fp or lbr")?;
        let req = profile::Request {
            event,
            duration,
            frequency,
            kernel_samples: self.kernel,
            call_graph,
            pages: values::perf_pages_or_empty(f(4))?,
            drain_ms: values::drain_ms_or_empty(f(5))?,
            program_ids: vec![id],
            pid: None,
        };
        req.validate().map_err(|e| match e {
            Invalid::Duration(ValueError::AtMost(_)) => {
                format!("duration must be at most {}", fmt_g(values::MAX_SECONDS))
            }
            Invalid::Duration(_) | Invalid::Frequency(_) => {
                "duration and frequency must be greater than zero".into()
            }
            Invalid::LbrWithoutKernelSamples => {
                "lbr call graph requires kernel/helper samples".into()
            }
            Invalid::Pages(_) => "perf buffer pages must be auto or a positive power of two".into(),
            Invalid::DrainMs(_) => "perf drain milliseconds must be greater than zero".into(),
        })?;
        Ok(req)
    }
}

impl Drill {
    pub(super) fn form_key(&mut self, k: &KeyEvent) -> Vec<Effect> {
        let Some(form) = &mut self.form else {
            return Vec::new();
        };
        let n = FORM_LABELS.len();
        match k.code {
            KeyCode::Esc => {
                self.form = None;
                // Clearing the prompt brings back the status it replaced:
                // the CPU and warning lines after a profile, else the help
                // line.
                self.message = None;
                self.refresh_lines();
            }
            KeyCode::Tab | KeyCode::Down => form.focus = (form.focus + 1) % n,
            KeyCode::BackTab | KeyCode::Up => form.focus = (form.focus + n - 1) % n,
            KeyCode::Enter | KeyCode::Char(' ') if form.focus == 6 => form.kernel = !form.kernel,
            KeyCode::Enter => match form.request(self.id) {
                Ok(req) => {
                    self.form = None;
                    return self.start_profile(req);
                }
                Err(e) => self.message = Some(e),
            },
            _ if form.focus < 6 && !k.modifiers.contains(KeyModifiers::ALT) => {
                form.fields[form.focus].edit(k);
            }
            _ => {}
        }
        Vec::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn form(fields: [&str; 6], kernel: bool) -> Form {
        Form {
            fields: fields.map(Input::new),
            kernel,
            focus: 0,
        }
    }

    /// The request's own rules, in the form's words.
    #[test]
    fn request_rules_in_the_forms_words() {
        let ok = ["2.5", "99", "cpu-clock", "lbr", "8", ""];
        let req = form(ok, true).request(42).unwrap();
        assert_eq!(req.event.name(), "cpu-clock");
        assert_eq!(req.call_graph, CallGraph::Lbr);
        assert_eq!((req.pages, req.drain_ms), (Some(8), None));
        assert_eq!(req.program_ids, vec![42]);
        assert_eq!(req.validate(), Ok(()));
        assert_eq!(
            form(ok, false).request(42).unwrap_err(),
            "lbr call graph requires kernel/helper samples"
        );
        for (fields, msg) in [
            (
                ["2e7", "99", "", "", "", ""],
                "duration must be at most 1e+07",
            ),
            (
                ["-1", "99", "", "", "", ""],
                "duration and frequency must be greater than zero",
            ),
            (
                ["1", "-5", "", "", "", ""],
                "duration and frequency must be greater than zero",
            ),
            (
                ["1", "99999999999999999999999", "", "", "", ""],
                "frequency must be at most 18446744073709551615",
            ),
        ] {
            assert_eq!(
                form(fields, true).request(1).unwrap_err(),
                msg,
                "{fields:?}"
            );
        }
        // Empty event and call graph fields are the defaults; the frequency
        // is held to what perf takes.
        let req = form(["1", "99999999999", "", "", "", ""], false)
            .request(1)
            .unwrap();
        assert_eq!((req.event, req.call_graph), (Event::Auto, CallGraph::Fp));
        assert_eq!(req.frequency, u64::from(u32::MAX));
    }
}
