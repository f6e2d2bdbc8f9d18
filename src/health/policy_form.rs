//! The policy as a runbook writes it (JSON, or a Rhai map through JSON), and back:
//! `#{ actions: #{ "79": "REBOOT" }, product_actions: #{ A100: #{ "64": "REBOOT" } },
//! rules: [#{ name, xid: [31] or "fatal", count, window: "24h", burst: "3m",
//! scope: "same_gpu", action: "RESET", source }], memory: #{ reboots: 2, window: "7d",
//! remediations: 5, remediation_window: "7d" } }`. Every key is checked; a wrong one is named
//! with what it takes.

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::{Map, Value, json};

use super::memory::Memory;
use super::policy::{Policy, Rule, Scope, XidSet};
use super::verdict::Verdict;
use crate::clock::{format_duration, parse_duration};

const VERDICTS: &str = "HEALTHY, MONITOR, RESET, REBOOT or ISOLATE";

fn codes(map: &BTreeMap<u32, Verdict>) -> Value {
    map.iter()
        .map(|(code, verdict)| (code.to_string(), json!(verdict.as_str())))
        .collect::<Map<_, _>>()
        .into()
}

/// The policy as a runbook reads it.
pub fn to_json(policy: &Policy) -> Value {
    let rules: Vec<Value> = policy
        .rules
        .iter()
        .map(|r| {
            json!({
                "name": r.name,
                "xid": match &r.xids { XidSet::Codes(c) => json!(c), XidSet::Fatal => json!("fatal") },
                "count": r.count,
                "window": r.window.map(format_duration),
                "burst": r.burst.map(format_duration),
                "scope": r.scope,
                "action": r.action.as_str(),
                "source": r.source,
            })
        })
        .collect();
    let memory = &policy.memory;
    json!({
        "memory": {
            "reboots": memory.reboots,
            "window": format_duration(memory.window),
            "remediations": memory.remediations,
            "remediation_window": format_duration(memory.remediation_window),
        },
        "actions": codes(&policy.actions),
        "product_actions": policy.product_actions.iter()
            .map(|(part, map)| (part.clone(), codes(map)))
            .collect::<Map<_, _>>(),
        "rules": rules,
    })
}

fn verdict(value: &Value, at: &str) -> Result<Verdict, String> {
    value
        .as_str()
        .and_then(Verdict::parse)
        .ok_or_else(|| format!("{at} is {VERDICTS}, got {value}"))
}

fn code_map(value: &Value, at: &str) -> Result<BTreeMap<u32, Verdict>, String> {
    let map = value
        .as_object()
        .ok_or_else(|| format!("{at} is a map of Xid code to verdict, got {value}"))?;
    map.iter()
        .map(|(code, v)| {
            let code = code
                .parse::<u32>()
                .map_err(|_| format!("{at}: `{code}` is not an Xid code (a number, as text)"))?;
            Ok((code, verdict(v, &format!("{at}[\"{code}\"]"))?))
        })
        .collect()
}

fn duration(value: &Value, at: &str) -> Result<Option<Duration>, String> {
    match value {
        Value::Null => Ok(None),
        Value::String(text) => parse_duration(text)
            .map(Some)
            .map_err(|e| format!("{at}: {e}")),
        other => Err(format!(
            "{at} is a duration (\"24h\", \"3m\") or (), got {other}"
        )),
    }
}

fn rule(value: &Value, at: &str) -> Result<Rule, String> {
    const KEYS: [&str; 8] = [
        "name", "xid", "count", "window", "burst", "scope", "action", "source",
    ];
    let map = value
        .as_object()
        .ok_or_else(|| format!("{at} is a map with {}", KEYS.join(", ")))?;
    if let Some(unknown) = map.keys().find(|k| !KEYS.contains(&k.as_str())) {
        return Err(format!(
            "{at}: unknown key `{unknown}`; a rule has {}",
            KEYS.join(", ")
        ));
    }
    let xids = match &map.get("xid").cloned().unwrap_or(Value::Null) {
        Value::String(s) if s == "fatal" => XidSet::Fatal,
        Value::Number(n) => XidSet::Codes(vec![
            n.as_u64()
                .and_then(|c| u32::try_from(c).ok())
                .ok_or_else(|| format!("{at}.xid: {n} is not an Xid code"))?,
        ]),
        Value::Array(list) => XidSet::Codes(
            list.iter()
                .map(|c| {
                    c.as_u64()
                        .and_then(|c| u32::try_from(c).ok())
                        .ok_or_else(|| format!("{at}.xid: {c} is not an Xid code"))
                })
                .collect::<Result<_, _>>()?,
        ),
        other => {
            return Err(format!(
                "{at}.xid is a code, a list of codes or \"fatal\", got {other}"
            ));
        }
    };
    let count = match map.get("count") {
        None => 1,
        Some(c) => c
            .as_u64()
            .and_then(|c| usize::try_from(c).ok())
            .filter(|c| *c >= 1)
            .ok_or_else(|| format!("{at}.count is a whole number from 1, got {c}"))?,
    };
    let scope = match map.get("scope") {
        None => Scope::SameGpu,
        Some(s) => s
            .as_str()
            .and_then(Scope::parse)
            .ok_or_else(|| format!("{at}.scope is same_gpu, different_gpus or node, got {s}"))?,
    };
    let action = verdict(
        map.get("action").unwrap_or(&Value::Null),
        &format!("{at}.action"),
    )?;
    Ok(Rule {
        name: map
            .get("name")
            .and_then(Value::as_str)
            .map_or_else(|| at.to_string(), str::to_string),
        xids,
        count,
        window: duration(
            map.get("window").unwrap_or(&Value::Null),
            &format!("{at}.window"),
        )?,
        burst: duration(
            map.get("burst").unwrap_or(&Value::Null),
            &format!("{at}.burst"),
        )?,
        scope,
        action,
        source: map
            .get("source")
            .and_then(Value::as_str)
            .unwrap_or("the runbook")
            .to_string(),
    })
}

