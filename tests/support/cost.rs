//! The cost ground truth: one small program on one hook and the call that
//! fires it, timed with nothing attached, with the program attached, and
//! with the program attached and run-time statistics on. The slowdown per
//! call is what the program really costs, to hold `brr cost` against.

use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::time::{Duration, Instant};

use super::insn::*;
use super::memcg::RootMemcg;
use super::{load_program, sys, LoadedProg, ProgBuilder, StatsGuard};

/// `BPF_PROG_TYPE_TRACEPOINT` (enum bpf_prog_type).
const BPF_PROG_TYPE_TRACEPOINT: u32 = 5;
/// `SO_ATTACH_BPF` and `SO_DETACH_BPF` (asm-generic/socket.h).
const SO_ATTACH_BPF: i32 = 50;
const SO_DETACH_BPF: i32 = 27;
/// Where tracefs is (or gets) mounted.
pub(crate) const TRACEFS: &str = "/sys/kernel/tracing";
/// ALU instructions in the heavy case's body.
pub(crate) const HEAVY_ALU_INSNS: usize = 400;
/// Calls timed together: long enough that reading the clock is noise,
/// short enough that an interruption spoils few of them.
const BATCH: u64 = 1000;
/// Socket pairs the socket case sends on in turn: where one pair's
/// socket and buffers land in memory makes the filter's slowdown a few
/// percent more or less; in turn, those differences average out.
const SOCKET_PAIRS: usize = 8;
/// The name the firing thread gives itself with `prctl(PR_SET_NAME)`.
const LOOP_COMM: &std::ffi::CStr = c"brr-cost-loop";

/// One program, one hook, one call that fires it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Case {
    /// `r0 = 0; exit` as a raw tracepoint on `task_rename`.
    RawTp,
    /// The same hook, with a body of [`HEAVY_ALU_INSNS`] ALU instructions.
    Heavy,
    /// `r0 = 0; exit` as a raw tracepoint on `sys_enter`: every system
    /// call of the host takes the tracing slow path while it is attached.
    SysEnter,
    /// A socket filter on the receiving end of an AF_UNIX datagram pair.
    Socket,
    /// `r0 = 0; exit` as a classic tracepoint program on
    /// `task/task_rename`, attached through a perf event as BCC and
    /// bpftrace do.
    PerfTp,
}

impl Case {
    pub(crate) const ALL: [Case; 5] = [
        Case::RawTp,
        Case::Heavy,
        Case::SysEnter,
        Case::Socket,
        Case::PerfTp,
    ];

    pub(crate) fn name(self) -> &'static str {
        match self {
            Case::RawTp => "rawtp",
            Case::Heavy => "heavy",
            Case::SysEnter => "sysenter",
            Case::Socket => "socket",
            Case::PerfTp => "perftp",
        }
    }

    pub(crate) fn parse(name: &str) -> Option<Case> {
        Case::ALL.into_iter().find(|c| c.name() == name)
    }

    /// The hook and the call that fires it, in words.
    pub(crate) fn describe(self) -> &'static str {
        match self {
            Case::RawTp => "raw_tp task_rename, 2 insns; prctl(PR_SET_NAME)",
            Case::Heavy => "raw_tp task_rename, 400 ALU insns; prctl(PR_SET_NAME)",
            Case::SysEnter => "raw_tp sys_enter, 2 insns; getppid()",
            Case::Socket => "socket filter on AF_UNIX dgram, 2 insns; send()+recv()",
            Case::PerfTp => {
                "tracepoint task/task_rename via perf event, 2 insns; prctl(PR_SET_NAME)"
            }
        }
    }

    fn prog_name(self) -> &'static str {
        match self {
            Case::RawTp => "brr_cost_rawtp",
            Case::Heavy => "brr_cost_heavy",
            Case::SysEnter => "brr_cost_sysent",
            Case::Socket => "brr_cost_sock",
            Case::PerfTp => "brr_cost_perftp",
        }
    }
}

