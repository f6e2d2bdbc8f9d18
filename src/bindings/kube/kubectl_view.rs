//! Objects as `k8s::list` returns them: as kubectl shows them, without
//! `metadata.managedFields` (hidden by kubectl since 1.21), read straight from the response
//! into script values. Skipping those fields while parsing, rather than after, keeps a list of
//! thousands of server-side-applied objects cheap.

use std::fmt;

use rhai::{Dynamic, Map};
use serde::de::{Deserialize, Deserializer, IgnoredAny, MapAccess, Visitor};

/// One object, managedFields left out.
pub(super) struct Shown(pub(super) Dynamic);

impl<'de> Deserialize<'de> for Shown {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer
            .deserialize_any(Object { metadata: false })
            .map(Shown)
    }
}

/// A Kubernetes object (`metadata: false`) or its metadata (`metadata: true`).
struct Object {
    metadata: bool,
}

struct Metadata(Dynamic);

impl<'de> Deserialize<'de> for Metadata {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer
            .deserialize_any(Object { metadata: true })
            .map(Metadata)
    }
}

impl<'de> Visitor<'de> for Object {
    type Value = Dynamic;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a Kubernetes object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Dynamic, A::Error> {
        let mut map = Map::new();
        while let Some(key) = access.next_key::<String>()? {
            if self.metadata && key == "managedFields" {
                access.next_value::<IgnoredAny>()?;
            } else if !self.metadata && key == "metadata" {
                map.insert(key.into(), access.next_value::<Metadata>()?.0);
            } else {
                map.insert(key.into(), access.next_value::<Dynamic>()?);
            }
        }
        Ok(Dynamic::from_map(map))
    }

    // Anything that is not an object (a malformed item) is kept as it came.
    fn visit_unit<E>(self) -> Result<Dynamic, E> {
        Ok(Dynamic::UNIT)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn managed_fields_are_left_out_and_the_rest_kept() {
        let text = r#"{"kind": "Pod", "metadata": {"name": "a", "managedFields": [{"manager": "runbook"}], "labels": {"x": "1"}}, "spec": {"managedFields": 1}}"#;
        let shown: Shown = serde_json::from_str(text).expect("parses");
        let object = shown.0.cast::<Map>();
        let metadata = object["metadata"].clone().cast::<Map>();
        assert!(!metadata.contains_key("managedFields"));
        assert_eq!(
            metadata["name"].clone().into_string().ok().as_deref(),
            Some("a")
        );
        assert!(metadata.contains_key("labels"));
        let spec = object["spec"].clone().cast::<Map>();
        assert!(
            spec.contains_key("managedFields"),
            "only metadata's are kubectl's to hide"
        );
    }
}
