//! The create, delete and wait half of `eks::`, `ec2::` and `iam::` (what the lab blueprint in
//! stdlib/lab.rhai builds and tears down), and `cost::`.

use super::journaled::journaled;
use std::sync::Arc;
use std::time::Duration;

use rhai::{Dynamic, EvalAltResult, Map, Module, NativeCallContext};

use super::aws::{call, json};
use super::options::Spec;
use crate::clients::aws::{AwsClients, ClusterSpec, EksResource, NodegroupSpec, SubnetSpec};
use crate::guard::Change;
use crate::lab::cost::PRICES;
use crate::script::{Host, documented as doc, duration_value};

type Result<T = Dynamic> = std::result::Result<T, Box<EvalAltResult>>;

fn unit() -> Dynamic {
    Dynamic::UNIT
}

fn int32(spec: &Spec<'_>, key: &str, default: i32) -> Result<i32> {
    match spec.int(key)? {
        None => Ok(default),
        Some(v) => i32::try_from(v).map_err(|_| spec.error(format!("`{key}` {v} is out of range"))),
    }
}

/// Registers `name(args..)` and `name(args.., timeout)` for a waiter: the client method gets
/// what the arguments name (`(cluster, name) => EksResource::Addon { cluster, name }`), the
/// timeout and the run's clock.
macro_rules! waiter {
    ($module:expr, $clients:expr, $host:expr, $name:literal, $default:expr, $what:literal, ($($arg:ident),+) => $resource:expr, $method:ident) => {{
        let params: &[&str] = &[$(concat!(stringify!($arg), ": &str")),+, "()"];
        let params_timeout: &[&str] = &[$(concat!(stringify!($arg), ": &str")),+, "timeout: Dynamic", "()"];
        let (clients, host) = ($clients.clone(), $host.clone());
        doc($name, params, concat!("Waits on the run's clock until ", $what, "; a state it will not leave raises WaiterFailed,\nrunning out of time Timeout."))
            .set_into_module($module, move |ctx: NativeCallContext, $($arg: &str),+| -> Result<()> {
                let clock = host.clock.clone();
                call(&host, ctx.call_position(), || clients.$method($resource, $default, clock.as_ref()))
            });
        let (clients, host) = ($clients.clone(), $host.clone());
        doc($name, params_timeout, "The same with a timeout (\"30m\", or milliseconds).")
            .set_into_module($module, move |ctx: NativeCallContext, $($arg: &str),+, timeout: Dynamic| -> Result<()> {
                let position = ctx.call_position();
                let timeout = duration_value(&timeout, concat!($name, ": timeout"), position)?;
                let clock = host.clock.clone();
                call(&host, position, || clients.$method($resource, timeout, clock.as_ref()))
            });
    }};
}

const MINUTE: Duration = Duration::from_secs(60);

