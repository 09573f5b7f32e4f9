//! A small ordered JSON value and writer with the original's conventions:
//! ASCII-only escaping, Python float text, compact or 2-space pretty form.

use std::borrow::Cow;
use std::fmt::Write as _;
use std::sync::Arc;

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Json {
    Null,
    Bool(bool),
    Int(i128),
    Float(f64),
    Str(String),
    Arr(Vec<Json>),
    /// Keys are mostly literals: a document of thousands of objects makes
    /// no string for them.
    Obj(Vec<(Cow<'static, str>, Json)>),
    /// An array made item by item as it is written.
    Items(Items),
}

/// An array whose items are made one at a time while it is written, from
/// data the document shares instead of copying: a profile lists thousands
/// of sampled instructions, and a tree of them all would be made only to
/// be written once.
#[derive(Clone)]
pub(crate) struct Items(Arc<Each>);

/// What hands every item of an [`Items`] to a sink. By reference: the
/// maker may write each item over the last one's value and strings.
type Each = dyn Fn(&mut dyn FnMut(&Json)) + Send + Sync;

impl Items {
    /// `each` hands every item to the sink it is given, in order.
    pub(crate) fn new(each: impl Fn(&mut dyn FnMut(&Json)) + Send + Sync + 'static) -> Items {
        Items(Arc::new(each))
    }

    pub(crate) fn each(&self, sink: &mut dyn FnMut(&Json)) {
        (self.0)(sink);
    }

    pub(crate) fn collect(&self) -> Vec<Json> {
        let mut v = Vec::new();
        self.each(&mut |j| v.push(j.clone()));
        v
    }
}

impl PartialEq for Items {
    fn eq(&self, other: &Items) -> bool {
        self.collect() == other.collect()
    }
}

impl std::fmt::Debug for Items {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.collect().fmt(f)
    }
}

impl From<bool> for Json {
    fn from(v: bool) -> Json {
        Json::Bool(v)
    }
}
impl From<&str> for Json {
    fn from(v: &str) -> Json {
        Json::Str(v.to_string())
    }
}
impl From<String> for Json {
    fn from(v: String) -> Json {
        Json::Str(v)
    }
}
impl From<compact_str::CompactString> for Json {
    fn from(v: compact_str::CompactString) -> Json {
        Json::Str(v.into())
    }
}
impl From<f64> for Json {
    fn from(v: f64) -> Json {
        Json::Float(v)
    }
}
macro_rules! int_from {
    ($($t:ty),*) => {$(
        impl From<$t> for Json {
            fn from(v: $t) -> Json { Json::Int(v as i128) }
        }
    )*};
}
int_from!(u8, u16, u32, u64, usize, i16, i32, i64);

impl<T: Into<Json>> From<Option<T>> for Json {
    fn from(v: Option<T>) -> Json {
        v.map(Into::into).unwrap_or(Json::Null)
    }
}
impl<T: Into<Json> + Clone> From<&[T]> for Json {
    fn from(v: &[T]) -> Json {
        Json::Arr(v.iter().cloned().map(Into::into).collect())
    }
}

impl Json {
    /// Become the text `s` (null for None), in this value's own string
    /// when it has one: items written over one another make no string.
    pub(crate) fn set_str(&mut self, s: Option<&str>) {
        match (self, s) {
            (Json::Str(buf), Some(s)) => {
                buf.clear();
                buf.push_str(s);
            }
            (this, Some(s)) => *this = Json::Str(s.to_owned()),
            (this, None) => *this = Json::Null,
        }
    }
}

/// Build an object from (key, value) pairs, keeping their order.
pub(crate) fn obj<const N: usize>(pairs: [(&'static str, Json); N]) -> Json {
    Json::Obj(pairs.map(|(k, v)| (Cow::Borrowed(k), v)).into())
}

/// [`obj`] of a list built field by field (an item whose keys its CSV
/// rows share).
pub(crate) fn fields(pairs: Vec<(&'static str, Json)>) -> Json {
    Json::Obj(
        pairs
            .into_iter()
            .map(|(k, v)| (Cow::Borrowed(k), v))
            .collect(),
    )
}

/// `{"kind": ..., "items": [...], "metadata": {...}}`.
pub(crate) fn document(kind: &str, items: Vec<Json>, metadata: Json) -> Json {
    obj([
        ("kind", kind.into()),
        ("items", Json::Arr(items)),
        ("metadata", metadata),
    ])
}

fn escape(s: &str, out: &mut String) {
    out.push('"');
    // Most strings need no escape at all: copy the printable ASCII prefix
    // in one go (listings write tens of thousands of them).
    let plain = s
        .bytes()
        .position(|b| !(b' '..=b'~').contains(&b) || b == b'"' || b == b'\\')
        .unwrap_or(s.len());
    let (head, rest) = s.split_at(plain);
    out.push_str(head);
    for c in rest.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            ' '..='~' => out.push(c),
            _ => {
                let mut buf = [0u16; 2];
                for unit in c.encode_utf16(&mut buf) {
                    out.push_str(&format!("\\u{unit:04x}"));
                }
            }
        }
    }
    out.push('"');
}

fn write(v: &Json, pretty: bool, depth: usize, out: &mut String) {
    let newline = |out: &mut String, d: usize| {
        if pretty {
            out.push('\n');
            out.extend(std::iter::repeat_n(' ', d * 2));
        }
    };
    match v {
        Json::Null => out.push_str("null"),
        Json::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        // Written in place: a listing writes a dozen numbers per object.
        Json::Int(i) => {
            let _ = match i64::try_from(*i) {
                Ok(small) => write!(out, "{small}"),
                Err(_) => write!(out, "{i}"),
            };
        }
        Json::Float(f) => super::num::float_into(*f, out),
        Json::Str(s) => escape(s, out),
        Json::Arr(items) if items.is_empty() => out.push_str("[]"),
        Json::Obj(items) if items.is_empty() => out.push_str("{}"),
        Json::Arr(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                newline(out, depth + 1);
                write(item, pretty, depth + 1, out);
            }
            newline(out, depth);
            out.push(']');
        }
        Json::Items(items) => {
            let mut n = 0usize;
            out.push('[');
            items.each(&mut |item| {
                if n > 0 {
                    out.push(',');
                }
                newline(out, depth + 1);
                write(item, pretty, depth + 1, out);
                n += 1;
            });
            if n > 0 {
                newline(out, depth);
            }
            out.push(']');
        }
        Json::Obj(items) => {
            let fields = items.iter().map(|(k, v)| (k.as_ref(), v));
            write_fields(fields, pretty, depth, out);
        }
    }
}

/// A non-empty object's text from its fields, as [`Json::Obj`] writes it.
fn write_fields<'a>(
    fields: impl Iterator<Item = (&'a str, &'a Json)>,
    pretty: bool,
    depth: usize,
    out: &mut String,
) {
    let newline = |out: &mut String, d: usize| {
        if pretty {
            out.push('\n');
            out.extend(std::iter::repeat_n(' ', d * 2));
        }
    };
    out.push('{');
    for (i, (k, item)) in fields.enumerate() {
        if i > 0 {
            out.push(',');
        }
        newline(out, depth + 1);
        escape(k, out);
        out.push_str(if pretty { ": " } else { ":" });
        write(item, pretty, depth + 1, out);
    }
    newline(out, depth);
    out.push('}');
}

