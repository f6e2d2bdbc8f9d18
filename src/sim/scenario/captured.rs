//! A twin started from a lab-state file (`--scenario @lab-state.json`): the captured lab's
//! AWS resources and Kubernetes objects, ids and all, on a virtual clock that starts at the
//! instant of the capture. Node groups launch what their instance types say (GPUs included).

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::json;

use crate::lab_state::{self as format, LabState};
use crate::sim::aws::state::{
    AccessEntry, Addon, Address, AssociatedPolicy, AwsState, Cluster, Instance, LaunchTemplate,
    Nodegroup, OidcProvider, PodIdentityAssociation, Role, Rule, SecurityGroup, TemplateInterface,
};
use crate::sim::aws::topology;
use crate::sim::kube::auth::rbac::bootstrap;
use crate::sim::kube::storage::state::{KubeState, store_key};
use crate::sim::timestamps::parse_rfc3339;
use crate::sim::twin::Twin;

/// Puts a captured lab into an empty twin. Returns the kinds of captured objects the twin
/// does not serve (left out), for the caller to say so.
pub(super) fn load(twin: &Twin, capture: &LabState) -> Vec<String> {
    // Before the epoch of the twin's clock (2026-01-01) a capture starts at the epoch.
    let at = parse_rfc3339(&capture.captured_at).unwrap_or_default();
    twin.clock.advance_to(at);
    twin.aws(|state| aws(state, &capture.aws, at));
    twin.kube(|state| {
        state.efa_devices.extend(efa_devices(capture));
        kube(state, &capture.kubernetes)
    })
}

/// The EFA interfaces of each captured node's instance (by its `spec.providerID`,
/// `aws:///ZONE/INSTANCE`), which the EFA device plugin advertises.
fn efa_devices(capture: &LabState) -> Vec<(String, u32)> {
    let efa: BTreeMap<&str, u32> = capture
        .aws
        .instances
        .iter()
        .filter(|i| i.efa_interfaces > 0)
        .map(|i| (i.id.as_str(), i.efa_interfaces))
        .collect();
    capture
        .kubernetes
        .objects
        .iter()
        .filter(|o| o["kind"] == "Node")
        .filter_map(|node| {
            let instance = node["spec"]["providerID"].as_str()?.rsplit('/').next()?;
            let name = node["metadata"]["name"].as_str()?;
            Some((name.to_string(), *efa.get(instance)?))
        })
        .collect()
}

fn time(text: &str, otherwise: Duration) -> Duration {
    parse_rfc3339(text).unwrap_or(otherwise)
}

fn aws(state: &mut AwsState, capture: &format::AwsState, at: Duration) {
    network(state, capture, at);
    for group in &capture.security_groups {
        state.groups.insert(
            group.id.clone(),
            SecurityGroup {
                id: group.id.clone(),
                name: group.name.clone(),
                description: group.description.clone(),
                vpc_id: group.vpc.clone(),
            },
        );
        state
            .rules
            .extend(group.rules.iter().map(|rule| rule_of(&group.id, rule)));
    }
    cluster(state, &capture.cluster, at);
    launch(state, capture, at);
    nodegroups(state, capture, at);
    instances(state, capture, at);
    state
        .oidc_providers
        .extend(capture.oidc_providers.iter().map(|p| OidcProvider {
            url: p.url.clone(),
            client_ids: p.client_ids.clone(),
            thumbprints: p.thumbprints.clone(),
            created_at: at,
        }));
    roles(state, capture, at);
    skip_captured_ids(state);
}

/// VPCs, subnets, NAT gateways (billed while available) and the addresses they hold.
fn network(state: &mut AwsState, capture: &format::AwsState, at: Duration) {
    for vpc in &capture.vpcs {
        state.vpcs.insert(vpc.id.clone(), vpc.clone());
    }
    for subnet in &capture.subnets {
        state.subnets.insert(subnet.id.clone(), subnet.clone());
    }
    for nat in &capture.nat_gateways {
        if nat.state == "available" {
            state.meter.start(&nat.id, "nat-gateway", at);
        }
        state.nat_gateways.insert(nat.id.clone(), nat.clone());
    }
    for address in &capture.addresses {
        let holder = capture
            .nat_gateways
            .iter()
            .find(|n| n.allocation.as_deref() == Some(address.allocation_id.as_str()));
        state.addresses.insert(
            address.allocation_id.clone(),
            Address {
                allocation_id: address.allocation_id.clone(),
                public_ip: address.public_ip.clone(),
                name: address.name.clone(),
                nat_gateway: holder.map(|n| n.id.clone()),
            },
        );
    }
}

