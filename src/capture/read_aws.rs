//! The AWS half of a capture: the cluster and what it stands in (its VPC's network, groups and
//! rules, instances, read by [`read_vpc`]), its node groups, add-ons and access entries, its
//! OIDC provider and the roles it names. Describe, List and Get calls only.

use std::collections::BTreeSet;

use futures::future::try_join_all;
use serde_json::Value;

use super::error::CaptureError;
use super::fields::{count, text, texts};
use super::read_vpc;
use crate::clients::aws::AwsClients;
use crate::lab_state::{
    AccessEntry, AccessPolicy, Addon, AwsState, Cluster, ClusterConfig, Instance, LaunchTemplate,
    Nodegroup, NodegroupTemplate, OidcProvider, PlacementGroup, PodIdentityAssociation,
    RemoteNetwork, Role, Taint, TemplateInterface,
};

/// The cluster to capture when none was named: the one whose endpoint is the Kubernetes API
/// read, or the account's only one.
pub(super) async fn which_cluster(
    aws: &AwsClients,
    kube_endpoint: &str,
) -> Result<String, CaptureError> {
    let names = aws
        .clusters()
        .await
        .map_err(CaptureError::aws("the EKS clusters"))?;
    for name in &names {
        let cluster = aws
            .cluster(name)
            .await
            .map_err(CaptureError::aws(format!("EKS cluster {name}")))?;
        if cluster["endpoint"].as_str() == Some(kube_endpoint.trim_end_matches('/')) {
            return Ok(name.clone());
        }
    }
    match names.as_slice() {
        [only] => Ok(only.clone()),
        _ => Err(CaptureError::WhichCluster {
            endpoint: kube_endpoint.to_string(),
            clusters: if names.is_empty() {
                "none".into()
            } else {
                names.join(", ")
            },
        }),
    }
}

pub(super) async fn read(aws: &AwsClients, name: &str) -> Result<AwsState, CaptureError> {
    let c = aws
        .cluster(name)
        .await
        .map_err(CaptureError::aws(format!("EKS cluster {name}")))?;
    let network = read_vpc::read(aws, &text(&c["resources_vpc_config"]["vpc_id"])).await?;
    let nodegroups = nodegroups(aws, name).await?;
    let cluster = cluster(aws, name, &c).await?;
    let oidc_providers = oidc_providers(aws, &cluster).await?;
    let role_arns: BTreeSet<&str> = std::iter::once(cluster.config.role_arn.as_str())
        .chain(nodegroups.iter().map(|n| n.node_role.as_str()))
        .filter(|arn| !arn.is_empty())
        .collect();
    let roles = roles(aws, role_arns).await?;
    let launch_templates = launch_templates(aws, &nodegroups).await?;
    let placement_groups = placement_groups(aws, &launch_templates, &network.instances).await?;
    Ok(AwsState {
        vpcs: network.vpcs,
        subnets: network.subnets,
        nat_gateways: network.nat_gateways,
        addresses: network.addresses,
        security_groups: network.security_groups,
        cluster,
        nodegroups,
        instances: network.instances,
        oidc_providers,
        roles,
        placement_groups,
        launch_templates,
    })
}

/// The IAM OIDC provider of the cluster's issuer, when there is one.
async fn oidc_providers(
    aws: &AwsClients,
    cluster: &Cluster,
) -> Result<Vec<OidcProvider>, CaptureError> {
    let issuer = cluster.config.oidc_issuer.trim_start_matches("https://");
    Ok(aws
        .oidc_providers()
        .await
        .map_err(CaptureError::aws("the IAM OIDC providers"))?
        .iter()
        .filter(|p| p["url"].as_str() == Some(issuer))
        .map(|p| OidcProvider {
            url: text(&p["url"]),
            client_ids: texts(&p["client_ids"]),
            thumbprints: texts(&p["thumbprints"]),
        })
        .collect())
}

/// The launch templates the node groups name (none read when no group names one).
async fn launch_templates(
    aws: &AwsClients,
    nodegroups: &[Nodegroup],
) -> Result<Vec<LaunchTemplate>, CaptureError> {
    let named: BTreeSet<&str> = nodegroups
        .iter()
        .filter_map(|n| n.launch_template.as_ref())
        .map(|t| t.id.as_str())
        .collect();
    if named.is_empty() {
        return Ok(Vec::new());
    }
    let mut templates: Vec<LaunchTemplate> = aws
        .launch_templates()
        .await
        .map_err(CaptureError::aws("the launch templates"))?
        .iter()
        .filter(|t| {
            t["launch_template_id"]
                .as_str()
                .is_some_and(|id| named.contains(id))
        })
        .map(|t| LaunchTemplate {
            id: text(&t["launch_template_id"]),
            name: text(&t["name"]),
            placement_group: t["placement_group"].as_str().map(str::to_string),
            interfaces: t["interfaces"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|n| TemplateInterface {
                    network_card_index: count(&n["network_card_index"]),
                    device_index: count(&n["device_index"]),
                    interface_type: text(&n["interface_type"]),
                    security_groups: texts(&n["security_groups"]),
                })
                .collect(),
        })
        .collect();
    templates.sort_by(|a, b| a.id.cmp(&b.id));
    Ok(templates)
}