/// A `{"kind": ..., "items": [...], "metadata": ...}` document written item
/// by item, byte for byte as [`to_string`] writes it from [`document`], so
/// that a listing never holds more than one item.
pub(crate) struct DocumentWriter<'w> {
    out: &'w mut dyn std::io::Write,
    kind: String,
    pretty: bool,
    items: usize,
    /// One item's text, reused from item to item.
    buf: String,
}

impl<'w> DocumentWriter<'w> {
    pub(crate) fn new(
        out: &'w mut dyn std::io::Write,
        kind: &str,
        pretty: bool,
    ) -> DocumentWriter<'w> {
        DocumentWriter {
            out,
            kind: kind.to_string(),
            pretty,
            items: 0,
            buf: String::new(),
        }
    }

    /// The head is written with the first item (or at the end), so that an
    /// error before any item leaves the output empty.
    fn head(&mut self) -> std::io::Result<()> {
        let mut s = String::new();
        if self.pretty {
            s.push_str("{\n  \"kind\": ");
            escape(&self.kind, &mut s);
            s.push_str(",\n  \"items\": [");
        } else {
            s.push_str("{\"kind\":");
            escape(&self.kind, &mut s);
            s.push_str(",\"items\":[");
        }
        self.out.write_all(s.as_bytes())
    }

    pub(crate) fn item(&mut self, v: &Json) -> std::io::Result<()> {
        self.item_with(|s, pretty| write(v, pretty, 2, s))
    }

    /// An object item from borrowed keys, written as [`DocumentWriter::item`]
    /// writes the same [`Json::Obj`], without making a string of each key
    /// (listings write a few dozen keys per object).
    pub(crate) fn item_fields(&mut self, fields: &[(&str, Json)]) -> std::io::Result<()> {
        if fields.is_empty() {
            return self.item(&Json::Obj(Vec::new()));
        }
        let fields = || fields.iter().map(|(k, v)| (*k, v));
        self.item_with(|s, pretty| write_fields(fields(), pretty, 2, s))
    }

    fn item_with(&mut self, body: impl FnOnce(&mut String, bool)) -> std::io::Result<()> {
        if self.items == 0 {
            self.head()?;
        }
        let s = &mut self.buf;
        s.clear();
        if self.items > 0 {
            s.push(',');
        }
        if self.pretty {
            s.push_str("\n    ");
        }
        body(s, self.pretty);
        self.items += 1;
        self.out.write_all(s.as_bytes())
    }

    /// Close the array and write the metadata.
    pub(crate) fn finish(mut self, metadata: &Json) -> std::io::Result<()> {
        if self.items == 0 {
            self.head()?;
        }
        let mut s = String::new();
        if self.pretty {
            if self.items > 0 {
                s.push_str("\n  ");
            }
            s.push_str("],\n  \"metadata\": ");
            write(metadata, true, 1, &mut s);
            s.push_str("\n}");
        } else {
            s.push_str("],\"metadata\":");
            write(metadata, false, 1, &mut s);
            s.push('}');
        }
        self.out.write_all(s.as_bytes())
    }
}

