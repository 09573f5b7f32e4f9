//! Plain data shared by every layer: listing rows, program images, activity
//! rows, profile results, the profile report and the workloads cgroups
//! name. Nothing here reads the kernel or formats text.

pub mod activity;
pub mod container;
pub mod image;
pub mod objects;
pub mod profile;
pub mod report;

pub use activity::ActivityRow;
pub use container::{Container, Pod, Qos, Runtime, Workload};
pub use image::{FuncRecord, JitRange, LineRecord, ProgramImage};
pub use objects::{
    AttachPoint, BtfObject, BtfUsers, Holder, Keepers, Link, LinkFields, Map, MapFields, Owner,
    PerfEventFd, ProgFields, Program,
};
