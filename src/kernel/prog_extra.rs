//! What bpftool shows about a program beyond brr's listing fields: the
//! full name, the load time as a wall-clock date, the loading uid, GPL
//! compatibility, verifier and recursion counters, and its memlock.
//!
//! Per program this costs one info call that asks for a single `func_info`
//! record and one read of the fd's fdinfo; the BTF that names the main
//! function is fetched once per BTF object and shared by the programs that
//! came from the same object file.

use std::collections::HashMap;
use std::os::fd::{AsFd, OwnedFd};

use rustix::time::{clock_gettime, ClockId};

use crate::kernel::btf::BtfData;
use crate::kernel::fdinfo;
use crate::kernel::names;
use crate::sys::bpf::{self, ObjKind, ProgInfo};
use crate::sys::Errno;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProgExtra {
    pub id: u32,
    /// The BTF name of the main function, else the kernel's (15-byte) name.
    pub full_name: String,
    /// Boot-relative load time as the kernel reports it.
    pub load_time_ns: u64,
    /// `load_time_ns` as ISO 8601 UTC (`2026-12-01T09:02:18Z`); `None` when
    /// the clocks could not be read.
    pub loaded_at: Option<String>,
    pub created_by_uid: u32,
    pub gpl_compatible: bool,
    /// `None` on a kernel that does not report it (before 5.16).
    pub verified_insns: Option<u32>,
    /// `None` on a kernel without the counter (before 5.12).
    pub recursion_misses: Option<u64>,
    /// From the fd's fdinfo; `None` when it could not be read.
    pub memlock_bytes: Option<u64>,
}

/// Wall-clock nanoseconds since the epoch at boot: REALTIME - BOOTTIME,
/// read back to back. Suspend time is in BOOTTIME, so this stays right
/// across suspends (load_time is BOOTTIME-based).
pub(crate) fn boot_epoch_ns() -> i128 {
    let ns =
        |t: rustix::time::Timespec| i128::from(t.tv_sec) * 1_000_000_000 + i128::from(t.tv_nsec);
    let real = ns(clock_gettime(ClockId::Realtime));
    let boot = ns(clock_gettime(ClockId::Boottime));
    real - boot
}

/// A boot-relative kernel timestamp as a wall-clock date.
pub(crate) fn loaded_at(load_time_ns: u64, boot_epoch_ns: i128) -> String {
    let wall = boot_epoch_ns + i128::from(load_time_ns);
    let secs = wall.div_euclid(1_000_000_000);
    crate::utc::iso8601(i64::try_from(secs).unwrap_or(i64::MAX))
}

/// The main function's BTF name, else the kernel name.
pub(crate) fn full_name(
    kernel_name: &[u8],
    first_func_type: Option<u32>,
    btf: Option<&BtfData>,
) -> String {
    first_func_type
        .and_then(|t| btf?.func_name(t))
        .unwrap_or_else(|| names::object_name(kernel_name))
}

/// The pure part: fields from the info struct (of which the kernel filled
/// `len` bytes), the first func_info type id and the fdinfo text.
pub(crate) fn from_parts(
    info: &ProgInfo,
    len: u32,
    first_func_type: Option<u32>,
    btf: Option<&BtfData>,
    fdinfo_text: Option<&str>,
    boot_epoch_ns: Option<i128>,
) -> ProgExtra {
    ProgExtra {
        id: info.id,
        full_name: full_name(&info.name, first_func_type, btf),
        load_time_ns: info.load_time,
        loaded_at: boot_epoch_ns.map(|b| loaded_at(info.load_time, b)),
        created_by_uid: info.created_by_uid,
        gpl_compatible: info.gpl_compatible != 0,
        verified_insns: info.verified_insns_in(len),
        recursion_misses: info.recursion_misses_in(len),
        memlock_bytes: fdinfo_text.and_then(|t| fdinfo::parse_prog(t).memlock),
    }
}

/// Parsed BTF objects kept at once.
const BTF_CACHE: usize = 16;

/// Reads extras for many programs, sharing BTF blobs and the boot time.
pub struct ExtraReader {
    btfs: HashMap<u32, Option<BtfData>>,
    boot_epoch_ns: i128,
    /// Opened on the first fdinfo read; `Some(None)` when that failed.
    fdinfo: Option<Option<fdinfo::OwnFdinfo>>,
    /// fdinfo files read, so that tests can tell a walk that read none.
    fdinfo_reads: u64,
}

impl Default for ExtraReader {
    fn default() -> Self {
        ExtraReader::new()
    }
}

impl ExtraReader {
    pub fn new() -> ExtraReader {
        ExtraReader {
            btfs: HashMap::new(),
            boot_epoch_ns: boot_epoch_ns(),
            fdinfo: None,
            fdinfo_reads: 0,
        }
    }

    fn btf(&mut self, btf_id: u32) -> Option<&BtfData> {
        if btf_id == 0 {
            return None;
        }
        // Programs from one object file share a BTF and sit at adjacent
        // IDs, so a few recent BTFs cover a walk; a bound keeps a listing
        // of thousands of programs from holding thousands of BTFs.
        if self.btfs.len() >= BTF_CACHE && !self.btfs.contains_key(&btf_id) {
            self.btfs.clear();
        }
        self.btfs
            .entry(btf_id)
            .or_insert_with(|| {
                // A BTF object that vanished means no full name, not an error.
                let fd = bpf::fd_by_id(ObjKind::Btf, btf_id).ok()?;
                let (_, _, data) = bpf::btf_info(&fd, true).ok()?;
                Some(BtfData::parse(&data))
            })
            .as_ref()
    }

