//! What a runbook declares its parameters may be (`params(defaults, #{ check: .. })`): a type,
//! a range, a list of choices, or a bound by another parameter. Checked once the `--set`
//! overrides are in, before the runbook's first step, so a value that cannot work fails at
//! once with the parameter's name instead of minutes into a deploy.

use rhai::{Array, Dynamic, ImmutableString, Map};

use crate::clock::parse_duration;

const KNOWN: [&str; 7] = [
    "type", "min", "max", "one_of", "at_least", "at_most", "hint",
];
const TYPES: [&str; 7] = ["int", "float", "bool", "string", "duration", "array", "map"];

/// The declared constraints of one parameter.
#[derive(Default)]
pub(super) struct Check {
    pub(super) kind: Option<String>,
    min: Option<Dynamic>,
    max: Option<Dynamic>,
    one_of: Option<Array>,
    at_least: Option<String>,
    at_most: Option<String>,
    hint: Option<String>,
}

/// Reads `#{ name: #{ type, min, max, one_of, at_least, at_most, hint }, .. }`; errors say
/// what is wrong with the declaration itself.
pub(super) fn parse_checks(
    checks: &Dynamic,
    defaults: &Map,
) -> Result<Vec<(String, Check)>, String> {
    let Some(checks) = checks.read_lock::<Map>() else {
        return Err("params: `check` is a map of parameter name to #{ type, min, max, one_of, at_least, at_most, hint }".into());
    };
    let mut parsed = Vec::new();
    for (name, declared) in checks.iter() {
        if !defaults.contains_key(name.as_str()) {
            return Err(format!(
                "params: `check` names `{name}`, which is not a parameter"
            ));
        }
        let Some(declared) = declared.read_lock::<Map>() else {
            return Err(format!(
                "params: the check of `{name}` is a map such as #{{ min: 1, max: 8 }}"
            ));
        };
        if let Some(unknown) = declared.keys().find(|k| !KNOWN.contains(&k.as_str())) {
            return Err(format!(
                "params: the check of `{name}` has an unknown key `{unknown}` (known: {})",
                KNOWN.join(", ")
            ));
        }
        let text = |key: &str| -> Result<Option<String>, String> {
            match declared.get(key) {
                None => Ok(None),
                Some(v) => v
                    .read_lock::<ImmutableString>()
                    .map(|s| Some(s.to_string()))
                    .ok_or_else(|| format!("params: `{key}` of `{name}` is a string")),
            }
        };
        let check = Check {
            kind: text("type")?,
            min: declared.get("min").cloned(),
            max: declared.get("max").cloned(),
            one_of: match declared.get("one_of") {
                None => None,
                Some(v) => Some(v.clone().into_array().map_err(|_| {
                    format!("params: `one_of` of `{name}` is an array of the allowed values")
                })?),
            },
            at_least: text("at_least")?,
            at_most: text("at_most")?,
            hint: text("hint")?,
        };
        if let Some(kind) = &check.kind
            && !TYPES.contains(&kind.as_str())
        {
            return Err(format!(
                "params: `type` of `{name}` is \"{kind}\"; known types: {}",
                TYPES.join(", ")
            ));
        }
        for other in [&check.at_least, &check.at_most].into_iter().flatten() {
            if !defaults.contains_key(other.as_str()) {
                return Err(format!(
                    "params: the check of `{name}` refers to `{other}`, which is not a parameter"
                ));
            }
        }
        parsed.push((name.to_string(), check));
    }
    Ok(parsed)
}

/// A value of the declared type, for parsing a `--set` of a parameter whose default is `()`.
pub(super) fn example_of(kind: &str) -> Dynamic {
    match kind {
        "int" => Dynamic::from_int(0),
        "float" => Dynamic::from_float(0.0),
        "bool" => Dynamic::from_bool(false),
        "duration" => Dynamic::from("1s".to_string()),
        "array" => Dynamic::from_array(Array::new()),
        "map" => Dynamic::from_map(Map::new()),
        _ => Dynamic::from(String::new()),
    }
}

/// How a value compares for `min`/`max`: numbers as numbers, durations as durations.
fn magnitude(value: &Dynamic) -> Option<f64> {
    if let Ok(i) = value.as_int() {
        return Some(i as f64);
    }
    if let Ok(f) = value.as_float() {
        return Some(f);
    }
    let text = value.read_lock::<ImmutableString>()?;
    parse_duration(&text).ok().map(|d| d.as_secs_f64())
}

