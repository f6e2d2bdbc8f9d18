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
