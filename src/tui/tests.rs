//! TUI state-machine tests (every key, both views, no terminal) and insta
//! snapshots of frames drawn on ratatui's `TestBackend`.

use std::sync::Arc;

use ratatui::backend::TestBackend;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;

use super::app::App;
use super::drill::{Drill, Outcome, Overlay, FORM_PROMPT, HELP_LINE, SEARCH_HINT};
use super::effect::Effect;
use super::ui::{self, Theme};
use super::worker::{Cmd, Msg, ProfileDone};
use super::Config;
use crate::activity::ActivityRow;
use crate::error::BrrError;
use crate::inspect::drilldown::{Mode, NativeRow};
use crate::inspect::native::{JitFunction, NativeImage, NativeInsn};
use crate::inspect::profile::{DirectHotspot, DrillProfile, KernelRow, ProfileInput};
use crate::model::image::{JitRange, LineRecord, ProgramImage};
use crate::model::profile::{KernelHotspot, Payer};
use crate::model::report::{Capture, Figured, Payers, ProgramReport, Report};
use crate::model::Program;
use crate::profile;
use crate::render::listing::ActivityCol;

/// What plain `brr` starts the TUI with (`top::tests` checks that it is
/// what the command line gives).
pub(crate) fn config() -> Config {
    Config {
        delay: 1.0,
        extended: false,
        cumulative: false,
        light: false,
        program_id: None,
        mixed: false,
        native: false,
        kernel_ip_detail: false,
        line_limit: 0,
        devmode: None,
        cpus: 2,
        profile: profile::Request {
            event: profile::Event::Auto,
            duration: 5.0,
            frequency: 997,
            kernel_samples: false,
            call_graph: profile::CallGraph::Fp,
            pages: None,
            drain_ms: None,
            program_ids: Vec::new(),
            pid: None,
        },
    }
}

fn prog(id: u32, ty: &str, name: &str, cnt: u64, ns: u64) -> Program {
    Program {
        id,
        prog_type: ty.into(),
        name: name.into(),
        tag: format!("{id:016x}").into(),
        xlated_size: 520 + id,
        jited_size: 324 + id,
        run_count: cnt,
        run_time_ns: ns,
        ..Default::default()
    }
}

fn row(p: Program, dc: u64, dt: u64) -> ActivityRow {
    ActivityRow {
        prog: p,
        run_count_delta: dc,
        run_time_ns_delta: dt,
        recursion_misses_delta: Some(0),
    }
}

fn rows() -> Vec<ActivityRow> {
    vec![
        row(
            prog(122, "tracepoint", "sys_exit", 192_826_523, 19_812_470_228),
            1_509_314,
            189_331_000,
        ),
        row(
            prog(67, "tracepoint", "sys_exit", 150_000_000, 15_000_000_000),
            1_509_871,
            181_009_000,
        ),
        row(
            prog(83, "tracepoint", "tracepoint__sys", 9_000, 13_000_000),
            208,
            321_000,
        ),
        row(
            prog(76, "tracing", "block_rq_issue_", 5_000, 700_000),
            158,
            162_000,
        ),
        row(prog(65, "tracepoint", "sys_enter", 0, 0), 0, 0),
        row(prog(96, "cgroup_skb", "egress_filter", 0, 0), 0, 0),
    ]
}

fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

fn ch(c: char) -> KeyEvent {
    key(KeyCode::Char(c))
}

fn ctrl(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::CONTROL)
}

/// `flags`: `-x` and `-c` as on the command line.
fn app_with(flags: &str, size: (u16, u16)) -> App {
    let c = Config {
        extended: flags.contains("-x"),
        cumulative: flags.contains("-c"),
        ..config()
    };
    let mut app = App::new(c, size, Vec::new());
    let fx = app.start();
    assert_eq!(fx, vec![Effect::Cmd(Cmd::Measure { delay: app.delay })]);
    let fx = app.on_msg(Msg::Window {
        rows: rows(),
        measured: 1.0,
    });
    assert_eq!(fx, vec![Effect::Cmd(Cmd::Measure { delay: app.delay })]);
    app
}

fn app() -> App {
    app_with("", (120, 40))
}

fn ids(app: &App) -> Vec<u32> {
    app.order.iter().map(|&i| app.rows[i].prog.id).collect()
}

fn cursor_id(app: &App) -> u32 {
    app.rows[app.order[app.cursor]].prog.id
}

// ---------------------------------------------------------------------
// Main table
// ---------------------------------------------------------------------

#[test]
fn start_shows_sampling_then_rows_and_chains_windows() {
    let mut app = App::new(config(), (80, 24), rows());
    assert_eq!(app.status, "Sampling eBPF runtime deltas...");
    assert_eq!(app.order.len(), 6, "rows shown at once");
    assert_eq!(app.start(), vec![Effect::Cmd(Cmd::Measure { delay: 1.0 })]);
    let fx = app.on_msg(Msg::Window {
        rows: rows(),
        measured: 1.0,
    });
    assert_eq!(fx, vec![Effect::Cmd(Cmd::Measure { delay: 1.0 })]);
    assert_eq!(
        app.status,
        "Runtime deltas over 1s; press Enter or ? to inspect a program."
    );
    assert_eq!(ids(&app), vec![122, 67, 83, 76, 65, 96]);
    // Identical windows (idle host) need no redraw.
    app.dirty = false;
    app.on_msg(Msg::Window {
        rows: rows(),
        measured: 1.0,
    });
    assert!(!app.dirty);
    // No activity at all.
    let idle: Vec<ActivityRow> = rows().into_iter().map(|r| row(r.prog, 0, 0)).collect();
    app.on_msg(Msg::Window {
        rows: idle,
        measured: 1.0,
    });
    assert_eq!(
        app.status,
        "No active eBPF program runtime deltas observed."
    );
    // A failed window is shown and retried.
    let fx = app.on_msg(Msg::WindowFailed(BrrError::Failed("boom".into())));
    assert_eq!(app.status, "brr: boom");
    assert_eq!(fx.len(), 1);
}

#[test]
fn cursor_stays_on_its_program_and_scroll_is_kept() {
    let mut app = app_with("", (120, 6)); // body of 2 rows
    app.on_key(key(KeyCode::Down));
    app.on_key(key(KeyCode::Down));
    assert_eq!((cursor_id(&app), app.top), (83, 1));
    app.on_key(key(KeyCode::Right));
    // 83 becomes the busiest program.
    let mut r = rows();
    r[2].run_time_ns_delta = 999_000_000;
    app.on_msg(Msg::Window {
        rows: r,
        measured: 1.0,
    });
    assert_eq!(cursor_id(&app), 83);
    assert_eq!(app.cursor, 0);
    assert_eq!(app.top, 0, "clamped only as needed");
    assert_eq!(app.hcol, 1, "horizontal scroll kept");
    // The program vanishes: the clamped index stays.
    let gone: Vec<ActivityRow> = rows().into_iter().filter(|r| r.prog.id != 83).collect();
    app.on_msg(Msg::Window {
        rows: gone,
        measured: 1.0,
    });
    assert_eq!(app.cursor, 0);
}

#[test]
fn navigation_keys() {
    let mut app = app_with("", (120, 6));
    app.on_key(key(KeyCode::PageDown));
    assert_eq!(app.cursor, 2);
    app.on_key(key(KeyCode::End));
    assert_eq!(app.cursor, 5);
    assert_eq!(app.top, 4);
    app.on_key(key(KeyCode::PageUp));
    assert_eq!(app.cursor, 3);
    app.on_key(key(KeyCode::Home));
    assert_eq!((app.cursor, app.top), (0, 0));
    app.on_key(ctrl(KeyCode::End));
    assert_eq!(app.cursor, 5);
    app.on_key(ctrl(KeyCode::Home));
    assert_eq!(app.cursor, 0);
    app.on_key(key(KeyCode::Up));
    assert_eq!(app.cursor, 0);
    app.on_key(ctrl(KeyCode::PageDown));
    assert_eq!(app.hcol, 4);
    app.on_key(ctrl(KeyCode::PageUp));
    assert_eq!(app.hcol, 0);
    app.on_key(key(KeyCode::Left));
    assert_eq!(app.hcol, 0);
    for _ in 0..20 {
        app.on_key(key(KeyCode::Right));
    }
    // ID and NAME stay: the last of the other columns is the last stop.
    assert_eq!(app.hcol, app.cols.len() - 3);
}

#[test]
fn pause_resume_and_refresh_once() {
    let mut app = app();
    assert!(app.on_key(ch(' ')).is_empty(), "window already running");
    assert!(app.paused);
    assert_eq!(
        app.status,
        "Refresh paused; press Space to resume or r to refresh once."
    );
    // The window in flight still lands, and nothing new starts.
    let fx = app.on_msg(Msg::Window {
        rows: rows(),
        measured: 1.0,
    });
    assert!(fx.is_empty());
    assert!(app.paused);
    // r: exactly one window, still paused.
    assert_eq!(
        app.on_key(ch('r')),
        vec![Effect::Cmd(Cmd::Measure { delay: 1.0 })]
    );
    assert!(app.on_key(ch('r')).is_empty(), "ignored while running");
    assert!(app
        .on_msg(Msg::Window {
            rows: rows(),
            measured: 1.0
        })
        .is_empty());
    let fx = app.on_key(ch(' '));
    assert!(!app.paused);
    assert_eq!(app.status, "Refresh resumed with 1s delay.");
    assert_eq!(fx, vec![Effect::Cmd(Cmd::Measure { delay: 1.0 })]);
}

#[test]
fn column_toggles() {
    let mut app = app();
    assert_eq!(app.headers.len(), 8);
    app.on_key(ch('x'));
    assert_eq!(app.status, "Extended columns shown.");
    assert_eq!(
        &app.headers[8..],
        &["TAG", "PINNED", "MISSES", "OWNERS", "ATTACH", "MEMLOCK", "MAPS_MEM"]
    );
    app.on_key(ch('c'));
    assert_eq!(app.headers.len(), 21);
    assert_eq!(app.status, "Cumulative columns shown.");
    app.on_key(ch('x'));
    assert_eq!(app.status, "Extended columns hidden.");
    app.on_key(ch('c'));
    assert_eq!(app.headers.len(), 8);
}

#[test]
fn delay_dialog() {
    let mut app = app();
    app.on_key(ch('d'));
    assert_eq!(app.delay_dialog.as_ref().unwrap().text, "1.0");
    assert_eq!(
        app.status,
        "Enter a refresh delay in seconds; press Enter to apply or Esc to cancel."
    );
    // No window starts while the dialog is open.
    assert!(app
        .on_msg(Msg::Window {
            rows: rows(),
            measured: 1.0
        })
        .is_empty());
    // q is typed, not quit.
    assert!(app.on_key(ch('q')).is_empty());
    for _ in 0..4 {
        app.on_key(key(KeyCode::Backspace));
    }
    app.on_key(key(KeyCode::Enter));
    assert_eq!(app.status, "delay must be a number greater than zero");
    app.on_key(ch('0'));
    app.on_key(key(KeyCode::Enter));
    assert_eq!(app.status, "delay must be greater than zero");
    assert!(app.delay_dialog.is_some());
    app.on_key(key(KeyCode::Backspace));
    app.on_key(ch('2'));
    app.on_key(ch('.'));
    app.on_key(ch('5'));
    let fx = app.on_key(key(KeyCode::Enter));
    assert_eq!(app.delay, 2.5);
    assert_eq!(app.status, "Refresh delay set to 2.5s.");
    assert_eq!(fx, vec![Effect::Cmd(Cmd::Measure { delay: 2.5 })]);
    app.on_key(ch('d'));
    assert_eq!(app.delay_dialog.as_ref().unwrap().text, "2.5");
    app.on_key(key(KeyCode::Esc));
    assert!(app.delay_dialog.is_none());
    assert_eq!(app.status, "Refresh delay remains 2.5s.");
}

