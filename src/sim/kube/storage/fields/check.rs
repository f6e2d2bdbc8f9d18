//! Walks a request body against its kind's shape: the unknown and duplicate fields, named by
//! their path as the API server names them (`spec.template.spec.containers[0].resourcez`).

use std::collections::HashSet;

use serde_json::Value;

use super::document::Doc;
use super::shapes::{Shape, Shapes};

/// One step of a path into an object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Step {
    Key(String),
    Index(usize),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Finding {
    Unknown(Vec<Step>),
    Duplicate(Vec<Step>),
}

impl Finding {
    /// `unknown field "spec.foo"` / `duplicate field "metadata.name"`: the API server's words.
    pub(crate) fn text(&self) -> String {
        match self {
            Finding::Unknown(path) => format!("unknown field \"{}\"", dotted(path)),
            Finding::Duplicate(path) => format!("duplicate field \"{}\"", dotted(path)),
        }
    }

    pub(crate) fn is_unknown(&self) -> bool {
        matches!(self, Finding::Unknown(_))
    }

    pub(crate) fn path(&self) -> &[Step] {
        match self {
            Finding::Unknown(path) | Finding::Duplicate(path) => path,
        }
    }
}

/// `spec.ports[0].name`.
pub(crate) fn dotted(path: &[Step]) -> String {
    let mut out = String::new();
    for step in path {
        match step {
            Step::Key(key) => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(key);
            }
            Step::Index(i) => out.push_str(&format!("[{i}]")),
        }
    }
    out
}

/// Where a custom resource's own fields end and Kubernetes' begin: its root and each embedded
/// resource also hold apiVersion, kind and metadata (read as ObjectMeta).
pub(crate) struct Roots {
    pub(crate) object_meta: Option<usize>,
}

/// The findings of `doc` against `shape`, in document order. A key both unknown and repeated
/// is reported once, as unknown (as the API server does for typed objects).
pub(crate) fn findings(doc: &Doc, shapes: &Shapes, shape: usize, roots: &Roots) -> Vec<Finding> {
    let mut out = Vec::new();
    walk(doc, shapes, shape, roots, true, &mut Vec::new(), &mut out);
    out
}

fn walk(
    doc: &Doc,
    shapes: &Shapes,
    shape: usize,
    roots: &Roots,
    top: bool,
    path: &mut Vec<Step>,
    out: &mut Vec<Finding>,
) {
    match (doc, &shapes.nodes[shape]) {
        (
            Doc::Object(entries),
            Shape::Object {
                properties,
                values,
                preserve_unknown,
                embedded,
            },
        ) => {
            let mut seen: HashSet<&str> = HashSet::new();
            for (key, value) in entries {
                let first = seen.insert(key.as_str());
                let kubernetes = top || *embedded;
                // A resource's metadata is ObjectMeta, whatever a CRD's schema says of it.
                let meta = (kubernetes && key == "metadata")
                    .then_some(roots.object_meta)
                    .flatten();
                let child = meta.or_else(|| properties.get(key).copied()).or(*values);
                let typemeta = kubernetes && matches!(key.as_str(), "apiVersion" | "kind");
                path.push(Step::Key(key.clone()));
                match child {
                    Some(child) => {
                        if !first {
                            out.push(Finding::Duplicate(path.clone()));
                        }
                        walk(value, shapes, child, roots, false, path, out);
                    }
                    None if typemeta => {
                        if !first {
                            out.push(Finding::Duplicate(path.clone()));
                        }
                    }
                    None if *preserve_unknown => {}
                    None => {
                        if first {
                            out.push(Finding::Unknown(path.clone()));
                        }
                    }
                }
                path.pop();
            }
        }
        (Doc::Array(items), Shape::Array(item)) => {
            for (i, value) in items.iter().enumerate() {
                path.push(Step::Index(i));
                walk(value, shapes, *item, roots, false, path, out);
                path.pop();
            }
        }
        _ => {}
    }
}