fn type_name(value: &Dynamic) -> &'static str {
    if value.is_int() {
        "int"
    } else if value.is_float() {
        "float"
    } else if value.is_bool() {
        "bool"
    } else if value.is_array() {
        "array"
    } else if value.is_map() {
        "map"
    } else if value.is_string() {
        "string"
    } else {
        "()"
    }
}

fn shown(value: &Dynamic) -> String {
    if value.is_string() {
        format!("\"{value}\"")
    } else {
        value.to_string()
    }
}

impl Check {
    /// Why `value` does not satisfy this check, or None. `()` (unset, derived later) passes.
    pub(super) fn violation(&self, name: &str, value: &Dynamic, params: &Map) -> Option<String> {
        if value.is_unit() {
            return None;
        }
        let why = self.first_violation(name, value, params)?;
        Some(match &self.hint {
            Some(hint) => format!("{why} ({hint})"),
            None => why,
        })
    }

    fn first_violation(&self, name: &str, value: &Dynamic, params: &Map) -> Option<String> {
        self.type_violation(name, value)
            .or_else(|| self.range_violation(name, value))
            .or_else(|| self.choice_violation(name, value))
            .or_else(|| self.relative_violation(name, value, params))
    }

    /// `type`: a duration is a string that parses as one; an int will do for a float.
    fn type_violation(&self, name: &str, value: &Dynamic) -> Option<String> {
        let kind = self.kind.as_ref()?;
        let actual = type_name(value);
        let ok = match kind.as_str() {
            "duration" => value
                .read_lock::<ImmutableString>()
                .is_some_and(|s| parse_duration(&s).is_ok()),
            "float" => actual == "float" || actual == "int",
            other => actual == other,
        };
        if ok {
            return None;
        }
        let article = if kind.starts_with(['a', 'i']) {
            "an"
        } else {
            "a"
        };
        Some(format!(
            "{name} must be {article} {kind}, not {}",
            shown(value)
        ))
    }

    /// `min` and `max`.
    fn range_violation(&self, name: &str, value: &Dynamic) -> Option<String> {
        if let Some(min) = &self.min
            && let Some((limit, this)) = bound(min, value)
            && this < limit
        {
            return Some(format!(
                "{name} must be at least {}, not {}",
                shown(min),
                shown(value)
            ));
        }
        if let Some(max) = &self.max
            && let Some((limit, this)) = bound(max, value)
            && this > limit
        {
            return Some(format!(
                "{name} must be at most {}, not {}",
                shown(max),
                shown(value)
            ));
        }
        None
    }

    /// `one_of`: the same text and the same type as one of the choices; for an array that is
    /// not itself a choice, each of its items (a subset of the choices, such as the
    /// collectives to run).
    fn choice_violation(&self, name: &str, value: &Dynamic) -> Option<String> {
        let choices = self.one_of.as_ref()?;
        if value.is_array() && !choices.iter().any(Dynamic::is_array) {
            let items = value.clone().into_array().unwrap_or_default();
            return items.iter().find_map(|v| self.choice_violation(name, v));
        }
        if choices
            .iter()
            .any(|c| c.to_string() == value.to_string() && type_name(c) == type_name(value))
        {
            return None;
        }
        let listed: Vec<String> = choices.iter().map(shown).collect();
        Some(format!(
            "{name} must be one of {}, not {}",
            listed.join(", "),
            shown(value)
        ))
    }

    /// `at_least` and `at_most` another parameter, when that one is set.
    fn relative_violation(&self, name: &str, value: &Dynamic, params: &Map) -> Option<String> {
        let other = |key: &String| params.get(key.as_str()).filter(|v| !v.is_unit());
        if let Some(key) = &self.at_least
            && let Some(limit) = other(key)
            && let Some((limit_n, this)) = bound(limit, value)
            && this < limit_n
        {
            return Some(format!(
                "{name} ({}) must be at least {key} ({})",
                shown(value),
                shown(limit)
            ));
        }
        if let Some(key) = &self.at_most
            && let Some(limit) = other(key)
            && let Some((limit_n, this)) = bound(limit, value)
            && this > limit_n
        {
            return Some(format!(
                "{name} ({}) must be at most {key} ({})",
                shown(value),
                shown(limit)
            ));
        }
        None
    }
}