    /// Extras of the program behind `fd` (an fd brr opened by id).
    pub fn read(&mut self, fd: &OwnedFd) -> Result<ProgExtra, Errno> {
        let l = bpf::prog_info_listing(fd.as_fd(), false)?;
        Ok(self.complete(fd, &l.info, l.len, l.first_func, true))
    }

    /// Extras from an info struct already read (with at most one
    /// `func_info` record asked for); `with_fdinfo` adds the memlock at the
    /// cost of one small read.
    pub(crate) fn complete(
        &mut self,
        fd: &OwnedFd,
        info: &ProgInfo,
        len: u32,
        first: Option<(u32, u32)>,
        with_fdinfo: bool,
    ) -> ProgExtra {
        let memlock = if with_fdinfo {
            self.fdinfo_object(fd, b"prog_id", info.id, |raw| {
                fdinfo::value_in(raw, b"memlock")
            })
            .flatten()
        } else {
            None
        };
        let boot = self.boot_epoch_ns;
        // Without a func_info record there is no BTF name to look up.
        let btf = if first.is_some() {
            self.btf(info.btf_id)
        } else {
            None
        };
        let mut extra = from_parts(
            info,
            len,
            first.map(|(_, type_id)| type_id),
            btf,
            None,
            Some(boot),
        );
        extra.memlock_bytes = memlock;
        extra
    }

    /// What `parse` makes of the fdinfo of the object `key` = `id`
    /// (`prog_id`, `map_id`) behind one of brr's own fds; see
    /// [`fdinfo::OwnFdinfo::read_object_with`].
    pub(crate) fn fdinfo_object<T>(
        &mut self,
        fd: &OwnedFd,
        key: &[u8],
        id: u32,
        parse: impl FnOnce(&[u8]) -> T,
    ) -> Option<T> {
        self.fdinfo_reads += 1;
        let dir = self
            .fdinfo
            .get_or_insert_with(|| fdinfo::OwnFdinfo::open().ok());
        match dir {
            Some(d) => d.read_object_with(fd.as_fd(), key, id, parse).ok(),
            None => fdinfo::read_own(fd.as_fd())
                .ok()
                .map(|t| parse(t.as_bytes())),
        }
    }

    /// How many fdinfo files this reader has read.
    pub fn fdinfo_reads(&self) -> u64 {
        self.fdinfo_reads
    }

    /// Extras of the program with this id; ENOENT when it is gone.
    pub fn read_id(&mut self, id: u32) -> Result<ProgExtra, Errno> {
        let fd = bpf::fd_by_id(ObjKind::Prog, id)?;
        self.read(&fd)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::btf::tests::blob;
    use crate::kernel::fdinfo::tests::PROG;

    #[test]
    fn dates() {
        // Booted at 2026-12-01T08:04:40Z, loaded 1 h 4 min 18.9 s later.
        let boot = 1_796_112_280i128 * 1_000_000_000;
        assert_eq!(loaded_at(3_858_900_000_000, boot), "2026-12-01T09:08:58Z");
        let _ = loaded_at(u64::MAX, i128::MAX / 2);
    }

    /// A kernel fills its own struct's size: 5.10's bpf_prog_info ends
    /// after run_cnt (208 bytes), 5.12 adds recursion_misses (216), 5.16
    /// verified_insns (224). A field past the end is unknown, not 0.
    #[test]
    fn fields_an_older_kernel_lacks_are_none() {
        let mut info = ProgInfo::default();
        info.verified_insns = 7;
        info.recursion_misses = 2;
        let both = |len| {
            let e = from_parts(&info, len, None, None, None, None);
            (e.verified_insns, e.recursion_misses)
        };
        assert_eq!(both(208), (None, None));
        assert_eq!(both(216), (None, Some(2)));
        assert_eq!(both(224), (Some(7), Some(2)));
        assert_eq!(both(232), (Some(7), Some(2)));
        assert_eq!(both(0), (None, None));
    }

    #[test]
    fn names_and_fields() {
        let (data, _) = blob("handle_sched_switch_event", &[]);
        let btf = BtfData::parse(&data);
        let mut info = ProgInfo::default();
        info.id = 1106;
        info.name[..15].copy_from_slice(b"handle_sched_sw");
        info.load_time = 5_000_000_000;
        info.created_by_uid = 1000;
        info.gpl_compatible = 1;
        info.verified_insns = 1004;
        info.recursion_misses = 3;
        let e = from_parts(&info, 232, Some(3), Some(&btf), Some(PROG), Some(0));
        assert_eq!(e.full_name, "handle_sched_switch_event");
        assert_eq!(e.loaded_at.as_deref(), Some("1970-01-01T00:00:05Z"));
        assert_eq!((e.created_by_uid, e.gpl_compatible), (1000, true));
        assert_eq!(
            (e.verified_insns, e.recursion_misses),
            (Some(1004), Some(3))
        );
        assert_eq!(e.memlock_bytes, Some(8192));
        let e = from_parts(&info, 232, None, Some(&btf), None, None);
        assert_eq!(e.full_name, "handle_sched_sw");
        assert_eq!((e.memlock_bytes, e.loaded_at), (None, None));
        assert_eq!(
            full_name(&info.name, Some(9), Some(&btf)),
            "handle_sched_sw"
        );
        assert_eq!(full_name(&info.name, Some(3), None), "handle_sched_sw");
        assert_eq!(full_name(&[0; 16], None, None), "-");
    }

    #[test]
    fn boot_epoch_is_in_the_past() {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos() as i128;
        let b = boot_epoch_ns();
        assert!(b > 0 && b <= now, "{b} vs {now}");
    }
}
