//! The concrete fixtures: programs, maps, links and pins with known
//! metadata, plus helpers to drive programs with BPF_PROG_TEST_RUN.

use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::btf::Linkage;
use super::insn::*;
use super::sys;
use super::{create_map, load_program, LoadedMap, LoadedProg, ProgBuilder};

// ---------------------------------------------------------------------------
// bpffs and pins
// ---------------------------------------------------------------------------

/// Where bpffs is (or gets) mounted.
pub(crate) const BPFFS_ROOT: &str = "/sys/fs/bpf";
/// `BPF_FS_MAGIC` as reported by statfs(2).
pub(crate) const BPF_FS_MAGIC: i64 = 0xcafe4a11;

/// Is `path` on a bpffs mount?
pub(crate) fn is_bpffs(path: &str) -> io::Result<bool> {
    let st = rustix::fs::statfs(path)?;
    Ok(st.f_type as i64 == BPF_FS_MAGIC)
}

/// Mount bpffs on /sys/fs/bpf unless it already is one (needs root).
pub(crate) fn ensure_bpffs() -> io::Result<()> {
    static LOCK: Mutex<()> = Mutex::new(());
    let _guard = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    if is_bpffs(BPFFS_ROOT).unwrap_or(false) {
        return Ok(());
    }
    std::fs::create_dir_all(BPFFS_ROOT)?;
    mount_fs("bpf", BPFFS_ROOT)
}

/// `mount -t FS FS AT` (needs root); the error names the command.
pub(crate) fn mount_fs(fs: &str, at: &str) -> io::Result<()> {
    rustix::mount::mount(fs, at, fs, rustix::mount::MountFlags::empty(), None).map_err(|e| {
        let e = io::Error::from(e);
        io::Error::new(e.kind(), format!("mount -t {fs} {fs} {at}: {e}"))
    })
}

/// A fresh directory `/sys/fs/bpf/brr-test-<pid>-<counter>/`; pins made
/// through it are unlinked, and its directories removed, on drop.
#[derive(Debug)]
pub(crate) struct PinDir {
    pub path: PathBuf,
    pins: Vec<PathBuf>,
    dirs: Vec<PathBuf>,
}

impl PinDir {
    pub(crate) fn new() -> io::Result<PinDir> {
        static COUNTER: AtomicU32 = AtomicU32::new(0);
        ensure_bpffs()?;
        loop {
            let n = COUNTER.fetch_add(1, Ordering::Relaxed);
            let path = Path::new(BPFFS_ROOT).join(format!("brr-test-{}-{n}", std::process::id()));
            match std::fs::create_dir(&path) {
                Ok(()) => {
                    return Ok(PinDir {
                        path,
                        pins: Vec::new(),
                        dirs: Vec::new(),
                    })
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e),
            }
        }
    }

    /// Create `rel` (relative, may be nested) under the directory.
    pub(crate) fn subdir(&mut self, rel: &str) -> io::Result<PathBuf> {
        let mut cur = self.path.clone();
        for comp in Path::new(rel).components() {
            cur.push(comp);
            if !cur.exists() {
                std::fs::create_dir(&cur)?;
                self.dirs.push(cur.clone());
            }
        }
        Ok(cur)
    }

    /// Pin `fd` at `rel` (parent directories are created).
    pub(crate) fn pin(&mut self, fd: BorrowedFd<'_>, rel: &str) -> io::Result<PathBuf> {
        if let Some(parent) = Path::new(rel).parent() {
            if !parent.as_os_str().is_empty() {
                self.subdir(parent.to_str().expect("utf-8 path"))?;
            }
        }
        let path = self.path.join(rel);
        sys::obj_pin(fd, path.to_str().expect("utf-8 path"))?;
        self.pins.push(path.clone());
        Ok(path)
    }
}

impl Drop for PinDir {
    fn drop(&mut self) {
        for p in self.pins.iter().rev() {
            let _ = std::fs::remove_file(p);
        }
        for d in self.dirs.iter().rev() {
            let _ = std::fs::remove_dir(d);
        }
        if std::fs::remove_dir(&self.path).is_err() {
            let _ = std::fs::remove_dir_all(&self.path);
        }
    }
}

// ---------------------------------------------------------------------------
// Driving programs with BPF_PROG_TEST_RUN
// ---------------------------------------------------------------------------

/// Call BPF_PROG_TEST_RUN with `repeat` until `deadline` or until `stop`
/// is set; returns the number of program runs completed (sum of repeats).
pub(crate) fn drive_test_run(
    prog: BorrowedFd<'_>,
    repeat: u32,
    deadline: Option<Instant>,
    stop: Option<&AtomicBool>,
) -> io::Result<u64> {
    let mut runs = 0u64;
    loop {
        if deadline.is_some_and(|d| Instant::now() >= d)
            || stop.is_some_and(|s| s.load(Ordering::Relaxed))
        {
            return Ok(runs);
        }
        sys::test_run(prog, repeat)?;
        runs += u64::from(repeat);
    }
}

