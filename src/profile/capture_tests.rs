//! Tests of the capture loop: ring sizing plans, draining, and the side
//! band replayed from built records.

use super::*;

fn input(f: u64, shape: Shape) -> PlanInput {
    PlanInput {
        frequency: f,
        shape,
        pages: None,
        drain_ms: None,
        page_size: 4096,
        mlock_kb: Some(516),
        max_stack: Some(127),
        max_contexts: Some(8),
        lock_exempt: false,
    }
}

#[test]
fn drain_priority_is_raised_for_the_drain_and_restored() {
    let before = rustix::process::getpriority_process(None).unwrap();
    let boost = DrainPriority::raise();
    let during = rustix::process::getpriority_process(None).unwrap();
    match boost.0 {
        Some(old) => {
            assert_eq!(old, before);
            assert_eq!(during, (before - DRAIN_NICE_BOOST).max(-20));
        }
        None => assert_eq!(during, before, "refused: unchanged"),
    }
    drop(boost);
    assert_eq!(rustix::process::getpriority_process(None).unwrap(), before);
}

#[test]
fn cap_ipc_lock_lifts_the_mlock_cap() {
    use Shape::*;
    let exempt = |f, shape| {
        let mut i = input(f, shape);
        i.lock_exempt = true;
        plan(&i)
    };
    // The same sizes below the cap...
    assert_eq!(row(&exempt(997, Direct)), (8, 100, 8192, 0));
    assert_eq!(row(&exempt(19997, Direct)), (128, 100, 131072, 0));
    // ...and 100 kHz gets its full 100 ms of headroom, without warnings.
    let p = exempt(100000, Direct);
    assert_eq!(row(&p), (512, 100, 524288, 0));
    // Callchains stop at the exempt limit, with a longer safe drain.
    let p = exempt(100000, Callchain);
    assert_eq!(p.pages, LOCK_EXEMPT_MAX_PAGES);
    assert!(p.drain_ms >= 18, "{p:?}");
    let mut big = input(100000, Callchain);
    big.lock_exempt = true;
    big.page_size = 65536;
    assert_eq!(
        plan(&big).pages,
        128,
        "the limit is in bytes: 8 MiB of 64 KiB pages"
    );
}

fn row(p: &Plan) -> (u64, u64, u64, usize) {
    (p.pages, p.drain_ms, p.watermark, p.warnings.len())
}

/// The sizes the original picks for direct, frame-pointer callchain
/// and LBR sampling at typical frequencies, with a 516 KiB mlock limit.
#[test]
fn reference_sizes() {
    use Shape::*;
    assert_eq!(row(&plan(&input(997, Direct))), (8, 100, 8192, 0));
    assert_eq!(row(&plan(&input(4999, Direct))), (32, 100, 32768, 0));
    assert_eq!(row(&plan(&input(9997, Direct))), (64, 100, 65536, 0));
    assert_eq!(row(&plan(&input(19997, Direct))), (128, 100, 131072, 0));
    assert_eq!(row(&plan(&input(49999, Direct))), (128, 54, 131072, 1));
    let p = plan(&input(100000, Direct));
    assert_eq!(row(&p), (128, 27, 131072, 1));
    assert_eq!(
        p.warnings[0],
        "automatic perf buffer was capped at 128 pages per CPU by kernel.perf_event_mlock_kb=516"
    );
    assert_eq!(row(&plan(&input(997, Callchain))), (128, 100, 131072, 0));
    assert_eq!(row(&plan(&input(4999, Callchain))), (128, 23, 131072, 1));
    let p = plan(&input(100000, Callchain));
    assert_eq!(row(&p), (128, 1, 131072, 2));
    assert_eq!(
        p.warnings[1],
        "perf sampling requires a 1ms drain interval at this frequency; profiling overhead may be high"
    );
    assert_eq!(row(&plan(&input(997, Lbr))), (128, 82, 131072, 1));
    let mut i = input(997, Direct);
    i.drain_ms = Some(500);
    assert_eq!(row(&plan(&i)), (32, 500, 32768, 0));
    let mut i = input(10000, Direct);
    i.pages = Some(8);
    i.drain_ms = Some(500);
    let p = plan(&i);
    assert_eq!(row(&p), (8, 500, 8192, 1));
    assert_eq!(
        p.warnings[0],
        "configured perf drain interval 500ms exceeds the estimated safe interval 17ms; watermark polling will drain earlier"
    );
    assert_eq!(p.bytes_per_cpu, 32768);
}

