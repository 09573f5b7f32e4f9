//! pprof: a gzipped `profile.proto`, the format of `go tool pprof`, Parca,
//! Pyroscope and Grafana.
//!
//! A Function per program (its main BTF function), per subprogram and per
//! kernel symbol; a Location per BPF line record (whose Line carries the BTF
//! line and column) and per kernel IP. An interrupt that arrived while a
//! program ran is a `[interrupt] ENTRY` location under the program itself,
//! not under the line it arrived on. Each [`Stack`] becomes one Sample,
//! leaf first, valued `samples/count` and `cpu/nanoseconds` (one sample
//! stands for 1e9 / F ns of CPU) and labelled `prog_id`, `prog_tag`, `pid`
//! and `comm`, and where the task ran in a container or pod `container`
//! (its name), `container_id`, `pod` and `namespace`.

use std::collections::HashMap;
use std::io::{self, Write};

use flate2::write::GzEncoder;
use flate2::Compression;
use prost::Message;

use super::folded;
use super::pprof_proto as pb;
use crate::model::container::Workload;
use crate::model::profile::{Frame, Profile, ProgramProfile, Stack};
use crate::model::report::SampledWorkloads;

/// The string table and the Function and Location tables, deduplicated.
#[derive(Default)]
struct Tables {
    strings: Vec<String>,
    string_ids: HashMap<String, i64>,
    functions: Vec<pb::PbFunction>,
    function_ids: HashMap<(i64, i64, i64), u64>,
    locations: Vec<pb::PbLocation>,
    location_ids: HashMap<LocKey, u64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum LocKey {
    /// A BPF line of program `prog` at a JIT address, in one function.
    Line {
        prog: u32,
        addr: u64,
        function: u64,
    },
    /// The program itself, above a subprogram's lines.
    Program {
        prog: u32,
    },
    Kernel {
        ip: u64,
    },
    /// An interrupt's entry point, under program `prog`.
    Interrupt {
        prog: u32,
        ip: u64,
    },
}

impl Tables {
    fn new() -> Tables {
        let mut t = Tables::default();
        t.string(""); // index 0 is the empty string by the format's rule
        t
    }

    fn string(&mut self, s: &str) -> i64 {
        if let Some(&i) = self.string_ids.get(s) {
            return i;
        }
        let i = self.strings.len() as i64;
        self.strings.push(s.to_string());
        self.string_ids.insert(s.to_string(), i);
        i
    }

    fn function(&mut self, name: &str, system_name: &str, file: &str) -> u64 {
        let key = (
            self.string(name),
            self.string(system_name),
            self.string(file),
        );
        if let Some(&id) = self.function_ids.get(&key) {
            return id;
        }
        let id = self.functions.len() as u64 + 1;
        self.functions.push(pb::PbFunction {
            id,
            name: key.0,
            system_name: key.1,
            filename: key.2,
            start_line: 0,
        });
        self.function_ids.insert(key, id);
        id
    }

    fn location(&mut self, key: LocKey, address: u64, line: pb::PbLine) -> u64 {
        if let Some(&id) = self.location_ids.get(&key) {
            return id;
        }
        let id = self.locations.len() as u64 + 1;
        self.locations.push(pb::PbLocation {
            id,
            mapping_id: 0,
            address,
            line: vec![line],
            is_folded: false,
        });
        self.location_ids.insert(key, id);
        id
    }

    fn program_function(&mut self, p: &ProgramProfile, file: &str) -> u64 {
        let name = p.full_name.as_deref().unwrap_or(&p.name);
        self.function(name, &format!("bpf_prog_{}_{}", p.tag, p.name), file)
    }

    /// Location ids of an interrupt's stack, leaf first: its frames, its
    /// entry, the program.
    fn interrupt_stack(&mut self, p: &ProgramProfile, s: &Stack, entry: &str) -> Vec<u64> {
        let mut ids: Vec<u64> = s
            .kernel
            .iter()
            .skip(1)
            .rev()
            .map(|f| self.kernel(f))
            .collect();
        let name = folded::interrupt_frame(entry);
        let function = self.function(&name, entry, "");
        let ip = s.kernel.first().map_or(0, |f| f.ip);
        let line = no_line(function);
        ids.push(self.location(LocKey::Interrupt { prog: p.id, ip }, ip, line));
        ids.push(self.program_location(p));
        ids
    }

    /// The location of program `p` itself (no line): the outermost frame
    /// of a stack in a subprogram or an interrupt.
    fn program_location(&mut self, p: &ProgramProfile) -> u64 {
        let function = self.program_function(p, "");
        self.location(LocKey::Program { prog: p.id }, 0, no_line(function))
    }