/// Background thread running `prog` for `duration`; joins to the run count.
/// Panics (inside the thread) if the fd cannot be duplicated or a test run
/// fails.
pub(crate) fn spawn_test_run_load(
    prog: BorrowedFd<'_>,
    repeat: u32,
    duration: Duration,
) -> JoinHandle<u64> {
    let fd = prog.try_clone_to_owned().expect("dup prog fd");
    let deadline = Instant::now() + duration;
    std::thread::spawn(move || {
        drive_test_run(fd.as_fd(), repeat, Some(deadline), None).expect("BPF_PROG_TEST_RUN")
    })
}

/// Open-ended load on several threads; `stop()` ends it and returns the
/// total run count.
#[derive(Debug)]
pub(crate) struct LoadDriver {
    stop: Arc<AtomicBool>,
    handles: Vec<JoinHandle<io::Result<u64>>>,
}

impl LoadDriver {
    pub(crate) fn start(
        prog: BorrowedFd<'_>,
        threads: usize,
        repeat: u32,
    ) -> io::Result<LoadDriver> {
        let stop = Arc::new(AtomicBool::new(false));
        let mut handles = Vec::new();
        for _ in 0..threads.max(1) {
            let fd = prog.try_clone_to_owned()?;
            let stop = Arc::clone(&stop);
            handles.push(std::thread::spawn(move || {
                drive_test_run(fd.as_fd(), repeat, None, Some(&stop))
            }));
        }
        Ok(LoadDriver { stop, handles })
    }

    pub(crate) fn stop(mut self) -> io::Result<u64> {
        self.stop.store(true, Ordering::Relaxed);
        let mut total = 0;
        for h in self.handles.drain(..) {
            total += h.join().expect("load thread panicked")?;
        }
        Ok(total)
    }
}

impl Drop for LoadDriver {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        for h in self.handles.drain(..) {
            let _ = h.join();
        }
    }
}

/// Run `prog` on `threads` threads for `duration`; returns total runs.
pub(crate) fn run_load(
    prog: BorrowedFd<'_>,
    threads: usize,
    repeat: u32,
    duration: Duration,
) -> io::Result<u64> {
    let deadline = Instant::now() + duration;
    std::thread::scope(|s| {
        let hs: Vec<_> = (0..threads.max(1))
            .map(|_| s.spawn(move || drive_test_run(prog, repeat, Some(deadline), None)))
            .collect();
        let mut total = 0;
        for h in hs {
            total += h.join().expect("load thread panicked")?;
        }
        Ok(total)
    })
}

