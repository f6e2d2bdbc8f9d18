//! `eks::`, `ec2::` and `iam::`: the lab's AWS resources as plain maps with the aws CLI's field
//! names in snake_case. Errors are catchable by their AWS code (`e.code`).

use std::sync::Arc;
use std::time::Duration;

use rhai::{Dynamic, Engine, EvalAltResult, Map, Module, NativeCallContext, Position};

use super::args::{causes, known_options};
use super::journaled::{journal_rule, journaled, rule_action, shown_rule};
use crate::clients::aws::{AwsClients, AwsError, RuleSpec, is_transient};
use crate::guard::Change;
use crate::journal::Undo;
use crate::script::{Extension, Host, documented as doc, duration_value, from_json, usage_error};

type Result<T = Dynamic> = std::result::Result<T, Box<EvalAltResult>>;

pub struct AwsBindings {
    clients: Arc<AwsClients>,
}

impl AwsBindings {
    pub fn new(clients: Arc<AwsClients>) -> Self {
        Self { clients }
    }
}

pub(super) fn aws_error(error: AwsError, position: Position) -> Box<EvalAltResult> {
    let mut map = Map::new();
    map.insert("code".into(), Dynamic::from(error.code.clone()));
    map.insert("reason".into(), Dynamic::from(error.code.clone()));
    map.insert("operation".into(), Dynamic::from(error.operation.clone()));
    map.insert("message".into(), Dynamic::from(error.message.clone()));
    map.insert("causes".into(), causes(&error.causes));
    EvalAltResult::ErrorRuntime(Dynamic::from_map(map), position).into()
}

/// One client call for the script. Inside a cleanup, a call that AWS throttles or fails on
/// its side (past the SDK's own attempts) is made again, on the run's clock, until the
/// cleanup's deadline: a cleanup must not give up on a busy API.
pub(super) fn call<T, F, Fut>(host: &Host, position: Position, make: F) -> Result<T>
where
    F: Fn() -> Fut,
    Fut: Future<Output = std::result::Result<T, AwsError>>,
{
    host.block_on(position, persist(host, make))?
        .map_err(|e| aws_error(e, position))
}

async fn persist<T, F, Fut>(host: &Host, make: F) -> std::result::Result<T, AwsError>
where
    F: Fn() -> Fut,
    Fut: Future<Output = std::result::Result<T, AwsError>>,
{
    let mut pause = Duration::from_secs(2);
    loop {
        let outcome = make().await;
        let deadline = match &outcome {
            Err(error) if is_transient(&error.code) => host.cleanup_deadline(),
            _ => None,
        };
        match (outcome, deadline) {
            (Err(error), Some(deadline)) if host.clock.now() + pause <= deadline => {
                host.log(&format!(
                    "{error}; the cleanup tries again in {}",
                    crate::clock::format_duration(pause)
                ));
                host.clock.sleep(pause).await;
                pause = (pause * 2).min(Duration::from_secs(30));
            }
            (outcome, _) => return outcome,
        }
    }
}

pub(super) fn json(value: &serde_json::Value) -> Dynamic {
    from_json(value)
}

