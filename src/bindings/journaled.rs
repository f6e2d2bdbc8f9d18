//! A binding's mutation around its call: the journal record, with what undoes it, is on disk
//! before the call is sent, and its answer after. Without a journal (docs, check) it is only
//! the call.

use rhai::{EvalAltResult, Position};

use crate::clients::aws::RuleSpec;
use crate::guard::Change;
use crate::journal::{Rule, Undo};
use crate::script::{Host, failure_error};

/// Runs `call` as the mutation `change` (an action's words, or a [`Change`] naming its
/// resource), held to the run's guards and journaled with `undo` before it is sent.
pub(super) fn journaled<T>(
    host: &Host,
    position: Position,
    change: impl Into<Change>,
    undo: Option<Undo>,
    call: impl FnOnce() -> Result<T, Box<EvalAltResult>>,
) -> Result<T, Box<EvalAltResult>> {
    let sending = host
        .mutation_starts(&change.into(), undo)
        .map_err(|e| failure_error(e, position))?;
    let result = call();
    host.mutation_answered(&[sending], result.as_ref().err().map(|e| error_line(e)));
    result
}

/// A call's error as the journal and the report keep it: the line a run would end with
/// (`InvalidPermission.NotFound: The specified rule does not exist ...`), not Rhai's dump of
/// the error map.
fn error_line(error: &EvalAltResult) -> String {
    crate::script::Diagnostic::from_eval(error, "").message
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
