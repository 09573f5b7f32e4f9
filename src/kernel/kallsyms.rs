//! The kernel symbol table from `/proc/kallsyms`, parsed once per capture.
//!
//! Every symbol type is kept. Symbols are ordered by address (stably, so
//! aliases keep file order); an address resolves to the last symbol starting
//! at or below it. With `kernel.kptr_restrict` hiding addresses every line
//! reads as address 0; such lines are skipped and `hidden` is set.

use std::io::BufRead as _;
use std::ops::ControlFlow;

#[derive(Debug, Clone, Copy)]
struct Sym {
    addr: u64,
    name_off: u32,
    name_len: u32,
    /// Index into `modules` + 1; 0 = no module.
    module: u32,
}

#[derive(Debug, Default)]
pub struct Kallsyms {
    syms: Vec<Sym>,
    names: String,
    modules: Vec<String>,
    /// Lines were present but every address was zero.
    pub hidden: bool,
}

/// A table in the making, one line at a time.
#[derive(Default)]
struct Builder {
    k: Kallsyms,
    module_index: std::collections::HashMap<String, u32>,
    lines: usize,
}

impl Builder {
    fn line(&mut self, line: &str) {
        let Some((addr, name, module)) = fields(line) else {
            return;
        };
        self.lines += 1;
        if addr == 0 {
            return;
        }
        let k = &mut self.k;
        let module = match module {
            Some(m) => match self.module_index.get(m) {
                Some(&idx) => idx,
                None => {
                    let idx = self.module_index.len() as u32 + 1;
                    self.module_index.insert(m.to_string(), idx);
                    k.modules.push(m.to_string());
                    idx
                }
            },
            None => 0,
        };
        k.syms.push(Sym {
            addr,
            name_off: k.names.len() as u32,
            name_len: name.len() as u32,
            module,
        });
        k.names.push_str(name);
    }

    fn finish(self) -> Kallsyms {
        let mut k = self.k;
        k.syms.sort_by_key(|s| s.addr);
        k.hidden = self.lines > 0 && k.syms.is_empty();
        k
    }
}

/// A resolved address.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Symbol<'a> {
    pub name: &'a str,
    pub module: Option<&'a str>,
    pub start: u64,
}

/// One `/proc/kallsyms` line: address, name and `[module]` (without the
/// brackets). Lines without three fields are None; an unparsable address
/// reads as 0, like a hidden one.
pub fn fields(line: &str) -> Option<(u64, &str, Option<&str>)> {
    let mut f = line.split_whitespace();
    let (addr, _kind, name) = (f.next()?, f.next()?, f.next()?);
    let module = f
        .next()
        .and_then(|m| m.strip_prefix('['))
        .map(|m| m.trim_end_matches(']'))
        .filter(|m| !m.is_empty());
    Some((u64::from_str_radix(addr, 16).unwrap_or(0), name, module))
}

/// Call `f` with each line of `/proc/kallsyms` until it breaks; a read
/// that fails midway ends the lines there.
fn each_line(mut f: impl FnMut(&str) -> ControlFlow<()>) {
    let Ok(file) = std::fs::File::open("/proc/kallsyms") else {
        return;
    };
    let mut r = std::io::BufReader::with_capacity(64 * 1024, file);
    let mut line = Vec::new();
    loop {
        line.clear();
        match r.read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => break,
            Ok(_) => {
                if f(&String::from_utf8_lossy(&line)).is_break() {
                    break;
                }
            }
        }
    }
}

/// Note `line`'s address in `found` if it names one of `names` not found
/// yet; break once all are.
fn find_names<const N: usize>(
    line: &str,
    names: &[&str; N],
    found: &mut [Option<u64>; N],
) -> ControlFlow<()> {
    if let Some((addr, name, _)) = fields(line) {
        for (want, slot) in names.iter().zip(found.iter_mut()) {
            if slot.is_none() && addr != 0 && *want == name {
                *slot = Some(addr);
            }
        }
    }
    if found.iter().all(Option::is_some) {
        ControlFlow::Break(())
    } else {
        ControlFlow::Continue(())
    }
}

