//! Listing rows: what brr knows about each loaded kernel object.

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Program {
    pub id: u32,
    pub prog_type: String,
    pub name: String,
    pub tag: String,
    pub xlated_size: u32,
    pub jited_size: u32,
    pub run_time_ns: u64,
    pub run_count: u64,
    /// Runs the kernel skipped because the program was already running on
    /// that CPU (counted whether or not statistics are on).
    pub recursion_misses: u64,
    pub map_ids: Vec<u32>,
    pub btf_id: u32,
    pub pinned_paths: Vec<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Map {
    pub id: u32,
    pub map_type: String,
    pub name: String,
    pub key_size: u32,
    pub value_size: u32,
    pub max_entries: u32,
    pub btf_id: u32,
    pub pinned_paths: Vec<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Link {
    pub id: u32,
    pub link_type: String,
    pub prog_id: u32,
    pub attach_type: Option<String>,
    pub target_obj_id: Option<u32>,
    pub target_btf_id: Option<u32>,
    pub pinned_paths: Vec<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BtfObject {
    pub id: u32,
    pub name: String,
    pub size: u32,
    pub pinned_paths: Vec<String>,
}
