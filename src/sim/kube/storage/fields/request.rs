//! Field validation of one request, as the API server answers it: a create or update body,
//! a patch and what it makes, a server-side apply. Strict refuses with the server's message;
//! Warn and Ignore drop the unknown fields (Warn says which in `Warning` headers).

use std::borrow::Cow;

use serde_json::Value;

use super::built_in::built_in;
use super::check::{Finding, Roots, Step, duplicates, findings, prune};
use super::directive::Directive;
use super::document::Doc;
use super::shapes::{Dialect, Shapes};
use crate::sim::kube::storage::resources::{ResourceType, is_built_in};
use crate::sim::kube::storage::state::KubeState;
use crate::sim::kube::storage::status::ApiError;

/// The shape a kind's objects are walked against.
struct Target<'a> {
    shapes: Cow<'a, Shapes>,
    root: usize,
    roots: Roots,
    /// A built-in kind reports in document order, a key both unknown and repeated once; a
    /// custom resource reports every duplicate first, then the unknown fields.
    typed: bool,
}

fn target<'a>(state: &KubeState, resource: &ResourceType) -> Option<Target<'a>> {
    let schemas = built_in();
    if is_built_in(resource) {
        let root = *schemas.kinds.get(&(
            resource.group.as_str(),
            resource.version.as_str(),
            resource.kind.as_str(),
        ))?;
        return Some(Target {
            shapes: Cow::Borrowed(&schemas.shapes),
            root,
            roots: Roots {
                object_meta: Some(schemas.object_meta),
            },
            typed: true,
        });
    }
    let schema = state.crd_schema(resource)?;
    let mut shapes = Shapes::default();
    let (meta_schema, meta_definitions) = &schemas.object_meta_schema;
    let object_meta = shapes.compile(meta_schema, meta_definitions, Dialect::BuiltIn);
    let root = shapes.compile(schema, &serde_json::Map::new(), Dialect::Structural);
    Some(Target {
        shapes: Cow::Owned(shapes),
        root,
        roots: Roots {
            object_meta: Some(object_meta),
        },
        typed: false,
    })
}

fn texts(found: &[Finding]) -> Vec<String> {
    found.iter().map(Finding::text).collect()
}

fn decided(
    found: Vec<Finding>,
    object: &mut Value,
    directive: Directive,
    refuse: impl FnOnce(String) -> ApiError,
) -> Result<Vec<String>, ApiError> {
    if found.is_empty() {
        return Ok(Vec::new());
    }
    if directive == Directive::Strict {
        return Err(refuse(format!(
            "strict decoding error: {}",
            texts(&found).join(", ")
        )));
    }
    prune(object, &found);
    Ok(if directive == Directive::Warn {
        texts(&found)
    } else {
        Vec::new()
    })
}

/// A create's or update's body (`bytes` as sent, `body` as parsed): the warnings to send, or
/// the 400 a strict request gets. Unknown fields leave `body` unless refused.
pub(crate) fn check_write(
    state: &KubeState,
    resource: &ResourceType,
    bytes: &[u8],
    body: &mut Value,
    directive: Directive,
) -> Result<Vec<String>, ApiError> {
    let Some(target) = target(state, resource) else {
        return Ok(Vec::new());
    };
    let doc = Doc::parse(bytes).unwrap_or_else(|| Doc::of(body));
    let found = if target.typed {
        findings(&doc, target.shapes.as_ref(), target.root, &target.roots)
    } else {
        let mut found = duplicates(&doc);
        found.extend(
            findings(
                &Doc::of(body),
                target.shapes.as_ref(),
                target.root,
                &target.roots,
            )
            .into_iter()
            .filter(Finding::is_unknown),
        );
        found
    };
    let kind = &resource.kind;
    let version = &resource.version;
    decided(found, body, directive, |message| {
        ApiError::bad_request(format!(
            "{kind} in version \"{version}\" cannot be handled as a {kind}: {message}"
        ))
    })
}

/// What a JSON patch's operations may hold.
const JSON_PATCH_FIELDS: [&str; 4] = ["op", "path", "value", "from"];

