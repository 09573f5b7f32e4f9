//! Profile files in the ecosystem's formats (folded stacks, flame graph
//! SVG, pprof), written from a finished
//! [`Profile`](crate::model::profile::Profile)'s raw stacks. A view beside
//! `render`; the Prometheus exporter service is a front end of its own
//! ([`crate::serve`]).

pub(crate) mod flamegraph;
pub(crate) mod folded;
pub(crate) mod pprof;
#[allow(clippy::all, clippy::pedantic, missing_docs)]
mod pprof_proto;

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use crate::error::{BrrError, Result};
use crate::model::profile::Profile;
use crate::model::report::SampledWorkloads;

/// Where to write a capture's profile files (`--folded`, `--flamegraph`,
/// `--pprof`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Targets {
    /// `-` means stdout, in place of the report.
    pub folded: Option<PathBuf>,
    pub flamegraph: Option<PathBuf>,
    pub pprof: Option<PathBuf>,
}

impl Targets {
    /// The first option given, as its flag, for usage errors.
    pub(crate) fn first_flag(&self) -> Option<&'static str> {
        [
            (self.folded.is_some(), "--folded"),
            (self.flamegraph.is_some(), "--flamegraph"),
            (self.pprof.is_some(), "--pprof"),
        ]
        .into_iter()
        .find_map(|(given, flag)| given.then_some(flag))
    }

    pub(crate) fn folded_to_stdout(&self) -> bool {
        self.folded.as_deref() == Some(Path::new("-"))
    }
}

fn write_file(
    path: &Path,
    what: &str,
    body: impl FnOnce(&mut BufWriter<File>) -> std::io::Result<()>,
) -> Result<()> {
    let fail = |e: std::io::Error| {
        BrrError::Failed(format!("cannot write {what} to {}: {e}", path.display()))
    };
    let mut w = BufWriter::new(File::create(path).map_err(fail)?);
    body(&mut w).map_err(fail)?;
    w.flush().map_err(fail)
}

/// Write every requested file; returns the folded text when it goes to
/// stdout. The pprof file has no container or pod labels (see
/// [`write_with`]).
pub(crate) fn write(profile: &Profile, targets: &Targets) -> Result<Option<String>> {
    write_with(profile, targets, &SampledWorkloads::default())
}

/// [`write`], the pprof samples labelled with the containers and pods in
/// `workloads`.
pub(crate) fn write_with(
    profile: &Profile,
    targets: &Targets,
    workloads: &SampledWorkloads,
) -> Result<Option<String>> {
    let mut stdout = None;
    if let Some(path) = &targets.folded {
        let text = folded::render(profile);
        if targets.folded_to_stdout() {
            stdout = Some(text);
        } else {
            write_file(path, "folded stacks", |w| w.write_all(text.as_bytes()))?;
        }
    }
    if let Some(path) = &targets.flamegraph {
        let host = flamegraph::Host::current();
        write_file(path, "flame graph", |w| {
            flamegraph::write(profile, &host, w)
        })?;
    }
    if let Some(path) = &targets.pprof {
        let ctx = pprof::Context::now(profile).with_workloads(workloads.clone());
        write_file(path, "pprof profile", |w| pprof::write(profile, &ctx, w))?;
    }
    Ok(stdout)
}
