//! A JSON body as it was sent: every object's keys in their order, duplicates kept. The API
//! server reports unknown and duplicate fields in the order they appear, which a parsed
//! `serde_json::Value` (sorted keys, last duplicate wins) no longer knows.

use std::fmt;

use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Doc {
    Object(Vec<(String, Doc)>),
    Array(Vec<Doc>),
    Null,
    /// A string, number or boolean: what it holds does not matter to field validation.
    Scalar,
}

impl Doc {
    /// The body's document, when it is JSON (a YAML body has no duplicates to report here).
    pub(crate) fn parse(bytes: &[u8]) -> Option<Self> {
        serde_json::from_slice(bytes).ok()
    }

    /// A document of a value: keys in the value's (sorted) order, no duplicates. Patched
    /// objects are walked this way, as the API server walks its re-encoded patch result.
    pub(crate) fn of(value: &Value) -> Self {
        match value {
            Value::Object(map) => {
                Doc::Object(map.iter().map(|(k, v)| (k.clone(), Doc::of(v))).collect())
            }
            Value::Array(items) => Doc::Array(items.iter().map(Doc::of).collect()),
            Value::Null => Doc::Null,
            _ => Doc::Scalar,
        }
    }
}

struct DocVisitor;

impl<'de> Visitor<'de> for DocVisitor {
    type Value = Doc;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<Doc, E> {
        Ok(Doc::Scalar)
    }

    fn visit_i64<E>(self, _: i64) -> Result<Doc, E> {
        Ok(Doc::Scalar)
    }

    fn visit_u64<E>(self, _: u64) -> Result<Doc, E> {
        Ok(Doc::Scalar)
    }

    fn visit_f64<E>(self, _: f64) -> Result<Doc, E> {
        Ok(Doc::Scalar)
    }

    fn visit_str<E>(self, _: &str) -> Result<Doc, E> {
        Ok(Doc::Scalar)
    }

    fn visit_unit<E>(self) -> Result<Doc, E> {
        Ok(Doc::Null)
    }

    fn visit_none<E>(self) -> Result<Doc, E> {
        Ok(Doc::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Doc, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Doc::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Doc, A::Error> {
        let mut entries = Vec::new();
        while let Some((key, value)) = map.next_entry::<String, Doc>()? {
            entries.push((key, value));
        }
        Ok(Doc::Object(entries))
    }
}

impl<'de> Deserialize<'de> for Doc {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(DocVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_key_order_and_duplicates() {
        let doc = Doc::parse(br#"{"b": 1, "a": {"x": null}, "b": [true]}"#).expect("JSON");
        let Doc::Object(entries) = doc else {
            panic!("an object")
        };
        let keys: Vec<&str> = entries.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(keys, ["b", "a", "b"]);
        assert_eq!(entries[2].1, Doc::Array(vec![Doc::Scalar]));
    }
}