#[test]
fn help_panel_and_inert_keys() {
    let mut app = app();
    app.on_key(ch('h'));
    assert!(app.help);
    // Other keys keep working with the panel open.
    app.on_key(key(KeyCode::Down));
    assert_eq!(app.cursor, 1);
    app.on_key(ch('h'));
    assert!(!app.help);
    app.on_key(ch('h'));
    app.on_key(key(KeyCode::Esc));
    assert!(!app.help);
    for c in ['p', 'P', 'i', 'm', 'M', 'e', 'E'] {
        assert!(app.on_key(ch(c)).is_empty(), "{c}");
        assert!(app.drill.is_none());
    }
}

#[test]
fn sorting_keys() {
    let mut app = app();
    assert_eq!(app.header_text(3, "CPU%"), "CPU%▼");
    app.on_key(ch('s'));
    assert_eq!(app.sort.col, ActivityCol::ExecsPerSec);
    assert_eq!(ids(&app)[..2], [67, 122]);
    assert_eq!(
        app.status,
        "Sorted by EXECS/s descending; s/S/</> change the sort."
    );
    app.on_key(ch('S'));
    assert!(!app.sort.desc);
    assert_eq!(
        ids(&app)[..2],
        [65, 96],
        "idle first, ties by default order"
    );
    app.on_key(ch('<'));
    app.on_key(ch('<'));
    assert_eq!(app.sort.col, ActivityCol::Name);
    assert!(!app.sort.desc);
    assert_eq!(ids(&app), vec![76, 96, 65, 122, 67, 83]);
    app.on_key(ch('>'));
    assert_eq!(app.sort.col, ActivityCol::Cpu);
    // The cursor follows its program through the re-sort.
    app.on_key(key(KeyCode::End));
    let id = cursor_id(&app);
    app.on_key(ch('S'));
    assert_eq!(cursor_id(&app), id);
    // Hiding the sorted column falls back to CPU%.
    app.on_key(ch('x'));
    while app.sort.col != ActivityCol::Tag {
        app.on_key(ch('s'));
    }
    app.on_key(ch('x'));
    assert_eq!(app.sort.col, ActivityCol::Cpu);
}

#[test]
fn filter_matches_full_names_owner_comms_and_ids() {
    use crate::model::{AttachPoint, Keepers, Owner};
    let mut app = App::new(config(), (120, 40), Vec::new());
    app.start();
    let mut rs = rows();
    rs[2].prog.full_name = "tracepoint__syscalls__sys_enter_execve".into();
    rs[3].prog.keepers = Some(Keepers {
        owners: vec![Owner {
            pid: 4242,
            comm: "execsnoop".into(),
        }],
        held_by: None,
        workloads: [(
            4242,
            crate::model::Workload {
                path: "/kubepods/pod1/abc".into(),
                container: Some(crate::model::Container {
                    runtime: crate::model::Runtime::Containerd,
                    id: "ab".repeat(32),
                    name: Some("nginx-sidecar".into()),
                }),
                pod: Some(crate::model::Pod {
                    uid: "1".into(),
                    namespace: Some("shop".into()),
                    name: Some("api-0".into()),
                    qos: None,
                }),
                service: None,
            },
        )]
        .into(),
    });
    rs[3].prog.attached = vec![AttachPoint {
        link_id: Some(9),
        attach_type: Some("trace_fentry".into()),
        target: Some("blk_mq_start_request".into()),
        perf_event: None,
    }];
    app.on_msg(Msg::Window {
        rows: rs,
        measured: 1.0,
    });
    let search = |app: &mut App, text: &str| {
        app.on_key(ch('/'));
        for c in text.chars() {
            app.on_key(ch(c));
        }
        let got = ids(app);
        app.on_key(key(KeyCode::Esc));
        got
    };
    assert_eq!(search(&mut app, "execve"), vec![83]);
    assert_eq!(search(&mut app, "SNOOP"), vec![76]);
    // The owner's pod and container, as the table names them.
    assert_eq!(search(&mut app, "shop/API"), vec![76]);
    assert_eq!(search(&mut app, "nginx-side"), vec![76]);
    assert_eq!(search(&mut app, "96"), vec![96]);
    // The drilldown title names the program in full, with owner and link.
    app.on_key(ch('/'));
    for c in "snoop".chars() {
        app.on_key(ch(c));
    }
    app.on_key(key(KeyCode::Enter));
    app.on_key(key(KeyCode::Enter));
    let about = app.drill.as_ref().and_then(|d| d.about.clone()).unwrap();
    assert_eq!(about.owner.as_deref(), Some("execsnoop(4242)"));
    assert_eq!(
        about.attach.as_deref(),
        Some("trace_fentry:blk_mq_start_request")
    );
}

/// At 80 columns a long full name is cut with `…` so that CPU%, EXECS/s
/// and AVG_NS still show; at 120 it is shown whole.
#[test]
fn long_names_give_way_to_the_numbers_at_80_columns() {
    let long = "tracepoint__syscalls__sys_enter_execve_with_a_long_name";
    for (size, whole) in [((80, 24), false), ((120, 40), true)] {
        let mut app = App::new(config(), size, Vec::new());
        app.start();
        let mut rs = rows();
        rs[2].prog.full_name = long.into();
        app.on_msg(Msg::Window {
            rows: rs,
            measured: 1.0,
        });
        let frame = render(&app);
        let lines: Vec<&str> = frame.lines().collect();
        let head = lines[1];
        for col in ["CPU%", "EXECS/s", "AVG_NS"] {
            assert!(head.contains(col), "{size:?} {col}\n{frame}");
        }
        assert!(lines
            .iter()
            .all(|l| l.chars().count() <= usize::from(size.0)));
        let row = lines
            .iter()
            .find(|l| l.contains("tracepoint__sys"))
            .unwrap();
        assert_eq!(row.contains(long), whole, "{frame}");
        assert_eq!(row.contains('…'), !whole, "{frame}");
        // The row's AVG_NS cell sits under its header.
        let column = |l: &str, word: &str| {
            l.find(word)
                .and_then(|b| l.get(..b))
                .map(|p| p.chars().count() + word.chars().count())
        };
        assert_eq!(column(head, "AVG_NS"), column(row, "1,543"), "{frame}");
    }
}

#[test]
fn filter_keys() {
    let mut app = app();
    app.on_key(ch('/'));
    for c in "SYS_E".chars() {
        app.on_key(ch(c));
    }
    assert_eq!(ids(&app), vec![122, 67, 65]);
    app.on_key(key(KeyCode::Backspace));
    app.on_key(key(KeyCode::Backspace));
    app.on_key(ch('q')); // typed into the filter, not quit
    assert!(ids(&app).is_empty());
    app.on_key(key(KeyCode::Backspace));
    app.on_key(key(KeyCode::Enter));
    assert_eq!(app.filter, "SYS");
    assert_eq!(ids(&app), vec![122, 67, 83, 65]);
    assert!(app
        .status
        .starts_with("Showing 4 of 6 programs matching 'SYS'"));
    // By type too.
    app.on_key(ch('f'));
    for _ in 0..3 {
        app.on_key(key(KeyCode::Backspace));
    }
    for c in "cgroup".chars() {
        app.on_key(ch(c));
    }
    assert_eq!(ids(&app), vec![96]);
    app.on_key(key(KeyCode::Esc));
    assert_eq!(app.filter, "");
    assert_eq!(ids(&app).len(), 6);
    // Esc on the table clears a kept filter.
    app.on_key(ch('/'));
    app.on_key(ch('z'));
    app.on_key(key(KeyCode::Enter));
    assert_eq!(ids(&app).len(), 0);
    app.on_key(key(KeyCode::Esc));
    assert_eq!(ids(&app).len(), 6);
}

#[test]
fn quit_keys() {
    for k in [ch('q'), ctrl(KeyCode::Char('q')), ctrl(KeyCode::Char('c'))] {
        let mut app = app();
        assert_eq!(app.on_key(k), vec![Effect::Quit]);
    }
    // Ctrl+C quits while typing; q does not.
    let mut app = app();
    app.on_key(ch('/'));
    assert!(app.on_key(ch('q')).is_empty());
    assert_eq!(app.on_key(ctrl(KeyCode::Char('c'))), vec![Effect::Quit]);
}

#[test]
fn enter_opens_drilldown_and_esc_resumes_once() {
    let mut app = app();
    app.on_key(ch(' ')); // paused
    app.on_key(key(KeyCode::Down));
    let fx = app.on_key(key(KeyCode::Enter));
    assert_eq!(fx.len(), 1);
    let Effect::Cmd(Cmd::Load { id: 67, seq }) = fx[0] else {
        panic!("{fx:?}")
    };
    let d = app.drill.as_ref().unwrap();
    assert_eq!(d.title(), "loading program 67...");
    // Windows stop while it is open.
    assert!(app
        .on_msg(Msg::Window {
            rows: rows(),
            measured: 1.0
        })
        .is_empty());
    // The program vanished before loading: the drilldown says so instead of
    // showing an empty table.
    app.on_msg(Msg::Loaded {
        seq,
        result: Err(BrrError::NoProgram(67)),
    });
    let d = app.drill.as_ref().unwrap();
    assert_eq!(d.title(), "program 67");
    assert_eq!(d.status_lines(), vec!["brr: no eBPF program with id 67"]);
    // Esc: back, one update although paused.
    let fx = app.on_key(key(KeyCode::Esc));
    assert_eq!(
        fx,
        vec![
            Effect::Cmd(Cmd::Close),
            Effect::Cmd(Cmd::Measure { delay: 1.0 })
        ]
    );
    assert!(app.drill.is_none() && app.paused);
    // `?` opens too; an empty table opens nothing.
    assert!(matches!(
        app.on_key(ch('?'))[..],
        [Effect::Cmd(Cmd::Load { .. })]
    ));
    let mut empty = App::new(config(), (80, 24), Vec::new());
    assert!(empty.on_key(key(KeyCode::Enter)).is_empty());
}

#[test]
fn program_id_starts_in_the_drilldown() {
    let mut app = App::new(
        Config {
            program_id: Some(7),
            mixed: true,
            ..config()
        },
        (80, 24),
        rows(),
    );
    let fx = app.start();
    assert!(matches!(fx[..], [Effect::Cmd(Cmd::Load { id: 7, .. })]));
    assert_eq!(app.drill.as_ref().unwrap().mode, Mode::Mixed);
}

// ---------------------------------------------------------------------
// Drilldown
// ---------------------------------------------------------------------

const FILE: &str = "/build/prog.bpf.c";
const HDR: &str = "/build/maps.bpf.h";

