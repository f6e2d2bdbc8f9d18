//! What an authorizer sees of a request: the RBAC attributes (verb, API group, resource,
//! subresource, namespace, name, or a non-resource URL) the real API server's
//! RequestInfoFactory derives from its method, path and query.

use serde::Serialize;

use crate::sim::kube::http::routes::{self, Query, Route};

/// One request as RBAC rules match it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(untagged)]
pub(crate) enum RequestAttributes {
    Resource {
        verb: String,
        #[serde(rename = "apiGroup")]
        api_group: String,
        resource: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        subresource: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        namespace: Option<String>,
        /// What `resourceNames` in a rule match; None for lists, watches and collections.
        #[serde(skip_serializing_if = "Option::is_none")]
        name: Option<String>,
    },
    NonResource {
        verb: String,
        #[serde(rename = "nonResourceURL")]
        url: String,
    },
}

/// The attributes of `method path?query`, or None for the twin's own `/twin/` endpoints,
/// which no cluster has and no role grants. A server-side apply that creates its object is
/// authorized as `create` too: see [`created_by_apply`].
pub(crate) fn attributes(method: &str, path: &str, query: &Query) -> Option<RequestAttributes> {
    let lower = method.to_ascii_lowercase();
    match routes::parse(path) {
        Route::Admin { .. } => None,
        Route::Resource(r) => {
            let verb = match (method, r.name.is_some()) {
                _ if matches!(
                    r.subresource.as_deref(),
                    Some("exec" | "attach" | "portforward")
                ) =>
                {
                    // Since Kubernetes 1.30 (AuthorizePodWebsocketUpgradeCreatePermission) a
                    // WebSocket GET to these needs `create`, as the SPDY POST always did.
                    "create"
                }
                ("GET", _) if query.flag("watch") => "watch",
                ("GET", true) => "get",
                ("GET", false) => "list",
                ("POST", _) => "create",
                ("PUT", _) => "update",
                ("PATCH", _) => "patch",
                ("DELETE", true) => "delete",
                ("DELETE", false) => "deletecollection",
                _ => lower.as_str(),
            };
            Some(RequestAttributes::Resource {
                verb: verb.into(),
                api_group: r.group,
                resource: r.plural,
                subresource: r.subresource,
                namespace: r.namespace,
                name: r.name,
            })
        }
        // Discovery, health, version and OpenAPI paths, and paths that serve nothing: RBAC
        // matches them as non-resource URLs.
        _ => Some(RequestAttributes::NonResource {
            verb: lower,
            url: path.to_string(),
        }),
    }
}

/// The `create` a server-side apply (PATCH) that made a new object (201) is also authorized
/// for, as the API server does: patch edits, only create makes.
pub(crate) fn created_by_apply(
    patch: &RequestAttributes,
    status: u16,
) -> Option<RequestAttributes> {
    match patch {
        RequestAttributes::Resource { verb, .. } if verb == "patch" && status == 201 => {
            let mut create = patch.clone();
            if let RequestAttributes::Resource { verb, .. } = &mut create {
                *verb = "create".into();
            }
            Some(create)
        }
        _ => None,
    }
}

/// The attributes of a request for a resource, unnamed (tests of the authorizer and of this).
#[cfg(test)]
pub(crate) fn resource(
    verb: &str,
    group: &str,
    resource: &str,
    sub: Option<&str>,
    ns: Option<&str>,
) -> RequestAttributes {
    RequestAttributes::Resource {
        verb: verb.into(),
        api_group: group.into(),
        resource: resource.into(),
        subresource: sub.map(str::to_string),
        namespace: ns.map(str::to_string),
        name: None,
    }
}

/// The same attributes naming the object `wanted` (tests).
#[cfg(test)]
pub(crate) fn named(mut attributes: RequestAttributes, wanted: &str) -> RequestAttributes {
    if let RequestAttributes::Resource { name, .. } = &mut attributes {
        *name = Some(wanted.into());
    }
    attributes
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(method: &str, path_and_query: &str) -> RequestAttributes {
        let (path, query) = path_and_query
            .split_once('?')
            .map_or((path_and_query, None), |(p, q)| (p, Some(q)));
        attributes(method, path, &Query::parse(query)).expect("not a twin endpoint")
    }

    #[test]
    fn verbs_follow_method_name_and_watch() {
        assert_eq!(
            of("GET", "/api/v1/nodes"),
            resource("list", "", "nodes", None, None)
        );
        assert_eq!(
            of("GET", "/api/v1/nodes/n1"),
            named(resource("get", "", "nodes", None, None), "n1")
        );
        assert_eq!(
            of(
                "GET",
                "/api/v1/namespaces/a/pods?watch=true&labelSelector=x"
            ),
            resource("watch", "", "pods", None, Some("a"))
        );
        assert_eq!(
            of(
                "PATCH",
                "/apis/apps/v1/namespaces/kube-system/deployments/coredns/scale"
            ),
            named(
                resource(
                    "patch",
                    "apps",
                    "deployments",
                    Some("scale"),
                    Some("kube-system")
                ),
                "coredns"
            )
        );
        assert_eq!(
            of("DELETE", "/api/v1/namespaces/a/pods?labelSelector=x"),
            resource("deletecollection", "", "pods", None, Some("a"))
        );
        assert_eq!(
            of("DELETE", "/api/v1/namespaces/a"),
            named(resource("delete", "", "namespaces", None, None), "a")
        );
    }

    #[test]
    fn exec_over_either_protocol_needs_create() {
        for method in ["GET", "POST"] {
            assert_eq!(
                of(
                    method,
                    "/api/v1/namespaces/a/pods/p/exec?command=nvidia-smi"
                ),
                named(resource("create", "", "pods", Some("exec"), Some("a")), "p")
            );
        }
        assert_eq!(
            of("GET", "/api/v1/namespaces/a/pods/p/log"),
            named(resource("get", "", "pods", Some("log"), Some("a")), "p")
        );
    }

    #[test]
    fn an_apply_that_creates_is_a_create_too() {
        let apply = of("PATCH", "/api/v1/namespaces/a/pods/p");
        assert_eq!(created_by_apply(&apply, 200), None);
        assert_eq!(
            created_by_apply(&apply, 201),
            Some(named(resource("create", "", "pods", None, Some("a")), "p"))
        );
    }

    #[test]
    fn discovery_and_health_are_non_resource_urls_and_twin_endpoints_are_nothing() {
        assert_eq!(
            of("GET", "/readyz?verbose"),
            RequestAttributes::NonResource {
                verb: "get".into(),
                url: "/readyz".into()
            }
        );
        assert_eq!(
            of("GET", "/apis"),
            RequestAttributes::NonResource {
                verb: "get".into(),
                url: "/apis".into()
            }
        );
        assert_eq!(attributes("GET", "/twin/clock", &Query::default()), None);
    }
}
