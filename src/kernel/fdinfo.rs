//! `/proc/PID/fdinfo/FD` of BPF program, map and link fds.
//!
//! The kernel prints `key:\tvalue` lines; the set of keys grows with kernel
//! versions and link types. Parsing is per line and forgiving: unknown keys
//! are ignored (links keep them, since their per-type lines are the point),
//! a value that does not parse leaves its field empty, and cut-off or binary
//! text yields whatever complete lines precede the damage.

use std::ffi::CStr;
use std::io::{self, Read};
use std::os::fd::{AsRawFd, BorrowedFd, OwnedFd};

use rustix::fs::{openat, Mode, OFlags, CWD};

/// A program fd's fdinfo. `None` means the kernel did not print the key.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProgFdinfo {
    pub prog_type: Option<u32>,
    pub jited: Option<bool>,
    pub tag: Option<String>,
    pub memlock: Option<u64>,
    pub prog_id: Option<u32>,
    pub run_time_ns: Option<u64>,
    pub run_cnt: Option<u64>,
    pub recursion_misses: Option<u64>,
    pub verified_insns: Option<u32>,
}

/// A map fd's fdinfo.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MapFdinfo {
    pub map_type: Option<u32>,
    pub key_size: Option<u32>,
    pub value_size: Option<u32>,
    pub max_entries: Option<u32>,
    pub map_flags: Option<u32>,
    pub map_extra: Option<u64>,
    pub memlock: Option<u64>,
    pub map_id: Option<u32>,
    pub frozen: Option<bool>,
}

/// A link fd's fdinfo. `link_type` is the kernel's name (`raw_tracepoint`,
/// or `<N>` for a type the kernel cannot name); `extra` holds the per-type
/// lines in kernel order (`tp_name`, `cgroup_id`, `ifindex`, ...).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LinkFdinfo {
    pub link_type: Option<String>,
    pub link_id: Option<u32>,
    pub prog_tag: Option<String>,
    pub prog_id: Option<u32>,
    pub attach_type: Option<u32>,
    pub extra: Vec<(String, String)>,
}

impl LinkFdinfo {
    /// The value of a per-type line, e.g. `get("tp_name")`.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.extra
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }
}

/// Which BPF object an fdinfo text describes.
#[cfg(test)]
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Fdinfo {
    Prog(ProgFdinfo),
    Map(MapFdinfo),
    Link(LinkFdinfo),
    /// Not a BPF program, map or link (or too damaged to tell).
    Other,
}

/// The generic lines every fd has; never part of an object's fields.
const GENERIC: &[&str] = &["pos", "flags", "mnt_id", "ino"];

/// Complete `key:\tvalue` lines. A last line without its newline is kept
/// only if the text ends there cleanly (the kernel always ends with `\n`, so
/// a missing one means a cut read; its value may be cut too and is dropped).
fn lines(text: &str) -> impl Iterator<Item = (&str, &str)> {
    let complete = text.rsplit_once('\n').map_or("", |(done, _)| done);
    complete.split('\n').filter_map(|l| {
        let (k, v) = l.split_once(':')?;
        let k = k.trim();
        if k.is_empty() || k.contains(|c: char| c.is_whitespace() || c.is_control()) {
            return None;
        }
        Some((k, v.trim()))
    })
}

fn dec<T: std::str::FromStr>(v: &str) -> Option<T> {
    v.parse().ok()
}

/// `%#x` values: `0x1f`, and `0` (glibc-style `%#x` of zero has no prefix).
fn hex_u64(v: &str) -> Option<u64> {
    match v.strip_prefix("0x").or_else(|| v.strip_prefix("0X")) {
        Some(h) => u64::from_str_radix(h, 16).ok(),
        None => v.parse().ok(),
    }
}

fn flag(v: &str) -> Option<bool> {
    match v {
        "0" => Some(false),
        "1" => Some(true),
        _ => None,
    }
}

