//! Reading a spec map (`#{ name: "...", subnets: [...] }`) with errors that name the function
//! and the key.

use rhai::{Dynamic, EvalAltResult, Map, Position};

use super::args::known_options;
use crate::script::usage_error;

type Result<T> = std::result::Result<T, Box<EvalAltResult>>;

pub(crate) struct Spec<'a> {
    map: &'a Map,
    function: &'a str,
    position: Position,
}

impl<'a> Spec<'a> {
    /// Checks the keys against `known` first.
    pub(crate) fn new(
        map: &'a Map,
        function: &'a str,
        known: &[&str],
        position: Position,
    ) -> Result<Self> {
        known_options(map, function, known, position)?;
        Ok(Self {
            map,
            function,
            position,
        })
    }

    fn value(&self, key: &str) -> Option<&Dynamic> {
        self.map.get(key).filter(|v| !v.is_unit())
    }

    fn wrong(&self, key: &str, wanted: &str, got: &Dynamic) -> Box<EvalAltResult> {
        usage_error(
            format!(
                "{}: `{key}` must be {wanted}, got {} ({got})",
                self.function,
                got.type_name()
            ),
            self.position,
        )
    }

    pub(crate) fn string(&self, key: &str) -> Result<Option<String>> {
        match self.value(key) {
            None => Ok(None),
            Some(v) => v
                .clone()
                .into_string()
                .map(Some)
                .map_err(|_| self.wrong(key, "a string", v)),
        }
    }

    pub(crate) fn required(&self, key: &str) -> Result<String> {
        self.string(key)?.ok_or_else(|| {
            usage_error(
                format!("{}: `{key}` is required", self.function),
                self.position,
            )
        })
    }

    pub(crate) fn strings(&self, key: &str) -> Result<Vec<String>> {
        self.array_of(key, "an array of strings", |item| {
            item.clone().into_string().ok()
        })
    }

    /// An array whose every item `item` can read; `what` names it in the error.
    fn array_of<T>(
        &self,
        key: &str,
        what: &str,
        item: impl Fn(&Dynamic) -> Option<T>,
    ) -> Result<Vec<T>> {
        match self.value(key) {
            None => Ok(Vec::new()),
            Some(v) => match v.read_lock::<rhai::Array>() {
                Some(items) => items
                    .iter()
                    .map(|i| item(i).ok_or_else(|| self.wrong(key, what, v)))
                    .collect(),
                None => Err(self.wrong(key, what, v)),
            },
        }
    }

    pub(crate) fn int(&self, key: &str) -> Result<Option<i64>> {
        match self.value(key) {
            None => Ok(None),
            Some(v) => v
                .as_int()
                .map(Some)
                .map_err(|_| self.wrong(key, "an integer", v)),
        }
    }

    /// A number, integer or not.
    pub(crate) fn number(&self, key: &str) -> Result<Option<f64>> {
        match self.value(key) {
            None => Ok(None),
            Some(v) if v.is_int() => Ok(v.as_int().ok().map(|n| n as f64)),
            Some(v) => v
                .as_float()
                .map(Some)
                .map_err(|_| self.wrong(key, "a number", v)),
        }
    }

    /// A map of strings (`#{ tier: "gpu" }`) as pairs, in key order.
    pub(crate) fn pairs(&self, key: &str) -> Result<Vec<(String, String)>> {
        match self.value(key) {
            None => Ok(Vec::new()),
            Some(v) => match v.read_lock::<Map>() {
                Some(map) => Ok(map
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect()),
                None => Err(self.wrong(key, "a map", v)),
            },
        }
    }

    pub(crate) fn maps(&self, key: &str) -> Result<Vec<Map>> {
        self.array_of(key, "an array of maps", |item| {
            item.read_lock::<Map>().map(|m| m.clone())
        })
    }

    pub(crate) fn error(&self, message: impl std::fmt::Display) -> Box<EvalAltResult> {
        usage_error(format!("{}: {message}", self.function), self.position)
    }
}
