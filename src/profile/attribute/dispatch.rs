//! Dispatch and statistics: which kernel frames are a hook's path to and
//! from a BPF program, which are the clock reads that runtime statistics
//! add, and the walk that sorts a callchain with no program frame into
//! them.
//!
//! The table was checked against the callchains `perf record -a -g` takes
//! on Linux 6.18 (x86-64, a KVM guest: raw tracepoints on `task_rename` and
//! `sys_enter`, socket filters on AF_UNIX datagrams and on TCP, a classic
//! tracepoint through a perf event; generic and veth's native XDP, a
//! cls_bpf filter, tcx ingress and egress, cgroup_skb egress and
//! cgroup/sock_create, recorded by `scripts/record-dispatch-chains`), on
//! Debian's 6.1 and 6.12 under QEMU (a kprobe, a kretprobe and a
//! kprobe_multi link, fentry and fexit on `__set_task_comm`; recorded by
//! `scripts/kernel-matrix --record-chains`), and, for the frames no kernel
//! here took (the kprobe breakpoint path), against the kernel sources of
//! 5.10, 6.1, 6.6 and 6.18: the names below exist, as functions, in each
//! of them, unless a line says otherwise.

use std::collections::HashMap;

use crate::kernel::kallsyms::{Kallsyms, Symbol};
use crate::model::profile::{DispatchKind, DispatchSamples};

/// What a frame of the table is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    /// A dispatcher: every sample beneath it that is not in a program is
    /// the hook's dispatch (its locking, its calls, its statistics).
    Path,
    /// A slow path that also does other work (audit, seccomp, other
    /// tracers): only its own samples are dispatch.
    Slow,
    /// A function that runs for every packet, filter or not, and inlines
    /// the program's run when there is one: only its own samples in that
    /// inlined run (between its clock reads, and the counter updates after
    /// them) are dispatch and statistics, the rest of it is not.
    Inline,
    /// A clock read that statistics add (counted when beneath a Path).
    Clock,
}

struct Frame {
    name: &'static str,
    /// `name` is a prefix of the symbol (else the whole symbol).
    prefix: bool,
    kind: Option<DispatchKind>,
    role: Role,
}

const fn path(name: &'static str, prefix: bool, kind: DispatchKind) -> Frame {
    Frame {
        name,
        prefix,
        kind: Some(kind),
        role: Role::Path,
    }
}

const fn slow(name: &'static str, prefix: bool, kind: DispatchKind) -> Frame {
    Frame {
        name,
        prefix,
        kind: Some(kind),
        role: Role::Slow,
    }
}

const fn inline(name: &'static str, kind: DispatchKind) -> Frame {
    Frame {
        name,
        prefix: false,
        kind: Some(kind),
        role: Role::Inline,
    }
}

const fn clock(name: &'static str) -> Frame {
    Frame {
        name,
        prefix: false,
        kind: None,
        role: Role::Clock,
    }
}

use DispatchKind as K;

