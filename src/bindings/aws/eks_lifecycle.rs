//! The create, delete and wait half of `eks::` (what the lab blueprint in stdlib/lab.rhai builds
//! and tears down): clusters, managed node groups, add-ons.

use std::sync::Arc;
use std::time::Duration;

use rhai::{Map, Module, NativeCallContext, Position};

use super::call::{Result, call, int32, json, unit, waiter};
use crate::bindings::shared::journaled::journaled;
use crate::bindings::shared::options::Spec;
use crate::clients::aws::{AwsClients, ClusterSpec, EksResource, NodegroupSpec};
use crate::guard::Change;
use crate::script::{Host, documented as doc};

const MINUTE: Duration = Duration::from_secs(60);

pub(super) fn install(eks: &mut Module, clients: &Arc<AwsClients>, host: &Arc<Host>) {
    install_clusters(eks, clients, host);
    install_cluster_waits(eks, clients, host);
    install_nodegroups(eks, clients, host);
    install_nodegroup_waits(eks, clients, host);
    install_addons(eks, clients, host);
    install_addon_waits(eks, clients, host);
}

/// Registers listing, creating and deleting clusters.
fn install_clusters(eks: &mut Module, clients: &Arc<AwsClients>, host: &Arc<Host>) {
    let (c, h) = (clients.clone(), host.clone());
    doc(
        "clusters",
        &["Array"],
        "The names of the account's EKS clusters in the region.",
    )
    .set_into_module(eks, move |ctx: NativeCallContext| -> Result {
        Ok(json(&serde_json::json!(call(
            &h,
            ctx.call_position(),
            || c.clusters()
        )?)))
    });
    let (c, h) = (clients.clone(), host.clone());
    doc("create_cluster", &["spec: Map", "Map"], "Starts creating a cluster: #{ name, version, role_arn, subnets: [...], security_groups: [...],\nsecrets_key (a KMS key ARN to encrypt Secrets with) }; returns #{ name, status: \"CREATING\", version }. eks::wait_cluster_active waits for it.")
        .set_into_module(eks, move |ctx: NativeCallContext, spec: Map| -> Result {
            create_cluster(&h, &c, ctx.call_position(), &spec)
        });
    let (c, h) = (clients.clone(), host.clone());
    doc("delete_cluster", &["name: &str", "()"], "Starts deleting a cluster (its node groups must be gone: ResourceInUseException otherwise).")
        .set_into_module(eks, move |ctx: NativeCallContext, name: &str| -> Result {
            journaled(&h, ctx.call_position(), Change::new(format!("eks::delete_cluster {name}")).on(format!("cluster/{name}")).running("", 0, 0), None, || call(&h, ctx.call_position(), || c.delete_cluster(name))).map(|()| unit())
        });
}

fn create_cluster(h: &Host, c: &AwsClients, position: Position, spec: &Map) -> Result {
    let s = Spec::new(
        spec,
        "eks::create_cluster",
        &[
            "name",
            "version",
            "role_arn",
            "subnets",
            "security_groups",
            "secrets_key",
        ],
        position,
    )?;
    let cluster = ClusterSpec {
        name: s.required("name")?,
        version: s.string("version")?,
        role_arn: s.required("role_arn")?,
        subnets: s.strings("subnets")?,
        security_groups: s.strings("security_groups")?,
        secrets_key: s.string("secrets_key")?,
    };
    let change = Change::new(format!("eks::create_cluster {}", cluster.name))
        .on(format!("cluster/{}", cluster.name))
        .running("eks-cluster", 1, 0);
    Ok(json(&journaled(h, position, change, None, || {
        call(h, position, || c.create_cluster(&cluster))
    })?))
}

fn install_cluster_waits(eks: &mut Module, clients: &Arc<AwsClients>, host: &Arc<Host>) {
    waiter!(
        eks,
        clients,
        host,
        "wait_cluster_active",
        30 * MINUTE,
        "the cluster is ACTIVE",
        (name) => EksResource::Cluster(name),
        wait_active
    );
    waiter!(
        eks,
        clients,
        host,
        "wait_cluster_deleted",
        30 * MINUTE,
        "the cluster is gone",
        (name) => EksResource::Cluster(name),
        wait_deleted
    );
}

