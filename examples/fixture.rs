//! Fixture driver for manual runs, benchmarks and process-level tests.
//!
//! ```text
//! fixture hold --progs N --maps M
//! fixture hot [--seconds S] [--threads T] [--kind hot|subprog|helper|sock|sysenter]
//! fixture churn --seconds S --count N
//! fixture showcase
//! fixture cost-case --case NAME [--rounds R] [--seconds S] [--mode M] [--cpu C] [--hold yes|after]
//! fixture probe-loop --kind KIND [--function F] [--seconds S]
//! fixture hook-loop --hook HOOK [--seconds S]
//! ```
//! Needs root (CAP_BPF/CAP_SYS_ADMIN).

#[path = "../tests/support/mod.rs"]
mod support;

use std::io::{Read, Write};
use std::os::fd::{AsFd, BorrowedFd};
use std::process::ExitCode;
use std::time::{Duration, Instant};

const USAGE: &str = "usage:
  fixture hold --progs N --maps M
      load N minimal programs and M array maps, print `ready`, hold them
      until stdin reaches EOF
  fixture hot [--seconds S] [--threads T] [--kind hot|subprog|helper|sock|sysenter]
      load the fixture, print `prog_id=<id>`, drive it with
      BPF_PROG_TEST_RUN on T threads for S seconds (default 10, 1), then
      print `runs=<total>`; `sysenter` attaches the hot loop to the
      sys_enter raw tracepoint for this process and drives it with system
      calls instead (interrupts land on it as on a production host)
  fixture churn --seconds S --count N
      load and drop batches of N minimal programs and N maps for S seconds
  fixture showcase
      load one of each fixture (socket filter with its map, hot program,
      subprogram, helper caller, pinned prog/map/link under a fresh bpffs
      directory), print `name=value` lines with their ids, then `ready`;
      drive the hot, subprogram and helper programs until stdin reaches EOF
  fixture cost-case --case rawtp|heavy|sysenter|socket|perftp [--rounds R]
          [--seconds S] [--mode nothing|attached|stats] [--cpu C] [--hold yes|after]
      load the case's program (prints `prog_id=<id>`) and time the call that
      fires its hook, pinned to CPU C (default: the last), in every mode (or
      only M) for S seconds (default 1) per mode, R rounds (default 5), the
      order of the modes alternating; prints a `round=` line per stretch and
      a `median` line (ns per call); with --hold yes it attaches the program
      (or switches to mode M), prints `ready`, fires the hook until stdin
      reaches EOF and prints `calls=<n> ns_per_call=<x>`; --hold after does
      that after the timing, with the same program, socket pairs and process
  fixture probe-loop --kind kprobe|kretprobe|kprobe_multi|fentry|fexit
          [--function F] [--seconds S]
      attach `r0 = 0; exit` that way to the kernel function F (default
      __set_task_comm), turn run-time statistics on, print `prog_id=<id>`,
      call prctl(PR_SET_NAME) (which runs __set_task_comm) for S seconds
      (default 5), then print `calls=<n> runs=<run_cnt>`
  fixture hook-loop --hook xdp|xdp_veth|tc|tcx|cgroup_skb|sock_create|
                                 tcp_stream
          [--seconds S]
      attach a program that returns at once to the hook (generic XDP, a
      cls_bpf filter, or tcx ingress and egress links on `lo`, in a network
      namespace of its own; a cgroup of its own that it joins; a socket
      filter on both ends of a TCP connection over `lo`, in a network
      namespace of its own; native XDP on a veth pair's end, fired by
      raw frames on the other), turn run-time statistics on, print
      `prog_id=<id>`, fire the hook (UDP to 127.0.0.1, socket(2), a byte
      over the connection) for S seconds (default 5), then print
      `calls=<n> runs=<run_cnt>`";

/// Parsed `--flag value` pairs, each allowed flag at most once.
struct Flags(Vec<(String, String)>);

impl Flags {
    fn parse(args: &[String], allowed: &[&str]) -> Result<Flags, String> {
        let mut out: Vec<(String, String)> = Vec::new();
        let mut it = args.iter();
        while let Some(a) = it.next() {
            let name = a
                .strip_prefix("--")
                .filter(|n| allowed.contains(n))
                .ok_or_else(|| format!("unexpected argument {a:?}"))?;
            let value = it.next().ok_or_else(|| format!("--{name} needs a value"))?;
            if out.iter().any(|(n, _)| n == name) {
                return Err(format!("--{name} given twice"));
            }
            out.push((name.to_string(), value.clone()));
        }
        Ok(Flags(out))
    }

