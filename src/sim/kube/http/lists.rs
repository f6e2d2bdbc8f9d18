//! Lists of a resource type: selectors, `limit` and `continue` read from the query, the page
//! answered as the store's own JSON joined, as a Table, or as metadata only; and
//! deletecollection over the same selection.

use serde_json::{Value, json};

use super::routes::Query;
use super::tables;
use super::verbs::{Answer, Call};
use crate::sim::kube::storage::api::{self, ListOptions};
use crate::sim::kube::storage::resources::ResourceType;
use crate::sim::kube::storage::selectors::{FieldSelector, LabelSelector};
use crate::sim::kube::storage::status::ApiError;

/// A list's body: a document to serialize, or one already serialized.
pub(super) enum Listed {
    Document(Value),
    Joined(Vec<u8>),
}

fn list_options(query: &Query, resource: &ResourceType) -> Result<ListOptions, ApiError> {
    // ValidateListOptions (apimachinery's internalversion validation).
    if query
        .get("resourceVersionMatch")
        .is_some_and(|m| !m.is_empty())
        && query.get("resourceVersion").is_none_or(str::is_empty)
    {
        return Err(ApiError::invalid(
            "ListOptions",
            "",
            &[(
                "resourceVersionMatch",
                "Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided"
                    .into(),
            )],
        ));
    }
    let labels = query
        .get("labelSelector")
        .filter(|s| !s.is_empty())
        .map(LabelSelector::parse)
        .transpose()
        .map_err(ApiError::bad_request)?;
    let fields = query
        .get("fieldSelector")
        .filter(|s| !s.is_empty())
        .map(|text| {
            let selector = FieldSelector::parse(text)?;
            selector.supported_by(&resource.group, &resource.kind)?;
            Ok::<_, String>(selector)
        })
        .transpose()
        .map_err(ApiError::bad_request)?;
    let limit = query
        .get("limit")
        .map(|l| {
            l.parse::<usize>()
                .map_err(|_| ApiError::bad_request(format!("invalid limit: {l}")))
        })
        .transpose()?;
    Ok(ListOptions {
        labels,
        fields,
        limit,
        continue_token: query
            .get("continue")
            .filter(|c| !c.is_empty())
            .map(str::to_string),
    })
}

fn list_kind(resource: &ResourceType) -> String {
    format!("{}List", resource.kind)
}

/// One page of the list, in the form the Accept header asks for.
pub(super) fn list(call: &Call, accept: &str) -> Result<Listed, ApiError> {
    let options = list_options(call.query, call.resource)?;
    if tables::wants_table(accept) {
        return table_page(call, &options).map(Listed::Document);
    }
    if tables::wants_metadata_only(accept) {
        return metadata_page(call, &options).map(Listed::Document);
    }
    joined_page(call, &options).map(Listed::Joined)
}

fn table_page(call: &Call, options: &ListOptions) -> Result<Value, ApiError> {
    let (page, now) = call
        .twin
        .read_kube(|s| api::list(s, call.resource, call.namespace, options).map(|p| (p, s.now)))?;
    let include = call.query.get("includeObject").unwrap_or("Metadata");
    let mut table = tables::table(
        call.resource,
        &page.items,
        now,
        include,
        page.resource_version,
        true,
    );
    if let Some(token) = &page.continue_token {
        table["metadata"]["continue"] = json!(token);
    }
    Ok(table)
}

fn metadata_page(call: &Call, options: &ListOptions) -> Result<Value, ApiError> {
    let page = call
        .twin
        .read_kube(|s| api::list(s, call.resource, call.namespace, options))?;
    let mut list = tables::metadata_list(&page.items, page.resource_version);
    if let Some(token) = &page.continue_token {
        list["metadata"]["continue"] = json!(token);
    }
    Ok(list)
}

fn joined_page(call: &Call, options: &ListOptions) -> Result<Vec<u8>, ApiError> {
    let resource = call.resource;
    let page = call
        .twin
        .read_kube(|s| api::list_json(s, resource, call.namespace, options))?;
    let mut metadata = json!({"resourceVersion": page.resource_version.to_string()});
    if let Some(token) = page.continue_token {
        metadata["continue"] = json!(token);
        metadata["remainingItemCount"] = json!(page.remaining);
    }
    // The items are the store's own JSON, joined: a large list costs a copy, not a
    // serialization.
    let head = format!(
        r#"{{"kind":{},"apiVersion":{},"metadata":{},"items":["#,
        json!(list_kind(resource)),
        json!(resource.api_version()),
        metadata
    );
    let size = head.len() + page.items.iter().map(|i| i.len() + 1).sum::<usize>() + 2;
    let mut body = Vec::with_capacity(size);
    body.extend_from_slice(head.as_bytes());
    for (index, item) in page.items.iter().enumerate() {
        if index > 0 {
            body.push(b',');
        }
        body.extend_from_slice(item);
    }
    body.extend_from_slice(b"]}");
    Ok(body)
}

/// Deletes every object the selectors match (all pages), answering the list of them; a dry
/// run (query or DeleteOptions body) deletes nothing and answers the same list.
pub(super) async fn delete_collection(
    call: &Call<'_>,
    request: hyper::Request<hyper::body::Incoming>,
) -> Result<Answer, ApiError> {
    let body = super::incoming::read_body(request)
        .await
        .unwrap_or(Value::Null);
    let dry_run = call.dry_run_delete(&body);
    let options = list_options(call.query, call.resource)?;
    let resource = call.resource;
    let deleted = call.twin.kube(|s| -> Result<Vec<Value>, ApiError> {
        let page = api::list(
            s,
            resource,
            call.namespace,
            &ListOptions {
                limit: None,
                continue_token: None,
                ..options
            },
        )?;
        page.items
            .iter()
            .map(|o| {
                let ns = o["metadata"]["namespace"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string();
                let name = o["metadata"]["name"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string();
                api::delete(s, resource, &ns, &name, false, dry_run)
            })
            .collect()
    })?;
    Ok(Answer::new(
        200,
        json!({"kind": list_kind(resource), "apiVersion": resource.api_version(), "metadata": {}, "items": deleted}),
    ))
}
