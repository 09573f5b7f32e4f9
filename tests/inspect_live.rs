//! Live tests of `brr dump`, `brr dump-compare` and `brr top --textmode`
//! against fixture programs loaded by this test (root, real kernel).

// Test tooling: helpers outside #[test] functions fail the test by panicking,
// as the tests themselves do (clippy.toml only exempts #[test] code).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
// Slices of brr's ASCII output at fixed columns; a bad offset fails the test.
#![allow(clippy::string_slice)]

#[path = "support/run.rs"]
mod run;
mod support;

use std::process::Command;

use run::{brr, stderr, stdout};
use support::*;

/// `brr top --textmode -d 0.1 --program-id ID` plus `extra`, with bpftool
/// hidden from PATH unless `bpftool`; returns (activity, inspect) sections.
fn textmode(id: &str, extra: &[&str], bpftool: bool) -> (String, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_brr"));
    if !bpftool {
        cmd.env("PATH", "/nonexistent");
    }
    let out = cmd
        .args(["top", "--textmode", "-d", "0.1", "--program-id", id])
        .args(extra)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    let (a, i) = text.split_once("\n\n").expect(&text);
    (a.to_string(), i.to_string())
}

/// Whether bpftool is runnable; without it the bpftool checks skip, unless
/// BRR_REQUIRE_LIVE=1 (CI installs it).
fn bpftool() -> bool {
    let ok = Command::new("bpftool")
        .arg("version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        if std::env::var(REQUIRE_LIVE_ENV).as_deref() == Ok("1") {
            panic!("{REQUIRE_LIVE_ENV}=1 but bpftool is not installed");
        }
        skip("bpftool check: bpftool not installed");
    }
    ok
}

/// The encoded line record covering each xlated slot, from the kernel's
/// line_info offsets paired (in order) with what the fixture encoded.
fn expected_per_slot(p: &LoadedProg, slots: usize) -> Vec<Option<ExpectedLine>> {
    let recs = sys::prog_line_info(p.fd()).expect("line_info");
    assert_eq!(recs.len(), p.lines.len());
    (0..slots)
        .map(|i| {
            recs.iter()
                .zip(&p.lines)
                .rfind(|(r, _)| r[0] as usize <= i)
                .map(|(_, e)| e.clone())
        })
        .collect()
}

