//! Drawing the TUI state with ratatui: the live table, its dialogs and help
//! panel, and the drilldown with its form, search bar and overlays.

use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Borders, Clear, Paragraph};
use ratatui::Frame;

use super::app::{App, FOOTER, MAIN_HELP};
use super::drill::{Drill, Form, Overlay, Search, FORM_LABELS, HELP_ROWS};
use super::history::Shared;
use super::text::{fit, wrap, Input};
use crate::model::profile::Payer;
use crate::model::report::Figured;
use crate::render::drilldown::LEGEND;
use crate::render::listing::ActivityCol;
use crate::render::num::{commas, fmt_g};

pub(crate) use super::theme::Theme;

/// Expand tabs to the next multiple of 8 columns, so that a row is
/// measured and drawn the same way (a tab counted as one cell but drawn
/// wide would cut off the row's end).
pub(crate) fn expand_tabs(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut col = 0;
    for c in s.chars() {
        if c == '\t' {
            let n = 8 - col % 8;
            out.extend(std::iter::repeat_n(' ', n));
            col += n;
        } else {
            out.push(c);
            col += 1;
        }
    }
    out
}

fn skip_take(s: &str, skip: usize, take: usize) -> String {
    s.chars().skip(skip).take(take).collect()
}

fn pad(s: &str, w: usize, right: bool) -> String {
    let n = s.chars().count();
    let fill = " ".repeat(w.saturating_sub(n));
    if right {
        format!("{fill}{s}")
    } else {
        format!("{s}{fill}")
    }
}

fn line_at(f: &mut Frame, area: Rect, y: u16, line: Line<'_>) {
    // Written straight into the buffer: a paragraph would compose and
    // truncate the line grapheme by grapheme first, for every row drawn.
    if y < area.y + area.height {
        f.buffer_mut().set_line(area.x, y, &line, area.width);
    }
}

pub(crate) fn draw(f: &mut Frame, app: &App, t: &Theme) {
    let area = f.area();
    if area.height == 0 || area.width == 0 {
        return;
    }
    if let Some(d) = &app.drill {
        draw_drill(f, d, t, area, &app.history);
        return;
    }
    draw_main(f, app, t, area);
}

fn draw_main(f: &mut Frame, app: &App, t: &Theme, area: Rect) {
    f.render_widget(Block::default().style(t.zebra[0]), area);
    draw_main_header(f, app, t, area);
    draw_main_table(f, app, t, area);
    if app.chart_shown() {
        let y = area.y + 2 + app.body_height() as u16;
        let pane = Rect::new(area.x, y, area.width, super::app::CHART_HEIGHT as u16);
        super::chart::draw_pane(f, app, t, pane);
    }
    draw_main_bottom(f, app, t, area);
    if app.help {
        draw_main_help(f, t, area);
    }
    if let Some(input) = &app.delay_dialog {
        draw_delay_dialog(f, t, area, input);
    }
    if let Some(c) = &app.cost {
        draw_cost_pane(f, t, area, c);
    }
}

/// `C`: the cost capture's progress, then its figures, over the table.
fn draw_cost_pane(f: &mut Frame, t: &Theme, area: Rect, c: &super::app::CostPane) {
    if area.height < 4 {
        return;
    }
    let r = Rect::new(area.x, area.y + 1, area.width, area.height - 2);
    f.render_widget(Clear, r);
    let w = r.width.saturating_sub(2) as usize;
    let lines: Vec<Line> = c
        .lines()
        .iter()
        .map(|l| Line::from(skip_take(l, 0, w)))
        .collect();
    let block = Block::default()
        .borders(Borders::ALL)
        .border_type(BorderType::Rounded)
        .title(" What eBPF costs this host (C or Esc closes) ")
        .style(t.overlay)
        .border_style(t.accent);
    f.render_widget(Paragraph::new(lines).block(block), r);
}

