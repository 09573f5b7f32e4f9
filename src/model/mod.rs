//! Plain data shared by every layer: listing rows, program images, activity
//! rows, profile results, the profile report, the workloads cgroups name
//! and `--devmode` source contexts. Nothing here reads the kernel or
//! formats text.

pub mod activity;
pub mod container;
pub mod image;
pub mod objects;
pub mod profile;
pub mod report;
pub(crate) mod source;

pub use container::{Container, Pod, Qos, Runtime, Workload};
pub use image::{JitRange, LineRecord, ProgramImage};
pub(crate) use objects::{
    AttachPoint, BtfObject, BtfUsers, Holder, Keepers, LinkFields, MapFields, PerfEventFd,
    ProgFields,
};
pub use objects::{Link, Map, Owner, Program};
