//! The JSON document of a profile: the metadata, then one object per
//! program with its hotspots, payers, hints and `--devmode` context.

use super::fields::{
    hex_json, hotspot_fields, kernel_fields, metadata, metadata_tail, opt_str, program_fields,
    program_tail, to_obj,
};
use crate::model::profile::Hint;
use crate::model::report::{Figured, NativeRow, Payers, ProgramReport, Report};
use crate::model::source::SourceContexts;
use crate::render::dump;
use crate::render::json::{self, Json};
use crate::render::listing::{container_json, pod_json};

/// A hint as a JSON object.
pub(crate) fn hint_json(h: &Hint) -> Json {
    to_obj(vec![
        ("kind", h.kind.into()),
        ("program_id", h.program_id.into()),
        ("program", h.program.as_str().into()),
        ("file", opt_str(&h.file)),
        ("line", h.line.map_or(Json::Null, Json::from)),
        ("source", opt_str(&h.source)),
        ("figure", h.figure.into()),
        ("threshold", h.threshold.into()),
        ("unit", h.unit.into()),
        ("evidence", h.evidence.as_str().into()),
        ("fix", h.fix.into()),
    ])
}

/// Payers as JSON; each names its container and pod (null where it ran
/// outside one or its cgroup is unknown).
fn payers_json(payers: &Payers, id: &'static str, name: &'static str) -> Json {
    Json::Arr(
        payers
            .all
            .iter()
            .map(|r| {
                let w = payers.workload(r.id);
                to_obj(vec![
                    (id, r.id.into()),
                    (name, r.name.as_str().into()),
                    ("samples", r.samples.into()),
                    ("cpu_percent", r.cpu_percent.into()),
                    // New, additive: where the payer ran.
                    (
                        "container",
                        container_json(w.and_then(|w| w.container.as_ref())),
                    ),
                    ("pod", pod_json(w.and_then(|w| w.pod.as_ref()))),
                ])
            })
            .collect(),
    )
}

fn program_json(p: &ProgramReport, ctx: Option<&SourceContexts>) -> Json {
    let mut f = program_fields(p);
    f.push((
        "hotspots",
        Json::Arr(
            p.direct
                .rows
                .iter()
                .map(|h| {
                    let mut o = hotspot_fields(h);
                    // New, optional: the (sub)program holding the line.
                    o.push(("function", opt_str(&h.function)));
                    o.push(("jited_address_hex", hex_json(h.jited_address)));
                    to_obj(o)
                })
                .collect(),
        ),
    ));
    f.push(("kernel_samples", p.kernel_samples.into()));
    f.push(("kernel_cpu_percent", p.kernel_cpu_percent.into()));
    f.push((
        "kernel_hotspots",
        Json::Arr(
            p.kernel_ips
                .rows
                .iter()
                .map(|k| {
                    let mut o = kernel_fields(k);
                    o.push(("bpf_function", opt_str(&k.bpf_function)));
                    o.push(("ip_hex", hex_json(Some(k.ip))));
                    o.push(("bpf_jited_address_hex", hex_json(k.bpf_jited_address)));
                    to_obj(o)
                })
                .collect(),
        ),
    ));
    // New, additive: who pays for the program.
    f.push(("tasks", payers_json(&p.tasks, "pid", "comm")));
    f.push(("cgroups", payers_json(&p.cgroups, "id", "path")));
    f.push(("hints", Json::Arr(p.hints.iter().map(hint_json).collect())));
    if let Some(c) = ctx.and_then(|c| Some((c, c.by_program.get(&p.id)?))) {
        let dev = dump::DumpDevmode {
            devdir: c.0.devdir.clone(),
            context: c.1,
        };
        f.push(("source_context", dump::context_json(&dev)));
    }
    // New, additive: last so the original's keys keep their places.
    f.push(("full_name", p.display_name().into()));
    f.extend(program_tail(p));
    if let Some(a) = &p.native {
        let all = a.all.clone();
        let rows = json::Items::new(move |sink| {
            // Written field by field: a profile lists thousands of sampled
            // instructions.
            for r in all.iter() {
                sink.object(&mut |f| native_json(r, f));
            }
        });
        f.push(("native", Json::Items(rows)));
    }
    to_obj(f)
}

/// One sampled native instruction (`--annotate`): every one is listed.
fn native_json(r: &Figured<NativeRow>, f: &mut json::Fields<'_>) {
    f.str("function", r.function.as_deref());
    f.uint("offset", r.offset);
    f.str("asm", r.asm.as_deref());
    f.str("file", r.file.as_deref());
    f.uint("line", r.line.map(u64::from));
    f.uint("samples", Some(r.samples));
    f.float("percent", r.sample_percent);
}

pub(super) fn to_json(report: &Report, ctx: Option<&SourceContexts>) -> Json {
    let items = report
        .programs
        .iter()
        .map(|p| program_json(p, ctx))
        .collect();
    let mut meta = metadata(report);
    meta.extend(metadata_tail(report));
    json::document("profile", items, to_obj(meta))
}