    /// Location ids of one stack, leaf first.
    fn stack(&mut self, p: &ProgramProfile, s: &Stack) -> Vec<u64> {
        if let Some(entry) = &s.interrupt {
            return self.interrupt_stack(p, s, entry);
        }
        let mut ids: Vec<u64> = s.kernel.iter().rev().map(|f| self.kernel(f)).collect();
        let file = s.file.as_deref().unwrap_or("");
        let function = match &s.subprogram {
            Some(sub) => self.function(sub, &format!("bpf_prog_{}_{sub}", p.tag), file),
            None => self.program_function(p, file),
        };
        let addr = s.jited_address.unwrap_or(0);
        let line = pb::PbLine {
            function_id: function,
            line: s.line.map_or(0, i64::from),
            column: s.column.map_or(0, i64::from),
        };
        ids.push(self.location(
            LocKey::Line {
                prog: p.id,
                addr,
                function,
            },
            addr,
            line,
        ));
        if s.subprogram.is_some() {
            ids.push(self.program_location(p));
        }
        ids
    }

    fn kernel(&mut self, f: &Frame) -> u64 {
        let name = match &f.symbol {
            Some(sym) => sym.clone(),
            None => format!("0x{:x}", f.ip),
        };
        let file = f
            .module
            .as_deref()
            .map_or(String::new(), |m| format!("[{m}]"));
        let function = self.function(&name, &name, &file);
        self.location(LocKey::Kernel { ip: f.ip }, f.ip, no_line(function))
    }
}

/// A location line in `function` with no source line or column (a kernel
/// frame, an interrupt entry, a program as a whole).
fn no_line(function: u64) -> pb::PbLine {
    pb::PbLine {
        function_id: function,
        line: 0,
        column: 0,
    }
}

/// What the capture does not record itself.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Context {
    /// When the capture started, ns since the Unix epoch.
    pub start_unix_ns: i64,
    /// Where each sampled task ran (container, pod), for the labels.
    pub workloads: SampledWorkloads,
}

impl Context {
    /// For a profile that has just been captured: it started its measured
    /// duration ago.
    pub fn now(profile: &Profile) -> Context {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default()
            .as_nanos() as f64;
        Context {
            start_unix_ns: (now - profile.seconds() * 1e9).max(0.0) as i64,
            workloads: SampledWorkloads::default(),
        }
    }

    /// The same, with the samples' containers and pods from `workloads`.
    pub(crate) fn with_workloads(self, workloads: SampledWorkloads) -> Context {
        Context { workloads, ..self }
    }
}

/// The `container`, `container_id`, `pod` and `namespace` labels of a
/// sample whose task ran in `w`; names the host does not know are left
/// out.
fn workload_labels(t: &mut Tables, w: &Workload, out: &mut Vec<pb::PbLabel>) {
    let c = w.container.as_ref();
    let p = w.pod.as_ref();
    let pairs = [
        ("container", c.and_then(|c| c.name.as_deref())),
        ("container_id", c.map(|c| c.id.as_str())),
        ("pod", p.and_then(|p| p.name.as_deref())),
        ("namespace", p.and_then(|p| p.namespace.as_deref())),
    ];
    for (key, value) in pairs {
        if let Some(v) = value {
            out.push(pb::PbLabel {
                key: t.string(key),
                str: t.string(v),
                ..Default::default()
            });
        }
    }
}

/// One sample stands for this many ns of CPU.
pub(crate) fn period_ns(frequency: u64) -> i64 {
    if frequency == 0 {
        0
    } else {
        (1e9 / frequency as f64).round() as i64
    }
}

fn value_type(t: &mut Tables, kind: &str, unit: &str) -> pb::PbValueType {
    pb::PbValueType {
        r#type: t.string(kind),
        unit: t.string(unit),
    }
}

/// The profile message (not yet encoded).
fn build(profile: &Profile, ctx: &Context) -> pb::PbProfile {
    let mut t = Tables::new();
    let period = period_ns(profile.frequency);
    let sample_type = vec![
        value_type(&mut t, "samples", "count"),
        value_type(&mut t, "cpu", "nanoseconds"),
    ];
    let period_type = Some(value_type(&mut t, "cpu", "nanoseconds"));
    let keys = [
        t.string("prog_id"),
        t.string("prog_tag"),
        t.string("pid"),
        t.string("comm"),
    ];
    let mut samples = Vec::new();
    for p in folded::programs(profile) {
        let tag = t.string(&p.tag);
        for s in &p.stacks {
            let mut label = vec![
                pb::PbLabel {
                    key: keys[0],
                    num: i64::from(p.id),
                    ..Default::default()
                },
                pb::PbLabel {
                    key: keys[1],
                    str: tag,
                    ..Default::default()
                },
                pb::PbLabel {
                    key: keys[2],
                    num: i64::from(s.pid),
                    ..Default::default()
                },
            ];
            if let Some(comm) = profile.comms.get(&s.pid) {
                label.push(pb::PbLabel {
                    key: keys[3],
                    str: t.string(comm),
                    ..Default::default()
                });
            }
            if let Some(w) = ctx.workloads.of_sample(s.pid, s.cgroup) {
                workload_labels(&mut t, w, &mut label);
            }
            let n = i64::try_from(s.samples).unwrap_or(i64::MAX);
            samples.push(pb::PbSample {
                location_id: t.stack(p, s),
                value: vec![n, n.saturating_mul(period)],
                label,
            });
        }
    }
    let comment = vec![t.string(&format!(
        "brr profile: {} at {} Hz",
        profile.selected_event, profile.frequency
    ))];
    let default_sample_type = t.string("cpu");
    pb::PbProfile {
        sample_type,
        sample: samples,
        location: t.locations,
        function: t.functions,
        string_table: t.strings,
        time_nanos: ctx.start_unix_ns,
        duration_nanos: (profile.seconds() * 1e9) as i64,
        period_type,
        period,
        comment,
        default_sample_type,
        ..Default::default()
    }
}

