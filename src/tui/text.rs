//! Text and key helpers shared by the live table and the drilldown: the
//! one-line text input, the keys that quit from anywhere, word wrap, and
//! keeping a cursor inside a scrolled viewport.

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

/// Greedy word wrap to `width` cells (long words are cut).
pub(crate) fn wrap(text: &str, width: usize) -> Vec<String> {
    let width = width.max(1);
    let mut out = Vec::new();
    let mut line = String::new();
    let mut len = 0;
    for word in text.split(' ') {
        let mut w: Vec<char> = word.chars().collect();
        if len > 0 && len + 1 + w.len() > width {
            out.push(std::mem::take(&mut line));
            len = 0;
        }
        if len > 0 {
            line.push(' ');
            len += 1;
        }
        while len + w.len() > width {
            let take = width - len;
            line.extend(w.drain(..take));
            out.push(std::mem::take(&mut line));
            len = 0;
        }
        len += w.len();
        line.extend(w);
    }
    out.push(line);
    out
}

/// `1 sample`, `1,234 samples`: a count of samples in the TUI's number
/// style (the table's thousands separators).
pub(crate) fn samples_text(n: u64) -> String {
    if n == 1 {
        "1 sample".into()
    } else {
        format!("{} samples", crate::render::num::commas(n))
    }
}

/// `s` cut to `width` cells, ending in `…` when it was cut.
pub(crate) fn fit(s: &str, width: usize) -> String {
    if s.chars().count() <= width {
        return s.to_string();
    }
    let mut out: String = s.chars().take(width.saturating_sub(1)).collect();
    if width > 0 {
        out.push('…');
    }
    out
}

/// The first shown row: `top` moved only as far as needed to keep the
/// cursor in a viewport of `height` rows over `n` rows.
pub(crate) fn scroll_top(top: usize, cursor: usize, n: usize, height: usize) -> usize {
    let top = top.min(n.saturating_sub(height));
    if cursor < top {
        cursor
    } else if cursor >= top + height {
        cursor + 1 - height
    } else {
        top
    }
}

/// A one-line text input (the delay dialog and the filter).
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Input {
    pub text: String,
}

impl Input {
    pub(crate) fn new(text: &str) -> Input {
        Input { text: text.into() }
    }

    /// Apply an editing key; false if the key is not an editing key.
    pub(crate) fn edit(&mut self, k: &KeyEvent) -> bool {
        match k.code {
            KeyCode::Char('u') if k.modifiers.contains(KeyModifiers::CONTROL) => {
                self.text.clear();
                true
            }
            KeyCode::Char(c) if !k.modifiers.contains(KeyModifiers::CONTROL) => {
                self.text.push(c);
                true
            }
            KeyCode::Backspace => {
                self.text.pop();
                true
            }
            _ => false,
        }
    }
}

/// Ctrl+C and Ctrl+Q quit from everywhere, also while typing.
pub(crate) fn is_hard_quit(k: &KeyEvent) -> bool {
    k.modifiers.contains(KeyModifiers::CONTROL)
        && matches!(k.code, KeyCode::Char('c') | KeyCode::Char('q'))
}