pub fn parse_prog(text: &str) -> ProgFdinfo {
    let mut p = ProgFdinfo::default();
    for (k, v) in lines(text) {
        match k {
            "prog_type" => p.prog_type = dec(v),
            "prog_jited" => p.jited = flag(v),
            "prog_tag" => p.tag = Some(v.to_string()).filter(|t| !t.is_empty()),
            "memlock" => p.memlock = dec(v),
            "prog_id" => p.prog_id = dec(v),
            "run_time_ns" => p.run_time_ns = dec(v),
            "run_cnt" => p.run_cnt = dec(v),
            "recursion_misses" => p.recursion_misses = dec(v),
            "verified_insns" => p.verified_insns = dec(v),
            _ => {}
        }
    }
    p
}

pub(crate) fn parse_map(text: &str) -> MapFdinfo {
    let mut m = MapFdinfo::default();
    for (k, v) in lines(text) {
        match k {
            "map_type" => m.map_type = dec(v),
            "key_size" => m.key_size = dec(v),
            "value_size" => m.value_size = dec(v),
            "max_entries" => m.max_entries = dec(v),
            "map_flags" => m.map_flags = hex_u64(v).and_then(|f| u32::try_from(f).ok()),
            "map_extra" => m.map_extra = hex_u64(v),
            "memlock" => m.memlock = dec(v),
            "map_id" => m.map_id = dec(v),
            "frozen" => m.frozen = flag(v),
            _ => {}
        }
    }
    m
}

pub(crate) fn parse_link(text: &str) -> LinkFdinfo {
    let mut l = LinkFdinfo::default();
    for (k, v) in lines(text) {
        match k {
            "link_type" => l.link_type = Some(v.to_string()).filter(|t| !t.is_empty()),
            "link_id" => l.link_id = dec(v),
            "prog_tag" => l.prog_tag = Some(v.to_string()).filter(|t| !t.is_empty()),
            "prog_id" => l.prog_id = dec(v),
            "attach_type" => {
                // tcx and netkit append the direction: `46 (ingress)`.
                l.attach_type = v.split(' ').next().and_then(dec);
                l.extra.push((k.to_string(), v.to_string()));
            }
            k if GENERIC.contains(&k) => {}
            _ => l.extra.extend(tab_pairs(k, v)),
        }
    }
    l
}

/// netfilter prints several pairs on one line: `pf:\t2\thooknum:\t1\tprio:\t-100`.
/// Split such a value into its pairs; a plain value is one pair.
fn tab_pairs(key: &str, value: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut tokens = value.split('\t').map(str::trim);
    let mut current = (
        key.to_string(),
        tokens.next().unwrap_or_default().to_string(),
    );
    while let Some(t) = tokens.next() {
        match t.strip_suffix(':') {
            Some(k) if !k.is_empty() && !k.contains(' ') => {
                out.push(std::mem::replace(
                    &mut current,
                    (k.to_string(), tokens.next().unwrap_or_default().to_string()),
                ));
            }
            _ => {
                current.1.push('\t');
                current.1.push_str(t);
            }
        }
    }
    out.push(current);
    out
}

/// Classify by the key only that object kind prints.
#[cfg(test)]
pub(crate) fn parse(text: &str) -> Fdinfo {
    for (k, _) in lines(text) {
        match k {
            "prog_type" => return Fdinfo::Prog(parse_prog(text)),
            "map_type" => return Fdinfo::Map(parse_map(text)),
            "link_type" => return Fdinfo::Link(parse_link(text)),
            _ => {}
        }
    }
    Fdinfo::Other
}

/// The object id in raw fdinfo bytes: the value of the first complete
/// `<key>:\t<digits>\n` line. Works on bytes without allocating, for the
/// owner scan that reads thousands of these.
pub(crate) fn id_in(raw: &[u8], key: &[u8]) -> Option<u32> {
    value_in(raw, key).and_then(|v| u32::try_from(v).ok())
}

/// The decimal value of the first complete `<key>:\t<digits>\n` line in
/// raw fdinfo bytes, without allocating: for the one or two fields a
/// listing reads from every object. A value that is not plain decimal (or
/// overflows) is `None`.
pub(crate) fn value_in(raw: &[u8], key: &[u8]) -> Option<u64> {
    let mut rest = raw;
    loop {
        let nl = rest.iter().position(|&b| b == b'\n')?;
        let line = &rest[..nl];
        rest = &rest[nl + 1..];
        let Some(v) = line.strip_prefix(key).and_then(|r| r.strip_prefix(b":")) else {
            continue;
        };
        let v = v.trim_ascii();
        if v.is_empty() || !v.iter().all(u8::is_ascii_digit) {
            return None;
        }
        return v.iter().try_fold(0u64, |acc, &d| {
            acc.checked_mul(10)?.checked_add(u64::from(d - b'0'))
        });
    }
}

