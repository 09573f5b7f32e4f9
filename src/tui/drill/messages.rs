//! Worker messages for the drilldown (the image, the disassembly of the
//! mixed and native views, profile progress and results) and the commands
//! it sends the worker.

use std::sync::Arc;

use super::{Drill, Meta, Overlay, Running};
use crate::error::BrrError;
use crate::inspect::drilldown::Mode;
use crate::profile;
use crate::tui::effect::Effect;
use crate::tui::worker::{Cmd, Msg, ProfileDone, ProfileJob};

/// The status while the mixed or native view waits for its disassembly.
fn rendering(mode: Mode) -> String {
    format!("Rendering {} view...", mode.name())
}

/// Whether `message` is the status [`rendering`] set, for either view (the
/// mode may have changed since it was set).
fn is_rendering(message: &str) -> bool {
    [Mode::Mixed, Mode::Native]
        .into_iter()
        .any(|m| message == rendering(m))
}

impl Drill {
    pub(crate) fn on_msg(&mut self, msg: Msg) -> Vec<Effect> {
        self.dirty = true;
        match msg {
            Msg::Loaded { seq, result } if seq == self.load_seq => match result {
                Ok(img) => {
                    // Without line info the instructions show in source
                    // mode too, so their helper calls need names now.
                    let names_now = img.lines.is_empty();
                    self.image = Some(img);
                    self.rebuild(true);
                    if self.mode != Mode::Source || names_now {
                        return self.request_disasm();
                    }
                }
                Err(e) => self.failed = Some(e.render()),
            },
            Msg::Disasm {
                seq,
                call_names,
                native,
            } if Some(seq) == self.disasm_seq => {
                self.disasm_seq = None;
                self.disasm = Some((call_names, native));
                if self.message.as_deref().is_some_and(is_rendering) {
                    self.message = None;
                }
                if let Some(why) = self.native_unavailable() {
                    self.message = Some(why);
                }
                if self.mode != Mode::Source {
                    self.rebuild(true);
                } else if self.image.as_ref().is_some_and(|i| i.lines.is_empty()) {
                    self.rebuild(false);
                }
            }
            Msg::Vanished { id } if id == self.id => self.vanished = true,
            Msg::Progress {
                seq,
                elapsed,
                samples,
            } => {
                if let Some(r) = self.running.as_mut().filter(|r| r.seq == seq) {
                    r.elapsed = elapsed;
                    r.samples = samples;
                }
            }
            Msg::Profiled { seq, result }
                if self.running.as_ref().is_some_and(|r| r.seq == seq) =>
            {
                self.finish_profile(result);
            }
            Msg::Exported(result) => {
                self.message = Some(match result {
                    Ok(m) | Err(m) => m,
                });
            }
            _ => self.dirty = false,
        }
        Vec::new()
    }

    /// The profile in flight ended: show its rows with the cursor on the
    /// hottest line, or its error (a vanished program also says so).
    fn finish_profile(&mut self, result: Result<ProfileDone, BrrError>) {
        self.running = None;
        match result {
            Ok(done) => {
                let capture = &done.report.capture;
                self.meta = Some(Meta {
                    event: capture.selected_event.clone(),
                    frequency: capture.frequency,
                    actual_duration: capture.telemetry.actual_duration,
                    samples: done
                        .report
                        .program(self.id)
                        .map_or(0, |p| p.inclusive_samples),
                });
                self.profile = Some(done.input);
                self.native = done.native;
                self.last = Some((done.profile, done.report));
                self.message = None;
                self.rebuild(true);
                self.cursor_to_hottest();
            }
            Err(e) => {
                if matches!(e, BrrError::NoProgram(_)) {
                    self.vanished = true;
                }
                self.message = Some(e.render());
            }
        }
        self.refresh_lines();
    }

    /// `F`: ask the worker to write the last profile's files.
    pub(super) fn export_last(&mut self) -> Vec<Effect> {
        match &self.last {
            Some((profile, _)) => {
                self.message = Some("saving folded stacks and a flame graph...".into());
                vec![Effect::Cmd(Cmd::Export {
                    id: self.id,
                    profile: Arc::clone(profile),
                })]
            }
            None => {
                self.message = Some("no profile to save yet: press p to profile".into());
                Vec::new()
            }
        }
    }

    /// `t`: the who-pays overlay of the last profile.
    pub(super) fn open_who_pays(&mut self) {
        let paid = self.last_program().is_some_and(|p| !p.tasks.is_empty());
        match &self.last {
            Some(_) if paid => {
                self.overlay = Overlay::WhoPays;
                self.message = Some("who pays open; Esc or t closes".into());
            }
            Some(_) => {
                self.message = Some("the last profile has no samples of this program".into())
            }
            None => self.message = Some("no profile yet: press p to profile".into()),
        }
    }

    /// `H`: the hints overlay of the last profile.
    pub(super) fn open_hints(&mut self) {
        if !self.hints().is_empty() {
            self.overlay = Overlay::Hints;
            self.message = Some("hints open; Esc or H closes".into());
        } else if self.last.is_some() {
            self.message = Some("the last profile shows no anti-pattern: no hints".into());
        } else {
            self.message = Some("no profile yet: press p to profile".into());
        }
    }

    /// In the native view without native code: why, for the status line.
    pub(super) fn native_unavailable(&self) -> Option<String> {
        match (&self.disasm, self.mode) {
            (Some((_, Err(why))), Mode::Native) => Some(format!("no native code to show: {why}")),
            _ => None,
        }
    }

    pub(super) fn request_disasm(&mut self) -> Vec<Effect> {
        if self.disasm.is_some() {
            return Vec::new();
        }
        if self.mode != Mode::Source {
            self.message = Some(rendering(self.mode));
        }
        let seq = self.next_seq();
        self.disasm_seq = Some(seq);
        vec![Effect::Cmd(Cmd::Disasm { id: self.id, seq })]
    }

    pub(super) fn start_profile(&mut self, request: profile::Request) -> Vec<Effect> {
        let seq = self.next_seq();
        self.running = Some(Running {
            seq,
            duration: request.duration,
            frequency: request.frequency,
            elapsed: 0.0,
            samples: 0,
        });
        self.message = None;
        self.refresh_lines();
        vec![Effect::Profile(ProfileJob {
            seq,
            id: self.id,
            request,
            line_limit: self.config.line_limit,
        })]
    }

    pub(super) fn default_request(&self) -> profile::Request {
        profile::Request {
            // `p` always captures kernel samples, whatever
            // `--kernel-samples` says: the drilldown shows helper and
            // kernel rows under their BPF lines (the flag only pre-sets
            // the `P` form's checkbox).
            kernel_samples: true,
            program_ids: vec![self.id],
            // The worker fills in its own root.
            ..self.config.profile.clone()
        }
    }
}