fn nodegroups(state: &mut AwsState, capture: &format::AwsState, at: Duration) {
    for nodegroup in &capture.nodegroups {
        let uuid = state.next_uuid();
        state.nodegroups.insert(
            (capture.cluster.config.name.clone(), nodegroup.name.clone()),
            Nodegroup {
                cluster: capture.cluster.config.name.clone(),
                name: nodegroup.name.clone(),
                uuid,
                ami_type: nodegroup.ami_type.clone(),
                instance_type: nodegroup
                    .instance_types
                    .first()
                    .cloned()
                    .unwrap_or_default(),
                desired: nodegroup.desired,
                min: nodegroup.min,
                max: nodegroup.max,
                labels: nodegroup.labels.clone().into_iter().collect(),
                taints: nodegroup
                    .taints
                    .iter()
                    .map(|t| (t.key.clone(), t.value.clone(), t.effect.clone()))
                    .collect(),
                subnets: nodegroup.subnets.clone(),
                node_role: nodegroup.node_role.clone(),
                status: nodegroup.status.clone(),
                created_at: time(&nodegroup.created_at, at),
                modified_at: time(&nodegroup.created_at, at),
                launch_template: nodegroup.launch_template.as_ref().cloned(),
                health_issues: Vec::new(),
                node_repair: None,
                version: capture.cluster.config.version.clone(),
                release_version: crate::sim::aws::ami_releases::release_for(
                    &capture.cluster.config.version,
                ),
                update_config: None,
            },
        );
    }
}

/// The captured instances, launched at the capture; those pending or running are billed.
fn instances(state: &mut AwsState, capture: &format::AwsState, at: Duration) {
    for instance in &capture.instances {
        if matches!(instance.state.as_str(), "pending" | "running") {
            state.meter.start(&instance.id, &instance.instance_type, at);
        }
        let network_nodes = topology::place(state, &instance.instance_type, &instance.zone);
        state.instances.insert(
            instance.id.clone(),
            Instance {
                id: instance.id.clone(),
                nodegroup: instance.nodegroup.clone().unwrap_or_default(),
                instance_type: instance.instance_type.clone(),
                subnet: instance.subnet.clone(),
                zone: instance.zone.clone(),
                private_ip: instance.private_ip.clone(),
                state: instance.state.clone(),
                groups: instance.security_groups.clone(),
                ami: instance.image.clone(),
                launched_at: at,
                placement_group: instance.placement_group.clone(),
                efa_interfaces: instance.efa_interfaces,
                network_nodes,
            },
        );
    }
}

fn roles(state: &mut AwsState, capture: &format::AwsState, at: Duration) {
    for role in &capture.roles {
        state.roles.insert(
            role.name.clone(),
            Role {
                name: role.name.clone(),
                path: role.path.clone(),
                role_id: role.role_id.clone(),
                trust_policy: role.trust_policy.to_string(),
                description: role.description.clone(),
                created_at: at,
                attached: role.attached_policies.clone(),
                inline: std::collections::BTreeMap::new(),
                tags: Vec::new(),
            },
        );
    }
}

/// Keeps the twin from generating an id the capture already holds.
fn skip_captured_ids(state: &mut AwsState) {
    let ids: Vec<String> = state
        .instances
        .keys()
        .chain(state.rules.iter().map(|r| &r.id))
        .chain(state.groups.keys())
        .chain(state.nat_gateways.keys())
        .chain(state.addresses.keys())
        .chain(state.subnets.keys())
        .chain(state.vpcs.keys())
        .chain(state.launch_templates.keys())
        .chain(state.placement_groups.values().map(|g| &g.id))
        .cloned()
        .collect();
    for id in ids {
        state.skip_id(&id);
    }
}

/// The placement groups and launch templates a captured node group launches from, so its new
/// nodes land in the group with their EFA interfaces as the real ones would.
fn launch(state: &mut AwsState, capture: &format::AwsState, at: Duration) {
    for group in &capture.placement_groups {
        state
            .placement_groups
            .insert(group.name.clone(), group.clone());
    }
    for template in &capture.launch_templates {
        state.launch_templates.insert(
            template.id.clone(),
            LaunchTemplate {
                id: template.id.clone(),
                name: template.name.clone(),
                created_at: at,
                placement_group: template.placement_group.clone(),
                interfaces: template
                    .interfaces
                    .iter()
                    .map(|i| TemplateInterface {
                        device_index: i.device_index,
                        network_card_index: i.network_card_index,
                        interface_type: i.interface_type.clone(),
                        groups: i.security_groups.clone(),
                    })
                    .collect(),
            },
        );
    }
}