fn memory_of(value: &Value, mut memory: Memory) -> Result<Memory, String> {
    const KEYS: [&str; 4] = ["reboots", "window", "remediations", "remediation_window"];
    let map = value.as_object().ok_or_else(|| {
        format!(
            "policy.memory is a map with {}, got {value}",
            KEYS.join(", ")
        )
    })?;
    if let Some(unknown) = map.keys().find(|k| !KEYS.contains(&k.as_str())) {
        return Err(format!(
            "policy.memory: unknown key `{unknown}`; it has {}",
            KEYS.join(", ")
        ));
    }
    let count = |key: &str, default: usize| -> Result<usize, String> {
        map.get(key).map_or(Ok(default), |v| {
            v.as_u64()
                .and_then(|n| usize::try_from(n).ok())
                .filter(|n| *n >= 1)
                .ok_or_else(|| format!("policy.memory.{key} is a whole number from 1, got {v}"))
        })
    };
    let window = |key: &str, default: Duration| -> Result<Duration, String> {
        map.get(key).map_or(Ok(default), |v| {
            duration(v, &format!("policy.memory.{key}"))?
                .ok_or_else(|| format!("policy.memory.{key} is a duration (\"7d\"), got {v}"))
        })
    };
    memory.reboots = count("reboots", memory.reboots)?;
    memory.remediations = count("remediations", memory.remediations)?;
    memory.window = window("window", memory.window)?;
    memory.remediation_window = window("remediation_window", memory.remediation_window)?;
    Ok(memory)
}

/// A policy from its written form; keys left out keep the default's.
pub fn from_json(value: &Value) -> Result<Policy, String> {
    const KEYS: [&str; 4] = ["actions", "product_actions", "rules", "memory"];
    let map = value
        .as_object()
        .ok_or_else(|| format!("a policy is a map with {}, got {value}", KEYS.join(", ")))?;
    if let Some(unknown) = map.keys().find(|k| !KEYS.contains(&k.as_str())) {
        return Err(format!(
            "policy: unknown key `{unknown}`; a policy has {}",
            KEYS.join(", ")
        ));
    }
    let mut policy = Policy::default();
    if let Some(actions) = map.get("actions") {
        policy.actions = code_map(actions, "policy.actions")?;
    }
    if let Some(products) = map.get("product_actions") {
        let products = products.as_object().ok_or_else(|| {
            format!("policy.product_actions is a map of model to codes, got {products}")
        })?;
        policy.product_actions = products
            .iter()
            .map(|(part, codes)| {
                Ok((
                    part.clone(),
                    code_map(codes, &format!("policy.product_actions.{part}"))?,
                ))
            })
            .collect::<Result<_, String>>()?;
    }
    if let Some(memory) = map.get("memory") {
        policy.memory = memory_of(memory, policy.memory)?;
    }
    if let Some(rules) = map.get("rules") {
        let rules = rules
            .as_array()
            .ok_or_else(|| format!("policy.rules is a list of rules, got {rules}"))?;
        policy.rules = rules
            .iter()
            .enumerate()
            .map(|(i, r)| rule(r, &format!("policy.rules[{i}]")))
            .collect::<Result<_, _>>()?;
    }
    Ok(policy)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_reads_back_as_itself() {
        let policy = Policy::default();
        assert_eq!(from_json(&to_json(&policy)).unwrap(), policy);
        let written = to_json(&policy);
        assert_eq!(written["actions"]["79"], "REBOOT");
        assert_eq!(written["rules"][1]["xid"], json!([31]));
        assert_eq!(written["rules"][0]["xid"], "fatal");
        assert_eq!(written["rules"][1]["window"], "24h");
    }

    #[test]
    fn a_wrong_key_or_value_is_named() {
        let bad = |v: Value| from_json(&v).unwrap_err();
        assert_eq!(
            bad(json!({"rules": [{"xid": 43, "action": "RESTART"}]})),
            "policy.rules[0].action is HEALTHY, MONITOR, RESET, REBOOT or ISOLATE, got \"RESTART\""
        );
        assert!(
            bad(json!({"rules": [{"xid": 43, "action": "RESET", "windw": "1h"}]}))
                .contains("unknown key `windw`")
        );
        assert!(bad(json!({"actions": {"x79": "REBOOT"}})).contains("`x79` is not an Xid code"));
        assert!(
            bad(json!({"rules": [{"xid": 43, "action": "RESET", "window": "soon"}]}))
                .starts_with("policy.rules[0].window: ")
        );
        assert!(bad(json!({"mode": "observe"})).contains("unknown key `mode`"));
    }
}
