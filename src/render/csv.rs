//! Minimal CSV: quote only fields containing `,`, `"` or a newline.
//! (A few lines do not justify a dependency.)

use super::json::Json;

pub(crate) fn field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// Header plus records, `\n`-terminated lines joined; no trailing newline.
pub(crate) fn render(headers: &[&str], rows: &[Vec<String>]) -> String {
    let mut out = headers.join(",");
    for row in rows {
        out.push('\n');
        let cells: Vec<String> = row.iter().map(|c| field(c)).collect();
        out.push_str(&cells.join(","));
    }
    out
}

/// A JSON value as a CSV cell: null empty, lists joined with `;`, floats
/// in the JSON text form, strings raw (non-ASCII stays UTF-8).
pub(crate) fn cell(v: &Json) -> String {
    match v {
        Json::Null => String::new(),
        Json::Bool(b) => b.to_string(),
        Json::Int(i) => i.to_string(),
        Json::Float(f) => super::num::float(*f),
        Json::Str(s) => s.clone(),
        Json::Arr(items) => items.iter().map(cell).collect::<Vec<_>>().join(";"),
        Json::Items(items) => cell(&Json::Arr(items.collect())),
        Json::Obj(_) => super::json::to_string(v, false),
    }
}

/// The keys of an item's fields, in order: the CSV header of the rows
/// made from such items.
pub(crate) fn keys(fields: &[(&'static str, Json)]) -> Vec<&'static str> {
    fields.iter().map(|(k, _)| *k).collect()
}

/// CSV of records given as named fields: the header is the names of
/// `sample`'s fields (a record made from placeholder values, so that a
/// table without records keeps its header), each record the cells of its
/// fields' values.
pub(crate) fn from_fields(
    sample: &[(&'static str, Json)],
    records: impl Iterator<Item = Vec<(&'static str, Json)>>,
) -> String {
    let header = keys(sample);
    let rows: Vec<Vec<String>> = records
        .map(|fields| {
            debug_assert!(fields.iter().map(|(k, _)| k).eq(header.iter()));
            fields.iter().map(|(_, v)| cell(v)).collect()
        })
        .collect();
    render(&header, &rows)
}

/// CSV of JSON objects: the `keys` header, then each object's values under
/// those keys (a missing key is an empty cell).
pub(crate) fn from_items(keys: &[&str], items: &[Json]) -> String {
    let rows: Vec<Vec<String>> = items
        .iter()
        .map(|item| {
            keys.iter()
                .map(|k| match item {
                    Json::Obj(fields) => fields
                        .iter()
                        .find(|(name, _)| name == k)
                        .map(|(_, v)| cell(v))
                        .unwrap_or_default(),
                    _ => String::new(),
                })
                .collect()
        })
        .collect();
    render(keys, &rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn minimal_quoting() {
        assert_eq!(field("    __u32 key = 0;"), "    __u32 key = 0;");
        assert_eq!(field("a,b"), "\"a,b\"");
        assert_eq!(field("say \"q\""), "\"say \"\"q\"\"\"");
        assert_eq!(field("x\ny"), "\"x\ny\"");
        assert_eq!(field("caf\u{e9}\r"), "caf\u{e9}\r");
        assert_eq!(
            render(&["a", "b"], &[vec!["1".into(), "".into()]]),
            "a,b\n1,"
        );
    }
}
