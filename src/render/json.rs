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
    /// An array of objects made one by one as it is written.
    Items(Items),
}

/// An array whose items are made one at a time while it is written, from
/// data the document shares instead of copying: a profile lists thousands
/// of sampled instructions, and a tree of them all would be made only to
/// be written once.
#[derive(Clone)]
pub(crate) struct Items(Arc<Each>);

/// What hands every item of an [`Items`] to a sink, in order.
type Each = dyn Fn(&mut dyn Sink) + Send + Sync;

/// Where an [`Items`] maker puts its items, objects: a document's text,
/// or values.
pub(crate) trait Sink {
    /// The next item, an object whose fields `fill` hands over one by one
    /// (written as they come: no value is made of them).
    fn object(&mut self, fill: &mut dyn FnMut(&mut Fields<'_>));
}

impl Items {
    /// `each` hands every item to the sink it is given, in order.
    pub(crate) fn new(each: impl Fn(&mut dyn Sink) + Send + Sync + 'static) -> Items {
        Items(Arc::new(each))
    }

    pub(crate) fn each(&self, sink: &mut dyn Sink) {
        (self.0)(sink);
    }

    pub(crate) fn collect(&self) -> Vec<Json> {
        let mut v: Vec<Json> = Vec::new();
        self.each(&mut v);
        v
    }
}

impl Sink for Vec<Json> {
    fn object(&mut self, fill: &mut dyn FnMut(&mut Fields<'_>)) {
        let mut f = Fields {
            to: FieldsTo::Value(Vec::new()),
            n: 0,
        };
        fill(&mut f);
        if let FieldsTo::Value(v) = f.to {
            self.push(Json::Obj(v));
        }
    }
}

/// One object's fields, as its maker hands them to a [`Sink`]: written
/// straight into the text (byte for byte as the [`Json::Obj`] of the same
/// fields), or gathered into that object.
pub(crate) struct Fields<'a> {
    to: FieldsTo<'a>,
    /// Fields so far.
    n: usize,
}

enum FieldsTo<'a> {
    Text {
        out: &'a mut String,
        pretty: bool,
        depth: usize,
    },
    Value(Vec<(Cow<'static, str>, Json)>),
}

impl Fields<'_> {
    /// Write the field's key; the text to write its value into, or None
    /// when the fields are gathered.
    fn key(&mut self, key: &'static str) -> Option<&mut String> {
        self.n += 1;
        let FieldsTo::Text { out, pretty, depth } = &mut self.to else {
            return None;
        };
        out.push(if self.n == 1 { '{' } else { ',' });
        if *pretty {
            line_break(out, *depth + 1);
        }
        // Keys are literals that need no escape: written as they are.
        debug_assert_eq!(plain_prefix(key), key.len(), "{key}");
        out.push('"');
        out.push_str(key);
        out.push_str(if *pretty { "\": " } else { "\":" });
        Some(out)
    }

    fn gather(&mut self, key: &'static str, v: Json) {
        if let FieldsTo::Value(fields) = &mut self.to {
            fields.push((Cow::Borrowed(key), v));
        }
    }

    /// A string field (null for None).
    pub(crate) fn str(&mut self, key: &'static str, v: Option<&str>) {
        match (self.key(key), v) {
            (Some(out), Some(s)) => escape(s, out),
            (Some(out), None) => out.push_str("null"),
            (None, v) => self.gather(key, v.into()),
        }
    }

    /// An integer field (null for None).
    pub(crate) fn uint(&mut self, key: &'static str, v: Option<u64>) {
        match (self.key(key), v) {
            (Some(out), Some(i)) => out.push_str(itoa::Buffer::new().format(i)),
            (Some(out), None) => out.push_str("null"),
            (None, v) => self.gather(key, v.into()),
        }
    }

    /// A number field, as [`Json::Float`] writes it.
    pub(crate) fn float(&mut self, key: &'static str, v: f64) {
        match self.key(key) {
            Some(out) => super::num::float_into(v, out),
            None => self.gather(key, v.into()),
        }
    }

    /// Close the object's text.
    fn finish(self) {
        if let FieldsTo::Text { out, pretty, depth } = self.to {
            if self.n == 0 {
                out.push_str("{}");
                return;
            }
            if pretty {
                line_break(out, depth);
            }
            out.push('}');
        }
    }
}

/// Items written into a document's text at `depth`.
struct TextSink<'a> {
    out: &'a mut String,
    pretty: bool,
    depth: usize,
    n: usize,
}

impl TextSink<'_> {
    /// The separator and indent before the next item.
    fn next(&mut self) {
        if self.n > 0 {
            self.out.push(',');
        }
        if self.pretty {
            line_break(self.out, self.depth + 1);
        }
        self.n += 1;
    }
}

impl Sink for TextSink<'_> {
    fn object(&mut self, fill: &mut dyn FnMut(&mut Fields<'_>)) {
        self.next();
        let mut f = Fields {
            to: FieldsTo::Text {
                out: self.out,
                pretty: self.pretty,
                depth: self.depth + 1,
            },
            n: 0,
        };
        fill(&mut f);
        f.finish();
    }
}

