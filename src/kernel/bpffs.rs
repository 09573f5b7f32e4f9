//! Pinned paths under a bpffs root, keyed by the real type of each object.

use std::collections::HashMap;
use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

use crate::sys::bpf::{self, ObjKind, ProgWant};
use crate::sys::link_info;

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

/// Normalise lexically: no repeated or trailing `/`, no `.` parts,
/// symlinks kept. Works on bytes, so a non-UTF-8 root is scanned as given.
pub fn normalise(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        if c != Component::CurDir {
            out.push(c);
        }
    }
    if out.as_os_str().is_empty() {
        out.push(".");
    }
    out
}

/// Scan `root` recursively. A missing root, unreadable directories and files
/// that are not BPF objects are silently skipped: pins are decoration.
pub fn scan(root: impl AsRef<Path>) -> Pins {
    let mut pins = Pins::default();
    let mut stack = vec![normalise(root.as_ref())];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = dir.join(entry.file_name());
            // file_type() does not follow symlinks: symlinked dirs are not walked.
            match entry.file_type() {
                Ok(t) if t.is_dir() => stack.push(path),
                Ok(_) => classify(&path, &path.to_string_lossy(), &mut pins),
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
        Some(ObjKind::Link) => link_info::link_info(&fd)
            .ok()
            .map(|i| (&mut pins.links, i.info.id)),
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
        for (given, want) in [
            ("/sys/fs/bpf/", "/sys/fs/bpf"),
            ("//sys//fs/bpf//x", "/sys/fs/bpf/x"),
            ("/", "/"),
            ("rel/./dir/", "rel/dir"),
            ("./", "."),
        ] {
            assert_eq!(normalise(Path::new(given)), Path::new(want), "{given}");
        }
    }

    #[test]
    fn missing_root_has_no_pins() {
        let p = scan(Path::new("/nonexistent/brr/bpffs"));
        assert!(p.progs.is_empty() && p.maps.is_empty() && p.links.is_empty());
    }
}
