//! Writers for the ecosystem's profile formats, fed by a finished
//! [`Profile`](crate::model::profile::Profile): folded stacks, flame graph
//! SVG and pprof.

pub mod flamegraph;
pub mod folded;
pub mod pprof;
#[allow(clippy::all, clippy::pedantic, missing_docs)]
mod pprof_proto;