/// The header bar: delay, sort column and direction, filter, pause.
fn draw_main_header(f: &mut Frame, app: &App, t: &Theme, area: Rect) {
    let w = area.width as usize;
    let sort_name = app
        .cols
        .iter()
        .zip(&app.headers)
        .find(|(c, _)| **c == app.sort.col)
        .map_or("", |(_, h)| *h);
    let mut head = format!(
        " brr top  delay {}s  sort {sort_name} {}",
        fmt_g(app.delay),
        if app.sort.desc { "▼" } else { "▲" }
    );
    if !app.filter.is_empty() {
        head.push_str(&format!(
            "  filter '{}' {}/{}",
            app.filter,
            app.order.len(),
            app.rows.len()
        ));
    }
    if let Some(run_time) = app.programs_run_time() {
        head.push_str(&format!(
            "  programs' run time: {run_time:.1} % of {} CPUs",
            app.config.cpus
        ));
    }
    if app.paused {
        head.push_str("  PAUSED");
    }
    line_at(
        f,
        area,
        area.y,
        Line::styled(pad(&fit(&head, w), w, false), t.header),
    );
}

/// The columns shown in `w` cells: ID and NAME always, in place; of the
/// others, whole columns from the `hcol`-th on while they fit. Also
/// whether columns are scrolled off to the left and to the right.
fn shown_columns(app: &App, widths: &[usize], w: usize) -> (Vec<usize>, bool, bool) {
    let n = app.headers.len();
    let fixed: usize = (0..n)
        .filter(|&c| app.col_fixed(c))
        .map(|c| widths[c] + 2)
        .sum();
    let mut used = fixed;
    let mut rank = 0;
    let mut right = false;
    let mut cols = Vec::new();
    for (c, &width) in widths.iter().enumerate().take(n) {
        if app.col_fixed(c) {
            cols.push(c);
            continue;
        }
        rank += 1;
        if rank <= app.hcol {
            continue;
        }
        // Whole columns only: a cut-off number reads as a real, smaller
        // value.
        if !right && used + width + 2 <= w {
            used += width + 2;
            cols.push(c);
        } else {
            right = true;
        }
    }
    (cols, app.hcol > 0, right)
}

/// NAME never narrower than this, however small the terminal.
const NAME_MIN: usize = 8;

/// The column widths drawn in `w` cells: a long NAME gives way, cut with
/// `…` as top and bpftop cut theirs, so that the scrolling columns from the
/// first shown through AVG_NS (CPU% and EXECS/s with it) fit beside it.
fn drawn_widths(app: &App, w: usize) -> Vec<usize> {
    let mut widths = app.widths.clone();
    let Some(name) = app.cols.iter().position(|c| *c == ActivityCol::Name) else {
        return widths;
    };
    let fixed: usize = (0..widths.len())
        .filter(|&c| c != name && app.col_fixed(c))
        .map(|c| widths[c] + 2)
        .sum();
    let scrolling: Vec<usize> = (0..widths.len())
        .filter(|&c| !app.col_fixed(c))
        .skip(app.hcol)
        .collect();
    let through = scrolling
        .iter()
        .position(|&c| app.cols[c] == ActivityCol::AvgNs)
        .map_or(1, |at| at + 1);
    let kept: usize = scrolling.iter().take(through).map(|&c| widths[c] + 2).sum();
    let room = w.saturating_sub(fixed + kept + 2);
    widths[name] = widths[name].min(room.max(NAME_MIN));
    widths
}

/// The header line with `‹` where columns are scrolled off to the left
/// (after the columns that stay in place) and `›` at its end when some are
/// off to the right.
fn marked_header(app: &App, widths: &[usize], cols: &[usize], left: bool, right: bool) -> String {
    let mut s = String::new();
    let mut left_marked = !left;
    for &c in cols {
        let first_scrolled = !left_marked && !app.col_fixed(c);
        left_marked |= first_scrolled;
        s.push(if first_scrolled { '‹' } else { ' ' });
        let text = app.header_text(c, app.headers[c]);
        s.push_str(&pad(
            &fit(&text, widths[c]),
            widths[c],
            !app.cols[c].left_aligned(),
        ));
        s.push(' ');
    }
    if !left_marked {
        s.push('‹');
    }
    if right {
        if s.ends_with(' ') {
            s.pop();
        }
        s.push('›');
    }
    s
}

