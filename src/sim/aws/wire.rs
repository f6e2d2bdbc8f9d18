//! Wire helpers: query-string/form decoding and a small XML writer for EC2 and IAM.

use std::collections::BTreeMap;

/// A decoded `application/x-www-form-urlencoded` body (or query string).
pub fn form(text: &str) -> BTreeMap<String, String> {
    text.split('&')
        .filter(|p| !p.is_empty())
        .map(|pair| {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            (
                crate::sim::kube::routes::decode(k),
                crate::sim::kube::routes::decode(v),
            )
        })
        .collect()
}

/// `Prefix.1`, `Prefix.2`, ... values, in order.
pub fn numbered(params: &BTreeMap<String, String>, prefix: &str) -> Vec<String> {
    (1..)
        .map_while(|n| params.get(&format!("{prefix}.{n}")).cloned())
        .collect()
}

pub fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Builds XML by nesting; text is escaped.
#[derive(Default)]
pub struct Xml {
    out: String,
}

impl Xml {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn open(&mut self, tag: &str) -> &mut Self {
        self.out.push_str(&format!("<{tag}>"));
        self
    }

    pub fn close(&mut self, tag: &str) -> &mut Self {
        self.out.push_str(&format!("</{tag}>"));
        self
    }

    pub fn leaf(&mut self, tag: &str, text: impl std::fmt::Display) -> &mut Self {
        self.out
            .push_str(&format!("<{tag}>{}</{tag}>", escape(&text.to_string())));
        self
    }

    pub fn raw(&mut self, xml: &str) -> &mut Self {
        self.out.push_str(xml);
        self
    }

    pub fn finish(&mut self) -> String {
        std::mem::take(&mut self.out)
    }
}

/// ISO 8601 for a virtual instant, as the query protocols write times.
pub fn iso(virtual_time: std::time::Duration) -> String {
    crate::sim::timestamps::rfc3339(virtual_time).replace('Z', ".000Z")
}

/// Epoch seconds (rest-json timestamps).
pub fn epoch(virtual_time: std::time::Duration) -> f64 {
    crate::sim::timestamps::unix_seconds(virtual_time) as f64
}