/// The placement groups the templates and instances name (none read when nothing names one).
async fn placement_groups(
    aws: &AwsClients,
    templates: &[LaunchTemplate],
    instances: &[Instance],
) -> Result<Vec<PlacementGroup>, CaptureError> {
    let named: BTreeSet<&str> = templates
        .iter()
        .filter_map(|t| t.placement_group.as_deref())
        .chain(
            instances
                .iter()
                .filter_map(|i| i.placement_group.as_deref()),
        )
        .collect();
    if named.is_empty() {
        return Ok(Vec::new());
    }
    let mut groups: Vec<PlacementGroup> = aws
        .placement_groups()
        .await
        .map_err(CaptureError::aws("the placement groups"))?
        .iter()
        .filter(|g| g["group_name"].as_str().is_some_and(|n| named.contains(n)))
        .map(|g| PlacementGroup {
            id: text(&g["group_id"]),
            name: text(&g["group_name"]),
            strategy: text(&g["strategy"]),
        })
        .collect();
    groups.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(groups)
}

async fn nodegroups(aws: &AwsClients, cluster: &str) -> Result<Vec<Nodegroup>, CaptureError> {
    let mut names = aws
        .nodegroups(cluster)
        .await
        .map_err(CaptureError::aws(format!("the node groups of {cluster}")))?;
    names.sort();
    let described = try_join_all(names.iter().map(|n| async move {
        aws.nodegroup(cluster, n)
            .await
            .map_err(CaptureError::aws(format!("node group {n}")))
    }))
    .await?;
    Ok(described
        .iter()
        .map(|n| {
            let scaling = &n["scaling_config"];
            Nodegroup {
                name: text(&n["nodegroup_name"]),
                status: text(&n["status"]),
                ami_type: text(&n["ami_type"]),
                instance_types: texts(&n["instance_types"]),
                min: scaling["min_size"].as_i64().unwrap_or(0),
                max: scaling["max_size"].as_i64().unwrap_or(0),
                desired: scaling["desired_size"].as_i64().unwrap_or(0),
                subnets: texts(&n["subnets"]),
                labels: n["labels"]
                    .as_object()
                    .into_iter()
                    .flatten()
                    .map(|(k, v)| (k.clone(), text(v)))
                    .collect(),
                taints: n["taints"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|t| Taint {
                        key: text(&t["key"]),
                        value: text(&t["value"]),
                        effect: kubernetes_effect(t["effect"].as_str().unwrap_or_default()),
                    })
                    .collect(),
                node_role: text(&n["node_role"]),
                created_at: text(&n["created_at"]),
                launch_template: n["launch_template"]["id"]
                    .as_str()
                    .map(|id| NodegroupTemplate {
                        id: id.to_string(),
                        name: text(&n["launch_template"]["name"]),
                        version: text(&n["launch_template"]["version"]),
                    }),
            }
        })
        .collect())
}

/// EKS spells taint effects `NO_SCHEDULE`; Kubernetes (and the twin) `NoSchedule`.
fn kubernetes_effect(eks: &str) -> String {
    match eks {
        "NO_SCHEDULE" => "NoSchedule",
        "NO_EXECUTE" => "NoExecute",
        "PREFER_NO_SCHEDULE" => "PreferNoSchedule",
        other => other,
    }
    .to_string()
}

async fn cluster(aws: &AwsClients, name: &str, c: &Value) -> Result<Cluster, CaptureError> {
    let addons = addons(aws, name).await?;
    let pod_identity_associations = pod_identity_associations(aws, name).await?;
    let mode = text(&c["access_config"]["authentication_mode"]);
    // Access entries exist only where the API authenticates them.
    let access_entries = if mode == "CONFIG_MAP" {
        Vec::new()
    } else {
        access_entries(aws, name).await?
    };
    Ok(Cluster {
        config: cluster_config(c, mode),
        created_at: text(&c["created_at"]),
        addons,
        access_entries,
        pod_identity_associations,
    })
}

