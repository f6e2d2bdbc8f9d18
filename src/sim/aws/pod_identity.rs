//! EKS Pod Identity associations: which IAM role a ServiceAccount's pods get through the Pod
//! Identity Agent. One per (namespace, ServiceAccount), as EKS allows.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::eks::Answer;
use super::eks_records::{cluster_mut, in_use};
use super::error::AwsError;
use super::state::{AwsState, PodIdentityAssociation};
use super::wire::epoch;
use crate::lab;

fn arn(cluster: &str, id: &str) -> String {
    format!(
        "arn:aws:eks:{}:{}:podidentityassociation/{cluster}/{id}",
        lab::REGION,
        lab::ACCOUNT_ID
    )
}

fn summary(cluster: &str, a: &PodIdentityAssociation) -> Value {
    json!({
        "clusterName": cluster,
        "namespace": a.namespace,
        "serviceAccount": a.service_account,
        "associationArn": arn(cluster, &a.id),
        "associationId": a.id,
    })
}

fn full(cluster: &str, a: &PodIdentityAssociation) -> Value {
    let mut json = summary(cluster, a);
    json["roleArn"] = json!(a.role_arn);
    json["createdAt"] = json!(epoch(a.created_at));
    json["modifiedAt"] = json!(epoch(a.created_at));
    json["tags"] = json!({});
    json["disableSessionTags"] = json!(false);
    json
}

fn missing(id: &str) -> AwsError {
    AwsError::not_found(format!("No Pod Identity Association found for id: {id}"))
}

/// An association id as EKS makes them: `a-` and 17 lowercase letters and digits.
fn new_id(state: &mut AwsState) -> String {
    let uuid = state.next_uuid().replace('-', "");
    format!("a-{}", &uuid[uuid.len() - 17..])
}

/// Adds an association to a cluster (the hybrid scenario's own, and CreatePodIdentityAssociation).
pub(crate) fn associate(
    state: &mut AwsState,
    cluster: &str,
    namespace: &str,
    service_account: &str,
    role_arn: &str,
) -> Result<PodIdentityAssociation, AwsError> {
    let id = new_id(state);
    let now = state.now;
    let record = cluster_mut(state, cluster)?;
    if record
        .pod_identity_associations
        .values()
        .any(|a| a.namespace == namespace && a.service_account == service_account)
    {
        return Err(in_use(format!(
            "Association already exists: {namespace}/{service_account}"
        )));
    }
    let association = PodIdentityAssociation {
        id: id.clone(),
        namespace: namespace.into(),
        service_account: service_account.into(),
        role_arn: role_arn.into(),
        created_at: now,
    };
    record
        .pod_identity_associations
        .insert(id, association.clone());
    Ok(association)
}

/// Serves `/clusters/{name}/pod-identity-associations...`; None for any other path, and for
/// a method it does not serve there.
pub(crate) fn serve(
    state: &mut AwsState,
    method: &str,
    segments: &[&str],
    query: &BTreeMap<String, String>,
    body: &Value,
) -> Option<Answer> {
    let ["clusters", name, "pod-identity-associations", rest @ ..] = segments else {
        return None;
    };
    let name = *name;
    Some(match (method, rest) {
        ("POST", []) => create_association(state, name, body),
        ("GET", []) => list_associations(state, name, query),
        ("GET", [id]) => describe_association(state, name, id),
        ("DELETE", [id]) => delete_association(state, name, id),
        _ => return None,
    })
}

fn create_association(state: &mut AwsState, cluster: &str, body: &Value) -> Answer {
    let field = |key: &str| {
        body[key]
            .as_str()
            .filter(|v| !v.is_empty())
            .ok_or_else(|| AwsError::invalid_parameter(format!("{key} is required")))
    };
    let (namespace, account, role) = (
        field("namespace")?,
        field("serviceAccount")?,
        field("roleArn")?,
    );
    let created = associate(state, cluster, namespace, account, role)?;
    Ok((200, json!({"association": full(cluster, &created)})))
}

/// ListPodIdentityAssociations, narrowed to a `namespace` and `serviceAccount` when given.
fn list_associations(
    state: &mut AwsState,
    cluster: &str,
    query: &BTreeMap<String, String>,
) -> Answer {
    let record = cluster_mut(state, cluster)?;
    let associations: Vec<Value> = record
        .pod_identity_associations
        .values()
        .filter(|a| query.get("namespace").is_none_or(|n| *n == a.namespace))
        .filter(|a| {
            query
                .get("serviceAccount")
                .is_none_or(|s| *s == a.service_account)
        })
        .map(|a| summary(cluster, a))
        .collect();
    Ok((200, json!({"associations": associations})))
}

fn describe_association(state: &mut AwsState, cluster: &str, id: &str) -> Answer {
    let record = cluster_mut(state, cluster)?;
    let found = record
        .pod_identity_associations
        .get(id)
        .ok_or_else(|| missing(id))?;
    Ok((200, json!({"association": full(cluster, found)})))
}

fn delete_association(state: &mut AwsState, cluster: &str, id: &str) -> Answer {
    let record = cluster_mut(state, cluster)?;
    let removed = record
        .pod_identity_associations
        .remove(id)
        .ok_or_else(|| missing(id))?;
    Ok((200, json!({"association": full(cluster, &removed)})))
}