/// 30 source lines (one with tabs, two in a header), one ld_imm64 and a
/// repeated line, so markers, children and folds all appear.
fn image() -> ProgramImage {
    let mut xlated = Vec::new();
    let mut lines = Vec::new();
    let mut slot = 0u32;
    let emit = |op: u8, xl: &mut Vec<u8>| {
        let mut raw = [0u8; 8];
        raw[0] = op;
        xl.extend_from_slice(&raw);
    };
    for l in 1..=30u32 {
        let (file, text) = match l {
            1 => (FILE, "int prog(void *ctx)".to_string()),
            5 => (FILE, "\tval = bpf_map_lookup_elem(&map, &key);".to_string()),
            6 | 7 => (HDR, format!("\thelper_{l}(map, key);")),
            30 => (FILE, "\treturn 0;".to_string()),
            _ => (FILE, format!("\tx{l} = x{} + {l};", l - 1)),
        };
        lines.push(LineRecord {
            insn_off: slot,
            file: Some(file.into()),
            line: Some(l),
            column: Some(2),
            source: Some(text),
            jited_addr: Some(0x1000 + slot as u64 * 4),
        });
        if l == 5 {
            emit(0x18, &mut xlated);
            emit(0x00, &mut xlated);
            slot += 2;
        }
        emit(if l == 30 { 0x95 } else { 0x07 }, &mut xlated);
        slot += 1;
    }
    ProgramImage {
        program: prog(42, "tracepoint", "synthetic_prog", 10, 1000),
        xlated,
        lines,
        jit_ranges: vec![JitRange {
            start: 0x1000,
            len: 0x400,
            func_index: 0,
            func_name: None,
        }],
        ..Default::default()
    }
}

fn hotspot(samples: u64, line: u32, img: &ProgramImage) -> DirectHotspot {
    let rec = img.lines.iter().find(|r| r.line == Some(line)).unwrap();
    DirectHotspot {
        samples,
        jited_address: rec.jited_addr,
        instruction_offset: Some(rec.insn_off as u64 * 8),
        file: rec.file.clone(),
        line: rec.line,
        column: rec.column,
        source: rec.source.clone(),
        function: None,
    }
}

fn kernel(
    samples: u64,
    sym: &str,
    kind: &'static str,
    line: u32,
    ips: usize,
    img: &ProgramImage,
) -> KernelRow {
    let rec = img.lines.iter().find(|r| r.line == Some(line)).unwrap();
    KernelRow {
        row: KernelHotspot {
            samples,
            ip: 0xffff_ffff_8100_0000,
            symbol: Some(sym.into()),
            symbol_offset: Some(0x1d),
            kind,
            bpf_jited_address: rec.jited_addr,
            bpf_instruction_offset: Some(rec.insn_off as u64 * 8),
            bpf_file: rec.file.clone(),
            bpf_line: rec.line,
            bpf_column: rec.column,
            bpf_source: rec.source.clone(),
            caller_mapped: true,
            ..Default::default()
        },
        ip_count: ips,
    }
}

fn native_sample(offset: u64, samples: u64) -> crate::inspect::profile::NativeSample {
    crate::inspect::profile::NativeSample {
        samples,
        ip: 0x1000 + offset,
        func_index: Some(0),
        offset: Some(offset),
        ..Default::default()
    }
}

/// The native code of [`image`]: two 2-byte instructions per translated
/// slot (each line record's JIT address is its slot times 4), a frame at
/// the start and a return at the end.
fn native_image(img: &ProgramImage) -> NativeImage {
    let slots = img.xlated.len() / 8;
    let insns = (0..slots * 2)
        .map(|n| {
            let offset = n as u32 * 2;
            let asm = match n {
                0 => "push rbp".to_string(),
                1 => "mov rbp, rsp".to_string(),
                _ if n == slots * 2 - 2 => "leave".to_string(),
                _ if n == slots * 2 - 1 => "ret".to_string(),
                _ if n % 2 == 1 => "nop".to_string(),
                _ => format!("add rax, {:#x}", n / 2),
            };
            NativeInsn {
                offset,
                bytes: vec![0x90; 2].into(),
                asm,
                target: None,
                line: img.lines.iter().rposition(|r| {
                    r.jited_addr
                        .is_some_and(|a| a <= 0x1000 + u64::from(offset))
                }),
            }
        })
        .collect();
    NativeImage {
        arch: crate::inspect::native::Arch::X86_64,
        functions: vec![JitFunction {
            name: "prog_main".into(),
            index: 0,
            address: Some(0x1000),
            length: slots as u32 * 4,
            insns,
        }],
    }
}

fn done(img: &ProgramImage) -> ProfileDone {
    let functions = vec![
        kernel(10, "lookup_nulls_elem_raw", "kernel", 5, 3, img),
        kernel(5, "htab_map_hash", "bpf_map", 5, 2, img),
    ];
    let ips = vec![
        kernel(6, "lookup_nulls_elem_raw", "kernel", 5, 1, img),
        kernel(4, "lookup_nulls_elem_raw", "kernel", 5, 1, img),
        kernel(5, "htab_map_hash", "bpf_map", 5, 1, img),
    ];
    let input = ProfileInput {
        program: Some(DrillProfile {
            samples: 80,
            kernel_samples: 15,
            inclusive_samples: 95,
            inclusive_cpu_percent: 9.5,
            hotspots: vec![
                hotspot(50, 25, img),
                hotspot(20, 5, img),
                hotspot(10, 12, img),
            ],
            kernel_functions: functions,
            kernel_ips: ips,
            native: vec![
                native_sample(104, 30),
                native_sample(106, 20),
                native_sample(16, 20),
                native_sample(52, 10),
            ],
            ..Default::default()
        }),
        line_limit: 0,
        warnings: Vec::new(),
        incomplete: false,
    };
    let profile = crate::model::profile::Profile {
        frequency: 997,
        duration: 1.0,
        ..Default::default()
    };
    let payer = |id, name: &str, samples| Figured {
        row: Payer {
            id,
            name: name.into(),
            samples,
        },
        sample_percent: crate::model::profile::share(samples, 95),
        cpu_percent: profile.cpu_percent(samples),
    };
    let tasks = vec![payer(4242, "nginx", 60), payer(0, "swapper", 35)];
    let report = Report {
        capture: Capture {
            selected_event: "cpu-clock".into(),
            frequency: 997,
            telemetry: crate::model::profile::Telemetry {
                actual_duration: 1.0,
                ..Default::default()
            },
            ..Default::default()
        },
        programs: vec![ProgramReport {
            id: img.program.id,
            inclusive_samples: 95,
            tasks: Payers {
                shown: tasks.len(),
                all: tasks,
                other: None,
                workloads: [(4242, in_pod())].into(),
            },
            ..Default::default()
        }],
        ..Default::default()
    };
    ProfileDone {
        input,
        report: Arc::new(report),
        profile: Arc::new(profile),
        native: Vec::new(),
    }
}

/// nginx's place: container `web` of pod `shop/api-0`.
fn in_pod() -> crate::model::Workload {
    let mut w = crate::kernel::cgroups::workload(&format!(
        "/kubepods/pod0123abcd-0000-4000-8000-000000000001/{}",
        "c1".repeat(32)
    ));
    if let Some(c) = w.container.as_mut() {
        c.name = Some("web".into());
    }
    if let Some(p) = w.pod.as_mut() {
        p.namespace = Some("shop".into());
        p.name = Some("api-0".into());
    }
    w
}

/// A profile whose program shows one hint at the hot line.
fn done_with_hint(img: &ProgramImage) -> ProfileDone {
    let mut done = done(img);
    Arc::make_mut(&mut done.report).programs[0].hints = vec![crate::model::profile::Hint {
        kind: "hash_map_contention",
        program_id: 42,
        program: "xdp_main".into(),
        file: Some("/src/x.c".into()),
        line: Some(11),
        source: Some("bpf_map_update_elem(&counts, &key, &one, BPF_ANY);".into()),
        figure: 37.5,
        threshold: 10.0,
        unit: "%",
        evidence: "37.50% of the program's samples (30 of 80) are in spin-lock or bucket-lock functions beneath a map update/delete".into(),
        fix: "use a per-CPU hash or array map",
    }];
    done
}

fn hinted_app(size: (u16, u16)) -> App {
    let mut app = app_with("", size);
    let img = image();
    let p = done_with_hint(&img);
    app.drill = Some(Drill::with_image(&app.config, size, img, Some(p)));
    app
}

#[test]
fn h_opens_and_closes_the_hints_of_the_last_profile() {
    let mut app = drill_app((100, 30), false);
    app.on_key(ch('H'));
    assert_eq!(d(&app).overlay, Overlay::None);
    assert_eq!(
        d(&app).message.as_deref(),
        Some("no profile yet: press p to profile")
    );
    // A profile without hints says so instead of opening an empty box.
    let mut app = drill_app((100, 30), true);
    assert!(!d(&app).status_lines().iter().any(|l| l.contains("press H")));
    app.on_key(ch('H'));
    assert_eq!(d(&app).overlay, Overlay::None);
    assert_eq!(
        d(&app).message.as_deref(),
        Some("the last profile shows no anti-pattern: no hints")
    );

    let mut app = hinted_app((100, 30));
    assert!(
        d(&app)
            .status_lines()
            .iter()
            .any(|l| l == "1 hint: press H"),
        "{:?}",
        d(&app).status_lines()
    );
    app.on_key(ch('H'));
    assert_eq!(d(&app).overlay, Overlay::Hints);
    let frame = render(&app);
    assert!(frame.contains("hash map contention"), "{frame}");
    assert!(frame.contains("at x.c:11"), "{frame}");
    assert!(frame.contains("(threshold 10%)"), "{frame}");
    assert!(frame.contains("per-CPU"), "{frame}");
    // Other keys are taken by the overlay; h goes to the help.
    app.on_key(ch('p'));
    assert!(d(&app).running.is_none());
    app.on_key(ch('H'));
    assert_eq!(d(&app).overlay, Overlay::None);
    app.on_key(ch('H'));
    app.on_key(key(KeyCode::Esc));
    assert_eq!(d(&app).overlay, Overlay::None);
    app.on_key(ch('H'));
    app.on_key(ch('h'));
    assert_eq!(d(&app).overlay, Overlay::Help);
}

