//! One program as the drilldown and `dump` show it: its image (read once
//! per drilldown), bpftool's disassembly and the helper names beside it,
//! its decoded native code, and whether the program is still loaded.

use std::sync::Arc;

use crate::error::{BrrError, Result};
use crate::inspect::disasm::CallNames;
use crate::inspect::native::{self, Arch, NativeImage};
use crate::inspect::{helper_syms, insn};
use crate::kernel::kallsyms::Kallsyms;
use crate::kernel::{lines, objects};
use crate::model::ProgramImage;

/// The image of program `id`: its translated and JITed instructions with
/// their source lines, shared by whoever shows it.
pub fn program_image(id: u32) -> Result<Arc<ProgramImage>> {
    lines::image_by_id(u64::from(id)).map(Arc::new)
}

/// What mixed mode shows beside an image: bpftool's disassembly lines
/// (none when bpftool is missing or fails) and the names of the helpers
/// and subprograms the instructions call.
pub fn disassembly(image: &ProgramImage) -> (Vec<String>, CallNames) {
    let bpftool = crate::bpftool::disasm(u64::from(image.program.id));
    (bpftool, call_names(image))
}

/// The kernel symbols that the image's helper calls and subprogram calls
/// go to, from kallsyms, for [`crate::inspect::disasm::text`] to name them
/// (`call bpf_map_lookup_elem#...`). Empty when kernel addresses are hidden
/// from brr; the helper calls then read `imm` 0
/// ([`crate::inspect::disasm::call_targets_hidden`]).
pub fn call_names(image: &ProgramImage) -> CallNames {
    helper_syms::for_program(&insn::slots(&image.xlated), &image.jit_ranges)
}

/// The decoded native code of program `id`, for naming the instructions
/// a profile sampled; None when it cannot be read (the program is gone,
/// addresses are hidden) or this host's code is not decoded.
pub fn native_code(id: u32) -> Option<NativeImage> {
    let image = lines::jited_image_by_id(u64::from(id), false).ok()?;
    native::build(&image, Arch::host(), lines::kptr_restrict(), Kallsyms::load).ok()
}

/// Whether program `id` has been unloaded. Any other failure to open it
/// (a permission lost meanwhile) does not say it is gone.
pub fn program_gone(id: u32) -> bool {
    matches!(
        objects::open_program(u64::from(id)),
        Err(BrrError::NoProgram(_))
    )
}
