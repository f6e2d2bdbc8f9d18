//! Lists: a page of a resource's objects by label and field selectors, with the continue
//! token of the next page (copies of the objects, or the JSON the store keeps).

use serde_json::Value;

use super::ApiResult;
use crate::sim::kube::storage::resources::ResourceType;
use crate::sim::kube::storage::selectors::{FieldSelector, LabelSelector};
use crate::sim::kube::storage::state::{KubeState, store_key};
use crate::sim::kube::storage::status::ApiError;
use crate::sim::kube::storage::store::{name_of, namespace_of};

/// What a list returns: items, the store's version, and the continue token of the next page.
pub(crate) struct ListPage<T = Value> {
    pub(crate) items: Vec<T>,
    pub(crate) resource_version: u64,
    pub(crate) continue_token: Option<String>,
    pub(crate) remaining: Option<usize>,
}

#[derive(Default)]
pub(crate) struct ListOptions {
    pub(crate) labels: Option<LabelSelector>,
    pub(crate) fields: Option<FieldSelector>,
    pub(crate) limit: Option<usize>,
    pub(crate) continue_token: Option<String>,
}

pub(crate) fn list(
    state: &KubeState,
    resource: &ResourceType,
    namespace: Option<&str>,
    options: &ListOptions,
) -> ApiResult<ListPage> {
    select(state, resource, namespace, options, |object, _| {
        object.clone()
    })
}

/// A list page with each item as the JSON the store keeps: no copy of the objects.
pub(crate) fn list_json(
    state: &KubeState,
    resource: &ResourceType,
    namespace: Option<&str>,
    options: &ListOptions,
) -> ApiResult<ListPage<bytes::Bytes>> {
    select(state, resource, namespace, options, |_, json| json.clone())
}

fn select<T>(
    state: &KubeState,
    resource: &ResourceType,
    namespace: Option<&str>,
    options: &ListOptions,
    take: impl Fn(&Value, &bytes::Bytes) -> T,
) -> ApiResult<ListPage<T>> {
    let key = store_key(resource);
    let namespace = namespace.filter(|_| resource.namespaced);
    let start_after = match &options.continue_token {
        Some(token) => Some(decode_continue(token)?),
        None => None,
    };
    let limit = options.limit.filter(|l| *l > 0).unwrap_or(usize::MAX);
    let (mut items, mut remaining, mut last) = (Vec::new(), 0, None);
    let bound_to = options
        .fields
        .as_ref()
        .and_then(|f| f.required("spec.nodeName"))
        .filter(|_| key == "/pods");
    let candidates: Box<dyn Iterator<Item = (&Value, &bytes::Bytes)>> = match bound_to {
        Some(node) => Box::new(state.store.pods_on_node_with_json(node, namespace)),
        None => Box::new(state.store.list_with_json(&key, namespace)),
    };
    for (object, json) in candidates {
        let selected = options
            .labels
            .as_ref()
            .is_none_or(|s| s.matches(&object["metadata"]["labels"]))
            && options.fields.as_ref().is_none_or(|s| s.matches(object));
        let after_token = start_after.as_ref().is_none_or(|(ns, name)| {
            (namespace_of(object), name_of(object)) > (ns.as_str(), name.as_str())
        });
        if !(selected && after_token) {
            continue;
        }
        if items.len() < limit {
            items.push(take(object, json));
            last = Some(object);
        } else {
            remaining += 1;
        }
    }
    let continue_token = (remaining > 0)
        .then(|| {
            let version = state.store.resource_version();
            last.map(|o| encode_continue(namespace_of(o), name_of(o), version))
        })
        .flatten();
    Ok(ListPage {
        items,
        resource_version: state.store.resource_version(),
        continue_token,
        remaining: (remaining > 0).then_some(remaining),
    })
}

/// A continue token as the API server's storage makes one (storage/continue.go's
/// `EncodeContinue`): base64 (URL alphabet, no padding) of `{"v":"meta.k8s.io/v1","rv":N,
/// "start":"KEY\u0000"}`, the key the next page starts after; here `namespace/name`.
fn encode_continue(namespace: &str, name: &str, resource_version: u64) -> String {
    use base64::Engine;
    let token = serde_json::json!({
        "v": "meta.k8s.io/v1",
        "rv": resource_version,
        "start": format!("{namespace}/{name}\u{0}"),
    });
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(token.to_string())
}

/// `DecodeContinue`, refused as `ValidateListOptions` refuses it: 400 `invalid continue
/// token: continue key is not valid: ...` with the decoder's reason.
fn decode_continue(token: &str) -> ApiResult<(String, String)> {
    use base64::Engine;
    let bad = |why: String| {
        ApiError::bad_request(format!(
            "invalid continue token: continue key is not valid: {why}"
        ))
    };
    let data = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(token)
        .map_err(|e| match e {
            base64::DecodeError::InvalidByte(at, _)
            | base64::DecodeError::InvalidLastSymbol(at, _) => {
                bad(format!("illegal base64 data at input byte {at}"))
            }
            _ => bad(format!("illegal base64 data at input byte {}", token.len())),
        })?;
    let decoded: Value = serde_json::from_slice(&data).map_err(|e| bad(e.to_string()))?;
    if decoded["v"] != "meta.k8s.io/v1" {
        return Err(ApiError::bad_request(format!(
            "invalid continue token: continue key has an unrecognized encoded version {}",
            decoded["v"].as_str().unwrap_or_default()
        )));
    }
    let start = decoded["start"]
        .as_str()
        .unwrap_or_default()
        .trim_end_matches('\u{0}');
    if start.is_empty() {
        return Err(bad(
            "encoded start key empty (version meta.k8s.io/v1)".into()
        ));
    }
    let (ns, name) = start.split_once('/').unwrap_or(("", start));
    Ok((ns.to_string(), name.to_string()))
}
