//! Argument decoding and error encoding shared by the bindings.

use rhai::{Dynamic, EvalAltResult, Map, Position};

use crate::clients::kube::KubeError;
use crate::script::{from_json, usage_error};

/// A client's answer as a script value (through JSON, which every answer type serializes to).
pub(crate) fn encode(value: &impl serde::Serialize) -> Dynamic {
    from_json(&serde_json::to_value(value).unwrap_or_default())
}

/// A client error as a catchable script error: a map with `reason`, `code`, `message` and
/// `causes`, so that `catch (e) { if e.reason == "NotFound" { ... } }` works.
pub(crate) fn kube_error(error: KubeError, position: Position) -> Box<EvalAltResult> {
    let mut map = Map::new();
    map.insert("reason".into(), Dynamic::from(error.reason().to_string()));
    map.insert("code".into(), Dynamic::from_int(i64::from(error.code())));
    map.insert("message".into(), Dynamic::from(error.to_string()));
    map.insert("causes".into(), causes(error.causes()));
    EvalAltResult::ErrorRuntime(Dynamic::from_map(map), position).into()
}

/// An error's cause chain as the script sees it (`e.causes`), and as `--verbose` and the
/// report's `error_detail` show it: every layer's own message, outermost first.
pub(crate) fn causes(texts: &[String]) -> Dynamic {
    Dynamic::from_array(texts.iter().cloned().map(Dynamic::from).collect())
}

/// A string option from an options map.
pub(crate) fn string_option(
    options: &Map,
    key: &str,
    function: &str,
    position: Position,
) -> Result<Option<String>, Box<EvalAltResult>> {
    match options.get(key) {
        None => Ok(None),
        Some(v) if v.is_unit() => Ok(None),
        Some(v) => v.clone().into_string().map(Some).map_err(|t| {
            usage_error(
                format!("{function}: `{key}` must be a string, got {t}"),
                position,
            )
        }),
    }
}

/// Checks that an options map has only known keys.
pub(crate) fn known_options(
    options: &Map,
    function: &str,
    known: &[&str],
    position: Position,
) -> Result<(), Box<EvalAltResult>> {
    match options.keys().find(|k| !known.contains(&k.as_str())) {
        Some(unknown) => {
            let nearest = known
                .iter()
                .map(|k| (strsim::levenshtein(k, unknown), k))
                .filter(|(distance, _)| *distance <= 2)
                .min();
            let hint = nearest.map_or(String::new(), |(_, k)| format!("did you mean `{k}`? "));
            Err(usage_error(
                format!(
                    "{function}: unknown option `{unknown}` ({hint}known: {})",
                    known.join(", ")
                ),
                position,
            ))
        }
        None => Ok(()),
    }
}

/// A label selector given as a string (`"tier=gpu"`) or a map (`#{ tier: "gpu" }`).
pub(crate) fn selector(
    value: &Dynamic,
    function: &str,
    position: Position,
) -> Result<Option<String>, Box<EvalAltResult>> {
    if value.is_unit() {
        return Ok(None);
    }
    if let Some(text) = value.read_lock::<rhai::ImmutableString>() {
        return Ok((!text.is_empty()).then(|| text.to_string()));
    }
    if let Some(map) = value.read_lock::<Map>() {
        let parts: Vec<String> = map.iter().map(|(k, v)| format!("{k}={v}")).collect();
        return Ok((!parts.is_empty()).then(|| parts.join(",")));
    }
    Err(usage_error(
        format!(
            "{function}: a label selector is a string (\"tier=gpu\") or a map (#{{ tier: \"gpu\" }}), got {}",
            value.type_name()
        ),
        position,
    ))
}

/// A command as an array of strings or one string split on whitespace.
pub(crate) fn command(
    value: &Dynamic,
    position: Position,
) -> Result<Vec<String>, Box<EvalAltResult>> {
    if let Some(text) = value.read_lock::<rhai::ImmutableString>() {
        return Ok(text.split_whitespace().map(str::to_string).collect());
    }
    if let Some(items) = value.read_lock::<rhai::Array>() {
        return items
            .iter()
            .map(|i| {
                i.clone().into_string().map_err(|t| {
                    usage_error(
                        format!("exec: command items must be strings, got {t}"),
                        position,
                    )
                })
            })
            .collect();
    }
    Err(usage_error(
        "exec: the command is an array of strings, e.g. [\"nvidia-smi\", \"-L\"]",
        position,
    ))
}

/// The `timeout` option of an options map, or `default`.
pub(crate) fn timeout_of(
    options: &Map,
    function: &str,
    default: std::time::Duration,
    position: Position,
) -> Result<std::time::Duration, Box<EvalAltResult>> {
    match options.get("timeout") {
        None => Ok(default),
        Some(value) => {
            crate::script::duration_value(value, &format!("{function}: `timeout`"), position)
        }
    }
}