#[test]
fn f_saves_the_last_profile_and_t_shows_who_pays() {
    let mut app = drill_app((100, 30), false);
    assert!(app.on_key(ch('F')).is_empty());
    assert_eq!(
        d(&app).message.as_deref(),
        Some("no profile to save yet: press p to profile")
    );
    app.on_key(ch('t'));
    assert_eq!(d(&app).overlay, Overlay::None);

    let mut app = drill_app((100, 30), true);
    let fx = app.on_key(ch('F'));
    assert!(
        matches!(&fx[..], [Effect::Cmd(Cmd::Export { id: 42, .. })]),
        "{fx:?}"
    );
    let Some(Effect::Cmd(Cmd::Export { profile, .. })) = fx.first() else {
        panic!()
    };
    // The worker's side: both files, and a message naming them.
    let dir = std::env::temp_dir().join(format!("brr-tui-export-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let said = super::worker::export(&dir, 42, profile).unwrap();
    let files: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path().display().to_string())
        .collect();
    assert_eq!(files.len(), 2, "{files:?}");
    assert!(files.iter().all(|f| said.contains(f.as_str())), "{said}");
    assert!(
        std::fs::read_to_string(files.iter().find(|f| f.ends_with(".svg")).unwrap())
            .unwrap()
            .contains("<svg")
    );
    std::fs::remove_dir_all(&dir).unwrap();
    app.on_msg(Msg::Exported(Ok(said.clone())));
    assert_eq!(d(&app).message.as_deref(), Some(said.as_str()));
    app.on_msg(Msg::Exported(Err("brr: cannot write flame graph".into())));
    assert_eq!(
        d(&app).message.as_deref(),
        Some("brr: cannot write flame graph")
    );

    // A task with one sample, and one with a long name and many samples.
    let (_, report) = app.drill.as_mut().unwrap().last.as_mut().unwrap();
    let tasks = &mut Arc::make_mut(report).programs[0].tasks;
    for (id, name, samples) in [(7, "cron", 1), (31337, "kworker/u8:2-events", 1234)] {
        tasks.all.push(Figured {
            row: Payer {
                id,
                name: name.into(),
                samples,
            },
            sample_percent: 1.0,
            cpu_percent: 12.3456,
        });
    }
    tasks.shown = tasks.all.len();
    app.on_key(ch('t'));
    assert_eq!(d(&app).overlay, Overlay::WhoPays);
    let frame = render(&app);
    assert!(frame.contains("Triggered by"), "{frame}");
    // Comm starts, the word `sample(s)` starts and CPU% ends at the same
    // place on every row; one sample is `1 sample`.
    let line = |needle: &str| -> Vec<char> {
        frame
            .lines()
            .find(|l| l.contains(needle))
            .unwrap()
            .chars()
            .collect()
    };
    let find = |l: &[char], s: &str| -> usize {
        let s: Vec<char> = s.chars().collect();
        l.windows(s.len()).position(|w| w == s.as_slice()).unwrap()
    };
    let head = line("COMM");
    let comm = find(&head, "COMM");
    let cpu_end = find(&head, "CPU%") + 4;
    let mut word = None;
    for (pid, name, count) in [
        ("4242", "nginx", "60 samples"),
        ("31337", "kworker/u8:2-events", "1,234 samples"),
        ("7 ", "cron", "1 sample "),
        ("0 ", "swapper", "35 samples"),
    ] {
        let l = line(name);
        assert_eq!(find(&l, pid), find(&head, "PID"), "{frame}");
        assert_eq!(find(&l, name), comm, "{frame}");
        let w = find(&l, count) + count.find(' ').unwrap() + 1;
        assert_eq!(*word.get_or_insert(w), w, "{frame}");
        assert_eq!(find(&l, "% ") + 1, cpu_end, "{frame}");
    }
    assert!(!frame.contains(" 1 samples"), "{frame}");
    // The pod and container columns, where a task ran in one.
    let nginx = line("nginx");
    assert_eq!(find(&nginx, "shop/api-0"), find(&head, "POD"), "{frame}");
    assert_eq!(find(&nginx, "web"), find(&head, "CONTAINER"), "{frame}");
    app.on_key(key(KeyCode::Esc));
    assert_eq!(d(&app).overlay, Overlay::None);
}

fn drill_app(size: (u16, u16), profiled: bool) -> App {
    let mut app = app_with("", size);
    let img = image();
    let p = profiled.then(|| done(&img));
    app.drill = Some(Drill::with_image(&app.config, size, img, p));
    app
}

/// [`drill_app`] profiled, switched to the mixed view: the disassembly it
/// asks for answered with the fixture's native code.
fn drill_disassembled(size: (u16, u16)) -> App {
    let mut app = drill_app(size, true);
    let fx = app.on_key(ch(' '));
    let [Effect::Cmd(Cmd::Disasm { seq, .. })] = fx[..] else {
        panic!("{fx:?}")
    };
    answer_disasm(&mut app, seq, Ok(Arc::new(native_image(&image()))));
    app
}

/// The worker's answer to the drilldown's `Disasm` request `seq`.
fn answer_disasm(app: &mut App, seq: u64, native: Result<Arc<NativeImage>, String>) {
    app.on_msg(Msg::Disasm {
        seq,
        call_names: Default::default(),
        native,
    });
}

fn d(app: &App) -> &Drill {
    app.drill.as_ref().unwrap()
}

fn code(app: &App) -> String {
    let d = d(app);
    d.lines[d.cursor].code.clone()
}

/// Move the drilldown cursor to the first shown line whose code matches.
fn goto(app: &mut App, pred: impl Fn(&str) -> bool) {
    let at = shown(app)
        .iter()
        .position(|c| pred(c))
        .expect("a matching line");
    app.on_key(key(KeyCode::Home));
    for _ in 0..at {
        app.on_key(key(KeyCode::Down));
    }
}

fn shown(app: &App) -> Vec<String> {
    d(app).lines.iter().map(|l| l.code.clone()).collect()
}

#[test]
fn drilldown_unprofiled_source_view() {
    let app = drill_app((120, 40), false);
    let d = d(&app);
    assert_eq!(
        d.title(),
        "program 42 synthetic_prog mode=source disasm=internal"
    );
    assert_eq!(d.status_lines(), vec![HELP_LINE]);
    assert_eq!(d.lines.len(), 30);
    assert!(d.view.folds.is_empty());
}

#[test]
fn profile_result_moves_to_hottest_row_and_folds() {
    let mut app = drill_app((80, 24), false);
    let fx = app.on_key(ch('p'));
    let Effect::Profile(job) = &fx[0] else {
        panic!("{fx:?}")
    };
    assert!(job.request.kernel_samples, "p always samples the kernel");
    assert_eq!(job.request.program_ids, vec![42]);
    assert_eq!(job.line_limit, 0);
    let seq = job.seq;
    assert_eq!(
        d(&app).status_lines()[0],
        "profiling program 42 for 5s at 997Hz..."
    );
    assert!(app.on_key(ch('p')).is_empty(), "one profile at a time");
    app.on_msg(Msg::Progress {
        seq,
        elapsed: 2.0,
        samples: 12,
    });
    assert_eq!(
        d(&app).status_lines()[1],
        "2.0s of 5s, 12 samples; Esc cancels"
    );
    let img = image();
    app.on_msg(Msg::Profiled {
        seq,
        result: Ok(done(&img)),
    });
    let dd = d(&app);
    assert!(dd
        .title()
        .ends_with("kernel=functions event=cpu-clock F=997Hz 1.0s samples=95"));
    assert_eq!(
        dd.status_lines(),
        vec!["CPU: 9.5000% total = 8.0000% eBPF + 1.5000% under eBPF + 0.0000% unaccounted (100% = one CPU)"]
    );
    // Hottest: line 25 (50) beats line 5 (20 + 15 children).
    assert!(code(&app).starts_with("prog.bpf.c:25:"), "{}", code(&app));
    assert!(!dd.view.folds.is_empty());
    assert!(shown(&app).contains(&"...".to_string()));
    assert!(shown(&app)
        .contains(&"+ prog.bpf.c:5: \tval = bpf_map_lookup_elem(&map, &key);".to_string()));
}

#[test]
fn profile_errors_and_cancel() {
    let mut app = drill_app((80, 24), false);
    let fx = app.on_key(ch('p'));
    let Effect::Profile(job) = &fx[0] else {
        panic!()
    };
    let seq = job.seq;
    app.on_msg(Msg::Profiled {
        seq,
        result: Err(BrrError::Unsupported(
            "perf event cycles is not supported on this host".into(),
        )),
    });
    assert_eq!(
        d(&app).status_lines(),
        vec!["brr: perf event cycles is not supported on this host"]
    );
    // Esc while profiling cancels and stays; a second Esc leaves.
    app.on_key(ch('p'));
    let fx = app.on_key(key(KeyCode::Esc));
    assert_eq!(fx, vec![Effect::CancelProfile]);
    assert!(app.drill.as_ref().is_some_and(|d| d.running.is_none()));
    assert_eq!(
        d(&app).status_lines(),
        vec!["profile cancelled; Esc again leaves the drilldown"]
    );
    let fx = app.on_key(key(KeyCode::Esc));
    assert!(!fx.contains(&Effect::CancelProfile));
    assert!(app.drill.is_none());
    assert!(fx.contains(&Effect::Cmd(Cmd::Measure { delay: 1.0 })) || app.window_running);
}

#[test]
fn expand_collapse_keep_the_branch_in_place() {
    let mut app = drill_app((80, 24), true);
    // Go to the parent of line 5.
    goto(&mut app, |c| c.starts_with("+ prog.bpf.c:5:"));
    let screen = d(&app).cursor - d(&app).top;
    app.on_key(ch('e'));
    assert!(code(&app).starts_with("- prog.bpf.c:5:"));
    assert_eq!(d(&app).cursor - d(&app).top, screen);
    assert_eq!(
        d(&app).lines[d(&app).cursor + 1].code,
        "  -> kernel lookup_nulls_elem_raw (3 IPs)"
    );
    // c on a child: collapse and land on the parent at the child's line.
    app.on_key(key(KeyCode::Down));
    let screen = d(&app).cursor - d(&app).top;
    app.on_key(ch('c'));
    assert!(code(&app).starts_with("+ prog.bpf.c:5:"));
    assert_eq!(d(&app).cursor - d(&app).top, screen.min(d(&app).cursor));
    // e on a fold opens it in place; c inside re-folds it.
    goto(&mut app, |c| c == "...");
    let before = d(&app).lines.len();
    app.on_key(ch('e'));
    assert!(d(&app).lines.len() > before);
    assert_ne!(code(&app), "...");
    app.on_key(ch('c'));
    assert_eq!(code(&app), "...");
    // E: everything open, same row on the same line.
    app.on_key(key(KeyCode::Down));
    let row = code(&app);
    let screen = d(&app).cursor - d(&app).top;
    app.on_key(ch('E'));
    assert_eq!(code(&app), row);
    assert_eq!(d(&app).cursor - d(&app).top, screen);
    assert!(!shown(&app).contains(&"...".to_string()));
    assert_eq!(d(&app).lines.len(), 32);
    // C on a child: collapse to its parent.
    goto(&mut app, |c| c.contains("htab_map_hash"));
    app.on_key(ch('C'));
    assert!(code(&app).starts_with("+ prog.bpf.c:5:"), "{}", code(&app));
    // e on a plain row does nothing.
    let n = d(&app).lines.len();
    app.on_key(key(KeyCode::Up));
    app.on_key(ch('e'));
    assert_eq!(d(&app).lines.len(), n);
}

#[test]
fn markers_legend_help_and_exact_ips() {
    let mut app = drill_app((120, 40), true);
    let row = code(&app);
    app.on_key(ch('m'));
    assert_eq!(d(&app).status_lines(), vec!["source mapping markers shown"]);
    assert!(code(&app).starts_with(&row));
    assert!(shown(&app)
        .iter()
        .any(|c| c.ends_with("helper_6(map, key); [file-switch] [header]")));
    app.on_key(ch('M'));
    assert_eq!(d(&app).overlay, Overlay::Legend);
    assert_eq!(
        d(&app).status_lines(),
        vec!["marker legend open; Esc or M closes"]
    );
    app.on_key(ch('e')); // inert under the overlay
    app.on_key(ch('M'));
    assert_eq!(d(&app).overlay, Overlay::None);
    assert!(d(&app).status_lines()[0].starts_with("CPU: "), "restored");
    app.on_key(ch('h'));
    assert_eq!(d(&app).overlay, Overlay::Help);
    assert_eq!(
        d(&app).status_lines(),
        vec!["drilldown help open; Esc or h closes"]
    );
    app.on_key(key(KeyCode::Esc));
    assert!(app.drill.is_some(), "Esc closed only the help");
    assert_eq!(d(&app).overlay, Overlay::None);
    // i: exact IPs, the expanded parent stays expanded.
    goto(&mut app, |c| c.starts_with("+ prog.bpf.c:5:"));
    app.on_key(ch('e'));
    app.on_key(ch('i'));
    assert!(d(&app).title().contains("kernel=IPs"));
    assert!(code(&app).starts_with("- prog.bpf.c:5:"));
    assert!(shown(&app).contains(&"  -> kernel lookup_nulls_elem_raw+0x1d".to_string()));
    app.on_key(key(KeyCode::Down));
    app.on_key(ch('i'));
    assert_eq!(code(&app), "  -> kernel lookup_nulls_elem_raw (3 IPs)");
    // i before a profile does nothing.
    let mut plain = drill_app((120, 40), false);
    plain.on_key(ch('i'));
    assert_eq!(d(&plain).status_lines(), vec![HELP_LINE]);
}

#[test]
fn mixed_mode_round_trip() {
    let mut app = drill_app((120, 40), true);
    let row = code(&app);
    let fx = app.on_key(ch(' '));
    let [Effect::Cmd(Cmd::Disasm { id: 42, seq })] = fx[..] else {
        panic!("{fx:?}")
    };
    assert_eq!(d(&app).status_lines(), vec!["Rendering mixed view..."]);
    answer_disasm(&mut app, seq, Ok(Arc::new(native_image(&image()))));
    assert_eq!(d(&app).mode, Mode::Mixed);
    assert!(d(&app).title().contains("mode=mixed disasm=internal"));
    assert!(shown(&app).iter().any(|c| c == "     0: (07) r0 += 0"));
    // The ld_imm64's upper half (slot 5) has no row of its own.
    assert!(shown(&app).iter().any(|c| c == "     4: (18) r0 = 0x0"));
    assert!(shown(&app).iter().any(|c| c.starts_with("     6: (07)")));
    assert!(!shown(&app).iter().any(|c| c.starts_with("     5: ")));
    assert!(code(&app).starts_with(&row), "same row after the switch");
    assert!(d(&app).view.folds.is_empty(), "no folds in mixed mode");
    // On to the native view without another request: the same source
    // row, its instructions under it, folds again.
    assert!(app.on_key(ch(' ')).is_empty(), "disassembly cached");
    assert_eq!(d(&app).mode, Mode::Native);
    assert!(d(&app).title().contains("mode=native disasm=x86_64"));
    assert!(code(&app).starts_with(&row), "same row after the switch");
    let texts: Vec<&str> = d(&app)
        .dd
        .as_ref()
        .unwrap()
        .rows
        .iter()
        .map(|r| r.text.as_str())
        .collect();
    assert!(
        texts.contains(&"      +0x0  push rbp  [prologue]"),
        "{texts:#?}"
    );
    assert!(texts.contains(&"     +0x7e  ret  [epilogue]"), "{texts:#?}");
    assert!(!d(&app).view.folds.is_empty(), "folds in the native view");
    // Back to source.
    assert!(app.on_key(ch(' ')).is_empty());
    assert_eq!(d(&app).mode, Mode::Source);
    assert_eq!(code(&app), row);
}

/// The `%THIS` cells of the drilldown table in a frame.
fn this_cells(frame: &str) -> Vec<f64> {
    let mut lines = frame.lines();
    let head = lines
        .find(|l| l.contains("%THIS  SAMPLES  CODE"))
        .expect("the drilldown table header");
    let at = head
        .get(..head.find("%THIS").unwrap())
        .unwrap()
        .chars()
        .count();
    lines
        .filter_map(|l| {
            let cell: String = l.chars().skip(at - 1).take(6).collect();
            cell.trim().parse::<f64>().ok()
        })
        .collect()
}

#[test]
fn drilldown_this_adds_up_to_100_in_every_view() {
    // Tall enough that nothing folds: every row with samples is drawn.
    let mut app = drill_disassembled((160, 400));
    for mode in [Mode::Mixed, Mode::Native, Mode::Source] {
        assert_eq!(d(&app).mode, mode);
        let frame = render(&app);
        let cells = this_cells(&frame);
        assert!(cells.len() > 1, "{frame}");
        let sum: f64 = cells.iter().sum();
        assert!((sum - 100.0).abs() < 1e-6, "{mode:?}: {sum}\n{frame}");
        app.on_key(ch(' '));
    }
}

#[test]
fn search_finds_native_instructions() {
    let mut app = drill_disassembled((120, 40));
    app.on_key(ch(' '));
    assert_eq!(d(&app).mode, Mode::Native);
    app.on_key(ch('/'));
    for c in "LEAVE".chars() {
        app.on_key(ch(c));
    }
    app.on_key(key(KeyCode::Enter));
    assert_eq!(
        d(&app).status_lines(),
        vec!["1 source search matches for 'LEAVE'"]
    );
    assert!(
        code(&app).ends_with("+0x7c  leave  [epilogue]"),
        "{}",
        code(&app)
    );
}

#[test]
fn native_view_without_native_code_says_why() {
    let mut app = drill_app((120, 40), true);
    let fx = app.on_key(ch(' '));
    let [Effect::Cmd(Cmd::Disasm { seq, .. })] = fx[..] else {
        panic!("{fx:?}")
    };
    answer_disasm(
        &mut app,
        seq,
        Err("permission denied while trying to read the JIT code of program 42".into()),
    );
    assert!(app.on_key(ch(' ')).is_empty());
    assert_eq!(d(&app).mode, Mode::Native);
    assert_eq!(
        d(&app).status_lines(),
        vec!["no native code to show: permission denied while trying to read the JIT code of program 42"]
    );
    // The source rows stay: the program is still readable.
    assert!(shown(&app).iter().any(|c| c.contains("prog.bpf.c:25:")));
}

#[test]
fn search_with_next_and_previous() {
    let mut app = drill_app((80, 24), true);
    app.on_key(ch('/'));
    assert_eq!(d(&app).status_lines(), vec![SEARCH_HINT]);
    assert!(!shown(&app).contains(&"...".to_string()), "folds opened");
    for c in "HELPER".chars() {
        app.on_key(ch(c));
    }
    assert!(d(&app).status_lines()[0].starts_with("CPU: "));
    // Action keys are typed while editing.
    assert_eq!(d(&app).search.as_ref().unwrap().input.text, "HELPER");
    app.on_key(key(KeyCode::Enter));
    assert_eq!(
        d(&app).status_lines(),
        vec!["2 source search matches for 'HELPER'"]
    );
    assert!(code(&app).contains("helper_6"));
    app.on_key(ch('n'));
    assert!(code(&app).contains("helper_7"));
    app.on_key(ch('n'));
    assert!(code(&app).contains("helper_6"), "wraps");
    app.on_key(ch('N'));
    assert!(code(&app).contains("helper_7"));
    assert_eq!(d(&app).status_lines(), vec!["match 2 of 2 for 'HELPER'"]);
    // Action keys work while the bar is shown.
    app.on_key(ch('m'));
    assert!(d(&app).view.markers);
    app.on_key(ch('m'));
    assert!(!d(&app).view.markers);
    assert!(d(&app).search.is_some());
    app.on_key(ch('/'));
    for _ in 0..6 {
        app.on_key(key(KeyCode::Backspace));
    }
    for c in "nothing'here".chars() {
        app.on_key(ch(c));
    }
    app.on_key(key(KeyCode::Enter));
    assert_eq!(
        d(&app).status_lines(),
        vec!["no source search matches for \"nothing'here\""]
    );
    app.on_key(key(KeyCode::Esc));
    assert!(d(&app).search.is_none());
    assert!(app.drill.is_some());
    assert!(!shown(&app).contains(&"...".to_string()), "folds stay open");
}

#[test]
fn profile_form() {
    let mut app = drill_app((80, 24), true);
    app.on_key(ch('P'));
    assert_eq!(d(&app).status_lines(), vec![FORM_PROMPT]);
    let f = d(&app).form.clone().unwrap();
    let texts: Vec<&str> = f.fields.iter().map(|i| i.text.as_str()).collect();
    assert_eq!(texts, ["5.0", "997", "auto", "fp", "auto", "auto"]);
    assert!(f.kernel);
    // Esc from the search bar brings back the CPU line it covered.
    app.on_key(key(KeyCode::Esc));
    assert!(d(&app).status_lines()[0].starts_with("CPU: "));
    let cases: [(usize, &str, &str); 9] = [
        (
            0,
            "x",
            "duration must be numeric and frequency must be an integer",
        ),
        (
            1,
            "1.5",
            "duration must be numeric and frequency must be an integer",
        ),
        (0, "0", "duration and frequency must be greater than zero"),
        (
            2,
            "cycles:q",
            "event is not supported by brr; run brr perf-events to list options",
        ),
        (3, "dwarf", "call graph must be fp or lbr"),
        (4, "abc", "perf buffer pages must be auto or an integer"),
        (
            4,
            "12",
            "perf buffer pages must be auto or a positive power of two",
        ),
        (5, "x", "perf drain milliseconds must be auto or an integer"),
        (5, "0", "perf drain milliseconds must be greater than zero"),
    ];
    for (field, text, msg) in cases {
        app.on_key(ch('P'));
        for _ in 0..field {
            app.on_key(key(KeyCode::Tab));
        }
        for _ in 0..8 {
            app.on_key(key(KeyCode::Backspace));
        }
        for c in text.chars() {
            app.on_key(ch(c));
        }
        assert!(app.on_key(key(KeyCode::Enter)).is_empty());
        assert_eq!(d(&app).status_lines(), vec![msg], "{field} {text}");
        app.on_key(key(KeyCode::Esc));
    }
    // lbr needs the checkbox; Up wraps to it; Space toggles it.
    app.on_key(ch('P'));
    for _ in 0..3 {
        app.on_key(key(KeyCode::Tab));
    }
    for _ in 0..2 {
        app.on_key(key(KeyCode::Backspace));
    }
    for c in "lbr".chars() {
        app.on_key(ch(c));
    }
    for _ in 0..4 {
        app.on_key(key(KeyCode::BackTab));
    }
    assert_eq!(d(&app).form.as_ref().unwrap().focus, 6);
    app.on_key(ch(' '));
    assert!(!d(&app).form.as_ref().unwrap().kernel);
    app.on_key(key(KeyCode::Up));
    app.on_key(key(KeyCode::Down));
    app.on_key(key(KeyCode::Enter)); // toggles back on, does not submit
    assert!(d(&app).form.as_ref().unwrap().kernel);
}

#[test]
fn profile_form_submits() {
    let mut app = drill_app((80, 24), false);
    app.on_key(ch('P'));
    for _ in 0..3 {
        app.on_key(key(KeyCode::Backspace));
    }
    for c in "2.5".chars() {
        app.on_key(ch(c));
    }
    app.on_key(key(KeyCode::Down));
    app.on_key(key(KeyCode::Down));
    for _ in 0..4 {
        app.on_key(key(KeyCode::Backspace));
    }
    for c in "cpu-clock".chars() {
        app.on_key(ch(c));
    }
    let fx = app.on_key(key(KeyCode::Enter));
    let [Effect::Profile(job)] = &fx[..] else {
        panic!("{fx:?}")
    };
    assert_eq!(job.request.duration, 2.5);
    assert_eq!(job.request.event.name(), "cpu-clock");
    assert_eq!(job.request.pages, None);
    assert!(d(&app).form.is_none());
    assert_eq!(
        d(&app).status_lines()[0],
        "profiling program 42 for 2.5s at 997Hz..."
    );
    assert!(app.on_key(ch('P')).is_empty());
    assert!(d(&app).form.is_none(), "no form while profiling");
}

#[test]
fn vanished_program_and_quit_from_drilldown() {
    let mut app = drill_app((80, 24), false);
    app.on_msg(Msg::Vanished { id: 42 });
    assert_eq!(
        d(&app).status_lines().last().unwrap(),
        "program 42 was unloaded; Esc returns to the live table"
    );
    assert_eq!(app.on_key(ch('q')), vec![Effect::Quit]);
    for k in [ch('r'), ch('x'), ch('d'), ch('?'), key(KeyCode::Enter)] {
        let mut app = drill_app((80, 24), false);
        assert!(app.on_key(k).is_empty());
        assert!(app.drill.is_some());
    }
    // Stale messages for another drilldown are ignored.
    let mut app = drill_app((80, 24), false);
    app.on_msg(Msg::Profiled {
        seq: 999,
        result: Err(BrrError::Failed("x".into())),
    });
    assert_eq!(d(&app).status_lines(), vec![HELP_LINE]);
}

#[test]
fn resize_recomputes_folds() {
    let mut app = drill_app((80, 24), true);
    assert!(!d(&app).view.folds.is_empty());
    app.resize(120, 60);
    assert!(d(&app).view.folds.is_empty(), "everything fits");
    app.resize(80, 24);
    assert!(!d(&app).view.folds.is_empty());
}

// ---------------------------------------------------------------------
// Snapshots
// ---------------------------------------------------------------------

fn render(app: &App) -> String {
    let (w, h) = app.size;
    let mut term = Terminal::new(TestBackend::new(w, h)).unwrap();
    term.draw(|f| ui::draw(f, app, &Theme::new(false, true)))
        .unwrap();
    let buf = term.backend().buffer();
    (0..h)
        .map(|y| {
            (0..w)
                .map(|x| buf[(x, y)].symbol().to_string())
                .collect::<String>()
                .trim_end()
                .to_string()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

const SIZES: [(u16, u16); 2] = [(120, 40), (80, 24)];

/// Snapshot the frame at every size in `SIZES`, after `check` has stated in
/// plain assertions what the snapshot is about.
fn snap(name: &str, build: impl Fn((u16, u16)) -> App, check: impl Fn(&str)) {
    for size in SIZES {
        let app = build(size);
        let frame = render(&app);
        check(&frame);
        insta::assert_snapshot!(format!("{name}_{}x{}", size.0, size.1), frame);
    }
}

/// The column header line of the main table.
fn header(frame: &str) -> &str {
    frame.lines().nth(1).unwrap_or("")
}

/// The first cell (program ID) of every main-table row (status and prompt
/// lines below the table start with no number).
fn row_ids(frame: &str) -> Vec<&str> {
    frame
        .lines()
        .skip(2)
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| c.bytes().all(|b| b.is_ascii_digit()))
        .collect()
}

#[test]
fn snapshots_main_table_columns_and_sort() {
    snap(
        "main_default",
        |s| app_with("", s),
        |f| {
            assert!(
                header(f).contains("CPU%▼") && row_ids(f).first() == Some(&"122"),
                "sorted by CPU% descending, busiest program first:\n{f}"
            )
        },
    );
    snap(
        "main_extended",
        |s| app_with("-x", s),
        |f| {
            // `›` ends the header: more columns to the right.
            let cols: Vec<&str> = header(f)
                .split_whitespace()
                .map(|c| c.trim_end_matches('›'))
                .collect();
            let partial = cols.iter().any(|c| c.starts_with("TA") && *c != "TAG");
            assert!(
                !partial && (cols.contains(&"TAG") || cols.last() == Some(&"JIT_B")),
                "-x adds the TAG column after JIT_B, only where it fits whole:\n{f}"
            );
            assert!(header(f).ends_with('›'), "{f}");
        },
    );
    snap(
        "main_cumulative",
        |s| app_with("-c", s),
        |f| {
            assert!(
                header(f).contains("CUMUL_AVG_NS") && !header(f).contains("XLAT_B"),
                "-c shows cumulative columns in place of the image sizes:\n{f}"
            )
        },
    );
    snap(
        "main_sorted",
        |s| {
            let mut a = app_with("", s);
            a.on_key(ch('<'));
            a.on_key(ch('<'));
            a.on_key(ch('S'));
            a
        },
        |f| {
            assert!(
                f.contains("sort TYPE ▼")
                    && header(f).contains("TYPE▼")
                    && !header(f).contains("CPU%▼"),
                "the arrow moved to the TYPE header:\n{f}"
            )
        },
    );
}

#[test]
fn snapshots_main_table_filter_empty_and_dialogs() {
    snap(
        "main_filtered",
        |s| {
            let mut a = app_with("", s);
            a.on_key(ch('/'));
            for c in "sys_".chars() {
                a.on_key(ch(c));
            }
            a
        },
        |f| {
            assert!(
                f.contains("filter 'sys_' 3/6") && row_ids(f) == ["122", "67", "65"],
                "only the three sys_ programs remain:\n{f}"
            )
        },
    );
    snap(
        "main_empty",
        |s| {
            let mut a = App::new(config(), s, Vec::new());
            a.start();
            a
        },
        |f| {
            assert!(
                header(f).contains("CPU%▼") && row_ids(f).is_empty(),
                "headers drawn, no rows:\n{f}"
            )
        },
    );
    snap(
        "main_help",
        |s| {
            let mut a = app_with("", s);
            a.on_key(ch('h'));
            a
        },
        |f| assert!(f.contains("Keys (h closes)"), "h opens the key help:\n{f}"),
    );
    snap(
        "main_delay_dialog",
        |s| {
            let mut a = app_with("", s);
            a.on_key(ch(' '));
            a.on_key(ch('d'));
            a
        },
        |f| {
            assert!(
                f.contains("PAUSED") && f.contains("refresh delay seconds") && f.contains("1.0▏"),
                "paused, with the delay dialog holding the current delay:\n{f}"
            )
        },
    );
}

#[test]
fn snapshots_drilldown_views_and_form() {
    snap(
        "drill_source_profiled",
        |s| {
            let mut a = drill_app(s, true);
            a.on_key(ch('m'));
            goto(&mut a, |c| c.starts_with("+ prog.bpf.c:5:"));
            a.on_key(ch('e'));
            a
        },
        |f| {
            assert!(
                f.contains("- prog.bpf.c:5:")
                    && f.contains("-> kernel lookup_nulls_elem_raw")
                    && f.contains("[file-switch]"),
                "line 5 expanded to its kernel rows, with source markers:\n{f}"
            )
        },
    );
    snap(
        "drill_source_unprofiled",
        |s| drill_app(s, false),
        |f| {
            assert!(
                f.contains("mode=source") && !f.contains("samples=") && !f.contains("->"),
                "source view with no profile figures:\n{f}"
            )
        },
    );
    snap(
        "drill_mixed",
        |s| {
            let mut a = drill_disassembled(s);
            a.on_key(ch('E'));
            a
        },
        |f| {
            assert!(
                f.contains("mode=mixed") && f.contains(": (07) r0 += 0"),
                "instructions interleaved with the source lines:\n{f}"
            )
        },
    );
    snap(
        "drill_native",
        |s| {
            let mut a = drill_disassembled(s);
            a.on_key(ch(' '));
            a.on_key(ch('E'));
            a
        },
        |f| {
            assert!(
                f.contains("mode=native disasm=x86_64")
                    && f.contains("+0x68  add rax, 0x1a")
                    && f.contains("31.58"),
                "native instructions under their lines, with samples:\n{f}"
            )
        },
    );
    snap(
        "drill_form",
        |s| {
            let mut a = drill_app(s, true);
            a.on_key(ch('P'));
            a.on_key(key(KeyCode::Tab));
            a
        },
        |f| {
            assert!(
                f.contains("duration (s): 5.0") && f.contains("frequency (Hz): 997▏"),
                "the profile form, Tab moved the cursor to the frequency:\n{f}"
            )
        },
    );
}

#[test]
fn snapshots_drilldown_overlays_search_and_progress() {
    snap(
        "drill_help",
        |s| {
            let mut a = drill_app(s, true);
            a.on_key(ch('h'));
            a
        },
        |f| {
            assert!(
                f.contains("Drilldown help"),
                "h opens the drilldown help:\n{f}"
            )
        },
    );
    snap(
        "drill_legend",
        |s| {
            let mut a = drill_app(s, true);
            a.on_key(ch('M'));
            a
        },
        |f| {
            assert!(
                f.contains("Code markers"),
                "M opens the marker legend:\n{f}"
            )
        },
    );
    snap(
        "drill_hints",
        |s| {
            let mut a = hinted_app(s);
            a.on_key(ch('H'));
            a
        },
        |f| {
            assert!(
                f.contains("Hints") && f.contains("hash map contention"),
                "H opens the hints overlay with the contention hint:\n{f}"
            )
        },
    );
    snap(
        "drill_search",
        |s| {
            let mut a = drill_app(s, true);
            a.on_key(ch('/'));
            for c in "x2".chars() {
                a.on_key(ch(c));
            }
            a.on_key(key(KeyCode::Enter));
            a
        },
        |f| {
            assert!(
                f.contains("12 source search matches for 'x2'"),
                "the search reports its match count:\n{f}"
            )
        },
    );
    snap(
        "drill_profiling",
        |s| {
            let mut a = drill_app(s, false);
            let fx = a.on_key(ch('p'));
            let Effect::Profile(job) = &fx[0] else {
                panic!()
            };
            a.on_msg(Msg::Progress {
                seq: job.seq,
                elapsed: 1.5,
                samples: 321,
            });
            a
        },
        |f| {
            assert!(
                f.contains("1.5s of 5s, 321 samples"),
                "progress of the running profile:\n{f}"
            )
        },
    );
}

#[test]
fn image_is_shared_not_copied() {
    let img = Arc::new(image());
    let mut d = Drill::new(42, 1, &config(), (80, 24));
    d.on_msg(Msg::Loaded {
        seq: 1,
        result: Ok(Arc::clone(&img)),
    });
    assert_eq!(Arc::strong_count(&img), 2);
}

/// Tiny terminals: every view draws without panicking.
#[test]
fn tiny_terminals_never_panic() {
    for size in [(1, 1), (2, 2), (10, 3), (20, 5), (30, 8), (45, 12)] {
        let mut views: Vec<App> = Vec::new();
        let mut a = app_with("-x -c", size);
        views.push(app_with("", size));
        a.on_key(ch('h'));
        views.push(a);
        let mut a = app_with("", size);
        a.on_key(ch('d'));
        views.push(a);
        let mut a = app_with("", size);
        a.on_key(ch('/'));
        views.push(a);
        for key_seq in ["", "h", "M", "P", "/x", "mE", "p"] {
            let mut a = drill_app(size, true);
            for c in key_seq.chars() {
                a.on_key(ch(c));
            }
            a.on_key(key(KeyCode::End));
            a.on_key(key(KeyCode::Right));
            views.push(a);
        }
        for mut a in views {
            render(&a);
            a.resize(size.0.saturating_add(3), size.1.saturating_add(2));
            render(&a);
        }
    }
}

// ---------------------------------------------------------------------
// History chart
// ---------------------------------------------------------------------

#[test]
fn g_shows_the_selected_programs_history() {
    let mut app = app();
    for _ in 0..5 {
        app.history.lock().record(&rows(), 1.0);
    }
    let full = app.body_height();
    app.on_key(ch('g'));
    assert!(app.chart && app.chart_shown());
    assert_eq!(
        app.status,
        "History chart of the selected program; g hides it."
    );
    assert_eq!(app.body_height(), full - crate::tui::app::CHART_HEIGHT);
    let id = cursor_id(&app);
    let name = app.selected().unwrap().prog.name.clone();
    let screen = render(&app);
    assert!(
        screen.contains(&format!(
            "history of {id} {name}: last 5 of 120 windows of 1s, newest right"
        )),
        "{screen}"
    );
    for label in [" CPU%  now ", " EXECS/s  now ", " AVG_NS  now "] {
        assert!(screen.contains(label), "{label}\n{screen}");
    }
    // The status and footer lines are still at the bottom.
    assert!(screen.lines().last().unwrap().starts_with(" ^q Quit"));
    app.on_key(ch('g'));
    assert!(!app.chart);
    assert_eq!(app.body_height(), full);
    assert!(!render(&app).contains("history of"));
}

#[test]
fn chart_needs_room_and_the_drilldown_has_a_cpu_sparkline() {
    let mut small = app_with("", (80, 12));
    small.on_key(ch('g'));
    assert!(small.chart && !small.chart_shown());
    assert_eq!(
        small.status,
        "The terminal is too small for the history chart; g hides it."
    );
    assert!(!render(&small).contains("history of"));

    let mut app = app();
    app.history.lock().record(&rows(), 1.0);
    app.history.lock().record(&rows(), 1.0);
    let id = cursor_id(&app);
    app.on_key(key(KeyCode::Enter));
    let title = render(&app).lines().nth(1).unwrap().to_string();
    assert!(title.contains(" CPU% "), "{title}");
    assert!(
        title.contains(&d(&app).title()),
        "the sparkline never covers the title: {title}"
    );
    // Where the title leaves too little room, there is no sparkline.
    for w in 40..=120 {
        app.resize(w, 40);
        let title = render(&app).lines().nth(1).unwrap().to_string();
        let full = d(&app).title();
        if full.chars().count() + 4 < usize::from(w) {
            assert!(title.contains(&full), "width {w}: {title}");
        }
    }
    assert!(app.history.lock().of(id).is_some());
}

// ---------------------------------------------------------------------
// Cursor, filter and key fixes
// ---------------------------------------------------------------------

#[test]
fn cursor_stays_on_the_hottest_row_until_moved() {
    let idle: Vec<ActivityRow> = rows().into_iter().map(|r| row(r.prog, 0, 0)).collect();
    let mut app = App::new(config(), (120, 40), idle);
    app.start();
    // Start-up rows have zero deltas: row 0 is the lowest ID.
    assert_eq!(cursor_id(&app), 65);
    app.on_msg(Msg::Window {
        rows: rows(),
        measured: 1.0,
    });
    assert_eq!((app.cursor, cursor_id(&app)), (0, 122));
    // Enter right after start opens the hottest program.
    app.on_key(key(KeyCode::Enter));
    assert_eq!(d(&app).id, 122);
    app.on_key(key(KeyCode::Esc));
    // j/k move like Down/Up; then the cursor follows its program.
    app.on_key(ch('j'));
    assert_eq!(cursor_id(&app), 67);
    app.on_key(ch('k'));
    app.on_key(ch('j'));
    let mut swapped = rows();
    swapped[1].run_time_ns_delta = 999_999_999;
    app.on_msg(Msg::Window {
        rows: swapped,
        measured: 1.0,
    });
    assert_eq!((app.cursor, cursor_id(&app)), (0, 67));
}

#[test]
fn esc_from_a_drilldown_returns_to_the_program_viewed() {
    let mut app = app();
    app.on_key(ch('j'));
    app.on_key(ch('j'));
    let viewed = cursor_id(&app);
    app.on_key(key(KeyCode::Enter));
    // It sorts elsewhere by the time the user comes back.
    let mut later = rows();
    for r in &mut later {
        if r.prog.id == viewed {
            r.run_time_ns_delta = 10_000_000_000;
        }
    }
    app.on_msg(Msg::Window {
        rows: later,
        measured: 1.0,
    });
    app.on_key(key(KeyCode::Esc));
    assert!(app.drill.is_none());
    assert_eq!(cursor_id(&app), viewed);
}

#[test]
fn filter_starts_empty_matches_ids_clears_and_says_when_empty() {
    let mut app = app();
    app.on_key(ch('/'));
    for c in "sys".chars() {
        app.on_key(ch(c));
    }
    app.on_key(key(KeyCode::Enter));
    assert_eq!(ids(&app).len(), 4);
    // A new `/` starts from an empty query.
    app.on_key(ch('/'));
    assert_eq!(app.filter_input.as_ref().unwrap().text, "");
    assert_eq!(ids(&app).len(), 6);
    for c in "83".chars() {
        app.on_key(ch(c));
    }
    assert_eq!(ids(&app), vec![83]);
    app.on_key(ctrl(KeyCode::Char('u')));
    assert_eq!(app.filter, "");
    assert_eq!(ids(&app).len(), 6);
    for c in "zzz".chars() {
        app.on_key(ch(c));
    }
    assert!(ids(&app).is_empty());
    assert_eq!(
        app.status,
        "No program matches 'zzz'; Esc clears the filter."
    );
    app.on_key(key(KeyCode::Enter));
    assert_eq!(
        app.status,
        "No program matches 'zzz'; Esc clears the filter."
    );
    app.on_key(key(KeyCode::Esc));
    assert_eq!(ids(&app).len(), 6);
}

#[test]
fn search_finds_text_in_collapsed_helper_rows() {
    use crate::inspect::drilldown::RowKind;
    let mut app = drill_app((120, 40), true);
    app.on_key(ch('C'));
    let child = d(&app)
        .dd
        .as_ref()
        .unwrap()
        .rows
        .iter()
        .find(|r| r.kind == RowKind::Child)
        .map(|r| r.text.clone())
        .expect("a helper/kernel row");
    assert!(
        !shown(&app).iter().any(|c| c.contains(&child)),
        "collapsed: {child}"
    );
    app.on_key(ch('/'));
    for c in child.chars() {
        app.on_key(ch(c));
    }
    app.on_key(key(KeyCode::Enter));
    assert!(code(&app).contains(&child), "{}", code(&app));
    assert!(!d(&app).search.as_ref().unwrap().matches.is_empty());
    // j/k move in the drilldown as well.
    let at = d(&app).cursor;
    app.on_key(ch('j'));
    assert_eq!(d(&app).cursor, at + 1);
    app.on_key(ch('k'));
    assert_eq!(d(&app).cursor, at);
}

// ---------------------------------------------------------------------
// Scrolled columns, names and numbers
// ---------------------------------------------------------------------

#[test]
fn horizontal_scroll_keeps_id_and_name_and_marks_hidden_columns() {
    snap(
        "main_scrolled",
        |s| {
            let mut a = app_with("-x", s);
            for _ in 0..3 {
                a.on_key(key(KeyCode::Right));
            }
            a
        },
        |f| {
            let head = header(f);
            let cols: Vec<&str> = head.split_whitespace().collect();
            assert_eq!(cols[..2], ["ID", "NAME"], "ID and NAME stay:\n{f}");
            // TYPE, CPU% and EXECS/s are off to the left: `‹` before the
            // first column shown after NAME, `›` at the end.
            assert!(cols[2].starts_with("‹AVG_NS"), "{f}");
            assert!(!head.contains("TYPE") && !head.contains("CPU%"), "{f}");
            // `›` when some columns are still off to the right.
            assert_eq!(head.ends_with('›'), !head.contains("MAPS_MEM"), "{f}");
            let row = f.lines().nth(2).unwrap();
            assert!(row.trim_start().starts_with("122  sys_exit "), "{f}");
        },
    );
    // All the way right: the last column, no `›`.
    let mut a = app_with("-x", (80, 24));
    for _ in 0..30 {
        a.on_key(key(KeyCode::Right));
    }
    let head = header(&render(&a)).to_string();
    let cols: Vec<&str> = head.split_whitespace().collect();
    assert_eq!(cols, ["ID", "NAME", "‹MAPS_MEM"], "{head}");
    // Back to the start: the plain header.
    a.on_key(key(KeyCode::Home));
    for _ in 0..30 {
        a.on_key(key(KeyCode::Left));
    }
    let head = header(&render(&a)).to_string();
    assert!(
        head.starts_with("  ID  TYPE") && !head.contains('‹'),
        "{head}"
    );
}

/// Two programs the kernel names alike, with their full BTF names and
/// memory figures.
fn execsnoop_rows() -> Vec<ActivityRow> {
    let p = |id, full: &str| Program {
        full_name: full.into(),
        memlock_bytes: Some(4096),
        maps_memlock_bytes: Some(426_880),
        shared_maps: Some(2),
        ..prog(id, "tracepoint", "tracepoint__sys", 1_000, 1_000_000)
    };
    vec![
        row(
            p(201, "tracepoint__syscalls__sys_enter_execve"),
            1_289_686,
            90_000_000,
        ),
        row(
            p(202, "tracepoint__syscalls__sys_exit_execve"),
            1_289_686,
            80_000_000,
        ),
    ]
}

#[test]
fn full_names_in_titles_and_one_number_style() {
    let mut app = app_with("-x", (200, 40));
    app.on_msg(Msg::Window {
        rows: execsnoop_rows(),
        measured: 1.0,
    });
    // MEMLOCK and MAPS_MEM read like the other numbers: 4,096 and 426,880.
    let col = |c: ActivityCol| app.cols.iter().position(|&x| x == c).unwrap();
    assert_eq!(app.cell(0, col(ActivityCol::ExecsPerSec)), "1,289,686");
    assert_eq!(app.cell(0, col(ActivityCol::Memlock)), "4,096");
    assert_eq!(app.cell(0, col(ActivityCol::MapsMem)), "426,880 (2 shared)");
    // The history pane: the full name of each program.
    for _ in 0..3 {
        app.history.lock().record(&execsnoop_rows(), 1.0);
    }
    app.on_key(ch('g'));
    let screen = render(&app);
    assert!(
        screen.contains("history of 201 tracepoint__syscalls__sys_enter_execve: last 3"),
        "{screen}"
    );
    app.on_key(key(KeyCode::Down));
    let screen = render(&app);
    assert!(
        screen.contains("history of 202 tracepoint__syscalls__sys_exit_execve: last 3"),
        "{screen}"
    );
    // A pane too narrow for its title cuts it with `…`.
    app.resize(60, 40);
    let screen = render(&app);
    let title = screen
        .lines()
        .find(|l| l.contains("history of"))
        .unwrap()
        .trim_end_matches('─');
    assert!(title.ends_with('…'), "{screen}");
    assert!(
        title.contains("tracepoint__syscalls__sys_exit_exe"),
        "{screen}"
    );
    // The drilldown title: the full name too, cut with `…` when narrow.
    app.on_key(ch('g'));
    let fx = app.on_key(key(KeyCode::Enter));
    let [Effect::Cmd(Cmd::Load { id: 202, seq })] = fx[..] else {
        panic!("{fx:?}")
    };
    let img = ProgramImage {
        program: execsnoop_rows()[1].prog.clone(),
        ..no_line_image()
    };
    app.on_msg(Msg::Loaded {
        seq,
        result: Ok(Arc::new(img)),
    });
    let title = render(&app).lines().nth(1).unwrap().to_string();
    assert!(
        title.contains("program 202 tracepoint__syscalls__sys_exit_execve "),
        "{title}"
    );
    app.resize(40, 20);
    let title = render(&app).lines().nth(1).unwrap().to_string();
    assert!(title.ends_with("…┃"), "{title}");
    assert_eq!(title.chars().count(), 40);
}

/// A program loaded without line info: two helper calls between
/// arithmetic, one JIT function.
fn no_line_image() -> ProgramImage {
    let mut xlated = Vec::new();
    // Calls carry their target's offset from `__bpf_call_base`.
    for (op, imm) in [
        (0xb7u8, 0i32),
        (0x85, 269_488),
        (0x27, 3),
        (0x85, 330_864),
        (0x95, 0),
    ] {
        let mut raw = [0u8; 8];
        raw[0] = op;
        raw[4..].copy_from_slice(&imm.to_le_bytes());
        xlated.extend_from_slice(&raw);
    }
    ProgramImage {
        program: prog(77, "tracepoint", "bt_nolines", 10, 1000),
        xlated,
        lines: Vec::new(),
        jit_ranges: vec![JitRange {
            start: 0x2000,
            len: 0x80,
            func_index: 0,
            func_name: None,
        }],
        ..Default::default()
    }
}

/// What a profile of it gives: every sample without source metadata.
fn no_line_done() -> ProfileDone {
    let uncalled = |samples, sym: &str, kind| KernelRow {
        row: KernelHotspot {
            samples,
            ip: 0xffff_ffff_8100_0000,
            symbol: Some(sym.into()),
            kind,
            bpf_jited_address: Some(0x2010),
            ..Default::default()
        },
        ip_count: 1,
    };
    let kernel = vec![
        uncalled(1_200, "read_tsc", "kernel"),
        uncalled(300, "bpf_ktime_get_ns", "bpf_helper"),
    ];
    let mut done = done(&image());
    done.input.program = Some(DrillProfile {
        samples: 1_000,
        kernel_samples: 1_500,
        inclusive_samples: 2_500,
        inclusive_cpu_percent: 25.0,
        direct_source_unmapped_samples: 1_000,
        under_bpf_caller_source_unmapped_samples: 1_500,
        hotspots: vec![DirectHotspot {
            samples: 1_000,
            ..Default::default()
        }],
        kernel_functions: kernel.clone(),
        kernel_ips: kernel,
        ..Default::default()
    });
    let report = Arc::make_mut(&mut done.report);
    report.programs[0].id = 77;
    report.programs[0].inclusive_samples = 2_500;
    let native = |ip: u64, samples, asm: &str| NativeRow {
        ip,
        samples,
        text: format!("  bt_nolines+{:#x}: {asm}", ip - 0x2000),
    };
    done.native = vec![
        native(0x2014, 700, "imul rbx, rbx, 0x3"),
        native(0x2008, 300, "xor eax, eax"),
    ];
    done
}

/// The drilldown of [`no_line_image`] once loaded: it asks for the
/// helper names at once (source mode shows its instructions), and gets
/// one of the two calls named.
fn no_line_drill(config: &Config, size: (u16, u16)) -> Drill {
    let mut drill = Drill::new(77, 9, config, size);
    let fx = drill.on_msg(Msg::Loaded {
        seq: 9,
        result: Ok(Arc::new(no_line_image())),
    });
    let [Effect::Cmd(Cmd::Disasm { id: 77, seq })] = fx[..] else {
        panic!("{fx:?}")
    };
    assert_eq!(drill.message, None, "no mixed-view message in source mode");
    let mut names = crate::inspect::disasm::CallNames {
        base: Some(0x1000),
        ..Default::default()
    };
    names
        .names
        .insert(0x1000 + 269_488, "bpf_ktime_get_ns".into());
    drill.on_msg(Msg::Disasm {
        seq,
        call_names: names,
        native: Err("not read in this test".into()),
    });
    drill
}

/// [`no_line_drill`] after `p` and its profile.
fn no_line_profiled(config: &Config, size: (u16, u16)) -> Drill {
    let mut drill = no_line_drill(config, size);
    let Outcome::Effects(fx) = drill.on_key(&ch('p')) else {
        panic!()
    };
    let [Effect::Profile(ref job)] = fx[..] else {
        panic!("{fx:?}")
    };
    let seq = job.seq;
    drill.on_msg(Msg::Profiled {
        seq,
        result: Ok(no_line_done()),
    });
    drill
}

#[test]
fn without_line_info_the_unmapped_rows_expand_and_calls_are_named() {
    let size = (100, 30);
    let mut app = app_with("", size);
    app.drill = Some(no_line_drill(&app.config, size));
    let code = shown(&app);
    assert_eq!(d(&app).mode, Mode::Source);
    assert!(
        code.iter()
            .any(|c| c.ends_with(": (85) call bpf_ktime_get_ns#269488")),
        "{code:?}"
    );
    // No name known: the bare immediate.
    assert!(
        code.iter().any(|c| c.ends_with(": (85) call #330864")),
        "{code:?}"
    );

    let Effect::Profile(job) = &app.on_key(ch('p'))[0] else {
        panic!()
    };
    let seq = job.seq;
    app.on_msg(Msg::Profiled {
        seq,
        result: Ok(no_line_done()),
    });
    assert!(
        d(&app).title().ends_with(" samples=2,500"),
        "{}",
        d(&app).title()
    );
    let direct = "eBPF samples without BTF/JIT source metadata";
    let under = "under-eBPF samples without BPF caller source metadata";
    // Collapsed, each row holds its samples; the cursor is on the hottest.
    assert_eq!(code_of(&app), format!("+ {under}"));
    let row = |app: &App, text: &str| {
        d(app)
            .lines
            .iter()
            .find(|l| l.code.ends_with(text))
            .map(|l| (l.this.clone(), l.samples.clone()))
            .unwrap()
    };
    assert_eq!(row(&app, direct), ("40.00".into(), "1000".into()));
    assert_eq!(row(&app, under), ("60.00".into(), "1500".into()));
    // e opens the one under the cursor: its kernel functions.
    app.on_key(ch('e'));
    assert_eq!(code_of(&app), format!("- {under}"));
    assert_eq!(
        row(&app, "-> kernel read_tsc"),
        ("48.00".into(), "1200".into())
    );
    assert_eq!(
        row(&app, "-> bpf_helper bpf_ktime_get_ns"),
        ("12.00".into(), "300".into())
    );
    // And the other: the program's own instructions by JIT offset.
    goto(&mut app, |c| c.ends_with(direct));
    app.on_key(ch('e'));
    assert_eq!(
        row(&app, "bt_nolines+0x14: imul rbx, rbx, 0x3"),
        ("28.00".into(), "700".into())
    );
    assert_eq!(
        row(&app, "bt_nolines+0x8: xor eax, eax"),
        ("12.00".into(), "300".into())
    );
    // Kernel IPs keep both open; c closes one again.
    app.on_key(ch('i'));
    assert!(shown(&app).iter().any(|c| c.contains("bt_nolines+0x14")));
    assert!(shown(&app).iter().any(|c| c.contains("-> kernel read_tsc")));
    goto(&mut app, |c| c.contains("bt_nolines+0x8"));
    app.on_key(ch('c'));
    assert_eq!(code_of(&app), format!("+ {direct}"));
    app.on_key(ch('E'));
    snap(
        "drill_no_line_info",
        |s| {
            let mut a = App::new(config(), s, Vec::new());
            let mut dr = no_line_profiled(&a.config, s);
            dr.on_key(&ch('E'));
            a.drill = Some(dr);
            a
        },
        |f| {
            // Thousands separators in the SAMPLES column.
            assert!(f.contains("  1,200    -> kernel read_tsc"), "{f}");
        },
    );
}

fn code_of(app: &App) -> String {
    code(app)
}

/// A cost capture's figures: one raw tracepoint, its dispatch and
/// statistics beside its own samples.
fn costed() -> crate::model::cost::Cost {
    use crate::model::cost::{Cost, ProgramCost, Split};
    let samples = Split {
        program: 20,
        dispatch: 30,
        stats: 10,
    };
    Cost {
        programs: vec![ProgramCost {
            id: 122,
            name: "sys_exit".into(),
            full_name: "sys_exit".into(),
            prog_type: "raw_tracepoint".into(),
            hook: "raw_tracepoint:task_rename".into(),
            runs_per_sec: 100_000.0,
            samples,
            ..ProgramCost::default()
        }],
        host: samples,
        sample_ns: 1e6,
        seconds: 1.0,
        cpus: 2,
        frequency: 1000,
        ..Cost::default()
    }
}

#[test]
fn header_shows_the_programs_run_time_share_of_the_host() {
    let mut app = App::new(config(), (120, 40), rows());
    assert_eq!(app.programs_run_time(), None, "no window yet");
    app.on_msg(Msg::Window {
        rows: rows(),
        measured: 2.0,
    });
    let ns: u64 = rows().iter().map(|r| r.run_time_ns_delta).sum();
    let want = ns as f64 / (2.0 * 1e9 * 2.0) * 100.0;
    let got = app.programs_run_time().unwrap();
    assert!((got - want).abs() < 1e-9, "{got} vs {want}");
    let head = render(&app).lines().next().unwrap().to_string();
    assert!(
        head.contains(&format!("programs' run time: {want:.1} % of 2 CPUs")),
        "{head}"
    );
}

#[test]
fn cost_key_captures_the_window_length_and_shows_the_split() {
    let mut app = app();
    app.delay = 3.0;
    let fx = app.on_key(ch('C'));
    let [Effect::Cost(job)] = fx.as_slice() else {
        panic!("{fx:?}")
    };
    assert_eq!(job.request.duration, 3.0);
    assert!(job.request.program_ids.is_empty());
    let seq = job.seq;
    app.on_msg(Msg::CostProgress { seq, elapsed: 1.5 });
    assert!(render(&app).contains("1.5 s of 3 s"), "{}", render(&app));
    // Other keys wait while the pane is open.
    assert!(app.on_key(ch('x')).is_empty());
    assert!(!app.extended);
    // An older capture's answer is not this one's.
    app.on_msg(Msg::Costed {
        seq: seq + 1,
        result: Err(BrrError::Failed("stale".into())),
    });
    assert!(!render(&app).contains("stale"));
    app.on_msg(Msg::Costed {
        seq,
        result: Ok(costed()),
    });
    let screen = render(&app);
    for want in [
        "What eBPF costs this host",
        "eBPF on this host: 3.0 % of 2 CPUs = programs 1.0 + dispatch 1.5 + statistics 0.5",
        "DISP%",
        "NS/RUN",
        "HOOK",
    ] {
        assert!(screen.contains(want), "{want}:\n{screen}");
    }
    let row = screen.lines().find(|l| l.contains("sys_exit")).unwrap();
    assert!(row.contains("1.50") && row.contains("300"), "{row}");
    // Done: closing cancels nothing.
    assert!(app.on_key(key(KeyCode::Esc)).is_empty());
    assert!(app.cost.is_none());
    assert!(!render(&app).contains("What eBPF costs"));
}

#[test]
fn closing_the_cost_pane_mid_capture_cancels_it_and_errors_show() {
    let mut app = app();
    app.on_key(ch('C'));
    assert_eq!(app.on_key(ch('C')), vec![Effect::CancelProfile]);
    assert!(app.cost.is_none());
    let fx = app.on_key(ch('C'));
    let [Effect::Cost(job)] = fx.as_slice() else {
        panic!("{fx:?}")
    };
    let seq = job.seq;
    app.on_msg(Msg::Costed {
        seq,
        result: Err(BrrError::Failed("perf_event_open: no access".into())),
    });
    assert!(render(&app).contains("brr: perf_event_open: no access"));
    assert_eq!(app.on_key(ch('q')), vec![Effect::Quit]);
}
