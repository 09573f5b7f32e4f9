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

/// One of the files a capture writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Folded,
    FlameGraph,
    Pprof,
}

impl Kind {
    fn what(self) -> &'static str {
        match self {
            Kind::Folded => "folded stacks",
            Kind::FlameGraph => "flame graph",
            Kind::Pprof => "pprof profile",
        }
    }
}

fn cannot_write(what: &str, path: &Path, e: &std::io::Error) -> BrrError {
    BrrError::Failed(format!("cannot write {what} to {}: {e}", path.display()))
}

/// A file opened for writing before the capture.
#[derive(Debug)]
struct OpenFile {
    kind: Kind,
    path: PathBuf,
    file: File,
    /// It did not exist before: a capture that fails takes it away again.
    fresh: bool,
}

/// The requested files, opened (created) before the capture, so that a
/// path that cannot be written fails before any sampling rather than
/// after it.
#[derive(Debug, Default)]
pub(crate) struct Opened {
    files: Vec<OpenFile>,
    folded_to_stdout: bool,
}

impl Targets {
    /// Open (create or truncate) every requested file.
    pub(crate) fn open(&self) -> Result<Opened> {
        self.open_with(true)
    }

    /// Fail as [`Targets::open`] would, changing nothing: what a front end
    /// that measures something else first checks before it starts.
    pub(crate) fn check(&self) -> Result<()> {
        self.open_with(false).map(Opened::discard)
    }

    fn open_with(&self, truncate: bool) -> Result<Opened> {
        let mut opened = Opened {
            files: Vec::new(),
            folded_to_stdout: self.folded_to_stdout(),
        };
        let wanted = [
            (
                Kind::Folded,
                self.folded.as_ref().filter(|_| !self.folded_to_stdout()),
            ),
            (Kind::FlameGraph, self.flamegraph.as_ref()),
            (Kind::Pprof, self.pprof.as_ref()),
        ];
        for (kind, path) in wanted {
            let Some(path) = path else { continue };
            let fresh = std::fs::symlink_metadata(path).is_err();
            let file = File::options()
                .write(true)
                .create(true)
                .truncate(truncate)
                .open(path);
            match file {
                Ok(file) => opened.files.push(OpenFile {
                    kind,
                    path: path.clone(),
                    file,
                    fresh,
                }),
                Err(e) => {
                    opened.discard();
                    return Err(cannot_write(kind.what(), path, &e));
                }
            }
        }
        Ok(opened)
    }
}

impl Opened {
    /// Remove the files [`Targets::open`] created: there is nothing to
    /// write into them.
    pub(crate) fn discard(self) {
        for f in self.files.into_iter().filter(|f| f.fresh) {
            drop(f.file);
            // Best effort: the capture's own error is the one to report.
            let _ = std::fs::remove_file(&f.path);
        }
    }
}

/// What writing the files gave: the folded stacks when they go to stdout,
/// and one error for each file that could not be written.
#[derive(Debug, Default)]
pub(crate) struct Written {
    pub stdout: Option<String>,
    pub failed: Vec<BrrError>,
}

/// Write every requested file; returns the folded text when it goes to
/// stdout. The pprof file has no container or pod labels (see
/// [`write_with`]).
pub(crate) fn write(profile: &Profile, targets: &Targets) -> Result<Option<String>> {
    let written = write_opened(profile, targets.open()?, &SampledWorkloads::default());
    match written.failed.into_iter().next() {
        Some(e) => Err(e),
        None => Ok(written.stdout),
    }
}

/// Write the profile into the files `opened` holds, the pprof samples
/// labelled with the containers and pods in `workloads`. A file that
/// cannot be written does not stop the others.
pub(crate) fn write_opened(
    profile: &Profile,
    opened: Opened,
    workloads: &SampledWorkloads,
) -> Written {
    let mut out = Written {
        stdout: opened.folded_to_stdout.then(|| folded::render(profile)),
        failed: Vec::new(),
    };
    for f in opened.files {
        let mut w = BufWriter::new(f.file);
        let body = match f.kind {
            Kind::Folded => w.write_all(folded::render(profile).as_bytes()),
            Kind::FlameGraph => flamegraph::write(profile, &flamegraph::Host::current(), &mut w),
            Kind::Pprof => {
                let ctx = pprof::Context::now(profile).with_workloads(workloads.clone());
                pprof::write(profile, &ctx, &mut w)
            }
        };
        if let Err(e) = body.and_then(|()| w.flush()) {
            out.failed.push(cannot_write(f.kind.what(), &f.path, &e));
        }
    }
    out
}
