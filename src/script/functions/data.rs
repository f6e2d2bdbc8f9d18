//! `read_text`, `json::` and `yaml::`: reading data, never writing it.

use std::sync::Arc;

use rhai::{Dynamic, Engine, EvalAltResult, Module, NativeCallContext};

use super::doc;
use crate::script::convert::{from_json, parse_yaml_documents, to_json, to_yaml};
use crate::script::error::failure;
use crate::script::host::Host;

pub(super) fn register(engine: &mut Engine, host: &Arc<Host>) {
    register_read_text(engine, host);
    register_json(engine);
    register_yaml(engine);
}

fn register_read_text(engine: &mut Engine, host: &Arc<Host>) {
    let h = host.clone();
    doc(
        "read_text",
        &["path: &str", "String"],
        "The text of a file, relative to the runbook's folder. Only files under the runbook's\n\
         folder, the snapshot folder and --allow-read folders can be read (never /proc, /sys,\n\
         /dev), up to --max-read-bytes (64 MiB).",
    )
    .register_into_engine(
        engine,
        move |ctx: NativeCallContext, path: &str| -> Result<String, Box<EvalAltResult>> {
            let full = h.config.base_dir.join(path);
            h.config
                .read
                .read_text(&full)
                .map_err(|e| failure(e.to_string(), ctx.call_position()))
        },
    );
}

/// Registers `json::parse` and `json::to_string`.
fn register_json(engine: &mut Engine) {
    let mut json = Module::new();
    doc(
        "parse",
        &["text: &str", "Dynamic"],
        "Parses JSON into maps, arrays and scalars.",
    )
    .set_into_module(
        &mut json,
        |ctx: NativeCallContext, text: &str| -> Result<Dynamic, Box<EvalAltResult>> {
            let value: serde_json::Value = serde_json::from_str(text)
                .map_err(|e| failure(format!("invalid JSON: {e}"), ctx.call_position()))?;
            Ok(from_json(&value))
        },
    );
    doc(
        "to_string",
        &["value: Dynamic", "String"],
        "Pretty JSON text of a value, keys sorted.",
    )
    .set_into_module(&mut json, |value: Dynamic| {
        serde_json::to_string_pretty(&to_json(&value)).unwrap_or_default()
    });
    doc(
        "to_string",
        &["value: Dynamic", "pretty: bool", "String"],
        "JSON text of a value, pretty or on one line.",
    )
    .set_into_module(&mut json, |value: Dynamic, pretty: bool| {
        let json = to_json(&value);
        if pretty {
            serde_json::to_string_pretty(&json)
        } else {
            serde_json::to_string(&json)
        }
        .unwrap_or_default()
    });
    engine.register_static_module("json", json.into());
}

/// Registers `yaml::parse`, `yaml::parse_all` and `yaml::to_string`.
fn register_yaml(engine: &mut Engine) {
    let mut yaml = Module::new();
    doc(
        "parse",
        &["text: &str", "Dynamic"],
        "Parses a single YAML document (use `parse_all` for several).",
    )
    .set_into_module(
        &mut yaml,
        |ctx: NativeCallContext, text: &str| -> Result<Dynamic, Box<EvalAltResult>> {
            let position = ctx.call_position();
            let mut documents = parse_all(text).map_err(|e| failure(e, position))?;
            match documents.len() {
                0 => Ok(Dynamic::UNIT),
                1 => Ok(documents.remove(0)),
                n => Err(failure(
                    format!("the YAML text has {n} documents; use yaml::parse_all"),
                    position,
                )),
            }
        },
    );
    doc(
        "parse_all",
        &["text: &str", "Array"],
        "Parses every document of a multi-document YAML text (`---`), skipping empty ones.",
    )
    .set_into_module(
        &mut yaml,
        |ctx: NativeCallContext, text: &str| -> Result<rhai::Array, Box<EvalAltResult>> {
            parse_all(text).map_err(|e| failure(e, ctx.call_position()))
        },
    );
    doc(
        "to_string",
        &["value: Dynamic", "String"],
        "YAML text of a value, keys sorted.",
    )
    .set_into_module(&mut yaml, |value: Dynamic| to_yaml(&to_json(&value)));
    engine.register_static_module("yaml", yaml.into());
}

fn parse_all(text: &str) -> Result<Vec<Dynamic>, String> {
    let documents = parse_yaml_documents(text).map_err(|e| format!("invalid YAML: {e}"))?;
    Ok(documents
        .iter()
        .filter(|d| !d.is_null())
        .map(from_json)
        .collect())
}
