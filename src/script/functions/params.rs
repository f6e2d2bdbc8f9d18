//! `params`: the runbook's parameters, with `--set` overrides parsed to each default's type.

use std::sync::Arc;

use rhai::{Dynamic, Engine, EvalAltResult, Map, NativeCallContext, Position};

use super::doc;
use super::param_checks::{Check, example_of, parse_checks};
use crate::clock::parse_duration;
use crate::report::MASK;
use crate::script::convert::{from_json, to_json};
use crate::script::error::usage_error;
use crate::script::host::Host;

pub(super) fn register(engine: &mut Engine, host: &Arc<Host>) {
    let h = host.clone();
    doc(
        "params",
        &["defaults: Map", "Map"],
        "The runbook's parameters: `defaults`, with `--set key=value` overrides parsed to the\n\
         default's type (int, float, bool, string, duration such as \"10m\", or JSON for arrays\n\
         and maps). An unknown key is an error that lists the known ones.",
    )
    .register_into_engine(engine, move |ctx: NativeCallContext, defaults: Map| {
        resolve(&h, defaults, &[], &[], ctx.call_position())
    });
    let h = host.clone();
    doc(
        "params",
        &["defaults: Map", "options: Map", "Map"],
        "The same, with options. `secret`: the keys whose values are secret (`#{ secret: [\"token\"] }`);\n\
         their values are masked in output, reports, JUnit and snapshots wherever they appear,\n\
         error messages included (values shorter than 4 characters only as parameters).\n\
         `check`: what each parameter may be, checked before the first step:\n\
         `#{ check: #{ gpu_nodes: #{ min: 0, max: 450, hint: \"EKS: 450 nodes a node group\" },\n\
         gpu_max: #{ type: \"int\", at_least: \"gpu_nodes\" }, mode: #{ one_of: [\"a\", \"b\"] } } }`\n\
         (`type`: int, float, bool, string, duration, array, map; it also parses `--set` for a\n\
         parameter whose default is `()`; `min`/`max` compare numbers or durations).",
    )
    .register_into_engine(
        engine,
        move |ctx: NativeCallContext, defaults: Map, options: Map| {
            let position = ctx.call_position();
            if let Some(unknown) = options
                .keys()
                .find(|k| !matches!(k.as_str(), "secret" | "check"))
            {
                return Err(usage_error(
                    format!("params: unknown option `{unknown}` (known: secret, check)"),
                    position,
                ));
            }
            let checks = match options.get("check") {
                None => Vec::new(),
                Some(declared) => {
                    parse_checks(declared, &defaults).map_err(|e| usage_error(e, position))?
                }
            };
            let secret: Vec<String> = match options.get("secret") {
                None => Vec::new(),
                Some(value) => value
                    .clone()
                    .into_typed_array::<rhai::ImmutableString>()
                    .map_err(|_| {
                        usage_error(
                            "params: `secret` is an array of parameter names, e.g. [\"token\"]",
                            position,
                        )
                    })?
                    .into_iter()
                    .map(|k| k.to_string())
                    .collect(),
            };
            if let Some(unknown) = secret.iter().find(|k| !defaults.contains_key(k.as_str())) {
                return Err(usage_error(
                    format!("params: `secret` names `{unknown}`, which is not a parameter"),
                    position,
                ));
            }
            resolve(&h, defaults, &secret, &checks, position)
        },
    );
}

fn resolve(
    host: &Host,
    mut params: Map,
    secret: &[String],
    checks: &[(String, Check)],
    position: Position,
) -> Result<Map, Box<EvalAltResult>> {
    let sets = &host.config.sets;
    if let Some(unknown) = sets.keys().find(|k| !params.contains_key(k.as_str())) {
        let known: Vec<&str> = params.keys().map(|k| k.as_str()).collect();
        return Err(usage_error(
            format!(
                "unknown parameter `--set {unknown}=...`; this runbook knows: {}",
                known.join(", ")
            ),
            position,
        ));
    }
    let declared_kind = |key: &str| {
        checks
            .iter()
            .find(|(name, _)| name == key)
            .and_then(|(_, check)| check.kind.as_deref())
    };
    for (key, raw) in sets {
        let mut default = params.get(key.as_str()).cloned().unwrap_or_default();
        if default.is_unit()
            && let Some(kind) = declared_kind(key)
        {
            default = example_of(kind);
        }
        let value = parse_like(&default, raw).map_err(|expected| {
            // A value read from a file is named by its file, never printed whole.
            let given = host.config.set_files.get(key).unwrap_or(raw);
            usage_error(
                format!("--set {key}={given}: expected {expected}"),
                position,
            )
        })?;
        params.insert(key.as_str().into(), value);
    }
    for key in secret {
        if let Some(value) = params.get(key.as_str()) {
            host.add_secret(&value.to_string());
        }
    }
    for (key, check) in checks {
        let value = params.get(key.as_str()).cloned().unwrap_or_default();
        if let Some(why) = check.violation(key, &value, &params) {
            let message = match sets.get(key) {
                // A value read from a file is shown as the file, as in reports.
                Some(raw) => match host.config.set_files.get(key) {
                    Some(path) => format!("--set {key}={path}: {why}"),
                    None => format!("--set {key}={raw}: {why}"),
                },
                None => {
                    format!("params: the default of `{key}` breaks its own check: {why}")
                }
            };
            return Err(usage_error(message, position));
        }
    }
    // Reports show what was asked for, never what a file or a secret holds.
    let mut shown = to_json(&Dynamic::from_map(params.clone()));
    if let Some(map) = shown.as_object_mut() {
        for key in secret {
            map.insert(key.clone(), serde_json::Value::String(MASK.into()));
        }
        for (key, path) in &host.config.set_files {
            map.insert(key.clone(), serde_json::Value::String(path.clone()));
        }
    }
    host.set_parameters(shown, sets.keys().cloned());
    Ok(params)
}

