//! Ingresses (networking.k8s.io/v1), as 1.35's `ValidateIngressCreate` and
//! `ValidateIngressSpec` check them (`pkg/apis/networking/validation/validation.go`): a rule or
//! a default backend, hosts (a DNS name, not an IP; a wildcard only as `*.`), each path's type
//! and path, backends (a service's name and one of its port's name or number), TLS hosts and
//! secrets, and on create the class annotation agreeing with `ingressClassName`.

use std::net::IpAddr;

use serde_json::Value;

use super::errors::Errors;
use super::names::{
    dns_subdomain, dns1035_label, path_segment, port_name, port_number, wildcard_dns_subdomain,
};

/// `supportedPathTypes.List()`: sorted, as the set lists them.
const PATH_TYPES: [&str; 3] = ["Exact", "ImplementationSpecific", "Prefix"];
const INVALID_SEQUENCES: [&str; 5] = ["//", "/./", "/../", "%2f", "%2F"];
const INVALID_SUFFIXES: [&str; 2] = ["/..", "/."];
const CLASS_ANNOTATION: &str = "kubernetes.io/ingress.class";

fn text(value: &Value) -> &str {
    value.as_str().unwrap_or_default()
}

fn empty_string() -> Value {
    Value::String(String::new())
}

/// A host: not an IP, and a DNS subdomain (`*.` wildcards by their own rule).
fn host(host: &Value, at: &str, errors: &mut Errors) {
    let name = text(host);
    if name.is_empty() {
        return;
    }
    if name.parse::<IpAddr>().is_ok() {
        errors.invalid(at, host, "must be a DNS name, not an IP address");
    }
    let messages = if name.contains('*') {
        wildcard_dns_subdomain(name)
    } else {
        dns_subdomain(name)
    };
    for message in messages {
        errors.invalid(at, host, &message);
    }
}

/// `validateIngressTypedLocalObjectReference`: a backend that is a resource.
fn resource_reference(reference: &Value, at: &str, errors: &mut Errors) {
    if let Some(group) = reference["apiGroup"].as_str() {
        for message in dns_subdomain(group) {
            errors.invalid(format!("{at}.apiGroup"), &reference["apiGroup"], &message);
        }
    }
    for field in ["kind", "name"] {
        let value = &reference[field];
        if text(value).is_empty() {
            errors.required(format!("{at}.{field}"));
        }
        for message in path_segment(text(value)) {
            errors.invalid(format!("{at}.{field}"), value, &message);
        }
    }
}

/// `validateIngressBackend`: one of a resource and a service; a service by a DNS-1035 name
/// (`RelaxedServiceNameValidation` is alpha, off) and its port's name or number, not both.
fn backend(backend: &Value, at: &str, errors: &mut Errors) {
    let (resource, service) = (&backend["resource"], &backend["service"]);
    match (resource.is_null(), service.is_null()) {
        (false, false) => errors.invalid(
            at,
            &empty_string(),
            "cannot set both resource and service backends",
        ),
        (false, true) => resource_reference(resource, &format!("{at}.resource"), errors),
        (true, true) => errors.invalid(
            at,
            &empty_string(),
            "resource or service backend is required",
        ),
        (true, false) => service_backend(service, at, errors),
    }
}

fn service_backend(service: &Value, at: &str, errors: &mut Errors) {
    let name = &service["name"];
    if text(name).is_empty() {
        errors.required(format!("{at}.service.name"));
    }
    for message in dns1035_label(text(name))
        .into_iter()
        .filter(|_| !text(name).is_empty())
    {
        errors.invalid(format!("{at}.service.name"), name, &message);
    }
    let port = &service["port"];
    let number = port["number"].as_i64().unwrap_or(0);
    match (text(&port["name"]).is_empty(), number == 0) {
        (false, false) => {
            errors.invalid(
                at,
                &empty_string(),
                "cannot set both port name & port number",
            );
        }
        (false, true) => {
            for message in port_name(text(&port["name"])) {
                errors.invalid(format!("{at}.service.port.name"), &port["name"], &message);
            }
        }
        (true, false) => {
            for message in port_number(number) {
                errors.invalid(
                    format!("{at}.service.port.number"),
                    &port["number"],
                    &message,
                );
            }
        }
        (true, true) => errors.required_because(at, "port name or number is required"),
    }
}