/// A patch: the duplicates in the patch itself (a JSON patch's operations checked for their
/// own fields), then the unknown fields of the object it makes that `existing` did not have.
pub(crate) fn check_patch(
    state: &KubeState,
    resource: &ResourceType,
    patch: &[u8],
    json_patch: bool,
    existing: &Value,
    patched: &mut Value,
    directive: Directive,
) -> Result<Vec<String>, ApiError> {
    let Some(target) = target(state, resource) else {
        return Ok(Vec::new());
    };
    let mut found: Vec<Finding> = Vec::new();
    let mut own: Vec<String> = Vec::new();
    match Doc::parse(patch) {
        Some(Doc::Array(operations)) if json_patch => {
            for (i, operation) in operations.iter().enumerate() {
                let Doc::Object(entries) = operation else {
                    continue;
                };
                let mut seen = std::collections::HashSet::new();
                for (key, _) in entries {
                    if !JSON_PATCH_FIELDS.contains(&key.as_str()) {
                        own.push(format!("json patch unknown field \"[{i}].{key}\""));
                    } else if !seen.insert(key.as_str()) {
                        own.push(format!("json patch duplicate field \"[{i}].{key}\""));
                    }
                }
            }
        }
        Some(doc) if !json_patch => found.extend(duplicates(&doc)),
        _ => {}
    }
    let before: Vec<Vec<Step>> = findings(
        &Doc::of(existing),
        target.shapes.as_ref(),
        target.root,
        &target.roots,
    )
    .into_iter()
    .filter(Finding::is_unknown)
    .map(|f| f.path().to_vec())
    .collect();
    found.extend(
        findings(
            &Doc::of(patched),
            target.shapes.as_ref(),
            target.root,
            &target.roots,
        )
        .into_iter()
        .filter(|f| f.is_unknown() && !before.iter().any(|p| p == f.path())),
    );
    if own.is_empty() {
        return decided(found, patched, directive, ApiError::bad_request);
    }
    // The operations' own findings lead, as the API server lists them.
    if directive == Directive::Strict {
        let all: Vec<String> = own.into_iter().chain(texts(&found)).collect();
        return Err(ApiError::bad_request(format!(
            "strict decoding error: {}",
            all.join(", ")
        )));
    }
    let rest = decided(found, patched, directive, ApiError::bad_request)?;
    Ok(if directive == Directive::Warn {
        own.into_iter().chain(rest).collect()
    } else {
        Vec::new()
    })
}

/// A list's merge keys, as server-side apply names an element (`containers[name="app"]`).
fn merge_keys(list: &str) -> &'static [&'static str] {
    match list {
        "containers"
        | "initContainers"
        | "ephemeralContainers"
        | "env"
        | "volumes"
        | "imagePullSecrets" => &["name"],
        "volumeMounts" => &["mountPath"],
        "ports" => &["containerPort", "protocol"],
        _ => &[],
    }
}

/// `.spec.template.spec.containers[name="app"].resourcez`: server-side apply's path.
fn apply_path(path: &[Step], object: &Value) -> String {
    let mut out = String::new();
    let mut at = object;
    let mut list = "";
    for step in path {
        match step {
            Step::Key(key) => {
                out.push('.');
                out.push_str(key);
                list = key;
                at = &at[key.as_str()];
            }
            Step::Index(i) => {
                at = &at[*i];
                let keys: Vec<String> = merge_keys(list)
                    .iter()
                    .filter(|k| !at[**k].is_null())
                    .map(|k| format!("{k}={}", at[*k]))
                    .collect();
                if keys.is_empty()
                    || (list == "ports" && keys.len() < 2 && at["protocol"].is_null())
                {
                    out.push_str(&format!("[{i}]"));
                } else {
                    out.push_str(&format!("[{}]", keys.join(",")));
                }
            }
        }
    }
    out
}

/// Server-side apply: an unknown field is an error whatever `fieldValidation` says (the apply
/// configuration cannot be typed), answered as the API server does, with a 500.
pub(crate) fn check_apply(
    state: &KubeState,
    resource: &ResourceType,
    namespace: &str,
    name: &str,
    body: &Value,
) -> Result<(), ApiError> {
    let Some(target) = target(state, resource) else {
        return Ok(());
    };
    let first = findings(
        &Doc::of(body),
        target.shapes.as_ref(),
        target.root,
        &target.roots,
    )
    .into_iter()
    .find(Finding::is_unknown);
    let Some(unknown) = first else {
        return Ok(());
    };
    let group_version = if resource.group.is_empty() {
        format!("/{}", resource.version)
    } else {
        format!("{}/{}", resource.group, resource.version)
    };
    Err(ApiError::new(
        500,
        "",
        format!(
            "failed to create typed patch object ({namespace}/{name}; {group_version}, Kind={}): {}: field not declared in schema",
            resource.kind,
            apply_path(unknown.path(), body)
        ),
    ))
}
