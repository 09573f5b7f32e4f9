//! Cost of the profile writers on a large synthetic profile, for
//! `scripts/bench-profile`.
//!
//! ```text
//! export_cost FORMAT [SAMPLES]     FORMAT: folded | pprof | flamegraph
//! ```
//! Builds a profile of SAMPLES (default 100,000) samples spread over
//! realistic stacks (40 programs with subprograms and source lines, kernel
//! chains up to 8 frames deep from 300 symbols, 200 tasks), writes it once
//! in FORMAT to a temporary file and prints `format=… samples=… stacks=…
//! ms=… bytes=… rss_before_kb=… peak_rss_kb=…` (VmHWM from /proc, before
//! and after the write).

use std::process::ExitCode;
use std::time::Instant;

use brr::{flamegraph, folded, pprof};
use brr::{Frame, Profile, ProgramProfile, Stack};

/// A deterministic pseudo-random sequence (64-bit LCG).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 33) % n.max(1)
    }
}

const SYMBOLS: &[&str] = &[
    "htab_map_update_elem",
    "htab_map_lookup_elem",
    "bpf_ringbuf_output",
    "_raw_spin_lock_irqsave",
    "bpf_probe_read_kernel",
    "copy_from_kernel_nofault",
    "bpf_get_current_pid_tgid",
    "ktime_get_mono_fast_ns",
    "memcpy",
    "lookup_nulls_elem_raw",
];

fn profile(samples: u64) -> Profile {
    let mut rng = Lcg(42);
    let mut programs: Vec<ProgramProfile> = (0..40u32)
        .map(|i| ProgramProfile {
            id: 1000 + i,
            prog_type: "tracepoint".into(),
            name: format!("prog_{i}"),
            tag: format!("{:016x}", 0xabc0_0000u64 + u64::from(i)),
            full_name: Some(format!("handle_event_{i}")),
            function_count: 3,
            ..Default::default()
        })
        .collect();
    let mut left = samples;
    while left > 0 {
        let n = (1 + rng.next(40)).min(left);
        left -= n;
        let p = rng.next(programs.len() as u64) as usize;
        let line = 10 + rng.next(60) as u32;
        let depth = rng.next(9) as usize;
        let kernel: Vec<Frame> = (0..depth)
            .map(|d| {
                let s = rng.next(300) as usize;
                let base = SYMBOLS.get(s % SYMBOLS.len()).copied().unwrap_or("f");
                Frame {
                    ip: 0xffff_ffff_8100_0000 + (s as u64) * 0x100 + d as u64,
                    symbol: Some(format!("{base}_{}", s / SYMBOLS.len())),
                    module: None,
                    kind: "kernel",
                }
            })
            .collect();
        let stack = Stack {
            samples: n,
            pid: 1 + rng.next(200) as u32,
            cgroup: 0,
            subprogram: line.is_multiple_of(3).then(|| format!("sub_{}", line % 7)),
            jited_address: Some(0xffff_ffff_c000_0000 + u64::from(line) * 16),
            file: Some(format!("/src/tool/prog_{p}.bpf.c")),
            line: Some(line),
            column: Some(5),
            source: Some(format!(
                "    value = lookup(&map_{p}, &key); /* line {line} */"
            )),
            kernel,
            interrupt: None,
        };
        if let Some(prog) = programs.get_mut(p) {
            if stack.kernel.is_empty() {
                prog.samples += n;
            } else {
                prog.kernel_samples += n;
            }
            prog.stacks.push(stack);
        }
    }
    Profile {
        selected_event: "cpu-clock".into(),
        requested_event: "auto".into(),
        duration: 10.0,
        frequency: 10_000,
        programs,
        ..Default::default()
    }
}

fn hwm_kb() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        })
        .unwrap_or(0)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(format) = args.first() else {
        eprintln!("usage: export_cost folded|pprof|flamegraph [SAMPLES]");
        return ExitCode::from(2);
    };
    let samples = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(100_000);
    let p = profile(samples);
    let stacks: usize = p.programs.iter().map(|p| p.stacks.len()).sum();
    let path = std::env::temp_dir().join(format!("brr-export-cost-{}", std::process::id()));
    let before = hwm_kb();
    let t = Instant::now();
    let file = match std::fs::File::create(&path) {
        Ok(f) => std::io::BufWriter::new(f),
        Err(e) => {
            eprintln!("export_cost: {}: {e}", path.display());
            return ExitCode::FAILURE;
        }
    };
    let r = match format.as_str() {
        "folded" => {
            let mut file = file;
            std::io::Write::write_all(&mut file, folded::render(&p).as_bytes())
                .and_then(|()| std::io::Write::flush(&mut file))
        }
        "pprof" => pprof::write(&p, &pprof::Context::default(), file),
        "flamegraph" => {
            let host = flamegraph::Host {
                hostname: "bench".into(),
                kernel: "bench".into(),
            };
            flamegraph::write(&p, &host, file)
        }
        other => {
            eprintln!("export_cost: unknown format {other:?}");
            return ExitCode::from(2);
        }
    };
    let ms = t.elapsed().as_secs_f64() * 1000.0;
    let bytes = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
    let _ = std::fs::remove_file(&path);
    if let Err(e) = r {
        eprintln!("export_cost: {format}: {e}");
        return ExitCode::FAILURE;
    }
    println!(
        "format={format} samples={samples} stacks={stacks} ms={ms:.1} bytes={bytes} rss_before_kb={before} peak_rss_kb={}",
        hwm_kb()
    );
    ExitCode::SUCCESS
}