/// The one table. Prefixes end in `_`; compiler clones (`.isra.0`,
/// `.constprop.0`) match their base name.
const FRAMES: &[Frame] = &[
    // Syscall tracepoints: any sys_enter/sys_exit tracepoint (raw or
    // classic) puts every task on these slow paths (kernel/entry/common.c;
    // 5.10 has syscall_exit_work as well, arm64 el0_svc_common calls
    // syscall_trace_enter). Seen on 6.18.
    slow("syscall_trace_enter", false, K::SyscallSlowPath),
    slow("syscall_exit_work", false, K::SyscallSlowPath),
    slow("syscall_trace_exit", false, K::SyscallSlowPath),
    // Raw tracepoints and tp_btf: the tracepoint's iterator calls the
    // probe `__bpf_trace_<tp>`, which jumps to `bpf_trace_run<N>`; on 6.18
    // both are tail calls, so only bpf_trace_run<N> shows. Seen on 6.18.
    path("bpf_trace_run", true, K::RawTracepoint),
    path("__bpf_trace_", true, K::RawTracepoint),
    slow("__traceiter_", true, K::RawTracepoint),
    // Classic tracepoints through a perf event (BCC, bpftrace): the event
    // class's perf probe, then trace_call_bpf. Seen on 6.18.
    path("perf_trace_run_bpf_submit", false, K::PerfTracepoint),
    path("perf_syscall_enter", false, K::PerfTracepoint),
    path("perf_syscall_exit", false, K::PerfTracepoint),
    path("perf_trace_", true, K::PerfTracepoint),
    // Shared by classic tracepoints and kprobes: the kind is the next
    // dispatcher's outward.
    Frame {
        name: "trace_call_bpf",
        prefix: false,
        kind: None,
        role: Role::Path,
    },
    // Kprobes: ftrace-based (kprobe_ftrace_handler), breakpoint
    // (kprobe_int3_handler) or optimized (optimized_callback), then the
    // trace_kprobe dispatcher (kernel/trace/trace_kprobe.c). The ftrace
    // path seen on 6.1 and 6.12, where kprobe_dispatcher is a tail call.
    path("kprobe_dispatcher", false, K::Kprobe),
    path("kprobe_perf_func", false, K::Kprobe),
    path("kprobe_ftrace_handler", false, K::Kprobe),
    path("kprobe_int3_handler", false, K::Kprobe),
    path("optimized_callback", false, K::Kprobe),
    path("opt_pre_handler", false, K::Kprobe),
    path("aggr_pre_handler", false, K::Kprobe),
    // Kretprobes: the return trampoline and its handler (rethook since
    // 5.19; kretprobe_trampoline_handler before). Rethook seen on 6.12.
    path("kretprobe_dispatcher", false, K::Kretprobe),
    path("kretprobe_perf_func", false, K::Kretprobe),
    path("pre_handler_kretprobe", false, K::Kretprobe),
    path("kretprobe_rethook_handler", false, K::Kretprobe),
    path("rethook_trampoline_handler", false, K::Kretprobe),
    path("arch_rethook_trampoline_callback", false, K::Kretprobe),
    path("__kretprobe_trampoline_handler", false, K::Kretprobe),
    path("arch_rethook_trampoline", false, K::Kretprobe),
    path("__kretprobe_trampoline", false, K::Kretprobe),
    path("trampoline_handler", false, K::Kretprobe),
    // kprobe_multi links over fprobe (5.18 and later). Seen on 6.12.
    path("kprobe_multi_link_prog_run", false, K::KprobeMulti),
    path("kprobe_multi_link_handler", false, K::KprobeMulti),
    path("kprobe_multi_link_exit_handler", false, K::KprobeMulti),
    path("fprobe_handler", false, K::KprobeMulti),
    path("fprobe_exit_handler", false, K::KprobeMulti),
    path("fprobe_entry", false, K::KprobeMulti),
    path("fprobe_return", false, K::KprobeMulti),
    // fentry, fexit, fmod_ret and LSM programs: the trampoline image
    // (`bpf_trampoline_<key>` in kallsyms) and its enter/exit calls. Seen
    // on 6.1 and 6.12 (`__bpf_prog_enter_recur`, `__bpf_prog_exit_recur`).
    // An fexit or fmod_ret trampoline calls the traced function itself:
    // what runs beneath it, outside its enter/exit calls, is that
    // function's own work (recorded on 6.1 and 6.12), so only its own
    // samples are dispatch.
    slow("bpf_trampoline_", true, K::Trampoline),
    path("__bpf_prog_enter", true, K::Trampoline),
    path("__bpf_prog_exit", true, K::Trampoline),
    path("__bpf_tramp_enter", false, K::Trampoline),
    path("__bpf_tramp_exit", false, K::Trampoline),
    // XDP: the static dispatcher native drivers call, and generic XDP
    // (seen on 6.18, where the skb's copy do_xdp_generic makes for a
    // program, pskb_expand_head, is most of its dispatch).
    path("bpf_dispatcher_xdp_func", false, K::Xdp),
    path("bpf_prog_run_generic_xdp", false, K::Xdp),
    path("netif_receive_generic_xdp", false, K::Xdp),
    path("do_xdp_generic", false, K::Xdp),
    // A native driver inlines the program's run, and its clock reads,
    // into its receive function: veth's recorded on 6.18 (an skb, or a
    // frame redirected to it). Other drivers' (mlx5e_xdp_handle,
    // i40e_run_xdp, ...) are not here: there only the call into
    // bpf_dispatcher_xdp_func counts.
    inline("veth_xdp_rcv_skb", K::Xdp),
    inline("veth_xdp_rcv_one", K::Xdp),
    // tc and tcx: the classifier and action, and the hooks in the
    // packet path that run them (tcx_run is inlined there since 6.6).
    // Recorded on 6.18: tc_run (the classic tc entry since 6.6) and
    // __tcf_classify (tcf_classify's body) hold their own samples, a
    // fifth to a quarter of a cls_bpf filter's, which sorted as no dispatch before;
    // sch_handle_ingress and sch_handle_egress are inlined into the two
    // packet paths, and with them a tcx program's run and its clock reads.
    path("cls_bpf_classify", false, K::Tc),
    path("tcf_bpf_act", false, K::Tc),
    slow("sch_handle_ingress", false, K::Tc),
    slow("sch_handle_egress", false, K::Tc),
    slow("tcf_classify", false, K::Tc),
    slow("__tcf_classify", false, K::Tc),
    slow("tc_run", false, K::Tc),
    inline("__netif_receive_skb_core", K::Tc),
    inline("__dev_queue_xmit", K::Tc),
    // cgroup programs (kernel/bpf/cgroup.c). Seen on 6.18.
    path("__cgroup_bpf_run_filter_", true, K::Cgroup),
    path("__cgroup_bpf_run_lsm_", true, K::Cgroup),
    path("__cgroup_bpf_check_dev_permission", false, K::Cgroup),
    path("bpf_prog_run_array_cg", false, K::Cgroup),
    // A cgroup skb program's run with its statistics, out of line on
    // 6.18 (a socket filter's is inlined into sk_filter_trim_cap): the
    // kind is the next dispatcher's outward. In the table so that its
    // clock calls' return sites and counter updates count as statistics,
    // which sorted as dispatch before (recorded on 6.18).
    Frame {
        name: "__bpf_prog_run_save_cb",
        prefix: false,
        kind: None,
        role: Role::Path,
    },
    // Socket filters: on a socket (sk_filter_trim_cap) and on a packet
    // socket (run_filter in af_packet). Seen on 6.18. Both run on every
    // packet, filter or not, and inline the filter's run: measured on
    // 6.18 with an AF_UNIX pair, sk_filter_trim_cap's head (its checks up
    // to the filter's test) took 31-36 ns a send with and without a
    // filter, so only the filter's block counts: its run, and its setup
    // and trim where the capture shows the RCU section that holds them
    // (see ClockSites::part).
    inline("sk_filter_trim_cap", K::SocketFilter),
    inline("run_filter", K::SocketFilter),
    path("bpf_prog_run_clear_cb", false, K::SocketFilter),
    // The clock reads of statistics (`__bpf_prog_run` and the trampoline's
    // enter/exit read sched_clock twice per run): native, paravirtual
    // (KVM's pvclock seen on 6.18), Hyper-V, Xen, and arm64's counter.
    clock("sched_clock"),
    clock("sched_clock_noinstr"),
    clock("native_sched_clock"),
    clock("paravirt_sched_clock"),
    clock("kvm_sched_clock_read"),
    clock("kvm_clock_read"),
    clock("pvclock_clocksource_read"),
    clock("pvclock_clocksource_read_nowd"),
    clock("xen_sched_clock"),
    clock("read_hv_sched_clock_tsc"),
    clock("arch_counter_read"),
    clock("arch_timer_read_counter"),
    // The trampoline's counter updates (a function of their own there).
    clock("update_prog_stats"),
];

