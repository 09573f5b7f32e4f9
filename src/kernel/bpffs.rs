//! Pinned paths under a bpffs root, keyed by the real type of each object.

use std::collections::HashMap;
use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use crate::sys::bpf::{self, ObjKind, ProgWant};

/// Pinned paths per object ID, one table per object kind.
#[derive(Debug, Default, Clone)]
pub struct Pins {
    pub progs: HashMap<u32, Vec<String>>,
    pub maps: HashMap<u32, Vec<String>>,
    pub links: HashMap<u32, Vec<String>>,
}

impl Pins {
    pub fn for_prog(&self, id: u32) -> Vec<String> {
        self.progs.get(&id).cloned().unwrap_or_default()
    }
    pub fn for_map(&self, id: u32) -> Vec<String> {
        self.maps.get(&id).cloned().unwrap_or_default()
    }
    pub fn for_link(&self, id: u32) -> Vec<String> {
        self.links.get(&id).cloned().unwrap_or_default()
    }
}

/// Join and normalise lexically: no repeated or trailing `/`, symlinks kept.
pub fn normalise(path: &str) -> String {
    let absolute = path.starts_with('/');
    let parts: Vec<&str> = path
        .split('/')
        .filter(|p| !p.is_empty() && *p != ".")
        .collect();
    let joined = parts.join("/");
    match (absolute, joined.is_empty()) {
        (true, _) => format!("/{joined}"),
        (false, true) => ".".to_string(),
        (false, false) => joined,
    }
}

/// Scan `root` recursively. A missing root, unreadable directories and files
/// that are not BPF objects are silently skipped: pins are decoration.
pub fn scan(root: impl AsRef<Path>) -> Pins {
    let mut pins = Pins::default();
    let base = normalise(&root.as_ref().to_string_lossy());
    let mut stack = vec![base.clone()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let name = entry.file_name();
            let path = if dir.ends_with('/') {
                format!("{dir}{}", name.to_string_lossy())
            } else {
                format!("{dir}/{}", name.to_string_lossy())
            };
            // file_type() does not follow symlinks: symlinked dirs are not walked.
            match entry.file_type() {
                Ok(t) if t.is_dir() => stack.push(path),
                Ok(_) => classify(&entry.path(), &path, &mut pins),
                Err(_) => {}
            }
        }
    }
    for list in pins
        .progs
        .values_mut()
        .chain(pins.maps.values_mut())
        .chain(pins.links.values_mut())
    {
        list.sort();
        list.dedup();
    }
    pins
}

fn classify(fs_path: &Path, shown: &str, pins: &mut Pins) {
    let Ok(c) = CString::new(fs_path.as_os_str().as_bytes()) else {
        return;
    };
    let Ok(fd) = bpf::obj_get(&c) else {
        return;
    };
    let id = match bpf::fd_object_kind(&fd) {
        Some(ObjKind::Prog) => bpf::prog_detail(&fd, ProgWant::default())
            .ok()
            .map(|d| (&mut pins.progs, d.info.id)),
        Some(ObjKind::Map) => bpf::map_info(&fd).ok().map(|i| (&mut pins.maps, i.id)),
        Some(ObjKind::Link) => bpf::link_info(&fd).ok().map(|i| (&mut pins.links, i.id)),
        _ => None,
    };
    if let Some((table, id)) = id {
        table.entry(id).or_default().push(shown.to_string());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalise_is_lexical() {
        assert_eq!(normalise("/sys/fs/bpf/"), "/sys/fs/bpf");
        assert_eq!(normalise("//sys//fs/bpf//x"), "/sys/fs/bpf/x");
        assert_eq!(normalise("/"), "/");
        assert_eq!(normalise("rel/./dir/"), "rel/dir");
    }

    #[test]
    fn missing_root_has_no_pins() {
        let p = scan("/nonexistent/brr/bpffs");
        assert!(p.progs.is_empty() && p.maps.is_empty() && p.links.is_empty());
    }
}