/// Read the fdinfo of one of this process's own fds (e.g. one opened with
/// GET_FD_BY_ID). Its text is a few hundred bytes.
pub fn read_own(fd: BorrowedFd<'_>) -> io::Result<String> {
    let mut f = std::fs::File::open(format!("/proc/self/fdinfo/{}", fd.as_raw_fd()))?;
    let mut s = String::with_capacity(512);
    f.read_to_string(&mut s)?;
    Ok(s)
}

/// fdinfo bytes as text (lossy UTF-8; the kernel writes ASCII).
fn lossy(raw: &[u8]) -> String {
    String::from_utf8_lossy(raw).into_owned()
}

/// brr's own `/proc/self/fdinfo`, opened once for reading many fds: each
/// read is then one openat relative to it instead of a walk from `/`.
///
/// [`OwnFdinfo::read_object`] goes further for walks that close each
/// object's fd before opening the next (which then gets the same number):
/// the kernel looks the fd number up again at every read of an fdinfo
/// file, so the file opened for the last object serves the next one with a
/// single `pread`. The object id in the text proves it; a kernel that
/// answered for the old object would turn the reuse off.
pub struct OwnFdinfo {
    dir: OwnedFd,
    buf: Vec<u8>,
    /// The fd number last read and its open fdinfo file.
    last: Option<(i32, OwnedFd)>,
    /// Whether re-reading an open fdinfo file follows its fd number.
    reuse: bool,
    /// Reads served by a file opened before.
    reused: u64,
}

impl OwnFdinfo {
    pub fn open() -> io::Result<OwnFdinfo> {
        let dir = openat(
            CWD,
            c"/proc/self/fdinfo",
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )?;
        Ok(OwnFdinfo {
            dir,
            buf: vec![0; 4096],
            last: None,
            reuse: true,
            reused: 0,
        })
    }

    fn open_file(&self, fd: BorrowedFd<'_>) -> io::Result<OwnedFd> {
        let mut name = [0u8; 12];
        let mut len = 0;
        for d in fd.as_raw_fd().unsigned_abs().to_string().bytes() {
            name[len] = d;
            len += 1;
        }
        let name = CStr::from_bytes_with_nul(&name[..=len]).map_err(io::Error::other)?;
        Ok(openat(
            &self.dir,
            name,
            OFlags::RDONLY | OFlags::CLOEXEC,
            Mode::empty(),
        )?)
    }

    /// The whole text of an fdinfo file from its start, into `buf`; its
    /// length. fdinfo is one seq_file record: a read that leaves room in
    /// the buffer returned all of it, so no second read is needed for EOF.
    fn fill(buf: &mut [u8], file: &OwnedFd) -> io::Result<usize> {
        let mut n = 0;
        while n < buf.len() {
            match rustix::io::pread(file, &mut buf[n..], n as u64)? {
                0 => break,
                k if n + k < buf.len() => {
                    n += k;
                    break;
                }
                k => n += k,
            }
        }
        Ok(n)
    }

    /// The fdinfo text of `fd` (lossy UTF-8; the kernel writes ASCII).
    pub fn read(&mut self, fd: BorrowedFd<'_>) -> io::Result<String> {
        let f = self.open_file(fd)?;
        let n = Self::fill(&mut self.buf, &f)?;
        Ok(lossy(&self.buf[..n]))
    }

    /// The fdinfo text of `fd`, which holds the object whose `key` line
    /// (`prog_id`, `map_id`, `link_id`) is `id`: one `pread` when the last
    /// call read the same fd number, else an open and a read.
    pub fn read_object(&mut self, fd: BorrowedFd<'_>, key: &[u8], id: u32) -> io::Result<String> {
        self.read_object_with(fd, key, id, lossy)
    }

