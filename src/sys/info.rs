//! `BPF_OBJ_GET_INFO_BY_FD` for info layouts and array requests that
//! `sys::bpf` does not cover: the full link info union with its name
//! buffers, and a program's first `func_info` record in a single call.

use std::os::fd::{AsRawFd, BorrowedFd};

use super::bpf::ProgInfo;
use super::Errno;

const BPF_OBJ_GET_INFO_BY_FD: i32 = 15;

#[repr(C)]
#[derive(Default)]
struct InfoAttr {
    bpf_fd: u32,
    info_len: u32,
    info: u64,
}
const _: () = assert!(std::mem::size_of::<InfoAttr>() == 16);

/// Plain-old-data info layouts: all-zero is valid and so is any byte
/// pattern the kernel writes.
///
/// # Safety
/// Implementors are #[repr(C)] and hold only integers, integer arrays and
/// unions of such.
pub(crate) unsafe trait Pod: Sized + Copy {
    fn zeroed() -> Self {
        // SAFETY: guaranteed by the trait contract.
        unsafe { std::mem::zeroed() }
    }

    /// A value from the first bytes of `raw`; missing bytes stay zero, as
    /// when an older kernel fills less of the struct.
    fn from_prefix(raw: &[u8]) -> Self {
        let mut v = Self::zeroed();
        let n = raw.len().min(std::mem::size_of::<Self>());
        // SAFETY: `v` is a live Pod value of size_of::<Self>() bytes, n is
        // within both buffers, and any bytes are a valid Pod.
        unsafe {
            std::ptr::copy_nonoverlapping(raw.as_ptr(), &mut v as *mut Self as *mut u8, n);
        }
        v
    }
}

// SAFETY: ProgInfo is #[repr(C)] with integer fields only.
unsafe impl Pod for ProgInfo {}

/// Fill `info` for `fd`; returns how many bytes the kernel wrote
/// (`min(size_of::<T>(), the kernel's struct size)`).
///
/// Any pointer fields set in `info` must point at live buffers of the
/// lengths set beside them for the duration of the call.
pub(crate) fn get_info<T: Pod>(fd: BorrowedFd<'_>, info: &mut T) -> Result<u32, Errno> {
    let mut attr = InfoAttr {
        bpf_fd: fd.as_raw_fd() as u32,
        info_len: std::mem::size_of::<T>() as u32,
        info: info as *mut T as u64,
    };
    // SAFETY: attr is a live #[repr(C)] attr of the stated size; the
    // kernel writes at most info_len bytes into `info` (a Pod, so any bytes
    // are valid) and into the buffers the caller's pointers describe.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_bpf,
            BPF_OBJ_GET_INFO_BY_FD as libc::c_long,
            &mut attr as *mut InfoAttr as *mut libc::c_void,
            std::mem::size_of::<InfoAttr>() as libc::c_uint,
        )
    };
    if rc < 0 {
        Err(Errno::last())
    } else {
        Ok(attr.info_len)
    }
}

/// A program's info with at most its first `func_info` record
/// `(insn_off, type_id)`, in one call: the kernel copies
/// `min(asked, has)` records, so asking for one needs no size probe.
pub fn prog_info_first_func(fd: BorrowedFd<'_>) -> Result<(ProgInfo, Option<(u32, u32)>), Errno> {
    let mut rec = [0u32; 2];
    let mut info = ProgInfo::default();
    info.nr_func_info = 1;
    info.func_info_rec_size = 8;
    info.func_info = rec.as_mut_ptr() as u64;
    get_info(fd, &mut info)?;
    // nr_func_info now holds the program's own count; 0 means no BTF funcs.
    let first = (info.nr_func_info > 0).then_some((rec[0], rec[1]));
    info.func_info = 0;
    Ok((info, first))
}
