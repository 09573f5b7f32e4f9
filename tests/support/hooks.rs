//! Programs that return at once attached to the packet, cgroup and socket
//! hooks, and the traffic that fires each: what `fixture hook-loop` runs
//! while `scripts/record-dispatch-chains` samples the hooks' dispatch.

use std::io;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream, UdpSocket};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd};
use std::path::PathBuf;
use std::process::Command;

use super::{probes, sys};

const BPF_LINK_CREATE: u32 = 28;
const PROG_TYPE_SOCKET_FILTER: u32 = 1;
const PROG_TYPE_SCHED_CLS: u32 = 3;
const PROG_TYPE_XDP: u32 = 6;
const PROG_TYPE_CGROUP_SKB: u32 = 8;
const PROG_TYPE_CGROUP_SOCK: u32 = 9;
const ATTACH_CGROUP_INET_EGRESS: u32 = 1;
const ATTACH_CGROUP_INET_SOCK_CREATE: u32 = 2;
const ATTACH_XDP: u32 = 37;
const ATTACH_TCX_INGRESS: u32 = 46;
const ATTACH_TCX_EGRESS: u32 = 47;
const SO_ATTACH_BPF: i32 = 50;
const XDP_PASS: i32 = 2;
const TC_ACT_OK: i32 = 0;
const CGROUP_ALLOW: i32 = 1;
/// A socket filter's return is the bytes to keep: all of them.
const KEEP_ALL: i32 = -1;

/// `bpf_attr.link_create` up to its per-type union.
#[repr(C)]
#[derive(Default)]
struct LinkCreateAttr {
    prog_fd: u32,
    target: u32,
    attach_type: u32,
    flags: u32,
    rest: [u64; 6],
}

/// A link from `prog` to `target` (an ifindex, a cgroup's or a netns's
/// fd), the per-type union left zero.
pub(crate) fn link_create(
    prog: BorrowedFd<'_>,
    target: u32,
    attach_type: u32,
) -> io::Result<OwnedFd> {
    link_create_with(prog, target, attach_type, [0; 6])
}

/// `rest` is the per-type union of `link_create`, as u64 words.
pub(crate) fn link_create_with(
    prog: BorrowedFd<'_>,
    target: u32,
    attach_type: u32,
    rest: [u64; 6],
) -> io::Result<OwnedFd> {
    let mut attr = LinkCreateAttr {
        prog_fd: prog.as_raw_fd() as u32,
        target,
        attach_type,
        flags: 0,
        rest,
    };
    // SAFETY: attr is a live, zero-padded repr(C) bpf_attr prefix.
    unsafe { sys::sys_bpf_fd(BPF_LINK_CREATE, &mut attr) }
}

/// The hooks `fixture hook-loop` can fire.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Hook {
    /// Generic XDP on `lo`, fired by UDP to 127.0.0.1.
    Xdp,
    /// Native XDP on one end of a veth pair, fired by raw frames sent
    /// on the other end.
    XdpVeth,
    /// A cls_bpf filter (direct action) on `lo`'s clsact ingress, set up
    /// with tc(8) from a pinned program.
    Tc,
    /// tcx ingress and egress links on `lo` (6.6 and later).
    Tcx,
    /// cgroup_skb egress on a cgroup of its own that the process joins.
    CgroupSkb,
    /// cgroup/sock_create there, fired by socket(2).
    SockCreate,
    /// A socket filter on both ends of a TCP connection over `lo` (an
    /// AF_UNIX stream socket never runs its filter: recorded on 6.18).
    TcpStream,
}

impl Hook {
    pub(crate) const ALL: [Hook; 7] = [
        Hook::Xdp,
        Hook::XdpVeth,
        Hook::Tc,
        Hook::Tcx,
        Hook::CgroupSkb,
        Hook::SockCreate,
        Hook::TcpStream,
    ];