/// Registers creating and deleting managed node groups.
fn install_nodegroups(eks: &mut Module, clients: &Arc<AwsClients>, host: &Arc<Host>) {
    let (c, h) = (clients.clone(), host.clone());
    doc("create_nodegroup", &["cluster: &str", "spec: Map", "Map"], "Starts creating a managed node group: #{ name, instance_type, ami_type, desired, min, max, subnets,\nnode_role, labels: #{...}, taints: [#{ key, value, effect: \"NoSchedule\" }], launch_template (a name:\nits instances start from its default version: EFA interfaces, placement group), repair (node auto repair,\nas eks::update_node_repair takes it) }.")
        .set_into_module(eks, move |ctx: NativeCallContext, cluster: &str, spec: Map| -> Result {
            create_nodegroup(&h, &c, ctx.call_position(), cluster, &spec)
        });
    let (c, h) = (clients.clone(), host.clone());
    doc(
        "delete_nodegroup",
        &["cluster: &str", "name: &str", "()"],
        "Starts deleting a node group; its instances terminate and their nodes leave.",
    )
    .set_into_module(
        eks,
        move |ctx: NativeCallContext, cluster: &str, name: &str| -> Result {
            // Journaled like every mutation, though nothing can undo it.
            let change = Change::new(format!("eks::delete_nodegroup {cluster} {name}"))
                .on(format!("nodegroup/{cluster}/{name}"))
                .running("", 0, 0);
            journaled(&h, ctx.call_position(), change, None, || {
                call(&h, ctx.call_position(), || {
                    c.delete_nodegroup(cluster, name)
                })
            })
            .map(|()| unit())
        },
    );
}

fn create_nodegroup(
    h: &Host,
    c: &AwsClients,
    position: Position,
    cluster: &str,
    spec: &Map,
) -> Result {
    let nodegroup = nodegroup_spec(spec, position)?;
    let mut change = Change::new(format!(
        "eks::create_nodegroup {cluster} {} ({} x {})",
        nodegroup.name, nodegroup.desired, nodegroup.instance_type
    ))
    .on(format!("nodegroup/{cluster}/{}", nodegroup.name))
    .running(&nodegroup.instance_type, i64::from(nodegroup.desired), 0);
    if crate::lab::is_gpu_node_group(
        &nodegroup.ami_type,
        std::iter::once(nodegroup.instance_type.as_str()),
    ) {
        change = change.sizing_gpus(i64::from(nodegroup.desired));
    }
    Ok(json(&journaled(h, position, change, None, || {
        call(h, position, || c.create_nodegroup(cluster, &nodegroup))
    })?))
}

/// What `eks::create_nodegroup`'s spec may hold.
const NODEGROUP_FIELDS: &[&str] = &[
    "name",
    "instance_type",
    "ami_type",
    "desired",
    "min",
    "max",
    "subnets",
    "node_role",
    "labels",
    "taints",
    "launch_template",
    "repair",
];

/// A node group as `eks::create_nodegroup` takes it, with its defaults filled in.
fn nodegroup_spec(spec: &Map, position: Position) -> Result<NodegroupSpec> {
    let s = Spec::new(spec, "eks::create_nodegroup", NODEGROUP_FIELDS, position)?;
    let taints = taints(&s, position)?;
    Ok(NodegroupSpec {
        name: s.required("name")?,
        instance_type: s
            .string("instance_type")?
            .unwrap_or_else(|| "t3.medium".into()),
        ami_type: s
            .string("ami_type")?
            .unwrap_or_else(|| "AL2023_x86_64_STANDARD".into()),
        desired: int32(&s, "desired", 1)?,
        min: int32(&s, "min", 1)?,
        max: int32(&s, "max", 2)?,
        subnets: s.strings("subnets")?,
        node_role: s.required("node_role")?,
        labels: s.pairs("labels")?,
        taints,
        launch_template: s.string("launch_template")?,
        repair: match spec.get("repair").filter(|v| !v.is_unit()) {
            None => None,
            Some(v) => {
                let map = v.read_lock::<Map>().ok_or_else(|| {
                    s.error(format!(
                        "`repair` is a map {}",
                        super::eks_repair::REPAIR_DOC
                    ))
                })?;
                Some(super::eks_repair::node_repair_of(
                    &map,
                    "eks::create_nodegroup",
                    position,
                )?)
            }
        },
    })
}