/// Column headers and the visible rows, scrolled by whole columns.
fn draw_main_table(f: &mut Frame, app: &App, t: &Theme, area: Rect) {
    let w = area.width as usize;
    let widths = drawn_widths(app, w);
    let (cols, left, right) = shown_columns(app, &widths, w);
    let render_row = |cells: &dyn Fn(usize) -> String| -> String {
        let mut s = String::new();
        for &c in &cols {
            let right = !app.cols[c].left_aligned();
            s.push(' ');
            s.push_str(&pad(&fit(&cells(c), widths[c]), widths[c], right));
            s.push(' ');
        }
        skip_take(&s, 0, w)
    };
    let header = skip_take(&marked_header(app, &widths, &cols, left, right), 0, w);
    line_at(
        f,
        area,
        area.y + 1,
        Line::styled(pad(&header, w, false), t.col_header),
    );
    let body = app.body_height();
    for (k, ri) in (app.top..app.order.len().min(app.top + body)).enumerate() {
        let text = render_row(&|c| app.cell(ri, c));
        let style = if ri == app.cursor {
            t.cursor
        } else {
            t.zebra[ri % 2]
        };
        line_at(
            f,
            area,
            area.y + 2 + k as u16,
            Line::styled(pad(&text, w, false), style),
        );
    }
}

/// The status line (or the filter being typed) and the footer.
fn draw_main_bottom(f: &mut Frame, app: &App, t: &Theme, area: Rect) {
    let w = area.width as usize;
    let status = match &app.filter_input {
        Some(i) => format!(
            " filter (name/type/ID/owner/pod/container): {}▏  Enter keeps, Esc clears",
            i.text
        ),
        None => format!(" {}", app.status),
    };
    let h = area.height;
    if h >= 2 {
        line_at(
            f,
            area,
            area.y + h - 2,
            Line::styled(pad(&skip_take(&status, 0, w), w, false), t.status),
        );
    }
    let footer = if app.delay_dialog.is_some() {
        " ^q Quit  esc Close"
    } else {
        FOOTER
    };
    line_at(
        f,
        area,
        area.y + h - 1,
        Line::styled(pad(&skip_take(footer, 0, w), w, false), t.footer),
    );
}

fn draw_delay_dialog(f: &mut Frame, t: &Theme, area: Rect, input: &Input) {
    let bw = 40.min(area.width.saturating_sub(2)).max(10);
    let r = Rect::new(
        area.x + 2.min(area.width.saturating_sub(bw)),
        area.y + 2.min(area.height.saturating_sub(3)),
        bw.min(area.width),
        3.min(area.height),
    );
    f.render_widget(Clear, r);
    let block = Block::default()
        .borders(Borders::ALL)
        .border_type(BorderType::Rounded)
        .title(" refresh delay seconds ")
        .style(t.overlay)
        .border_style(t.accent);
    let text = format!("{}▏", input.text);
    f.render_widget(Paragraph::new(text).block(block), r);
}

fn draw_main_help(f: &mut Frame, t: &Theme, area: Rect) {
    let pw = 46.min(area.width);
    let ph = (area.height.saturating_sub(3)).min(MAIN_HELP.len() as u16 + 2);
    let r = Rect::new(area.x + area.width - pw, area.y + 1, pw, ph);
    f.render_widget(Clear, r);
    let lines: Vec<Line> = MAIN_HELP
        .iter()
        .map(|(k, v)| Line::from(format!("{k:>12}  {v}")))
        .collect();
    let block = Block::default()
        .borders(Borders::ALL)
        .border_type(BorderType::Rounded)
        .title(" Keys (h closes) ")
        .style(t.overlay)
        .border_style(t.accent);
    f.render_widget(Paragraph::new(lines).block(block), r);
}

fn draw_drill(f: &mut Frame, d: &Drill, t: &Theme, area: Rect, history: &Shared) {
    f.render_widget(Block::default().style(t.zebra[0]), area);
    let block = Block::default()
        .borders(Borders::ALL)
        .border_type(BorderType::Thick)
        .border_style(t.accent);
    let inner = block.inner(area);
    f.render_widget(block, area);
    if inner.width == 0 || inner.height == 0 {
        return;
    }
    let w = inner.width as usize;
    let mut y = draw_drill_head(f, d, t, inner);
    let title_width = d.title_line().chars().count() + 1;
    let title_line = Rect::new(inner.x, inner.y, inner.width, 1);
    super::chart::draw_cpu_sparkline(f, history, d.id, title_line, title_width, t);
    if let Some(form) = &d.form {
        y = draw_form(f, form, t, inner, y);
    }
    if let Some(s) = &d.search {
        y = draw_search_bar(f, s, t, inner, y);
    }
    line_at(
        f,
        inner,
        y,
        Line::styled(pad(" %THIS  SAMPLES  CODE", w, false), t.col_header),
    );
    draw_drill_rows(f, d, t, inner, y + 1);
    draw_drill_overlay(f, d, t, inner);
}