/// `validateHTTPIngressPath`: a path type is required (its backend goes unchecked without
/// one, as upstream returns early); Exact and Prefix paths are absolute and clean.
fn http_path(path: &Value, at: &str, errors: &mut Errors) {
    let Some(kind) = path["pathType"].as_str() else {
        return errors.required_because(format!("{at}.pathType"), "pathType must be specified");
    };
    let (value, text) = (&path["path"], text(&path["path"]));
    let field = format!("{at}.path");
    match kind {
        "Exact" | "Prefix" => {
            if !text.starts_with('/') {
                errors.invalid(&field, value, "must be an absolute path");
            }
            for sequence in INVALID_SEQUENCES.iter().filter(|s| text.contains(**s)) {
                errors.invalid(&field, value, &format!("must not contain '{sequence}'"));
            }
            for suffix in INVALID_SUFFIXES.iter().filter(|s| text.ends_with(**s)) {
                errors.invalid(&field, value, &format!("cannot end with '{suffix}'"));
            }
        }
        "ImplementationSpecific" if !text.is_empty() && !text.starts_with('/') => {
            errors.invalid(&field, value, "must be an absolute path");
        }
        "ImplementationSpecific" => {}
        other => errors.not_supported(format!("{at}.pathType"), other, &PATH_TYPES),
    }
    backend(&path["backend"], &format!("{at}.backend"), errors);
}