/// A limit and the value as numbers to compare, when both are numbers or durations.
fn bound(limit: &Dynamic, value: &Dynamic) -> Option<(f64, f64)> {
    magnitude(limit).zip(magnitude(value))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(pairs: &[(&str, Dynamic)]) -> Map {
        pairs
            .iter()
            .map(|(k, v)| ((*k).into(), v.clone()))
            .collect()
    }

    fn checks(declared: &[(&str, Map)], defaults: &Map) -> Result<Vec<(String, Check)>, String> {
        let declared: Map = declared
            .iter()
            .map(|(k, v)| ((*k).into(), Dynamic::from_map(v.clone())))
            .collect();
        parse_checks(&Dynamic::from_map(declared), defaults)
    }

    #[test]
    fn ranges_choices_types_and_other_parameters() {
        let params = map(&[
            ("gpu_nodes", Dynamic::from_int(8)),
            ("gpu_max", Dynamic::from_int(4)),
            ("mode", Dynamic::from("fast".to_string())),
            ("timeout", Dynamic::from("30s".to_string())),
        ]);
        let parsed = checks(
            &[
                (
                    "gpu_nodes",
                    map(&[
                        ("min", Dynamic::from_int(0)),
                        ("max", Dynamic::from_int(450)),
                        ("hint", Dynamic::from("EKS".to_string())),
                    ]),
                ),
                (
                    "gpu_max",
                    map(&[
                        ("type", Dynamic::from("int".to_string())),
                        ("at_least", Dynamic::from("gpu_nodes".to_string())),
                    ]),
                ),
                (
                    "mode",
                    map(&[(
                        "one_of",
                        Dynamic::from_array(vec![Dynamic::from("safe".to_string())]),
                    )]),
                ),
                ("timeout", map(&[("min", Dynamic::from("1m".to_string()))])),
            ],
            &params,
        )
        .unwrap();
        let check = |name: &str| &parsed.iter().find(|(n, _)| n == name).unwrap().1;
        let verdicts: Vec<Option<String>> = ["gpu_nodes", "gpu_max", "mode", "timeout"]
            .iter()
            .map(|name| check(name).violation(name, &params[*name], &params))
            .collect();
        assert_eq!(verdicts[0], None);
        assert_eq!(
            verdicts[1].as_deref(),
            Some("gpu_max (4) must be at least gpu_nodes (8)")
        );
        assert_eq!(
            verdicts[2].as_deref(),
            Some("mode must be one of \"safe\", not \"fast\"")
        );
        assert_eq!(
            verdicts[3].as_deref(),
            Some("timeout must be at least \"1m\", not \"30s\"")
        );
        // An array: each of its items one of the choices.
        let text = |t: &str| Dynamic::from(t.to_string());
        let subset = Dynamic::from_array(vec![text("safe"), text("safe")]);
        assert_eq!(check("mode").violation("mode", &subset, &params), None);
        let stray = Dynamic::from_array(vec![text("safe"), text("fast")]);
        assert_eq!(
            check("mode").violation("mode", &stray, &params).as_deref(),
            Some("mode must be one of \"safe\", not \"fast\"")
        );
        let too_many = Dynamic::from_int(600);
        assert_eq!(
            check("gpu_nodes")
                .violation("gpu_nodes", &too_many, &params)
                .as_deref(),
            Some("gpu_nodes must be at most 450, not 600 (EKS)")
        );
        // Unset: derived later, nothing to check yet.
        assert_eq!(
            check("gpu_max").violation("gpu_max", &Dynamic::UNIT, &params),
            None
        );
        let text = Dynamic::from("four".to_string());
        assert_eq!(
            check("gpu_max")
                .violation("gpu_max", &text, &params)
                .as_deref(),
            Some("gpu_max must be an int, not \"four\"")
        );
    }

    #[test]
    fn a_wrong_declaration_says_what_is_wrong() {
        let params = map(&[("n", Dynamic::from_int(1))]);
        let err = |declared: &[(&str, Map)]| checks(declared, &params).err().unwrap();
        assert!(err(&[("m", map(&[]))]).contains("`m`, which is not a parameter"));
        assert!(
            err(&[("n", map(&[("maximum", Dynamic::from_int(1))]))])
                .contains("unknown key `maximum`")
        );
        assert!(
            err(&[("n", map(&[("type", Dynamic::from("integer".to_string()))]))])
                .contains("known types")
        );
        assert!(
            err(&[("n", map(&[("at_least", Dynamic::from("k".to_string()))]))])
                .contains("`k`, which is not a parameter")
        );
    }
}