/// A rule as a map: `#{ direction, protocol, port | ports | from_port + to_port, source,
/// description }`; `source` is a CIDR, a group id, or `self`. The maps `ec2::rules` returns fit.
fn rule_spec(group: &str, rule: &Map, position: Position) -> Result<RuleSpec> {
    known_options(
        rule,
        "ec2 rule",
        &[
            "id",
            "direction",
            "protocol",
            "port",
            "ports",
            "from_port",
            "to_port",
            "source",
            "description",
        ],
        position,
    )?;
    let text = |key: &str| {
        rule.get(key)
            .filter(|v| !v.is_unit())
            .map(|v| v.to_string())
    };
    let direction = text("direction").unwrap_or_else(|| "ingress".into());
    let egress = match direction.as_str() {
        "ingress" => false,
        "egress" => true,
        other => {
            return Err(usage_error(
                format!("ec2 rule: `direction` is ingress or egress, got {other}"),
                position,
            ));
        }
    };
    let protocol = match text("protocol")
        .unwrap_or_else(|| "tcp".into())
        .to_lowercase()
        .as_str()
    {
        "all" | "-1" => "-1".to_string(),
        p @ ("tcp" | "udp" | "icmp") => p.to_string(),
        other => {
            return Err(usage_error(
                format!("ec2 rule: `protocol` is tcp, udp, icmp or all, got {other}"),
                position,
            ));
        }
    };
    let int = |key: &str| -> Result<Option<i32>> {
        match rule.get(key) {
            None => Ok(None),
            Some(v) => v.as_int().map(|i| Some(i as i32)).map_err(|t| {
                usage_error(
                    format!("ec2 rule: `{key}` must be an integer, got {t}"),
                    position,
                )
            }),
        }
    };
    let (from, to) = if let Some(port) = int("port")? {
        (port, port)
    } else if let Some(ports) = text("ports") {
        let (a, b) = ports
            .split_once('-')
            .unwrap_or((ports.as_str(), ports.as_str()));
        let parse = |p: &str| {
            p.trim().parse::<i32>().map_err(|_| {
                usage_error(
                    format!("ec2 rule: `ports` is like \"1025-65535\", got {ports}"),
                    position,
                )
            })
        };
        (parse(a)?, parse(b)?)
    } else {
        (
            int("from_port")?.unwrap_or(-1),
            int("to_port")?.unwrap_or(-1),
        )
    };
    if protocol != "-1" && (from < 0 || to < from || to > 65535) {
        return Err(usage_error(
            format!("ec2 rule: a {protocol} rule needs ports within 0-65535, got {from}-{to}"),
            position,
        ));
    }
    let source = text("source").ok_or_else(|| usage_error("ec2 rule: `source` is required (a CIDR such as \"192.168.0.0/16\", a group id, or \"self\")", position))?;
    let (cidr, group_source) = match source.as_str() {
        "self" => (None, Some(group.to_string())),
        s if s.starts_with("sg-") => (None, Some(s.to_string())),
        s if s.contains('/') => (Some(s.to_string()), None),
        other => {
            return Err(usage_error(
                format!("ec2 rule: `source` {other} is not a CIDR, a group id or \"self\""),
                position,
            ));
        }
    };
    Ok(RuleSpec {
        egress,
        protocol,
        from_port: from,
        to_port: to,
        cidr,
        group: group_source,
        description: text("description").filter(|d| !d.is_empty()),
    })
}

