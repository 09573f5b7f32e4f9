//! Flame graph SVG of the folded stacks, drawn by inferno. BPF frames (the
//! program, its subprograms and source lines) are blue; kernel frames keep
//! inferno's red-yellow palette, so where eBPF code ends is visible at a
//! glance.

use std::io::{self, Write};

use inferno::flamegraph::color::{BasicPalette, Color, PaletteMap};
use inferno::flamegraph::{self, Options, Palette};

use super::folded;
use crate::model::profile::Profile;

/// Where the profile was taken, for the title.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Host {
    pub hostname: String,
    pub kernel: String,
}

impl Host {
    /// This machine's host name and kernel release (`?` when unreadable).
    pub fn current() -> Host {
        let read = |name: &str| {
            std::fs::read_to_string(format!("/proc/sys/kernel/{name}"))
                .map(|s| s.trim().to_string())
                .ok()
                .filter(|s| !s.is_empty())
                .unwrap_or_else(|| "?".into())
        };
        Host {
            hostname: read("hostname"),
            kernel: read("osrelease"),
        }
    }
}

pub(crate) fn title(profile: &Profile, host: &Host) -> String {
    format!(
        "brr profile: {}, Linux {}, {} at {} Hz for {:.2} s",
        host.hostname,
        host.kernel,
        profile.selected_event,
        profile.frequency,
        profile.seconds()
    )
}

/// A stable blue for a BPF frame, varied by its name so neighbours differ.
fn bpf_color(name: &str) -> Color {
    let h = name.bytes().fold(0x811c_9dc5u32, |h, b| {
        (h ^ b as u32).wrapping_mul(0x0100_0193)
    });
    let v = (h % 80) as u8;
    Color {
        r: 60 + v / 2,
        g: 120 + v,
        b: 235,
    }
}

/// Write the SVG. A profile without samples gives inferno's "no valid
/// input" picture rather than an error: the report already says why.
pub fn write(profile: &Profile, host: &Host, out: impl Write) -> io::Result<()> {
    let stacks = folded::stacks(profile);
    let mut colors = PaletteMap::default();
    for p in folded::programs(profile) {
        for s in &p.stacks {
            for (name, bpf) in folded::frames(p, s) {
                if bpf {
                    colors.insert(&name, bpf_color(&name));
                }
            }
        }
    }
    let lines: Vec<String> = stacks
        .iter()
        .map(|(stack, count)| format!("{stack} {count}"))
        .collect();
    let mut opt = Options::default();
    opt.title = title(profile, host);
    opt.count_name = "samples".into();
    opt.colors = Palette::Basic(BasicPalette::Hot);
    opt.hash = true;
    opt.deterministic = true;
    opt.palette_map = Some(&mut colors);
    match flamegraph::from_lines(&mut opt, lines.iter().map(String::as_str), out) {
        Err(e) if lines.is_empty() && e.kind() == io::ErrorKind::InvalidData => Ok(()),
        r => r,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::aggregate::tests::profile;

    fn host() -> Host {
        Host {
            hostname: "box".into(),
            kernel: "6.1.0".into(),
        }
    }

    fn svg(p: &Profile) -> String {
        let mut out = Vec::new();
        write(p, &host(), &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn titled_svg_with_bpf_frames_coloured_apart() {
        let p = profile();
        let s = svg(&p);
        assert!(s.starts_with("<?xml"));
        assert!(s.contains("brr profile: box, Linux 6.1.0, cpu-clock at 1000 Hz for 1.00 s"));
        assert!(s.contains("sys_exit [prog 98]"));
        assert!(s.contains("lookup_nulls_elem_raw"));
        let frame = "sys_exit [prog 98]";
        let c = bpf_color(frame);
        assert!(s.contains(&format!("rgb({},{},{})", c.r, c.g, c.b)));
        // Kernel frames are not blue: every fill with b = 235 is a BPF frame.
        let blue = s.matches(",235)").count();
        let bpf_frames: usize = folded::stacks(&p)
            .keys()
            .flat_map(|k| k.split(';'))
            .filter(|f| !f.contains("lookup_") && !f.contains("bpf_get_") && !f.starts_with("0x"))
            .collect::<std::collections::BTreeSet<_>>()
            .len();
        assert!(
            blue >= bpf_frames,
            "{blue} blue fills for {bpf_frames} BPF frames"
        );
        assert_eq!(svg(&p), s, "deterministic");
    }

    #[test]
    fn empty_profile_is_still_an_svg() {
        let mut p = profile();
        p.programs.clear();
        let s = svg(&p);
        assert!(s.contains("<svg") && s.trim_end().ends_with("</svg>"));
    }
}