    fn get(&self, name: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    fn num(&self, name: &str, default: Option<u64>) -> Result<u64, String> {
        match (self.get(name), default) {
            (Some(v), _) => v
                .parse()
                .map_err(|_| format!("--{name}: not a number: {v:?}")),
            (None, Some(d)) => Ok(d),
            (None, None) => Err(format!("--{name} is required")),
        }
    }
}

fn hold(args: &[String]) -> Result<(), String> {
    let f = Flags::parse(args, &["progs", "maps"])?;
    let progs = f.num("progs", None)? as usize;
    let maps = f.num("maps", None)? as usize;
    let fds = support::try_load_many(progs, maps).map_err(|e| format!("loading: {e}"))?;
    let mut out = std::io::stdout().lock();
    writeln!(out, "ready")
        .and_then(|_| out.flush())
        .map_err(|e| e.to_string())?;
    let mut sink = Vec::new();
    std::io::stdin()
        .read_to_end(&mut sink)
        .map_err(|e| format!("reading stdin: {e}"))?;
    drop(fds);
    Ok(())
}

fn hot(args: &[String]) -> Result<(), String> {
    let f = Flags::parse(args, &["seconds", "threads", "kind"])?;
    let seconds = f.num("seconds", Some(10))?;
    let threads = f.num("threads", Some(1))? as usize;
    let kind = f.get("kind").unwrap_or("hot");
    let err = |e: std::io::Error| format!("loading {kind} fixture: {e}");

    // Keep the fixture alive for the whole run; only its fd is needed here.
    let run = |id: u32, fd: BorrowedFd<'_>, repeat: u32| -> Result<u64, String> {
        let mut out = std::io::stdout().lock();
        writeln!(out, "prog_id={id}")
            .and_then(|_| out.flush())
            .map_err(|e| e.to_string())?;
        support::run_load(fd, threads, repeat, Duration::from_secs(seconds))
            .map_err(|e| format!("BPF_PROG_TEST_RUN: {e}"))
    };
    let runs = match kind {
        "hot" => {
            let fx = support::HotFixture::load().map_err(err)?;
            run(fx.prog.id, fx.prog.fd(), support::HOT_REPEAT)?
        }
        "subprog" => {
            let fx = support::SubprogFixture::load().map_err(err)?;
            run(fx.prog.id, fx.prog.fd(), support::HOT_REPEAT)?
        }
        "helper" => {
            let fx = support::HelperFixture::load().map_err(err)?;
            run(fx.prog.id, fx.prog.fd(), support::HelperFixture::REPEAT)?
        }
        "sock" => {
            // A few instructions per run: the cost of measuring each run
            // (BPF_ENABLE_STATS) is then a large part of its run time.
            let fx = support::SocketFilterFixture::load().map_err(err)?;
            run(fx.prog.id, fx.prog.fd(), 100_000)?
        }
        "sysenter" => {
            let fx = support::SyscallHotFixture::load(std::process::id()).map_err(err)?;
            println!("prog_id={}", fx.prog.id);
            let calls: Vec<_> = (0..threads.max(1))
                .map(|_| support::SyscallHotFixture::spawn_syscalls(Duration::from_secs(seconds)))
                .collect();
            calls
                .into_iter()
                .map(|h| h.join().map_err(|_| "syscall thread panicked".to_string()))
                .sum::<Result<u64, String>>()?
        }
        other => {
            return Err(format!(
                "--kind: expected hot|subprog|helper|sock|sysenter, got {other:?}"
            ))
        }
    };
    println!("runs={runs}");
    Ok(())
}

fn churn(args: &[String]) -> Result<(), String> {
    let f = Flags::parse(args, &["seconds", "count"])?;
    let seconds = f.num("seconds", None)?;
    let count = f.num("count", None)? as usize;
    let deadline = Instant::now() + Duration::from_secs(seconds);
    let mut batches = 0u64;
    while Instant::now() < deadline {
        let fds = support::try_load_many(count, count).map_err(|e| format!("loading: {e}"))?;
        drop(fds);
        batches += 1;
    }
    println!("batches={batches}");
    Ok(())
}