/// Frames where an interrupt or softirq begins: what runs above them is
/// the interrupt's, not the dispatch it landed on.
const INTERRUPT_PREFIXES: &[&str] = &[
    "asm_common_interrupt",
    "asm_sysvec_",
    "sysvec_",
    "common_interrupt",
    "handle_softirqs",
    "__do_softirq",
    "irq_exit_rcu",
    "el1_interrupt",
];

/// Frames between a probe's handler and the function it traces: ftrace's
/// callers and the breakpoint's entry.
const PROBE_ENTRY: &[&str] = &[
    "ftrace_trampoline",
    "ftrace_caller",
    "ftrace_regs_caller",
    "ftrace_call",
    "ftrace_regs_call",
    "ftrace_ops_list_func",
    "arch_ftrace_ops_list_func",
    "ftrace_graph_func",
    "function_graph_enter_regs",
    "exc_int3",
    "asm_exc_int3",
    "do_int3",
];

/// The ftrace entries of [`PROBE_ENTRY`] that a probe on one function
/// gets (a dynamic trampoline per ftrace_ops, or the shared caller).
const FTRACE_ENTRY: &[&str] = &["ftrace_trampoline", "ftrace_caller", "ftrace_regs_caller"];

/// The bytes after a dispatcher's second clock read that the kernel
/// compiles the counter updates into (`u64_stats_inc`, `u64_stats_add`
/// and the jump back: 21 bytes in bpf_trace_run2 on 6.18 x86-64).
const COUNTER_TAIL: u64 = 48;