/// How a case's hook runs the program while it is attached.
#[derive(Debug)]
enum Attached {
    Link(#[allow(dead_code)] OwnedFd),
    PerfEvent(#[allow(dead_code)] OwnedFd),
    Socket,
}

/// What is switched on while a measurement runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    Nothing,
    Attached,
    Stats,
}

impl Mode {
    pub(crate) const ALL: [Mode; 3] = [Mode::Nothing, Mode::Attached, Mode::Stats];

    pub(crate) fn name(self) -> &'static str {
        match self {
            Mode::Nothing => "nothing",
            Mode::Attached => "attached",
            Mode::Stats => "stats",
        }
    }

    pub(crate) fn parse(name: &str) -> Option<Mode> {
        Mode::ALL.into_iter().find(|m| m.name() == name)
    }
}

/// A loaded case: its program, its attachment (when attached) and what
/// its firing call needs.
#[derive(Debug)]
pub(crate) struct CostCase {
    pub case: Case,
    pub prog: LoadedProg,
    attached: Option<Attached>,
    stats: Option<StatsGuard>,
    /// The socket case's pairs: (sender, receiver with the filter), used
    /// in turn ([`SOCKET_PAIRS`]).
    pairs: Vec<(OwnedFd, OwnedFd)>,
    /// The pair the next call uses.
    next: std::sync::atomic::AtomicUsize,
    /// The socket case runs in the root memory cgroup
    /// ([`super::memcg`]); None elsewhere, or where it is not possible.
    _memcg: Option<RootMemcg>,
}

/// One timed stretch of calls.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Timing {
    pub calls: u64,
    /// Median over batches of [`BATCH`] calls of the time per call.
    pub ns_per_call: f64,
    /// The program's `run_cnt` delta per call (0 without statistics).
    pub runs_per_call: f64,
}

impl CostCase {
    /// Load the case's program; nothing is attached yet.
    pub(crate) fn load(case: Case) -> io::Result<CostCase> {
        let mut b = ProgBuilder::new();
        match case {
            Case::Heavy => {
                b.emit(mov64_imm(R0, 1));
                for i in 0..HEAVY_ALU_INSNS / 2 {
                    b.emit(alu64_imm(BPF_MUL, R0, 31));
                    b.emit(alu64_imm(BPF_ADD, R0, i as i32));
                }
                b.emit(mov64_imm(R0, 0));
            }
            // A socket filter's return value is how much of the packet to
            // keep: keep all of it, so that the receiver's path is the one
            // taken with nothing attached.
            Case::Socket => {
                b.emit(mov64_imm(R0, 0xffff));
            }
            _ => {
                b.emit(mov64_imm(R0, 0));
            }
        }
        b.emit(exit());
        let prog_type = match case {
            Case::RawTp | Case::Heavy | Case::SysEnter => sys::BPF_PROG_TYPE_RAW_TRACEPOINT,
            Case::Socket => sys::BPF_PROG_TYPE_SOCKET_FILTER,
            Case::PerfTp => BPF_PROG_TYPE_TRACEPOINT,
        };
        let prog = load_program(prog_type, case.prog_name(), &b)?;
        let (pairs, memcg) = if case == Case::Socket {
            // Out of memory-cgroup accounting, whose page charges come and
            // go with where a per-CPU stock's remainder sits (memcg.rs).
            let memcg = match RootMemcg::enter() {
                Ok(m) => m,
                Err(e) => {
                    eprintln!(
                        "note: the socket case stays in its memory cgroup ({e}); \
                         its timings may move by a page charge a call"
                    );
                    None
                }
            };
            let pairs = (0..SOCKET_PAIRS)
                .map(|_| dgram_pair())
                .collect::<io::Result<Vec<_>>>()?;
            (pairs, memcg)
        } else {
            (Vec::new(), None)
        };
        Ok(CostCase {
            case,
            prog,
            attached: None,
            stats: None,
            pairs,
            next: std::sync::atomic::AtomicUsize::new(0),
            _memcg: memcg,
        })
    }