impl Extension for AwsBindings {
    fn install(&self, engine: &mut Engine, host: &Arc<Host>) {
        let (c, h) = (self.clients.clone(), host.clone());
        macro_rules! clone {
            () => {
                (c.clone(), h.clone())
            };
        }

        let mut eks = Module::new();
        let (clients, host) = clone!();
        doc(
            "pod_identity_associations",
            &["cluster: &str", "Array"],
            "A cluster's Pod Identity associations: [#{ association_id, namespace, service_account, role_arn }].",
        )
        .set_into_module(
            &mut eks,
            move |ctx: NativeCallContext, cluster: &str| -> Result {
                Ok(json(&serde_json::json!(call(
                    &host,
                    ctx.call_position(),
                    || clients.pod_identity_associations(cluster)
                )?)))
            },
        );
        let (clients, host) = clone!();
        doc("cluster", &["name: &str", "Map"], "describe-cluster: #{ name, status, version, endpoint, platform_version, identity: #{ oidc: #{ issuer } }, resources_vpc_config, node_security_group, ... }.")
            .set_into_module(&mut eks, move |ctx: NativeCallContext, name: &str| -> Result {
                Ok(json(&call(&host, ctx.call_position(), || clients.cluster(name))?))
            });
        let (clients, host) = clone!();
        doc(
            "nodegroups",
            &["cluster: &str", "Array"],
            "The names of a cluster's node groups.",
        )
        .set_into_module(
            &mut eks,
            move |ctx: NativeCallContext, cluster: &str| -> Result {
                Ok(json(&serde_json::json!(call(
                    &host,
                    ctx.call_position(),
                    || clients.nodegroups(cluster)
                )?)))
            },
        );
        let (clients, host) = clone!();
        doc("nodegroup", &["cluster: &str", "name: &str", "Map"], "describe-nodegroup: #{ status, scaling_config: #{ min_size, max_size, desired_size }, instance_types, labels, taints, subnets, ... }.")
            .set_into_module(&mut eks, move |ctx: NativeCallContext, cluster: &str, name: &str| -> Result {
                Ok(json(&call(&host, ctx.call_position(), || clients.nodegroup(cluster, name))?))
            });
        let (clients, host) = clone!();
        doc(
            "addons",
            &["cluster: &str", "Map"],
            "Add-ons by name: #{ \"vpc-cni\": #{ version, status, configuration_values }, ... }\n(configuration_values: the add-on's JSON settings as a string, only when it has some).",
        )
        .set_into_module(
            &mut eks,
            move |ctx: NativeCallContext, cluster: &str| -> Result {
                Ok(json(&call(&host, ctx.call_position(), || {
                    clients.addons(cluster)
                })?))
            },
        );
        let (clients, host) = clone!();
        doc(
            "scale_nodegroup",
            &["cluster: &str", "name: &str", "desired: i64", "Map"],
            "Sets a node group's desired size and waits (on the run's clock, up to 20m) until the update is\nSuccessful; returns the update #{ id, status }. An update already in flight is waited out first;\na group that already has the size is left alone (status \"Unchanged\", id ()). Waiting for the\nNodes is k8s::wait_nodes's job.",
        )
        .set_into_module(&mut eks, move |ctx: NativeCallContext, cluster: &str, name: &str, desired: i64| -> Result {
            scale(&host, &clients, ctx.call_position(), (cluster, name), desired, None, Some(Duration::from_secs(1200)))
        });
        let (clients, host) = clone!();
        doc(
            "scale_nodegroup",
            &[
                "cluster: &str",
                "name: &str",
                "desired: i64",
                "options: Map",
                "Map",
            ],
            "The same; options `wait`: a timeout (\"30m\"), or false to return at once; `max`: the group's\nmaximum size, set in the same update (a recover puts the old one back).",
        )
        .set_into_module(
            &mut eks,
            move |ctx: NativeCallContext,
                  cluster: &str,
                  name: &str,
                  desired: i64,
                  options: Map|
                  -> Result {
                let position = ctx.call_position();
                known_options(&options, "eks::scale_nodegroup", &["wait", "max"], position)?;
                let max = match options.get("max") {
                    None => None,
                    Some(v) if v.is_unit() => None,
                    Some(v) => Some(v.as_int().ok().and_then(|m| i32::try_from(m).ok()).filter(|m| *m >= 1).ok_or_else(|| {
                        usage_error(format!("eks::scale_nodegroup: `max` is a size of at least 1, got {v}"), position)
                    })?),
                };
                let wait = match options.get("wait") {
                    None => Some(Duration::from_secs(1200)),
                    Some(v) if v.as_bool() == Ok(false) => None,
                    Some(v) => Some(duration_value(v, "eks::scale_nodegroup: `wait`", position)?),
                };
                scale(&host, &clients, position, (cluster, name), desired, max, wait)
            },
        );
        super::aws_lifecycle::install_eks(&mut eks, &c, &h);
        engine.register_static_module("eks", eks.into());

        let mut ec2 = Module::new();
        let (clients, host) = clone!();
        doc("security_group", &["id: &str", "Map"], "A security group: #{ group_id, group_name, description, vpc_id, ingress_permissions, egress_permissions, tags }.")
            .set_into_module(&mut ec2, move |ctx: NativeCallContext, id: &str| -> Result {
                Ok(json(&call(&host, ctx.call_position(), || clients.security_group(id))?))
            });
        let (clients, host) = clone!();
        doc("rules", &["group: &str", "Array"], "A group's rules in one shape: #{ id, direction, protocol, from_port, to_port, source, description },\nsource a CIDR, a group id or \"self\"; ingress first, ordered by port.")
            .set_into_module(&mut ec2, move |ctx: NativeCallContext, group: &str| -> Result {
                Ok(json(&serde_json::json!(call(&host, ctx.call_position(), || clients.rules(group))?)))
            });
        let (clients, host) = clone!();
        doc("authorize", &["group: &str", "rule: Map", "String"], "Adds a rule (#{ direction, protocol, port | ports: \"1025-65535\", source, description }); returns its id.")
            .set_into_module(&mut ec2, move |ctx: NativeCallContext, group: &str, rule: Map| -> Result<String> {
                let position = ctx.call_position();
                let spec = rule_spec(group, &rule, position)?;
                let journal_rule = journal_rule(&spec);
                let action = rule_action("authorize", group, &journal_rule);
                let undo = Undo::Revoke { group: group.to_string(), rule: journal_rule };
                journaled(&host, position, Change::new(action).on(format!("sg/{group}")), Some(undo), || call(&host, position, || clients.authorize(group, &spec)))
            });
        let (clients, host) = clone!();
        doc("revoke", &["group: &str", "rule: Dynamic", "()"], "Removes a rule, given as a map like authorize's (or one from ec2::rules) or as its id (\"sgr-...\").")
            .set_into_module(&mut ec2, move |ctx: NativeCallContext, group: &str, rule: Dynamic| -> Result<()> {
                let position = ctx.call_position();
                if let Some(id) = rule.read_lock::<rhai::ImmutableString>() {
                    // The journal needs the whole rule to put it back: read it first.
                    let rules = call(&host, position, || clients.rules(group))?;
                    let undo = rules
                        .iter()
                        .find(|r| r["id"].as_str() == Some(id.as_str()))
                        .map(|r| Undo::Authorize { group: group.to_string(), rule: shown_rule(group, r) });
                    let action = match &undo {
                        Some(Undo::Authorize { rule, .. }) => rule_action("revoke", group, rule),
                        _ => format!("ec2::revoke {group} {}", id.as_str()),
                    };
                    return journaled(&host, position, Change::new(action).on(format!("sg/{group}")), undo, || call(&host, position, || clients.revoke_rule_id(group, &id)));
                }
                let map = rule.read_lock::<Map>().map(|m| m.clone()).ok_or_else(|| usage_error("ec2::revoke takes a rule map or a rule id", position))?;
                let spec = rule_spec(group, &map, position)?;
                let journal_rule = journal_rule(&spec);
                let action = rule_action("revoke", group, &journal_rule);
                let undo = Undo::Authorize { group: group.to_string(), rule: journal_rule };
                journaled(&host, position, Change::new(action).on(format!("sg/{group}")), Some(undo), || call(&host, position, || clients.revoke(group, &spec)))
            });
        let (clients, host) = clone!();
        doc(
            "reachable",
            &["flow: Map", "Map"],
            "Whether security groups let a flow through: #{ from, to, proto (default \"tcp\"), port }, where from and\nto are instance ids, group ids, or arrays of them, or a network outside the VPC (\"10.80.0.0/16\",\nhybrid nodes' remote network: only the VPC side's rules are judged). Answers #{ allowed, egress_rules, ingress_rules, reason }.",
        )
        .set_into_module(&mut ec2, move |ctx: NativeCallContext, flow: Map| -> Result {
            let position = ctx.call_position();
            known_options(&flow, "ec2::reachable", &["from", "to", "proto", "port"], position)?;
            let ids = |key: &str| -> Result<Vec<String>> {
                let value = flow.get(key).ok_or_else(|| usage_error(format!("ec2::reachable: `{key}` is required (an instance id, a group id, or an array of them)"), position))?;
                if let Some(one) = value.read_lock::<rhai::ImmutableString>() {
                    return Ok(vec![one.to_string()]);
                }
                value
                    .read_lock::<rhai::Array>()
                    .map(|items| items.iter().map(|i| i.to_string()).collect())
                    .ok_or_else(|| usage_error(format!("ec2::reachable: `{key}` is an id or an array of ids"), position))
            };
            let protocol = flow.get("proto").map_or_else(|| "tcp".to_string(), |p| p.to_string());
            let port = flow
                .get("port")
                .ok_or_else(|| usage_error("ec2::reachable: `port` is required", position))?
                .as_int()
                .map_err(|t| usage_error(format!("ec2::reachable: `port` must be an integer, got {t}"), position))?;
            let (from, to) = (ids("from")?, ids("to")?);
            let verdict = call(&host, position, || clients.reachable(&from, &to, &protocol, port as i32))?;
            Ok(json(&serde_json::to_value(verdict).unwrap_or_default()))
        });
        let (clients, host) = clone!();
        doc("subnets", &["Array"], "Subnets: #{ subnet_id, cidr_block, availability_zone, vpc_id, map_public_ip_on_launch, name }, by CIDR.")
            .set_into_module(&mut ec2, move |ctx: NativeCallContext| -> Result {
                Ok(json(&serde_json::json!(call(&host, ctx.call_position(), || clients.subnets())?)))
            });
        let (clients, host) = clone!();
        doc("vpcs", &["Array"], "VPCs: #{ vpc_id, cidr_block, state }.").set_into_module(
            &mut ec2,
            move |ctx: NativeCallContext| -> Result {
                Ok(json(&serde_json::json!(call(
                    &host,
                    ctx.call_position(),
                    || clients.vpcs()
                )?)))
            },
        );
        let (clients, host) = clone!();
        doc("instances", &["Array"], "Instances: #{ instance_id, state, instance_type, availability_zone, private_ip_address, subnet_id, security_groups, nodegroup }.")
            .set_into_module(&mut ec2, move |ctx: NativeCallContext| -> Result {
                Ok(json(&serde_json::json!(call(&host, ctx.call_position(), || clients.instances())?)))
            });
        super::aws_lifecycle::install_ec2(&mut ec2, &c, &h);
        super::aws_blueprint::install_addresses(&mut ec2, &c, &h);
        engine.register_static_module("ec2", ec2.into());

        let mut iam = Module::new();
        let (clients, host) = clone!();
        doc(
            "oidc_providers",
            &["Array"],
            "IAM OIDC providers: #{ arn, url, client_ids, thumbprints }.",
        )
        .set_into_module(&mut iam, move |ctx: NativeCallContext| -> Result {
            Ok(json(&serde_json::json!(call(
                &host,
                ctx.call_position(),
                || clients.oidc_providers()
            )?)))
        });
        let (clients, host) = clone!();
        doc(
            "oidc_provider_for",
            &["issuer: &str", "Map"],
            "The IAM OIDC provider of a cluster's issuer URL; NoSuchEntity when there is none.",
        )
        .set_into_module(
            &mut iam,
            move |ctx: NativeCallContext, issuer: &str| -> Result {
                Ok(json(&call(&host, ctx.call_position(), || {
                    clients.oidc_provider_for(issuer)
                })?))
            },
        );
        super::aws_lifecycle::install_iam(&mut iam, &c, &h);
        super::aws_blueprint::install_roles(&mut iam, &c, &h);
        engine.register_static_module("iam", iam.into());
        engine.register_static_module("cost", super::aws_lifecycle::cost_module(&c, &h).into());
        engine.register_static_module("kms", super::aws_blueprint::kms_module(&c, &h).into());
        engine.register_static_module("facts", super::hybrid_facts::module().into());
    }
}

