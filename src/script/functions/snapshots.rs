//! `snapshot`: golden YAML files that make drift show up as a diff; `redact` for volatile fields.

use std::path::PathBuf;
use std::sync::Arc;

use rhai::{Array, Dynamic, Engine, EvalAltResult, Map, NativeCallContext, Position};

use super::doc;
use crate::report::SnapshotOutcome;
use crate::script::convert::{Options, from_json, parse_yaml, to_json, to_yaml};
use crate::script::diff;
use crate::script::error::{failure, usage_error};
use crate::script::host::Host;

const REDACTED: &str = "[redacted]";

pub(super) fn register(engine: &mut Engine, host: &Arc<Host>) {
    let h = host.clone();
    doc(
        "snapshot",
        &["name: &str", "value: Dynamic", "()"],
        "Compares `value` with the golden file snapshots/<runbook>/<name>.yaml. Missing: written\n\
         and reported as new. Different: the step fails with a diff. `--update-snapshots` accepts.",
    )
    .register_into_engine(
        engine,
        move |ctx: NativeCallContext, name: &str, value: Dynamic| {
            snapshot(&h, name, value, ctx.call_position())
        },
    );

    let h = host.clone();
    doc(
        "snapshot",
        &["name: &str", "value: Dynamic", "options: Map", "()"],
        "The same; option `redact`: paths (`a.b`, `items.*.uid`) replaced by \"[redacted]\" first.",
    )
    .register_into_engine(
        engine,
        move |ctx: NativeCallContext, name: &str, value: Dynamic, options: Map| {
            let position = ctx.call_position();
            let opts = Options::new(&options, "snapshot", &["redact"], position)?;
            let value = match opts.get("redact") {
                Some(paths) => redact(value, &paths_arg(paths, position)?),
                None => value,
            };
            snapshot(&h, name, value, position)
        },
    );

    let h = host.clone();
    doc(
        "snapshot_value",
        &["name: &str", "Dynamic"],
        "The value stored in a snapshot file, to compare against.",
    )
    .register_into_engine(
        engine,
        move |ctx: NativeCallContext, name: &str| -> Result<Dynamic, Box<EvalAltResult>> {
            let position = ctx.call_position();
            let path = snapshot_path(&h, name, position)?;
            let text = crate::sandbox::read_text_file(&path, crate::sandbox::DATA_FILE_LIMIT)
                .map_err(|e| {
                    failure(
                        format!(
                            "snapshot `{name}` cannot be read from {}: {e}",
                            path.display()
                        ),
                        position,
                    )
                })?;
            let value: serde_json::Value = serde_saphyr::from_str(&text).map_err(|e| {
                failure(
                    format!("snapshot {} is not valid YAML: {e}", path.display()),
                    position,
                )
            })?;
            Ok(from_json(&value))
        },
    );

    doc(
        "redact",
        &["value: Dynamic", "paths: Array", "Dynamic"],
        "A copy of `value` with each path (`metadata.uid`, `items.*.creationTimestamp`) set to \"[redacted]\".",
    )
    .register_into_engine(engine, |ctx: NativeCallContext, value: Dynamic, paths: Array| {
        Ok::<_, Box<EvalAltResult>>(redact(value, &paths_arg(&Dynamic::from_array(paths), ctx.call_position())?))
    });
}

fn paths_arg(paths: &Dynamic, position: Position) -> Result<Vec<String>, Box<EvalAltResult>> {
    let list = paths.read_lock::<Array>().ok_or_else(|| {
        usage_error(
            "redact paths must be an array of strings like \"metadata.uid\"",
            position,
        )
    })?;
    list.iter()
        .map(|p| {
            p.clone().into_string().map_err(|_| {
                usage_error(
                    format!("a redact path must be a string, got {}", p.type_name()),
                    position,
                )
            })
        })
        .collect()
}

/// Replaces every value at `paths` with a marker. `*` matches any key or array index.
pub(crate) fn redact(value: Dynamic, paths: &[String]) -> Dynamic {
    let mut json = to_json(&value);
    for path in paths {
        let parts: Vec<&str> = path.split('.').collect();
        redact_at(&mut json, &parts);
    }
    from_json(&json)
}

fn redact_at(value: &mut serde_json::Value, parts: &[&str]) {
    let Some((first, rest)) = parts.split_first() else {
        *value = serde_json::Value::String(REDACTED.into());
        return;
    };
    match value {
        serde_json::Value::Object(map) => {
            for (key, child) in map.iter_mut() {
                if *first == "*" || key == first {
                    redact_at(child, rest);
                }
            }
        }
        serde_json::Value::Array(items) => {
            for (index, child) in items.iter_mut().enumerate() {
                if *first == "*" || first.parse() == Ok(index) {
                    redact_at(child, rest);
                }
            }
        }
        _ => {}
    }
}

fn snapshot_path(
    host: &Host,
    name: &str,
    position: Position,
) -> Result<PathBuf, Box<EvalAltResult>> {
    let valid = !name.is_empty()
        && !name.starts_with('.')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if !valid {
        return Err(usage_error(
            format!(
                "snapshot name `{name}` must be letters, digits, '-', '_' or '.' (it names a file)"
            ),
            position,
        ));
    }
    Ok(host.config.snapshot_dir.join(format!("{name}.yaml")))
}

fn snapshot(
    host: &Host,
    name: &str,
    value: Dynamic,
    position: Position,
) -> Result<(), Box<EvalAltResult>> {
    let path = snapshot_path(host, name, position)?;
    let shown = path.display().to_string();
    let mut actual_json = to_json(&value);
    host.secrets().mask_json(&mut actual_json);
    let actual = to_yaml(&actual_json);
    let write = |outcome| -> Result<(), Box<EvalAltResult>> {
        let written = path
            .parent()
            .map_or(Ok(()), std::fs::create_dir_all)
            .and_then(|()| std::fs::write(&path, &actual));
        written.map_err(|e| failure(format!("cannot write snapshot {shown}: {e}"), position))?;
        host.record_snapshot(name, outcome, &shown);
        Ok(())
    };
    let stored = match crate::sandbox::read_text_file(&path, crate::sandbox::DATA_FILE_LIMIT) {
        Ok(stored) => stored,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return write(SnapshotOutcome::New),
        Err(e) => {
            return Err(failure(
                format!("cannot read snapshot {shown}: {e}"),
                position,
            ));
        }
    };
    let stored_json = parse_yaml(&stored).ok();
    if stored_json.as_ref() == Some(&actual_json) {
        host.record_snapshot(name, SnapshotOutcome::Matched, &shown);
        return Ok(());
    }
    if host.config.update_snapshots {
        return write(SnapshotOutcome::Updated);
    }
    host.record_snapshot(name, SnapshotOutcome::Mismatched, &shown);
    let difference = diff::unified(&stored, &actual, &shown, "actual");
    Err(failure(
        format!(
            "snapshot `{name}` does not match {shown} (rerun with --update-snapshots to accept)\n{}",
            difference.trim_end()
        ),
        position,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redacts_nested_paths_with_wildcards() {
        let value = from_json(&serde_json::json!({
            "items": [{"uid": "a", "name": "x"}, {"uid": "b", "name": "y"}],
            "metadata": {"uid": "m"}
        }));
        let redacted = to_json(&redact(
            value,
            &["items.*.uid".into(), "metadata.uid".into()],
        ));
        assert_eq!(
            redacted,
            serde_json::json!({
                "items": [{"uid": REDACTED, "name": "x"}, {"uid": REDACTED, "name": "y"}],
                "metadata": {"uid": REDACTED}
            })
        );
    }
}
