//! Documentation of every host function and stdlib module, from Rhai's own metadata: the same
//! source `runbook docs` and the REPL's help read.

use rhai::Engine;
use serde::Deserialize;

use super::stdlib;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FunctionDoc {
    /// `""` for global functions, else the module (`json`, `check`).
    pub module: String,
    pub name: String,
    pub signature: String,
    pub doc: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ModuleMeta {
    #[serde(default)]
    modules: std::collections::BTreeMap<String, ModuleMeta>,
    #[serde(default)]
    functions: Vec<FnMeta>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct FnMeta {
    name: String,
    signature: String,
    #[serde(default)]
    doc_comments: Vec<String>,
}

fn clean_comment(comments: &[String]) -> String {
    comments
        .iter()
        .flat_map(|c| c.lines())
        .map(|line| {
            line.trim()
                .trim_start_matches("///")
                .trim_start_matches("/**")
                .trim_end_matches("*/")
                .trim()
        })
        .collect::<Vec<_>>()
        .join("\n")
        .trim()
        .to_string()
}

/// Every documented host function (Rhai's own standard library left out) and every public
/// function of the embedded stdlib, sorted by module and name.
pub fn function_docs(engine: &Engine) -> Vec<FunctionDoc> {
    let mut docs = Vec::new();
    if let Ok(text) = engine.gen_fn_metadata_to_json(false)
        && let Ok(meta) = serde_json::from_str::<ModuleMeta>(&text)
    {
        collect(&meta, "", &mut docs);
    }
    for name in stdlib::names() {
        let Some(source) = stdlib::find(name) else {
            continue;
        };
        let Ok(ast) = engine.compile(source) else {
            continue;
        };
        for f in ast
            .iter_functions()
            .filter(|f| f.access == rhai::FnAccess::Public)
        {
            let comments: Vec<String> = f.comments.iter().map(|c| c.to_string()).collect();
            docs.push(FunctionDoc {
                module: name.to_string(),
                name: f.name.to_string(),
                signature: format!("{name}::{}({})", f.name, f.params.join(", ")),
                doc: clean_comment(&comments),
            });
        }
    }
    docs.sort_by(|a, b| {
        (&a.module, &a.name, &a.signature).cmp(&(&b.module, &b.name, &b.signature))
    });
    docs
}

fn collect(meta: &ModuleMeta, module: &str, out: &mut Vec<FunctionDoc>) {
    for f in meta.functions.iter().filter(|f| !f.doc_comments.is_empty()) {
        let signature = if module.is_empty() {
            f.signature.clone()
        } else {
            format!("{module}::{}", f.signature)
        };
        out.push(FunctionDoc {
            module: module.to_string(),
            name: f.name.clone(),
            signature,
            doc: clean_comment(&f.doc_comments),
        });
    }
    for (name, sub) in &meta.modules {
        collect(sub, name, out);
    }
}
