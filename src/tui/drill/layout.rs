//! The drilldown's title and status lines, wrapped to the panel, and the
//! table height that is left for rows.

use super::{Drill, FORM_LABELS, HELP_LINE};
use crate::render::drilldown;
use crate::render::num::{commas, fmt_g};
use crate::tui::text::{fit, samples_text, wrap};

impl Drill {
    fn inner_width(&self) -> usize {
        (self.size.0 as usize).saturating_sub(2).max(1)
    }

    /// Status lines before wrapping.
    pub(crate) fn status_lines(&self) -> Vec<String> {
        let mut v = Vec::new();
        if let Some(f) = &self.failed {
            v.push(f.clone());
        } else if let Some(r) = &self.running {
            v.push(format!(
                "profiling program {} for {}s at {}Hz...",
                self.id,
                fmt_g(r.duration),
                r.frequency
            ));
            v.push(format!(
                "{:.1}s of {}s, {}; Esc cancels",
                r.elapsed.min(r.duration),
                fmt_g(r.duration),
                samples_text(r.samples)
            ));
            v.extend(self.message.clone());
        } else if let Some(m) = &self.message {
            v.push(m.clone());
        } else if let Some(dd) = self.dd.as_ref().filter(|d| d.profiled()) {
            v.extend(drilldown::header_lines(dd));
            match self.hints().len() {
                0 => {}
                1 => v.push("1 hint: press H".into()),
                n => v.push(format!("{n} hints: press H")),
            }
        } else if self.dd.is_some() {
            v.push(HELP_LINE.into());
        }
        if self.vanished {
            v.push(format!(
                "program {} was unloaded; Esc returns to the live table",
                self.id
            ));
        }
        v.extend(self.dev_warning.clone());
        v
    }

    /// Status lines wrapped to the panel (at most a third of it).
    pub(crate) fn status_wrapped(&self) -> Vec<String> {
        let w = self.inner_width().saturating_sub(1);
        let max = ((self.size.1 as usize) / 3).max(1);
        let mut out: Vec<String> = self
            .status_lines()
            .iter()
            .flat_map(|l| wrap(l, w))
            .collect();
        out.truncate(max);
        out
    }

    /// The title as drawn: one line, ending in `…` when the panel is
    /// too narrow for all of it.
    pub(crate) fn title_line(&self) -> String {
        fit(&self.title(), self.inner_width().saturating_sub(1))
    }

    /// Rows of the table body.
    pub(crate) fn table_height(&self) -> usize {
        let inner = (self.size.1 as usize).saturating_sub(2);
        // The title line, the status lines and the column headers.
        let mut used = 1 + self.status_wrapped().len() + 1;
        if self.form.is_some() {
            used += FORM_LABELS.len();
        }
        if self.search.is_some() {
            used += 1;
        }
        inner.saturating_sub(used).max(1)
    }

    pub(crate) fn title(&self) -> String {
        let (Some(img), Some(dd)) = (&self.image, &self.dd) else {
            return if self.failed.is_some() {
                format!("program {}", self.id)
            } else {
                format!("loading program {}...", self.id)
            };
        };
        let name = match &self.about {
            Some(a) if !a.full_name.is_empty() => a.full_name.as_str(),
            _ => img.program.display_name(),
        };
        let mut t = format!(
            "program {} {} mode={} disasm={}",
            self.id,
            name,
            dd.mode.name(),
            dd.disasm.name()
        );
        if let Some(a) = &self.about {
            if let Some(o) = &a.owner {
                t.push_str(&format!(" owner={o}"));
            }
            if let Some(x) = &a.attach {
                t.push_str(&format!(" attach={x}"));
            }
        }
        let under = self
            .profile
            .as_ref()
            .and_then(|p| p.program.as_ref())
            .is_some_and(|p| p.kernel_samples > 0);
        if under {
            t.push_str(if self.exact_ips {
                " kernel=IPs"
            } else {
                " kernel=functions"
            });
        }
        if let Some(m) = &self.meta {
            t.push_str(&format!(
                " event={} F={}Hz {:.1}s samples={}",
                m.event,
                m.frequency,
                m.actual_duration,
                commas(m.samples)
            ));
        }
        t
    }
}