#[test]
fn record_estimates_and_fallbacks() {
    assert_eq!(record_bytes(Shape::Direct, None, None), 48);
    assert_eq!(record_bytes(Shape::Callchain, None, None), 1136);
    assert_eq!(record_bytes(Shape::Callchain, Some(-1), Some(0)), 1136);
    assert_eq!(record_bytes(Shape::Callchain, Some(10), Some(2)), 152);
    assert_eq!(record_bytes(Shape::Lbr, None, None), 1592);
    // Unreadable mlock_kb: 128 pages' worth, i.e. a 127-page allowance -> 64.
    let mut i = input(100000, Shape::Direct);
    i.mlock_kb = None;
    let p = plan(&i);
    assert_eq!((p.pages, p.mlock_kb), (64, 512));
    // A tiny allowance still gives a power of two; zero falls back to 128.
    i.mlock_kb = Some(4);
    assert_eq!(plan(&i).pages, 128);
    i.mlock_kb = Some(12);
    assert_eq!(plan(&i).pages, 2);
    // Explicit pages: no cap, no warning.
    i.pages = Some(4096);
    let p = plan(&i);
    assert_eq!((p.pages, p.warnings.len()), (4096, 0));
}

use crate::profile::image::tests::{line, range};
use crate::profile::records::{self, build};

/// Program 9 at 0x1000..0x1100 with one line record.
fn prog9() -> ProgMeta {
    ProgMeta {
        id: 9,
        name: "p9".into(),
        funcs: vec![range(0x1000, 0x100, 0, "p9_main")],
        lines: vec![line(0x1000, 0, "p.c", 5, "x++;")],
        ..Default::default()
    }
}

#[derive(Default)]
struct FakeSource {
    by_id_calls: Vec<u32>,
    all_calls: usize,
}

impl ProgSource for FakeSource {
    fn by_id(&mut self, id: u32) -> Option<ProgMeta> {
        self.by_id_calls.push(id);
        (id == 9).then(prog9)
    }
    fn ids(&mut self) -> Vec<u32> {
        self.all_calls += 1;
        vec![9]
    }
}

fn cpu_ring(cpu: u32) -> CpuRing {
    CpuRing {
        cpu,
        fd: std::fs::File::open("/dev/null").expect("/dev/null").into(),
        ring: Ring::anonymous(1, 4096),
    }
}

fn direct_samples(ips: &[u64]) -> Vec<u8> {
    ips.iter()
        .flat_map(|&ip| build::sample(ip, 0, None))
        .collect()
}

fn loop_over<'a>(
    rings: &'a mut [CpuRing],
    side: &'a mut [CpuRing],
    attr: &'a mut Attributor,
    source: &'a mut dyn ProgSource,
) -> Loop<'a> {
    Loop {
        rings,
        side,
        sample_type: Shape::Direct.sample_type() | records::build::SAMPLE_FIELDS,
        attr,
        source,
        scratch: Vec::new(),
        side_stats: ParseStats::default(),
        pending: Vec::new(),
        start_ns: 1_000_000_000,
        comm_from_leader: Default::default(),
        out: LoopOutcome::default(),
    }
}

/// Names from the side band: the last one per process, a main
/// thread's over another thread's; loads and unloads with their time
/// into the capture.
#[test]
fn side_band_names_and_program_lifetimes() {
    let mut rings = vec![cpu_ring(0)];
    let mut side = vec![cpu_ring(0), cpu_ring(1)];
    let mut attr = Attributor::new(Shape::Direct);
    let mut source = FakeSource::default();
    {
        let mut lp = loop_over(&mut rings, &mut side, &mut attr, &mut source);
        // Capture started at 1 s: a load at 1.25 s, an unload at 3.5 s.
        lp.side[1].ring.produce(&build::bpf_event_at(
            records::BPF_EVENT_PROG_LOAD,
            9,
            1_250_000_000,
        ));
        lp.side[0]
            .ring
            .produce(&build::comm(50, 50, false, "bash", 1_300_000_000));
        lp.side[0]
            .ring
            .produce(&build::comm(50, 50, true, "short-lived", 1_400_000_000));
        lp.side[1]
            .ring
            .produce(&build::comm(50, 51, false, "thread", 1_500_000_000));
        lp.side[1]
            .ring
            .produce(&build::comm(60, 61, false, "only a thread", 1_500_000_000));
        lp.rings[0].ring.produce(&direct_samples(&[0x1010]));
        lp.drain(&[0]);
        lp.side[0].ring.produce(&build::bpf_event_at(
            records::BPF_EVENT_PROG_UNLOAD,
            9,
            3_500_000_000,
        ));
        lp.drain(&[0]);
        let names: std::collections::BTreeMap<u32, &str> =
            lp.out.comms.iter().map(|(k, v)| (*k, v.as_str())).collect();
        assert_eq!(names, [(50, "short-lived"), (60, "only a thread")].into());
    }
    let (progs, _, _) = attr.finish(&Default::default(), |_| vec![]);
    assert_eq!(progs[0].loaded_after, Some(0.25));
    assert_eq!(progs[0].unloaded_after, Some(2.5));
    assert_eq!(progs[0].loaded_seconds(10.0), Some(2.25));
}