/// The most JSON an array or map parameter may hold. Parsed JSON takes many times its text in
/// memory (a 60 MB file took 8.4 GB), and parameters are parsed before the first step, where a
/// setting belongs: the health policy, the largest real one, is a few KiB.
const MAX_JSON_PARAMETER_BYTES: usize = 1 << 20;

/// Parses `raw` to the type of `default`; on failure says what was expected.
fn parse_like(default: &Dynamic, raw: &str) -> Result<Dynamic, String> {
    if default.is_bool() {
        return match raw {
            "true" | "yes" | "1" => Ok(true.into()),
            "false" | "no" | "0" => Ok(false.into()),
            _ => Err("true or false".into()),
        };
    }
    if default.is_int() {
        return raw
            .trim()
            .parse::<i64>()
            .map(Dynamic::from_int)
            .map_err(|_| "an integer".into());
    }
    if default.is_float() {
        return raw
            .trim()
            .parse::<f64>()
            .map(Dynamic::from_float)
            .map_err(|_| "a number".into());
    }
    if default.is_array() || default.is_map() {
        let kind = if default.is_array() {
            "a JSON array"
        } else {
            "a JSON object"
        };
        if raw.len() > MAX_JSON_PARAMETER_BYTES {
            return Err(format!(
                "{kind} of at most {} KiB, and this one is {} KiB: a parameter is a setting (a policy, a list of names); read data with read_text and json::parse in a step",
                MAX_JSON_PARAMETER_BYTES >> 10,
                raw.len().div_ceil(1024)
            ));
        }
        let json: serde_json::Value =
            serde_json::from_str(raw).map_err(|e| format!("{kind} ({e})"))?;
        if json.is_array() != default.is_array() || json.is_object() != default.is_map() {
            return Err(kind.into());
        }
        return Ok(from_json(&json));
    }
    if let Some(text) = default.read_lock::<rhai::ImmutableString>() {
        // A default that reads as a duration makes the parameter a duration.
        if parse_duration(&text).is_ok() {
            parse_duration(raw).map_err(|e| format!("a duration like \"10m\" ({e})"))?;
        }
    }
    Ok(Dynamic::from(raw.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overrides_take_the_default_type() {
        assert_eq!(
            parse_like(&Dynamic::from_int(2), "4").unwrap().as_int(),
            Ok(4)
        );
        assert_eq!(
            parse_like(&Dynamic::from_bool(false), "true")
                .unwrap()
                .as_bool(),
            Ok(true)
        );
        assert!(
            parse_like(&Dynamic::from_float(1.5), "2.25")
                .unwrap()
                .is_float()
        );
        assert!(parse_like(&Dynamic::from("10m".to_string()), "15m").is_ok());
        assert_eq!(
            parse_like(&Dynamic::from("10m".to_string()), "soon")
                .unwrap_err()
                .split(' ')
                .take(3)
                .collect::<Vec<_>>(),
            ["a", "duration", "like"]
        );
        assert_eq!(
            parse_like(&Dynamic::from_int(2), "two").unwrap_err(),
            "an integer"
        );
        assert!(
            parse_like(&Dynamic::from_array(vec![]), "[1,2]")
                .unwrap()
                .is_array()
        );
        assert!(parse_like(&Dynamic::from_array(vec![]), "{}").is_err());
    }

    #[test]
    fn a_json_parameter_past_its_bound_is_refused_before_it_is_parsed() {
        let big = format!("[{}0]", "0,".repeat(MAX_JSON_PARAMETER_BYTES / 2));
        let why = parse_like(&Dynamic::from_array(vec![]), &big).unwrap_err();
        assert!(
            why.starts_with("a JSON array of at most 1024 KiB, and this one is 1025 KiB"),
            "{why}"
        );
        let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
        let why = parse_like(&Dynamic::from_array(vec![]), &deep).unwrap_err();
        assert!(why.contains("recursion limit"), "{why}");
    }
}