pub(super) fn install_eks(eks: &mut Module, clients: &Arc<AwsClients>, host: &Arc<Host>) {
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
            let position = ctx.call_position();
            let s = Spec::new(&spec, "eks::create_cluster", &["name", "version", "role_arn", "subnets", "security_groups", "secrets_key"], position)?;
            let cluster = ClusterSpec {
                name: s.required("name")?,
                version: s.string("version")?,
                role_arn: s.required("role_arn")?,
                subnets: s.strings("subnets")?,
                security_groups: s.strings("security_groups")?,
                secrets_key: s.string("secrets_key")?,
            };
            Ok(json(&journaled(&h, position, Change::new(format!("eks::create_cluster {}", cluster.name)).on(format!("cluster/{}", cluster.name)).running("eks-cluster", 1, 0), None, || call(&h, position, || c.create_cluster(&cluster)))?))
        });
    let (c, h) = (clients.clone(), host.clone());
    doc("delete_cluster", &["name: &str", "()"], "Starts deleting a cluster (its node groups must be gone: ResourceInUseException otherwise).")
        .set_into_module(eks, move |ctx: NativeCallContext, name: &str| -> Result {
            journaled(&h, ctx.call_position(), Change::new(format!("eks::delete_cluster {name}")).on(format!("cluster/{name}")).running("", 0, 0), None, || call(&h, ctx.call_position(), || c.delete_cluster(name))).map(|()| unit())
        });
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

    let (c, h) = (clients.clone(), host.clone());
    doc("create_nodegroup", &["cluster: &str", "spec: Map", "Map"], "Starts creating a managed node group: #{ name, instance_type, ami_type, desired, min, max, subnets,\nnode_role, labels: #{...}, taints: [#{ key, value, effect: \"NoSchedule\" }] }.")
        .set_into_module(eks, move |ctx: NativeCallContext, cluster: &str, spec: Map| -> Result {
            let position = ctx.call_position();
            let s = Spec::new(&spec, "eks::create_nodegroup", &["name", "instance_type", "ami_type", "desired", "min", "max", "subnets", "node_role", "labels", "taints"], position)?;
            let mut taints = Vec::new();
            for taint in s.maps("taints")? {
                let t = Spec::new(&taint, "eks::create_nodegroup: taint", &["key", "value", "effect"], position)?;
                taints.push((t.required("key")?, t.string("value")?.unwrap_or_default(), t.string("effect")?.unwrap_or_else(|| "NoSchedule".into())));
            }
            let nodegroup = NodegroupSpec {
                name: s.required("name")?,
                instance_type: s.string("instance_type")?.unwrap_or_else(|| "t3.medium".into()),
                ami_type: s.string("ami_type")?.unwrap_or_else(|| "AL2023_x86_64_STANDARD".into()),
                desired: int32(&s, "desired", 1)?,
                min: int32(&s, "min", 1)?,
                max: int32(&s, "max", 2)?,
                subnets: s.strings("subnets")?,
                node_role: s.required("node_role")?,
                labels: s.pairs("labels")?,
                taints,
            };
            let mut change = Change::new(format!("eks::create_nodegroup {cluster} {} ({} x {})", nodegroup.name, nodegroup.desired, nodegroup.instance_type))
                .on(format!("nodegroup/{cluster}/{}", nodegroup.name))
                .running(&nodegroup.instance_type, i64::from(nodegroup.desired), 0);
            if crate::lab::is_gpu_node_group(&nodegroup.ami_type, std::iter::once(nodegroup.instance_type.as_str())) {
                change = change.sizing_gpus(i64::from(nodegroup.desired));
            }
            Ok(json(&journaled(&h, position, change, None, || call(&h, position, || c.create_nodegroup(cluster, &nodegroup)))?))
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

    let (c, h) = (clients.clone(), host.clone());
    doc("create_addon", &["cluster: &str", "name: &str", "Map"], "Starts installing an add-on at its default version; returns #{ addon_name, addon_version, status }.")
        .set_into_module(eks, move |ctx: NativeCallContext, cluster: &str, name: &str| -> Result {
            Ok(json(&journaled(&h, ctx.call_position(), Change::new(format!("eks::create_addon {cluster} {name}")).on(format!("addon/{cluster}/{name}")), None, || call(&h, ctx.call_position(), || c.create_addon(cluster, name, None)))?))
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
            Ok(json(&journaled(
                &h,
                position,
                Change::new(format!("eks::create_addon {cluster} {name}"))
                    .on(format!("addon/{cluster}/{name}")),
                None,
                || {
                    call(&h, position, || {
                        c.create_addon(cluster, name, version.as_deref())
                    })
                },
            )?))
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

pub(super) fn install_ec2(ec2: &mut Module, clients: &Arc<AwsClients>, host: &Arc<Host>) {
    let (c, h) = (clients.clone(), host.clone());
    doc(
        "create_vpc",
        &["spec: Map", "String"],
        "Creates a VPC: #{ cidr, name }; returns its id.",
    )
    .set_into_module(
        ec2,
        move |ctx: NativeCallContext, spec: Map| -> Result<String> {
            let position = ctx.call_position();
            let s = Spec::new(&spec, "ec2::create_vpc", &["cidr", "name"], position)?;
            let (cidr, name) = (s.required("cidr")?, s.string("name")?.unwrap_or_default());
            journaled(
                &h,
                position,
                named_create("ec2::create_vpc", "vpc", &name, &cidr),
                None,
                || call(&h, position, || c.create_vpc(&cidr, &name)),
            )
        },
    );
    let (c, h) = (clients.clone(), host.clone());
    doc("create_subnet", &["spec: Map", "String"], "Creates a subnet: #{ vpc, cidr, zone, name, role: \"public\" | \"private\" }; returns its id. Public ones get the\nkubernetes.io/role/elb tag, private ones kubernetes.io/role/internal-elb.")
        .set_into_module(ec2, move |ctx: NativeCallContext, spec: Map| -> Result<String> {
            let position = ctx.call_position();
            let s = Spec::new(&spec, "ec2::create_subnet", &["vpc", "cidr", "zone", "name", "role"], position)?;
            let public = match s.string("role")?.as_deref() {
                None | Some("private") => false,
                Some("public") => true,
                Some(other) => return Err(s.error(format!("`role` is \"public\" or \"private\", got {other}"))),
            };
            let subnet = SubnetSpec {
                vpc: s.required("vpc")?,
                cidr: s.required("cidr")?,
                zone: s.required("zone")?,
                name: s.string("name")?.unwrap_or_default(),
                public,
            };
            journaled(&h, position, named_create("ec2::create_subnet", "subnet", &subnet.name, &subnet.cidr), None, || call(&h, position, || c.create_subnet(&subnet)))
        });
    let (c, h) = (clients.clone(), host.clone());
    doc("create_nat_gateway", &["spec: Map", "String"], "Creates a public NAT gateway: #{ subnet, name, allocation_id } (real AWS needs the Elastic IP's\nallocation_id); returns its id. ec2::wait_nat_gateway_available waits for it.")
        .set_into_module(ec2, move |ctx: NativeCallContext, spec: Map| -> Result<String> {
            let position = ctx.call_position();
            let s = Spec::new(&spec, "ec2::create_nat_gateway", &["subnet", "name", "allocation_id"], position)?;
            let (subnet, name, allocation) = (s.required("subnet")?, s.string("name")?.unwrap_or_default(), s.string("allocation_id")?);
            journaled(&h, position, Change::new(format!("ec2::create_nat_gateway {name} in {subnet}")).on(format!("nat/{name}")), None, || call(&h, position, || c.create_nat_gateway(&subnet, &name, allocation.as_deref())))
        });
    let (c, h) = (clients.clone(), host.clone());
    doc(
        "nat_gateways",
        &["Array"],
        "NAT gateways: #{ nat_gateway_id, state, subnet_id, vpc_id, name }.",
    )
    .set_into_module(ec2, move |ctx: NativeCallContext| -> Result {
        Ok(json(&serde_json::json!(call(
            &h,
            ctx.call_position(),
            || c.nat_gateways()
        )?)))
    });
    waiter!(
        ec2,
        clients,
        host,
        "wait_nat_gateway_available",
        15 * MINUTE,
        "the NAT gateway is available",
        (id) => id,
        wait_nat_gateway_available
    );
    let (c, h) = (clients.clone(), host.clone());
    doc("create_security_group", &["spec: Map", "String"], "Creates a security group: #{ name, description, vpc }; returns its id. It starts with AWS's\nallow-all egress rule.")
        .set_into_module(ec2, move |ctx: NativeCallContext, spec: Map| -> Result<String> {
            let position = ctx.call_position();
            let s = Spec::new(&spec, "ec2::create_security_group", &["name", "description", "vpc"], position)?;
            let (name, description, vpc) = (s.required("name")?, s.required("description")?, s.required("vpc")?);
            journaled(&h, position, Change::new(format!("ec2::create_security_group {name}")).on(format!("sg/{name}")), None, || call(&h, position, || c.create_security_group(&name, &description, &vpc)))
        });
    let (c, h) = (clients.clone(), host.clone());
    doc(
        "security_groups",
        &["Array"],
        "Every security group: #{ group_id, group_name, description, vpc_id }.",
    )
    .set_into_module(ec2, move |ctx: NativeCallContext| -> Result {
        Ok(json(&serde_json::json!(call(
            &h,
            ctx.call_position(),
            || c.security_groups()
        )?)))
    });
    for (name, what) in [
        (
            "delete_vpc",
            "a VPC (its subnets and groups must be gone: DependencyViolation otherwise)",
        ),
        (
            "delete_subnet",
            "a subnet (no instance or NAT gateway may use it)",
        ),
        ("delete_nat_gateway", "a NAT gateway"),
        (
            "delete_security_group",
            "a security group (nothing may use or reference it)",
        ),
    ] {
        let (c, h) = (clients.clone(), host.clone());
        doc(name, &["id: &str", "()"], &format!("Deletes {what}.")).set_into_module(
            ec2,
            move |ctx: NativeCallContext, id: &str| -> Result {
                let position = ctx.call_position();
                let outcome = match name {
                    "delete_vpc" => journaled(
                        &h,
                        position,
                        Change::new(format!("ec2::delete_vpc {id}")).on(format!("vpc/{id}")),
                        None,
                        || call(&h, position, || c.delete_vpc(id)),
                    ),
                    "delete_subnet" => journaled(
                        &h,
                        position,
                        Change::new(format!("ec2::delete_subnet {id}")).on(format!("subnet/{id}")),
                        None,
                        || call(&h, position, || c.delete_subnet(id)),
                    ),
                    "delete_nat_gateway" => journaled(
                        &h,
                        position,
                        Change::new(format!("ec2::delete_nat_gateway {id}"))
                            .on(format!("nat/{id}")),
                        None,
                        || call(&h, position, || c.delete_nat_gateway(id)),
                    ),
                    _ => journaled(
                        &h,
                        position,
                        Change::new(format!("ec2::delete_security_group {id}"))
                            .on(format!("sg/{id}")),
                        None,
                        || call(&h, position, || c.delete_security_group(id)),
                    ),
                };
                outcome.map(|()| unit())
            },
        );
    }
}

pub(super) fn install_iam(iam: &mut Module, clients: &Arc<AwsClients>, host: &Arc<Host>) {
    let (c, h) = (clients.clone(), host.clone());
    doc("create_oidc_provider", &["spec: Map", "String"], "Registers an OIDC issuer: #{ url, client_ids: [\"sts.amazonaws.com\"], thumbprints: [...] }; returns the ARN.")
        .set_into_module(iam, move |ctx: NativeCallContext, spec: Map| -> Result<String> {
            let position = ctx.call_position();
            let s = Spec::new(&spec, "iam::create_oidc_provider", &["url", "client_ids", "thumbprints"], position)?;
            let (url, ids, thumbprints) = (s.required("url")?, s.strings("client_ids")?, s.strings("thumbprints")?);
            journaled(&h, position, Change::new(format!("iam::create_oidc_provider {url}")).on(format!("oidc-provider/{url}")), None, || call(&h, position, || c.create_oidc_provider(&url, &ids, &thumbprints)))
        });
    let (c, h) = (clients.clone(), host.clone());
    doc(
        "delete_oidc_provider",
        &["arn: &str", "()"],
        "Removes an IAM OIDC provider.",
    )
    .set_into_module(iam, move |ctx: NativeCallContext, arn: &str| -> Result {
        journaled(
            &h,
            ctx.call_position(),
            Change::new(format!("iam::delete_oidc_provider {arn}"))
                .on(format!("oidc-provider/{arn}")),
            None,
            || call(&h, ctx.call_position(), || c.delete_oidc_provider(arn)),
        )
        .map(|()| unit())
    });
}

pub(super) fn cost_module(clients: &Arc<AwsClients>, host: &Arc<Host>) -> Module {
    let mut cost = Module::new();
    let (c, h) = (clients.clone(), host.clone());
    doc("report", &["Map"], "The run's cost so far from the lab twin's meter: #{ currency, hours, lines: [#{ resource, kind, hours,\nusd_per_hour, usd, running }], total_usd, daily_rate_usd, unpriced }. Real AWS has no such\nmeter: there it raises CostMeterUnavailable.")
        .set_into_module(&mut cost, move |ctx: NativeCallContext| -> Result {
            let report = call(&h, ctx.call_position(), || c.cost_report())?;
            Ok(json(&serde_json::to_value(report).unwrap_or_default()))
        });
    doc("prices", &["Array"], "The price table: #{ kind, usd_per_hour, source } for the EKS control plane, NAT gateway,\nt3.medium and g5.xlarge (ap-northeast-2, on demand).")
        .set_into_module(&mut cost, move || -> Result {
            Ok(json(&serde_json::to_value(PRICES).unwrap_or_default()))
        });
    super::hybrid_cost::register(&mut cost);
    cost
}

/// A VPC or subnet about to be made: named by its Name tag, or by its CIDR when it has none.
fn named_create(action: &str, kind: &str, name: &str, cidr: &str) -> Change {
    let id = if name.is_empty() { cidr } else { name };
    Change::new(format!("{action} {}", format!("{name} {cidr}").trim())).on(format!("{kind}/{id}"))
}
