//! Names, label keys and values, config keys: apimachinery's `util/validation` rules with
//! their messages (`IsDNS1123Subdomain`, `IsQualifiedName`, `IsValidLabelValue`, ...).

fn regex_error(message: &str, pattern: &str, examples: &[&str]) -> String {
    let examples: String = examples
        .iter()
        .map(|e| format!("'{e}', "))
        .collect::<Vec<_>>()
        .join(" or ");
    format!("{message} (e.g. {examples}regex used for validation is '{pattern}')")
}

fn max_len(limit: usize) -> String {
    format!("must be no more than {limit} characters")
}

fn alnum_lower(c: char) -> bool {
    c.is_ascii_lowercase() || c.is_ascii_digit()
}

fn alnum(c: char) -> bool {
    c.is_ascii_alphanumeric()
}

fn label_shaped(text: &str) -> bool {
    !text.is_empty()
        && text.starts_with(alnum_lower)
        && text.ends_with(alnum_lower)
        && text.chars().all(|c| alnum_lower(c) || c == '-')
}

const SUBDOMAIN_PATTERN: &str = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*";

/// `IsDNS1123Subdomain`: Deployments, ConfigMaps, Nodes, most names.
pub(crate) fn dns_subdomain(name: &str) -> Vec<String> {
    let mut errors = Vec::new();
    if name.len() > 253 {
        errors.push(max_len(253));
    }
    if !name.split('.').all(label_shaped) {
        errors.push(regex_error(
            "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character",
            SUBDOMAIN_PATTERN,
            &["example.com"],
        ));
    }
    errors
}

/// `IsWildcardDNS1123Subdomain`: an Ingress rule's or TLS entry's host with a `*`.
pub(crate) fn wildcard_dns_subdomain(host: &str) -> Vec<String> {
    let mut errors = Vec::new();
    if host.len() > 253 {
        errors.push(max_len(253));
    }
    let shaped = host
        .strip_prefix("*.")
        .is_some_and(|rest| rest.split('.').all(label_shaped));
    if !shaped {
        errors.push(regex_error(
            "a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS subdomain, which must consist of lower case alphanumeric characters, '-' or '.' and end with an alphanumeric character",
            &format!(r"\*\.{SUBDOMAIN_PATTERN}"),
            &["*.example.com"],
        ));
    }
    errors
}

/// `IsDNS1123Label`: Namespaces, container names.
pub(crate) fn dns_label(name: &str) -> Vec<String> {
    let mut errors = Vec::new();
    if name.len() > 63 {
        errors.push(max_len(63));
    }
    if !label_shaped(name) && dns_subdomain(name).is_empty() {
        // A valid subdomain that is not a label: its length was checked, so it has dots.
        errors.push("must not contain dots".into());
    } else if !label_shaped(name) {
        errors.push(regex_error(
            "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character",
            "[a-z0-9]([-a-z0-9]*[a-z0-9])?",
            &["my-name", "123-abc"],
        ));
    }
    errors
}

/// `IsDNS1035Label`: Service names (they become DNS names and environment variables).
pub(crate) fn dns1035_label(name: &str) -> Vec<String> {
    let mut errors = Vec::new();
    if name.len() > 63 {
        errors.push(max_len(63));
    }
    if !(label_shaped(name) && name.starts_with(|c: char| c.is_ascii_lowercase())) {
        errors.push(regex_error(
            "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character",
            "[a-z]([-a-z0-9]*[a-z0-9])?",
            &["my-name", "abc-123"],
        ));
    }
    errors
}

const QUALIFIED_PATTERN: &str = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
const QUALIFIED_MESSAGE: &str = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";

fn name_part_ok(text: &str) -> bool {
    text.starts_with(alnum)
        && text.ends_with(alnum)
        && text
            .chars()
            .all(|c| alnum(c) || matches!(c, '-' | '_' | '.'))
}