    /// [`OwnFdinfo::read_object`], handing the raw bytes to `parse`
    /// rather than making a string of them.
    pub(crate) fn read_object_with<T>(
        &mut self,
        fd: BorrowedFd<'_>,
        key: &[u8],
        id: u32,
        parse: impl FnOnce(&[u8]) -> T,
    ) -> io::Result<T> {
        let raw = fd.as_raw_fd();
        if let Some((_, file)) = self.last.as_ref().filter(|(n, _)| *n == raw && self.reuse) {
            match Self::fill(&mut self.buf, file) {
                Ok(n) if id_in(&self.buf[..n], key) == Some(id) => {
                    self.reused += 1;
                    return Ok(parse(&self.buf[..n]));
                }
                // Another object's text (or none): this kernel does not
                // follow the number, or does not print the id.
                _ => self.reuse = false,
            }
        }
        self.last = None;
        let file = self.open_file(fd)?;
        let n = Self::fill(&mut self.buf, &file)?;
        if self.reuse {
            self.last = Some((raw, file));
        }
        Ok(parse(&self.buf[..n]))
    }

    /// How many reads an fdinfo file opened before served.
    pub fn reused(&self) -> u64 {
        self.reused
    }
}

pub fn own_prog(fd: BorrowedFd<'_>) -> io::Result<ProgFdinfo> {
    read_own(fd).map(|t| parse_prog(&t))
}

pub fn own_map(fd: BorrowedFd<'_>) -> io::Result<MapFdinfo> {
    read_own(fd).map(|t| parse_map(&t))
}

pub fn own_link(fd: BorrowedFd<'_>) -> io::Result<LinkFdinfo> {
    read_own(fd).map(|t| parse_link(&t))
}

#[cfg(test)]
#[allow(clippy::string_slice)] // cuts of ASCII test inputs
pub(crate) mod tests {
    use super::*;

    // Recorded on this machine (6.18) from a fixture process's fds.
    pub(crate) const PROG: &str =
        "pos:\t0\nflags:\t02000002\nmnt_id:\t17\nino:\t1039\nprog_type:\t1\n\
prog_jited:\t1\nprog_tag:\t76e12d2eda8c6cc5\nmemlock:\t8192\nprog_id:\t1106\n\
run_time_ns:\t5765206870\nrun_cnt:\t372719\nrecursion_misses:\t0\nverified_insns:\t1004\n";
    pub(crate) const MAP: &str =
        "pos:\t0\nflags:\t02000002\nmnt_id:\t17\nino:\t1039\nmap_type:\t2\n\
key_size:\t4\nvalue_size:\t8\nmax_entries:\t4\nmap_flags:\t0x0\nmap_extra:\t0x0\n\
memlock:\t344\nmap_id:\t1028\nfrozen:\t0\n";
    pub(crate) const LINK: &str = "pos:\t0\nflags:\t02000000\nmnt_id:\t17\nino:\t1039\n\
link_type:\traw_tracepoint\nlink_id:\t90\nprog_tag:\t59f4a931744dcdc6\nprog_id:\t1108\n\
tp_name:\tsched_switch\ncookie:\t0\n";
    // A cgroup link as 6.x prints it.
    const CGROUP_LINK: &str = "pos:\t0\nflags:\t02000000\nmnt_id:\t17\nino:\t1039\n\
link_type:\tcgroup\nlink_id:\t7\nprog_tag:\t59f4a931744dcdc6\nprog_id:\t42\n\
cgroup_id:\t1234\nattach_type:\t0\n";

    #[test]
    fn program() {
        let p = parse_prog(PROG);
        assert_eq!(
            p,
            ProgFdinfo {
                prog_type: Some(1),
                jited: Some(true),
                tag: Some("76e12d2eda8c6cc5".into()),
                memlock: Some(8192),
                prog_id: Some(1106),
                run_time_ns: Some(5_765_206_870),
                run_cnt: Some(372_719),
                recursion_misses: Some(0),
                verified_insns: Some(1004),
            }
        );
        assert_eq!(parse(PROG), Fdinfo::Prog(p));
    }