/// Every repeated key, wherever it is: a patch's and a custom resource's duplicates are
/// reported whether or not the schema knows the field.
pub(crate) fn duplicates(doc: &Doc) -> Vec<Finding> {
    fn walk(doc: &Doc, path: &mut Vec<Step>, out: &mut Vec<Finding>) {
        match doc {
            Doc::Object(entries) => {
                let mut seen: HashSet<&str> = HashSet::new();
                for (key, value) in entries {
                    path.push(Step::Key(key.clone()));
                    if !seen.insert(key.as_str()) {
                        out.push(Finding::Duplicate(path.clone()));
                    }
                    walk(value, path, out);
                    path.pop();
                }
            }
            Doc::Array(items) => {
                for (i, value) in items.iter().enumerate() {
                    path.push(Step::Index(i));
                    walk(value, path, out);
                    path.pop();
                }
            }
            Doc::Null | Doc::Scalar => {}
        }
    }
    let mut out = Vec::new();
    walk(doc, &mut Vec::new(), &mut out);
    out
}

fn parent_of<'a>(object: &'a mut Value, steps: &[Step]) -> Option<&'a mut Value> {
    steps.iter().try_fold(object, |at, step| match step {
        Step::Key(key) => at.get_mut(key.as_str()),
        Step::Index(i) => at.get_mut(*i),
    })
}

/// Removes the unknown fields from `object`, as the API server drops them when it does not
/// refuse them (a built-in type has nowhere to keep them; a CRD prunes them).
pub(crate) fn prune(object: &mut Value, findings: &[Finding]) {
    for finding in findings.iter().filter(|f| f.is_unknown()) {
        let path = finding.path();
        let Some((Step::Key(last), parents)) = path.split_last() else {
            continue;
        };
        if let Some(map) = parent_of(object, parents).and_then(Value::as_object_mut) {
            map.remove(last);
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::built_in::built_in;
    use super::super::document::Doc;
    use super::*;

    /// The body of Kubernetes' own field-validation test (test/integration/apiserver/
    /// field_validation_test.go, `invalidBodyJSON`) and the findings it expects, in order.
    #[test]
    fn a_deployment_reports_as_the_api_server_test_expects() {
        let body = br#"{
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "dupename", "name": "d", "labels": {"app": "nginx"}, "unknownMeta": "metaVal"},
            "spec": {
                "unknown1": "val1", "unknownDupe": "valDupe", "unknownDupe": "valDupe2",
                "paused": true, "paused": false,
                "selector": {"matchLabels": {"app": "nginx"}},
                "template": {"metadata": {"labels": {"app": "nginx"}}, "spec": {"containers": [{
                    "name": "nginx", "image": "nginx:latest", "unknownNested": "val1",
                    "imagePullPolicy": "Always", "imagePullPolicy": "Never"}]}}}}"#;
        let schemas = built_in();
        let doc = Doc::parse(body).expect("JSON");
        let roots = Roots {
            object_meta: Some(schemas.object_meta),
        };
        let shape = schemas.kinds[&("apps", "v1", "Deployment")];
        let found: Vec<String> = findings(&doc, &schemas.shapes, shape, &roots)
            .iter()
            .map(Finding::text)
            .collect();
        assert_eq!(
            found,
            [
                r#"duplicate field "metadata.name""#,
                r#"unknown field "metadata.unknownMeta""#,
                r#"unknown field "spec.unknown1""#,
                r#"unknown field "spec.unknownDupe""#,
                r#"duplicate field "spec.paused""#,
                r#"unknown field "spec.template.spec.containers[0].unknownNested""#,
                r#"duplicate field "spec.template.spec.containers[0].imagePullPolicy""#,
            ]
        );
    }

    #[test]
    fn pruning_removes_only_the_unknown_fields() {
        let mut object = json!({"spec": {"a": 1, "containers": [{"name": "c", "x": 2}]}});
        let findings = vec![
            Finding::Unknown(vec![Step::Key("spec".into()), Step::Key("a".into())]),
            Finding::Unknown(vec![
                Step::Key("spec".into()),
                Step::Key("containers".into()),
                Step::Index(0),
                Step::Key("x".into()),
            ]),
            Finding::Duplicate(vec![Step::Key("spec".into())]),
        ];
        prune(&mut object, &findings);
        assert_eq!(object, json!({"spec": {"containers": [{"name": "c"}]}}));
    }
}