/// A line break and `depth` levels of indent (pretty form only).
fn line_break(out: &mut String, depth: usize) {
    out.push('\n');
    out.extend(std::iter::repeat_n(' ', depth * 2));
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
    let (head, rest) = s.split_at(plain_prefix(s));
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

/// The length of the longest prefix of `s` that is written as it is:
/// printable ASCII other than `"` and `\\`. Eight bytes a step while they
/// all are (reports write hundreds of kilobytes of such text).
fn plain_prefix(s: &str) -> usize {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    // A byte of `x` below `n` (n <= 128) sets that byte's high bit.
    let below = |x: u64, n: u8| x.wrapping_sub(ONES * u64::from(n)) & !x & HIGH;
    let equal = |x: u64, b: u8| below(x ^ (ONES * u64::from(b)), 1);
    let bytes = s.as_bytes();
    let mut plain = 0;
    for chunk in bytes.chunks_exact(8) {
        let Ok(word) = <[u8; 8]>::try_from(chunk) else {
            break;
        };
        let w = u64::from_le_bytes(word);
        // Control bytes, `"`, `\\`, DEL, and non-ASCII (high bit set).
        let special =
            below(w, b' ') | equal(w, b'"') | equal(w, b'\\') | equal(w, 0x7f) | (w & HIGH);
        if special != 0 {
            break;
        }
        plain += 8;
    }
    plain
        + bytes[plain..]
            .iter()
            .position(|&b| escaped(b))
            .unwrap_or(bytes.len() - plain)
}

/// Whether byte `b` is not written as it is: it is not printable ASCII, or
/// it is `"` or `\\`.
fn escaped(b: u8) -> bool {
    !(b' '..=b'~').contains(&b) || b == b'"' || b == b'\\'
}

fn write(v: &Json, pretty: bool, depth: usize, out: &mut String) {
    let newline = |out: &mut String, d: usize| {
        if pretty {
            line_break(out, d);
        }
    };
    match v {
        Json::Null => out.push_str("null"),
        Json::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        // Written in place: a listing writes a dozen numbers per object.
        Json::Int(i) => match i64::try_from(*i) {
            Ok(small) => out.push_str(itoa::Buffer::new().format(small)),
            Err(_) => {
                let _ = write!(out, "{i}");
            }
        },
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
            out.push('[');
            let mut sink = TextSink {
                out,
                pretty,
                depth,
                n: 0,
            };
            items.each(&mut sink);
            if sink.n > 0 && pretty {
                line_break(out, depth);
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
            line_break(out, d);
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
    to_string_sized(v, pretty, 0)
}

/// [`to_string`] into a string of `capacity` bytes at first: a document
/// of hundreds of kilobytes is then not copied as it grows.
pub(crate) fn to_string_sized(v: &Json, pretty: bool, capacity: usize) -> String {
    let mut out = String::with_capacity(capacity);
    write(v, pretty, 0, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_prefix_stops_at_the_first_byte_to_escape() {
        // The byte-by-byte rule the word-at-a-time scan must agree with.
        let slow = |s: &str| s.bytes().position(escaped).unwrap_or(s.len());
        let specials = [
            '"',
            '\\',
            '\n',
            '\u{0}',
            '\u{1f}',
            '\u{7f}',
            '\u{80}',
            '\u{e9}',
            '\u{10ffff}',
        ];
        for len in 0..20 {
            let base = "abcdefghijklmnopqrstuvwxyz ~!#".get(..len).unwrap_or("");
            assert_eq!(plain_prefix(base), len);
            for at in 0..=len {
                for c in specials {
                    let mut s = String::from(base.get(..at).unwrap_or(""));
                    s.push(c);
                    s.push_str(base.get(at..).unwrap_or(""));
                    assert_eq!(plain_prefix(&s), slow(&s), "{s:?}");
                    assert_eq!(plain_prefix(&s), at, "{s:?}");
                }
            }
        }
        // Every byte value below 0x80 at every place in a word and after it.
        for b in 0u8..0x80 {
            for at in 0..17 {
                let mut v = vec![b'x'; 17];
                v[at] = b;
                let s = String::from_utf8(v).unwrap();
                assert_eq!(plain_prefix(&s), slow(&s), "{b:#x} at {at}");
            }
        }
    }

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
        for n in 0..4u32 {
            let items = Items::new(move |sink| {
                for i in 0..n {
                    if i % 2 == 0 {
                        sink.object(&mut |f| f.uint("i", Some(u64::from(i))));
                    } else {
                        // An object handed over field by field, with the
                        // values that need care: escapes, nulls, floats.
                        sink.object(&mut |f| {
                            f.str("s", Some("a\"b\\\n\u{e9}"));
                            f.str("none", None);
                            f.uint("u", Some(u64::MAX));
                            f.uint("missing", None);
                            f.float("pct", 12.5);
                            f.float("tiny", 1e-9);
                        });
                    }
                }
                if n == 3 {
                    sink.object(&mut |_| {});
                }
            });
            let made = obj([("x", Json::Items(items.clone())), ("y", Json::Null)]);
            let whole = obj([("x", Json::Arr(items.collect())), ("y", Json::Null)]);
            for pretty in [false, true] {
                assert_eq!(to_string(&made, pretty), to_string(&whole, pretty), "{n}");
            }
            assert_eq!(items.collect().len(), n as usize + usize::from(n == 3));
        }
        let one = Items::new(|sink| {
            sink.object(&mut |f| {
                f.str("s", Some("\t"));
                f.uint("u", Some(3));
                f.float("p", 0.5);
            })
        });
        assert_eq!(
            to_string(&Json::Items(one), false),
            r#"[{"s":"\t","u":3,"p":0.5}]"#
        );
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
