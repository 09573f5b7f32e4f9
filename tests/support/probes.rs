//! Kernel-function probes for tests and fixtures: a kprobe or kretprobe
//! opened on the kprobe PMU (attached with `PERF_EVENT_IOC_SET_BPF`, as BCC
//! does, or with a perf_event link), a kprobe_multi link, and fentry/fexit
//! programs whose target is a function of vmlinux BTF.
//!
//! Not every kernel can: one without kprobes has no kprobe PMU, one without
//! ftrace direct calls refuses trampolines. [`refused`] tells a test that
//! met such a kernel whether to skip or to fail.

use std::ffi::{CStr, CString};
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd};

use super::insn::{exit, mov64_imm, R0};
use super::sys;

/// `BPF_PROG_TYPE_KPROBE` and `BPF_PROG_TYPE_TRACING` (enum bpf_prog_type).
pub(crate) const PROG_TYPE_KPROBE: u32 = 2;
pub(crate) const PROG_TYPE_TRACING: u32 = 26;
/// `BPF_TRACE_FENTRY`, `BPF_TRACE_FEXIT`, `BPF_TRACE_KPROBE_MULTI` (enum
/// bpf_attach_type).
pub(crate) const ATTACH_TRACE_FENTRY: u32 = 24;
pub(crate) const ATTACH_TRACE_FEXIT: u32 = 25;
pub(crate) const ATTACH_TRACE_KPROBE_MULTI: u32 = 42;
const BPF_LINK_CREATE: u32 = 28;
/// `BPF_F_KPROBE_MULTI_RETURN`.
const KPROBE_MULTI_RETURN: u32 = 1;

/// Environment variable: when "1" (the kernel matrix sets it in its
/// guests, whose kernels can probe), a kernel that refuses a probe fails
/// the test instead of skipping it.
pub(crate) const REQUIRE_PROBES_ENV: &str = "BRR_REQUIRE_PROBES";

/// A kernel refused a probe the test needs: `Err` (to panic with) when
/// [`REQUIRE_PROBES_ENV`] is "1", else the test is reported as skipped
/// with the reason, and `Ok`.
pub(crate) fn refused(what: &str, e: impl std::fmt::Display) -> Result<(), String> {
    if std::env::var(REQUIRE_PROBES_ENV).as_deref() == Ok("1") {
        return Err(format!("{what}: {e} ({REQUIRE_PROBES_ENV}=1)"));
    }
    super::skip(format!("this kernel refuses {what}: {e}"));
    Ok(())
}

/// `r0 = <r0>; exit` of `prog_type`, GPL, with the attach fields set.
pub(crate) fn load_returning(
    prog_type: u32,
    expected_attach_type: u32,
    attach_btf_id: u32,
    name: &str,
    r0: i32,
) -> io::Result<OwnedFd> {
    let insns = [mov64_imm(R0, r0), exit()];
    let license = c"GPL";
    let mut load = sys::ProgLoadAttr {
        prog_type,
        insn_cnt: insns.len() as u32,
        insns: insns.as_ptr() as u64,
        license: license.as_ptr() as u64,
        prog_name: sys::obj_name(name),
        expected_attach_type,
        attach_btf_id,
        ..Default::default()
    };
    // SAFETY: insns and license are live for the call, of the stated sizes.
    unsafe { sys::sys_bpf_fd(sys::BPF_PROG_LOAD, &mut load) }
}

/// The BTF type id of the FUNC `name` in vmlinux BTF.
pub(crate) fn vmlinux_func_id(name: &str) -> io::Result<u32> {
    let data = std::fs::read("/sys/kernel/btf/vmlinux")?;
    let btf = brr::BtfData::parse(&data);
    // Type ids are dense from 1; a FUNC's id is below the blob's length.
    (1..data.len() as u32)
        .find(|&id| btf.func_name(id).as_deref() == Some(name))
        .ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::NotFound,
                format!("no FUNC {name} in vmlinux BTF"),
            )
        })
}