    /// Attach the program to its hook (a no-op when it is attached).
    pub(crate) fn attach(&mut self) -> io::Result<()> {
        if self.attached.is_some() {
            return Ok(());
        }
        self.attached = Some(match self.case {
            Case::RawTp | Case::Heavy => {
                Attached::Link(sys::raw_tracepoint_open(self.prog.fd(), "task_rename")?)
            }
            Case::SysEnter => Attached::Link(sys::raw_tracepoint_open(
                self.prog.fd(),
                super::SYS_ENTER_TP,
            )?),
            Case::PerfTp => {
                Attached::PerfEvent(perf_tracepoint(self.prog.fd(), "task/task_rename")?)
            }
            Case::Socket => {
                for (_, rx) in &self.pairs {
                    set_sock_bpf(rx.as_fd(), SO_ATTACH_BPF, self.prog.fd().as_raw_fd())?;
                }
                Attached::Socket
            }
        });
        Ok(())
    }

    /// Take the program off its hook; it stays loaded with the same id.
    pub(crate) fn detach(&mut self) -> io::Result<()> {
        match self.attached.take() {
            Some(Attached::Socket) => {
                for (_, rx) in &self.pairs {
                    set_sock_bpf(rx.as_fd(), SO_DETACH_BPF, 0)?;
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }

    /// Switch to `mode`: attach or detach, statistics on or off.
    pub(crate) fn set_mode(&mut self, mode: Mode) -> io::Result<()> {
        if mode == Mode::Stats {
            if self.stats.is_none() {
                self.stats = Some(StatsGuard::enable()?);
            }
        } else {
            self.stats = None;
        }
        if mode == Mode::Nothing {
            self.detach()
        } else {
            self.attach()
        }
    }

    /// Make the call that fires the hook, once.
    pub(crate) fn fire(&self) -> io::Result<()> {
        match self.case {
            Case::RawTp | Case::Heavy | Case::PerfTp => {
                // SAFETY: PR_SET_NAME reads a NUL-terminated string of at
                // most 16 bytes from a static.
                let r = unsafe { libc::prctl(libc::PR_SET_NAME, LOOP_COMM.as_ptr()) };
                if r != 0 {
                    return Err(io::Error::last_os_error());
                }
            }
            Case::SysEnter => {
                std::hint::black_box(rustix::process::getppid());
            }
            Case::Socket => {
                // One thread fires at a time: a relaxed counter suffices.
                let i = self.next.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
                    % self.pairs.len().max(1);
                let (tx, rx) = self
                    .pairs
                    .get(i)
                    .ok_or_else(|| io::Error::other("no socket pair"))?;
                let byte = [0x42u8];
                let mut buf = [0u8; 16];
                // SAFETY: send reads 1 byte and recv writes at most 16 into
                // live stack buffers of those sizes.
                unsafe {
                    if libc::send(tx.as_raw_fd(), byte.as_ptr().cast(), 1, 0) != 1 {
                        return Err(io::Error::last_os_error());
                    }
                    if libc::recv(rx.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len(), 0) != 1 {
                        return Err(io::Error::last_os_error());
                    }
                }
            }
        }
        Ok(())
    }

    /// Fire the hook for `duration`, timing batches of calls.
    pub(crate) fn time(&self, duration: Duration) -> io::Result<Timing> {
        let before = self.prog.info()?.run_cnt;
        let mut per_call = Vec::new();
        let mut calls = 0u64;
        let end = Instant::now() + duration;
        while Instant::now() < end || per_call.len() < 3 {
            let t0 = Instant::now();
            for _ in 0..BATCH {
                self.fire()?;
            }
            per_call.push(t0.elapsed().as_nanos() as f64 / BATCH as f64);
            calls += BATCH;
        }
        let runs = self.prog.info()?.run_cnt.saturating_sub(before);
        Ok(Timing {
            calls,
            ns_per_call: median(&mut per_call),
            runs_per_call: runs as f64 / calls as f64,
        })
    }

    /// Whether the program's run count moves while this process holds no
    /// statistics: then another process holds them on, and the
    /// "attached" measurement would include their cost.
    pub(crate) fn stats_held_elsewhere(&mut self) -> io::Result<bool> {
        self.set_mode(Mode::Attached)?;
        let before = self.prog.info()?.run_cnt;
        for _ in 0..1000 {
            self.fire()?;
        }
        Ok(self.prog.info()?.run_cnt > before)
    }
}

/// Median of `v` (0 when empty); sorts `v`.
pub(crate) fn median(v: &mut [f64]) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// Pin the calling thread to `cpu`.
pub(crate) fn pin_to_cpu(cpu: usize) -> io::Result<()> {
    let mut set = rustix::thread::CpuSet::new();
    set.set(cpu);
    rustix::thread::sched_setaffinity(None, &set)?;
    Ok(())
}

/// The per-call times of some modes over interleaved rounds.
#[derive(Debug, Clone)]
pub(crate) struct Measured {
    pub modes: Vec<Mode>,
    /// ns per call, per round, in `modes` order.
    pub rounds: Vec<Vec<f64>>,
    /// The program's runs per call of the firing loop, from the
    /// statistics rounds' `run_cnt` (more than 1 when other tasks fire
    /// the hook too, as on `sys_enter`; 0 without a statistics mode).
    pub runs_per_call: f64,
}

impl Measured {
    fn column(&self, mode: Mode) -> Vec<f64> {
        match self.modes.iter().position(|m| *m == mode) {
            Some(i) => self.rounds.iter().map(|r| r[i]).collect(),
            None => Vec::new(),
        }
    }

    /// Median over rounds of `mode`'s ns per call (0 if not measured).
    pub(crate) fn median(&self, mode: Mode) -> f64 {
        median(&mut self.column(mode))
    }

    /// (min, max) over rounds of `mode`'s ns per call.
    pub(crate) fn spread(&self, mode: Mode) -> (f64, f64) {
        let c = self.column(mode);
        (
            c.iter().copied().fold(f64::INFINITY, f64::min),
            c.iter().copied().fold(0.0, f64::max),
        )
    }

    /// Median over rounds of `a − b` within each round: the two stretches
    /// of a round ran next to each other, so a change of the host's speed
    /// between rounds cancels out.
    pub(crate) fn paired(&self, a: Mode, b: Mode) -> f64 {
        let (x, y) = (self.column(a), self.column(b));
        median(&mut x.iter().zip(&y).map(|(x, y)| x - y).collect::<Vec<_>>())
    }

    /// The real cost per run of the program with statistics off:
    /// attached − nothing.
    pub(crate) fn total_ns(&self) -> f64 {
        self.paired(Mode::Attached, Mode::Nothing)
    }

    /// The real cost per run with statistics on (what a run costs while
    /// `brr cost` measures, for it holds them on): stats − nothing.
    pub(crate) fn total_with_stats_ns(&self) -> f64 {
        self.paired(Mode::Stats, Mode::Nothing)
    }

    /// What statistics add per run: stats − attached.
    pub(crate) fn stats_ns(&self) -> f64 {
        self.paired(Mode::Stats, Mode::Attached)
    }
}

/// Time `cc` in each of `modes` for `each` per mode and round, `rounds`
/// times, reversing the order of the modes every other round (A B C,
/// C B A) so that a drift of the host's speed falls on all of them alike.
/// Calls `report(round, mode, timing)` after each stretch. Leaves `cc`
/// detached.
pub(crate) fn measure(
    cc: &mut CostCase,
    modes: &[Mode],
    rounds: usize,
    each: Duration,
    mut report: impl FnMut(usize, Mode, &Timing),
) -> io::Result<Measured> {
    let mut out = Vec::new();
    let mut runs = Vec::new();
    for r in 0..rounds {
        let mut row = vec![0.0; modes.len()];
        let mut order: Vec<usize> = (0..modes.len()).collect();
        if r % 2 == 1 {
            order.reverse();
        }
        for i in order {
            cc.set_mode(modes[i])?;
            let t = cc.time(each)?;
            report(r + 1, modes[i], &t);
            row[i] = t.ns_per_call;
            if modes[i] == Mode::Stats {
                runs.push(t.runs_per_call);
            }
        }
        out.push(row);
    }
    cc.set_mode(Mode::Nothing)?;
    Ok(Measured {
        modes: modes.to_vec(),
        rounds: out,
        runs_per_call: median(&mut runs),
    })
}

/// A connected AF_UNIX datagram pair.
fn dgram_pair() -> io::Result<(OwnedFd, OwnedFd)> {
    use std::os::fd::FromRawFd;
    let mut fds = [0i32; 2];
    // SAFETY: socketpair writes two fds into the live array.
    let r = unsafe {
        libc::socketpair(
            libc::AF_UNIX,
            libc::SOCK_DGRAM | libc::SOCK_CLOEXEC,
            0,
            fds.as_mut_ptr(),
        )
    };
    if r != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: both fds were just created and are owned here.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

fn set_sock_bpf(sock: BorrowedFd<'_>, opt: i32, prog_fd: i32) -> io::Result<()> {
    // SAFETY: the option value is a live i32 of the stated length.
    let r = unsafe {
        libc::setsockopt(
            sock.as_raw_fd(),
            libc::SOL_SOCKET,
            opt,
            (&prog_fd as *const i32).cast(),
            std::mem::size_of::<i32>() as libc::socklen_t,
        )
    };
    if r != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Mount tracefs on [`TRACEFS`] unless it is there (needs root).
pub(crate) fn ensure_tracefs() -> io::Result<()> {
    if std::path::Path::new(TRACEFS).join("events").is_dir() {
        return Ok(());
    }
    super::mount_fs("tracefs", TRACEFS)
}

/// Open a perf event on the tracepoint `group/name` (all tasks, CPU 0: a
/// tracepoint's BPF programs hang on the tracepoint itself, so one event
/// runs them on every CPU, as BCC attaches them) and run `prog` from it.
fn perf_tracepoint(prog: BorrowedFd<'_>, tp: &str) -> io::Result<OwnedFd> {
    use perf_event_open_sys as pe;
    use std::os::fd::FromRawFd;
    ensure_tracefs()?;
    let id_path = format!("{TRACEFS}/events/{tp}/id");
    let id: u64 = std::fs::read_to_string(&id_path)
        .map_err(|e| io::Error::new(e.kind(), format!("{id_path}: {e}")))?
        .trim()
        .parse()
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, format!("{id_path}: {e}")))?;
    let mut attr = pe::bindings::perf_event_attr {
        type_: pe::bindings::PERF_TYPE_TRACEPOINT,
        size: std::mem::size_of::<pe::bindings::perf_event_attr>() as u32,
        config: id,
        ..Default::default()
    };
    attr.__bindgen_anon_1.sample_period = 1;
    attr.__bindgen_anon_2.wakeup_events = 1;
    // SAFETY: attr is initialised and lives for the call; the result is a
    // new fd or -1.
    let fd = unsafe {
        pe::perf_event_open(
            &mut attr,
            -1,
            0,
            -1,
            pe::bindings::PERF_FLAG_FD_CLOEXEC as _,
        )
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: fd was just returned by perf_event_open and is owned here.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    // SAFETY: both ioctls take an integer argument.
    unsafe {
        if pe::ioctls::SET_BPF(fd.as_raw_fd(), prog.as_raw_fd() as u32) != 0 {
            return Err(io::Error::last_os_error());
        }
        if pe::ioctls::ENABLE(fd.as_raw_fd(), 0) != 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(fd)
}