fn showcase() -> Result<(), String> {
    let e = |what: &str| {
        let what = what.to_string();
        move |err: std::io::Error| format!("loading {what}: {err}")
    };
    let sock = support::SocketFilterFixture::load().map_err(e("socket filter"))?;
    let hot = support::HotFixture::load().map_err(e("hot"))?;
    let sub = support::SubprogFixture::load().map_err(e("subprog"))?;
    let helper = support::HelperFixture::load().map_err(e("helper"))?;
    let pinned = support::PinnedFixture::load().map_err(e("pinned"))?;
    // A little traffic for the socket filter so activity has two rows of work.
    sock.prog
        .test_run(1000)
        .map_err(|err| format!("BPF_PROG_TEST_RUN: {err}"))?;
    let drivers = [
        support::LoadDriver::start(hot.prog.fd(), 1, support::HOT_REPEAT),
        support::LoadDriver::start(sub.prog.fd(), 1, support::HOT_REPEAT),
        support::LoadDriver::start(helper.prog.fd(), 1, support::HelperFixture::REPEAT),
    ];
    let mut out = std::io::stdout().lock();
    let lines = [
        ("sock_prog", sock.prog.id.to_string()),
        ("sock_map", sock.map.id.to_string()),
        ("hot_prog", hot.prog.id.to_string()),
        ("sub_prog", sub.prog.id.to_string()),
        ("helper_prog", helper.prog.id.to_string()),
        ("pin_dir", pinned.dir.path.display().to_string()),
        ("pin_prog", pinned.prog.id.to_string()),
        ("pin_map", pinned.map.id.to_string()),
        ("pin_link", pinned.rawtp.link_id.to_string()),
    ];
    for (k, v) in lines {
        writeln!(out, "{k}={v}").map_err(|err| err.to_string())?;
    }
    writeln!(out, "ready")
        .and_then(|_| out.flush())
        .map_err(|err| err.to_string())?;
    drop(out);
    let mut sink = Vec::new();
    std::io::stdin()
        .read_to_end(&mut sink)
        .map_err(|err| format!("reading stdin: {err}"))?;
    for d in drivers {
        d.map_err(|err| format!("starting load: {err}"))?
            .stop()
            .map_err(|err| format!("BPF_PROG_TEST_RUN: {err}"))?;
    }
    Ok(())
}

fn cost_case(args: &[String]) -> Result<(), String> {
    use support::cost::{self, Case, CostCase, Mode};
    let f = Flags::parse(args, &["case", "rounds", "seconds", "mode", "cpu", "hold"])?;
    let name = f.get("case").ok_or("--case is required")?;
    let case = Case::parse(name).ok_or_else(|| {
        let all: Vec<_> = Case::ALL.iter().map(|c| c.name()).collect();
        format!("--case: expected {}, got {name:?}", all.join("|"))
    })?;
    let rounds = f.num("rounds", Some(5))? as usize;
    let each = Duration::from_secs_f64(
        f.get("seconds")
            .unwrap_or("1")
            .parse::<f64>()
            .map_err(|_| "--seconds: not a number".to_string())?,
    );
    let modes: Vec<Mode> = match f.get("mode") {
        None => Mode::ALL.to_vec(),
        Some(m) => vec![Mode::parse(m).ok_or_else(|| format!("--mode: unknown {m:?}"))?],
    };
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let cpu = f.num("cpu", Some(cpus as u64 - 1))? as usize;
    cost::pin_to_cpu(cpu).map_err(|e| format!("pinning to CPU {cpu}: {e}"))?;
    let mut cc = CostCase::load(case).map_err(|e| format!("loading {name}: {e}"))?;
    println!("prog_id={}", cc.prog.id);
    let err = |e: std::io::Error| format!("{name}: {e}");
    if cc.stats_held_elsewhere().map_err(err)? {
        return Err(format!(
            "{name}: run-time statistics are already on (another process holds \
             BPF_ENABLE_STATS): the attached timing would include them"
        ));
    }
    let hold = match f.get("hold") {
        None => None,
        Some(h @ ("yes" | "after")) => Some(h),
        Some(h) => return Err(format!("--hold: expected yes or after, got {h:?}")),
    };
    let hold_mode = modes.first().copied().filter(|_| f.get("mode").is_some());
    if hold == Some("yes") {
        return cost_hold(&mut cc, hold_mode.unwrap_or(Mode::Attached)).map_err(err);
    }
    let m = cost::measure(&mut cc, &modes, rounds, each, |round, mode, t| {
        println!(
            "round={round} mode={} calls={} ns_per_call={:.1} runs_per_call={:.3}",
            mode.name(),
            t.calls,
            t.ns_per_call,
            t.runs_per_call
        );
    })
    .map_err(err)?;
    let summary: Vec<String> = modes
        .iter()
        .map(|&mode| {
            let (lo, hi) = m.spread(mode);
            let n = mode.name();
            format!("{n}={:.1} {n}_spread={lo:.1}..{hi:.1}", m.median(mode))
        })
        .collect();
    let mut line = format!("median case={name} {}", summary.join(" "));
    if modes == Mode::ALL {
        // Differences within each round, then their median.
        line += &format!(
            " total={:.1} total_with_stats={:.1} stats_cost={:.1}",
            m.total_ns(),
            m.total_with_stats_ns(),
            m.stats_ns()
        );
    }
    println!("{line} runs_per_call={:.3}", m.runs_per_call);
    if hold == Some("after") {
        // The same instance measured and held: a new socket pair or
        // program lands elsewhere in memory, and costs a few percent more
        // or less.
        return cost_hold(&mut cc, hold_mode.unwrap_or(Mode::Attached)).map_err(err);
    }
    Ok(())
}

