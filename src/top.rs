//! `brr top --textmode`: one activity window, then optionally one program's
//! drilldown (profiled with `--profile-top`).

use crate::activity;
use crate::cli::{Cli, TopOptions};
use crate::commands::{attach_prog_pins, devmode_tree, measure_window};
use crate::error::{BrrError, Result};
use crate::inspect::drilldown::{Devmode, Drilldown, Options, ProgramData};
use crate::inspect::insn;
use crate::inspect::profile::ProfileInput;
use crate::kernel::{helper_syms, lines};
use crate::render::textmode;

/// Line limit when `--line-limit` is not given: 10 in textmode.
const TEXTMODE_LINE_LIMIT: usize = 10;

/// Run a profile of program `id` with the top options. The capture engine
/// lives in `src/profile`; this is the seam it plugs into.
fn profile_program(_t: &TopOptions, _id: u32, _line_limit: usize) -> Result<ProfileInput> {
    Err(BrrError::Failed(
        "perf profiling is not available in this build yet".to_string(),
    ))
}

pub fn run(cli: &Cli, t: &TopOptions) -> Result<(String, i32)> {
    if !t.textmode {
        return Err(BrrError::Failed(
            "the interactive top view is not available in this build yet; use 'brr top --textmode'"
                .to_string(),
        ));
    }
    // A program the user named is checked before anything is measured.
    let named = t.program_id.map(lines::image_by_id).transpose()?;
    let (base, mut current, measured) = measure_window(t.delay)?;
    attach_prog_pins(&mut current, &cli.bpffs);
    let all_rows = activity::compute(&base, &current, true, 0);
    let shown = if t.limit > 0 && all_rows.len() > t.limit {
        &all_rows[..t.limit]
    } else {
        &all_rows[..]
    };
    let mut sections = vec![textmode::activity(
        shown,
        t.delay,
        measured,
        cli.cumulative,
        cli.extended,
    )];
    let mut code = 0;
    let image = match named {
        Some(img) => Some(img),
        None if t.profile_top => match all_rows.first() {
            Some(r) => Some(lines::image_by_id(r.prog.id as u64)?),
            None => {
                sections.push(textmode::no_program());
                None
            }
        },
        None => None,
    };
    if let Some(image) = image {
        let line_limit = t.line_limit.unwrap_or(TEXTMODE_LINE_LIMIT);
        let profile = if t.profile_top {
            Some(profile_program(t, image.program.id, line_limit)?)
        } else {
            None
        };
        if t.fail_on_loss && profile.as_ref().is_some_and(|p| p.incomplete) {
            code = 1;
        }
        let slots = insn::slots(&image.xlated);
        let opts = Options {
            mixed: t.mixed,
            exact_ips: t.kernel_ip_detail,
            source_limit: t.source_limit,
            bpftool: if t.mixed {
                crate::bpftool::disasm(image.program.id as u64)
            } else {
                Vec::new()
            },
            call_names: if t.mixed {
                helper_syms::for_program(&slots, &image.jit_ranges)
            } else {
                Default::default()
            },
        };
        let mut tree = t.devmode.as_deref().map(devmode_tree);
        let dev = tree
            .as_mut()
            .map(|(tree, bare)| Devmode { tree, bare: *bare });
        let name = image.program.name.clone();
        let dd = Drilldown::build(
            ProgramData {
                id: image.program.id,
                name: &name,
                xlated: &image.xlated,
                lines: &image.lines,
                jit_ranges: &image.jit_ranges,
            },
            profile.as_ref(),
            &opts,
            dev,
        )
        .map_err(BrrError::Failed)?;
        sections.push(textmode::inspect(&dd, t.collapse_samples));
    }
    Ok((sections.join("\n\n"), code))
}
