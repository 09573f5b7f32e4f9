//! Plain data shared by every layer: listing rows, program images, activity
//! rows and profile results. Nothing here reads the kernel or formats text.

pub mod activity;
pub mod image;
pub mod objects;
pub mod profile;

pub use activity::ActivityRow;
pub use image::{FuncRecord, JitRange, LineRecord, ProgramImage};
pub use objects::{
    AttachPoint, BtfObject, Holder, Keepers, Link, LinkFields, Map, MapFields, Owner, ProgFields,
    Program,
};
