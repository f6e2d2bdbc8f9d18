//! What fields an object may have, compiled from a JSON schema into a small graph that a
//! body is walked against: the built-in kinds' schemas (k8s-openapi's, generated from the
//! Kubernetes 1.35 OpenAPI document) and a CRD version's `openAPIV3Schema`.

use std::collections::HashMap;

use serde_json::{Map, Value};

/// One node of the graph; children are indexes into [`Shapes::nodes`], so recursive schemas
/// (JSONSchemaProps holds JSONSchemaProps) compile to a cycle, not an endless tree.
#[derive(Debug, Clone)]
pub(crate) enum Shape {
    Object {
        properties: HashMap<String, usize>,
        /// The schema of a map's values (`additionalProperties`).
        values: Option<usize>,
        /// `x-kubernetes-preserve-unknown-fields`: keys the schema does not name are kept.
        preserve_unknown: bool,
        /// `x-kubernetes-embedded-resource`: apiVersion, kind and metadata are allowed too.
        embedded: bool,
    },
    Array(usize),
    /// A scalar, or an object of any fields (RawExtension, FieldsV1).
    Any,
}

#[derive(Debug, Default, Clone)]
pub(crate) struct Shapes {
    pub(crate) nodes: Vec<Shape>,
    by_name: HashMap<String, usize>,
}

/// How an object schema that names no properties reads: in a built-in type it holds anything
/// (`runtime.RawExtension` is `{"type": "object"}`); in a CRD's structural schema nothing
/// survives pruning unless the schema preserves unknown fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Dialect {
    BuiltIn,
    Structural,
}

impl Shapes {
    pub(crate) fn any(&mut self) -> usize {
        self.push(Shape::Any)
    }

    fn push(&mut self, shape: Shape) -> usize {
        self.nodes.push(shape);
        self.nodes.len() - 1
    }

    /// Compiles `schema`, resolving `$ref`s into `definitions`; the index of its node.
    pub(crate) fn compile(
        &mut self,
        schema: &Value,
        definitions: &Map<String, Value>,
        dialect: Dialect,
    ) -> usize {
        if let Some(reference) = schema["$ref"].as_str() {
            let name = reference
                .trim_start_matches("#/$defs/")
                .trim_start_matches("#/definitions/");
            if let Some(&at) = self.by_name.get(name) {
                return at;
            }
            let at = self.push(Shape::Any);
            self.by_name.insert(name.to_string(), at);
            if let Some(definition) = definitions.get(name) {
                let compiled = self.compile(definition, definitions, dialect);
                self.nodes[at] = self.nodes[compiled].clone();
            }
            return at;
        }
        if schema["x-kubernetes-int-or-string"] == true {
            return self.any();
        }
        let properties = schema["properties"].as_object();
        let is_object = schema["type"] == "object" || properties.is_some();
        if is_object {
            let preserve_unknown = schema["x-kubernetes-preserve-unknown-fields"] == true;
            let values = match &schema["additionalProperties"] {
                Value::Object(values) => {
                    Some(self.compile(&Value::Object(values.clone()), definitions, dialect))
                }
                Value::Bool(true) => Some(self.any()),
                _ => None,
            };
            let named: HashMap<String, usize> = properties
                .into_iter()
                .flatten()
                .map(|(name, property)| {
                    (name.clone(), self.compile(property, definitions, dialect))
                })
                .collect();
            if named.is_empty() && values.is_none() && dialect == Dialect::BuiltIn {
                return self.any();
            }
            return self.push(Shape::Object {
                properties: named,
                values,
                preserve_unknown,
                embedded: schema["x-kubernetes-embedded-resource"] == true,
            });
        }
        if schema["type"] == "array" {
            let item = match schema.get("items") {
                Some(items) => self.compile(items, definitions, dialect),
                None => self.any(),
            };
            return self.push(Shape::Array(item));
        }
        self.any()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_recursive_definition_compiles_to_a_cycle() {
        let definitions = json!({
            "Props": {"type": "object", "properties": {"items": {"$ref": "#/$defs/Props"}}}
        });
        let mut shapes = Shapes::default();
        let root = shapes.compile(
            &json!({"$ref": "#/$defs/Props"}),
            definitions.as_object().expect("an object"),
            Dialect::BuiltIn,
        );
        let Shape::Object { properties, .. } = &shapes.nodes[root] else {
            panic!("an object")
        };
        let Shape::Object {
            properties: inner, ..
        } = &shapes.nodes[properties["items"]]
        else {
            panic!("an object")
        };
        assert!(inner.contains_key("items"));
    }

    #[test]
    fn an_object_without_properties_holds_anything_only_in_a_built_in_type() {
        let schema = json!({"type": "object"});
        let mut shapes = Shapes::default();
        let built_in = shapes.compile(&schema, &Map::new(), Dialect::BuiltIn);
        let structural = shapes.compile(&schema, &Map::new(), Dialect::Structural);
        assert!(matches!(shapes.nodes[built_in], Shape::Any));
        assert!(matches!(shapes.nodes[structural], Shape::Object { .. }));
    }
}
