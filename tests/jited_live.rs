//! Live tests of `brr dump --jited`: the native code of fixture programs
//! this test loads, against GNU objdump's disassembly of the same bytes
//! (read with the test's own bpf() request), the kernel's line info and
//! /proc/kallsyms.

// Test tooling: helpers outside #[test] functions fail the test by panicking.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
// Slices of brr's ASCII output at known positions; a bad one fails the test.
#![allow(clippy::string_slice)]

#[path = "support/run.rs"]
mod run;
mod support;

use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};

use run::{brr, brr_as_nobody, stderr, stdout};
use serde_json::Value;
use support::*;

/// Whether GNU objdump runs; without it the test skips unless
/// BRR_REQUIRE_LIVE=1 (binutils comes with gcc).
fn objdump_available() -> bool {
    let ok = Command::new("objdump")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        if std::env::var(REQUIRE_LIVE_ENV).as_deref() == Ok("1") {
            panic!("{REQUIRE_LIVE_ENV}=1 but objdump (binutils) is not installed");
        }
        skip("objdump not installed");
    }
    ok
}

/// One instruction as objdump prints it.
#[derive(Debug)]
struct ObjInsn {
    addr: u64,
    bytes: String,
    mnemonic: String,
    /// The whole instruction, operands included.
    text: String,
    /// The destination of a direct call or jump.
    dest: Option<u64>,
}

/// Prefixes objdump and brr both print before the mnemonic.
const PREFIXES: &[&str] = &[
    "lock", "rep", "repz", "repe", "repnz", "repne", "bnd", "notrack", "cs", "ds", "data16",
];

/// Mnemonics objdump spells differently from brr (iced-x86): objdump names
/// the 64-bit-immediate `mov` `movabs`; everything else is the same word.
const ALIASES: &[(&str, &str)] = &[("movabs", "mov")];

/// The mnemonic (with its prefixes) of an instruction text, in brr's
/// spelling.
fn mnemonic(text: &str) -> String {
    let mut words = Vec::new();
    for w in text.split_whitespace() {
        let w = w.to_ascii_lowercase();
        let prefix = PREFIXES.contains(&w.as_str());
        let w = ALIASES
            .iter()
            .find(|(from, _)| *from == w)
            .map_or(w.clone(), |(_, to)| to.to_string());
        words.push(w);
        if !prefix {
            break;
        }
    }
    words.join(" ")
}

/// Disassemble `code` with `objdump -D -b binary -mi386:x86-64 -M intel`,
/// An instruction's whole text in one spelling, for comparing brr's with
/// objdump's: lower case, no space after commas, objdump's `*1` scale and
/// `+0x0` displacement dropped, `movabs` read as `mov`, a 64-bit immediate
/// with its top bit set read as the negative number iced-x86 prints, and
/// objdump's three-operand `imul r, r, imm` in iced-x86's two-operand form.
fn normalise(text: &str) -> String {
    let text = text.trim().to_ascii_lowercase();
    let (head, ops) = match text.split_once(char::is_whitespace) {
        Some((m, rest)) => (m.to_string(), rest.trim().replace(", ", ",")),
        None => (text.clone(), String::new()),
    };
    let head = ALIASES
        .iter()
        .find(|(from, _)| *from == head)
        .map_or(head.clone(), |(_, to)| to.to_string());
    let ops = ops
        .replace("*1]", "]")
        .replace("*1+", "+")
        .replace("+0x0]", "]");
    let mut ops: Vec<String> = ops
        .split(',')
        .map(|op| match op.strip_prefix("0x") {
            Some(h) if h.len() == 16 => match u64::from_str_radix(h, 16) {
                Ok(v) if v >> 63 == 1 => format!("-{:#x}", v.wrapping_neg()),
                _ => op.to_string(),
            },
            _ => op.to_string(),
        })
        .collect();
    if head == "imul" && ops.len() == 3 && ops[0] == ops[1] {
        ops.remove(1);
    }
    let ops = ops.join(",");
    if ops.is_empty() {
        head
    } else {
        format!("{head} {ops}")
    }
}