/// A process created during the capture runs under its parent's name
/// until it takes one of its own (as perf names it): FORK records replayed
/// with COMM records, from two CPUs and in two drains.
#[test]
fn forked_children_inherit_their_parents_name() {
    use crate::model::profile::{ProgramProfile, Stack};
    let mut rings = vec![cpu_ring(0)];
    let mut side = vec![cpu_ring(0), cpu_ring(1)];
    let mut attr = Attributor::new(Shape::Direct);
    let mut source = FakeSource::default();
    let mut lp = loop_over(&mut rings, &mut side, &mut attr, &mut source);
    let t = 1_300_000_000;
    // 80 is a shell named during the capture; 71 and 72 its children, 73
    // a grandchild; 72 execs; 81 is a thread of 80, not a process; 90's
    // parent (5) started before the capture and is named from /proc.
    lp.side[0].ring.produce(&build::comm(80, 80, true, "sh", t));
    lp.side[0]
        .ring
        .produce(&build::task(false, 71, 80, 71, 80, t + 1));
    lp.side[1]
        .ring
        .produce(&build::task(false, 72, 80, 72, 80, t + 2));
    lp.side[1]
        .ring
        .produce(&build::task(false, 80, 80, 81, 80, t + 3));
    lp.side[1]
        .ring
        .produce(&build::task(false, 90, 5, 90, 5, t + 4));
    lp.drain(&[0]);
    lp.side[0]
        .ring
        .produce(&build::task(false, 73, 71, 73, 71, t + 5));
    lp.side[1]
        .ring
        .produce(&build::comm(72, 72, true, "true", t + 6));
    lp.side[1]
        .ring
        .produce(&build::task(true, 72, 80, 72, 80, t + 7));
    lp.drain(&[0]);
    assert_eq!(
        lp.out.parents,
        [(71, 80), (72, 80), (73, 71), (90, 5)].into()
    );
    assert_eq!(lp.side_stats.unknown_records, 0, "EXIT records are known");
    let stacks = [71, 72, 73, 80, 90, 99]
        .map(|pid| Stack {
            samples: 1,
            pid,
            ..Default::default()
        })
        .to_vec();
    let p = ProgramProfile {
        stacks,
        ..Default::default()
    };
    let now = |pid: u32| (pid == 5).then(|| "init".to_string());
    let names = crate::profile::who::comms(&[p], &lp.out.comms, &lp.out.parents, now);
    let names: Vec<(u32, &str)> = names.iter().map(|(k, v)| (*k, v.as_str())).collect();
    assert_eq!(
        names,
        [
            (71, "sh"),
            (72, "true"),
            (73, "sh"),
            (80, "sh"),
            (90, "init"),
            (99, "?")
        ]
    );
}

/// An unload record whose time the kernel left 0 is dated when it is
/// drained, not at the capture's start.
#[test]
fn an_unload_without_a_time_is_dated_when_drained() {
    let mut rings = vec![cpu_ring(0)];
    let mut side = vec![cpu_ring(0)];
    let mut attr = Attributor::new(Shape::Direct);
    let mut source = FakeSource::default();
    {
        let mut lp = loop_over(&mut rings, &mut side, &mut attr, &mut source);
        lp.out.started = std::time::Instant::now().checked_sub(Duration::from_secs(2));
        lp.side[0].ring.produce(&build::bpf_event_at(
            records::BPF_EVENT_PROG_LOAD,
            9,
            1_250_000_000,
        ));
        lp.rings[0].ring.produce(&direct_samples(&[0x1010]));
        lp.drain(&[0]);
        lp.side[0]
            .ring
            .produce(&build::bpf_event_at(records::BPF_EVENT_PROG_UNLOAD, 9, 0));
        lp.drain(&[0]);
    }
    let (progs, _, _) = attr.finish(&Default::default(), |_| vec![]);
    let at = progs[0].unloaded_after.expect("unload seen");
    assert!((2.0..3.0).contains(&at), "unloaded after {at} s");
}

