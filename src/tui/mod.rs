//! `brr` / `brr top`: the interactive live table and drilldown.
//!
//! Threads: the UI thread (this module's loop) blocks on one channel fed by
//! a terminal-input thread, a signal thread, the worker (`worker.rs`: one
//! thread for windows, their context and the drilldown's reads) and a
//! profile's thread while one runs;
//! it redraws only when the state says something visible changed. The
//! terminal is restored on every way out: quit, SIGINT/SIGTERM/SIGHUP, a
//! closed terminal, and a panic on any thread.
//!
//! Modules: `app` holds the live table's state and keys, `drill` the
//! drilldown's, both without I/O (outside effects are returned as
//! [`effect::Effect`]s for the loop here); `ui` draws that state in the
//! colours of `theme`; `worker` does the kernel work off the UI thread;
//! `text` has the input, wrap and scroll helpers both views share.

pub(crate) mod app;
pub(crate) mod chart;
pub(crate) mod drill;
pub(crate) mod effect;
pub(crate) mod history;
pub(crate) mod text;
pub(crate) mod theme;
pub(crate) mod ui;
pub(crate) mod worker;

#[cfg(test)]
pub(crate) mod tests;

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::sync::{mpsc, Arc};

use ratatui::backend::CrosstermBackend;
use ratatui::crossterm::event::{self, Event as TermEvent};
use ratatui::crossterm::{cursor, execute, terminal};
use ratatui::Terminal;

use crate::activity;
use crate::error::{BrrError, Result};
use crate::profile;
use crate::session::{self, Collector, Terminations, Window};
use app::App;
use effect::Effect;
use worker::{Event, Worker};

/// What the interactive view is started with, taken from the command line
/// by the caller.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Config {
    /// Seconds per activity window.
    pub delay: f64,
    pub extended: bool,
    pub cumulative: bool,
    /// Colours for a light terminal background.
    pub light: bool,
    /// Open this program's drilldown at start.
    pub program_id: Option<u32>,
    /// Start that drilldown in mixed mode.
    pub mixed: bool,
    /// Start that drilldown in the native view.
    pub native: bool,
    /// Exact kernel IPs instead of functions in the drilldown.
    pub kernel_ip_detail: bool,
    /// Hotspot rows kept per list of a profile; 0 keeps all.
    pub line_limit: usize,
    /// `--devmode` source directory; an empty path for the bare flag.
    pub devmode: Option<PathBuf>,
    /// Online CPUs: what the header's run-time share is of.
    pub cpus: usize,
    /// What `p` and the `P` form start from; the program and the kernel
    /// sample flag are set per profile.
    pub profile: profile::Request,
}

/// Leave the alternate screen and raw mode (idempotent; errors ignored:
/// this also runs from the panic hook).
fn restore_terminal() {
    let _ = terminal::disable_raw_mode();
    let mut out = std::io::stdout();
    let _ = execute!(out, terminal::LeaveAlternateScreen, cursor::Show);
    let _ = out.flush();
}

fn no_color() -> bool {
    std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty())
}

type Term = Terminal<CrosstermBackend<std::io::Stdout>>;

/// Run the TUI until the user quits, reading through `collector`; never
/// returns (the process exits with the terminal restored, without waiting
/// for a window or profile in flight, so quitting is immediate at any
/// delay).
pub(crate) fn run(config: Config, collector: Arc<Collector>) -> Result<(String, i32)> {
    // Fail before touching the terminal, so that the error is a plain
    // `brr: <message>` on stderr with its exit status: statistics must be
    // available and every program readable.
    let (window, mut listed) = Window::start_listed(&collector, session::BRIEF)?;
    if !std::io::stdout().is_terminal() || !std::io::stdin().is_terminal() {
        return Err(BrrError::Failed(
            "the interactive top view needs a terminal; use 'brr top --textmode' for plain output"
                .into(),
        ));
    }
    let terminations = Terminations::catch()?;

    // Pins show only with the context (`-x`).
    if config.extended {
        collector.attach_prog_pins(&mut listed);
    }
    // Rows at once (zero deltas) while the first window runs.
    let rows = activity::compute_owned(window.base(), listed, true, 0);

    install_panic_hook();
    let mut term = setup_terminal()?;
    let size = term.size().map(|s| (s.width, s.height)).unwrap_or((80, 24));

    let (tx, rx) = mpsc::channel::<Event>();
    spawn_input_thread(tx.clone());
    spawn_signal_thread(tx.clone(), terminations);
    let theme = ui::Theme::new(config.light, !no_color());
    let mut app = App::new(config, size, rows);
    let mut worker = Worker::spawn(tx, Some(window), collector, app.history.clone());
    let code = event_loop(&mut term, &rx, &mut worker, &mut app, &theme);
    worker.cancel_profile();
    restore_terminal();
    std::process::exit(code);
}