/// The bytes after `rcu_read_lock()` returns into a socket filter's
/// function that load `sk->sk_filter`, test it and branch on it, which
/// every packet runs (12 on 6.18 x86-64: a 7-byte load, a 3-byte test and
/// a 2-byte branch).
const FILTER_TEST: u64 = 12;

/// The bytes after `rcu_read_unlock()` returns that every packet runs to
/// leave the function (the epilogue and `ret`).
const EPILOGUE: u64 = 12;

/// The call to `rcu_read_unlock()` itself (a `call rel32`), which every
/// packet runs too.
const CALL: u64 = 5;

fn lookup(name: &str) -> Option<&'static Frame> {
    let base = name.split('.').next().unwrap_or(name);
    FRAMES.iter().find(|f| {
        if f.prefix {
            base.starts_with(f.name)
        } else {
            base == f.name
        }
    })
}

/// The hook a frame names: `__traceiter_<tp>`, `__bpf_trace_<tp>`, or
/// the tracepoint event class of `perf_trace_<class>`.
fn named_hook(name: &str) -> Option<&str> {
    let base = name.split('.').next().unwrap_or(name);
    ["__traceiter_", "__bpf_trace_", "perf_trace_"]
        .iter()
        .find_map(|p| base.strip_prefix(p))
        .filter(|h| !h.is_empty() && *h != "run_bpf_submit")
}

/// A sample with no program frame, sorted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Sorted {
    pub kind: DispatchKind,
    /// The hook the chain names, if any.
    pub hook: Option<String>,
    pub args: Option<usize>,
    pub stats: bool,
}

/// Frames of one chain resolved, leaf first.
type Resolved<'a> = Vec<(u64, Option<Symbol<'a>>)>;

fn resolve<'a>(chain: &[u64], ksyms: &'a Kallsyms) -> Resolved<'a> {
    chain.iter().map(|&a| (a, ksyms.resolve(a))).collect()
}

fn name_of<'a>(f: &(u64, Option<Symbol<'a>>)) -> &'a str {
    f.1.map_or("", |s| s.name)
}

/// The hook of a trampoline or probe: the traced function, the first
/// frame outside the dispatch frames.
fn traced_function(frames: &Resolved<'_>, from: usize) -> Option<String> {
    frames[from..]
        .iter()
        .map(name_of)
        .find(|n| !n.is_empty() && lookup(n).is_none() && !PROBE_ENTRY.contains(n))
        .map(|n| n.split('.').next().unwrap_or(n).to_string())
}

/// Where each dispatcher's clock calls return to (lowest and highest
/// return address), learnt from the chains whose leaf is a clock read;
/// and which dispatcher each ftrace trampoline calls, learnt from the
/// chains that pass through one.
#[derive(Debug, Default)]
pub(crate) struct ClockSites {
    /// Per function start, the first and last return site of its clock
    /// reads.
    clocks: HashMap<u64, (u64, u64)>,
    /// Per socket filter function's start, where its calls to
    /// `__rcu_read_lock` and `__rcu_read_unlock` return: the filter's
    /// block lies between them ([`ClockSites::part`]).
    brackets: HashMap<u64, (Option<u64>, Option<u64>)>,
    /// Per ftrace entry's start, the dispatcher kind it calls.
    entries: HashMap<u64, DispatchKind>,
}

impl ClockSites {
    fn learn(&mut self, frames: &Resolved<'_>) {
        self.learn_entry(frames);
        self.learn_bracket(frames);
        let Some(i) = frames
            .iter()
            .position(|f| lookup(name_of(f)).is_none_or(|r| r.role != Role::Clock))
        else {
            return;
        };
        if i == 0 {
            return;
        }
        if let (addr, Some(sym)) = frames[i] {
            // A slow path may inline the dispatch and its statistics
            // (sk_filter_trim_cap inlines bpf_prog_run_save_cb).
            if lookup(sym.name).is_some_and(|r| r.role != Role::Clock) {
                let e = self.clocks.entry(sym.start).or_insert((addr, addr));
                e.0 = e.0.min(addr);
                e.1 = e.1.max(addr);
            }
        }
    }