/// The title and status lines; returns the next free screen line.
fn draw_drill_head(f: &mut Frame, d: &Drill, t: &Theme, inner: Rect) -> u16 {
    let w = inner.width as usize;
    let mut y = inner.y;
    let title = format!(" {}", d.title_line());
    line_at(
        f,
        inner,
        y,
        Line::styled(
            skip_take(&title, 0, w),
            t.status.add_modifier(Modifier::BOLD),
        ),
    );
    y += 1;
    for s in d.status_wrapped() {
        line_at(f, inner, y, Line::styled(format!(" {s}"), t.status));
        y += 1;
    }
    y
}

/// The profile form, one line per field; returns the next free line.
fn draw_form(f: &mut Frame, form: &Form, t: &Theme, inner: Rect, mut y: u16) -> u16 {
    let w = inner.width as usize;
    for (i, label) in FORM_LABELS.iter().enumerate() {
        let value = if i < 6 {
            let v = &form.fields[i].text;
            if i == form.focus {
                format!("{v}▏")
            } else {
                v.clone()
            }
        } else {
            format!("[{}]", if form.kernel { "x" } else { " " })
        };
        let text = format!(" {label:>22}: {value}");
        let style = if i == form.focus {
            t.cursor
        } else {
            t.zebra[1]
        };
        line_at(
            f,
            inner,
            y,
            Line::styled(pad(&skip_take(&text, 0, w), w, false), style),
        );
        y += 1;
    }
    y
}

/// The search bar; returns the next free line.
fn draw_search_bar(f: &mut Frame, s: &Search, t: &Theme, inner: Rect, y: u16) -> u16 {
    let w = inner.width as usize;
    let text = if s.input.text.is_empty() && s.editing {
        " / search source▏".to_string()
    } else if s.editing {
        format!(" / {}▏", s.input.text)
    } else {
        format!(" / {}", s.input.text)
    };
    let style = if s.editing { t.cursor } else { t.zebra[1] };
    line_at(
        f,
        inner,
        y,
        Line::styled(pad(&skip_take(&text, 0, w), w, false), style),
    );
    y + 1
}

/// The visible drilldown lines from screen line `y` to the panel's bottom.
fn draw_drill_rows(f: &mut Frame, d: &Drill, t: &Theme, inner: Rect, y: u16) {
    let bottom = inner.y + inner.height;
    let query = d
        .search
        .as_ref()
        .map(|s| s.input.text.to_lowercase())
        .unwrap_or_default();
    let h = bottom.saturating_sub(y) as usize;
    for (k, li) in (d.top..d.lines.len().min(d.top + h)).enumerate() {
        let spans = drill_line_spans(d, t, li, inner.width as usize, &query);
        line_at(f, inner, y + k as u16, Line::from(spans));
    }
}