    pub(crate) fn name(self) -> &'static str {
        match self {
            Hook::Xdp => "xdp",
            Hook::XdpVeth => "xdp_veth",
            Hook::Tc => "tc",
            Hook::Tcx => "tcx",
            Hook::CgroupSkb => "cgroup_skb",
            Hook::SockCreate => "sock_create",
            Hook::TcpStream => "tcp_stream",
        }
    }

    pub(crate) fn parse(s: &str) -> Option<Hook> {
        Hook::ALL.into_iter().find(|h| h.name() == s)
    }

    /// Load the program and attach it; the returned [`Fired`] holds both
    /// and fires the hook.
    pub(crate) fn attach(self) -> io::Result<Fired> {
        let load = |prog_type, expected, r0| {
            probes::load_returning(prog_type, expected, 0, "brr_fx_hook", r0)
        };
        let mut held: Vec<OwnedFd> = Vec::new();
        let mut cgroup = None;
        let prog = match self {
            Hook::XdpVeth => {
                private_loopback()?;
                let prog = load(PROG_TYPE_XDP, 0, XDP_PASS)?;
                held.push(link_create(prog.as_fd(), veth_pair()?, ATTACH_XDP)?);
                prog
            }
            Hook::TcpStream => {
                private_loopback()?;
                load(PROG_TYPE_SOCKET_FILTER, 0, KEEP_ALL)?
            }
            Hook::Xdp | Hook::Tc | Hook::Tcx => {
                private_loopback()?;
                let (t, r0) = match self {
                    Hook::Xdp => (PROG_TYPE_XDP, XDP_PASS),
                    _ => (PROG_TYPE_SCHED_CLS, TC_ACT_OK),
                };
                let prog = load(t, 0, r0)?;
                match self {
                    Hook::Xdp => held.push(link_create(prog.as_fd(), 1, ATTACH_XDP)?),
                    Hook::Tcx => {
                        for a in [ATTACH_TCX_INGRESS, ATTACH_TCX_EGRESS] {
                            held.push(link_create(prog.as_fd(), 1, a)?);
                        }
                    }
                    _ => tc_filter(prog.as_fd())?,
                }
                prog
            }
            Hook::CgroupSkb | Hook::SockCreate => {
                let (t, a) = match self {
                    Hook::CgroupSkb => (PROG_TYPE_CGROUP_SKB, ATTACH_CGROUP_INET_EGRESS),
                    _ => (PROG_TYPE_CGROUP_SOCK, ATTACH_CGROUP_INET_SOCK_CREATE),
                };
                let prog = load(t, a, CGROUP_ALLOW)?;
                let cg = OwnCgroup::join()?;
                held.push(link_create(prog.as_fd(), cg.fd.as_raw_fd() as u32, a)?);
                cgroup = Some(cg);
                prog
            }
        };
        let traffic = match self {
            Hook::SockCreate => Traffic::Sockets,
            Hook::XdpVeth => Traffic::Frames(packet_socket(VETH_TX)?),
            Hook::TcpStream => Traffic::Tcp(tcp_pair(prog.as_fd())?),
            _ => {
                let rx = UdpSocket::bind("127.0.0.1:0")?;
                let tx = UdpSocket::bind("127.0.0.1:0")?;
                tx.connect(rx.local_addr()?)?;
                Traffic::Udp(tx, rx)
            }
        };
        // The links go before the cgroup they are on.
        Ok(Fired {
            prog,
            traffic,
            held,
            cgroup,
        })
    }
}

enum Traffic {
    Udp(UdpSocket, UdpSocket),
    Sockets,
    Frames(OwnedFd),
    Tcp([TcpStream; 2]),
}

/// A hook's program attached, and what fires it.
pub(crate) struct Fired {
    pub prog: OwnedFd,
    traffic: Traffic,
    held: Vec<OwnedFd>,
    cgroup: Option<OwnCgroup>,
}

impl Fired {
    /// Fire the hook once.
    pub(crate) fn fire(&self) -> io::Result<()> {
        match &self.traffic {
            Traffic::Udp(tx, rx) => {
                tx.send(b"x")?;
                rx.recv(&mut [0u8; 8])?;
            }
            Traffic::Sockets => {
                // SAFETY: plain socket(2); the fd is owned at once.
                let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM, 0) };
                if fd < 0 {
                    return Err(io::Error::last_os_error());
                }
                // SAFETY: fd is a new descriptor nothing else owns.
                drop(unsafe { OwnedFd::from_raw_fd(fd) });
            }
            Traffic::Frames(fd) => {
                // Broadcast, from a local address, of the IEEE's local
                // experimental type: nothing above the driver takes it.
                let mut frame = [0u8; 60];
                frame[..6].fill(0xff);
                frame[6..12].copy_from_slice(&[2, 0, 0, 0, 0, 1]);
                frame[12..14].copy_from_slice(&ETH_P_EXPERIMENTAL.to_be_bytes());
                // SAFETY: a live buffer of the stated length.
                let n = unsafe { libc::write(fd.as_raw_fd(), frame.as_ptr().cast(), frame.len()) };
                if n != frame.len() as isize {
                    return Err(io::Error::last_os_error());
                }
            }
            Traffic::Tcp([a, b]) => {
                (&*a).write_all(b"x")?;
                (&*b).read_exact(&mut [0u8; 1])?;
            }
        }
        Ok(())
    }
}

impl Drop for Fired {
    fn drop(&mut self) {
        self.held.clear();
        drop(self.cgroup.take());
    }
}

/// Move this process (single-threaded, so every thread) into a network
/// namespace of its own with `lo` up: the host's interfaces stay as they
/// were, and the namespace goes with the process.
fn private_loopback() -> io::Result<()> {
    // SAFETY: unshare takes no pointers.
    if unsafe { libc::unshare(libc::CLONE_NEWNET) } != 0 {
        return Err(io::Error::last_os_error());
    }
    run(Command::new("ip").args(["link", "set", "lo", "up"]))
}

fn run(cmd: &mut Command) -> io::Result<()> {
    let out = cmd.output()?;
    if out.status.success() {
        return Ok(());
    }
    Err(io::Error::other(format!(
        "{cmd:?}: {}",
        String::from_utf8_lossy(&out.stderr).trim()
    )))
}

