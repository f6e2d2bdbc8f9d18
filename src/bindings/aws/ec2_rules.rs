//! A security-group rule as a script writes it (`#{ direction, protocol, port | ports, source }`)
//! made into the client's spec, and as the journal keeps and describes it.

use rhai::{Map, Position};

use super::call::Result;
use crate::bindings::shared::args::known_options;
use crate::clients::aws::RuleSpec;
use crate::journal::Rule;
use crate::script::usage_error;

/// A rule as a map: `#{ direction, protocol, port | ports | from_port + to_port, source,
/// description }`; `source` is a CIDR, a group id, or `self`. The maps `ec2::rules` returns fit.
pub(super) fn rule_spec(group: &str, rule: &Map, position: Position) -> Result<RuleSpec> {
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
    let egress = is_egress(rule, position)?;
    let protocol = protocol(rule, position)?;
    let (from, to) = ports(rule, position)?;
    if protocol != "-1" && (from < 0 || to < from || to > 65535) {
        return Err(usage_error(
            format!("ec2 rule: a {protocol} rule needs ports within 0-65535, got {from}-{to}"),
            position,
        ));
    }
    let (cidr, group_source) = source(group, rule, position)?;
    Ok(RuleSpec {
        egress,
        protocol,
        from_port: from,
        to_port: to,
        cidr,
        group: group_source,
        description: text(rule, "description").filter(|d| !d.is_empty()),
    })
}

/// A key of the rule as text; absent and `()` are both none.
fn text(rule: &Map, key: &str) -> Option<String> {
    rule.get(key)
        .filter(|v| !v.is_unit())
        .map(|v| v.to_string())
}

/// A key of the rule that must be an integer when given.
fn int(rule: &Map, key: &str, position: Position) -> Result<Option<i32>> {
    match rule.get(key) {
        None => Ok(None),
        Some(v) => v.as_int().map(|i| Some(i as i32)).map_err(|t| {
            usage_error(
                format!("ec2 rule: `{key}` must be an integer, got {t}"),
                position,
            )
        }),
    }
}

/// `direction`: ingress (the default) or egress.
fn is_egress(rule: &Map, position: Position) -> Result<bool> {
    let direction = text(rule, "direction").unwrap_or_else(|| "ingress".into());
    match direction.as_str() {
        "ingress" => Ok(false),
        "egress" => Ok(true),
        other => Err(usage_error(
            format!("ec2 rule: `direction` is ingress or egress, got {other}"),
            position,
        )),
    }
}

/// `protocol` as AWS names it: tcp (the default), udp, icmp, or -1 for all.
fn protocol(rule: &Map, position: Position) -> Result<String> {
    match text(rule, "protocol")
        .unwrap_or_else(|| "tcp".into())
        .to_lowercase()
        .as_str()
    {
        "all" | "-1" => Ok("-1".to_string()),
        p @ ("tcp" | "udp" | "icmp") => Ok(p.to_string()),
        other => Err(usage_error(
            format!("ec2 rule: `protocol` is tcp, udp, icmp or all, got {other}"),
            position,
        )),
    }
}

/// The port range: `port`, `ports` ("1025-65535") or `from_port` and `to_port` (-1 when none).
fn ports(rule: &Map, position: Position) -> Result<(i32, i32)> {
    if let Some(port) = int(rule, "port", position)? {
        return Ok((port, port));
    }
    let Some(ports) = text(rule, "ports") else {
        return Ok((
            int(rule, "from_port", position)?.unwrap_or(-1),
            int(rule, "to_port", position)?.unwrap_or(-1),
        ));
    };
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
    Ok((parse(a)?, parse(b)?))
}

/// `source` as (CIDR, group): a CIDR, a group id, or `self` for `group` itself.
fn source(group: &str, rule: &Map, position: Position) -> Result<(Option<String>, Option<String>)> {
    let source = text(rule, "source").ok_or_else(|| usage_error("ec2 rule: `source` is required (a CIDR such as \"192.168.0.0/16\", a group id, or \"self\")", position))?;
    match source.as_str() {
        "self" => Ok((None, Some(group.to_string()))),
        s if s.starts_with("sg-") => Ok((None, Some(s.to_string()))),
        s if s.contains('/') => Ok((Some(s.to_string()), None)),
        other => Err(usage_error(
            format!("ec2 rule: `source` {other} is not a CIDR, a group id or \"self\""),
            position,
        )),
    }
}

/// A rule as the journal keeps it.
pub(super) fn journal_rule(spec: &RuleSpec) -> Rule {
    Rule {
        direction: if spec.egress { "egress" } else { "ingress" }.into(),
        protocol: spec.protocol.clone(),
        from_port: spec.from_port,
        to_port: spec.to_port,
        source: spec
            .cidr
            .clone()
            .or_else(|| spec.group.clone())
            .unwrap_or_default(),
        description: spec.description.clone(),
    }
}

/// A rule as `ec2::rules` shows it (`source` "self" for the group itself), for the journal.
pub(super) fn shown_rule(group: &str, rule: &serde_json::Value) -> Rule {
    let number = |key: &str| rule[key].as_i64().unwrap_or(-1) as i32;
    let source = rule["source"].as_str().unwrap_or_default();
    Rule {
        direction: rule["direction"].as_str().unwrap_or("ingress").into(),
        protocol: rule["protocol"].as_str().unwrap_or("-1").into(),
        from_port: number("from_port"),
        to_port: number("to_port"),
        source: if source == "self" { group } else { source }.into(),
        description: rule["description"].as_str().map(str::to_string),
    }
}

/// `ec2::revoke sg-0abc3456 ingress tcp 1025-65535 from sg-0abc3456`.
/// `ec2::revoke sg-0abc1234 egress all traffic to 0.0.0.0/0` for protocol -1, whose ports
/// AWS keeps as -1.
pub(super) fn rule_action(verb: &str, group: &str, rule: &Rule) -> String {
    let what = if rule.protocol == "-1" {
        "all traffic".to_string()
    } else {
        format!("{} {}-{}", rule.protocol, rule.from_port, rule.to_port)
    };
    let direction = if rule.direction == "egress" {
        "to"
    } else {
        "from"
    };
    format!(
        "ec2::{verb} {group} {} {what} {direction} {}",
        rule.direction, rule.source
    )
}