/// `validateIngressRules`: each rule's host, then its HTTP paths (at least one).
fn rules(rules: &[Value], errors: &mut Errors) {
    for (i, rule) in rules.iter().enumerate() {
        let at = format!("spec.rules[{i}]");
        host(&rule["host"], &format!("{at}.host"), errors);
        let http = &rule["http"];
        if http.is_null() {
            continue;
        }
        let paths = http["paths"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or_default();
        if paths.is_empty() {
            errors.required(format!("{at}.http.paths"));
        }
        for (j, path) in paths.iter().enumerate() {
            http_path(path, &format!("{at}.http.paths[{j}]"), errors);
        }
    }
}

/// `validateIngressTLS`: hosts as rules' hosts are (no IP check), secrets by a Secret's name.
fn tls(entries: &Value, errors: &mut Errors) {
    for (i, entry) in entries.as_array().into_iter().flatten().enumerate() {
        for (j, name) in entry["hosts"].as_array().into_iter().flatten().enumerate() {
            let messages = if text(name).contains('*') {
                wildcard_dns_subdomain(text(name))
            } else {
                dns_subdomain(text(name))
            };
            for message in messages {
                errors.invalid(format!("spec.tls[{i}].hosts[{j}]"), name, &message);
            }
        }
        let secret = &entry["secretName"];
        if !text(secret).is_empty() {
            for message in dns_subdomain(text(secret)) {
                errors.invalid(format!("spec.tls[{i}].secretName"), secret, &message);
            }
        }
    }
}

/// `ValidateIngressSpec`.
pub(crate) fn ingress(object: &Value, errors: &mut Errors) {
    let spec = &object["spec"];
    let listed = spec["rules"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    if listed.is_empty() && spec["defaultBackend"].is_null() {
        // The bad value is the rules as Go holds them: `null` when none were sent.
        let shown = if spec["rules"].is_array() {
            Value::Array(Vec::new())
        } else {
            Value::Null
        };
        errors.invalid(
            "spec",
            &shown,
            "either `defaultBackend` or `rules` must be specified",
        );
    }
    if !spec["defaultBackend"].is_null() {
        backend(&spec["defaultBackend"], "spec.defaultBackend", errors);
    }
    rules(listed, errors);
    tls(&spec["tls"], errors);
    if let Some(class) = spec["ingressClassName"].as_str() {
        for message in dns_subdomain(class) {
            errors.invalid("spec.ingressClassName", &spec["ingressClassName"], &message);
        }
    }
}

/// What only a new Ingress is held to (`ValidateIngressCreate`): the deprecated class
/// annotation, when both are given, names the same class as `ingressClassName`.
pub(crate) fn ingress_create(object: &Value, errors: &mut Errors) {
    let annotation = &object["metadata"]["annotations"][CLASS_ANNOTATION];
    if let (Some(given), Some(class)) = (
        annotation.as_str(),
        object["spec"]["ingressClassName"].as_str(),
    ) && given != class
    {
        errors.invalid(
            format!("annotations.{CLASS_ANNOTATION}"),
            annotation,
            "must match `ingressClassName` when both are specified",
        );
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn causes(object: &Value) -> Vec<String> {
        let mut errors = Errors::default();
        ingress(object, &mut errors);
        ingress_create(object, &mut errors);
        errors
            .0
            .into_iter()
            .map(|(f, m)| format!("{f}: {m}"))
            .collect()
    }

    fn with_path(path: Value, host: &str) -> Value {
        json!({"spec": {"rules": [{"host": host, "http": {"paths": [path]}}]}})
    }

    fn service(port: Value) -> Value {
        json!({"service": {"name": "web", "port": port}})
    }

    #[test]
    fn paths_are_typed_absolute_and_clean() {
        let ok = service(json!({"number": 80}));
        let cases = [
            (
                json!({"path": "/", "backend": ok}),
                "spec.rules[0].http.paths[0].pathType: Required value: pathType must be specified",
            ),
            (
                json!({"path": "foo", "pathType": "Exact", "backend": ok}),
                r#"spec.rules[0].http.paths[0].path: Invalid value: "foo": must be an absolute path"#,
            ),
            (
                json!({"path": "/a/../b", "pathType": "Prefix", "backend": ok}),
                r#"spec.rules[0].http.paths[0].path: Invalid value: "/a/../b": must not contain '/../'"#,
            ),
            (
                json!({"path": "/a/..", "pathType": "Prefix", "backend": ok}),
                r#"spec.rules[0].http.paths[0].path: Invalid value: "/a/..": cannot end with '/..'"#,
            ),
            (
                json!({"path": "/", "pathType": "Regex", "backend": ok}),
                r#"spec.rules[0].http.paths[0].pathType: Unsupported value: "Regex": supported values: "Exact", "ImplementationSpecific", "Prefix""#,
            ),
        ];
        for (path, expected) in cases {
            assert_eq!(causes(&with_path(path, "")), [expected]);
        }
        let loose = json!({"path": "", "pathType": "ImplementationSpecific", "backend": ok});
        assert!(causes(&with_path(loose, "")).is_empty());
    }

    #[test]
    fn hosts_are_dns_names_and_wildcards_lead() {
        let path =
            json!({"path": "/", "pathType": "Prefix", "backend": service(json!({"number": 80}))});
        assert_eq!(
            causes(&with_path(path.clone(), "10.0.0.1")),
            [
                r#"spec.rules[0].host: Invalid value: "10.0.0.1": must be a DNS name, not an IP address"#
            ]
        );
        assert!(causes(&with_path(path.clone(), "*.example.com")).is_empty());
        assert_eq!(
            causes(&with_path(path, "foo.*.example.com")),
            [
                r#"spec.rules[0].host: Invalid value: "foo.*.example.com": a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS subdomain, which must consist of lower case alphanumeric characters, '-' or '.' and end with an alphanumeric character (e.g. '*.example.com', regex used for validation is '\*\.[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"#
            ]
        );
    }

    #[test]
    fn backends_name_one_port_and_a_spec_needs_rules_or_a_default() {
        let path = |port| json!({"path": "/", "pathType": "Prefix", "backend": service(port)});
        assert_eq!(
            causes(&with_path(path(json!({"number": 80, "name": "http"})), "")),
            [
                r#"spec.rules[0].http.paths[0].backend: Invalid value: "": cannot set both port name & port number"#
            ]
        );
        assert_eq!(
            causes(&with_path(path(json!({})), "")),
            [
                "spec.rules[0].http.paths[0].backend: Required value: port name or number is required"
            ]
        );
        assert_eq!(
            causes(&json!({"spec": {"ingressClassName": "alb"}})),
            ["spec: Invalid value: null: either `defaultBackend` or `rules` must be specified"]
        );
        let only_default = json!({"spec": {"defaultBackend": service(json!({"name": "http"}))}});
        assert!(causes(&only_default).is_empty());
    }

    #[test]
    fn the_class_annotation_agrees_with_the_class_name() {
        let object = json!({
            "metadata": {"annotations": {"kubernetes.io/ingress.class": "nginx"}},
            "spec": {"ingressClassName": "alb", "defaultBackend": service(json!({"number": 80}))}
        });
        assert_eq!(
            causes(&object),
            [
                r#"annotations.kubernetes.io/ingress.class: Invalid value: "nginx": must match `ingressClassName` when both are specified"#
            ]
        );
    }
}
