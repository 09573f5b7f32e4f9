//! One program as the drilldown and `dump` show it: its image (read once
//! per drilldown), the helper names beside it, its decoded native code,
//! and whether the program is still loaded; and the JIT code `--annotate`
//! reads for the programs a report lists.

use std::collections::HashMap;
use std::sync::Arc;

use crate::error::{BrrError, Result};
use crate::inspect::disasm::CallNames;
use crate::inspect::native::{self, sampled, NativeImage, Symbols};
use crate::inspect::{helper_syms, insn};
use crate::kernel::kallsyms::Kallsyms;
use crate::kernel::{lines, objects};
use crate::model::image::JitCode;
use crate::model::profile::Profile;
use crate::model::report::Report;
use crate::model::ProgramImage;
use crate::profile::report::{sampled_at, NativeCode, NativeRows};

use super::Native;

/// The image of program `id`: its translated and JITed instructions with
/// their source lines, shared by whoever shows it.
pub(crate) fn program_image(id: u32) -> Result<Arc<ProgramImage>> {
    lines::image_by_id(u64::from(id)).map(Arc::new)
}

/// What `brr dump` shows of program `id`: its image and, when `jited`
/// names which instructions to read beside the JIT code (`Some(xlated)`),
/// its native code decoded with every call named from the kernel symbol
/// table.
pub(crate) fn dump_image(
    id: u32,
    jited: Option<bool>,
) -> Result<(ProgramImage, Option<NativeImage>)> {
    let id = u64::from(id);
    let image = match jited {
        Some(xlated) => lines::jited_image_by_id(id, xlated)?,
        None => lines::image_by_id(id)?,
    };
    let native = jited
        .map(|_| {
            native::build(
                &image,
                native::Arch::host(),
                lines::kptr_restrict(),
                Kallsyms::load,
            )
        })
        .transpose()?;
    Ok((image, native))
}

/// `kernel.kptr_restrict`, which decides whether root may see kernel
/// addresses (None when unreadable): the dump words hidden calls by it.
pub(crate) fn kptr_restrict() -> Option<u32> {
    lines::kptr_restrict()
}

/// What the mixed and native views show beside an image: the names of
/// the helpers and subprograms its translated instructions call, and its
/// native code decoded (or why there is none, in the drilldown's words).
/// The kernel symbol table is read once for both.
pub(crate) fn disassembly(
    image: &ProgramImage,
) -> (CallNames, std::result::Result<Arc<NativeImage>, String>) {
    let ksyms = Kallsyms::load();
    let names = call_names_from(&ksyms, image);
    let native = lines::jited_image_by_id(u64::from(image.program.id), false)
        .and_then(|jited| decode(&jited, &Symbols::new(move || ksyms), &|_, _| true))
        .map(Arc::new)
        .map_err(|e| e.message());
    (names, native)
}

/// The kernel symbols that the image's helper calls and subprogram calls
/// go to, from kallsyms, for [`crate::inspect::disasm::text`] to name them
/// (`call bpf_map_lookup_elem#...`). Empty when kernel addresses are hidden
/// from brr; the helper calls then read `imm` 0
/// ([`crate::inspect::disasm::call_targets_hidden`]).
pub(crate) fn call_names(image: &ProgramImage) -> CallNames {
    call_names_from(&Kallsyms::load(), image)
}

/// [`call_names`] from a symbol table already read.
fn call_names_from(ksyms: &Kallsyms, image: &ProgramImage) -> CallNames {
    helper_syms::from_kallsyms(ksyms, &insn::slots(&image.xlated), &image.jit_ranges)
}

/// Whether program `id` has been unloaded. Any other failure to open it
/// (a permission lost meanwhile) does not say it is gone.
pub(crate) fn program_gone(id: u32) -> bool {
    matches!(
        objects::open_program(u64::from(id)),
        Err(BrrError::NoProgram(_))
    )
}

/// The decoded native code of program `id` (every function, calls named
/// from the kernel symbol table), for the drilldown's native view.
pub(crate) fn native_image(id: u32) -> Result<NativeImage> {
    let jited = lines::jited_image_by_id(u64::from(id), false)?;
    decode(&jited, &Symbols::new(Kallsyms::load), &|_, _| true)
}

fn decode(
    image: &ProgramImage,
    symbols: &Symbols<impl FnOnce() -> Kallsyms>,
    wanted: &dyn Fn(usize, u32) -> bool,
) -> Result<NativeImage> {
    native::build_with(
        image,
        native::Arch::host(),
        withheld_reason(image),
        symbols,
        wanted,
    )
}

/// `kernel.kptr_restrict` when the kernel withheld the code: the sysctl
/// only words the reason.
fn withheld_reason(image: &ProgramImage) -> Option<u32> {
    matches!(image.jited, JitCode::Withheld)
        .then(lines::kptr_restrict)
        .flatten()
}

/// `--annotate`: read and decode the JIT code of every listed program
/// that has direct samples (once each, the kernel symbol table at most
/// once and only when a printed call or jump leaves its program), and add
/// each one's sampled instructions to the report, as `native` asks:
/// with [`Native::Every`] each sampled instruction gets its text (JSON and
/// CSV list them all), else only those the `--line-limit` view shows
/// (formatting is most of the cost of decoding), and with
/// [`Native::Table`] only those are rows. Also returns the native code of
/// program `keep` decoded in full from the same read of its JIT code, for
/// naming every instruction it sampled; None when it has no direct
/// samples, its code could not be read (the program is gone, addresses
/// are hidden) or this host's code is not decoded.
pub(crate) fn annotate_keeping(
    report: &mut Report,
    profile: &Profile,
    native: Native,
    keep: Option<u32>,
) -> Option<NativeImage> {
    let symbols = Symbols::new(Kallsyms::load);
    let texts = match report.totals.line_limit {
        n if n > 0 && native != Native::Every => n,
        _ => usize::MAX,
    };
    let mut code: HashMap<u32, NativeCode> = HashMap::new();
    let mut kept = None;
    for p in report.programs.iter().filter(|p| p.samples > 0) {
        // The engine's order is the report's: most samples first.
        let at = profile.program(p.id).map(sampled_at).unwrap_or_default();
        // Only the kept program's listing is shown under its source lines.
        let read = if keep == Some(p.id) {
            lines::jited_image_by_id(u64::from(p.id), false)
        } else {
            lines::jited_code_by_id(u64::from(p.id))
        };
        if keep == Some(p.id) {
            kept = read
                .as_ref()
                .ok()
                .and_then(|img| decode(img, &symbols, &|_, _| true).ok());
        }
        let decoded = read
            .and_then(|img| {
                let kptr = withheld_reason(&img);
                sampled::decode(&img, native::Arch::host(), kptr, &symbols, &at, texts)
            })
            .map_err(|e| e.message());
        code.insert(p.id, decoded);
    }
    let rows = match native {
        Native::Table => NativeRows::Table,
        _ => NativeRows::All,
    };
    crate::profile::report::annotate(report, profile, code, rows);
    kept
}