    #[test]
    fn map() {
        let m = parse_map(MAP);
        assert_eq!(
            m,
            MapFdinfo {
                map_type: Some(2),
                key_size: Some(4),
                value_size: Some(8),
                max_entries: Some(4),
                map_flags: Some(0),
                map_extra: Some(0),
                memlock: Some(344),
                map_id: Some(1028),
                frozen: Some(false),
            }
        );
        let flagged = MAP
            .replace("map_flags:\t0x0", "map_flags:\t0x1080")
            .replace("frozen:\t0", "frozen:\t1");
        let m = parse_map(&flagged);
        assert_eq!((m.map_flags, m.frozen), (Some(0x1080), Some(true)));
        assert!(matches!(parse(MAP), Fdinfo::Map(_)));
    }

    #[test]
    fn links_keep_their_per_type_lines() {
        let l = parse_link(LINK);
        assert_eq!(l.link_type.as_deref(), Some("raw_tracepoint"));
        assert_eq!((l.link_id, l.prog_id), (Some(90), Some(1108)));
        assert_eq!(l.prog_tag.as_deref(), Some("59f4a931744dcdc6"));
        assert_eq!(l.attach_type, None);
        assert_eq!(l.get("tp_name"), Some("sched_switch"));
        assert_eq!(l.get("cookie"), Some("0"));
        assert_eq!(l.get("pos"), None);
        let c = parse_link(CGROUP_LINK);
        assert_eq!(c.attach_type, Some(0));
        assert_eq!(c.get("cgroup_id"), Some("1234"));
        assert!(matches!(parse(CGROUP_LINK), Fdinfo::Link(_)));
    }

    /// Recorded on this machine from the live tests' links.
    #[test]
    fn recorded_per_type_link_lines() {
        let tcx = parse_link(
            "pos:\t0\nflags:\t02000000\nmnt_id:\t17\nino:\t1039\nlink_type:\ttcx\n\
link_id:\t250\nprog_tag:\t59f4a931744dcdc6\nprog_id:\t969479\nifindex:\t1\n\
attach_type:\t46 (ingress)\n",
        );
        assert_eq!((tcx.attach_type, tcx.get("ifindex")), (Some(46), Some("1")));
        let nf = parse_link(
            "link_type:\tnetfilter\nlink_id:\t251\nprog_tag:\tb11459a0e11ca14c\n\
prog_id:\t969480\npf:\t2\thooknum:\t1\tprio:\t-100\n",
        );
        assert_eq!(
            (nf.get("pf"), nf.get("hooknum"), nf.get("prio")),
            (Some("2"), Some("1"), Some("-100"))
        );
        let um = parse_link(
            "link_type:\tuprobe_multi\nlink_id:\t247\nprog_tag:\t59f4a931744dcdc6\n\
prog_id:\t969476\nuprobe_cnt:\t1\npid:\t11279\npath:\t/tmp/brr-upmulti-target-11279\n\
cookie\t offset\t ref_ctr_offset\n0\t 0x40\t 0x0\n",
        );
        assert_eq!(um.get("path"), Some("/tmp/brr-upmulti-target-11279"));
        assert_eq!(
            (um.get("uprobe_cnt"), um.get("pid")),
            (Some("1"), Some("11279"))
        );
        assert_eq!(um.extra.len(), 3, "the offsets table is not key/value");
        let pe = parse_link(
            "link_type:\tperf\nlink_id:\t244\nprog_tag:\t59f4a931744dcdc6\nprog_id:\t969471\n\
name:\t/tmp/brr-uprobe-target-11279\noffset:\t0x40\nref_ctr_offset:\t0x0\n\
event_type:\tuprobe\ncookie:\t0\n",
        );
        assert_eq!(pe.link_type.as_deref(), Some("perf"));
        assert_eq!(
            (pe.get("event_type"), pe.get("offset")),
            (Some("uprobe"), Some("0x40"))
        );
        let cg = parse_link(
            "link_type:\tcgroup\nlink_id:\t240\nprog_tag:\tb11459a0e11ca14c\n\
prog_id:\t969465\ncgroup_id:\t177\nattach_type:\t0\n",
        );
        assert_eq!(
            (cg.attach_type, cg.get("cgroup_id")),
            (Some(0), Some("177"))
        );
        assert_eq!(
            tab_pairs("k", "a\tb c\t:\tx:"),
            [
                ("k".to_string(), "a\tb c\t:".to_string()),
                ("x".to_string(), String::new())
            ]
        );
    }

