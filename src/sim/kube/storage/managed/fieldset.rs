//! Sets of field paths as structured-merge-diff keeps them: a map's field (`f:name`), an item
//! of a list merged by key (`k:{"name":"app"}`), and the whole of any other list, as a leaf.
//! Read from an object, read and written as `fieldsV1`, printed as the API server prints a
//! conflict's path (`.spec.template.spec.containers[name="app"].image`).

use std::collections::BTreeSet;

use serde_json::{Map, Value};

use crate::sim::kube::storage::patch::merge_key;

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Element {
    Field(String),
    /// A list item, by its merge key and value (JSON text of the value).
    Key(String, String),
}

pub(crate) type Path = Vec<Element>;

/// The fields an object sets, leaves and list items: what a manager that wrote it owns.
/// Identity and bookkeeping (`apiVersion`, `kind`, the name, uid, resourceVersion,
/// managedFields and the like) and `status` are nobody's.
pub(crate) fn of_object(object: &Value) -> BTreeSet<Path> {
    let mut set = BTreeSet::new();
    let Value::Object(map) = object else {
        return set;
    };
    let mut path = Vec::new();
    let mut dotted = String::new();
    for (key, value) in map {
        match key.as_str() {
            "apiVersion" | "kind" | "status" => {}
            "metadata" => {
                for field in ["labels", "annotations", "finalizers", "ownerReferences"] {
                    if let Some(value) = value.get(field) {
                        path.push(Element::Field("metadata".into()));
                        dotted.push_str(".metadata");
                        descend(value, field, &mut path, &mut dotted, &mut set);
                        path.pop();
                        dotted.clear();
                    }
                }
            }
            _ => descend(value, key, &mut path, &mut dotted, &mut set),
        }
    }
    set
}

/// `walk` into the field `key` of the map at `path`, and back out.
fn descend(
    value: &Value,
    key: &str,
    path: &mut Path,
    dotted: &mut String,
    set: &mut BTreeSet<Path>,
) {
    let before = dotted.len();
    dotted.push('.');
    dotted.push_str(key);
    path.push(Element::Field(key.to_string()));
    walk(value, path, dotted, set);
    path.pop();
    dotted.truncate(before);
}

/// The leaves and list items under `value`, at `path` (`dotted`: the same path as strategic
/// merge names it, which says which lists merge by which key).
fn walk(value: &Value, path: &mut Path, dotted: &mut String, set: &mut BTreeSet<Path>) {
    match value {
        Value::Object(map) if !map.is_empty() => {
            for (key, child) in map {
                descend(child, key, path, dotted, set);
            }
        }
        Value::Array(items) => match merge_key(dotted) {
            Some(key) if items.iter().all(|i| !i[key].is_null()) => {
                for item in items {
                    path.push(Element::Key(key.to_string(), item[key].to_string()));
                    set.insert(path.clone());
                    if let Value::Object(fields) = item {
                        for (field, child) in fields {
                            descend(child, field, path, dotted, set);
                        }
                    }
                    path.pop();
                }
            }
            _ => {
                set.insert(path.clone());
            }
        },
        _ => {
            set.insert(path.clone());
        }
    }
}

/// Whether a list item is the one its merge key's value (as JSON text) names.
fn keyed(item: &Value, key: &str, value: &str) -> bool {
    item.get(key)
        .and_then(|v| serde_json::to_string(v).ok())
        .is_some_and(|text| text == value)
}

/// Whether `path` names a list item (owned by being there) rather than a value.
pub(crate) fn is_item(path: &[Element]) -> bool {
    matches!(path.last(), Some(Element::Key(..)))
}

/// The value at `path` in `object` (None when it is not there).
pub(crate) fn value_at<'a>(object: &'a Value, path: &[Element]) -> Option<&'a Value> {
    let mut at = object;
    for element in path {
        at = match element {
            Element::Field(name) => at.get(name)?,
            Element::Key(key, value) => {
                at.as_array()?.iter().find(|item| keyed(item, key, value))?
            }
        };
    }
    Some(at)
}

/// Removes the field or list item at `path` from `object`, if it is there.
pub(crate) fn remove_at(object: &mut Value, path: &[Element]) {
    let Some((last, parents)) = path.split_last() else {
        return;
    };
    let mut at = object;
    for element in parents {
        let next = match element {
            Element::Field(name) => at.get_mut(name),
            Element::Key(key, value) => at
                .as_array_mut()
                .and_then(|items| items.iter_mut().find(|item| keyed(item, key, value))),
        };
        match next {
            Some(next) => at = next,
            None => return,
        }
    }
    match last {
        Element::Field(name) => {
            if let Some(map) = at.as_object_mut() {
                map.remove(name);
            }
        }
        Element::Key(key, value) => {
            if let Some(items) = at.as_array_mut() {
                items.retain(|item| !keyed(item, key, value));
            }
        }
    }
}