/// A captured rule in the twin's form: `self` and group ids are references, the rest CIDRs.
fn rule_of(group: &str, rule: &format::Rule) -> Rule {
    let (cidr, referenced_group) = match rule.source.as_str() {
        "self" => (None, Some(group.to_string())),
        source if source.starts_with("sg-") => (None, Some(source.to_string())),
        source => (Some(source.to_string()), None),
    };
    Rule {
        id: rule.id.clone(),
        group_id: group.to_string(),
        egress: rule.direction == "egress",
        protocol: rule.protocol.clone(),
        from_port: rule.from_port,
        to_port: rule.to_port,
        cidr,
        referenced_group,
        description: rule.description.clone(),
    }
}

fn cluster(state: &mut AwsState, capture: &format::Cluster, at: Duration) {
    if capture.config.name.is_empty() {
        return;
    }
    if capture.config.status == "ACTIVE" {
        state.meter.start(&capture.config.name, "eks-cluster", at);
    }
    let addons: BTreeMap<String, Addon> = capture
        .addons
        .iter()
        .map(|a| {
            let addon = Addon {
                name: a.name.clone(),
                version: a.version.clone(),
                status: a.status.clone(),
                created_at: at,
                configuration_values: a.configuration_values.clone(),
            };
            (a.name.clone(), addon)
        })
        .collect();
    let access_entries = access_entries(capture, at);
    state.clusters.insert(
        capture.config.name.clone(),
        Cluster {
            // The file's configuration is the twin's: nothing to convert field by field.
            config: capture.config.clone(),
            created_at: time(&capture.created_at, at),
            addons,
            access_entries,
            pod_identity_associations: capture
                .pod_identity_associations
                .iter()
                .map(|a| {
                    let association = PodIdentityAssociation {
                        id: a.id.clone(),
                        namespace: a.namespace.clone(),
                        service_account: a.service_account.clone(),
                        role_arn: a.role_arn.clone(),
                        created_at: at,
                    };
                    (a.id.clone(), association)
                })
                .collect(),
            settings: crate::sim::aws::cluster_settings::ClusterSettings::default(),
        },
    );
}

/// The captured access entries with their associated policies, made and changed at `at`.
fn access_entries(capture: &format::Cluster, at: Duration) -> BTreeMap<String, AccessEntry> {
    capture
        .access_entries
        .iter()
        .map(|e| {
            let policies = e
                .policies
                .iter()
                .map(|p| {
                    let policy = AssociatedPolicy {
                        policy_arn: p.policy_arn.clone(),
                        scope: p.scope.clone(),
                        namespaces: p.namespaces.clone(),
                        associated_at: at,
                        modified_at: at,
                    };
                    (p.policy_arn.clone(), policy)
                })
                .collect();
            let entry = AccessEntry {
                principal_arn: e.principal_arn.clone(),
                username: e.username.clone(),
                groups: e.groups.clone(),
                kind: e.kind.clone(),
                created_at: at,
                modified_at: at,
                policies,
            };
            (e.principal_arn.clone(), entry)
        })
        .collect()
}

/// The captured objects as they were; Secrets by name, without data (none was read). Returns
/// the kinds the twin does not serve.
fn kube(state: &mut KubeState, capture: &format::KubernetesState) -> Vec<String> {
    bootstrap::seed(state);
    let mut unknown = Vec::new();
    for object in &capture.objects {
        let api_version = object["apiVersion"].as_str().unwrap_or_default();
        let kind = object["kind"].as_str().unwrap_or_default();
        match state.resource(api_version, kind) {
            Some(resource) => state.store.restore(&store_key(&resource), object.clone()),
            None => unknown.push(format!("{api_version} {kind}")),
        }
    }
    for secret in &capture.secrets {
        let object = json!({
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {
                "name": secret.name,
                "namespace": secret.namespace,
                "annotations": {"runbook.dev/captured": "name only: the data was not read"},
            },
            "type": "Opaque",
        });
        state
            .store
            .restore(&store_key(&state.built_in("secrets")), object);
    }
    state.skip_generated_names();
    unknown.sort();
    unknown.dedup();
    unknown
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rule_names_its_group_itself_or_another_or_a_cidr() {
        let rule = |source: &str| format::Rule {
            id: "sgr-1".into(),
            direction: "ingress".into(),
            protocol: "tcp".into(),
            from_port: 443,
            to_port: 443,
            source: source.into(),
            description: String::new(),
        };
        let own = rule_of("sg-a", &rule("self"));
        assert_eq!(own.referenced_group.as_deref(), Some("sg-a"));
        let other = rule_of("sg-a", &rule("sg-b"));
        assert_eq!(other.referenced_group.as_deref(), Some("sg-b"));
        let cidr = rule_of("sg-a", &rule("10.0.0.0/8"));
        assert_eq!(cidr.cidr.as_deref(), Some("10.0.0.0/8"));
        assert!(!cidr.egress);
    }
}