impl Kallsyms {
    /// Read `/proc/kallsyms`; an unreadable file gives an empty table.
    /// Parsed as it is read: the file is megabytes of text, the table a
    /// fraction of it.
    pub fn load() -> Kallsyms {
        let mut b = Builder::default();
        each_line(|line| {
            b.line(line);
            ControlFlow::Continue(())
        });
        b.finish()
    }

    /// The addresses of `names` in `/proc/kallsyms` (the first of each),
    /// read only as far as the last of them is found: the whole file is
    /// tens of milliseconds of kernel time, most of it past the kernel's
    /// own symbols. None for a name not found or an address hidden.
    pub(crate) fn addresses_of<const N: usize>(names: [&str; N]) -> [Option<u64>; N] {
        let mut out = [None; N];
        each_line(|line| find_names(line, &names, &mut out));
        out
    }

    pub fn parse(text: &str) -> Kallsyms {
        let mut b = Builder::default();
        for line in text.lines() {
            b.line(line);
        }
        b.finish()
    }

    fn symbol(&self, s: &Sym) -> Symbol<'_> {
        let start = s.name_off as usize;
        Symbol {
            name: self
                .names
                .get(start..start + s.name_len as usize)
                .unwrap_or(""),
            module: (s.module > 0).then(|| self.modules[s.module as usize - 1].as_str()),
            start: s.addr,
        }
    }

    /// The address of the symbol called `name` (the lowest, should there
    /// be several).
    pub(crate) fn address_of(&self, name: &str) -> Option<u64> {
        self.syms
            .iter()
            .find(|s| self.symbol(s).name == name)
            .map(|s| s.addr)
    }

    /// The name of the first symbol (in file order) that starts exactly at
    /// `addr`.
    pub fn exact(&self, addr: u64) -> Option<&str> {
        let i = self.syms.partition_point(|s| s.addr < addr);
        let s = self.syms.get(i).filter(|s| s.addr == addr)?;
        Some(self.symbol(s).name)
    }

    /// The function a kprobe_multi link reports at `addr`. On x86 kernels
    /// built with CONFIG_X86_KERNEL_IBT a function starts with a 4-byte
    /// `endbr64`, and the ftrace site the kernel attaches to (and reports)
    /// is the instruction after it: symbol + 4. So an address that is no
    /// symbol's start, but is 4 past one, names that symbol (bpftool reads
    /// these addresses the same way).
    pub fn kprobe_multi_function(&self, addr: u64) -> Option<&str> {
        self.exact(addr)
            .or_else(|| self.exact(addr.checked_sub(4)?))
    }

    /// The symbol containing `ip`: the last one starting at or below it.
    pub fn resolve(&self, ip: u64) -> Option<Symbol<'_>> {
        let i = self.syms.partition_point(|s| s.addr <= ip);
        let s = self.syms.get(i.checked_sub(1)?)?;
        Some(self.symbol(s))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Names are found in file order, each once; the walk breaks when the
    /// last is found, and a hidden (0) address finds nothing.
    #[test]
    fn find_names_breaks_once_every_name_is_found() {
        let mut found = [None; 2];
        let names = ["b", "c"];
        let lines = [
            "0000000000000000 T b",
            "10 T a",
            "20 T b",
            "30 t b",
            "40 T c",
            "50 T d",
        ];
        let mut read = 0;
        for l in lines {
            read += 1;
            if find_names(l, &names, &mut found).is_break() {
                break;
            }
        }
        assert_eq!(found, [Some(0x20), Some(0x40)]);
        assert_eq!(read, 5, "stops at the last name found");
    }

    const TEXT: &str = "\
ffffffff81000000 T _stext
ffffffff81000000 T _text
ffffffff81000100 t helper_a
ffffffff81000200 T bpf_ktime_get_ns
ffffffffc0001000 t bpf_prog_0123456789abcdef_x\t[bpf]
ffffffffc0002000 t mod_fn\t[ext4]
ffffffff81000180 W weak_between
garbage line
";

    #[test]
    fn resolves_greatest_start_with_aliases_in_file_order() {
        let k = Kallsyms::parse(TEXT);
        assert!(!k.hidden);
        assert_eq!(k.syms.len(), 7);
        assert_eq!(k.resolve(0xffffffff80ffffff), None);
        let s = k.resolve(0xffffffff81000010).unwrap();
        assert_eq!((s.name, s.start), ("_text", 0xffffffff81000000));
        assert_eq!(k.resolve(0xffffffff81000190).unwrap().name, "weak_between");
        let s = k.resolve(0xffffffff8100020a).unwrap();
        assert_eq!((s.name, s.module), ("bpf_ktime_get_ns", None));
        let s = k.resolve(0xffffffffc0001010).unwrap();
        assert_eq!(
            (s.name, s.module),
            ("bpf_prog_0123456789abcdef_x", Some("bpf"))
        );
        assert_eq!(k.resolve(u64::MAX).unwrap().module, Some("ext4"));
    }

    /// Cost of reading and parsing this host's table (run with
    /// `cargo test --release -- --ignored load_cost --nocapture`).
    #[test]
    fn exact_addresses_and_names() {
        let k = Kallsyms::parse(TEXT);
        assert_eq!(
            k.exact(0xffffffff81000000),
            Some("_stext"),
            "first alias in file order"
        );
        assert_eq!(k.exact(0xffffffff81000200), Some("bpf_ktime_get_ns"));
        assert_eq!(
            k.exact(0xffffffff81000201),
            None,
            "inside a symbol is not exact"
        );
        assert_eq!(k.exact(0xffffffffc0002000), Some("mod_fn"));
        assert_eq!(k.exact(0xffffffffffffffff), None);
        assert_eq!(k.address_of("weak_between"), Some(0xffffffff81000180));
        assert_eq!(k.address_of("missing"), None);
    }

    #[test]
    fn kprobe_multi_addresses_at_the_start_or_past_endbr64() {
        let k = Kallsyms::parse(TEXT);
        // No IBT: the symbol's own address.
        assert_eq!(
            k.kprobe_multi_function(0xffffffff81000200),
            Some("bpf_ktime_get_ns")
        );
        // IBT: 4 bytes past the start, after the endbr64.
        assert_eq!(
            k.kprobe_multi_function(0xffffffff81000104),
            Some("helper_a")
        );
        assert_eq!(k.kprobe_multi_function(0xffffffffc0002004), Some("mod_fn"));
        // Neither a start nor 4 past one.
        assert_eq!(k.kprobe_multi_function(0xffffffff81000102), None);
        assert_eq!(k.kprobe_multi_function(0xffffffff81000108), None);
        assert_eq!(k.kprobe_multi_function(2), None);
    }

    #[test]
    #[ignore]
    fn load_cost() {
        let t = std::time::Instant::now();
        let text = std::fs::read("/proc/kallsyms").unwrap_or_default();
        let read = t.elapsed();
        let k = Kallsyms::parse(&String::from_utf8_lossy(&text));
        eprintln!(
            "read {read:?}, parse {:?}, {} symbols",
            t.elapsed() - read,
            k.syms.len()
        );
    }

    #[test]
    fn hidden_addresses() {
        let k = Kallsyms::parse("0000000000000000 T _text\n0000000000000000 t foo [m]\n");
        assert!(k.hidden && k.syms.is_empty());
        assert_eq!(k.resolve(0xffffffff81000000), None);
        let empty = Kallsyms::parse("");
        assert!(!empty.hidden);
    }
}