/// The cluster's own settings, from its description; `mode` is its authentication mode.
fn cluster_config(c: &Value, mode: String) -> ClusterConfig {
    let remote_network = c["remote_network_config"]
        .is_object()
        .then(|| RemoteNetwork {
            node_cidrs: texts(&c["remote_network_config"]["remote_node_networks"]),
            pod_cidrs: texts(&c["remote_network_config"]["remote_pod_networks"]),
        });
    let vpc = &c["resources_vpc_config"];
    ClusterConfig {
        name: text(&c["name"]),
        status: text(&c["status"]),
        version: text(&c["version"]),
        platform_version: text(&c["platform_version"]),
        endpoint: text(&c["endpoint"]),
        role_arn: text(&c["role_arn"]),
        vpc: text(&vpc["vpc_id"]),
        subnets: texts(&vpc["subnet_ids"]),
        security_groups: texts(&vpc["security_group_ids"]),
        cluster_security_group: text(&vpc["cluster_security_group_id"]),
        oidc_issuer: text(&c["identity"]["oidc"]["issuer"]),
        authentication_mode: mode,
        secrets_key: c["secrets_key"].as_str().map(str::to_string),
        remote_network,
    }
}

async fn addons(aws: &AwsClients, name: &str) -> Result<Vec<Addon>, CaptureError> {
    let addons = aws
        .addons(name)
        .await
        .map_err(CaptureError::aws(format!("the add-ons of {name}")))?;
    Ok(addons
        .as_object()
        .into_iter()
        .flatten()
        .map(|(addon, v)| Addon {
            name: addon.clone(),
            version: text(&v["version"]),
            status: text(&v["status"]),
            configuration_values: v["configuration_values"].as_str().map(str::to_string),
        })
        .collect())
}

async fn pod_identity_associations(
    aws: &AwsClients,
    name: &str,
) -> Result<Vec<PodIdentityAssociation>, CaptureError> {
    Ok(aws
        .pod_identity_associations(name)
        .await
        .map_err(CaptureError::aws(format!(
            "the Pod Identity associations of {name}"
        )))?
        .iter()
        .map(|a| PodIdentityAssociation {
            id: text(&a["association_id"]),
            namespace: text(&a["namespace"]),
            service_account: text(&a["service_account"]),
            role_arn: text(&a["role_arn"]),
        })
        .collect())
}

async fn access_entries(aws: &AwsClients, name: &str) -> Result<Vec<AccessEntry>, CaptureError> {
    Ok(aws
        .access_entries(name)
        .await
        .map_err(CaptureError::aws(format!("the access entries of {name}")))?
        .iter()
        .map(|e| AccessEntry {
            principal_arn: text(&e["principal_arn"]),
            username: text(&e["username"]),
            groups: texts(&e["kubernetes_groups"]),
            kind: text(&e["type"]),
            policies: e["policies"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|p| AccessPolicy {
                    policy_arn: text(&p["policy_arn"]),
                    scope: text(&p["scope"]),
                    namespaces: texts(&p["namespaces"]),
                })
                .collect(),
        })
        .collect())
}

/// The roles named, those that exist (a role deleted under a cluster is the account's
/// state, not an error), with their attached managed policies.
async fn roles(aws: &AwsClients, arns: BTreeSet<&str>) -> Result<Vec<Role>, CaptureError> {
    let mut roles = Vec::new();
    for arn in arns {
        let Some((path, name)) = role_path_and_name(arn) else {
            continue;
        };
        let role = match aws.role(name).await {
            Ok(role) => role,
            Err(e) if e.code == "NoSuchEntity" => continue,
            Err(e) => return Err(CaptureError::aws(format!("IAM role {name}"))(e)),
        };
        let attached_policies =
            aws.attached_role_policies(name)
                .await
                .map_err(CaptureError::aws(format!(
                    "the policies of IAM role {name}"
                )))?;
        roles.push(Role {
            name: name.to_string(),
            path: path.to_string(),
            role_id: text(&role["role_id"]),
            trust_policy: role["trust_policy"].clone(),
            description: text(&role["description"]),
            attached_policies,
        });
    }
    Ok(roles)
}

/// `arn:aws:iam::A:role/path/name` -> (`/path/`, `name`).
fn role_path_and_name(arn: &str) -> Option<(&str, &str)> {
    let resource = arn.split_once(":role")?.1;
    let (path, name) = resource.rsplit_once('/')?;
    Some((
        if path.is_empty() {
            "/"
        } else {
            &resource[..=path.len()]
        },
        name,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn role_arns_give_path_and_name() {
        assert_eq!(
            role_path_and_name("arn:aws:iam::123456789012:role/myeks5w-node-role"),
            Some(("/", "myeks5w-node-role"))
        );
        assert_eq!(
            role_path_and_name("arn:aws:iam::123456789012:role/service/eks/x"),
            Some(("/service/eks/", "x"))
        );
        assert_eq!(role_path_and_name("arn:aws:iam::1:user/u"), None);
    }

    #[test]
    fn eks_effects_read_as_kubernetes_spells_them() {
        assert_eq!(kubernetes_effect("NO_SCHEDULE"), "NoSchedule");
        assert_eq!(kubernetes_effect("PREFER_NO_SCHEDULE"), "PreferNoSchedule");
    }
}
