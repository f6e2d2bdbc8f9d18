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
        for f in ast.iter_functions().filter(|f| is_public(f)) {
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

/// Rhai's `exit` is a keyword to the language server's parser, which stops reading a file at
/// `fn exit(...)`: those declarations (and their doc comments) are left out; the language
/// server knows the keyword.
fn without_keyword_functions(text: &str) -> String {
    text.split("\n\n")
        .filter(|block| !block.lines().any(|line| line.starts_with("fn exit(")))
        .collect::<Vec<_>>()
        .join("\n\n")
}

/// A stdlib module's own public function; closures compile to public `anon$...` functions,
/// which no one calls by name.
fn is_public(f: &rhai::ScriptFnMetadata<'_>) -> bool {
    f.access == rhai::FnAccess::Public && !f.name.starts_with("anon$")
}

/// Rhai definition files (`NAME.d.rhai`, as `(file name, text)`), what Rhai's language server
/// and editor extensions read: Rhai's own standard library and the host's modules as Rhai's
/// definitions writer renders them (signatures and doc comments), and one file per embedded
/// stdlib module with its public functions and their doc comments.
pub fn definition_files(engine: &Engine) -> Vec<(String, String)> {
    let mut files: Vec<(String, String)> = engine
        .definitions()
        .include_standard_packages(true)
        .iter_files()
        // Rhai writes an inclusive range's type as `range=`, which the language server's
        // parser does not read; `range` is the nearest type it does.
        // Nor an empty return type, which it writes for a few functions of its own.
        .map(|(name, text)| {
            let text = text
                .replace(": range=", ": range")
                .replace(") -> ;", ") -> ?;");
            (name, without_keyword_functions(&text))
        })
        .collect();
    for name in stdlib::names() {
        let Some(ast) = stdlib::find(name).and_then(|source| engine.compile(source).ok()) else {
            continue;
        };
        let mut text = format!("module {name};\n");
        // The AST keeps its functions in a hash map: in name order, the file is the same
        // from one run to the next.
        let mut functions: Vec<_> = ast.iter_functions().filter(|f| is_public(f)).collect();
        functions.sort_by(|a, b| (a.name, a.params.len()).cmp(&(b.name, b.params.len())));
        for f in functions {
            text.push('\n');
            for comment in f.comments.iter() {
                for line in comment.lines() {
                    text.push_str(line.trim());
                    text.push('\n');
                }
            }
            // Script functions are untyped: `?` is the definitions' word for any value.
            let params: Vec<String> = f.params.iter().map(|p| format!("{p}: ?")).collect();
            text.push_str(&format!("fn {}({}) -> ?;\n", f.name, params.join(", ")));
        }
        files.push((format!("{name}.d.rhai"), text));
    }
    files
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