/// One drilldown line as styled spans `w` cells wide: the %THIS and
/// SAMPLES columns, then the code scrolled by `hscroll`, with fold lines
/// and markers dimmed and search matches highlighted.
fn drill_line_spans(d: &Drill, t: &Theme, li: usize, w: usize, query: &str) -> Vec<Span<'static>> {
    let l = &d.lines[li];
    let base = if li == d.cursor {
        t.cursor
    } else {
        t.zebra[li % 2]
    };
    // Sample counts in the table's style (thousands separators).
    let samples = l.samples.parse().map_or_else(|_| l.samples.clone(), commas);
    let lead = format!("{:>6}  {:>7}  ", l.this, samples);
    let mut spans = vec![Span::styled(lead.clone(), base)];
    let code_w = w.saturating_sub(lead.chars().count());
    // Markers (drawn dimmed) are the tail of the code text.
    let marker_len = match (l.row, &d.dd) {
        (Some(r), Some(dd)) if d.view.markers => dd.rows[r]
            .markers
            .iter()
            .map(|m| m.name().chars().count() + 3)
            .sum(),
        _ => 0,
    };
    let n = l.code.chars().count();
    let body: String = l.code.chars().take(n - marker_len.min(n)).collect();
    let markers: String = l.code.chars().skip(n - marker_len.min(n)).collect();
    let body = expand_tabs(&body);
    let full = format!("{body}{markers}");
    let split = body.chars().count();
    let shown = skip_take(&full, d.hscroll, code_w);
    let hl = highlight_ranges(&full, query);
    let mut cur = String::new();
    let mut cur_style = base;
    for (i, c) in shown.chars().enumerate() {
        let pos = i + d.hscroll;
        let mut st = base;
        if l.fold.is_some() || pos >= split {
            st = if li == d.cursor {
                base
            } else {
                base.patch(t.dim)
            };
        }
        if hl.iter().any(|r| r.contains(&pos)) {
            st = t.highlight;
        }
        if st != cur_style && !cur.is_empty() {
            spans.push(Span::styled(std::mem::take(&mut cur), cur_style));
        }
        cur_style = st;
        cur.push(c);
    }
    let used: usize = lead.chars().count() + shown.chars().count();
    cur.push_str(&" ".repeat(w.saturating_sub(used)));
    spans.push(Span::styled(cur, cur_style));
    spans
}

fn draw_drill_overlay(f: &mut Frame, d: &Drill, t: &Theme, inner: Rect) {
    match d.overlay {
        Overlay::Help => {
            let rows: Vec<(String, String)> = HELP_ROWS
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
            overlay(f, t, inner, "Drilldown help", ("KEY", "ACTION"), &rows);
        }
        Overlay::Legend => {
            let rows: Vec<(String, String)> = LEGEND
                .iter()
                .map(|(m, v)| (format!("[{}]", m.name()), v.to_string()))
                .collect();
            overlay(f, t, inner, "Code markers", ("MARKER", "MEANING"), &rows);
        }
        Overlay::WhoPays => {
            let (head, rows) = d
                .last_program()
                .map(|p| who_pays_rows(&p.tasks.all, |id| p.tasks.workload(id)))
                .unwrap_or_else(|| who_pays_rows(&[], |_| None));
            overlay(f, t, inner, "Triggered by", ("PID", &head), &rows);
        }
        Overlay::Hints => overlay(
            f,
            t,
            inner,
            "Hints",
            ("HINT", "WHERE, FIGURE, THRESHOLD, FIX"),
            &hint_rows(d),
        ),
        Overlay::None => {}
    }
}

/// The who-pays table: the heading of its second column and one row per
/// task, in aligned columns (comm, samples, CPU%, and the pod and
/// container it ran in when any task ran in one).
fn who_pays_rows<'a>(
    payers: &[Figured<Payer>],
    workload: impl Fn(u64) -> Option<&'a crate::model::Workload>,
) -> (String, Vec<(String, String)>) {
    use crate::render::profile::{container_cell, pod_cell};
    let counts: Vec<String> = payers.iter().map(|x| commas(x.samples)).collect();
    let cpus: Vec<String> = payers
        .iter()
        .map(|x| format!("{}%", crate::render::num::percent4(x.cpu_percent)))
        .collect();
    let places: Vec<(String, String)> = payers
        .iter()
        .map(|x| {
            let w = workload(x.id);
            let pod = w.and_then(|w| w.pod.as_ref());
            let container = w.and_then(|w| w.container.as_ref());
            (
                pod.map_or_else(|| "-".into(), |p| pod_cell(Some(p))),
                container.map_or_else(|| "-".into(), |c| container_cell(Some(c))),
            )
        })
        .collect();
    let placed = places.iter().any(|(p, c)| p != "-" || c != "-");
    let width = |col: &[String], head: &str| {
        col.iter()
            .map(|c| c.chars().count())
            .chain([head.len()])
            .max()
            .unwrap_or(0)
    };
    let names: Vec<String> = payers.iter().map(|x| x.name.clone()).collect();
    let nw = width(&names, "COMM");
    // The counts right-aligned, their word after them: `1 sample ` lines
    // up with `60 samples`.
    let cw = width(&counts, "");
    let sw = (cw + " samples".len()).max("SAMPLES".len());
    let pw = width(&cpus, "CPU%");
    let pods: Vec<String> = places.iter().map(|(p, _)| p.clone()).collect();
    let podw = width(&pods, "POD");
    let mut head = format!("{:<nw$}  {:<sw$}  {:>pw$}", "COMM", "SAMPLES", "CPU%");
    if placed {
        head.push_str(&format!("  {:<podw$}  CONTAINER", "POD"));
    }
    let rows = payers
        .iter()
        .zip(counts.iter().zip(&cpus))
        .zip(&places)
        .map(|((x, (n, cpu)), (pod, container))| {
            let word = if x.samples == 1 { "sample" } else { "samples" };
            let samples = format!("{n:>cw$} {word}");
            let mut row = format!("{:<nw$}  {samples:<sw$}  {cpu:>pw$}", x.name);
            if placed {
                row.push_str(&format!("  {pod:<podw$}  {container}"));
            }
            (x.id.to_string(), row)
        })
        .collect();
    (head, rows)
}