#[test]
fn dump_shows_the_encoded_line_of_every_instruction() {
    if !live() {
        return;
    }
    let fx = SocketFilterFixture::load().expect("load socket filter fixture");
    let id = fx.prog.id.to_string();
    let out = brr(&["dump", &id, "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let doc: serde_json::Value = serde_json::from_str(&stdout(&out)).expect("json");
    let items = doc["items"].as_array().expect("items");
    assert!(items.len() > fx.prog.lines.len());
    let expected = expected_per_slot(&fx.prog, items.len());
    let mut wide = 0;
    for (i, (item, exp)) in items.iter().zip(&expected).enumerate() {
        assert_eq!(item["offset"], i * 8);
        let exp = exp.as_ref().expect("every slot is covered from insn 0");
        assert_eq!(item["file"], exp.file.as_str(), "slot {i}");
        let line = (exp.line != 0).then_some(exp.line);
        assert_eq!(item["line"].as_u64(), line.map(u64::from), "slot {i}");
        let col = (exp.col != 0).then_some(exp.col);
        assert_eq!(item["column"].as_u64(), col.map(u64::from), "slot {i}");
        let text = (!exp.text.is_empty()).then_some(exp.text.as_str());
        assert_eq!(item["source"].as_str(), text, "slot {i}");
        if item["opcode"] == 0x18 {
            wide += 1;
            // The map reference as the kernel rewrote it: src 1, imm = map id.
            assert_eq!(item["src_reg"], 1);
            assert_eq!(item["imm"].as_u64(), Some(fx.map.id as u64));
        }
    }
    assert_eq!(wide, 1, "one ld_imm64 (two slots)");
    assert_eq!(doc["metadata"]["line_info_count"], fx.prog.lines.len());
    assert_eq!(doc["metadata"]["program"]["id"], fx.prog.id);

    // Text: the same lines, verbatim, with the header line first.
    let text = stdout(&brr(&["dump", &id]));
    let mut lines = text.lines();
    assert_eq!(
        lines.next().unwrap(),
        format!(
            "Program {id}: type=socket_filter name={} tag={}",
            fx.prog.name,
            fx.prog.tag_hex()
        )
    );
    assert!(lines
        .next()
        .unwrap()
        .starts_with("OFF     RAW               OP"));
    for ((row, exp), item) in lines.zip(&expected).zip(items) {
        let exp = exp.as_ref().unwrap();
        assert!(row.contains(&exp.file), "{row}");
        if !exp.text.is_empty() {
            assert!(row.contains(exp.text.trim_end()), "{row}");
        }
        // The INSN column, after the original's columns, is JSON's `insn`
        // (`-` for the upper half of an ld_imm64).
        let insn = item["insn"].as_str().unwrap_or("-");
        assert!(row.trim_end().ends_with(insn), "{row} / {insn}");
    }
    // CSV: one row per slot.
    let csv = stdout(&brr(&["dump", &id, "--csv"]));
    assert_eq!(csv.lines().count(), items.len() + 1);
}

/// The INSN column speaks the kernel's notation: every instruction reads
/// as bpftool disassembles it, helper calls and subprograms named.
#[test]
fn dump_instructions_read_as_bpftool_prints_them() {
    if !live() || !bpftool() {
        return;
    }
    let sock = SocketFilterFixture::load().expect("socket filter fixture");
    let sub = SubprogFixture::load().expect("subprogram fixture");
    let helper = HelperFixture::load().expect("helper fixture");
    for id in [sock.prog.id, sub.prog.id, helper.prog.id] {
        let id = id.to_string();
        let out = brr(&["dump", &id, "--json"]);
        assert!(out.status.success(), "{}", stderr(&out));
        let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
        let ours: Vec<String> = doc["items"]
            .as_array()
            .expect("items")
            .iter()
            .filter_map(|i| i["insn"].as_str().map(str::to_string))
            .collect();
        let tool = Command::new("bpftool")
            .args(["-j", "prog", "dump", "xlated", "id", &id])
            .output()
            .expect("bpftool");
        let tool: serde_json::Value = serde_json::from_slice(&tool.stdout).expect("bpftool json");
        // bpftool writes `(85) call ...`: the opcode, then the text.
        let theirs: Vec<String> = tool
            .as_array()
            .expect("bpftool list")
            .iter()
            .map(|e| {
                let d = e["disasm"].as_str().expect("disasm");
                d.split_once(") ").map_or(d, |(_, t)| t).to_string()
            })
            .collect();
        assert_eq!(ours, theirs, "program {id}");
        assert_eq!(doc["metadata"]["warnings"], serde_json::json!([]));
    }
    let text = stdout(&brr(&["dump", &helper.prog.id.to_string()]));
    assert!(text.lines().nth(1).unwrap().trim_end().ends_with("INSN"));
    assert!(text.contains("  call bpf_ktime_get_ns#"), "{text}");
    let csv = stdout(&brr(&["dump", &helper.prog.id.to_string(), "--csv"]));
    assert!(csv.lines().next().unwrap().ends_with(",source,insn"));
    assert!(csv.lines().nth(1).unwrap().ends_with(",r6 = 0"), "{csv}");
}

#[test]
fn dump_of_a_missing_program_is_exit_1() {
    if !live() {
        return;
    }
    // IDs past u32 are usage errors (tests/cli.rs), not missing programs.
    for args in [["dump", "4294967295"], ["dump-compare", "4294967295"]] {
        let out = brr(&args);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        assert_eq!(
            stderr(&out).trim_end(),
            format!("brr: no eBPF program with id {}", args[1])
        );
        assert!(out.stdout.is_empty());
    }
}

#[test]
fn dump_devmode_adds_context_from_the_source_tree() {
    if !live() {
        return;
    }
    let fx = SocketFilterFixture::load().expect("load");
    let dir = std::env::temp_dir().join(format!("brr-inspect-live-{}", std::process::id()));
    let sub = dir.join("brr-fixtures");
    std::fs::create_dir_all(&sub).unwrap();
    // Lines 12..17 as encoded, an extra line 18 `}` for the tail, and a
    // changed line 16 to provoke one mismatch.
    let mut file = vec![String::new(); 11];
    file.push("int f(struct __sk_buff *skb) {".into());
    for l in &fx.prog.lines {
        if l.line >= 12 {
            let n = l.line as usize;
            file.resize(file.len().max(n), String::new());
            file[n - 1] = if l.line == 16 {
                "    *val += 2;".into()
            } else {
                l.text.clone()
            };
        }
    }
    file.push("}".into());
    std::fs::write(sub.join("sock_filter.c"), file.join("\n")).unwrap();
    let id = fx.prog.id.to_string();
    let arg = format!("--devmode={}", dir.display());
    let out = brr(&["dump", &id, &arg]);
    let _ = std::fs::remove_dir_all(&dir);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    let ctx = text.split_once("Source context:\n").expect(&text).1;
    assert!(
        text.contains("Warning: 1 BTF source snippet(s) differ from resolved files.\nsource mismatch file=sock_filter.c line=16 resolved="),
        "{text}"
    );
    let kinds: Vec<(&str, &str)> = ctx
        .lines()
        .skip(1)
        .map(|l| {
            let mut f = l.split_whitespace();
            (f.next().unwrap(), f.nth(1).unwrap())
        })
        .collect();
    assert_eq!(kinds.first(), Some(&("mapped", "12")));
    assert_eq!(kinds.last(), Some(&("context", "18")), "{ctx}");
    // The optional DIR never swallows the program ID: `--devmode ID` means
    // the current directory (which holds no fixture sources) for program ID.
    let out = brr(&["dump", "--devmode", &id]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).starts_with("brr: devmode did not resolve any source files"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn dump_compare_agrees_with_bpftool() {
    if !live() || !bpftool() {
        return;
    }
    let sock = SocketFilterFixture::load().expect("load");
    let hot = HotFixture::load().expect("load");
    let sub = SubprogFixture::load().expect("load");
    let nobtf = NoBtfFixture::load().expect("load");
    for id in [sock.prog.id, hot.prog.id, sub.prog.id, nobtf.prog.id] {
        let id = id.to_string();
        let out = brr(&["dump-compare", &id]);
        let text = stdout(&out);
        assert_eq!(out.status.code(), Some(0), "{text}{}", stderr(&out));
        assert!(text.starts_with(&format!("PASS program={id} ")), "{text}");
    }
    let out = brr(&["dump-compare", &sock.prog.id.to_string(), "--csv"]);
    let row = stdout(&out).lines().nth(1).unwrap().to_string();
    let f: Vec<&str> = row.split(',').collect();
    assert_eq!(f[0], sock.prog.id.to_string());
    assert_eq!(f[1], "true", "{row}");
    assert_eq!(f[5], "1", "one ld_imm64 second slot: {row}");
    assert_eq!(f[6], sock.prog.lines.len().to_string(), "{row}");
    assert_eq!(&f[7..], ["0", "0", "0"], "{row}");
}

/// Source lines with backslashes, as in execsnoop's `if (c == '\0')`:
/// bpftool's JSON writes a backslash as `\n`, which must not fail a
/// correct mapping.
#[test]
fn dump_compare_sees_through_bpftools_backslash_escaping() {
    if !live() || !bpftool() {
        return;
    }
    let mut b = ProgBuilder::new();
    b.func("brr_fx_escapes_main", support::btf::Linkage::Global);
    b.line("/src/brr-fixtures/escapes.c", 10, 5, "    if (c == '\\0')");
    b.emit(support::insn::mov64_imm(support::insn::R0, 0));
    b.line(
        "/src/brr-fixtures/escapes.c",
        11,
        9,
        "        return \"a\\tb\";",
    );
    b.emit(support::insn::exit());
    let p = load_program(sys::BPF_PROG_TYPE_SOCKET_FILTER, "brr_fx_escapes", &b).expect("load");
    let id = p.id.to_string();
    // What bpftool itself says about the first line.
    let raw = Command::new("bpftool")
        .args(["-j", "prog", "dump", "xlated", "id", &id, "linum"])
        .output()
        .expect("bpftool");
    let raw = String::from_utf8_lossy(&raw.stdout).into_owned();
    let quirk = raw.contains(r"'\n0'");
    let out = brr(&["dump-compare", &id]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{text}{}\n{raw}", stderr(&out));
    assert!(text.starts_with(&format!("PASS program={id} ")), "{text}");
    if quirk {
        assert!(
            text.contains("\nnote: 2 source lines match only with bpftool's JSON escaping undone"),
            "{text}"
        );
    }
    let json = brr(&["dump-compare", &id, "--json"]);
    let doc: serde_json::Value = serde_json::from_slice(&json.stdout).expect("json");
    assert_eq!(doc["items"][0]["passed"], true);
    assert_eq!(
        doc["items"][0]["bpftool_escape_quirk_rows"],
        if quirk { 2 } else { 0 }
    );
}

#[test]
fn textmode_inspects_a_named_program() {
    if !live() {
        return;
    }
    let fx = SocketFilterFixture::load().expect("load");
    let id = fx.prog.id.to_string();
    let out = brr(&[
        "top",
        "--textmode",
        "-d",
        "0.2",
        "--limit",
        "0",
        "--program-id",
        &id,
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    let (activity, inspect) = text.split_once("\n\n").expect(&text);
    assert!(
        activity.starts_with("BRR ACTIVITY duration=0.2\n"),
        "{activity}"
    );
    assert!(activity
        .lines()
        .any(|l| l.split_whitespace().next() == Some(id.as_str())));
    let mut lines = inspect.lines();
    assert_eq!(
        lines.next().unwrap(),
        format!(
            "BRR INSPECT program={id} name={} mode=source profiled=no instructions=internal",
            fx.func_name
        )
    );
    assert!(lines.next().unwrap().starts_with("%THIS  SAMPLES  CODE"));
    let codes: Vec<String> = lines.map(|l| l[16..].trim_end().to_string()).collect();
    let want: Vec<String> = fx
        .prog
        .lines
        .iter()
        .map(|l| {
            let line = if l.line == 0 {
                "-".to_string()
            } else {
                l.line.to_string()
            };
            let text = if l.text.is_empty() {
                "-"
            } else {
                l.text.as_str()
            };
            format!("sock_filter.c:{line}: {text}")
        })
        .collect();
    assert_eq!(codes.len(), want.len(), "{inspect}");
    for (c, w) in codes.iter().zip(&want) {
        assert!(c.starts_with(w.trim_end()), "{c:?} vs {w:?}");
    }
    // A missing program fails before anything is printed.
    let out = brr(&["top", "--textmode", "--program-id", "4294967295"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(stderr(&out), "brr: no eBPF program with id 4294967295\n");
    assert!(out.stdout.is_empty());
}

/// The `N: (op) text` instruction rows of a textmode inspect section (or
/// of `bpftool prog dump xlated`), as (index, opcode, text).
fn insn_rows(text: &str) -> Vec<(usize, String, String)> {
    text.lines()
        .filter_map(|l| {
            let (n, rest) = l.trim().split_once(": (")?;
            let (op, t) = rest.split_once(") ")?;
            // Mapping markers (` [unmapped]`) are brr's, not the text's.
            let mut t = t.trim_end();
            while let Some((rest, m)) = t.rsplit_once(" [") {
                if !m.ends_with(']')
                    || !m
                        .trim_end_matches(']')
                        .chars()
                        .all(|c| c.is_ascii_lowercase() || c == '-')
                {
                    break;
                }
                t = rest;
            }
            Some((n.parse().ok()?, op.to_string(), t.to_string()))
        })
        .collect()
}

#[test]
fn mixed_mode_keeps_instructions_aligned_after_ld_imm64() {
    if !live() {
        return;
    }
    let fx = SocketFilterFixture::load().expect("load");
    let id = fx.prog.id.to_string();
    // brr's own disassembly: nothing of bpftool is needed.
    let (_, inspect) = textmode(&id, &["--inspect-mode", "mixed"], false);
    let head = inspect.lines().next().unwrap();
    assert!(
        head.ends_with("mode=mixed profiled=no instructions=internal"),
        "{head}"
    );
    let rows = insn_rows(&inspect);
    assert!(!rows.is_empty(), "{inspect}");
    // Instruction indexes strictly increase; the ld_imm64's upper half has
    // no row, so exactly one step of 2, right after the `(18)` row.
    let idx: Vec<usize> = rows.iter().map(|r| r.0).collect();
    assert!(idx.windows(2).all(|w| w[1] > w[0]), "{idx:?}");
    let twos: Vec<usize> = (1..idx.len())
        .filter(|&i| idx[i] - idx[i - 1] == 2)
        .collect();
    assert_eq!(twos.len(), 1, "{inspect}");
    assert_eq!(rows[twos[0] - 1].1, "18", "{inspect}");
    assert!(rows[twos[0] - 1].2.starts_with("r1 = map[id:"), "{inspect}");
}

#[test]
fn root_output_flags_are_rejected_for_top() {
    for args in [&["--csv", "top"][..], &["--pretty", "top"][..]] {
        let out = brr(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(stderr(&out).ends_with(
            "brr: error: --json, --csv, and --pretty are not supported by top without --textmode\n"
        ));
    }
}

#[test]
fn mixed_view_disassembly_matches_bpftool() {
    if !live() || !bpftool() {
        return;
    }
    let sock = SocketFilterFixture::load().expect("load");
    let hot = HotFixture::load().expect("load");
    let helper = HelperFixture::load().expect("load");
    let nobtf = NoBtfFixture::load().expect("load");
    let sub = SubprogFixture::load().expect("load");
    for id in [
        sock.prog.id,
        hot.prog.id,
        helper.prog.id,
        nobtf.prog.id,
        sub.prog.id,
    ] {
        let id = id.to_string();
        // brr with bpftool out of reach, against bpftool's own listing.
        let (_, inspect) = textmode(&id, &["--limit", "1", "--inspect-mode", "mixed"], false);
        let ours = insn_rows(&inspect);
        let out = Command::new("bpftool")
            .args(["prog", "dump", "xlated", "id", &id])
            .output()
            .expect("run bpftool");
        assert!(out.status.success(), "{}", stderr(&out));
        let theirs = insn_rows(&stdout(&out));
        assert!(!ours.is_empty());
        assert_eq!(ours.len(), theirs.len(), "program {id}");
        if let Some((a, b)) = ours.iter().zip(&theirs).find(|(a, b)| a != b) {
            panic!("program {id}: brr {a:?} vs bpftool {b:?}");
        }
    }
}

#[test]
fn closed_stdout_is_quiet() {
    if !live() {
        return;
    }
    let fx = HotFixture::load().expect("load");
    let id = fx.prog.id.to_string();
    support::assert_quiet_on_closed_stdout(env!("CARGO_BIN_EXE_brr"), &["dump", &id]);
    support::assert_quiet_on_closed_stdout(
        env!("CARGO_BIN_EXE_brr"),
        &["dump", &id, "--json", "--pretty"],
    );
}

/// (%THIS basis points, CODE) of each inspect row; columns are found from
/// the header line.
fn inspect_rows(inspect: &str) -> Vec<(u64, String)> {
    let mut lines = inspect.lines().skip_while(|l| !l.starts_with("%THIS"));
    let header = lines.next().expect("table header");
    let samples_at = header.find("SAMPLES").unwrap();
    let code_at = header.find("CODE").unwrap();
    lines
        .map(|l| {
            let bp = l
                .get(..samples_at)
                .and_then(|c| c.trim().split_once('.'))
                .and_then(|(a, b)| Some(a.parse::<u64>().ok()? * 100 + b.parse::<u64>().ok()?))
                .unwrap_or(0);
            (bp, l.get(code_at..).unwrap_or("").trim_end().to_string())
        })
        .collect()
}

#[test]
fn profile_top_puts_the_hot_line_first() {
    if !live() {
        return;
    }
    let fx = HotFixture::load().expect("load");
    let load = fx.spawn_load(std::time::Duration::from_secs(4));
    let id = fx.prog.id.to_string();
    let (activity, inspect) = textmode(
        &id,
        &["--profile-top", "--profile-duration", "1.5", "--limit", "5"],
        false,
    );
    let _ = load.join();
    assert!(activity.contains(&id), "{activity}");
    assert!(
        inspect.starts_with(&format!(
            "BRR INSPECT program={id} name={} mode=source profiled=yes instructions=internal\nCPU: ",
            fx.func_name
        )),
        "{inspect}"
    );
    let rows = inspect_rows(&inspect);
    let total: u64 = rows.iter().map(|r| r.0).sum();
    assert_eq!(total, 10_000, "{inspect}");
    let hottest = rows.iter().max_by_key(|r| r.0).unwrap();
    assert!(hottest.0 > 0, "{inspect}");
    assert!(
        hottest
            .1
            .starts_with(&format!("hot.c:{}: {}", fx.hot_line, fx.hot_text)),
        "{inspect}"
    );
}

#[test]
fn profile_top_shows_helper_time_under_its_line() {
    if !live() {
        return;
    }
    let fx = HelperFixture::load().expect("load");
    let load = fx.spawn_load(std::time::Duration::from_secs(4));
    let id = fx.prog.id.to_string();
    let args = [
        "--profile-top",
        "--profile-duration",
        "1.5",
        "--kernel-samples",
    ];
    let (_, inspect) = textmode(&id, &args, false);
    let mut collapsed_args = args.to_vec();
    collapsed_args.push("--collapse-samples");
    let (_, collapsed) = textmode(&id, &collapsed_args, false);
    let _ = load.join();
    let rows = inspect_rows(&inspect);
    assert_eq!(rows.iter().map(|r| r.0).sum::<u64>(), 10_000, "{inspect}");
    let parent = rows
        .iter()
        .position(|r| r.1.starts_with(&format!("- helper.c:{}: ", fx.hot_line)))
        .unwrap_or_else(|| panic!("{inspect}"));
    assert!(rows[parent + 1].1.starts_with("  -> "), "{inspect}");
    assert!(inspect.contains(" under eBPF + "), "{inspect}");
    let rows = inspect_rows(&collapsed);
    assert_eq!(rows.iter().map(|r| r.0).sum::<u64>(), 10_000, "{collapsed}");
    assert!(!collapsed.contains("  -> "), "{collapsed}");
    assert!(
        rows.iter()
            .any(|r| r.0 > 0 && r.1.starts_with(&format!("+ helper.c:{}: ", fx.hot_line))),
        "{collapsed}"
    );
}
