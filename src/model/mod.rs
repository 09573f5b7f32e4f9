//! Plain data shared by every layer: listing rows, program images, activity
//! rows, profile results, the profile report, the workloads cgroups name
//! and `--devmode` source contexts. Nothing here reads the kernel or
//! formats text.

pub(crate) mod activity;
pub(crate) mod container;
pub(crate) mod cost;
pub(crate) mod image;
pub(crate) mod objects;
pub(crate) mod profile;
pub(crate) mod report;
pub(crate) mod source;

pub use container::{Container, Pod, Qos, Runtime, Workload};
pub(crate) use image::ProgramImage;
pub use objects::Owner;
pub(crate) use objects::{
    AttachPoint, BtfObject, BtfUsers, Holder, Keepers, LinkFields, MapFields, PerfEventFd,
    ProgFields,
};
pub(crate) use objects::{Link, Map, Program};
