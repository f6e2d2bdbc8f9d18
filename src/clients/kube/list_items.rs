//! The items of a big list response, parsed on two cores: a scan of the first half of the
//! top-level `items` array finds where its items lie and where the second half starts, then
//! each half is parsed on its own thread. Parsing into script values is most of the time a
//! 5,000-pod list takes.

use std::ops::Range;

use bytes::Bytes;
use serde::de::{DeserializeOwned, Error as _};

/// Below this many items one thread parses them all: splitting costs more than it saves.
const PARALLEL_FROM: usize = 256;

/// Parses the `items` of a list response (`{"kind": "PodList", ..., "items": [...]}`).
pub(super) fn parse_items<T>(body: Bytes) -> Result<Vec<T>, serde_json::Error>
where
    T: DeserializeOwned + Send + 'static,
{
    let split = scan_items(&body, body.len() / 2)
        .filter(|(first, rest)| rest.is_some() && first.len() >= PARALLEL_FROM / 2)
        // The halves are checked item by item; this is the rest of the object's ending.
        .filter(|_| body.trim_ascii_end().ends_with(b"}"));
    let Some((first, Some(rest_at))) = split else {
        return whole::<T>(&body);
    };
    let other = body.clone();
    let helper = std::thread::Builder::new()
        .name("runbook-parse".into())
        .spawn(move || parse_from::<T>(&other, rest_at));
    let mut items = parse_ranges::<T>(&body, &first)?;
    let rest = match helper {
        Ok(handle) => handle
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic))?,
        // No thread to be had: this one parses the rest too.
        Err(_) => parse_from::<T>(&body, rest_at)?,
    };
    items.extend(rest);
    Ok(items)
}

fn whole<T: DeserializeOwned>(body: &[u8]) -> Result<Vec<T>, serde_json::Error> {
    #[derive(serde::Deserialize)]
    struct Page<T> {
        #[serde(default = "Vec::new")]
        items: Vec<T>,
    }
    serde_json::from_slice::<Page<T>>(body).map(|page| page.items)
}

fn parse_ranges<T: DeserializeOwned>(
    body: &[u8],
    ranges: &[Range<usize>],
) -> Result<Vec<T>, serde_json::Error> {
    ranges
        .iter()
        .map(|r| serde_json::from_slice(&body[r.clone()]))
        .collect()
}

/// The array's items from `at` (the start of one) to its closing `]`, each read where the
/// one before it ended.
fn parse_from<T: DeserializeOwned>(
    body: &[u8],
    mut at: usize,
) -> Result<Vec<T>, serde_json::Error> {
    let mut items = Vec::new();
    loop {
        let mut stream = serde_json::Deserializer::from_slice(&body[at..]).into_iter::<T>();
        match stream.next() {
            Some(item) => items.push(item?),
            None => return Err(serde_json::Error::custom("the items array ends early")),
        }
        at += stream.byte_offset();
        while body.get(at).is_some_and(u8::is_ascii_whitespace) {
            at += 1;
        }
        match body.get(at) {
            Some(b',') => at += 1,
            Some(b']') => return Ok(items),
            _ => {
                return Err(serde_json::Error::custom(format!(
                    "expected `,` or `]` after an item at byte {at}"
                )));
            }
        }
    }
}

/// Where the elements of the top-level object's `items` array lie, up to the first one that
/// starts at or after `stop_at`, whose start comes second (`None`: the array ended before).
/// `None` when the text is not an object with such an array (the whole parse then reports
/// what is wrong).
fn scan_items(body: &[u8], stop_at: usize) -> Option<(Vec<Range<usize>>, Option<usize>)> {
    let mut scan = Scanner { body, at: 0 };
    scan.expect(b'{')?;
    loop {
        scan.skip_space();
        if scan.peek()? == b'}' {
            return None;
        }
        let key = scan.string()?;
        scan.expect(b':')?;
        scan.skip_space();
        if key == b"items" && scan.peek()? == b'[' {
            return scan.elements(stop_at);
        }
        scan.value()?;
        scan.skip_space();
        match scan.next()? {
            b',' => continue,
            _ => return None,
        }
    }
}

struct Scanner<'a> {
    body: &'a [u8],
    at: usize,
}

impl<'a> Scanner<'a> {
    fn peek(&self) -> Option<u8> {
        self.body.get(self.at).copied()
    }

    fn next(&mut self) -> Option<u8> {
        let byte = self.peek()?;
        self.at += 1;
        Some(byte)
    }

