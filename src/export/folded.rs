//! Folded stacks: one line per unique stack, root first,
//! `frame;frame;...;frame COUNT`, the input of `inferno-flamegraph`,
//! `flamegraph.pl`, speedscope and Pyroscope's ingest endpoint.
//!
//! Frames: the program (`NAME [prog ID]`), its BPF-to-BPF subprogram when
//! the line is in one, the BPF line (`file:line text`), then the kernel
//! frames beneath that line, outermost first. A sample taken in an
//! interrupt that arrived while the program ran is not the line's: it sits
//! under the program as `[interrupt] ENTRY`, then the interrupt's frames.

use std::collections::BTreeMap;

use crate::model::profile::{Frame, Profile, ProgramProfile, Stack};

/// A frame name with the characters the format reserves replaced: `;`
/// separates frames (C source is full of them, so it becomes the
/// full-width `；`, which reads the same), and line breaks and runs of
/// blanks would split or pad the name.
pub(crate) fn sanitize(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for word in text.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.extend(word.chars().map(|c| match c {
            ';' => '；',
            c if c.is_control() => ' ',
            c => c,
        }));
    }
    out
}

pub(crate) fn program_frame(p: &ProgramProfile) -> String {
    let name = p.full_name.as_deref().unwrap_or(&p.name);
    sanitize(&format!("{name} [prog {}]", p.id))
}

/// `file:line text` with the file's basename (as the text report shows it),
/// or `[no line info]` for code without a line record.
pub(crate) fn line_frame(s: &Stack) -> String {
    match (&s.file, s.line) {
        (Some(file), Some(line)) => {
            let base = file.rsplit('/').next().unwrap_or(file);
            let text = s.source.as_deref().map(str::trim).unwrap_or("");
            if text.is_empty() {
                sanitize(&format!("{base}:{line}"))
            } else {
                sanitize(&format!("{base}:{line} {text}"))
            }
        }
        _ => "[no line info]".to_string(),
    }
}

/// The symbol (with `[module]` for module code), or the address.
pub(crate) fn kernel_frame(f: &Frame) -> String {
    match (&f.symbol, &f.module) {
        (Some(sym), Some(module)) => sanitize(&format!("{sym} [{module}]")),
        (Some(sym), None) => sanitize(sym),
        _ => format!("0x{:x}", f.ip),
    }
}

/// The frame an interrupt's stack starts with, under its program.
pub(crate) fn interrupt_frame(entry: &str) -> String {
    sanitize(&format!("[interrupt] {entry}"))
}

/// A stack's frames root first, each with whether it is BPF code.
pub(crate) fn frames(p: &ProgramProfile, s: &Stack) -> Vec<(String, bool)> {
    let mut out = Vec::with_capacity(3 + s.kernel.len());
    out.push((program_frame(p), true));
    if let Some(entry) = &s.interrupt {
        // The entry frame itself is the first kernel frame.
        out.push((interrupt_frame(entry), false));
        out.extend(s.kernel.iter().skip(1).map(|f| (kernel_frame(f), false)));
        return out;
    }
    if let Some(sub) = &s.subprogram {
        out.push((sanitize(sub), true));
    }
    out.push((line_frame(s), true));
    out.extend(s.kernel.iter().map(|f| (kernel_frame(f), false)));
    out
}

/// The programs an export covers: the selected ones with `--program-id`
/// or `--pid`, else all (exports are not cut by `--limit`).
pub(crate) fn programs(profile: &Profile) -> impl Iterator<Item = &ProgramProfile> {
    profile
        .programs
        .iter()
        .filter(move |p| profile.selects(p.id))
}

/// Every unique folded stack with its count, sorted by stack text.
pub(crate) fn stacks(profile: &Profile) -> BTreeMap<String, u64> {
    let mut out: BTreeMap<String, u64> = BTreeMap::new();
    for p in programs(profile) {
        for s in &p.stacks {
            let line = frames(p, s)
                .into_iter()
                .map(|(f, _)| f)
                .collect::<Vec<_>>()
                .join(";");
            *out.entry(line).or_insert(0) += s.samples;
        }
    }
    out
}

