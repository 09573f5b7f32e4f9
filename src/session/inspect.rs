//! What inspecting one program needs: the `--devmode` source tree and
//! contexts, the `dump-compare` check against bpftool, and a profile cut
//! down to the drilldown's input.

use std::path::Path;

use crate::error::{BrrError, Result};
use crate::inspect::compare::{self, ToolRow};
use crate::inspect::drilldown::DEVMODE_NOTHING;
use crate::inspect::insn;
use crate::inspect::profile::{DrillProfile, KernelRow, ProfileInput};
use crate::inspect::source::{self, SourceTree};
use crate::kernel::{bpffs, lines};
use crate::model::report::Report;
use crate::model::source::SourceContexts;

/// The `--devmode` tree: DIR (normalised) or, for a bare flag (an empty
/// path), the current directory. Returns the tree and whether the flag was
/// bare.
pub(crate) fn devmode_tree(dir: impl AsRef<Path>) -> (SourceTree, bool) {
    let dir = dir.as_ref();
    if dir.as_os_str().is_empty() {
        let cwd = std::env::current_dir().unwrap_or_else(|_| ".".into());
        (SourceTree::new(cwd), true)
    } else {
        (SourceTree::new(bpffs::normalise(dir)), false)
    }
}

/// `--devmode` source context of a program image: its mapped lines in
/// instruction order with context lines from the resolved files.
pub(crate) fn image_context(
    image: &lines::ProgramImage,
    tree: &mut SourceTree,
) -> source::DumpContext {
    let slots = insn::slots(&image.xlated);
    let rec = insn::match_lines(slots.len(), &image.lines);
    source::dump_context(
        rec.iter().map(|r| {
            let r = r.map(|i| &image.lines[i]);
            (
                r.and_then(|r| r.file.as_deref()),
                r.and_then(|r| r.line),
                r.and_then(|r| r.source.as_deref()),
            )
        }),
        tree,
    )
}

/// `brr dump --devmode`: the directory searched and the program's source
/// context. A bare flag that resolves no file at all is an error, since the
/// current directory was only a guess.
pub(crate) fn dump_devmode(
    image: &lines::ProgramImage,
    dir: impl AsRef<Path>,
) -> Result<(String, source::DumpContext)> {
    let (mut tree, bare) = devmode_tree(dir);
    let ctx = image_context(image, &mut tree);
    if bare && !ctx.any_resolved {
        return Err(BrrError::Failed(DEVMODE_NOTHING.to_string()));
    }
    Ok((tree.dir().to_string_lossy().into_owned(), ctx))
}

/// `brr profile --devmode`: source context for the programs the report
/// lists that still exist.
pub(crate) fn profile_contexts(report: &Report, dir: impl AsRef<Path>) -> SourceContexts {
    let (mut tree, _) = devmode_tree(dir);
    let by_program = report
        .programs
        .iter()
        .filter_map(|p| {
            let image = lines::image_by_id(p.id as u64).ok()?;
            Some((p.id, image_context(&image, &mut tree)))
        })
        .collect();
    SourceContexts {
        devdir: tree.dir().to_string_lossy().into_owned(),
        by_program,
    }
}

/// `brr dump-compare`: brr's instruction-to-line mapping of a program
/// against bpftool's text and JSON dumps of it.
pub(crate) fn compare_with_bpftool(prog_id: u32) -> Result<compare::Comparison> {
    let prog_id = u64::from(prog_id);
    let image = lines::image_by_id(prog_id)?;
    let json = crate::bpftool::dump_json(prog_id)?;
    let text = crate::bpftool::dump_text(prog_id)?;
    if json.len() != text.len() {
        return Err(BrrError::Failed(format!(
            "bpftool dump returned inconsistent text and JSON instruction counts ({} text, {} JSON)",
            text.len(),
            json.len()
        )));
    }
    let rows: Vec<ToolRow> = text
        .into_iter()
        .zip(json)
        .map(|(index, e)| ToolRow {
            index,
            file: e.file,
            line: e.line_num,
            column: e.line_col,
            source: e.src,
        })
        .collect();
    Ok(compare::compare(
        image.program.id,
        &insn::slots(&image.xlated),
        &image.lines,
        &rows,
    ))
}

