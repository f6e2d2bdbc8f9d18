//! A pod's DNS settings and host aliases, as 1.35's `validateDNSPolicy`,
//! `validatePodDNSConfig` and `ValidateHostAliases` check them.

use serde_json::Value;

use super::errors::Errors;
use super::names::dns_subdomain;
use super::service::ip_errors;

/// `validateDNSPolicy`'s own `validValues` slice, in its order (field.NotSupported prints the
/// list as given; this one is not sorted).
const DNS_POLICIES: [&str; 4] = ["ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"];
/// `MaxDNSNameservers`, `MaxDNSSearchPaths`, `MaxDNSSearchListChars`.
const MAX_NAMESERVERS: usize = 3;
const MAX_SEARCHES: usize = 32;
const MAX_SEARCH_CHARS: usize = 2048;

fn strings(value: &Value) -> Vec<&str> {
    value
        .as_array()
        .into_iter()
        .flatten()
        .map(|v| v.as_str().unwrap_or_default())
        .collect()
}

/// `["a","b"]`: a list of strings as a bad value, printed as its JSON (apimachinery v0.35).
fn json_strings(items: &[&str]) -> String {
    let quoted: Vec<String> = items.iter().map(|s| super::errors::quoted(s)).collect();
    format!("[{}]", quoted.join(","))
}

/// `validateDNSPolicy` (the policy is defaulted, so never empty here).
pub(crate) fn dns_policy(spec: &Value, path: &str, errors: &mut Errors) {
    errors.one_of(
        format!("{path}.dnsPolicy"),
        &spec["dnsPolicy"],
        &DNS_POLICIES,
    );
}

/// `validatePodDNSConfig`: with policy None a config with a nameserver; at most three
/// nameservers, each an IP; the search list's length and names; every option named.
pub(crate) fn dns_config(spec: &Value, path: &str, errors: &mut Errors) {
    let at = format!("{path}.dnsConfig");
    let config = &spec["dnsConfig"];
    let nameservers = strings(&config["nameservers"]);
    if spec["dnsPolicy"] == "None" {
        if config.is_null() {
            errors.required_because(at, "must provide `dnsConfig` when `dnsPolicy` is None");
            return;
        }
        if nameservers.is_empty() {
            errors.required_because(
                format!("{at}.nameservers"),
                "must provide at least one DNS nameserver when `dnsPolicy` is None",
            );
            return;
        }
    }
    if config.is_null() {
        return;
    }
    if nameservers.len() > MAX_NAMESERVERS {
        errors.push(
            format!("{at}.nameservers"),
            format!(
                "Invalid value: {}: must not have more than {MAX_NAMESERVERS} nameservers",
                json_strings(&nameservers)
            ),
        );
    }
    for (i, server) in nameservers.iter().enumerate() {
        if let Some(message) = ip_errors(server) {
            errors.invalid(
                format!("{at}.nameservers[{i}]"),
                &Value::String(server.to_string()),
                message,
            );
        }
    }
    searches(config, &at, errors);
    for (i, option) in config["options"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        if option["name"].as_str().is_none_or(str::is_empty) {
            errors.required_because(format!("{at}.options[{i}]"), "must not be empty");
        }
    }
}

/// The search list: at most 32 names and 2048 characters (`MaxDNSSearchPaths`,
/// `MaxDNSSearchListChars`). Each name's own rule is left out: 1.35 checks it with
/// `ValidateDNS1123SubdomainWithUnderScore` (RelaxedDNSSearchValidation), whose words the twin
/// has not ported.
fn searches(config: &Value, at: &str, errors: &mut Errors) {
    let searches = strings(&config["searches"]);
    if searches.len() > MAX_SEARCHES {
        errors.push(
            format!("{at}.searches"),
            format!(
                "Invalid value: {}: must not have more than {MAX_SEARCHES} search paths",
                json_strings(&searches)
            ),
        );
    }
    if searches.join(" ").len() > MAX_SEARCH_CHARS {
        errors.push(
            format!("{at}.searches"),
            format!(
                "Invalid value: {}: must not have more than {MAX_SEARCH_CHARS} characters (including spaces) in the search list",
                json_strings(&searches)
            ),
        );
    }
}

/// `ValidateHostAliases`: each IP valid, each hostname a DNS subdomain.
pub(crate) fn host_aliases(spec: &Value, path: &str, errors: &mut Errors) {
    for (i, alias) in spec["hostAliases"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        let at = format!("{path}.hostAliases[{i}]");
        let ip = alias["ip"].as_str().unwrap_or_default();
        if let Some(message) = ip_errors(ip) {
            errors.invalid(format!("{at}.ip"), &Value::String(ip.to_string()), message);
        }
        for (j, host) in strings(&alias["hostnames"]).iter().enumerate() {
            for message in dns_subdomain(host) {
                errors.invalid(
                    format!("{at}.hostnames[{j}]"),
                    &Value::String(host.to_string()),
                    &message,
                );
            }
        }
    }
}