/// A node group's taints: (key, value, effect), the effect NoSchedule unless given.
fn taints(s: &Spec<'_>, position: Position) -> Result<Vec<(String, String, String)>> {
    let mut taints = Vec::new();
    for taint in s.maps("taints")? {
        let t = Spec::new(
            &taint,
            "eks::create_nodegroup: taint",
            &["key", "value", "effect"],
            position,
        )?;
        taints.push((
            t.required("key")?,
            t.string("value")?.unwrap_or_default(),
            t.string("effect")?.unwrap_or_else(|| "NoSchedule".into()),
        ));
    }
    Ok(taints)
}

fn install_nodegroup_waits(eks: &mut Module, clients: &Arc<AwsClients>, host: &Arc<Host>) {
    waiter!(
        eks,
        clients,
        host,
        "wait_nodegroup_active",
        30 * MINUTE,
        "the node group is ACTIVE",
        (cluster, name) => EksResource::Nodegroup { cluster, name },
        wait_active
    );
    waiter!(
        eks,
        clients,
        host,
        "wait_nodegroup_deleted",
        30 * MINUTE,
        "the node group is gone",
        (cluster, name) => EksResource::Nodegroup { cluster, name },
        wait_deleted
    );
}

/// Registers installing and removing add-ons.
fn install_addons(eks: &mut Module, clients: &Arc<AwsClients>, host: &Arc<Host>) {
    let (c, h) = (clients.clone(), host.clone());
    doc("create_addon", &["cluster: &str", "name: &str", "Map"], "Starts installing an add-on at its default version; returns #{ addon_name, addon_version, status }.")
        .set_into_module(eks, move |ctx: NativeCallContext, cluster: &str, name: &str| -> Result {
            create_addon(&h, &c, ctx.call_position(), (cluster, name), None)
        });
    let (c, h) = (clients.clone(), host.clone());
    doc(
        "create_addon",
        &["cluster: &str", "name: &str", "options: Map", "Map"],
        "The same; option `version` (\"v1.21.1-eksbuild.7\").",
    )
    .set_into_module(
        eks,
        move |ctx: NativeCallContext, cluster: &str, name: &str, options: Map| -> Result {
            let position = ctx.call_position();
            let s = Spec::new(&options, "eks::create_addon", &["version"], position)?;
            let version = s.string("version")?;
            create_addon(&h, &c, position, (cluster, name), version.as_deref())
        },
    );
    let (c, h) = (clients.clone(), host.clone());
    doc(
        "delete_addon",
        &["cluster: &str", "name: &str", "()"],
        "Starts removing an add-on and what it installed.",
    )
    .set_into_module(
        eks,
        move |ctx: NativeCallContext, cluster: &str, name: &str| -> Result {
            let change = Change::new(format!("eks::delete_addon {cluster} {name}"))
                .on(format!("addon/{cluster}/{name}"));
            journaled(&h, ctx.call_position(), change, None, || {
                call(&h, ctx.call_position(), || c.delete_addon(cluster, name))
            })
            .map(|()| unit())
        },
    );
}

/// Installs an add-on, at `version` or its default one.
fn create_addon(
    h: &Host,
    c: &AwsClients,
    position: Position,
    (cluster, name): (&str, &str),
    version: Option<&str>,
) -> Result {
    let change = Change::new(format!("eks::create_addon {cluster} {name}"))
        .on(format!("addon/{cluster}/{name}"));
    Ok(json(&journaled(h, position, change, None, || {
        call(h, position, || c.create_addon(cluster, name, version))
    })?))
}

fn install_addon_waits(eks: &mut Module, clients: &Arc<AwsClients>, host: &Arc<Host>) {
    waiter!(
        eks,
        clients,
        host,
        "wait_addon_active",
        15 * MINUTE,
        "the add-on is ACTIVE",
        (cluster, name) => EksResource::Addon { cluster, name },
        wait_active
    );
    waiter!(
        eks,
        clients,
        host,
        "wait_addon_deleted",
        15 * MINUTE,
        "the add-on is gone",
        (cluster, name) => EksResource::Addon { cluster, name },
        wait_deleted
    );
}
