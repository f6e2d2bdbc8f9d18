//! URL paths and query strings of the Kubernetes API, parsed into what the handlers serve.

use std::collections::HashMap;

use super::health::Endpoint;

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Route {
    Version,
    CoreVersions,
    GroupList,
    Group {
        group: String,
    },
    ResourceList {
        group: String,
        version: String,
    },
    Health {
        endpoint: Endpoint,
        check: Option<String>,
    },
    Resource(ResourcePath),
    OpenApiRoot,
    OpenApi {
        path: String,
    },
    /// The twin's own control endpoints (`/twin/...`): clock, faults.
    Admin {
        path: String,
    },
    NotFound,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ResourcePath {
    pub(crate) group: String,
    pub(crate) version: String,
    pub(crate) namespace: Option<String>,
    pub(crate) plural: String,
    pub(crate) name: Option<String>,
    pub(crate) subresource: Option<String>,
}

pub(crate) fn parse(path: &str) -> Route {
    let segments: Vec<&str> = path
        .trim_matches('/')
        .split('/')
        .filter(|s| !s.is_empty())
        .collect();
    match segments.as_slice() {
        ["version"] => Route::Version,
        ["api"] => Route::CoreVersions,
        ["apis"] => Route::GroupList,
        ["api", "v1"] => Route::ResourceList {
            group: String::new(),
            version: "v1".into(),
        },
        ["apis", group] => Route::Group {
            group: (*group).into(),
        },
        ["apis", group, version] => Route::ResourceList {
            group: (*group).into(),
            version: (*version).into(),
        },
        ["api", "v1", rest @ ..] => resource("", "v1", rest),
        ["apis", group, version, rest @ ..] => resource(group, version, rest),
        [endpoint @ ("readyz" | "livez" | "healthz"), check @ ..] => Route::Health {
            endpoint: match *endpoint {
                "readyz" => Endpoint::Readyz,
                "livez" => Endpoint::Livez,
                _ => Endpoint::Healthz,
            },
            check: (!check.is_empty()).then(|| check.join("/")),
        },
        ["openapi", "v3"] => Route::OpenApiRoot,
        ["openapi", "v3", rest @ ..] => Route::OpenApi {
            path: rest.join("/"),
        },
        ["twin", rest @ ..] => Route::Admin {
            path: rest.join("/"),
        },
        _ => Route::NotFound,
    }
}

fn resource(group: &str, version: &str, rest: &[&str]) -> Route {
    let make =
        |namespace: Option<&str>, plural: &str, name: Option<&str>, subresource: Option<&str>| {
            Route::Resource(ResourcePath {
                group: group.into(),
                version: version.into(),
                namespace: namespace.map(str::to_string),
                plural: plural.into(),
                name: name.map(str::to_string),
                subresource: subresource.map(str::to_string),
            })
        };
    let namespace_subresources = ["status", "finalize"];
    match rest {
        // `/api/v1/namespaces/{name}` and its subresources are the Namespace object itself.
        ["namespaces"] if group.is_empty() => make(None, "namespaces", None, None),
        ["namespaces", name] if group.is_empty() => make(None, "namespaces", Some(name), None),
        ["namespaces", name, sub] if group.is_empty() && namespace_subresources.contains(sub) => {
            make(None, "namespaces", Some(name), Some(sub))
        }
        ["namespaces", namespace, plural] => make(Some(namespace), plural, None, None),
        ["namespaces", namespace, plural, name] => make(Some(namespace), plural, Some(name), None),
        ["namespaces", namespace, plural, name, sub] => {
            make(Some(namespace), plural, Some(name), Some(sub))
        }
        [plural] => make(None, plural, None, None),
        [plural, name] => make(None, plural, Some(name), None),
        [plural, name, sub] => make(None, plural, Some(name), Some(sub)),
        _ => Route::NotFound,
    }
}

/// Query parameters; repeated keys (`command=a&command=b`) keep every value in order.
#[derive(Debug, Default, Clone)]
pub(crate) struct Query {
    values: HashMap<String, Vec<String>>,
}

impl Query {
    pub(crate) fn parse(query: Option<&str>) -> Self {
        let mut values: HashMap<String, Vec<String>> = HashMap::new();
        for pair in query
            .unwrap_or_default()
            .split('&')
            .filter(|p| !p.is_empty())
        {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            values.entry(decode(key)).or_default().push(decode(value));
        }
        Self { values }
    }

    pub(crate) fn get(&self, key: &str) -> Option<&str> {
        self.values
            .get(key)
            .and_then(|v| v.first())
            .map(String::as_str)
    }

    pub(crate) fn all(&self, key: &str) -> &[String] {
        self.values.get(key).map(Vec::as_slice).unwrap_or_default()
    }

    pub(crate) fn has(&self, key: &str) -> bool {
        self.values.contains_key(key)
    }

    /// `true`, `1` or a bare key count as set.
    pub(crate) fn flag(&self, key: &str) -> bool {
        self.get(key)
            .is_some_and(|v| v.is_empty() || v == "true" || v == "1")
    }
}

/// Percent-decoding, `+` as space.
pub(crate) fn decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => {
                match u8::from_str_radix(
                    std::str::from_utf8(&bytes[i + 1..i + 3]).unwrap_or("zz"),
                    16,
                ) {
                    Ok(byte) => {
                        out.push(byte);
                        i += 2;
                    }
                    Err(_) => out.push(b'%'),
                }
            }
            byte => out.push(byte),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn namespaced_cluster_and_namespace_paths() {
        assert_eq!(
            parse("/apis/apps/v1/namespaces/kube-system/deployments/coredns/scale"),
            Route::Resource(ResourcePath {
                group: "apps".into(),
                version: "v1".into(),
                namespace: Some("kube-system".into()),
                plural: "deployments".into(),
                name: Some("coredns".into()),
                subresource: Some("scale".into()),
            })
        );
        let Route::Resource(ns) = parse("/api/v1/namespaces/kube-system") else {
            panic!()
        };
        assert_eq!(
            (ns.plural.as_str(), ns.name.as_deref(), ns.namespace),
            ("namespaces", Some("kube-system"), None)
        );
        let Route::Resource(pods) = parse("/api/v1/namespaces/default/pods") else {
            panic!()
        };
        assert_eq!(
            (pods.plural.as_str(), pods.namespace.as_deref()),
            ("pods", Some("default"))
        );
        assert!(
            matches!(parse("/readyz/etcd"), Route::Health { check: Some(c), .. } if c == "etcd")
        );
    }

    #[test]
    fn queries_decode_and_repeat() {
        let q = Query::parse(Some(
            "labelSelector=tier%3Dgpu%2Czone+in+(a)&command=echo&command=hi&watch=1",
        ));
        assert_eq!(q.get("labelSelector"), Some("tier=gpu,zone in (a)"));
        assert_eq!(q.all("command"), ["echo", "hi"]);
        assert!(q.flag("watch"));
    }
}
