//! The `P` profile-options form: its fields, their validation into a
//! profile request, and its keys.

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::Drill;
use crate::profile::{self, events};
use crate::render::num::fmt_g;
use crate::tui::app::Effect;
use crate::tui::text::Input;
use crate::values::{self, ValueError};

pub const FORM_PROMPT: &str =
    "Edit duration, frequency, event, call graph, perf buffers, and samples; press Enter to profile";

/// Labels of the profile form's fields, in order.
pub const FORM_LABELS: [&str; 7] = [
    "duration (s)",
    "frequency (Hz)",
    "event",
    "call graph",
    "perf pages",
    "drain ms",
    "kernel/helper samples",
];

#[derive(Debug, Clone, PartialEq)]
pub struct Form {
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
                Input::new(&o.event),
                Input::new(o.call_graph),
                Input::new(&auto(o.pages)),
                Input::new(&auto(o.drain_ms)),
            ],
            // Prefilled on, so that P + Enter profiles like p does.
            kernel: true,
            focus: 0,
        }
    }

    /// The request these fields describe, or the first validation message.
    pub fn request(&self, id: u32) -> Result<profile::Request, String> {
        let f = |i: usize| self.fields[i].text.trim().to_string();
        let frequency = values::positive_int(&f(1));
        let Ok(duration) = values::number(&f(0)) else {
            return Err("duration must be numeric and frequency must be an integer".into());
        };
        if frequency == Err(ValueError::NotAnInteger) {
            return Err("duration must be numeric and frequency must be an integer".into());
        }
        if duration <= 0.0 || frequency == Err(ValueError::NotPositive) {
            return Err("duration and frequency must be greater than zero".into());
        }
        let frequency = frequency.map_err(|e| format!("frequency {e}"))?;
        if duration > values::MAX_SECONDS {
            return Err(format!(
                "duration must be at most {}",
                fmt_g(values::MAX_SECONDS)
            ));
        }
        let event = if f(2).is_empty() { "auto".into() } else { f(2) };
        if event != "auto" && events::lookup(&event).is_none() {
            return Err(
                "event is not supported by brr; run brr perf-events to list options".into(),
            );
        }
        let call_graph = match f(3).as_str() {
            "" | "fp" => "fp",
            "lbr" => "lbr",
            _ => return Err("call graph must be fp or lbr".into()),
        };
        if call_graph == "lbr" && !self.kernel {
            return Err("lbr call graph requires kernel/helper samples".into());
        }
        let pages = values::perf_pages_or_empty(&f(4))?;
        let drain_ms = values::drain_ms_or_empty(&f(5))?;
        Ok(profile::Request {
            event,
            duration,
            frequency: frequency.min(u64::from(u32::MAX)),
            kernel_samples: self.kernel,
            call_graph,
            pages,
            drain_ms,
            program_id: Some(id as u64),
            bpffs: std::path::PathBuf::new(),
        })
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