pub(crate) fn to_string(v: &Json, pretty: bool) -> String {
    let mut out = String::new();
    write(v, pretty, 0, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compact_and_pretty() {
        let d = document(
            "maps",
            vec![obj([("id", 1u32.into()), ("x", Json::Arr(vec![]))])],
            obj([]),
        );
        assert_eq!(
            to_string(&d, false),
            r#"{"kind":"maps","items":[{"id":1,"x":[]}],"metadata":{}}"#
        );
        assert_eq!(
            to_string(&d, true),
            "{\n  \"kind\": \"maps\",\n  \"items\": [\n    {\n      \"id\": 1,\n      \"x\": []\n    }\n  ],\n  \"metadata\": {}\n}"
        );
    }

    #[test]
    fn streamed_documents_match_whole_ones() {
        let items = [
            obj([("id", 1u32.into()), ("x", Json::Arr(vec![]))]),
            obj([("id", 2u32.into()), ("x", Json::Arr(vec![3u32.into()]))]),
        ];
        for n in 0..=items.len() {
            for pretty in [false, true] {
                let whole = to_string(&document("programs", items[..n].to_vec(), obj([])), pretty);
                let mut out = Vec::new();
                let mut w = DocumentWriter::new(&mut out, "programs", pretty);
                for i in &items[..n] {
                    w.item(i).unwrap();
                }
                w.finish(&obj([])).unwrap();
                assert_eq!(
                    String::from_utf8(out).unwrap(),
                    whole,
                    "{n} items, {pretty}"
                );
            }
        }
    }

    #[test]
    fn items_write_as_the_array_they_make() {
        for n in 0..3u32 {
            let items = Items::new(move |sink| (0..n).for_each(|i| sink(&obj([("i", i.into())]))));
            let made = obj([("x", Json::Items(items.clone())), ("y", Json::Null)]);
            let whole = obj([("x", Json::Arr(items.collect())), ("y", Json::Null)]);
            for pretty in [false, true] {
                assert_eq!(to_string(&made, pretty), to_string(&whole, pretty), "{n}");
            }
            assert_eq!(items.collect().len(), n as usize);
        }
    }

    #[test]
    fn set_str_reuses_a_string_and_becomes_null_or_text() {
        let mut j = Json::Null;
        j.set_str(Some("abc"));
        assert_eq!(j, Json::Str("abc".into()));
        j.set_str(Some("d"));
        assert_eq!(j, Json::Str("d".into()));
        j.set_str(None);
        assert_eq!(j, Json::Null);
        let mut n = Json::Int(7);
        n.set_str(Some("e"));
        assert_eq!(n, Json::Str("e".into()));
    }

    #[test]
    fn ascii_escaping() {
        let s = to_string(
            &Json::from("caf\u{e9} \u{2615} \u{1f600} \"q\"\\/\u{7f}\t"),
            false,
        );
        assert_eq!(s, r#""caf\u00e9 \u2615 \ud83d\ude00 \"q\"\\/\u007f\t""#);
    }

    #[test]
    fn numbers() {
        assert_eq!(
            to_string(&Json::from(u64::MAX), false),
            "18446744073709551615"
        );
        assert_eq!(to_string(&Json::from(-4i32), false), "-4");
        assert_eq!(to_string(&Json::from(1.0f64), false), "1.0");
        assert_eq!(to_string(&Json::from(None::<u32>), false), "null");
    }
}