    /// A socket filter's function's RCU read-side section: its lock
    /// call's return site (the lowest seen) and its unlock call's (the
    /// highest).
    fn learn_bracket(&mut self, frames: &Resolved<'_>) {
        let [(_, Some(leaf)), (ret, Some(caller)), ..] = frames[..] else {
            return;
        };
        // Only a socket filter's function holds nothing but the filter in
        // its RCU section: __dev_queue_xmit's (tcx) holds the whole
        // transmit.
        if lookup(caller.name)
            .is_none_or(|r| r.role != Role::Inline || r.kind != Some(K::SocketFilter))
        {
            return;
        }
        let b = self.brackets.entry(caller.start).or_default();
        match leaf.name {
            "__rcu_read_lock" => b.0 = Some(b.0.map_or(ret, |x| x.min(ret))),
            "__rcu_read_unlock" => b.1 = Some(b.1.map_or(ret, |x| x.max(ret))),
            _ => {}
        }
    }

    /// A probe's ftrace trampoline (a dynamic `ftrace_trampoline`, or
    /// `ftrace_caller`) is there only for the probes on its function: the
    /// samples in its own code (saving and restoring registers: 28 % of a
    /// kprobe's dispatch samples recorded on 6.1, 14 % on 6.12) are
    /// theirs. It calls the dispatcher of whatever probes the function, so
    /// its kind is learnt from a chain where it sits beneath one.
    fn learn_entry(&mut self, frames: &Resolved<'_>) {
        for w in frames.windows(2) {
            let (Some(entry), Some(kind)) = (w[1].1, lookup(name_of(&w[0])).and_then(|r| r.kind))
            else {
                continue;
            };
            if FTRACE_ENTRY.contains(&entry.name) {
                self.entries.entry(entry.start).or_insert(kind);
            }
        }
    }

    /// The dispatch kind the ftrace entry at `start` was seen to call.
    fn entry_kind(&self, start: u64) -> Option<DispatchKind> {
        self.entries.get(&start).copied()
    }

    /// Whether `ip` in the dispatcher starting at `start` is its inlined
    /// statistics code: the instruction after its first clock read, or
    /// the counter updates after its last. A dispatcher with one clock
    /// read (a trampoline's `__bpf_prog_enter*`, seen on 6.1 and 6.12)
    /// has only the instruction after it.
    fn inlined(&self, start: u64, ip: u64) -> bool {
        self.clocks.get(&start).is_some_and(|&(first, last)| {
            ip == first || (first != last && ip >= last && ip < last + COUNTER_TAIL)
        })
    }

    /// For a function that inlines a program's run with statistics: Some
    /// (whether it is statistics) when `ip` is the filter's, None when it
    /// is the function's own work for every packet, or when no clock
    /// read was seen to return into it (no filter ran).
    ///
    /// The run itself lies from the first clock read to the counter
    /// updates after the last (between the two reads is the program's
    /// call, dispatch). Socket filters (`sk_filter_trim_cap`, af_packet's
    /// `run_filter`) also set the run up and trim the packet after it,
    /// all inside `rcu_read_lock(); filter = sk->sk_filter; if (filter)
    /// {...} rcu_read_unlock();`. When the capture saw both calls return
    /// into the function, what lies after the lock's return site (past the
    /// filter's load and test, [`FILTER_TEST`] bytes) and is not the
    /// unlock's call, its return and the epilogue ([`EPILOGUE`]) is the
    /// filter's block, dispatch: the compiler lays it out there, or out of
    /// line after the function's return (recorded on 6.18, where it is 9
    /// ns of the 110 a send that an AF_UNIX filter costs with statistics
    /// on). Without both (an RCU that inlines its lock), only the run
    /// counts.
    fn part(&self, start: u64, ip: u64) -> Option<bool> {
        let &(first, last) = self.clocks.get(&start)?;
        if first == last {
            return None;
        }
        if ip >= first && ip < last + COUNTER_TAIL {
            return Some(self.inlined(start, ip));
        }
        match self.brackets.get(&start) {
            Some(&(Some(lock), Some(unlock))) if lock < unlock => {
                let leave = unlock.saturating_sub(CALL)..unlock + EPILOGUE;
                let block = ip >= lock + FILTER_TEST && !leave.contains(&ip);
                block.then_some(false)
            }
            _ => None,
        }
    }
}