    #[test]
    fn truncated_text_keeps_complete_lines() {
        // Cut inside the memlock value: "memlock:\t81" must not read as 81.
        let cut = &PROG[..PROG.find("memlock:\t8192").unwrap() + 11];
        let p = parse_prog(cut);
        assert_eq!(p.tag.as_deref(), Some("76e12d2eda8c6cc5"));
        assert_eq!((p.memlock, p.prog_id), (None, None));
        for n in 0..PROG.len() {
            let _ = parse(&PROG[..n]);
            let _ = parse_link(&LINK[..n.min(LINK.len())]);
            let _ = id_in(&PROG.as_bytes()[..n], b"prog_id");
        }
        assert_eq!(parse(""), Fdinfo::Other);
        assert_eq!(parse("pos:\t0\nflags:\t02\n"), Fdinfo::Other);
    }

    #[test]
    fn garbage_never_panics_and_bad_values_stay_empty() {
        let junk = "prog_type:\tx\nmemlock:\t-5\nprog_id:\t99999999999\n\u{0}\u{7f}::\n:\t\n\
verified_insns:\t12 34\nprog_jited:\t2\n";
        let p = parse_prog(junk);
        assert_eq!(p, ProgFdinfo::default());
        let m = parse_map("map_flags:\t0xzz\nmap_extra:\t0xffffffffffffffffff\nfrozen:\tyes\n");
        assert_eq!(m, MapFdinfo::default());
        assert_eq!(
            parse_map("map_flags:\t0x100000000\n").map_flags,
            None,
            "flags wider than u32 are not truncated"
        );
        let bytes: Vec<u8> = (0..=255u8).cycle().take(4096).collect();
        let s = String::from_utf8_lossy(&bytes);
        let _ = parse(&s);
        let _ = parse_link(&s);
        let _ = id_in(&bytes, b"map_id");
    }

    #[test]
    fn ids_from_raw_bytes() {
        assert_eq!(id_in(PROG.as_bytes(), b"prog_id"), Some(1106));
        assert_eq!(id_in(MAP.as_bytes(), b"map_id"), Some(1028));
        assert_eq!(id_in(LINK.as_bytes(), b"link_id"), Some(90));
        // The link's prog_id is not its own id.
        assert_eq!(id_in(LINK.as_bytes(), b"map_id"), None);
        assert_eq!(id_in(b"prog_id:\t12", b"prog_id"), None, "cut line");
        assert_eq!(id_in(b"prog_id:\t4294967296\n", b"prog_id"), None);
        assert_eq!(id_in(b"prog_id:\t12a\n", b"prog_id"), None);
        assert_eq!(id_in(b"xprog_id:\t1\nprog_id:\t2\n", b"prog_id"), Some(2));
    }

    #[test]
    fn values_from_raw_bytes_agree_with_the_parsers() {
        let prog = parse_prog(PROG);
        assert_eq!(value_in(PROG.as_bytes(), b"memlock"), prog.memlock);
        let map = parse_map(MAP);
        assert_eq!(value_in(MAP.as_bytes(), b"memlock"), map.memlock);
        assert_eq!(value_in(MAP.as_bytes(), b"frozen"), Some(0));
        assert_eq!(map.frozen, Some(false));
        assert_eq!(
            value_in(b"memlock:\t18446744073709551615\n", b"memlock"),
            Some(u64::MAX)
        );
        assert_eq!(
            value_in(b"memlock:\t18446744073709551616\n", b"memlock"),
            None
        );
        assert_eq!(value_in(b"map_flags:\t0x0\n", b"map_flags"), None);
        assert_eq!(
            value_in(b"memlock_x:\t1\nmemlock:\t2\n", b"memlock"),
            Some(2)
        );
        assert_eq!(value_in(b"memlock:\t", b"memlock"), None, "cut line");
    }
}
