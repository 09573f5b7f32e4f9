//! The cells and JSON values that several listings share: holders
//! (OWNERS), attach points, maps memlock, containers and pods.

use crate::model::{AttachPoint, Container, Holder, Keepers, Pod, Program};
use crate::render::dash_join;
use crate::render::json::{obj, Json};

/// The OWNERS cell: the first two holders as `comm(pid)`, then `+N`; an
/// object nobody holds says what keeps it loaded.
pub(crate) fn owners_cell(k: Option<&Keepers>, pinned: bool) -> String {
    let Some(k) = k else {
        return "-".into();
    };
    if k.owners.is_empty() {
        return match (pinned, k.held_by) {
            (true, _) => "(pinned)".into(),
            (false, Some(h)) => format!("(held by {})", holder_text(h)),
            (false, None) => "-".into(),
        };
    }
    let mut out = k
        .owners
        .iter()
        .take(2)
        .map(|o| format!("{}({})", o.comm, o.pid))
        .collect::<Vec<_>>()
        .join(",");
    if k.owners.len() > 2 {
        out.push_str(&format!(" +{}", k.owners.len() - 2));
    }
    out
}

fn holder_text(h: Holder) -> String {
    match h {
        Holder::Prog(id) => format!("prog {id}"),
        Holder::Link(id) => format!("link {id}"),
    }
}

/// A program's attach points for a text cell: `attach_type:target` per
/// link or perf event fd.
pub(crate) fn attach_cell(points: &[AttachPoint]) -> String {
    let cells: Vec<String> = points
        .iter()
        .map(|a| match (&a.attach_type, &a.target) {
            (Some(t), Some(x)) => format!("{t}:{x}"),
            (Some(t), None) => t.clone(),
            (None, Some(x)) => x.clone(),
            (None, None) => match (a.link_id, a.perf_event) {
                (Some(id), _) => format!("link {id}"),
                (None, Some(e)) => format!("perf event fd {} of pid {}", e.fd, e.pid),
                (None, None) => "-".into(),
            },
        })
        .collect();
    dash_join(&cells, ",")
}

/// The MAPS_MEM cell: bytes, and how many of the maps other programs use.
pub(crate) fn maps_mem_cell(p: &Program) -> String {
    maps_mem_with(p, |b| b.to_string())
}

/// [`maps_mem_cell`] with the bytes in a view's own number style (`num`),
/// the one its other byte columns use.
pub(super) fn maps_mem_with(p: &Program, num: impl Fn(u64) -> String) -> String {
    match (p.maps_memlock_bytes, p.shared_maps) {
        (None, _) => "-".into(),
        (Some(b), None | Some(0)) => num(b),
        (Some(b), Some(n)) => format!("{} ({n} shared)", num(b)),
    }
}

/// A container as JSON: `{"runtime", "id", "name"}` (`name` null where the
/// kubelet's logs do not name it), or null.
pub(crate) fn container_json(c: Option<&Container>) -> Json {
    c.map_or(Json::Null, |c| {
        obj([
            ("runtime", c.runtime.as_str().into()),
            ("id", c.id.as_str().into()),
            ("name", c.name.as_deref().map_or(Json::Null, Json::from)),
        ])
    })
}

/// A pod as JSON: `{"uid", "namespace", "name", "qos"}`, or null.
pub(crate) fn pod_json(p: Option<&Pod>) -> Json {
    p.map_or(Json::Null, |p| {
        let opt = |s: Option<&str>| s.map_or(Json::Null, Json::from);
        obj([
            ("uid", p.uid.as_str().into()),
            ("namespace", opt(p.namespace.as_deref())),
            ("name", opt(p.name.as_deref())),
            ("qos", opt(p.qos.map(|q| q.as_str()))),
        ])
    })
}

/// `owners` and `held_by` for JSON (`csv`: owners as `comm(pid)` strings,
/// one cell). A JSON owner names its container and pod (null outside one).
pub(super) fn keeper_fields(k: Option<&Keepers>, csv: bool) -> [(&'static str, Json); 2] {
    let owners = k.map(|k| {
        Json::Arr(
            k.owners
                .iter()
                .map(|o| {
                    if csv {
                        return Json::Str(format!("{}({})", o.comm, o.pid));
                    }
                    let w = k.workloads.get(&o.pid);
                    obj([
                        ("pid", o.pid.into()),
                        ("comm", o.comm.as_str().into()),
                        (
                            "container",
                            container_json(w.and_then(|w| w.container.as_ref())),
                        ),
                        ("pod", pod_json(w.and_then(|w| w.pod.as_ref()))),
                    ])
                })
                .collect(),
        )
    });
    let held = k.and_then(|k| k.held_by).map(|h| match (h, csv) {
        (h, true) => Json::Str(holder_text(h)),
        (Holder::Prog(id), false) => obj([("kind", "prog".into()), ("id", id.into())]),
        (Holder::Link(id), false) => obj([("kind", "link".into()), ("id", id.into())]),
    });
    [
        ("owners", owners.unwrap_or(Json::Null)),
        ("held_by", held.unwrap_or(Json::Null)),
    ]
}

pub(super) fn attached_json(points: &[AttachPoint], csv: bool) -> Json {
    if csv {
        return Json::Arr(
            points
                .iter()
                .map(|a| Json::Str(attach_cell(std::slice::from_ref(a))))
                .collect(),
        );
    }
    Json::Arr(
        points
            .iter()
            .map(|a| {
                let perf = a
                    .perf_event
                    .map(|e| obj([("pid", e.pid.into()), ("fd", e.fd.into())]));
                obj([
                    ("link_id", a.link_id.into()),
                    ("attach_type", a.attach_type.clone().into()),
                    ("target", a.target.clone().into()),
                    ("perf_event", perf.unwrap_or(Json::Null)),
                ])
            })
            .collect(),
    )
}