/// Keep `cc` in `mode` (attached, unless told otherwise) and fire its
/// hook until stdin reaches EOF.
fn cost_hold(cc: &mut support::cost::CostCase, mode: support::cost::Mode) -> std::io::Result<()> {
    use rustix::event::{poll, PollFd, PollFlags};
    cc.set_mode(mode)?;
    println!("ready");
    std::io::stdout().flush()?;
    // One thread, as in the timing: a second one (to wait on stdin) makes
    // every send and recv take a reference on its file, and changes what a
    // call costs. Stdin is polled between batches instead.
    let stdin = std::io::stdin();
    let t0 = Instant::now();
    let mut calls = 0u64;
    loop {
        for _ in 0..1000 {
            cc.fire()?;
        }
        calls += 1000;
        let mut fds = [PollFd::new(&stdin, PollFlags::IN)];
        if poll(&mut fds, Some(&rustix::time::Timespec::default()))? > 0 {
            let mut buf = [0u8; 256];
            if stdin.lock().read(&mut buf)? == 0 {
                break;
            }
        }
    }
    println!(
        "calls={calls} ns_per_call={:.1}",
        t0.elapsed().as_nanos() as f64 / calls.max(1) as f64
    );
    Ok(())
}

fn probe_loop(args: &[String]) -> Result<(), String> {
    use support::probes::Probe;
    let f = Flags::parse(args, &["kind", "function", "seconds"])?;
    let kind = f.get("kind").ok_or("--kind is required")?;
    let probe = Probe::parse(kind).ok_or_else(|| {
        let all: Vec<_> = Probe::ALL.iter().map(|p| p.name()).collect();
        format!("--kind: expected {}, got {kind:?}", all.join("|"))
    })?;
    let func = f.get("function").unwrap_or("__set_task_comm");
    let seconds = f.num("seconds", Some(5))?;
    let (prog, _held) = probe
        .attach(func)
        .map_err(|e| format!("{kind} on {func}: {e}"))?;
    let _stats = support::StatsGuard::enable().map_err(|e| format!("BPF_ENABLE_STATS: {e}"))?;
    let info = |fd| support::sys::prog_info(fd).map_err(|e| format!("prog info: {e}"));
    let before = info(prog.as_fd())?;
    println!("prog_id={}", before.id);
    let end = Instant::now() + Duration::from_secs(seconds);
    let mut calls = 0u64;
    while Instant::now() < end {
        for _ in 0..1000 {
            support::probes::rename_self().map_err(|e| format!("prctl: {e}"))?;
        }
        calls += 1000;
    }
    let runs = info(prog.as_fd())?.run_cnt - before.run_cnt;
    println!("calls={calls} runs={runs}");
    Ok(())
}

fn hook_loop(args: &[String]) -> Result<(), String> {
    use support::hooks::Hook;
    let f = Flags::parse(args, &["hook", "seconds"])?;
    let name = f.get("hook").ok_or("--hook is required")?;
    let hook = Hook::parse(name).ok_or_else(|| {
        let all: Vec<_> = Hook::ALL.iter().map(|h| h.name()).collect();
        format!("--hook: expected {}, got {name:?}", all.join("|"))
    })?;
    let seconds = f.num("seconds", Some(5))?;
    let fired = hook.attach().map_err(|e| format!("{name}: {e}"))?;
    let _stats = support::StatsGuard::enable().map_err(|e| format!("BPF_ENABLE_STATS: {e}"))?;
    let info = |fd| support::sys::prog_info(fd).map_err(|e| format!("prog info: {e}"));
    let before = info(fired.prog.as_fd())?;
    println!("prog_id={}", before.id);
    let end = Instant::now() + Duration::from_secs(seconds);
    let mut calls = 0u64;
    while Instant::now() < end {
        for _ in 0..1000 {
            fired.fire().map_err(|e| format!("{name}: firing: {e}"))?;
        }
        calls += 1000;
    }
    let runs = info(fired.prog.as_fd())?.run_cnt - before.run_cnt;
    println!("calls={calls} runs={runs}");
    Ok(())
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("hold") => hold(&args[1..]),
        Some("hot") => hot(&args[1..]),
        Some("churn") => churn(&args[1..]),
        Some("showcase") => showcase(),
        Some("cost-case") => cost_case(&args[1..]),
        Some("probe-loop") => probe_loop(&args[1..]),
        Some("hook-loop") => hook_loop(&args[1..]),
        Some("-h" | "--help" | "help") => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        _ => Err(format!("missing or unknown subcommand\n{USAGE}")),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("fixture: {e}");
            ExitCode::FAILURE
        }
    }
}
