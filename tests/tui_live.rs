//! Live tests of the interactive `brr top` (root, real kernel): the real
//! binary runs in a private tmux server, keys are sent with `send-keys` and
//! the screen is read with `capture-pane`.
//!
//! Only the fixtures' own programs are asserted on; the host may run other
//! BPF programs (the table is filtered to the fixture's name and sorted by
//! ID so that rows do not move while the test navigates).

// Test tooling: helpers outside #[test] functions fail the test by panicking,
// as the tests themselves do (clippy.toml only exempts #[test] code).
#![allow(clippy::expect_used, clippy::panic)]

#[path = "support/run.rs"]
mod run;
mod support;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use run::serial;
use support::insn::*;
use support::*;

/// Far longer than any step takes on a loaded machine: a step that does not
/// happen within it is broken, not slow.
const WAIT: Duration = Duration::from_secs(30);

/// A tmux server of our own (never the user's), killed on drop.
struct Tmux {
    socket: String,
}

impl Tmux {
    fn start(cols: u16, rows: u16) -> Option<Tmux> {
        let ok = Command::new("tmux")
            .arg("-V")
            .stdout(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if !ok {
            if std::env::var(REQUIRE_LIVE_ENV).as_deref() == Ok("1") {
                panic!("tmux is required for the TUI live tests");
            }
            support::skip("tmux not installed");
            return None;
        }
        let socket = format!("brr-tui-test-{}-{cols}x{rows}", std::process::id());
        let t = Tmux { socket };
        t.cmd(&[
            "-f",
            "/dev/null",
            "new-session",
            "-d",
            "-s",
            "t",
            "-x",
            &cols.to_string(),
            "-y",
            &rows.to_string(),
            "sh",
        ]);
        Some(t)
    }

    fn cmd(&self, args: &[&str]) -> String {
        let o = Command::new("tmux")
            .args(["-L", &self.socket])
            .args(args)
            .output()
            .expect("run tmux");
        String::from_utf8_lossy(&o.stdout).into_owned()
    }

    fn keys(&self, keys: &[&str]) {
        let mut a = vec!["send-keys", "-t", "t"];
        a.extend_from_slice(keys);
        self.cmd(&a);
    }

    /// Type text literally.
    fn type_text(&self, text: &str) {
        self.cmd(&["send-keys", "-t", "t", "-l", text]);
    }

    fn screen(&self) -> String {
        self.cmd(&["capture-pane", "-t", "t", "-p"])
    }

    /// Poll the screen until `cond` holds; returns the screen, or panics
    /// with the last screen after `WAIT`. How fast brr gets there is
    /// measured by `scripts/bench-top`, not here.
    fn wait(&self, what: &str, cond: impl Fn(&str) -> bool) -> String {
        let start = Instant::now();
        loop {
            let s = self.screen();
            if cond(&s) {
                return s;
            }
            if start.elapsed() > WAIT {
                panic!("timed out after {WAIT:?} waiting for {what}; screen:\n{s}");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        self.cmd(&["kill-server"]);
    }
}

/// The table row of program `id`: its cells split on whitespace.
fn row_of(screen: &str, id: u32) -> Option<Vec<String>> {
    screen.lines().find_map(|l| {
        let cells: Vec<String> = l.split_whitespace().map(String::from).collect();
        (cells.first().map(String::as_str) == Some(&id.to_string())).then_some(cells)
    })
}

/// Start brr in the shell of `t`, after printing a marker that must come
/// back when brr leaves the alternate screen.
fn launch(t: &Tmux, args: &str) {
    t.type_text(&format!(
        "clear; echo SHELL_BEFORE_BRR; {} {args}; echo BRR_EXIT=$?",
        env!("CARGO_BIN_EXE_brr")
    ));
    t.keys(&["Enter"]);
}

#[test]
fn live_table_drilldown_profile_and_prompt_quit() {
    if !support::live() {
        return;
    }
    let _s = serial();
    let Some(t) = Tmux::start(140, 40) else {
        return;
    };
    let fx = HotFixture::load().expect("load hot fixture");
    let id = fx.prog.id;
    // Busy for longer than all the waits below normally take together.
    let load = fx.spawn_load(Duration::from_secs(60));

    launch(&t, "-d 1 --profile-duration 1");
    // The table, then the fixture's activity from a measured window.
    t.wait("the table", |s| s.contains("CPU%"));
    t.wait("the fixture's row with activity", |s| {
        row_of(s, id).is_some_and(|c| c.get(3).is_some_and(|cpu| cpu != "0.0000"))
    });

    // Sort by ID (stable rows), filter to the fixture's name, go to its row.
    for _ in 0..3 {
        t.type_text("<");
    }
    t.type_text("/");
    t.type_text(HotFixture::PROG_NAME);
    t.keys(&["Enter"]);
    let s = t.wait("the sorted, filtered table", |s| {
        s.contains("ID▲") && s.contains(&format!("filter '{}'", HotFixture::PROG_NAME))
    });
    let body: Vec<&str> = s.lines().skip(2).collect();
    let pos = body
        .iter()
        .position(|l| l.split_whitespace().next() == Some(&id.to_string()))
        .unwrap_or_else(|| panic!("row {id} not shown:\n{s}"));
    for _ in 0..pos {
        t.keys(&["Down"]);
    }
    t.keys(&["Enter"]);
    let hot = format!("hot.c:{}:", HotFixture::HOT_LINE);
    t.wait("the drilldown with the hot line", |s| {
        s.contains(&format!("program {id} {}", HotFixture::PROG_NAME))
            && s.contains(&format!("{hot} {}", HotFixture::HOT_TEXT))
    });

    // p: a short profile gives the hot line a non-zero %THIS.
    t.type_text("p");
    t.wait("profiling status", |s| {
        s.contains(&format!("profiling program {id} for 1s at 997Hz..."))
    });
    let s = t.wait("the profile result", |s| s.contains("CPU: "));
    let line = s
        .lines()
        .find(|l| l.contains(&hot))
        .unwrap_or_else(|| panic!("no hot line:\n{s}"));
    let this: f64 = line
        .trim_start_matches(['┃', ' '])
        .split_whitespace()
        .next()
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no %THIS on the hot line: {line:?}"));
    assert!(this > 0.0, "{line}");
    assert!(s.contains("samples="), "D20 title suffix:\n{s}");

    // q: out, and the shell screen is back.
    t.type_text("q");
    let s = t.wait("the shell", |s| s.contains("BRR_EXIT=0"));
    assert!(s.contains("SHELL_BEFORE_BRR"), "screen restored:\n{s}");
    assert!(
        !s.contains('┃') && !s.contains("CPU%"),
        "TUI left behind:\n{s}"
    );
    drop(load);
}

#[test]
fn program_id_opens_its_drilldown_and_sigterm_restores_the_terminal() {
    if !support::live() {
        return;
    }
    let _s = serial();
    let Some(t) = Tmux::start(80, 24) else {
        return;
    };
    let fx = SocketFilterFixture::load().expect("load socket filter fixture");
    let id = fx.prog.id;
    launch(&t, &format!("top --program-id {id}"));
    t.wait("the drilldown", |s| {
        s.contains(&format!("program {id} {}", SocketFilterFixture::FUNC_NAME))
            && s.contains("sock_filter.c:")
    });
    // Unloading the program is reported in the status line.
    drop(fx);
    t.wait("the unloaded notice", |s| {
        s.contains(&format!("program {id} was unloaded"))
    });
    // Esc goes to the live table.
    t.keys(&["Escape"]);
    t.wait("the live table", |s| s.contains("CPU%"));
    let pid = Command::new("pgrep")
        .args([
            "-n",
            "-f",
            &format!("{} top --program-id {id}", env!("CARGO_BIN_EXE_brr")),
        ])
        .output()
        .expect("pgrep");
    let pid = String::from_utf8_lossy(&pid.stdout).trim().to_string();
    assert!(!pid.is_empty(), "brr process not found");
    Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .expect("kill");
    let s = t.wait("the shell after SIGTERM", |s| s.contains("BRR_EXIT="));
    assert!(s.contains("BRR_EXIT=143"), "{s}");
    assert!(s.contains("SHELL_BEFORE_BRR") && !s.contains("CPU%"), "{s}");
}

#[test]
fn unprivileged_user_fails_before_the_tui_starts() {
    if !support::live() {
        return;
    }
    for args in [&[][..], &["top"][..]] {
        let o = Command::new("setpriv")
            .args(["--reuid", "65534", "--regid", "65534", "--clear-groups"])
            .arg(env!("CARGO_BIN_EXE_brr"))
            .args(args)
            .output()
            .expect("setpriv (util-linux) runs");
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert_eq!(
            String::from_utf8_lossy(&o.stderr),
            "brr: permission denied while trying to enable eBPF runtime statistics; needs CAP_SYS_ADMIN (run brr with sudo)\n"
        );
        assert!(o.stdout.is_empty(), "no terminal escape codes");
    }
}

#[test]
fn without_a_terminal_it_says_so() {
    if !support::live() {
        return;
    }
    let o = Command::new(env!("CARGO_BIN_EXE_brr"))
        .stdin(Stdio::null())
        .output()
        .expect("run brr");
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&o.stderr),
        "brr: the interactive top view needs a terminal; use 'brr top --textmode' for plain output\n"
    );
    assert!(o.stdout.is_empty());
}

/// In 80 columns a program's long full name is cut with `…` so that CPU%,
/// EXECS/s and AVG_NS still show beside it.
#[test]
fn eighty_columns_show_the_numbers_beside_a_long_name() {
    if !support::live() {
        return;
    }
    let _s = serial();
    let Some(t) = Tmux::start(80, 24) else {
        return;
    };
    const SHORT: &str = "brr_tui_long";
    const FULL: &str = "brr_tui_long_function_name_that_a_terminal_of_80_columns_cannot_hold";
    let mut b = ProgBuilder::new();
    b.func(FULL, support::btf::Linkage::Global);
    b.emit(mov64_imm(R0, 0));
    b.emit(exit());
    let prog = load_program(sys::BPF_PROG_TYPE_SOCKET_FILTER, SHORT, &b)
        .expect("load a program with a long name");
    launch(&t, "-d 1");
    t.wait("the table", |s| s.contains("CPU%"));
    t.type_text("/");
    t.type_text(SHORT);
    t.keys(&["Enter"]);
    let s = t.wait("the filtered table", |s| {
        s.contains(&format!("filter '{SHORT}'")) && row_of(s, prog.id).is_some()
    });
    let head = s
        .lines()
        .find(|l| l.contains("NAME"))
        .unwrap_or_else(|| panic!("no header:\n{s}"));
    for col in ["CPU%", "EXECS/s", "AVG_NS"] {
        assert!(head.contains(col), "{col} not shown:\n{s}");
    }
    let row = row_of(&s, prog.id).unwrap_or_default();
    assert!(
        row.iter()
            .any(|c| c.starts_with("brr_tui_long_function") && c.ends_with('…')),
        "{row:?}\n{s}"
    );
    t.type_text("q");
    t.wait("the shell", |s| s.contains("BRR_EXIT=0"));
}

/// A program loaded without BTF or line info, as bpftrace loads them: a
/// loop that calls a helper and does some arithmetic of its own.
fn load_without_line_info() -> LoadedProg {
    let mut b = ProgBuilder::new();
    b.emit(mov64_imm(R6, 0));
    b.emit(mov64_imm(R7, 0));
    let top = b.pc();
    b.emit(call_helper(BPF_FUNC_KTIME_GET_NS));
    b.emit(alu64_reg(BPF_ADD, R6, R0));
    b.emit(alu64_imm(BPF_MUL, R6, 3));
    b.emit(alu64_imm(BPF_XOR, R6, 0x55));
    b.emit(alu64_imm(BPF_ADD, R7, 1));
    let back = b.pc();
    b.emit(jmp_imm(BPF_JLT, R7, 256, (top as i16) - (back as i16) - 1));
    b.emit(mov64_imm(R0, 0));
    b.emit(exit());
    load_program(sys::BPF_PROG_TYPE_SOCKET_FILTER, NOLINES, &b)
        .expect("load a program without line info")
}

const NOLINES: &str = "brr_tui_nolines";

/// The %THIS cell and the code of each table row on the screen (the
/// columns are 6 and 7 cells wide, two spaces apart).
fn drill_rows(screen: &str) -> Vec<(String, String)> {
    screen
        .lines()
        .skip_while(|l| !l.contains("%THIS  SAMPLES  CODE"))
        .skip(1)
        .filter_map(|l| l.strip_prefix('┃'))
        .map(|l| {
            let cells: Vec<char> = l.trim_end_matches('┃').chars().collect();
            let cell = |from: usize, to: usize| -> String {
                let to = to.min(cells.len());
                cells
                    .get(from.min(to)..to)
                    .unwrap_or_default()
                    .iter()
                    .collect()
            };
            (
                cell(0, 6).trim().to_string(),
                cell(17, cells.len()).trim().to_string(),
            )
        })
        .collect()
}

#[test]
fn a_program_without_line_info_expands_its_unmapped_samples() {
    if !support::live() {
        return;
    }
    let _s = serial();
    let Some(t) = Tmux::start(140, 60) else {
        return;
    };
    let prog = load_without_line_info();
    let id = prog.id;
    let load = LoadDriver::start(prog.fd(), 1, 64).expect("drive the program");
    launch(&t, &format!("top --program-id {id} --profile-duration 3"));
    // Source mode shows its instructions, helper calls named.
    t.wait("the instructions with the helper call named", |s| {
        s.contains(&format!("program {id} {NOLINES}"))
            && s.contains(": (85) call bpf_ktime_get_ns#")
    });
    // Esc while profiling cancels the profile and stays.
    t.type_text("p");
    t.wait("the profile's progress", |s| s.contains("; Esc cancels"));
    t.keys(&["Escape"]);
    t.wait("the profile cancelled", |s| {
        s.contains("profile cancelled; Esc again leaves the drilldown")
            && s.contains(&format!("program {id} {NOLINES}"))
    });
    t.type_text("p");
    let direct = "eBPF samples without BTF/JIT source metadata";
    let under = "under-eBPF samples without BPF caller source metadata";
    let s = t.wait("the profile result", |s| {
        s.contains("CPU: ")
            && s.contains(&format!("+ {direct}"))
            && s.contains(&format!("+ {under}"))
    });
    for what in [direct, under] {
        let row = drill_rows(&s)
            .into_iter()
            .find(|r| r.1.ends_with(what))
            .unwrap_or_else(|| panic!("no {what:?} row:\n{s}"));
        assert!(
            row.1.starts_with("+ "),
            "collapsed, expandable: {row:?}\n{s}"
        );
        assert!(row.0.parse::<f64>().is_ok_and(|v| v > 0.0), "{row:?}\n{s}");
    }
    // E opens both: the program's own instructions by JIT offset, and the
    // helper and kernel functions it called.
    // Every sample is on exactly one row: once drawn, the %THIS shown add
    // up to 100.
    let total = |s: &str| -> f64 {
        drill_rows(s)
            .iter()
            .filter_map(|r| r.0.parse::<f64>().ok())
            .sum()
    };
    t.type_text("E");
    let s = t.wait("both rows expanded, every row drawn", |s| {
        s.contains(&format!("- {direct}"))
            && s.contains(&format!("- {under}"))
            && (total(s) - 100.0).abs() < 0.005
    });
    let rows = drill_rows(&s);
    let at = |what: &str| rows.iter().position(|r| r.1.ends_with(what)).unwrap();
    let (d, u) = (at(direct), at(under));
    let native = &rows[d + 1..u];
    assert!(!native.is_empty(), "{s}");
    for r in native {
        assert!(
            r.1.starts_with(&format!("{NOLINES}+0x")) && r.1.contains(": "),
            "{r:?}\n{s}"
        );
    }
    let called: Vec<&(String, String)> = rows[u + 1..]
        .iter()
        .take_while(|r| r.1.starts_with("-> "))
        .collect();
    assert!(!called.is_empty(), "{s}");
    assert!(called.iter().all(|r| !r.0.is_empty()), "{s}");
    t.type_text("q");
    t.wait("the shell", |s| s.contains("BRR_EXIT=0"));
    load.stop().expect("load");
}

/// `C`: a cost capture of the delay's length shows a raw tracepoint the
/// test fires with its dispatch beside its own samples; the header gives
/// the programs' run time as a share of the host.
#[test]
fn cost_key_shows_a_fired_raw_tracepoint_with_its_dispatch() {
    if !support::live() {
        return;
    }
    let _s = serial();
    let Some(t) = Tmux::start(180, 40) else {
        return;
    };
    let fx = support::renamed::RenameFixture::start("brr_tt_cost").expect("raw tp fixture");
    let id = fx.prog.id.to_string();
    launch(&t, "-d 2");
    t.wait("the header's run-time share", |s| {
        s.lines()
            .next()
            .is_some_and(|l| l.contains("programs' run time: ") && l.contains("CPUs"))
    });
    t.type_text("C");
    t.wait("the cost capture's progress", |s| {
        s.contains("Measuring what eBPF costs this host")
    });
    let cells = |s: &str| -> Option<Vec<String>> {
        s.lines().find_map(|l| {
            let cells: Vec<String> = l
                .trim_matches(['│', ' '])
                .split_whitespace()
                .map(String::from)
                .collect();
            (cells.first() == Some(&id)).then_some(cells)
        })
    };
    let s = t.wait("the fixture's cost row", |s| {
        s.contains("eBPF on this host:") && cells(s).is_some()
    });
    let row = cells(&s).unwrap_or_default();
    // ID NAME TYPE RUNS/s PROG% DISP% STATS% CPU% ... HOOK
    assert_eq!(row.get(1).map(String::as_str), Some("brr_tt_cost"), "{s}");
    let disp: f64 = row
        .get(5)
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no DISP% in {row:?}:\n{s}"));
    assert!(
        disp > 0.0,
        "dispatch of a fired raw tracepoint: {row:?}\n{s}"
    );
    assert!(
        row.last().is_some_and(|h| h.contains("task_rename")),
        "{row:?}"
    );
    t.keys(&["Escape"]);
    t.wait("the table again", |s| !s.contains("eBPF on this host:"));
    t.type_text("q");
    t.wait("the shell", |s| s.contains("BRR_EXIT=0"));
    drop(fx);
}