/// Write the gzipped profile.
pub fn write(profile: &Profile, ctx: &Context, out: impl Write) -> io::Result<()> {
    let bytes = build(profile, ctx).encode_to_vec();
    let mut gz = GzEncoder::new(out, Compression::default());
    gz.write_all(&bytes)?;
    gz.finish()?.flush()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::aggregate::tests::profile;
    use std::io::Read;

    fn roundtrip(p: &Profile, ctx: &Context) -> pb::PbProfile {
        let mut gz = Vec::new();
        write(p, ctx, &mut gz).unwrap();
        assert_eq!(&gz[..2], &[0x1f, 0x8b], "gzip magic");
        let mut raw = Vec::new();
        flate2::read::GzDecoder::new(&gz[..])
            .read_to_end(&mut raw)
            .unwrap();
        pb::PbProfile::decode(&raw[..]).unwrap()
    }

    fn s(pr: &pb::PbProfile, i: i64) -> &str {
        &pr.string_table[i as usize]
    }

    #[test]
    fn samples_and_cpu_time_add_up() {
        let p = profile();
        let pr = roundtrip(&p, &Context::default());
        assert_eq!(s(&pr, 0), "");
        let types: Vec<(&str, &str)> = pr
            .sample_type
            .iter()
            .map(|v| (s(&pr, v.r#type), s(&pr, v.unit)))
            .collect();
        assert_eq!(types, vec![("samples", "count"), ("cpu", "nanoseconds")]);
        assert_eq!(pr.period, 1_000_000);
        let total: i64 = pr.sample.iter().map(|x| x.value[0]).sum();
        let inclusive: u64 = p.programs.iter().map(|p| p.inclusive_samples()).sum();
        assert_eq!(total as u64, inclusive);
        let cpu: i64 = pr.sample.iter().map(|x| x.value[1]).sum();
        assert_eq!(cpu, total * 1_000_000);
        assert_eq!(pr.duration_nanos, 1_000_000_000);
    }

    #[test]
    fn lines_carry_btf_line_and_column_and_labels_name_the_task() {
        let mut p = profile();
        p.comms.insert(207, "worker".into());
        let pr = roundtrip(&p, &Context::default());
        // The hottest direct line: 5 samples at x.bpf.c:107 col 3.
        let hot = pr.sample.iter().find(|x| x.value[0] == 5).unwrap();
        assert_eq!(hot.location_id.len(), 1);
        let loc = &pr.location[(hot.location_id[0] - 1) as usize];
        let line = &loc.line[0];
        assert_eq!((line.line, line.column), (107, 3));
        let f = &pr.function[(line.function_id - 1) as usize];
        assert_eq!(s(&pr, f.name), "sys_exit");
        assert_eq!(s(&pr, f.system_name), "bpf_prog_fc3eb0ef05553d4b_sys_exit");
        assert_eq!(s(&pr, f.filename), "/src/dir/x.bpf.c");
        let labels: Vec<(&str, i64, &str)> = hot
            .label
            .iter()
            .map(|l| (s(&pr, l.key), l.num, s(&pr, l.str)))
            .collect();
        assert_eq!(
            labels,
            vec![
                ("prog_id", 98, ""),
                ("prog_tag", 0, "fc3eb0ef05553d4b"),
                ("pid", 207, ""),
                ("comm", 0, "worker"),
            ]
        );
        // A kernel sample: the kernel frame is the leaf, the line its caller.
        let k = pr.sample.iter().find(|x| x.location_id.len() == 2).unwrap();
        let leaf = &pr.location[(k.location_id[0] - 1) as usize];
        assert!(leaf.address >= 0xffff_ffff_0000_0000);
        // Locations and functions are shared, ids are 1-based and dense.
        for (i, l) in pr.location.iter().enumerate() {
            assert_eq!(l.id, i as u64 + 1);
        }
        let names: std::collections::BTreeSet<&str> =
            pr.function.iter().map(|f| s(&pr, f.name)).collect();
        assert!(names.contains("lookup_nulls_elem_raw"));
        assert_eq!(
            pr.function.len(),
            pr.function
                .iter()
                .map(|f| (f.name, f.system_name, f.filename))
                .collect::<std::collections::BTreeSet<_>>()
                .len()
        );
    }

    #[test]
    fn interrupts_sit_under_the_program_not_the_line() {
        let mut p = profile();
        let frame = |ip: u64, sym: &str| Frame {
            ip,
            symbol: Some(sym.into()),
            kind: "kernel",
            ..Default::default()
        };
        let mut irq = p.programs[1].stacks[0].clone();
        irq.samples = 13;
        irq.interrupt = Some("asm_sysvec_apic_timer_interrupt".into());
        irq.kernel = vec![
            frame(0xffffffff81001000, "asm_sysvec_apic_timer_interrupt"),
            frame(0xffffffff81002000, "rcu_core"),
        ];
        p.programs[1].stacks.push(irq);
        let pr = roundtrip(&p, &Context::default());
        let x = pr.sample.iter().find(|x| x.value[0] == 13).unwrap();
        let names: Vec<&str> = x
            .location_id
            .iter()
            .map(|&id| {
                let f = pr.location[(id - 1) as usize].line[0].function_id;
                s(&pr, pr.function[(f - 1) as usize].name)
            })
            .collect();
        assert_eq!(
            names,
            vec![
                "rcu_core",
                "[interrupt] asm_sysvec_apic_timer_interrupt",
                "small"
            ]
        );
        // Every sample, interrupts included, is in the profile.
        let total: i64 = pr.sample.iter().map(|x| x.value[0]).sum();
        let all: u64 = p
            .programs
            .iter()
            .flat_map(|q| q.stacks.iter().map(|s| s.samples))
            .sum();
        assert_eq!(total as u64, all);
    }

    #[test]
    fn samples_in_a_pod_carry_its_container_and_pod() {
        let p = profile();
        let cid = "c1".repeat(32);
        let mut w = crate::kernel::cgroups::workload(&format!(
            "/kubepods/burstable/pod0123abcd-0000-4000-8000-000000000001/{cid}"
        ));
        if let Some(c) = w.container.as_mut() {
            c.name = Some("server".into());
        }
        if let Some(pod) = w.pod.as_mut() {
            pod.namespace = Some("payments".into());
            pod.name = Some("checkout-x2k4p".into());
        }
        let mut unnamed = w.clone();
        unnamed.container = unnamed
            .container
            .map(|c| crate::model::Container { name: None, ..c });
        unnamed.pod = None;
        let mut workloads = SampledWorkloads::default();
        workloads.tasks.insert(207, w);
        workloads.tasks.insert(7, unnamed);
        let ctx = Context::default().with_workloads(workloads);
        let pr = roundtrip(&p, &ctx);
        let labels = |pid: i64| -> Vec<(String, String)> {
            let x = pr
                .sample
                .iter()
                .find(|x| {
                    x.label
                        .iter()
                        .any(|l| s(&pr, l.key) == "pid" && l.num == pid)
                })
                .unwrap();
            x.label
                .iter()
                .filter(|l| l.num == 0 && s(&pr, l.key) != "prog_tag")
                .map(|l| (s(&pr, l.key).to_string(), s(&pr, l.str).to_string()))
                .collect()
        };
        let kv = |k: &str, v: &str| (k.to_string(), v.to_string());
        assert_eq!(
            labels(207),
            vec![
                kv("container", "server"),
                kv("container_id", &cid),
                kv("pod", "checkout-x2k4p"),
                kv("namespace", "payments"),
            ]
        );
        // Names the host does not know are left out; the ID stays.
        assert_eq!(labels(7), vec![kv("container_id", &cid)]);
        assert!(labels(116).is_empty());
    }

    #[test]
    fn subprogram_lines_sit_under_their_program() {
        let mut p = profile();
        p.programs[1].stacks[0].subprogram = Some("helper".into());
        let pr = roundtrip(&p, &Context::default());
        let x = pr
            .sample
            .iter()
            .find(|x| {
                x.label
                    .iter()
                    .any(|l| s(&pr, l.key) == "prog_id" && l.num == 7)
            })
            .unwrap();
        let names: Vec<&str> = x
            .location_id
            .iter()
            .map(|&id| {
                let f = pr.location[(id - 1) as usize].line[0].function_id;
                s(&pr, pr.function[(f - 1) as usize].name)
            })
            .collect();
        assert_eq!(names, vec!["helper", "small"]);
        assert_eq!(period_ns(0), 0);
        assert_eq!(period_ns(997), 1_003_009);
    }
}