/// Program `id`'s part of a report (its rows cut by the report's line
/// limit, most samples first) as the drilldown's plain input.
pub(crate) fn drilldown_input(report: &Report, id: u32) -> ProfileInput {
    let program = report.program(id).map(|p| DrillProfile {
        samples: p.samples,
        kernel_samples: p.kernel_samples,
        inclusive_samples: p.inclusive_samples,
        inclusive_cpu_percent: p.inclusive_cpu_percent,
        direct_source_unmapped_samples: p.direct_source_unmapped_samples,
        under_bpf_caller_source_unmapped_samples: p.under_bpf_caller_source_unmapped_samples,
        direct_hotspot_samples_omitted_by_limit: p.direct.other.samples,
        under_bpf_hotspot_samples_omitted_by_limit: p.kernel_ips.other.samples,
        under_bpf_function_samples_omitted_by_limit: p.kernel_functions.other.samples,
        unaccounted_samples: 0,
        hotspots: p.direct.rows.iter().map(|h| h.row.clone()).collect(),
        kernel_ips: p
            .kernel_ips
            .rows
            .iter()
            .map(|k| KernelRow {
                row: k.row.clone(),
                ip_count: 1,
            })
            .collect(),
        kernel_functions: p
            .kernel_functions
            .rows
            .iter()
            .map(|g| g.row.clone())
            .collect(),
        native: p
            .native
            .iter()
            .flat_map(|a| a.all.iter().map(|n| n.row.clone()))
            .collect(),
        interrupt_samples: p.interrupt_samples,
        interrupts: p.interrupts.rows.iter().map(|r| r.row.clone()).collect(),
        loaded_cpu_percent: p.loaded_inclusive_cpu_percent.or(p.loaded_cpu_percent),
        unloaded_after: p.unloaded_after,
    });
    let telemetry = &report.capture.telemetry;
    ProfileInput {
        program,
        line_limit: report.totals.line_limit,
        warnings: telemetry.warnings.clone(),
        incomplete: telemetry.incomplete,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::profile as data;
    use crate::profile::report::{build, ReportOptions};

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
                interrupt_samples: 4,
                interrupts: vec![data::InterruptHotspot {
                    samples: 4,
                    entry: "asm_sysvec_apic_timer_interrupt".into(),
                    ..Default::default()
                }],
                ..Default::default()
            }],
            telemetry: data::Telemetry {
                warnings: vec!["w".into()],
                incomplete: true,
                ..Default::default()
            },
            ..Default::default()
        };
        let opts = ReportOptions {
            limit: 0,
            line_limit: 1,
            merge_lines: false,
        };
        let input = drilldown_input(&build(&prof, &opts), 9);
        let p = input.program.unwrap();
        assert_eq!(
            (p.samples, p.kernel_samples, p.inclusive_samples),
            (10, 6, 16)
        );
        assert_eq!(p.inclusive_cpu_percent, 8.0);
        // Interrupts reach the drilldown apart from the program's samples.
        assert_eq!(p.interrupt_samples, 4);
        assert_eq!(p.interrupts.iter().map(|r| r.samples).sum::<u64>(), 4);
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
        assert!(drilldown_input(&build(&prof, &opts), 8).program.is_none());
    }

    #[test]
    fn bare_devmode_is_the_current_directory() {
        let (tree, bare) = devmode_tree("");
        assert!(bare);
        assert_eq!(tree.dir(), std::env::current_dir().unwrap().as_path());
        let (tree, bare) = devmode_tree("src//tui/");
        assert!(!bare);
        assert_eq!(tree.dir(), Path::new("src/tui"));
    }
}