const VETH_TX: &str = "brr-veth0";
const VETH_RX: &str = "brr-veth1";
const ETH_P_EXPERIMENTAL: u16 = 0x88b5;

/// A veth pair, both ends up; the receiving end's ifindex.
fn veth_pair() -> io::Result<u32> {
    run(Command::new("ip").args([
        "link", "add", VETH_TX, "type", "veth", "peer", "name", VETH_RX,
    ]))?;
    for dev in [VETH_TX, VETH_RX] {
        run(Command::new("ip").args(["link", "set", dev, "up"]))?;
    }
    ifindex(VETH_RX)
}

/// The ifindex of `dev` in this network namespace (sysfs shows the
/// namespace that mounted it).
fn ifindex(dev: &str) -> io::Result<u32> {
    let name = std::ffi::CString::new(dev).map_err(io::Error::other)?;
    // SAFETY: name is a live NUL-terminated string.
    match unsafe { libc::if_nametoindex(name.as_ptr()) } {
        0 => Err(io::Error::last_os_error()),
        i => Ok(i),
    }
}

/// A raw packet socket that sends on `dev` (and, protocol 0, receives
/// nothing).
fn packet_socket(dev: &str) -> io::Result<OwnedFd> {
    // SAFETY: plain socket(2); the fd is owned at once.
    let fd = unsafe { libc::socket(libc::AF_PACKET, libc::SOCK_RAW, 0) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: fd is a new descriptor nothing else owns.
    let sock = unsafe { OwnedFd::from_raw_fd(fd) };
    // SAFETY: sockaddr_ll is plain data, valid zeroed.
    let mut sll: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
    sll.sll_family = libc::AF_PACKET as u16;
    sll.sll_ifindex = ifindex(dev)? as i32;
    // SAFETY: sll is a live sockaddr_ll of the stated size.
    let rc = unsafe {
        libc::bind(
            sock.as_raw_fd(),
            (&raw const sll).cast(),
            std::mem::size_of::<libc::sockaddr_ll>() as u32,
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(sock)
}

/// tc(8) takes a program by pin: pin it, attach it as a direct-action
/// cls_bpf filter on `lo`'s clsact ingress, unpin (the filter holds it).
fn tc_filter(prog: BorrowedFd<'_>) -> io::Result<()> {
    let pin = format!("/sys/fs/bpf/brr-hook-tc-{}", std::process::id());
    sys::obj_pin(prog, &pin)?;
    let r = run(Command::new("tc").args(["qdisc", "add", "dev", "lo", "clsact"])).and_then(|()| {
        run(Command::new("tc").args([
            "filter",
            "add",
            "dev",
            "lo",
            "ingress",
            "bpf",
            "direct-action",
            "object-pinned",
            &pin,
        ]))
    });
    let _ = std::fs::remove_file(&pin);
    r
}

fn tcp_pair(filter: BorrowedFd<'_>) -> io::Result<[TcpStream; 2]> {
    let listener = TcpListener::bind("127.0.0.1:0")?;
    let a = TcpStream::connect(listener.local_addr()?)?;
    let (b, _) = listener.accept()?;
    a.set_nodelay(true)?;
    let pair = [a, b];
    let prog = filter.as_raw_fd();
    for s in &pair {
        // SAFETY: the option value is a live i32 of the stated size.
        let rc = unsafe {
            libc::setsockopt(
                s.as_raw_fd(),
                libc::SOL_SOCKET,
                SO_ATTACH_BPF,
                (&raw const prog).cast(),
                std::mem::size_of::<i32>() as u32,
            )
        };
        if rc != 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(pair)
}

/// A cgroup2 directory of its own that this process joins, and leaves
/// (back to where it was) when dropped.
struct OwnCgroup {
    fd: std::fs::File,
    dir: PathBuf,
    home: PathBuf,
}

impl OwnCgroup {
    fn join() -> io::Result<OwnCgroup> {
        let root = brr::cgroups::cgroup2_mount()
            .map(|m| m.mount_point)
            .ok_or_else(|| io::Error::other("no cgroup2 mount"))?;
        let own = std::fs::read_to_string("/proc/self/cgroup")?;
        let rel = own
            .lines()
            .find_map(|l| l.strip_prefix("0::"))
            .ok_or_else(|| io::Error::other("no cgroup2 line in /proc/self/cgroup"))?;
        let home = root.join(rel.trim_start_matches('/'));
        let dir = root.join(format!("brr-hook-{}", std::process::id()));
        std::fs::create_dir(&dir)?;
        let fd = std::fs::File::open(&dir)?;
        let cg = OwnCgroup { fd, dir, home };
        std::fs::write(cg.dir.join("cgroup.procs"), std::process::id().to_string())?;
        Ok(cg)
    }
}

impl Drop for OwnCgroup {
    fn drop(&mut self) {
        let _ = std::fs::write(
            self.home.join("cgroup.procs"),
            std::process::id().to_string(),
        );
        let _ = std::fs::remove_dir(&self.dir);
    }
}