    fn skip_space(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\n' | b'\r' | b'\t')) {
            self.at += 1;
        }
    }

    fn expect(&mut self, byte: u8) -> Option<()> {
        self.skip_space();
        (self.next()? == byte).then_some(())
    }

    /// A string's raw bytes, escapes left as they are (keys compared here have none).
    fn string(&mut self) -> Option<&'a [u8]> {
        let body = self.body;
        if self.next()? != b'"' {
            return None;
        }
        let start = self.at;
        loop {
            let offset = memchr::memchr2(b'"', b'\\', &self.body[self.at..])?;
            self.at += offset;
            if self.body[self.at] == b'\\' {
                self.at += 2;
            } else {
                self.at += 1;
                return Some(&body[start..self.at - 1]);
            }
        }
    }

    /// Skips one value of any kind; only the nesting and the strings matter here, the item
    /// parse checks everything else.
    fn value(&mut self) -> Option<()> {
        match self.peek()? {
            b'"' => {
                self.string()?;
            }
            b'{' | b'[' => self.container()?,
            _ => {
                while !matches!(
                    self.peek(),
                    None | Some(b',' | b'}' | b']' | b' ' | b'\n' | b'\r' | b'\t')
                ) {
                    self.at += 1;
                }
            }
        }
        Some(())
    }

    fn container(&mut self) -> Option<()> {
        let mut depth = 0usize;
        loop {
            match self.peek()? {
                b'"' => {
                    self.string()?;
                    continue;
                }
                b'{' | b'[' => depth += 1,
                b'}' | b']' => {
                    depth -= 1;
                    if depth == 0 {
                        self.at += 1;
                        return Some(());
                    }
                }
                _ => {}
            }
            self.at += 1;
        }
    }

    /// The ranges of the elements of the array that starts here, up to `stop_at`.
    fn elements(&mut self, stop_at: usize) -> Option<(Vec<Range<usize>>, Option<usize>)> {
        self.expect(b'[')?;
        let mut ranges = Vec::new();
        self.skip_space();
        if self.peek()? == b']' {
            return Some((ranges, None));
        }
        loop {
            self.skip_space();
            let start = self.at;
            if start >= stop_at {
                return Some((ranges, Some(start)));
            }
            self.value()?;
            ranges.push(start..self.at);
            self.skip_space();
            match self.next()? {
                b',' => continue,
                b']' => return Some((ranges, None)),
                _ => return None,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn texts(body: &str) -> Option<Vec<String>> {
        scan_items(body.as_bytes(), usize::MAX)
            .map(|(rs, _)| rs.into_iter().map(|r| body[r].to_string()).collect())
    }

    #[test]
    fn finds_each_item_whatever_it_holds() {
        let body = r#"{"kind":"PodList","metadata":{"resourceVersion":"7","x":[1,{"items":[9]}]},
            "items": [ {"a":"}\"]","b":[{"c":1},{"d":[]}]} , 12, "s,]" ,true,null,{},[] ,-1.5e3 ],"z":1}"#;
        let items = texts(body).expect("an items array");
        assert_eq!(
            items,
            [
                r#"{"a":"}\"]","b":[{"c":1},{"d":[]}]}"#,
                "12",
                r#""s,]""#,
                "true",
                "null",
                "{}",
                "[]",
                "-1.5e3"
            ]
        );
    }

    #[test]
    fn an_empty_or_missing_items_array() {
        assert_eq!(texts(r#"{"items":[]}"#), Some(vec![]));
        assert_eq!(texts(r#"{"kind":"PodList","metadata":{}}"#), None);
        assert_eq!(texts(r#"{"items":null}"#), None);
        assert_eq!(texts("[1,2]"), None);
    }

    #[test]
    fn truncated_or_garbled_text_is_not_split() {
        for body in [
            r#"{"items":[{"a":1},{"b":"#,
            r#"{"items":[{"a":1}}"#,
            r#"{"items":[{"a":"unterminated}]}"#,
            r#"{"kind" "PodList","items":[]}"#,
            "",
        ] {
            assert_eq!(texts(body), None, "{body}");
        }
    }

    #[test]
    fn parses_big_lists_on_two_threads_in_order() {
        let items: Vec<Value> = (0..1000)
            .map(|i| json!({"metadata": {"name": format!("p-{i}")}, "spec": {"n": i}}))
            .collect();
        let body = serde_json::to_vec(&json!({"kind": "PodList", "items": items})).unwrap();
        let parsed: Vec<Value> = parse_items(Bytes::from(body)).expect("parses");
        assert_eq!(parsed, items);
    }

    #[test]
    fn the_scan_stops_at_the_first_item_past_the_middle() {
        let body = r#"{"items": [{"a":1}, {"b":2},  {"c":3}]}"#;
        let (first, rest) = scan_items(body.as_bytes(), 15).expect("an items array");
        assert_eq!(first.len(), 1);
        assert_eq!(
            &body[rest.expect("a second half")..],
            r#"{"b":2},  {"c":3}]}"#
        );
        let second: Vec<Value> = parse_from(body.as_bytes(), rest.unwrap()).expect("parses");
        assert_eq!(second, [json!({"b": 2}), json!({"c": 3})]);
    }

    #[test]
    fn pretty_printed_lists_split_too() {
        let items: Vec<Value> = (0..600).map(|i| json!({"n": i, "s": [i, "]"]})).collect();
        let body = serde_json::to_vec_pretty(&json!({"items": items, "kind": "List"})).unwrap();
        let (first, rest) = scan_items(&body, body.len() / 2).expect("an items array");
        assert!(first.len() > 200 && rest.is_some());
        assert_eq!(
            parse_items::<Value>(Bytes::from(body)).expect("parses"),
            items
        );
    }

    #[test]
    fn a_broken_item_in_either_half_is_an_error_not_a_panic() {
        for broken in [100, 450, 599] {
            let mut items: Vec<String> = (0..600).map(|i| format!(r#"{{"n":{i}}}"#)).collect();
            items[broken] = r#"{"n":1e999999}"#.into();
            let body = format!(r#"{{"items":[{}]}}"#, items.join(","));
            assert!(
                parse_items::<Value>(Bytes::from(body)).is_err(),
                "item {broken}"
            );
        }
        let items: Vec<String> = (0..600).map(|i| format!(r#"{{"n":{i}}}"#)).collect();
        for tail in [",]}", "", " {\"n\":1}]}", "]", "]}"] {
            let body = format!(r#"{{"items":[{}{tail}"#, items.join(","));
            let parsed = parse_items::<Value>(Bytes::from(body));
            assert_eq!(parsed.is_ok(), tail == "]}", "tail {tail:?}");
        }
    }
}
