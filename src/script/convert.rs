//! Between Rhai values and JSON, and the small value rules every host function shares.

use std::time::Duration;

use rhai::{Array, Dynamic, EvalAltResult, Map, Position};

use super::error::usage_error;
use crate::clock::parse_duration;

/// A Rhai value as JSON. Maps keep Rhai's sorted key order; values JSON cannot hold (function
/// pointers, custom types) become their display string.
pub fn to_json(value: &Dynamic) -> serde_json::Value {
    use serde_json::Value;
    if value.is_unit() {
        return Value::Null;
    }
    if let Ok(b) = value.as_bool() {
        return Value::Bool(b);
    }
    if let Ok(i) = value.as_int() {
        return Value::from(i);
    }
    if let Ok(f) = value.as_float() {
        return serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number);
    }
    if let Some(s) = value.read_lock::<rhai::ImmutableString>() {
        return Value::String(s.to_string());
    }
    if let Ok(c) = value.as_char() {
        return Value::String(c.to_string());
    }
    if let Some(array) = value.read_lock::<Array>() {
        return Value::Array(array.iter().map(to_json).collect());
    }
    if let Some(map) = value.read_lock::<Map>() {
        return Value::Object(
            map.iter()
                .map(|(k, v)| (k.to_string(), to_json(v)))
                .collect(),
        );
    }
    if let Some(blob) = value.read_lock::<rhai::Blob>() {
        return Value::Array(blob.iter().map(|b| Value::from(*b)).collect());
    }
    Value::String(value.to_string())
}

/// JSON as a Rhai value: objects become maps, integers `INT`, other numbers `FLOAT`.
pub fn from_json(value: &serde_json::Value) -> Dynamic {
    use serde_json::Value;
    match value {
        Value::Null => Dynamic::UNIT,
        Value::Bool(b) => Dynamic::from_bool(*b),
        Value::Number(n) => match n.as_i64() {
            Some(i) => Dynamic::from_int(i),
            None => Dynamic::from_float(n.as_f64().unwrap_or(f64::NAN)),
        },
        Value::String(s) => Dynamic::from(s.clone()),
        Value::Array(items) => Dynamic::from_array(items.iter().map(from_json).collect()),
        Value::Object(fields) => Dynamic::from_map(
            fields
                .iter()
                .map(|(k, v)| (k.as_str().into(), from_json(v)))
                .collect(),
        ),
    }
}

/// JSON as YAML text: keys in stable (sorted) order, ambiguous scalars quoted.
pub(crate) fn to_yaml(value: &serde_json::Value) -> String {
    let mut text = serde_saphyr::to_string(value)
        .unwrap_or_else(|e| format!("# not representable as YAML: {e}"));
    if !text.ends_with('\n') {
        text.push('\n');
    }
    text
}

/// YAML 1.2 reading: only `true`/`false` are booleans, so `y`, `no` and `on` stay strings
/// (the "Norway problem" of YAML 1.1).
fn yaml_options() -> serde_saphyr::Options {
    let mut options = serde_saphyr::Options::default();
    options.strict_booleans = true;
    options
}

/// Parses one YAML document.
pub(crate) fn parse_yaml(text: &str) -> Result<serde_json::Value, String> {
    serde_saphyr::from_str_with_options(text, yaml_options()).map_err(|e| e.to_string())
}

/// Parses every document of a multi-document YAML text.
pub(crate) fn parse_yaml_documents(text: &str) -> Result<Vec<serde_json::Value>, String> {
    serde_saphyr::from_multiple_with_options(text, yaml_options()).map_err(|e| e.to_string())
}

/// What counts as "done" for `wait_until`: `true`, a non-zero number, a non-empty string,
/// array or map, or any other value; `false`, `()` and empties are not.
pub fn is_truthy(value: &Dynamic) -> bool {
    if value.is_unit() {
        return false;
    }
    if let Ok(b) = value.as_bool() {
        return b;
    }
    if let Ok(i) = value.as_int() {
        return i != 0;
    }
    if let Ok(f) = value.as_float() {
        return f != 0.0;
    }
    if let Some(s) = value.read_lock::<rhai::ImmutableString>() {
        return !s.is_empty();
    }
    if let Some(a) = value.read_lock::<Array>() {
        return !a.is_empty();
    }
    if let Some(m) = value.read_lock::<Map>() {
        return !m.is_empty();
    }
    true
}