/// An fentry (or fexit) program on the vmlinux function `func`, loaded
/// and attached: (program, link).
pub(crate) fn fentry(func: &str, exit_side: bool, name: &str) -> io::Result<(OwnedFd, OwnedFd)> {
    let id = vmlinux_func_id(func)?;
    let attach = if exit_side {
        ATTACH_TRACE_FEXIT
    } else {
        ATTACH_TRACE_FENTRY
    };
    let prog = load_returning(PROG_TYPE_TRACING, attach, id, name, 0)?;
    let link = tracing_attach(prog.as_fd())?;
    Ok((prog, link))
}

/// Attach a tracing program to the target it was loaded for: the
/// `BPF_RAW_TRACEPOINT_OPEN` with no name that every kernel since 5.5
/// takes (libbpf's fallback before `BPF_LINK_CREATE` knew tracing).
pub(crate) fn tracing_attach(prog: BorrowedFd<'_>) -> io::Result<OwnedFd> {
    #[repr(C)]
    struct RawTpAttr {
        name: u64,
        prog_fd: u32,
        _pad: u32,
    }
    let mut attr = RawTpAttr {
        name: 0,
        prog_fd: prog.as_raw_fd() as u32,
        _pad: 0,
    };
    // SAFETY: a zero name pointer and a live program fd.
    unsafe { sys::sys_bpf_fd(sys::BPF_RAW_TRACEPOINT_OPEN, &mut attr) }
}

fn bad(e: impl ToString) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, e.to_string())
}

fn pmu_file(what: &str) -> io::Result<String> {
    let path = format!("/sys/bus/event_source/devices/kprobe/{what}");
    std::fs::read_to_string(&path).map_err(|e| io::Error::new(e.kind(), format!("{path}: {e}")))
}

/// A kprobe (or kretprobe) perf event on `func`+`offset` for every task on
/// CPU 0, from the kprobe PMU: the event a BPF program attaches to.
pub(crate) fn kprobe_event(func: &str, offset: u64, ret: bool) -> io::Result<OwnedFd> {
    let pmu: u32 = pmu_file("type")?.trim().parse().map_err(bad)?;
    let mut config = 0u64;
    if ret {
        // `config:N`: the bit that makes the probe a return probe.
        let f = pmu_file("format/retprobe")?;
        let bit: u32 = f
            .trim()
            .trim_start_matches("config:")
            .parse()
            .map_err(bad)?;
        config |= 1 << bit;
    }
    let cfunc = CString::new(func).map_err(bad)?;
    // config1 is kprobe_func, config2 probe_offset.
    perf_open(pmu, config, cfunc.as_ptr() as u64, offset)
}

/// `perf_event_open` with a zeroed 128-byte attr: type, config, and
/// config1/config2 (a probe's function or path and offset), for every task
/// on CPU 0. Counting only (no sampling). A pointer in config1 must stay
/// live for the call.
pub(crate) fn perf_open(
    type_: u32,
    config: u64,
    config1: u64,
    config2: u64,
) -> io::Result<OwnedFd> {
    let mut attr = [0u64; 16];
    attr[0] = u64::from(type_) | (128u64 << 32);
    attr[1] = config;
    attr[7] = config1;
    attr[8] = config2;
    // SAFETY: attr is a live 128-byte perf_event_attr; what config1 points
    // at is the caller's, live for the call; pid -1 with cpu 0 watches
    // every task there; no group fd.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_perf_event_open,
            attr.as_mut_ptr(),
            -1,
            0,
            -1,
            libc::c_ulong::from(8u32), // PERF_FLAG_FD_CLOEXEC
        )
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a fresh fd from perf_event_open.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as i32) })
}

/// `PERF_EVENT_IOC_SET_BPF`: `_IOW('$', 8, __u32)`; `PERF_EVENT_IOC_ENABLE`.
const PERF_EVENT_IOC_SET_BPF: libc::c_ulong = 0x4004_2408;
const PERF_EVENT_IOC_ENABLE: libc::c_ulong = 0x2400;

