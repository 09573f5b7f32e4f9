//! The TUI's colours: a dark and a light palette in 256 colours, and a
//! plain one (reverse, bold, dim, underline only) for `NO_COLOR`.

use ratatui::style::{Color, Modifier, Style};

#[derive(Debug, Clone, Copy)]
pub(crate) struct Theme {
    pub header: Style,
    pub col_header: Style,
    pub zebra: [Style; 2],
    pub cursor: Style,
    pub accent: Style,
    pub dim: Style,
    pub highlight: Style,
    pub status: Style,
    pub footer: Style,
    pub overlay: Style,
}

impl Theme {
    pub(crate) fn new(light: bool, color: bool) -> Theme {
        if !color {
            let plain = Style::default();
            return Theme {
                header: plain.add_modifier(Modifier::REVERSED),
                col_header: plain.add_modifier(Modifier::BOLD),
                zebra: [plain, plain],
                cursor: plain.add_modifier(Modifier::REVERSED | Modifier::BOLD),
                accent: plain,
                dim: plain.add_modifier(Modifier::DIM),
                highlight: plain.add_modifier(Modifier::UNDERLINED | Modifier::BOLD),
                status: plain,
                footer: plain.add_modifier(Modifier::REVERSED),
                overlay: plain,
            };
        }
        if light {
            let base = Style::default().fg(Color::Black).bg(Color::Indexed(254));
            Theme {
                header: Style::default().fg(Color::White).bg(Color::Indexed(25)),
                col_header: Style::default()
                    .fg(Color::Black)
                    .bg(Color::Indexed(152))
                    .add_modifier(Modifier::BOLD),
                zebra: [base, base.bg(Color::Indexed(252))],
                cursor: Style::default()
                    .fg(Color::White)
                    .bg(Color::Indexed(27))
                    .add_modifier(Modifier::BOLD),
                accent: Style::default().fg(Color::Indexed(25)),
                dim: Style::default().fg(Color::Indexed(244)),
                highlight: Style::default().fg(Color::Black).bg(Color::Yellow),
                status: base.fg(Color::Indexed(236)),
                footer: Style::default().fg(Color::Black).bg(Color::Indexed(250)),
                overlay: base,
            }
        } else {
            let base = Style::default()
                .fg(Color::Indexed(252))
                .bg(Color::Indexed(234));
            Theme {
                header: Style::default().fg(Color::White).bg(Color::Indexed(18)),
                col_header: Style::default()
                    .fg(Color::White)
                    .bg(Color::Indexed(30))
                    .add_modifier(Modifier::BOLD),
                zebra: [base, base.bg(Color::Indexed(236))],
                cursor: Style::default()
                    .fg(Color::Indexed(231))
                    .bg(Color::Indexed(33))
                    .add_modifier(Modifier::BOLD),
                accent: Style::default().fg(Color::Indexed(39)),
                dim: Style::default().fg(Color::Indexed(243)),
                highlight: Style::default().fg(Color::Black).bg(Color::Yellow),
                status: base.fg(Color::Indexed(250)),
                footer: Style::default()
                    .fg(Color::Indexed(252))
                    .bg(Color::Indexed(238)),
                overlay: base,
            }
        }
    }
}