fn scale(
    host: &Host,
    clients: &AwsClients,
    position: Position,
    (cluster, name): (&str, &str),
    desired: i64,
    max: Option<i32>,
    wait: Option<Duration>,
) -> Result {
    let desired = i32::try_from(desired).map_err(|_| {
        usage_error(
            format!("eks::scale_nodegroup: desired size {desired} is out of range"),
            position,
        )
    })?;
    let clock = host.clock.clone();
    // The size before, so that a recover can put it back.
    let before = call(host, position, || clients.nodegroup(cluster, name))?;
    let previous_max = before["scaling_config"]["max_size"]
        .as_i64()
        .and_then(|m| i32::try_from(m).ok());
    let undo = before["scaling_config"]["desired_size"]
        .as_i64()
        .and_then(|d| i32::try_from(d).ok())
        .map(|previous| Undo::ScaleNodegroup {
            cluster: cluster.to_string(),
            nodegroup: name.to_string(),
            desired: previous,
            max: max.and(previous_max).filter(|m| Some(*m) != max),
        });
    let action = match max {
        Some(max) => format!("eks::scale_nodegroup {cluster} {name} to {desired} (max {max})"),
        None => format!("eks::scale_nodegroup {cluster} {name} to {desired}"),
    };
    let mut change = Change::new(action).on(format!("nodegroup/{cluster}/{name}"));
    if let (Some(kind), Some(previous)) = (
        before["instance_types"][0].as_str(),
        before["scaling_config"]["desired_size"].as_i64(),
    ) {
        change = change.running(kind, i64::from(desired), previous);
    }
    if is_gpu_group(&before) {
        change = change.sizing_gpus(i64::from(desired));
    }
    let update = journaled(host, position, change, undo, || {
        call(host, position, || {
            clients.scale_nodegroup_to(cluster, name, desired, max, wait, clock.as_ref())
        })
    })?;
    Ok(json(&update))
}

/// A node group as `eks::nodegroup` describes it runs GPU nodes.
fn is_gpu_group(group: &serde_json::Value) -> bool {
    let types = group["instance_types"].as_array();
    crate::lab::is_gpu_node_group(
        group["ami_type"].as_str().unwrap_or_default(),
        types.into_iter().flatten().filter_map(|t| t.as_str()),
    )
}