/// A duration argument: a string such as `"9m24s"`, or a number of seconds.
pub fn duration_arg(
    value: &Dynamic,
    what: &str,
    position: Position,
) -> Result<Duration, Box<EvalAltResult>> {
    if let Ok(i) = value.as_int() {
        return u64::try_from(i)
            .map(Duration::from_secs)
            .map_err(|_| usage_error(format!("{what} must not be negative, got {i}"), position));
    }
    if let Ok(f) = value.as_float() {
        return Duration::try_from_secs_f64(f).map_err(|_| {
            usage_error(
                format!("{what} must be a positive number of seconds, got {f}"),
                position,
            )
        });
    }
    if let Some(s) = value.read_lock::<rhai::ImmutableString>() {
        return parse_duration(&s).map_err(|e| usage_error(format!("{what}: {e}"), position));
    }
    Err(usage_error(
        format!(
            "{what} must be a duration such as \"90s\" or a number of seconds, got {}",
            value.type_name()
        ),
        position,
    ))
}

/// Reads an optional field of an options map, checking that no unknown field was given.
pub(crate) struct Options<'a> {
    map: &'a Map,
    function: &'static str,
    position: Position,
}

impl<'a> Options<'a> {
    pub(crate) fn new(
        map: &'a Map,
        function: &'static str,
        known: &[&str],
        position: Position,
    ) -> Result<Self, Box<EvalAltResult>> {
        if let Some(unknown) = map.keys().find(|k| !known.contains(&k.as_str())) {
            return Err(usage_error(
                format!(
                    "{function}: unknown option `{unknown}` (known: {})",
                    known.join(", ")
                ),
                position,
            ));
        }
        Ok(Self {
            map,
            function,
            position,
        })
    }

    pub(crate) fn duration(
        &self,
        key: &str,
        default: Duration,
    ) -> Result<Duration, Box<EvalAltResult>> {
        match self.map.get(key) {
            None => Ok(default),
            Some(v) => duration_arg(v, &format!("{}: `{key}`", self.function), self.position),
        }
    }

    pub(crate) fn int(&self, key: &str, default: i64) -> Result<i64, Box<EvalAltResult>> {
        match self.map.get(key) {
            None => Ok(default),
            Some(v) => v.as_int().map_err(|t| {
                usage_error(
                    format!("{}: `{key}` must be an integer, got {t}", self.function),
                    self.position,
                )
            }),
        }
    }

    pub(crate) fn float(&self, key: &str, default: f64) -> Result<f64, Box<EvalAltResult>> {
        match self.map.get(key) {
            None => Ok(default),
            Some(v) => v
                .as_float()
                .or_else(|_| v.as_int().map(|i| i as f64))
                .map_err(|t| {
                    usage_error(
                        format!("{}: `{key}` must be a number, got {t}", self.function),
                        self.position,
                    )
                }),
        }
    }

    pub(crate) fn get(&self, key: &str) -> Option<&Dynamic> {
        self.map.get(key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_round_trip_keeps_types() {
        let json = serde_json::json!({"a": [1, 2.5, "x", null, true], "b": {"c": -3}});
        assert_eq!(to_json(&from_json(&json)), json);
    }

    #[test]
    fn truthiness() {
        assert!(!is_truthy(&Dynamic::UNIT));
        assert!(!is_truthy(&Dynamic::from_bool(false)));
        assert!(!is_truthy(&Dynamic::from_int(0)));
        assert!(!is_truthy(&Dynamic::from(String::new())));
        assert!(!is_truthy(&Dynamic::from_array(vec![])));
        assert!(is_truthy(&Dynamic::from_int(2)));
        assert!(is_truthy(&Dynamic::from("ready".to_string())));
    }

    #[test]
    fn durations_from_strings_and_seconds() {
        let pos = Position::NONE;
        assert_eq!(
            duration_arg(&Dynamic::from_int(90), "t", pos).unwrap(),
            Duration::from_secs(90)
        );
        assert_eq!(
            duration_arg(&Dynamic::from("1m30s".to_string()), "t", pos).unwrap(),
            Duration::from_secs(90)
        );
        assert!(duration_arg(&Dynamic::from_int(-1), "t", pos).is_err());
        assert!(duration_arg(&Dynamic::from_bool(true), "t", pos).is_err());
    }
}
