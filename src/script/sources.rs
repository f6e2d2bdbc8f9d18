//! The text of every script a run loaded, by the name errors use for it, to quote lines.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

#[derive(Clone, Default)]
pub struct SourceMap {
    texts: Arc<Mutex<HashMap<String, Arc<str>>>>,
}

impl SourceMap {
    pub fn insert(&self, name: &str, text: &str) {
        self.lock().insert(name.to_string(), Arc::from(text));
    }

    pub fn get(&self, name: &str) -> Option<Arc<str>> {
        self.lock().get(name).cloned()
    }

    /// The 1-based line of a source, if known.
    pub fn line(&self, name: &str, line: usize) -> Option<String> {
        let text = self.get(name)?;
        text.lines().nth(line.checked_sub(1)?).map(str::to_string)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<str>>> {
        self.texts
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}