/// The folded text, one `stack count` line each (empty for no samples).
pub fn render(profile: &Profile) -> String {
    let mut out = String::new();
    for (stack, count) in stacks(profile) {
        out.push_str(&stack);
        out.push(' ');
        out.push_str(&count.to_string());
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::aggregate::tests::profile;

    /// Parse a folded line as inferno does: the count after the last space,
    /// frames split on `;`.
    fn parse(line: &str) -> (Vec<&str>, u64) {
        let (stack, count) = line.rsplit_once(' ').unwrap();
        (stack.split(';').collect(), count.parse().unwrap())
    }

    #[test]
    fn counts_add_up_to_the_attributed_samples() {
        let p = profile();
        let text = render(&p);
        let total: u64 = text.lines().map(|l| parse(l).1).sum();
        let inclusive: u64 = p.programs.iter().map(|p| p.inclusive_samples()).sum();
        assert_eq!(total, inclusive);
        assert_eq!(
            total,
            p.counters.bpf_jit_samples + p.counters.kernel_attributed_samples
        );
        // Unique stacks: the same stack from two tasks is one line.
        let lines: Vec<String> = text.lines().map(|l| parse(l).0.join(";")).collect();
        let mut dedup = lines.clone();
        dedup.dedup();
        assert_eq!(lines, dedup);
    }

    #[test]
    fn frames_root_first_with_sanitized_source() {
        let p = profile();
        let text = render(&p);
        let line = text
            .lines()
            .find(|l| l.contains("lookup_nulls_elem_raw"))
            .unwrap();
        let (frames, count) = parse(line);
        assert_eq!(
            frames,
            vec![
                "sys_exit [prog 98]",
                "x.bpf.c:15 line_15()；",
                "lookup_nulls_elem_raw"
            ]
        );
        assert_eq!(count, 6, "three IPs of one function under one line merge");
        assert!(text.contains("small [prog 7];b.c:3 x； 1\n"));
        assert!(text.contains("sys_exit [prog 98];[no line info] 1\n"));
        assert!(text.contains(";0xffffffff90000000 1\n"), "unresolved IP");
        for l in text.lines() {
            let (frames, _) = parse(l);
            assert!(frames.iter().all(|f| !f.is_empty() && f.trim() == *f));
        }
    }

    #[test]
    fn program_filter_and_subprograms() {
        let mut p = profile();
        p.program_ids = vec![7];
        p.programs[1].stacks[0].subprogram = Some("helper;fn".into());
        assert_eq!(render(&p), "small [prog 7];helper；fn;b.c:3 x； 1\n");
        p.programs.clear();
        assert_eq!(render(&p), "");
    }

    /// An interrupt's samples sit under the program, not under the line
    /// it arrived on.
    #[test]
    fn interrupts_are_not_under_the_line() {
        let mut p = profile();
        p.program_ids = vec![7];
        let frame = |sym: &str| Frame {
            ip: 1,
            symbol: Some(sym.into()),
            kind: "kernel",
            ..Default::default()
        };
        let mut irq = p.programs[1].stacks[0].clone();
        irq.samples = 4;
        irq.interrupt = Some("asm_common_interrupt".into());
        irq.kernel = [
            "asm_common_interrupt",
            "common_interrupt",
            "handle_softirqs",
        ]
        .map(frame)
        .to_vec();
        p.programs[1].stacks.push(irq);
        assert_eq!(
            render(&p),
            "small [prog 7];[interrupt] asm_common_interrupt;common_interrupt;handle_softirqs 4\n\
small [prog 7];b.c:3 x； 1\n"
        );
    }

    #[test]
    fn sanitize_keeps_one_line_one_frame() {
        assert_eq!(
            sanitize("\tfor (i = 0; i < n;\n i++)  "),
            "for (i = 0； i < n； i++)"
        );
        assert_eq!(sanitize("a\u{7}b"), "a b");
        assert_eq!(sanitize(""), "");
    }
}
