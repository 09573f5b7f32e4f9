//! `brr top --textmode`: one activity window, then optionally one program's
//! drilldown (profiled with `--profile-top`).

use crate::activity;
use crate::cli::{Cli, TopOptions};
use crate::commands::{attach_prog_pins, capture, devmode_tree, measure_window};
use crate::error::{BrrError, Result};
use crate::inspect::drilldown::{Devmode, Drilldown, Options, ProgramData};
use crate::inspect::helper_syms;
use crate::inspect::insn;
use crate::inspect::profile::{DrillProfile, KernelRow, ProfileInput};
use crate::kernel::lines;
use crate::model::profile as data;
use crate::profile::{self, aggregate};
use crate::render::textmode;

/// Line limit when `--line-limit` is not given: 10 in textmode.
const TEXTMODE_LINE_LIMIT: usize = 10;

/// Profile program `id` with the top options (selected-program mode).
fn profile_program(
    t: &TopOptions,
    bpffs: &str,
    id: u32,
    line_limit: usize,
) -> Result<ProfileInput> {
    let req = profile::Request {
        event: t.event.clone(),
        duration: t.profile_duration,
        frequency: t.frequency,
        kernel_samples: t.kernel_samples,
        call_graph: if t.call_graph == "lbr" { "lbr" } else { "fp" },
        pages: Some(t.perf_buffer_pages).filter(|&p| p > 0),
        drain_ms: Some(t.perf_drain_ms).filter(|&p| p > 0),
        program_id: Some(id as u64),
        bpffs: bpffs.to_string(),
    };
    Ok(drilldown_input(&capture(&req)?, id, line_limit))
}

/// The engine's result for one program, cut by `--line-limit` in the
/// profiler's order, as the drilldown's plain input.
pub fn drilldown_input(prof: &data::Profile, id: u32, line_limit: usize) -> ProfileInput {
    let program = prof.program(id).map(|p| {
        let view = aggregate::ProgramView::new(p, line_limit);
        DrillProfile {
            samples: p.samples,
            kernel_samples: p.kernel_samples,
            inclusive_samples: p.inclusive_samples(),
            inclusive_cpu_percent: prof.cpu_percent(p.inclusive_samples()),
            direct_source_unmapped_samples: p.direct_source_unmapped_samples,
            under_bpf_caller_source_unmapped_samples: p.under_bpf_caller_source_unmapped_samples,
            direct_hotspot_samples_omitted_by_limit: view.direct_omitted,
            under_bpf_hotspot_samples_omitted_by_limit: view.kernel_omitted,
            under_bpf_function_samples_omitted_by_limit: view.groups_omitted,
            unaccounted_samples: 0,
            hotspots: view.hotspots.clone(),
            kernel_ips: view
                .kernel
                .iter()
                .map(|k| KernelRow {
                    row: k.clone(),
                    ip_count: 1,
                })
                .collect(),
            kernel_functions: view.groups.clone(),
        }
    });
    ProfileInput {
        program,
        line_limit,
        warnings: prof.telemetry.warnings.clone(),
        incomplete: prof.telemetry.incomplete,
    }
}

pub fn run(cli: &Cli, t: &TopOptions) -> Result<(String, i32)> {
    if !t.textmode {
        return crate::tui::run(cli, t);
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
            Some(profile_program(
                t,
                &cli.bpffs,
                image.program.id,
                line_limit,
            )?)
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
        .map_err(BrrError::from)?;
        sections.push(textmode::inspect(&dd, t.collapse_samples));
    }
    Ok((sections.join("\n\n"), code))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kh(samples: u64, sym: &str, off: u64, line: u32) -> data::KernelHotspot {
        data::KernelHotspot {
            samples,
            ip: 0x1000 + off,
            symbol: Some(sym.into()),
            symbol_offset: Some(off),
            kind: "kernel",
            bpf_file: Some("/p.c".into()),
            bpf_line: Some(line),
            caller_mapped: true,
            ..Default::default()
        }
    }

    #[test]
    fn engine_result_to_drilldown_input() {
        let hs = |samples, line| data::Hotspot {
            samples,
            jited_address: Some(0x10),
            instruction_offset: Some(8),
            file: Some("/p.c".into()),
            line: Some(line),
            ..Default::default()
        };
        let prof = data::Profile {
            duration: 2.0,
            frequency: 100,
            programs: vec![data::ProgramProfile {
                id: 9,
                samples: 10,
                kernel_samples: 6,
                hotspots: vec![hs(1, 3), hs(7, 4), hs(2, 5)],
                kernel_hotspots: vec![
                    kh(3, "memcmp", 4, 4),
                    kh(2, "memcmp", 8, 4),
                    kh(1, "a", 0, 5),
                ],
                ..Default::default()
            }],
            telemetry: data::Telemetry {
                warnings: vec!["w".into()],
                incomplete: true,
                ..Default::default()
            },
            ..Default::default()
        };
        let input = drilldown_input(&prof, 9, 1);
        let p = input.program.unwrap();
        assert_eq!(
            (p.samples, p.kernel_samples, p.inclusive_samples),
            (10, 6, 16)
        );
        assert_eq!(p.inclusive_cpu_percent, 8.0);
        // The line limit keeps the hottest row of each list.
        assert_eq!(p.hotspots.len(), 1);
        assert_eq!(p.hotspots[0].samples, 7);
        assert_eq!(p.direct_hotspot_samples_omitted_by_limit, 3);
        assert_eq!(p.kernel_ips.len(), 1);
        assert_eq!(p.under_bpf_hotspot_samples_omitted_by_limit, 3);
        assert_eq!(p.kernel_functions[0].ip_count, 2);
        assert_eq!(p.kernel_functions[0].samples, 5);
        assert_eq!(p.under_bpf_function_samples_omitted_by_limit, 1);
        assert_eq!((input.line_limit, input.incomplete), (1, true));
        assert!(drilldown_input(&prof, 8, 1).program.is_none());
    }
}