/// One overlay row per hint: its kind, then the line it points at, the
/// evidence, the threshold and the fix, worded as the text report words
/// them.
fn hint_rows(d: &Drill) -> Vec<(String, String)> {
    d.hints()
        .iter()
        .map(|h| {
            let at = crate::render::profile::hint_at(h)
                .map(|a| format!("{a}: "))
                .unwrap_or_default();
            (
                h.kind.replace('_', " "),
                format!(
                    "{at}{} (threshold {}). Fix: {}.",
                    h.evidence,
                    crate::render::profile::threshold_text(h),
                    h.fix
                ),
            )
        })
        .collect()
}

/// Case-insensitive match ranges (in characters) of `q` in `text`.
fn highlight_ranges(text: &str, q: &str) -> Vec<std::ops::Range<usize>> {
    if q.is_empty() {
        return Vec::new();
    }
    let hay: Vec<char> = text
        .chars()
        .map(|c| c.to_lowercase().next().unwrap_or(c))
        .collect();
    let needle: Vec<char> = q.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i + needle.len() <= hay.len() {
        if hay[i..i + needle.len()] == needle[..] {
            out.push(i..i + needle.len());
            i += needle.len();
        } else {
            i += 1;
        }
    }
    out
}

/// A rounded box with a two-column table, sized to the panel; long texts
/// wrap under their column instead of being cut off at narrow or wide
/// terminals.
fn overlay(
    f: &mut Frame,
    t: &Theme,
    inner: Rect,
    title: &str,
    head: (&str, &str),
    rows: &[(String, String)],
) {
    let kw = rows
        .iter()
        .map(|r| r.0.chars().count())
        .chain([head.0.len()])
        .max()
        .unwrap_or(0);
    let vw_full = rows
        .iter()
        .map(|r| r.1.chars().count())
        .chain([head.1.len()])
        .max()
        .unwrap_or(0);
    let (x0, y0) = (4.min(inner.width / 8), 3.min(inner.height / 8));
    let max_w = (inner.width.saturating_sub(x0 + 1)) as usize;
    let want = kw + vw_full + 2 + 4;
    let bw = want.min(max_w).max(12);
    let vw = bw.saturating_sub(kw + 2 + 4).max(8);
    let mut lines = vec![
        Line::from(format!(" {title}")),
        Line::styled(
            format!(" {}  {}", pad(head.0, kw, false), head.1),
            Style::default().add_modifier(Modifier::BOLD),
        ),
    ];
    for (k, v) in rows {
        for (i, part) in wrap(v, vw).into_iter().enumerate() {
            let key = if i == 0 { k.as_str() } else { "" };
            lines.push(Line::from(format!(" {}  {part}", pad(key, kw, false))));
        }
    }
    let max_h = inner.height.saturating_sub(y0) as usize;
    let bh = (lines.len() + 2).min(max_h);
    let r = Rect::new(inner.x + x0, inner.y + y0, bw as u16, bh as u16);
    f.render_widget(Clear, r);
    let block = Block::default()
        .borders(Borders::ALL)
        .border_type(BorderType::Rounded)
        .style(t.overlay)
        .border_style(t.accent);
    f.render_widget(Paragraph::new(lines).block(block), r);
}