/// `IsQualifiedName`: label and annotation keys (`example.com/name` or `name`).
pub(crate) fn qualified_name(key: &str) -> Vec<String> {
    let parts: Vec<&str> = key.split('/').collect();
    let (prefix, name) = match parts.as_slice() {
        [name] => (None, *name),
        [prefix, name] => (Some(*prefix), *name),
        _ => {
            return vec![format!(
                "{} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
                regex_error(
                    &format!("a valid label key {QUALIFIED_MESSAGE}"),
                    QUALIFIED_PATTERN,
                    &["MyName", "my.name", "123-abc"]
                )
            )];
        }
    };
    let mut errors = Vec::new();
    if let Some(prefix) = prefix {
        if prefix.is_empty() {
            errors.push("prefix part must be non-empty".to_string());
        } else {
            errors.extend(
                dns_subdomain(prefix)
                    .into_iter()
                    .map(|e| format!("prefix part {e}")),
            );
        }
    }
    if name.is_empty() {
        errors.push("name part must be non-empty".into());
    } else if name.len() > 63 {
        errors.push(format!("name part {}", max_len(63)));
    }
    if !name.is_empty() && !name_part_ok(name) {
        errors.push(regex_error(
            &format!("name part {QUALIFIED_MESSAGE}"),
            QUALIFIED_PATTERN,
            &["MyName", "my.name", "123-abc"],
        ));
    }
    errors
}

/// `IsValidLabelValue`.
pub(crate) fn label_value(value: &str) -> Vec<String> {
    let mut errors = Vec::new();
    if value.len() > 63 {
        errors.push(max_len(63));
    }
    if !value.is_empty() && !name_part_ok(value) {
        errors.push(regex_error(
            "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character",
            "(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?",
            &["MyValue", "my_value", "12345"],
        ));
    }
    errors
}

/// `IsConfigMapKey`: the keys of a ConfigMap's or Secret's data.
pub(crate) fn config_key(key: &str) -> Vec<String> {
    let mut errors = Vec::new();
    if key.len() > 253 {
        errors.push(max_len(253));
    }
    if key.is_empty()
        || !key
            .chars()
            .all(|c| alnum(c) || matches!(c, '-' | '_' | '.'))
    {
        errors.push(regex_error(
            "a valid config key must consist of alphanumeric characters, '-', '_' or '.'",
            "[-._a-zA-Z0-9]+",
            &["key.name", "KEY_NAME", "key-name"],
        ));
    }
    if key == "." || key == ".." {
        errors.push(format!("must not be '{key}'"));
    } else if key.starts_with("..") {
        errors.push("must not start with '..'".into());
    }
    errors
}

/// `IsValidPortName`: a container's or Service's port name (an IANA service name), every
/// rule that fails, in apimachinery's order.
pub(crate) fn port_name(name: &str) -> Vec<String> {
    let mut errors = Vec::new();
    if name.len() > 15 {
        errors.push(max_len(15));
    }
    if name.is_empty() || !name.chars().all(|c| alnum_lower(c) || c == '-') {
        errors
            .push("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)".into());
    }
    if !name.chars().any(|c| c.is_ascii_lowercase()) {
        errors.push("must contain at least one letter (a-z)".into());
    }
    if name.contains("--") {
        errors.push("must not contain consecutive hyphens".into());
    }
    if name.starts_with('-') || name.ends_with('-') {
        errors.push("must not begin or end with a hyphen".into());
    }
    errors
}

/// `IsValidPortNum`.
pub(crate) fn port_number(port: i64) -> Vec<String> {
    if (1..=65535).contains(&port) {
        Vec::new()
    } else {
        vec!["must be between 1 and 65535, inclusive".into()]
    }
}

/// `IsHTTPHeaderName`: a probe's request header.
pub(crate) fn http_header_name(name: &str) -> Vec<String> {
    if !name.is_empty() && name.chars().all(|c| alnum(c) || c == '-') {
        return Vec::new();
    }
    vec![regex_error(
        "a valid HTTP header must consist of alphanumeric characters or '-'",
        "[-A-Za-z0-9]+",
        &["X-Header-Name"],
    )]
}

/// RBAC objects are named as path segments (`system:basic-user`): anything but `.`, `..`,
/// or a name with `/` or `%`.
pub(crate) fn path_segment(name: &str) -> Vec<String> {
    if name == "." || name == ".." {
        return vec![format!("may not be '{name}'")];
    }
    ["/", "%"]
        .iter()
        .filter(|c| name.contains(**c))
        .map(|c| format!("may not contain '{c}'"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_match_apimachinery() {
        assert_eq!(
            dns_label("Bad_Name"),
            [
                "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
            ]
        );
        assert!(dns_subdomain("gpu-operator.v1").is_empty());
        assert!(qualified_name("nvidia.com/gpu.present").is_empty());
        assert_eq!(qualified_name("bad key!").len(), 1);
        assert!(label_value("").is_empty());
        assert_eq!(
            label_value(&"a".repeat(64)),
            ["must be no more than 63 characters"]
        );
        assert!(dns1035_label("1abc").len() == 1);
    }
}