/// Loads seen on the side band apply before the samples drained with
/// them; unloads only after, so earlier samples still count.
#[test]
fn side_band_orders_loads_and_unloads_around_samples() {
    let mut rings = vec![cpu_ring(0), cpu_ring(1)];
    let mut side = vec![cpu_ring(0), cpu_ring(1)];
    let mut attr = Attributor::new(Shape::Direct);
    let mut source = FakeSource::default();
    // Program 9 loads on CPU 1 and runs on CPU 0.
    side[1]
        .ring
        .produce(&build::ksymbol(0x1000, 0x100, 0, "bpf_prog_x_p9_main"));
    side[1]
        .ring
        .produce(&build::bpf_event(records::BPF_EVENT_PROG_LOAD, 9));
    rings[0]
        .ring
        .produce(&direct_samples(&[0x1010, 0xffff_ffff_8100_0000]));
    {
        let mut lp = loop_over(&mut rings, &mut side, &mut attr, &mut source);
        lp.drain(&[0, 1]);
        assert_eq!(lp.out.drain_count, 1, "only ring 0 had data");
        assert!(lp.out.max_occupancy > 0.0);
        assert!(lp.out.first_sample.is_some());
        // Unloaded: samples read in the same drain still count, and so
        // do samples other rings hold until every ring was swept.
        lp.rings[1].ring.produce(&direct_samples(&[0x1020]));
        lp.side[0]
            .ring
            .produce(&build::bpf_event(records::BPF_EVENT_PROG_UNLOAD, 9));
        lp.side[0].ring.produce(&build::ksymbol(
            0x1000,
            0x100,
            records::KSYMBOL_FLAG_UNREGISTER,
            "x",
        ));
        lp.drain(&[1]);
        lp.rings[0].ring.produce(&direct_samples(&[0x1028]));
        lp.drain(&[0]);
        lp.drain(&[0, 1]);
        // Later samples at that address are no longer the program's.
        lp.rings[0].ring.produce(&direct_samples(&[0x1030]));
        lp.drain(&[0]);
        assert_eq!(lp.out.stats.samples, 5);
    }
    assert_eq!(source.by_id_calls, vec![9]);
    assert_eq!(source.all_calls, 0);
    assert_eq!(attr.counters.total_samples, 5);
    assert_eq!(attr.counters.bpf_jit_samples, 3);
    let (progs, _, _) = attr.finish(&Default::default(), |_| vec![]);
    assert_eq!(progs[0].samples, 3);
}

/// Lost side-band records mean unseen loads: every program is re-read.
#[test]
fn lost_side_band_records_trigger_a_resync() {
    let mut rings = vec![cpu_ring(0)];
    let mut side = vec![cpu_ring(0)];
    let mut attr = Attributor::new(Shape::Direct);
    let mut source = FakeSource::default();
    side[0]
        .ring
        .produce(&build::record(records::RECORD_LOST, &build::u64s(&[1, 3])));
    rings[0].ring.produce(&direct_samples(&[0x1010]));
    let mut lp = loop_over(&mut rings, &mut side, &mut attr, &mut source);
    lp.drain(&[0]);
    assert_eq!(
        lp.out.stats.lost_samples, 0,
        "side-band loss is not sample loss"
    );
    drop(lp);
    assert_eq!(source.all_calls, 1);
    assert_eq!(attr.counters.bpf_jit_samples, 1);
}

/// A ring holding more than its size (overrun) and a record that wraps.
#[test]
fn overrun_and_wrapped_records() {
    let mut rings = vec![cpu_ring(0)];
    let mut side: Vec<CpuRing> = Vec::new();
    let mut attr = Attributor::new(Shape::Direct);
    let mut source = FakeSource::default();
    // 4096-byte ring: 85 samples (4080 bytes) fit; the 86th wraps.
    rings[0].ring.produce(&direct_samples(&[1; 85]));
    let mut lp = loop_over(&mut rings, &mut side, &mut attr, &mut source);
    lp.drain(&[0]);
    lp.rings[0].ring.produce(&direct_samples(&[2; 3]));
    lp.drain(&[0]);
    assert_eq!(lp.out.stats.samples, 88);
    assert_eq!(
        (lp.out.stats.malformed_records, lp.out.stats.discarded_bytes),
        (0, 0)
    );
    // More than a ring's worth pending: the excess is discarded, the
    // rest (starting mid-record) is malformed, never silently skipped.
    lp.rings[0].ring.produce(&direct_samples(&[3; 100]));
    lp.drain(&[0]);
    // (Here the first header read is inside a sample and is garbage, so
    // everything pending ends up discarded.)
    assert_eq!(lp.out.stats.discarded_bytes, 100 * 48);
    assert_eq!(lp.out.stats.malformed_records, 1);
    assert!(lp.out.max_occupancy > 100.0, "{}", lp.out.max_occupancy);
}

#[test]
fn stop_signal() {
    let s = StopSignal::new();
    let t = Instant::now();
    assert!(!s.wait_until(t + Duration::from_millis(20)));
    assert!(t.elapsed() >= Duration::from_millis(20));
    std::thread::scope(|sc| {
        sc.spawn(|| {
            std::thread::sleep(Duration::from_millis(10));
            s.cancel();
        });
        assert!(s.wait_until(Instant::now() + Duration::from_secs(30)));
    });
    assert!(s.is_cancelled());
}