/// The whole text of an instruction that does not leave for a named
/// target is objdump's, operands included (a call or jump's destination is
/// compared by `check_target`, as brr prints it by name).
fn same_operands(o: &Value, t: &ObjInsn, what: &str) {
    if !o["target"].is_null() {
        return;
    }
    assert_eq!(
        normalise(o["asm"].as_str().unwrap()),
        normalise(&t.text),
        "{what}"
    );
}

#[test]
fn normalise_reads_objdumps_spelling_as_brrs() {
    for (brr, objdump) in [
        (
            "nop dword ptr [rax+rax]",
            "nop    DWORD PTR [rax+rax*1+0x0]",
        ),
        ("mov rbp, rsp", "mov    rbp,rsp"),
        ("imul rbx, 0x1f", "imul   rbx,rbx,0x1f"),
        ("add rsi, -0x4", "add    rsi,0xfffffffffffffffc"),
        (
            "mov rdi, 0xffff888100a2b000",
            "movabs rdi,0xffff888100a2b000",
        ),
        ("leave", "leave"),
    ] {
        assert_eq!(normalise(brr), normalise(objdump), "{brr} vs {objdump}");
    }
    // ...and still tells different instructions apart.
    for (brr, objdump) in [
        ("mov rbp, rsp", "mov    rsp,rbp"),
        ("add rsi, 0x4", "add    rsi,0xfffffffffffffffc"),
        ("imul rbx, 0x1f", "imul   rbx,rax,0x1f"),
        (
            "mov dword ptr [rbp-8], eax",
            "mov    QWORD PTR [rbp-0x8],rax",
        ),
    ] {
        assert_ne!(normalise(brr), normalise(objdump), "{brr} vs {objdump}");
    }
}

/// addresses starting at `vma`.
fn objdump(code: &[u8], vma: u64) -> Vec<ObjInsn> {
    static N: AtomicU32 = AtomicU32::new(0);
    let path = std::env::temp_dir().join(format!(
        "brr-jit-{}-{}.bin",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::write(&path, code).unwrap();
    let out = Command::new("objdump")
        .args(["-D", "-b", "binary", "-mi386:x86-64", "-M", "intel"])
        .arg("--insn-width=16")
        .arg(format!("--adjust-vma={vma:#x}"))
        .arg(&path)
        .output()
        .expect("run objdump");
    std::fs::remove_file(&path).unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    stdout(&out)
        .lines()
        .filter_map(|l| {
            let mut f = l.split('\t');
            let addr = f.next()?.trim().strip_suffix(':')?;
            let addr = u64::from_str_radix(addr, 16).ok()?;
            let bytes = f.next()?.trim().to_string();
            let text = f.next()?.trim().to_string();
            let m = mnemonic(&text);
            let branch = m.starts_with('j') || m.ends_with("call");
            let dest = text
                .split_whitespace()
                .nth(m.split_whitespace().count())
                .and_then(|op| op.strip_prefix("0x"))
                .filter(|_| branch)
                .and_then(|h| u64::from_str_radix(h, 16).ok());
            Some(ObjInsn {
                addr,
                bytes,
                mnemonic: m,
                text,
                dest,
            })
        })
        .collect()
}

/// /proc/kallsyms as (address, name), by address.
fn kallsyms() -> Vec<(u64, String)> {
    let text = std::fs::read_to_string("/proc/kallsyms").unwrap();
    let mut syms: Vec<(u64, String)> = text
        .lines()
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            let a = u64::from_str_radix(f.next()?, 16).ok()?;
            let name = f.nth(1)?.to_string();
            (a != 0).then_some((a, name))
        })
        .collect();
    syms.sort_by_key(|(a, _)| *a);
    syms
}