/// A path as the API server prints it in a conflict: `.spec.replicas`,
/// `.spec.template.spec.containers[name="app"].image`.
pub(crate) fn printed(path: &[Element]) -> String {
    path.iter()
        .map(|element| match element {
            Element::Field(name) => format!(".{name}"),
            Element::Key(key, value) => format!("[{key}={value}]"),
        })
        .collect()
}

/// The set as `fieldsV1`: nested maps keyed `f:name` and `k:{"key":value}`, a list item owned
/// itself marked with `.`.
pub(crate) fn to_fields_v1(set: &BTreeSet<Path>) -> Value {
    let mut root = Map::new();
    for path in set {
        let mut at = &mut root;
        for element in path {
            let key = match element {
                Element::Field(name) => format!("f:{name}"),
                Element::Key(key, value) => format!("k:{{\"{key}\":{value}}}"),
            };
            at = at
                .entry(key)
                .or_insert_with(|| Value::Object(Map::new()))
                .as_object_mut()
                .expect("made as a map");
        }
        if matches!(path.last(), Some(Element::Key(..))) {
            at.insert(".".into(), Value::Object(Map::new()));
        }
    }
    Value::Object(root)
}

/// A `fieldsV1` read back into a set (what this twin wrote, or a client sent).
pub(crate) fn from_fields_v1(fields: &Value) -> BTreeSet<Path> {
    let mut set = BTreeSet::new();
    read_v1(fields, &mut Vec::new(), &mut set);
    set
}

fn read_v1(node: &Value, path: &mut Path, set: &mut BTreeSet<Path>) {
    let Some(map) = node.as_object() else {
        return;
    };
    if map.is_empty() && !path.is_empty() {
        set.insert(path.clone());
        return;
    }
    for (key, child) in map {
        let element = if key == "." {
            set.insert(path.clone());
            continue;
        } else if let Some(name) = key.strip_prefix("f:") {
            Element::Field(name.to_string())
        } else if let Some(text) = key.strip_prefix("k:") {
            let Ok(Value::Object(fields)) = serde_json::from_str::<Value>(text) else {
                continue;
            };
            let Some((k, v)) = fields.into_iter().next() else {
                continue;
            };
            Element::Key(k, v.to_string())
        } else {
            continue;
        };
        path.push(element);
        read_v1(child, path, set);
        path.pop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn deployment() -> Value {
        json!({
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web", "labels": {"app": "web"}},
            "spec": {"replicas": 2, "template": {"spec": {"containers": [
                {"name": "app", "image": "nginx:1", "args": ["-v"]}
            ]}}},
            "status": {"replicas": 2}
        })
    }

    #[test]
    fn an_objects_fields_round_trip_through_fields_v1() {
        let set = of_object(&deployment());
        let printed: Vec<String> = set.iter().map(|p| printed(p)).collect();
        assert!(
            printed.contains(&".spec.replicas".to_string()),
            "{printed:?}"
        );
        assert!(printed.contains(&".metadata.labels.app".to_string()));
        assert!(
            printed.contains(&".spec.template.spec.containers[name=\"app\"].image".to_string())
        );
        assert!(printed.contains(&".spec.template.spec.containers[name=\"app\"].args".to_string()));
        assert!(
            !printed
                .iter()
                .any(|p| p.starts_with(".status") || p == ".kind")
        );
        let v1 = to_fields_v1(&set);
        assert_eq!(
            v1["f:spec"]["f:template"]["f:spec"]["f:containers"]["k:{\"name\":\"app\"}"]["."],
            json!({})
        );
        assert_eq!(from_fields_v1(&v1), set);
    }

    #[test]
    fn values_are_found_and_removed_by_path() {
        let mut object = deployment();
        let image = vec![
            Element::Field("spec".into()),
            Element::Field("template".into()),
            Element::Field("spec".into()),
            Element::Field("containers".into()),
            Element::Key("name".into(), "\"app\"".into()),
            Element::Field("image".into()),
        ];
        assert_eq!(value_at(&object, &image), Some(&json!("nginx:1")));
        remove_at(&mut object, &image);
        assert_eq!(value_at(&object, &image), None);
        assert_eq!(
            object["spec"]["template"]["spec"]["containers"][0]["name"],
            "app"
        );
    }
}
