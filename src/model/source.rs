//! `--devmode` source context as plain data: the rows, mismatches and
//! unresolved files found for one program, and the contexts of the
//! programs a profile lists (filled by the inspection, laid out by the
//! views).

use std::collections::HashMap;

/// A BTF snippet that differs from the resolved file line (trailing
/// whitespace ignored).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Mismatch {
    pub file: String,
    pub line: u32,
    pub btf_source: String,
    pub file_source: String,
    pub resolved_path: String,
}

/// A row of `brr dump --devmode`'s source-context report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ContextRow {
    /// `mapped` or `context`.
    pub kind: &'static str,
    /// The BTF file name.
    pub file: String,
    pub line: u32,
    /// BTF text (mapped rows) or file text (context rows).
    pub source: Option<String>,
    pub resolved_path: Option<String>,
}

/// One program's `--devmode` source context.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct DumpContext {
    pub unresolved_files: Vec<String>,
    pub ambiguous_files: Vec<String>,
    pub mismatches: Vec<Mismatch>,
    pub rows: Vec<ContextRow>,
    /// Whether any mapped line's file was found.
    pub any_resolved: bool,
}

/// `--devmode` source context per listed program (text and JSON only).
#[derive(Debug, Clone, Default)]
pub(crate) struct SourceContexts {
    pub devdir: String,
    pub by_program: HashMap<u32, DumpContext>,
}