/// Sort one chain (leaf first) that has no program frame; None when it
/// is not a hook's dispatch.
fn sort(frames: &Resolved<'_>, sites: &ClockSites) -> Option<Sorted> {
    if let Some((_, Some(leaf))) = frames.first() {
        if let Some(kind) = sites.entry_kind(leaf.start) {
            let hook = match kind {
                K::Kprobe | K::Trampoline => traced_function(frames, 0),
                _ => None,
            };
            return Some(Sorted {
                kind,
                hook,
                args: None,
                stats: false,
            });
        }
    }
    let mut clock_leaf = false;
    // Whether every frame so far is a clock read.
    let mut clocks_only = true;
    for (i, f) in frames.iter().enumerate() {
        let name = name_of(f);
        if INTERRUPT_PREFIXES.iter().any(|p| name.starts_with(p)) {
            return None;
        }
        let Some(rule) = lookup(name) else {
            clocks_only = false;
            continue;
        };
        if rule.role == Role::Clock {
            clock_leaf |= i == 0;
            continue;
        }
        // Beneath a slow path only its own samples and the clock reads it
        // makes for statistics are dispatch.
        let slow = matches!(rule.role, Role::Slow | Role::Inline);
        if slow && i > 0 && !(clock_leaf && clocks_only) {
            return None;
        }
        let inline_stats = match (rule.role, f.1) {
            (Role::Inline, Some(sym)) if i == 0 => Some(sites.part(sym.start, f.0)?),
            _ => None,
        };
        // A shared dispatcher takes the kind of the next one outward.
        let kind = rule.kind.or_else(|| {
            frames[i + 1..]
                .iter()
                .find_map(|f| lookup(name_of(f)).and_then(|r| r.kind))
        })?;
        let inlined = i == 0 && f.1.is_some_and(|s| sites.inlined(s.start, f.0));
        let hook = match kind {
            K::Kprobe | K::Trampoline => traced_function(frames, i),
            // A return probe runs after its function returned, and one
            // kprobe_multi link covers many functions: no hook to name.
            K::Kretprobe | K::KprobeMulti => None,
            K::SyscallSlowPath => Some("sys_enter/sys_exit".to_string()),
            _ => frames[i..]
                .iter()
                .find_map(|f| named_hook(name_of(f)))
                .map(String::from),
        };
        let args = match (kind, &hook) {
            (K::RawTracepoint, None) => frames[i..].iter().find_map(|f| {
                let n = name_of(f).split('.').next()?;
                n.strip_prefix("bpf_trace_run")?.parse().ok()
            }),
            _ => None,
        };
        return Some(Sorted {
            kind,
            hook,
            args,
            stats: (clock_leaf && (rule.role == Role::Path || clocks_only))
                || inlined
                || inline_stats == Some(true),
        });
    }
    None
}

