//! One RBAC `PolicyRule` and whether it grants a request, with the API server's matching:
//! `*` for any verb, group or resource, `*/scale` for a subresource of any resource,
//! `resourceNames` only for requests that name an object, and `/apis/*` as a URL prefix.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::sim::kube::auth::request_info::RequestAttributes;

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Rule {
    #[serde(default)]
    pub(crate) verbs: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) api_groups: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) resources: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) resource_names: Vec<String>,
    #[serde(
        default,
        rename = "nonResourceURLs",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub(crate) non_resource_urls: Vec<String>,
}

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| (*s).to_string()).collect()
}

impl Rule {
    /// A rule on resources of some API groups.
    pub(crate) fn on(verbs: &[&str], groups: &[&str], resources: &[&str]) -> Self {
        Self {
            verbs: strings(verbs),
            api_groups: strings(groups),
            resources: strings(resources),
            ..Self::default()
        }
    }

    /// A rule on non-resource URLs.
    pub(crate) fn on_urls(verbs: &[&str], urls: &[&str]) -> Self {
        Self {
            verbs: strings(verbs),
            non_resource_urls: strings(urls),
            ..Self::default()
        }
    }

    /// The rules of a Role or ClusterRole object; a malformed rule grants nothing.
    pub(crate) fn all_of(role: &Value) -> Vec<Self> {
        role["rules"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|r| serde_json::from_value(r.clone()).ok())
            .collect()
    }

    pub(crate) fn to_json(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    fn has(list: &[String], wanted: &str) -> bool {
        list.iter().any(|item| item == "*" || item == wanted)
    }

    /// Whether this rule grants a request with these attributes.
    pub(crate) fn allows(&self, attributes: &RequestAttributes) -> bool {
        match attributes {
            RequestAttributes::Resource {
                verb,
                api_group,
                resource,
                subresource,
                name,
                ..
            } => {
                let combined = match subresource {
                    Some(sub) => format!("{resource}/{sub}"),
                    None => resource.clone(),
                };
                let resource_matches = self.resources.iter().any(|r| {
                    r == "*"
                        || *r == combined
                        || subresource
                            .as_ref()
                            .is_some_and(|sub| r.strip_prefix("*/") == Some(sub.as_str()))
                });
                Self::has(&self.verbs, verb)
                    && Self::has(&self.api_groups, api_group)
                    && resource_matches
                    && (self.resource_names.is_empty()
                        || name
                            .as_ref()
                            .is_some_and(|n| self.resource_names.contains(n)))
            }
            RequestAttributes::NonResource { verb, url } => {
                Self::has(&self.verbs, verb)
                    && self.non_resource_urls.iter().any(|pattern| {
                        pattern == "*"
                            || pattern == url
                            || pattern
                                .strip_suffix('*')
                                .is_some_and(|prefix| url.starts_with(prefix))
                    })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::kube::auth::request_info::{named, resource};

    #[test]
    fn wildcards_subresources_and_names_match_as_the_api_server_matches_them() {
        let scale = Rule::on(&["get"], &["apps"], &["*/scale"]);
        assert!(scale.allows(&resource("get", "apps", "deployments", Some("scale"), None)));
        assert!(!scale.allows(&resource("get", "apps", "deployments", None, None)));
        let pods = Rule::on(&["*"], &[""], &["pods"]);
        assert!(pods.allows(&resource("delete", "", "pods", None, Some("x"))));
        assert!(
            !pods.allows(&resource("create", "", "pods", Some("exec"), Some("x"))),
            "pods does not grant pods/exec"
        );
        let one = Rule {
            resource_names: vec!["nightly".into()],
            ..Rule::on(&["get", "list"], &[""], &["configmaps"])
        };
        assert!(one.allows(&named(
            resource("get", "", "configmaps", None, Some("x")),
            "nightly"
        )));
        assert!(
            !one.allows(&resource("list", "", "configmaps", None, Some("x"))),
            "a list names no object"
        );
        let url = |verb: &str, url: &str| RequestAttributes::NonResource {
            verb: verb.into(),
            url: url.into(),
        };
        let discovery = Rule::on_urls(&["get"], &["/apis/*", "/version"]);
        assert!(discovery.allows(&url("get", "/apis/apps/v1")));
        assert!(discovery.allows(&url("get", "/version")));
        assert!(!discovery.allows(&url("get", "/versions")));
        assert!(!discovery.allows(&url("post", "/apis/x")));
        assert!(
            !Rule::on(&["*"], &["*"], &["*"]).allows(&url("get", "/metrics")),
            "resource rules grant no URL"
        );
    }

    #[test]
    fn rules_read_from_an_object_and_skip_what_is_malformed() {
        let role = serde_json::json!({"rules": [
            {"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]},
            {"verbs": "not a list"},
        ]});
        let rules = Rule::all_of(&role);
        assert_eq!(rules, vec![Rule::on(&["get"], &[""], &["pods"])]);
        assert_eq!(
            rules[0].to_json(),
            serde_json::json!({"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]})
        );
    }
}
