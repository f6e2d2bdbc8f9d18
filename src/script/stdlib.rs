//! The Rhai modules under `stdlib/`, embedded at build time.

include!(concat!(env!("OUT_DIR"), "/stdlib.rs"));

/// The source of an embedded module, by import name (`"check"` or `"check.rhai"`).
pub(crate) fn find(name: &str) -> Option<&'static str> {
    let name = name.strip_suffix(".rhai").unwrap_or(name);
    MODULES
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, source)| *source)
}

pub(crate) fn names() -> impl Iterator<Item = &'static str> {
    MODULES.iter().map(|(name, _)| *name)
}

/// The name errors and reports use for an embedded module.
pub(crate) fn display_name(name: &str) -> String {
    format!("stdlib/{}.rhai", name.strip_suffix(".rhai").unwrap_or(name))
}