/// Run `prog` from the perf event `ev` without a link, as BCC and bpftrace
/// do, and enable the event.
pub(crate) fn set_bpf(ev: &OwnedFd, prog: BorrowedFd<'_>) -> io::Result<()> {
    for (req, arg) in [
        (PERF_EVENT_IOC_SET_BPF, prog.as_raw_fd()),
        (PERF_EVENT_IOC_ENABLE, 0),
    ] {
        // SAFETY: both fds are live; both ioctls take an integer argument.
        if unsafe { libc::ioctl(ev.as_raw_fd(), req, arg) } < 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

/// `bpf_attr.link_create` with its `kprobe_multi` member.
#[repr(C)]
#[derive(Default)]
struct KprobeMultiLinkAttr {
    prog_fd: u32,
    target_fd: u32,
    attach_type: u32,
    flags: u32,
    multi_flags: u32,
    cnt: u32,
    syms: u64,
    addrs: u64,
    cookies: u64,
}

/// A kprobe_multi (or kretprobe_multi) link of `prog` on the functions
/// `names`, attached by name.
pub(crate) fn kprobe_multi(
    prog: BorrowedFd<'_>,
    names: &[&CStr],
    ret: bool,
) -> io::Result<OwnedFd> {
    let syms: Vec<u64> = names.iter().map(|n| n.as_ptr() as u64).collect();
    let mut attr = KprobeMultiLinkAttr {
        prog_fd: prog.as_raw_fd() as u32,
        attach_type: ATTACH_TRACE_KPROBE_MULTI,
        multi_flags: if ret { KPROBE_MULTI_RETURN } else { 0 },
        cnt: syms.len() as u32,
        syms: syms.as_ptr() as u64,
        ..Default::default()
    };
    // SAFETY: the syms array and the strings it points at are live for
    // the call and cnt matches the array.
    unsafe { sys::sys_bpf_fd(BPF_LINK_CREATE, &mut attr) }
}

/// How a program is put on a kernel function.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Probe {
    Kprobe,
    Kretprobe,
    KprobeMulti,
    Fentry,
    Fexit,
}

impl Probe {
    pub(crate) const ALL: [Probe; 5] = [
        Probe::Kprobe,
        Probe::Kretprobe,
        Probe::KprobeMulti,
        Probe::Fentry,
        Probe::Fexit,
    ];

    pub(crate) fn name(self) -> &'static str {
        match self {
            Probe::Kprobe => "kprobe",
            Probe::Kretprobe => "kretprobe",
            Probe::KprobeMulti => "kprobe_multi",
            Probe::Fentry => "fentry",
            Probe::Fexit => "fexit",
        }
    }

    pub(crate) fn parse(name: &str) -> Option<Probe> {
        Probe::ALL.into_iter().find(|p| p.name() == name)
    }

    /// Load `r0 = 0; exit` and attach it this way to `func`: (program,
    /// what holds the attachment).
    pub(crate) fn attach(self, func: &str) -> io::Result<(OwnedFd, OwnedFd)> {
        match self {
            Probe::Kprobe | Probe::Kretprobe => {
                let ev = kprobe_event(func, 0, self == Probe::Kretprobe)?;
                let prog = load_returning(PROG_TYPE_KPROBE, 0, 0, "brr_probe_kp", 0)?;
                set_bpf(&ev, prog.as_fd())?;
                Ok((prog, ev))
            }
            Probe::KprobeMulti => {
                let prog = load_returning(
                    PROG_TYPE_KPROBE,
                    ATTACH_TRACE_KPROBE_MULTI,
                    0,
                    "brr_probe_kpm",
                    0,
                )?;
                let c = CString::new(func).map_err(bad)?;
                let link = kprobe_multi(prog.as_fd(), &[c.as_c_str()], false)?;
                Ok((prog, link))
            }
            Probe::Fentry | Probe::Fexit => fentry(func, self == Probe::Fexit, "brr_probe_tramp"),
        }
    }
}

/// `prctl(PR_SET_NAME)`: the call that runs `__set_task_comm` (and the
/// `task_rename` tracepoint) once.
pub(crate) fn rename_self() -> io::Result<()> {
    // SAFETY: PR_SET_NAME reads a NUL-terminated string of at most 16
    // bytes from a static.
    if unsafe { libc::prctl(libc::PR_SET_NAME, c"brr-probe-loop".as_ptr()) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}