/// Poll `cond` every 5 ms until it holds or `timeout` passes; returns
/// whether it held. Useful after dropping fixtures: a raw_tp link frees its
/// program only after an RCU grace period.
pub(crate) fn wait_until(timeout: Duration, mut cond: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + timeout;
    loop {
        if cond() {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Turns on kernel BPF run-time stats (run_cnt/run_time_ns) while alive.
/// Enabling is reference counted by the kernel, so concurrent guards are
/// fine.
#[derive(Debug)]
pub(crate) struct StatsGuard {
    pub fd: OwnedFd,
}

impl StatsGuard {
    pub(crate) fn enable() -> io::Result<StatsGuard> {
        Ok(StatsGuard {
            fd: sys::enable_stats()?,
        })
    }
}

// ---------------------------------------------------------------------------
// Fixtures
// ---------------------------------------------------------------------------

/// Shared ARRAY map parameters of the socket-filter fixture.
pub(crate) const FX_MAP_NAME: &str = "brr_fx_map";
pub(crate) const FX_MAP_KEY_SIZE: u32 = 4;
pub(crate) const FX_MAP_VALUE_SIZE: u32 = 8;
pub(crate) const FX_MAP_MAX_ENTRIES: u32 = 4;

/// Default repeat per BPF_PROG_TEST_RUN call for the load fixtures.
pub(crate) const HOT_REPEAT: u32 = 10_000;
/// Number of `acc = acc * 31 + i` steps (2 insns each) on the hot lines.
pub(crate) const HOT_STEPS: usize = 2000;

fn emit_hot_steps(b: &mut ProgBuilder, reg: u8) {
    for i in 0..HOT_STEPS {
        b.emit(alu64_imm(BPF_MUL, reg, 31));
        b.emit(alu64_imm(BPF_ADD, reg, i as i32));
    }
}

/// (a) Socket filter with map lookup/increment, BTF, func_info, line_info.
///
/// 16 instructions are loaded (`prog.insn_cnt`); the kernel's xlated image
/// is longer (22 on 6.18) because the ARRAY lookup helper call is inlined,
/// and the kernel-reported line_info insn offsets shift accordingly, so
/// compare xlated offsets only through the kernel's own line_info.
#[derive(Debug)]
pub(crate) struct SocketFilterFixture {
    pub prog: LoadedProg,
    pub map: LoadedMap,
    /// Source file all line records refer to.
    pub file: &'static str,
    /// Full BTF FUNC name (longer than the 15-byte prog name).
    pub func_name: &'static str,
}

impl SocketFilterFixture {
    pub(crate) const PROG_NAME: &'static str = "brr_fx_sock";
    pub(crate) const FUNC_NAME: &'static str = "brr_fx_sock_filter_main";
    pub(crate) const FILE: &'static str = "/src/brr-fixtures/sock_filter.c";

    /// Each test run increments map[0] by one and returns 0.
    pub(crate) fn load() -> io::Result<SocketFilterFixture> {
        let map = create_map(
            FX_MAP_NAME,
            sys::BPF_MAP_TYPE_ARRAY,
            FX_MAP_KEY_SIZE,
            FX_MAP_VALUE_SIZE,
            FX_MAP_MAX_ENTRIES,
        )?;
        let f = Self::FILE;
        let mut b = ProgBuilder::new();
        b.func(Self::FUNC_NAME, Linkage::Global);
        // insns 0..=2. The key is 0 at run time (skb->len < 2^31) but not a
        // verifier-known constant: with a constant key the verifier proves
        // the ARRAY lookup non-NULL and deletes the `if (!val)` branch
        // together with its line_info records.
        b.line(f, 12, 8, "\t__u32 key = skb->len >> 31;");
        b.emit(ldx_mem(BPF_W, R1, R1, 0)); // __sk_buff.len
        b.emit(alu64_imm(BPF_RSH, R1, 31));
        b.emit(stx_mem(BPF_W, R10, R1, -4));
        // insns 3..=7 (ld_imm64 takes two slots: 5 and 6)
        b.line(
            f,
            13,
            18,
            "    __u64 *val = bpf_map_lookup_elem(&brr_fx_map, &key);",
        );
        b.emit(mov64_reg(R2, R10));
        b.emit(alu64_imm(BPF_ADD, R2, -4));
        use std::os::fd::AsRawFd;
        b.emit_all(&ld_map_fd(R1, map.fd.as_raw_fd()));
        b.emit(call_helper(BPF_FUNC_MAP_LOOKUP_ELEM));
        // insn 8: if (val) skip the early return
        b.line(f, 14, 9, "    if (!val)");
        b.emit(jmp_imm(BPF_JNE, R0, 0, 2));
        // insns 9..=10
        b.line(f, 15, 9, "        return 0;");
        b.emit(mov64_imm(R0, 0));
        b.emit(exit());
        // insns 11..=13
        b.line(f, 16, 10, "    *val += 1;");
        b.emit(ldx_mem(BPF_DW, R1, R0, 0));
        b.emit(alu64_imm(BPF_ADD, R1, 1));
        b.emit(stx_mem(BPF_DW, R0, R1, 0));
        // insn 14: compiler-generated code, line 0, empty text
        b.line(f, 0, 0, "");
        b.emit(mov64_imm(R0, 0));
        // insn 15
        b.line(f, 17, 5, "    return 0;");
        b.emit(exit());

        let prog = load_program(sys::BPF_PROG_TYPE_SOCKET_FILTER, Self::PROG_NAME, &b)?;
        Ok(SocketFilterFixture {
            prog,
            map,
            file: Self::FILE,
            func_name: Self::FUNC_NAME,
        })
    }

    /// Line records as (insn index, file, line, col, text), exactly as
    /// encoded.
    pub(crate) fn expected_lines(&self) -> Vec<(u32, String, u32, u32, String)> {
        self.prog
            .lines
            .iter()
            .map(|l| (l.insn_off, l.file.clone(), l.line, l.col, l.text.clone()))
            .collect()
    }
}

/// (b) Socket filter whose cost is concentrated on one source line.
#[derive(Debug)]
pub(crate) struct HotFixture {
    pub prog: LoadedProg,
    pub file: &'static str,
    pub func_name: &'static str,
    pub hot_line: u32,
    pub hot_text: &'static str,
    /// Loaded-insn index range attributed to the hot line.
    pub hot_insns: std::ops::Range<u32>,
}

impl HotFixture {
    pub(crate) const PROG_NAME: &'static str = "brr_fx_hot";
    pub(crate) const FUNC_NAME: &'static str = "brr_fx_hot_main";
    pub(crate) const FILE: &'static str = "/src/brr-fixtures/hot.c";
    pub(crate) const HOT_LINE: u32 = 42;
    pub(crate) const HOT_TEXT: &'static str = "    acc = acc * 31 + i; /* hot */";

    pub(crate) fn load() -> io::Result<HotFixture> {
        let f = Self::FILE;
        let mut b = ProgBuilder::new();
        b.func(Self::FUNC_NAME, Linkage::Global);
        b.line(f, 41, 11, "    __u64 acc = 1;");
        b.emit(mov64_imm(R6, 1));
        let start = b.pc() as u32;
        b.line(f, Self::HOT_LINE, 15, Self::HOT_TEXT);
        emit_hot_steps(&mut b, R6);
        let end = b.pc() as u32;
        b.line(f, 43, 16, "    return acc & 0;");
        b.emit(mov64_reg(R0, R6));
        b.emit(alu64_imm(BPF_AND, R0, 0));
        b.emit(exit());
        let prog = load_program(sys::BPF_PROG_TYPE_SOCKET_FILTER, Self::PROG_NAME, &b)?;
        Ok(HotFixture {
            prog,
            file: Self::FILE,
            func_name: Self::FUNC_NAME,
            hot_line: Self::HOT_LINE,
            hot_text: Self::HOT_TEXT,
            hot_insns: start..end,
        })
    }

    /// Drive the program from a background thread for `duration`.
    pub(crate) fn spawn_load(&self, duration: Duration) -> JoinHandle<u64> {
        spawn_test_run_load(self.prog.fd(), HOT_REPEAT, duration)
    }
}

/// (c) Socket filter whose main calls a bpf-to-bpf subprogram holding the
/// hot code.
#[derive(Debug)]
pub(crate) struct SubprogFixture {
    pub prog: LoadedProg,
    pub file: &'static str,
    pub main_func: &'static str,
    pub sub_func: &'static str,
    /// Loaded-insn index where the subprogram starts.
    pub sub_insn_off: u32,
    pub hot_line: u32,
    pub hot_text: &'static str,
    pub hot_insns: std::ops::Range<u32>,
}

impl SubprogFixture {
    pub(crate) const PROG_NAME: &'static str = "brr_fx_sub";
    pub(crate) const MAIN_FUNC: &'static str = "brr_fx_subprog_main";
    pub(crate) const SUB_FUNC: &'static str = "brr_fx_subprog_hot_path";
    pub(crate) const FILE: &'static str = "/src/brr-fixtures/subprog.c";
    pub(crate) const HOT_LINE: u32 = 13;
    pub(crate) const HOT_TEXT: &'static str = "    acc = acc * 31 + i; /* subprog hot */";

    pub(crate) fn load() -> io::Result<SubprogFixture> {
        let f = Self::FILE;
        let mut b = ProgBuilder::new();
        // main: insns 0..=2
        b.func(Self::MAIN_FUNC, Linkage::Global);
        b.line(f, 22, 15, "    __u64 r = brr_fx_subprog_hot_path();");
        let call_at = b.emit(call_pseudo(0));
        b.line(f, 23, 14, "    return r & 0;");
        b.emit(alu64_imm(BPF_AND, R0, 0));
        b.emit(exit());
        // subprog
        let sub = b.pc();
        b.func(Self::SUB_FUNC, Linkage::Static);
        b.line(f, 12, 11, "    __u64 acc = 1;");
        b.emit(mov64_imm(R0, 1));
        let start = b.pc() as u32;
        b.line(f, Self::HOT_LINE, 15, Self::HOT_TEXT);
        emit_hot_steps(&mut b, R0);
        let end = b.pc() as u32;
        b.line(f, 14, 5, "    return acc;");
        b.emit(exit());
        b.patch_call(call_at, sub);
        let prog = load_program(sys::BPF_PROG_TYPE_SOCKET_FILTER, Self::PROG_NAME, &b)?;
        Ok(SubprogFixture {
            prog,
            file: Self::FILE,
            main_func: Self::MAIN_FUNC,
            sub_func: Self::SUB_FUNC,
            sub_insn_off: sub as u32,
            hot_line: Self::HOT_LINE,
            hot_text: Self::HOT_TEXT,
            hot_insns: start..end,
        })
    }

    pub(crate) fn spawn_load(&self, duration: Duration) -> JoinHandle<u64> {
        spawn_test_run_load(self.prog.fd(), HOT_REPEAT, duration)
    }
}

/// (d) Socket filter whose hot line calls a helper many times.
#[derive(Debug)]
pub(crate) struct HelperFixture {
    pub prog: LoadedProg,
    pub file: &'static str,
    pub func_name: &'static str,
    pub hot_line: u32,
    pub hot_text: &'static str,
    pub hot_insns: std::ops::Range<u32>,
    /// Helper called on the hot line (BPF_FUNC_ktime_get_ns).
    pub helper_id: i32,
    pub helper_calls: usize,
}

impl HelperFixture {
    pub(crate) const PROG_NAME: &'static str = "brr_fx_helper";
    pub(crate) const FUNC_NAME: &'static str = "brr_fx_helper_main";
    pub(crate) const FILE: &'static str = "/src/brr-fixtures/helper.c";
    pub(crate) const HOT_LINE: u32 = 32;
    pub(crate) const HOT_TEXT: &'static str = "    t = bpf_ktime_get_ns(); /* helper hot */";
    pub(crate) const CALLS: usize = 500;
    /// Repeat per test run call (each run makes 500 helper calls).
    pub(crate) const REPEAT: u32 = 1000;

    pub(crate) fn load() -> io::Result<HelperFixture> {
        let f = Self::FILE;
        let mut b = ProgBuilder::new();
        b.func(Self::FUNC_NAME, Linkage::Global);
        b.line(f, 31, 11, "    __u64 t = 0;");
        b.emit(mov64_imm(R6, 0));
        let start = b.pc() as u32;
        b.line(f, Self::HOT_LINE, 9, Self::HOT_TEXT);
        for _ in 0..Self::CALLS {
            b.emit(call_helper(BPF_FUNC_KTIME_GET_NS));
            b.emit(mov64_reg(R6, R0));
        }
        let end = b.pc() as u32;
        b.line(f, 33, 14, "    return t & 0;");
        b.emit(mov64_reg(R0, R6));
        b.emit(alu64_imm(BPF_AND, R0, 0));
        b.emit(exit());
        let prog = load_program(sys::BPF_PROG_TYPE_SOCKET_FILTER, Self::PROG_NAME, &b)?;
        Ok(HelperFixture {
            prog,
            file: Self::FILE,
            func_name: Self::FUNC_NAME,
            hot_line: Self::HOT_LINE,
            hot_text: Self::HOT_TEXT,
            hot_insns: start..end,
            helper_id: BPF_FUNC_KTIME_GET_NS,
            helper_calls: Self::CALLS,
        })
    }

    pub(crate) fn spawn_load(&self, duration: Duration) -> JoinHandle<u64> {
        spawn_test_run_load(self.prog.fd(), Self::REPEAT, duration)
    }
}

/// (i) Socket filter for the native-code listing: a helper call, a HASH
/// map lookup (which the kernel turns into a direct call of its lookup
/// function), a bounded loop (a backward branch) and a bpf-to-bpf call of
/// a subprogram that itself calls a helper.
#[derive(Debug)]
pub(crate) struct JitFixture {
    pub prog: LoadedProg,
    pub map: LoadedMap,
}

impl JitFixture {
    pub(crate) const PROG_NAME: &'static str = "brr_fx_jit";
    pub(crate) const MAIN_FUNC: &'static str = "brr_fx_jit_main";
    pub(crate) const SUB_FUNC: &'static str = "brr_fx_jit_clock_sub";
    pub(crate) const FILE: &'static str = "/src/brr-fixtures/jit.c";
    pub(crate) const MAP_NAME: &'static str = "brr_fx_jit_map";
    /// Loop iterations.
    pub(crate) const ROUNDS: i32 = 16;

    /// Each run reads map[rand & 3], mixes it 16 times, adds the clock's
    /// low byte and writes it back; returns 0.
    pub(crate) fn load() -> io::Result<JitFixture> {
        let map = create_map(Self::MAP_NAME, sys::BPF_MAP_TYPE_HASH, 4, 8, 4)?;
        for key in 0..4 {
            map.set_u64(key, u64::from(key))?;
        }
        let f = Self::FILE;
        let mut b = ProgBuilder::new();
        b.func(Self::MAIN_FUNC, Linkage::Global);
        b.line(f, 51, 5, "    __u32 key = bpf_get_prandom_u32() & 3;");
        b.emit(call_helper(BPF_FUNC_GET_PRANDOM_U32));
        b.emit(alu64_imm(BPF_AND, R0, 3));
        b.emit(stx_mem(BPF_W, R10, R0, -4));
        b.line(
            f,
            52,
            18,
            "    __u64 *val = bpf_map_lookup_elem(&brr_fx_jit_map, &key);",
        );
        b.emit(mov64_reg(R2, R10));
        b.emit(alu64_imm(BPF_ADD, R2, -4));
        use std::os::fd::AsRawFd;
        b.emit_all(&ld_map_fd(R1, map.fd.as_raw_fd()));
        b.emit(call_helper(BPF_FUNC_MAP_LOOKUP_ELEM));
        b.line(f, 53, 9, "    if (!val)");
        let skip = b.emit(jmp_imm(BPF_JEQ, R0, 0, 0));
        b.line(f, 54, 11, "    __u64 acc = *val;");
        b.emit(mov64_reg(R9, R0));
        b.emit(ldx_mem(BPF_DW, R8, R9, 0));
        b.line(f, 55, 14, "    for (int i = 0; i < 16; i++)");
        b.emit(mov64_imm(R7, 0));
        let top = b.pc();
        b.line(f, 56, 13, "        acc = acc * 3 + i;");
        b.emit(alu64_imm(BPF_MUL, R8, 3));
        b.emit(alu64_reg(BPF_ADD, R8, R7));
        b.line(f, 55, 33, "    for (int i = 0; i < 16; i++)");
        b.emit(alu64_imm(BPF_ADD, R7, 1));
        let back = b.pc();
        b.emit(jmp_imm(
            BPF_JLT,
            R7,
            Self::ROUNDS,
            (top as i16) - (back as i16) - 1,
        ));
        b.line(f, 57, 9, "    acc += brr_fx_jit_clock_sub();");
        let call_at = b.emit(call_pseudo(0));
        b.emit(alu64_reg(BPF_ADD, R8, R0));
        b.line(f, 58, 10, "    *val = acc;");
        b.emit(stx_mem(BPF_DW, R9, R8, 0));
        let out = b.pc();
        b.line(f, 59, 5, "    return 0;");
        b.emit(mov64_imm(R0, 0));
        b.emit(exit());
        b.insns[skip].off = (out - skip - 1) as i16;
        let sub = b.pc();
        b.func(Self::SUB_FUNC, Linkage::Static);
        b.line(f, 63, 12, "    return bpf_ktime_get_ns() & 0xff;");
        b.emit(call_helper(BPF_FUNC_KTIME_GET_NS));
        b.emit(alu64_imm(BPF_AND, R0, 0xff));
        b.emit(exit());
        b.patch_call(call_at, sub);
        let prog = load_program(sys::BPF_PROG_TYPE_SOCKET_FILTER, Self::PROG_NAME, &b)?;
        Ok(JitFixture { prog, map })
    }
}

/// (j) The largest program the fixtures make, for timing `dump --jited`:
/// a main function calling `funcs` subprograms of `steps` arithmetic steps
/// each, a line record every 8 steps and a helper call every 64.
#[derive(Debug)]
pub(crate) struct LargeFixture {
    pub prog: LoadedProg,
}

impl LargeFixture {
    pub(crate) const PROG_NAME: &'static str = "brr_fx_large";
    pub(crate) const FILE: &'static str = "/src/brr-fixtures/large.c";

    pub(crate) fn load(funcs: usize, steps: usize) -> io::Result<LargeFixture> {
        let f = Self::FILE;
        let mut b = ProgBuilder::new();
        b.func("brr_fx_large_main", Linkage::Global);
        b.line(f, 1, 5, "    __u64 acc = 0;");
        b.emit(mov64_imm(R6, 0));
        let mut calls = Vec::new();
        for i in 0..funcs {
            b.line(f, 2 + i as u32, 5, &format!("    acc += step_{i}();"));
            calls.push(b.emit(call_pseudo(0)));
            b.emit(alu64_reg(BPF_ADD, R6, R0));
        }
        b.line(f, 2 + funcs as u32, 5, "    return acc & 0;");
        b.emit(mov64_reg(R0, R6));
        b.emit(alu64_imm(BPF_AND, R0, 0));
        b.emit(exit());
        let mut line = 1000;
        for (i, call) in calls.into_iter().enumerate() {
            let start = b.pc();
            b.func(&format!("brr_fx_large_step_{i}"), Linkage::Static);
            b.line(f, line, 5, "    __u64 acc = 1;");
            b.emit(mov64_imm(R6, 1));
            for s in 0..steps {
                if s % 64 == 63 {
                    line += 1;
                    b.line(f, line, 12, "    acc ^= bpf_ktime_get_ns();");
                    b.emit(call_helper(BPF_FUNC_KTIME_GET_NS));
                    b.emit(alu64_reg(BPF_XOR, R6, R0));
                }
                if s % 8 == 0 {
                    line += 1;
                    b.line(f, line, 9, &format!("    acc = acc * 31 + {s};"));
                }
                b.emit(alu64_imm(BPF_MUL, R6, 31));
                b.emit(alu64_imm(BPF_ADD, R6, s as i32));
            }
            line += 1;
            b.line(f, line, 5, "    return acc;");
            b.emit(mov64_reg(R0, R6));
            b.emit(exit());
            b.patch_call(call, start);
            line += 10;
        }
        let prog = load_program(sys::BPF_PROG_TYPE_SOCKET_FILTER, Self::PROG_NAME, &b)?;
        Ok(LargeFixture { prog })
    }
}

/// Raw tracepoint that always exists and fires often.
pub(crate) const RAW_TP_NAME: &str = "sched_switch";

fn load_return_zero(prog_type: u32, name: &str) -> io::Result<LoadedProg> {
    let mut b = ProgBuilder::new();
    b.emit(mov64_imm(R0, 0));
    b.emit(exit());
    load_program(prog_type, name, &b)
}

/// (e) Raw-tracepoint program attached to `sched_switch` via a bpf_link.
///
/// On drop the link id disappears at once, but the kernel releases the
/// program only after an RCU grace period (deferred link dealloc), so a
/// test checking the prog id is gone should poll with [`wait_until`].
#[derive(Debug)]
pub(crate) struct RawTpLinkFixture {
    pub prog: LoadedProg,
    pub link: OwnedFd,
    pub link_id: u32,
    pub tp_name: &'static str,
}

impl RawTpLinkFixture {
    pub(crate) const PROG_NAME: &'static str = "brr_fx_rawtp";

    pub(crate) fn load() -> io::Result<RawTpLinkFixture> {
        Self::load_named(Self::PROG_NAME)
    }

    pub(crate) fn load_named(name: &str) -> io::Result<RawTpLinkFixture> {
        let prog = load_return_zero(sys::BPF_PROG_TYPE_RAW_TRACEPOINT, name)?;
        let link = sys::raw_tracepoint_open(prog.fd(), RAW_TP_NAME)?;
        let link_id = sys::link_info(link.as_fd())?.id;
        Ok(RawTpLinkFixture {
            prog,
            link,
            link_id,
            tp_name: RAW_TP_NAME,
        })
    }
}

/// (f) A prog, a map and a raw_tp link pinned under a fresh bpffs dir:
/// `<dir>/prog_a`, `<dir>/sub/prog_b` (same prog), `<dir>/map_a`,
/// `<dir>/link_a`.
#[derive(Debug)]
pub(crate) struct PinnedFixture {
    pub dir: PinDir,
    pub prog: LoadedProg,
    pub map: LoadedMap,
    pub rawtp: RawTpLinkFixture,
    pub prog_a: PathBuf,
    pub prog_b: PathBuf,
    pub map_a: PathBuf,
    pub link_a: PathBuf,
}

impl PinnedFixture {
    pub(crate) const PROG_NAME: &'static str = "brr_fx_pinned";
    pub(crate) const MAP_NAME: &'static str = "brr_fx_pin_map";
    pub(crate) const TP_PROG_NAME: &'static str = "brr_fx_pin_tp";

    pub(crate) fn load() -> io::Result<PinnedFixture> {
        let mut dir = PinDir::new()?;
        let prog = load_return_zero(sys::BPF_PROG_TYPE_SOCKET_FILTER, Self::PROG_NAME)?;
        let map = create_map(
            Self::MAP_NAME,
            sys::BPF_MAP_TYPE_ARRAY,
            FX_MAP_KEY_SIZE,
            FX_MAP_VALUE_SIZE,
            FX_MAP_MAX_ENTRIES,
        )?;
        let rawtp = RawTpLinkFixture::load_named(Self::TP_PROG_NAME)?;
        let prog_a = dir.pin(prog.fd(), "prog_a")?;
        let prog_b = dir.pin(prog.fd(), "sub/prog_b")?;
        let map_a = dir.pin(map.fd(), "map_a")?;
        let link_a = dir.pin(rawtp.link.as_fd(), "link_a")?;
        Ok(PinnedFixture {
            dir,
            prog,
            map,
            rawtp,
            prog_a,
            prog_b,
            map_a,
            link_a,
        })
    }

    /// The pin directory.
    pub(crate) fn path(&self) -> &Path {
        &self.dir.path
    }
}

/// (h) Program loaded without any BTF (no func_info/line_info).
#[derive(Debug)]
pub(crate) struct NoBtfFixture {
    pub prog: LoadedProg,
}

impl NoBtfFixture {
    pub(crate) const PROG_NAME: &'static str = "brr_fx_nobtf";

    pub(crate) fn load() -> io::Result<NoBtfFixture> {
        Ok(NoBtfFixture {
            prog: load_return_zero(sys::BPF_PROG_TYPE_SOCKET_FILTER, Self::PROG_NAME)?,
        })
    }
}

/// `bpf_get_current_pid_tgid` (enum bpf_func_id).
const BPF_FUNC_GET_CURRENT_PID_TGID: i32 = 14;
/// The raw tracepoint every system call enters through.
pub(crate) const SYS_ENTER_TP: &str = "sys_enter";

/// (i) The hot loop in a raw-tracepoint program on `sys_enter`, run only
/// for the system calls of one process. Unlike BPF_PROG_TEST_RUN, which
/// disables bottom halves around each run, a tracepoint runs BPF code with
/// interrupts and softirqs enabled, so interrupts land on it and their
/// softirqs run on top of it, as on a production host.
#[derive(Debug)]
pub(crate) struct SyscallHotFixture {
    pub prog: LoadedProg,
    pub link: OwnedFd,
}

impl SyscallHotFixture {
    pub(crate) const PROG_NAME: &'static str = "brr_fx_sysenter";
    pub(crate) const FUNC_NAME: &'static str = "brr_fx_sys_enter_hot";
    pub(crate) const FILE: &'static str = "/src/brr-fixtures/sys_enter.c";
    pub(crate) const HOT_LINE: u32 = 27;
    pub(crate) const HOT_TEXT: &'static str = "    acc = acc * 31 + i; /* per syscall */";

    /// Load and attach, running the loop for the process `tgid` only.
    pub(crate) fn load(tgid: u32) -> io::Result<SyscallHotFixture> {
        Self::load_filtered(BPF_JNE, tgid)
    }

    /// Load and attach, running the loop for processes `first` and later
    /// (those started after it, until pids wrap).
    pub(crate) fn load_from(first: u32) -> io::Result<SyscallHotFixture> {
        Self::load_filtered(BPF_JLT, first)
    }

    /// The loop skipped when the current tgid `skip_op` `tgid`.
    fn load_filtered(skip_op: u8, tgid: u32) -> io::Result<SyscallHotFixture> {
        let f = Self::FILE;
        let mut b = ProgBuilder::new();
        b.func(Self::FUNC_NAME, Linkage::Global);
        b.line(
            f,
            25,
            9,
            "    if (bpf_get_current_pid_tgid() >> 32 != TGID)",
        );
        b.emit(call_helper(BPF_FUNC_GET_CURRENT_PID_TGID));
        b.emit(alu64_imm(BPF_RSH, R0, 32));
        let skip = b.emit(jmp_imm(skip_op, R0, tgid as i32, 0));
        b.line(f, 26, 11, "    __u64 acc = 1;");
        b.emit(mov64_imm(R6, 1));
        b.line(f, Self::HOT_LINE, 15, Self::HOT_TEXT);
        emit_hot_steps(&mut b, R6);
        let out = b.pc();
        b.insns[skip].off = (out - skip - 1) as i16;
        b.line(f, 28, 5, "    return 0;");
        b.emit(mov64_imm(R0, 0));
        b.emit(exit());
        let prog = load_program(sys::BPF_PROG_TYPE_RAW_TRACEPOINT, Self::PROG_NAME, &b)?;
        let link = sys::raw_tracepoint_open(prog.fd(), SYS_ENTER_TP)?;
        Ok(SyscallHotFixture { prog, link })
    }

    /// Make system calls from a background thread for `duration` (each one
    /// runs the program once); joins to the number made.
    pub(crate) fn spawn_syscalls(duration: Duration) -> JoinHandle<u64> {
        let deadline = Instant::now() + duration;
        std::thread::spawn(move || {
            let mut calls = 0u64;
            while Instant::now() < deadline {
                for _ in 0..64 {
                    std::hint::black_box(rustix::process::getppid());
                }
                calls += 64;
            }
            calls
        })
    }
}

// ---------------------------------------------------------------------------
// Bulk objects
// ---------------------------------------------------------------------------

/// Raise RLIMIT_NOFILE's soft limit so at least `needed` more fds fit
/// (best effort, up to the hard limit).
pub(crate) fn raise_nofile_limit(needed: usize) {
    use rustix::process::{getrlimit, setrlimit, Resource, Rlimit};
    let lim = getrlimit(Resource::Nofile);
    let want = (needed as u64).saturating_add(256);
    if lim.current.is_none_or(|cur| cur >= want) {
        return;
    }
    let raised = Rlimit {
        current: Some(lim.maximum.map_or(want, |max| want.min(max))),
        maximum: lim.maximum,
    };
    let _ = setrlimit(Resource::Nofile, raised);
}

/// Minimal program instructions: `r0 = 0; exit`.
pub(crate) const MINIMAL_PROG: [Insn; 2] = [mov64_imm(R0, 0), exit()];

/// Load one minimal socket filter without BTF (fast path, no info query).
pub(crate) fn load_minimal(name: &str) -> io::Result<OwnedFd> {
    let license = c"GPL";
    let mut attr = sys::ProgLoadAttr {
        prog_type: sys::BPF_PROG_TYPE_SOCKET_FILTER,
        insn_cnt: MINIMAL_PROG.len() as u32,
        insns: MINIMAL_PROG.as_ptr() as u64,
        license: license.as_ptr() as u64,
        prog_name: sys::obj_name(name),
        ..Default::default()
    };
    // SAFETY: insns and license point at live static data of the stated
    // sizes; no log/BTF pointers.
    unsafe { sys::sys_bpf_fd(sys::BPF_PROG_LOAD, &mut attr) }
}

/// Load `n_progs` minimal programs (`brr_fx_m<i>`) and create `n_maps`
/// ARRAY maps (`brr_fx_mm<i>`, key 4, value 8, max 4). Programs come first
/// in the returned vector.
pub(crate) fn try_load_many(n_progs: usize, n_maps: usize) -> io::Result<Vec<OwnedFd>> {
    raise_nofile_limit(n_progs + n_maps);
    let mut fds = Vec::with_capacity(n_progs + n_maps);
    for i in 0..n_progs {
        fds.push(load_minimal(&format!("brr_fx_m{i}"))?);
    }
    for i in 0..n_maps {
        fds.push(sys::map_create(
            sys::BPF_MAP_TYPE_ARRAY,
            &format!("brr_fx_mm{i}"),
            FX_MAP_KEY_SIZE,
            FX_MAP_VALUE_SIZE,
            FX_MAP_MAX_ENTRIES,
        )?);
    }
    Ok(fds)
}

/// Like [`try_load_many`], panicking on failure.
pub(crate) fn load_many(n_progs: usize, n_maps: usize) -> Vec<OwnedFd> {
    try_load_many(n_progs, n_maps).unwrap_or_else(|e| panic!("load_many({n_progs}, {n_maps}): {e}"))
}
