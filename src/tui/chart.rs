//! The history chart pane (`g` in the live table) and the drilldown's
//! CPU% sparkline, drawn from [`super::history`].

use std::collections::VecDeque;

use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::{Block, Borders, Paragraph, Sparkline};
use ratatui::Frame;

use super::app::{App, CHART_ROWS};
use super::history::{Point, Shared, WINDOWS};
use super::text::fit;
use super::theme::Theme;
use crate::render::num::{commas, fmt_g};

/// The metrics the pane charts: label, value of a point, and its text.
type Metric = (&'static str, fn(&Point) -> f64, fn(f64) -> String);

const METRICS: [Metric; 3] = [
    ("CPU%", |p| f64::from(p.cpu_pct), |v| format!("{v:.2}")),
    (
        "EXECS/s",
        |p| f64::from(p.execs_per_sec),
        |v| commas(v as u64),
    ),
    ("AVG_NS", |p| f64::from(p.avg_ns), |v| commas(v as u64)),
];

/// One metric's last `width` points as sparkline bars (scaled so that
/// fractions of a percent still show), with its latest, lowest and highest
/// values.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Series {
    pub bars: Vec<u64>,
    pub now: f64,
    pub min: f64,
    pub max: f64,
}

pub(crate) fn series(points: &VecDeque<Point>, value: fn(&Point) -> f64, width: usize) -> Series {
    let skip = points.len().saturating_sub(width);
    let vals: Vec<f64> = points.iter().skip(skip).map(value).collect();
    let max = vals.iter().copied().fold(0.0, f64::max);
    let min = vals.iter().copied().fold(f64::INFINITY, f64::min);
    // Bars are integers: 1,000 steps between zero and the highest value.
    let scale = if max > 0.0 { 1000.0 / max } else { 0.0 };
    Series {
        bars: vals.iter().map(|v| (v * scale).round() as u64).collect(),
        now: vals.last().copied().unwrap_or(0.0),
        min: if min.is_finite() { min } else { 0.0 },
        max,
    }
}

/// What the pane's border says: the program, and how much time the x axis
/// spans (oldest window left, newest right).
pub(crate) fn pane_title(id: u32, name: &str, windows: usize, seconds: f64) -> String {
    format!(
        " history of {id} {name}: last {windows} of {WINDOWS} windows of {}s, newest right ",
        fmt_g(seconds)
    )
}

/// The chart pane of the program under the cursor, in `area`.
pub(crate) fn draw_pane(f: &mut Frame, app: &App, t: &Theme, area: Rect) {
    let history = app.history.lock();
    let Some(row) = app.selected() else {
        return;
    };
    let id = row.prog.id;
    let empty = VecDeque::new();
    let points = history.of(id).unwrap_or(&empty);
    let block = Block::default()
        .borders(Borders::TOP | Borders::BOTTOM)
        .border_style(t.accent)
        .title(fit(
            &pane_title(
                id,
                row.prog.display_name(),
                points.len(),
                history.window_seconds(),
            ),
            usize::from(area.width),
        ));
    let inner = block.inner(area);
    f.render_widget(block, area);
    let width = usize::from(inner.width.saturating_sub(1));
    let step = 1 + CHART_ROWS as u16;
    for (k, (label, value, text)) in METRICS.iter().enumerate() {
        let y = inner.y + k as u16 * step;
        if y + step > inner.y + inner.height {
            break;
        }
        let s = series(points, *value, width);
        let head = format!(
            " {label}  now {}  min {}  max {}",
            text(s.now),
            text(s.min),
            text(s.max)
        );
        f.render_widget(
            Paragraph::new(Line::styled(head, t.col_header)),
            Rect::new(inner.x, y, inner.width, 1),
        );
        f.render_widget(
            Sparkline::default().data(&s.bars).max(1000).style(t.accent),
            Rect::new(
                inner.x + 1,
                y + 1,
                inner.width.saturating_sub(1),
                CHART_ROWS as u16,
            ),
        );
    }
}

/// The drilldown's CPU% sparkline at the right end of its title line;
/// nothing when the line has no room or the program has no history.
pub(crate) fn draw_cpu_sparkline(
    f: &mut Frame,
    history: &Shared,
    id: u32,
    line: Rect,
    used: usize,
    t: &Theme,
) {
    let history = history.lock();
    let Some(points) = history.of(id) else {
        return;
    };
    let now = points.back().map_or(0.0, |p| f64::from(p.cpu_pct));
    let label = format!(" CPU% {now:.2} ");
    let free = usize::from(line.width).saturating_sub(used + 2);
    let width = free.saturating_sub(label.len()).min(WINDOWS);
    if width < 10 {
        return;
    }
    let s = series(points, METRICS[0].1, width);
    let total = width + label.len();
    let x = line.x + line.width - total as u16;
    f.render_widget(
        Paragraph::new(Line::styled(label.clone(), t.status)),
        Rect::new(x, line.y, label.len() as u16, 1),
    );
    f.render_widget(
        Sparkline::default().data(&s.bars).max(1000).style(t.accent),
        Rect::new(x + label.len() as u16, line.y, width as u16, 1),
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    fn points(vals: &[f32]) -> VecDeque<Point> {
        vals.iter()
            .map(|&v| Point {
                cpu_pct: v,
                ..Default::default()
            })
            .collect()
    }

    #[test]
    fn series_scale_and_window() {
        let s = series(&points(&[0.5, 0.25, 0.0, 1.0]), METRICS[0].1, 3);
        // The oldest point does not fit in 3 columns.
        assert_eq!(s.bars, vec![250, 0, 1000]);
        assert_eq!((s.now, s.min, s.max), (1.0, 0.0, 1.0));
        let idle = series(&points(&[0.0, 0.0]), METRICS[0].1, 10);
        assert_eq!(idle.bars, vec![0, 0]);
        let none = series(&VecDeque::new(), METRICS[0].1, 10);
        assert_eq!(
            (none.bars.len(), none.now, none.min, none.max),
            (0, 0.0, 0.0, 0.0)
        );
    }

    #[test]
    fn titles_say_the_window_length() {
        assert_eq!(
            pane_title(7, "xdp_main", 30, 1.0),
            " history of 7 xdp_main: last 30 of 120 windows of 1s, newest right "
        );
    }
}
