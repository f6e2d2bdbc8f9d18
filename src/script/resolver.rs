//! `import "x" as x;`: from the runbook's folder first, then the embedded stdlib.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use rhai::{Engine, EvalAltResult, Module, ModuleResolver, Position, Scope, Shared};

type SharedModule = Shared<Module>;

use super::sources::SourceMap;
use super::stdlib;

pub(crate) struct RunbookResolver {
    base_dir: PathBuf,
    /// How the base folder is shown in messages (relative, as the user gave the runbook).
    shown_dir: String,
    sources: SourceMap,
    cache: Mutex<HashMap<String, SharedModule>>,
    /// Modules being loaded now, outermost first: an import of one of them is a cycle.
    loading: Mutex<Vec<String>>,
}

impl RunbookResolver {
    pub(crate) fn new(base_dir: &Path, shown_dir: String, sources: SourceMap) -> Self {
        Self {
            base_dir: base_dir.to_path_buf(),
            shown_dir,
            sources,
            cache: Mutex::new(HashMap::new()),
            loading: Mutex::new(Vec::new()),
        }
    }

    /// Where an import path's text comes from: `(shown name, text)`.
    fn locate(&self, path: &str) -> Option<(String, String)> {
        let file = if path.ends_with(".rhai") {
            path.to_string()
        } else {
            format!("{path}.rhai")
        };
        let on_disk = self.base_dir.join(&file);
        if let Ok(text) = crate::sandbox::read_text_file(&on_disk, crate::sandbox::TEXT_FILE_LIMIT)
        {
            let shown = if self.shown_dir.is_empty() {
                file
            } else {
                format!("{}/{file}", self.shown_dir)
            };
            return Some((shown, text));
        }
        stdlib::find(path).map(|text| (stdlib::display_name(path), text.to_string()))
    }

    fn not_found(&self, path: &str, position: Position) -> Box<EvalAltResult> {
        let available: Vec<&str> = stdlib::names().collect();
        let folder = if self.shown_dir.is_empty() {
            "."
        } else {
            &self.shown_dir
        };
        EvalAltResult::ErrorRuntime(
            rhai::Dynamic::from(super::error::UsageError(format!(
                "module \"{path}\" not found: looked for {folder}/{path}.rhai and in the stdlib ({})",
                available.join(", ")
            ))),
            position,
        )
        .into()
    }
}

impl ModuleResolver for RunbookResolver {
    fn resolve(
        &self,
        engine: &Engine,
        _source: Option<&str>,
        path: &str,
        position: Position,
    ) -> Result<SharedModule, Box<EvalAltResult>> {
        let cache_key = path.strip_suffix(".rhai").unwrap_or(path).to_string();
        if let Some(module) = self
            .cache
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .get(&cache_key)
        {
            return Ok(module.clone());
        }
        let Some((shown, text)) = self.locate(path) else {
            return Err(self.not_found(path, position));
        };
        {
            let mut loading = self
                .loading
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            if let Some(start) = loading.iter().position(|m| *m == shown) {
                let mut chain: Vec<String> = loading[start..].to_vec();
                chain.push(shown.clone());
                return Err(EvalAltResult::ErrorRuntime(
                    rhai::Dynamic::from(super::error::UsageError(format!(
                        "import cycle: {} (a runbook's folder comes before the stdlib, so a file there can hide a stdlib module of the same name)",
                        chain.join(" imports ")
                    ))),
                    position,
                )
                .into());
            }
            loading.push(shown.clone());
        }
        let loaded = self.load(engine, &shown, &text, position);
        self.loading
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .retain(|m| *m != shown);
        let module = loaded?;
        self.cache
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert(cache_key, module.clone());
        Ok(module)
    }
}

impl RunbookResolver {
    fn load(
        &self,
        engine: &Engine,
        shown: &str,
        text: &str,
        position: Position,
    ) -> Result<SharedModule, Box<EvalAltResult>> {
        self.sources.insert(shown, text);
        let in_module = |error: Box<EvalAltResult>| -> Box<EvalAltResult> {
            EvalAltResult::ErrorInModule(shown.to_string(), error, position).into()
        };
        let mut ast = engine.compile(text).map_err(|e| in_module(e.into()))?;
        ast.set_source(shown);
        Ok(Module::eval_ast_as_new(Scope::new(), &ast, engine)
            .map_err(in_module)?
            .into())
    }
}