/// Sort every chain with no program frame (interned, leaf first, with its
/// sample count) into samples per dispatch kind and hook.
pub(crate) fn tally<'c>(
    chains: impl Iterator<Item = (&'c [u64], u64)> + Clone,
    ksyms: &Kallsyms,
) -> Vec<DispatchSamples> {
    let mut sites = ClockSites::default();
    for (chain, _) in chains.clone() {
        sites.learn(&resolve(chain, ksyms));
    }
    let mut out: Vec<DispatchSamples> = Vec::new();
    for (chain, n) in chains {
        let Some(s) = sort(&resolve(chain, ksyms), &sites) else {
            continue;
        };
        let i = match out
            .iter()
            .position(|d| d.kind == s.kind && d.hook == s.hook)
        {
            Some(i) => i,
            None => {
                out.push(DispatchSamples {
                    kind: s.kind,
                    hook: s.hook,
                    args: s.args,
                    dispatch: 0,
                    stats: 0,
                });
                out.len() - 1
            }
        };
        if s.stats {
            out[i].stats += n;
        } else {
            out[i].dispatch += n;
        }
    }
    out.sort_by(|a, b| (a.kind, &a.hook, a.args).cmp(&(b.kind, &b.hook, b.args)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const CHAINS: &str = include_str!("../testdata/dispatch_callchains.txt");

    struct Case {
        capture: String,
        want: String,
        frames: Vec<(String, u64)>,
    }

    fn cases() -> Vec<Case> {
        let mut out: Vec<Case> = Vec::new();
        for line in CHAINS.lines().filter(|l| !l.starts_with('#')) {
            if let Some(head) = line.strip_prefix("== ") {
                let (capture, want) = head.split_once(' ').unwrap();
                out.push(Case {
                    capture: capture.into(),
                    want: want.into(),
                    frames: Vec::new(),
                });
            } else if let Some((name, off)) = line.split_once("+0x") {
                let off = u64::from_str_radix(off, 16).unwrap();
                out.last_mut().unwrap().frames.push((name.into(), off));
            }
        }
        out
    }

    /// Symbols at made-up addresses, 64 KiB apart, in order of appearance.
    fn symbols(cases: &[&Case]) -> (Kallsyms, HashMap<String, u64>) {
        let mut at = HashMap::new();
        let mut text = String::new();
        for (name, _) in cases.iter().flat_map(|c| &c.frames) {
            if !at.contains_key(name) {
                let addr = 0xffff_ffff_8100_0000 + at.len() as u64 * 0x1_0000;
                text.push_str(&format!("{addr:x} t {name}\n"));
                at.insert(name.clone(), addr);
            }
        }
        (Kallsyms::parse(&text), at)
    }

    fn chain(c: &Case, at: &HashMap<String, u64>) -> Vec<u64> {
        c.frames.iter().map(|(n, off)| at[n] + off).collect()
    }

    fn label(s: Option<Sorted>) -> String {
        match s {
            None => "-:-:none".into(),
            Some(s) => format!(
                "{}:{}:{}",
                s.kind.label(),
                s.hook.as_deref().unwrap_or("-"),
                if s.stats { "stats" } else { "dispatch" }
            ),
        }
    }

    /// Every recorded and synthetic chain sorts as the file says, the
    /// clock call sites learnt from its own capture's chains.
    #[test]
    fn recorded_and_synthetic_chains_sort_by_the_table() {
        let all = cases();
        let mut captures: Vec<&str> = all.iter().map(|c| c.capture.as_str()).collect();
        captures.dedup();
        assert!(captures.len() >= 12, "{captures:?}");
        for cap in captures {
            let group: Vec<&Case> = all.iter().filter(|c| c.capture == cap).collect();
            let (ksyms, at) = symbols(&group);
            let mut sites = ClockSites::default();
            for c in &group {
                sites.learn(&resolve(&chain(c, &at), &ksyms));
            }
            for c in &group {
                let got = label(sort(&resolve(&chain(c, &at), &ksyms), &sites));
                assert_eq!(got, c.want, "{cap}: {:?}", c.frames);
            }
        }
    }

    #[test]
    fn every_dispatch_kind_of_the_table_has_a_chain() {
        let all = cases();
        for f in FRAMES {
            if let Some(kind) = f.kind {
                assert!(
                    all.iter()
                        .any(|c| c.want.starts_with(&format!("{}:", kind.label()))),
                    "no chain for {}",
                    kind.label()
                );
            }
        }
    }

    #[test]
    fn tally_counts_samples_per_hook() {
        let all = cases();
        let group: Vec<&Case> = all.iter().filter(|c| c.capture == "sysenter").collect();
        let (ksyms, at) = symbols(&group);
        let chains: Vec<(Vec<u64>, u64)> = group.iter().map(|c| (chain(c, &at), 10)).collect();
        let got = tally(chains.iter().map(|(c, n)| (c.as_slice(), *n)), &ksyms);
        let brief: Vec<(&str, Option<&str>, u64, u64)> = got
            .iter()
            .map(|d| (d.kind.label(), d.hook.as_deref(), d.dispatch, d.stats))
            .collect();
        assert_eq!(
            brief,
            vec![
                ("syscall_slow_path", Some("sys_enter/sys_exit"), 10, 0),
                ("raw_tracepoint", Some("sys_enter"), 20, 20),
            ]
        );
    }

    /// A socket filter's block between the RCU calls counts only once both
    /// calls were seen; the filter's test after the lock, the unlock's
    /// call, its return and the epilogue are every packet's.
    /// A function named `func` at [`RCU_FN`] with RCU's lock and unlock,
    /// sched_clock and a caller at made-up addresses.
    fn rcu_symbols(func: &str) -> Kallsyms {
        Kallsyms::parse(&format!(
            "{RCU_FN:x} t {func}\n{RCU_LOCK:x} t __rcu_read_lock\n\
             {RCU_UNLOCK:x} t __rcu_read_unlock\n{CLOCK:x} t sched_clock\n\
             {:x} t the_caller\n",
            CALLER - 0x100
        ))
    }

    const RCU_FN: u64 = 0xffff_ffff_8100_0000;
    const RCU_LOCK: u64 = 0xffff_ffff_8101_0000;
    const RCU_UNLOCK: u64 = 0xffff_ffff_8102_0000;
    const CLOCK: u64 = 0xffff_ffff_8103_0000;
    const CALLER: u64 = 0xffff_ffff_8104_0100;

    /// Learn from a chain: `leaf`, then the return site `ret` in the
    /// function at [`RCU_FN`], then its caller.
    fn learn_at(sites: &mut ClockSites, ksyms: &Kallsyms, leaf: u64, ret: u64) {
        sites.learn(&resolve(&[leaf, RCU_FN + ret, CALLER], ksyms));
    }

    #[test]
    fn a_filter_block_lies_between_the_rcu_calls() {
        let ksyms = rcu_symbols("sk_filter_trim_cap");
        let mut sites = ClockSites::default();
        for ret in [0x23a, 0x256] {
            learn_at(&mut sites, &ksyms, CLOCK + 0x10, ret);
        }
        let at = |sites: &ClockSites, off: u64| {
            label(sort(&resolve(&[RCU_FN + off, CALLER], &ksyms), sites))
        };
        // Before the RCU calls are seen, only the timed run counts.
        assert_eq!(at(&sites, 0x163), "-:-:none");
        assert_eq!(at(&sites, 0x251), "socket_filter:-:dispatch");
        learn_at(&mut sites, &ksyms, RCU_LOCK + 5, 0xd8);
        assert_eq!(at(&sites, 0x163), "-:-:none", "the unlock is not seen yet");
        learn_at(&mut sites, &ksyms, RCU_UNLOCK + 5, 0x1e0);
        for (off, want) in [
            (0x5, "-:-:none"),
            (0xd8, "-:-:none"),
            (0xe2, "-:-:none"),
            (0xe4, "socket_filter:-:dispatch"),
            (0x163, "socket_filter:-:dispatch"),
            (0x1da, "socket_filter:-:dispatch"),
            (0x1db, "-:-:none"),
            (0x1e0, "-:-:none"),
            (0x1eb, "-:-:none"),
            (0x1ec, "socket_filter:-:dispatch"),
            (0x23a, "socket_filter:-:stats"),
            (0x25a, "socket_filter:-:stats"),
        ] {
            assert_eq!(at(&sites, off), want, "+{off:#x}");
        }
    }

    /// tcx's run inlined into __dev_queue_xmit sits inside an RCU section
    /// that holds the whole transmit: only the run counts there.
    #[test]
    fn a_transmit_rcu_section_is_not_a_filter_block() {
        let ksyms = rcu_symbols("__dev_queue_xmit");
        let mut sites = ClockSites::default();
        for (leaf, ret) in [
            (CLOCK + 0x10, 0x300),
            (CLOCK + 0x10, 0x320),
            (RCU_LOCK + 5, 0x40),
            (RCU_UNLOCK + 5, 0x600),
        ] {
            learn_at(&mut sites, &ksyms, leaf, ret);
        }
        let at = |off: u64| sort(&resolve(&[RCU_FN + off, CALLER], &ksyms), &sites);
        assert_eq!(at(0x100), None);
        assert_eq!(at(0x500), None);
        assert!(at(0x310).is_some_and(|s| !s.stats));
    }

    #[test]
    fn clone_suffixes_match_their_base_name() {
        assert!(lookup("sch_handle_ingress.constprop.0").is_some());
        assert!(lookup("bpf_trace_run12").is_some());
        assert!(lookup("sched_clock_cpu").is_none());
        assert_eq!(named_hook("perf_trace_run_bpf_submit"), None);
        assert_eq!(named_hook("__traceiter_sched_switch"), Some("sched_switch"));
    }
}
