//! `/readyz`, `/livez` and `/healthz` with `?verbose`, `?exclude=` and per-check paths, over
//! the check list of the lab's EKS 1.35 control plane; a fault switch fails a named check.

use std::collections::BTreeSet;

/// The checks `/readyz?verbose` lists on the lab's cluster (seed 000), in order.
pub(crate) const READYZ_CHECKS: &[&str] = &[
    "ping",
    "log",
    "etcd",
    "etcd-readiness",
    "kms-providers",
    "informer-sync",
    "poststarthook/start-apiserver-admission-initializer",
    "poststarthook/generic-apiserver-start-informers",
    "poststarthook/priority-and-fairness-config-consumer",
    "poststarthook/priority-and-fairness-filter",
    "poststarthook/storage-object-count-tracker-hook",
    "poststarthook/start-apiextensions-informers",
    "poststarthook/start-apiextensions-controllers",
    "poststarthook/crd-informer-synced",
    "poststarthook/start-system-namespaces-controller",
    "poststarthook/start-cluster-authentication-info-controller",
    "poststarthook/start-kube-apiserver-identity-lease-controller",
    "poststarthook/start-kube-apiserver-identity-lease-garbage-collector",
    "poststarthook/start-legacy-token-tracking-controller",
    "poststarthook/start-service-ip-repair-controllers",
    "poststarthook/rbac/bootstrap-roles",
    "poststarthook/scheduling/bootstrap-system-priority-classes",
    "poststarthook/priority-and-fairness-config-producer",
    "poststarthook/bootstrap-controller",
    "poststarthook/start-kubernetes-service-cidr-controller",
    "poststarthook/aggregator-reload-proxy-client-cert",
    "poststarthook/start-kube-aggregator-informers",
    "poststarthook/apiservice-status-local-available-controller",
    "poststarthook/apiservice-status-remote-available-controller",
    "poststarthook/apiservice-registration-controller",
    "poststarthook/apiservice-discovery-controller",
    "poststarthook/kube-apiserver-autoregistration",
    "autoregister-completion",
    "poststarthook/apiservice-openapi-controller",
    "poststarthook/apiservice-openapiv3-controller",
    "shutdown",
];

/// Checks that only readiness has (upstream registers these for /readyz alone).
const READY_ONLY: &[&str] = &["etcd-readiness", "informer-sync", "shutdown"];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Endpoint {
    Readyz,
    Livez,
    Healthz,
}

impl Endpoint {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Endpoint::Readyz => "readyz",
            Endpoint::Livez => "livez",
            Endpoint::Healthz => "healthz",
        }
    }

    fn checks(self) -> impl Iterator<Item = &'static str> {
        READYZ_CHECKS
            .iter()
            .copied()
            .filter(move |c| self == Endpoint::Readyz || !READY_ONLY.contains(c))
    }
}

/// The HTTP status and body the apiserver would answer.
pub(crate) fn answer(
    endpoint: Endpoint,
    single_check: Option<&str>,
    verbose: bool,
    excludes: &[String],
    failing: &BTreeSet<String>,
) -> (u16, String) {
    if let Some(check) = single_check {
        if !endpoint.checks().any(|c| c == check) {
            return (404, "404 page not found\n".into());
        }
        return if failing.contains(check) {
            (
                500,
                format!("internal server error: {check} failed: reason withheld\n"),
            )
        } else {
            (200, "ok".into())
        };
    }
    let mut lines = Vec::new();
    let mut failed = false;
    for check in endpoint
        .checks()
        .filter(|c| !excludes.iter().any(|e| e == c))
    {
        if failing.contains(check) {
            failed = true;
            lines.push(format!("[-]{check} failed: reason withheld"));
        } else {
            lines.push(format!("[+]{check} ok"));
        }
    }
    let unknown: Vec<&String> = excludes
        .iter()
        .filter(|e| !endpoint.checks().any(|c| c == e.as_str()))
        .collect();
    if !unknown.is_empty() {
        let names: Vec<String> = unknown.iter().map(|e| format!("{e:?}")).collect();
        lines.push(format!(
            "warn: some health checks cannot be excluded: no matches for {}",
            names.join(", ")
        ));
    }
    let name = endpoint.name();
    if failed {
        lines.push(format!("{name} check failed"));
        return (500, lines.join("\n") + "\n");
    }
    if verbose {
        lines.push(format!("{name} check passed"));
        (200, lines.join("\n") + "\n")
    } else {
        (200, "ok".into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verbose_readyz_lists_every_check_and_a_failure_fails_it() {
        let (code, body) = answer(Endpoint::Readyz, None, true, &[], &BTreeSet::new());
        assert_eq!(code, 200);
        assert_eq!(body.lines().count(), READYZ_CHECKS.len() + 1);
        assert!(body.ends_with("readyz check passed\n"));
        let failing: BTreeSet<String> = ["etcd".to_string()].into();
        let (code, body) = answer(Endpoint::Readyz, None, false, &[], &failing);
        assert_eq!(code, 500);
        assert!(body.contains("[-]etcd failed: reason withheld\n"));
        let (code, _) = answer(Endpoint::Readyz, None, false, &["etcd".into()], &failing);
        assert_eq!(code, 200);
        assert!(
            !answer(Endpoint::Livez, None, true, &[], &BTreeSet::new())
                .1
                .contains("[+]informer-sync ok")
        );
    }
}