/// The names kallsyms gives `dest`, each with `+0x<off>` when `dest` is
/// past the symbol's start: every alias at the greatest start at or below.
fn symbols_at(syms: &[(u64, String)], dest: u64) -> Vec<String> {
    let i = syms.partition_point(|(a, _)| *a <= dest);
    let Some((start, _)) = i.checked_sub(1).map(|i| &syms[i]) else {
        return vec![];
    };
    let first = syms.partition_point(|(a, _)| a < start);
    syms[first..i]
        .iter()
        .map(|(a, n)| {
            if dest == *a {
                n.clone()
            } else {
                format!("{n}+{:#x}", dest - a)
            }
        })
        .collect()
}

/// What the test checked, for the assertions that the fixture exercised
/// each kind of destination.
#[derive(Debug, Default)]
struct Seen {
    kernel_calls: Vec<String>,
    own_calls: Vec<String>,
    backward_branches: usize,
    lines: usize,
}

/// Compare `brr dump ID --jited --json` with objdump, kallsyms and the
/// kernel's line info for `prog`; with `forms`, also the plain JSON
/// document, the text and the CSV.
fn check_program(prog: &LoadedProg, syms: &[(u64, String)], forms: bool) -> Seen {
    let id = prog.id.to_string();
    let out = brr(&["dump", &id, "--jited", "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let raw = stdout(&out);
    let doc: Value = serde_json::from_str(&raw).unwrap();
    if forms {
        // The dump document is unchanged; one key is appended at its end.
        let cut = raw.rfind(",\"jited_functions\":").unwrap();
        let plain = brr(&["dump", &id, "--json"]);
        assert_eq!(format!("{}}}", &raw[..cut]), stdout(&plain).trim_end());
    }
    assert_eq!(doc.as_object().unwrap().len(), 4);
    let funcs = doc["jited_functions"].as_array().unwrap();

    let jit = sys::prog_jited(prog.fd()).unwrap();
    assert_eq!(funcs.len(), jit.ksyms.len(), "one entry per jited_ksyms");
    assert_eq!(jit.line_info.len(), prog.lines.len());
    let mut seen = Seen::default();
    let mut at = 0usize;
    let mut all_bytes = Vec::new();
    for (i, f) in funcs.iter().enumerate() {
        let (start, len) = (jit.ksyms[i], jit.func_lens[i] as usize);
        assert_eq!(
            f["name"],
            prog.funcs[i].name.as_str(),
            "BTF name, ksyms order"
        );
        assert_eq!(f["address"].as_u64(), Some(start));
        assert_eq!(f["length"].as_u64(), Some(len as u64));
        let code = &jit.bytes[at..at + len];
        at += len;
        let theirs = objdump(code, start);
        let ours = f["insns"].as_array().unwrap();
        assert_eq!(ours.len(), theirs.len(), "{}: instruction count", f["name"]);
        for (o, t) in ours.iter().zip(&theirs) {
            let off = o["offset"].as_u64().unwrap();
            let what = format!("{} +{off:#x}: {o} vs {t:?}", f["name"]);
            assert_eq!(start + off, t.addr, "{what}");
            assert_eq!(o["bytes"], t.bytes.as_str(), "{what}");
            assert_eq!(o["length"].as_u64().unwrap() * 3 - 1, t.bytes.len() as u64);
            assert_eq!(mnemonic(o["asm"].as_str().unwrap()), t.mnemonic, "{what}");
            same_operands(o, t, &what);
            all_bytes.push(o["bytes"].as_str().unwrap().to_string());
            check_target(o, t, start, len as u64, prog, &jit, syms, &mut seen);
            check_line(o, (start, start + off), prog, &jit, &mut seen);
        }
    }
    assert_eq!(at, jit.bytes.len(), "the functions cover the image");
    let hex: Vec<String> = jit.bytes.iter().map(|b| format!("{b:02x}")).collect();
    assert_eq!(
        all_bytes.join(" "),
        hex.join(" "),
        "every byte, once, in order"
    );
    if forms {
        check_text_and_csv(&id, funcs);
    }
    seen
}

#[allow(clippy::too_many_arguments)]
fn check_target(
    o: &Value,
    t: &ObjInsn,
    start: u64,
    len: u64,
    prog: &LoadedProg,
    jit: &sys::JitedImage,
    syms: &[(u64, String)],
    seen: &mut Seen,
) {
    let target = o["target"].as_str();
    let Some(dest) = t.dest else {
        assert_eq!(target, None, "{o}: no direct destination");
        return;
    };
    let target = target.unwrap_or_else(|| panic!("{o}: no target for {t:?}"));
    let asm = o["asm"].as_str().unwrap();
    assert!(asm.ends_with(target), "{asm} names {target}");
    if (start..start + len).contains(&dest) {
        assert_eq!(target, format!("+{:#x}", dest - start), "{o}");
        if dest <= t.addr {
            seen.backward_branches += 1;
        }
    } else if let Some(i) = jit.ksyms.iter().position(|&k| k == dest) {
        assert_eq!(target, prog.funcs[i].name, "call of a subprogram: {o}");
        seen.own_calls.push(target.to_string());
    } else {
        let names = symbols_at(syms, dest);
        assert!(
            names.iter().any(|n| n == target),
            "{o}: kallsyms has {names:?} at {dest:#x}"
        );
        seen.kernel_calls.push(target.to_string());
    }
}

/// `line`, `file` and `xlated_offset` of the line record with the greatest
/// JIT address at or below the instruction's (the last such in kernel
/// order), paired by index with what the fixture encoded.
fn check_line(
    o: &Value,
    (start, addr): (u64, u64),
    prog: &LoadedProg,
    jit: &sys::JitedImage,
    seen: &mut Seen,
) {
    // Records of the same function only: `start` is the function's.
    let best = jit
        .jited_line_info
        .iter()
        .enumerate()
        .filter(|(_, &a)| a >= start && a <= addr)
        .max_by_key(|(i, &a)| (a, *i))
        .map(|(i, _)| i);
    let Some(i) = best else {
        assert_eq!(o["line"], Value::Null, "{o}");
        return;
    };
    let exp = &prog.lines[i];
    let line = (exp.line != 0).then_some(u64::from(exp.line));
    assert_eq!(o["line"].as_u64(), line, "{o}");
    assert_eq!(o["file"], exp.file.as_str(), "{o}");
    assert_eq!(
        o["xlated_offset"].as_u64(),
        Some(u64::from(jit.line_info[i][0]) * 8),
        "{o}"
    );
    seen.lines += 1;
}

/// The text and CSV forms list the same instructions as the JSON.
fn check_text_and_csv(id: &str, funcs: &[Value]) {
    let text = stdout(&brr(&["dump", id, "--jited"]));
    let rows: Vec<(String, String)> = text
        .lines()
        .filter(|l| l.trim_start().starts_with("+0x"))
        .map(|l| {
            let (off, rest) = l.trim_start().split_once("  ").unwrap();
            (off.to_string(), rest.trim().to_string())
        })
        .collect();
    let insns: Vec<&Value> = funcs
        .iter()
        .flat_map(|f| f["insns"].as_array().unwrap())
        .collect();
    assert_eq!(rows.len(), insns.len());
    for ((off, rest), i) in rows.iter().zip(&insns) {
        assert_eq!(*off, format!("+{:#x}", i["offset"].as_u64().unwrap()));
        let bytes = i["bytes"].as_str().unwrap();
        let asm = i["asm"].as_str().unwrap();
        assert!(rest.starts_with(bytes), "{rest} vs {i}");
        assert!(
            rest[bytes.len()..].trim_start().starts_with(asm),
            "{rest} vs {i}"
        );
    }
    for f in funcs {
        let head = format!(
            "{} at {:#x}, {} bytes:",
            f["name"].as_str().unwrap(),
            f["address"].as_u64().unwrap(),
            f["length"]
        );
        assert!(text.lines().any(|l| l == head), "{head}\n{text}");
    }
    let csv = stdout(&brr(&["dump", id, "--jited", "--csv"]));
    let mut lines = csv.lines();
    assert_eq!(
        lines.next().unwrap(),
        "program_id,program_name,function,function_address,offset,length,bytes,asm,target,file,line,xlated_offset"
    );
    let records: Vec<Vec<String>> = lines.map(csv_fields).collect();
    assert_eq!(records.len(), insns.len());
    for (r, i) in records.iter().zip(&insns) {
        assert_eq!(r[0], id);
        assert_eq!(r[4], i["offset"].to_string());
        assert_eq!(r[6], i["bytes"].as_str().unwrap());
        assert_eq!(r[7], i["asm"].as_str().unwrap());
        assert_eq!(r[8], i["target"].as_str().unwrap_or(""));
        assert_eq!(
            r[10],
            i["line"]
                .as_u64()
                .map(|l| l.to_string())
                .unwrap_or_default()
        );
    }
}

#[test]
fn native_code_matches_objdump_kallsyms_and_line_info() {
    if !live() || !objdump_available() {
        return;
    }
    let jit = JitFixture::load().expect("load the JIT fixture");
    let sock = SocketFilterFixture::load().expect("load the socket filter fixture");
    let sub = SubprogFixture::load().expect("load the subprogram fixture");
    let helper = HelperFixture::load().expect("load the helper fixture");
    let syms = kallsyms();

    let seen = check_program(&jit.prog, &syms, true);
    // The fixture calls two helpers and the kernel's hash lookup, calls its
    // subprogram, and loops.
    for want in [
        "bpf_user_rnd_u32",
        "__htab_map_lookup_elem",
        "bpf_ktime_get_ns",
    ] {
        assert!(
            seen.kernel_calls.iter().any(|c| c == want),
            "{want} not among {:?}",
            seen.kernel_calls
        );
    }
    assert_eq!(seen.own_calls, [JitFixture::SUB_FUNC]);
    assert!(seen.backward_branches >= 1, "{seen:?}");
    assert!(seen.lines > 0);

    let seen = check_program(&sock.prog, &syms, false);
    assert!(seen.lines > 0);
    let seen = check_program(&sub.prog, &syms, true);
    assert_eq!(seen.own_calls, [SubprogFixture::SUB_FUNC]);
    assert!(seen.lines > 0, "{seen:?}");
    let seen = check_program(&helper.prog, &syms, false);
    assert!(seen.lines > 0, "{seen:?}");
    let clock = seen
        .kernel_calls
        .iter()
        .filter(|c| *c == "bpf_ktime_get_ns")
        .count();
    assert_eq!(clock, HelperFixture::CALLS);
}

#[test]
fn text_puts_each_line_record_above_its_instructions() {
    if !live() {
        return;
    }
    let fx = JitFixture::load().expect("load the JIT fixture");
    let out = brr(&["dump", &fx.prog.id.to_string(), "--jited"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    let mut lines = text.lines();
    assert_eq!(
        lines.next().unwrap(),
        format!(
            "Program {}: type=socket_filter name={} tag={}",
            fx.prog.id,
            JitFixture::PROG_NAME,
            fx.prog.tag_hex()
        )
    );
    assert!(lines
        .next()
        .unwrap()
        .starts_with("JIT image: x86_64, 2 functions, "));
    // Every encoded line that produced code heads its instructions, in
    // address order; the loop's line 55 has two records, so appears twice.
    let headings: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with(JitFixture::FILE))
        .collect();
    let expected: Vec<String> = fx
        .prog
        .lines
        .iter()
        .map(|l| format!("{}:{}  {}", l.file, l.line, l.text.trim()))
        .collect();
    assert_eq!(headings, expected);
    // The call of the subprogram is listed under its source line.
    let call = text
        .lines()
        .skip_while(|l| !l.contains("acc += brr_fx_jit_clock_sub();"))
        .find(|l| l.contains("call "))
        .unwrap();
    assert!(
        call.ends_with(&format!("call {}", JitFixture::SUB_FUNC)),
        "{call}"
    );
}

#[test]
fn withheld_code_is_a_permission_error() {
    if !live() {
        return;
    }
    let fx = SocketFilterFixture::load().expect("load socket filter fixture");
    let id = fx.prog.id.to_string();
    // CAP_SYS_ADMIN without CAP_SYSLOG: the kernel shows JIT code only when
    // kernel addresses are visible to everyone (kptr_restrict 0 and
    // perf_event_paranoid <= 1).
    let sysctl = |name: &str| -> i64 {
        std::fs::read_to_string(format!("/proc/sys/kernel/{name}"))
            .unwrap()
            .trim()
            .parse()
            .unwrap()
    };
    let visible = sysctl("kptr_restrict") == 0 && sysctl("perf_event_paranoid") <= 1;
    let caps = "-all,+sys_admin";
    let o = brr_as_nobody(caps, &["dump", &id, "--jited"]);
    if visible {
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        skip(
            "kernel addresses are visible to everyone here; the permission error is not reachable",
        );
        return;
    }
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let msg = stderr(&o);
    assert!(
        msg.starts_with(&format!(
            "brr: permission denied while trying to read the JIT code of program {id}"
        )),
        "{msg}"
    );
    assert_eq!(msg.lines().count(), 1, "{msg}");
    assert!(o.stdout.is_empty());
    // Without --jited the same user still gets the translated dump.
    let o = brr_as_nobody(caps, &["dump", &id]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

/// `dump --jited` against plain `dump` on the largest fixture program, and
/// objdump on the same bytes (figures, not a test: run with
/// `cargo test --test jited_live -- --ignored --nocapture dump_cost`;
/// BRR_BENCH_BIN picks the brr binary, e.g. a release build).
#[test]
#[ignore]
fn dump_cost() {
    if !live() {
        return;
    }
    let fx = LargeFixture::load(8, 12_000).expect("load the large fixture");
    let id = fx.prog.id.to_string();
    let bin = std::env::var("BRR_BENCH_BIN").unwrap_or(env!("CARGO_BIN_EXE_brr").into());
    let jit = sys::prog_jited(fx.prog.fd()).unwrap();
    let path = std::env::temp_dir().join(format!("brr-jit-bench-{}.bin", std::process::id()));
    std::fs::write(&path, &jit.bytes).unwrap();
    let time = |cmd: &mut Command| {
        let t = std::time::Instant::now();
        let o = cmd.output().unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        t.elapsed().as_secs_f64()
    };
    let runs = 11;
    let mut t: [Vec<f64>; 5] = Default::default();
    for _ in 0..runs {
        let brr = |args: &[&str]| time(Command::new(&bin).args(["dump", &id]).args(args));
        t[0].push(brr(&[]));
        t[1].push(brr(&["--jited"]));
        t[2].push(brr(&["--json"]));
        t[3].push(brr(&["--jited", "--json"]));
        t[4].push(time(
            Command::new("objdump")
                .args(["-D", "-b", "binary", "-mi386:x86-64", "-M", "intel"])
                .arg(&path),
        ));
    }
    std::fs::remove_file(&path).unwrap();
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let [a, b, c, d, e] = t.each_mut().map(median);
    let info = fx.prog.info().unwrap();
    let listing = Command::new(&bin)
        .args(["dump", &id, "--jited"])
        .output()
        .unwrap();
    eprintln!("{}", stdout(&listing).lines().nth(1).unwrap_or_default());
    eprintln!(
        "program {id}: {} xlated bytes, {} JIT bytes, {} functions",
        info.xlated_prog_len,
        info.jited_prog_len,
        jit.ksyms.len()
    );
    let ms = |x: f64| format!("{:8.1} ms", x * 1e3);
    eprintln!("dump                {}", ms(a));
    eprintln!("dump --jited        {}  {:.2}x dump", ms(b), b / a);
    eprintln!("dump --json         {}", ms(c));
    eprintln!("dump --jited --json {}  {:.2}x dump --json", ms(d), d / c);
    eprintln!(
        "objdump -D          {}  the same bytes without source lines; dump --jited {:.2}x",
        ms(e),
        b / e
    );
}

#[test]
fn a_program_without_btf_is_named_by_the_kernel_and_has_no_lines() {
    if !live() || !objdump_available() {
        return;
    }
    let fx = NoBtfFixture::load().expect("load the no-BTF fixture");
    let out = brr(&["dump", &fx.prog.id.to_string(), "--jited", "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let doc: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let funcs = doc["jited_functions"].as_array().unwrap();
    assert_eq!(funcs.len(), 1);
    assert_eq!(funcs[0]["name"], NoBtfFixture::PROG_NAME);
    let jit = sys::prog_jited(fx.prog.fd()).unwrap();
    let theirs = objdump(&jit.bytes, jit.ksyms[0]);
    let ours = funcs[0]["insns"].as_array().unwrap();
    assert_eq!(ours.len(), theirs.len());
    for (o, t) in ours.iter().zip(&theirs) {
        assert_eq!(o["bytes"], t.bytes.as_str());
        assert_eq!(mnemonic(o["asm"].as_str().unwrap()), t.mnemonic);
        same_operands(o, t, &format!("{o} vs {t:?}"));
        assert_eq!((&o["line"], &o["file"]), (&Value::Null, &Value::Null));
        assert_eq!(o["xlated_offset"], Value::Null);
    }
}

/// Every fixture program's JIT code decoded with brr's hand-written subset
/// of the x86-64 JIT's instructions (iced-x86 for anything else) lists
/// exactly what iced-x86 alone lists, and the subset covers every
/// instruction the kernel's JIT emitted for them, so iced-x86 is never set
/// up for them.
#[cfg(target_arch = "x86_64")]
#[test]
fn the_jit_subset_decodes_every_fixture_as_iced_x86_does() {
    use brr::native::x86;
    if !live() {
        return;
    }
    let progs = [
        SocketFilterFixture::load().expect("socket filter").prog,
        HotFixture::load().expect("hot").prog,
        SubprogFixture::load().expect("subprogram").prog,
        HelperFixture::load().expect("helper").prog,
        JitFixture::load().expect("jit").prog,
        LargeFixture::load(4, 8).expect("large").prog,
        RawTpLinkFixture::load().expect("raw_tp").prog,
        NoBtfFixture::load().expect("no BTF").prog,
        SyscallHotFixture::load(std::process::id())
            .expect("syscall")
            .prog,
    ];
    let mut outside = Vec::new();
    let mut count = 0;
    for prog in &progs {
        let jit = sys::prog_jited(prog.fd()).unwrap();
        let mut at = 0usize;
        let lens = if jit.func_lens.is_empty() {
            vec![jit.bytes.len() as u32]
        } else {
            jit.func_lens.clone()
        };
        for len in lens {
            let code = &jit.bytes[at..at + len as usize];
            at += len as usize;
            let ours = x86::decode(code);
            assert_eq!(ours, x86::reference_all(code), "program {}", prog.id);
            for d in &ours {
                count += 1;
                let rest = &code[d.offset as usize..];
                if x86::subset(rest).is_none() {
                    outside.push((prog.id, d.offset, d.text.clone()));
                }
            }
        }
    }
    assert!(count > 200, "{count} instructions");
    assert!(outside.is_empty(), "outside the subset: {outside:?}");
}