/// A panic on any thread restores the terminal before the report, so the
/// message is readable and the shell is usable.
fn install_panic_hook() {
    let prev_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        restore_terminal();
        prev_hook(info);
        std::process::exit(101);
    }));
}

/// Raw mode, the alternate screen and a hidden cursor; on failure the
/// terminal is put back as it was.
fn setup_terminal() -> Result<Term> {
    let setup = (|| -> std::io::Result<Term> {
        terminal::enable_raw_mode()?;
        execute!(
            std::io::stdout(),
            terminal::EnterAlternateScreen,
            cursor::Hide
        )?;
        Terminal::new(CrosstermBackend::new(std::io::stdout()))
    })();
    setup.map_err(|e| {
        restore_terminal();
        BrrError::Failed(format!("failed to set up the terminal: {e}"))
    })
}

/// Terminal input, forwarded until the UI is gone or the input stream
/// ends (a closed terminal, reported as `InputGone`).
fn spawn_input_thread(tx: mpsc::Sender<Event>) {
    std::thread::spawn(move || loop {
        match event::read() {
            Ok(ev) => {
                if tx.send(Event::Input(ev)).is_err() {
                    return;
                }
            }
            Err(_) => {
                let _ = tx.send(Event::InputGone);
                return;
            }
        }
    });
}

fn spawn_signal_thread(tx: mpsc::Sender<Event>, mut terminations: Terminations) {
    std::thread::spawn(move || loop {
        let s = terminations.wait();
        if tx.send(Event::Signal(s)).is_err() {
            return;
        }
    });
}

/// Carry out effects, redraw when something visible changed, and wait for
/// the next event; returns the exit status (128 + signal for a signal).
fn event_loop(
    term: &mut Term,
    rx: &mpsc::Receiver<Event>,
    worker: &mut Worker,
    app: &mut App,
    theme: &ui::Theme,
) -> i32 {
    let mut effects = app.start();
    loop {
        for e in effects.drain(..) {
            match e {
                Effect::Quit => return 0,
                Effect::Cmd(c) => worker.send(c),
                Effect::Profile(job) => worker.profile(job),
                Effect::Cost(job) => worker.cost(job),
                Effect::CancelProfile => worker.cancel_profile(),
            }
        }
        worker.want_context(app.extended || !app.filter.is_empty() || app.filter_input.is_some());
        if std::mem::take(&mut app.dirty) {
            if let Err(e) = term.draw(|f| ui::draw(f, app, theme)) {
                restore_terminal();
                let _ = writeln!(std::io::stderr(), "brr: terminal write failed: {e}");
                std::process::exit(1);
            }
        }
        let Ok(ev) = rx.recv() else {
            return 0;
        };
        effects = match ev {
            Event::Input(TermEvent::Key(k)) => app.on_key(k),
            Event::Input(TermEvent::Resize(w, h)) => {
                // A resize also needs a full repaint of what is there.
                let _ = term.autoresize();
                app.resize(w, h);
                Vec::new()
            }
            Event::Input(_) => Vec::new(),
            Event::InputGone => return 0,
            Event::Worker(m) => app.on_msg(*m),
            Event::Signal(s) => return 128 + s,
        };
    }
}
