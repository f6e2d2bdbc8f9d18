//! The kinds the twin serves: built-in Kubernetes resources and those added by CRDs.

use serde_json::{Value, json};

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ResourceType {
    pub(crate) group: String,
    pub(crate) version: String,
    pub(crate) plural: String,
    pub(crate) singular: String,
    pub(crate) kind: String,
    pub(crate) namespaced: bool,
    pub(crate) short_names: Vec<String>,
    pub(crate) subresources: Vec<String>,
}

impl ResourceType {
    /// `v1` or `apps/v1`.
    pub(crate) fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    /// `pods`, `deployments.apps`: how errors name the resource.
    pub(crate) fn qualified_plural(&self) -> String {
        if self.group.is_empty() {
            self.plural.clone()
        } else {
            format!("{}.{}", self.plural, self.group)
        }
    }

    /// `Service`, `Deployment.apps`: how a 422 names the kind.
    pub(crate) fn qualified_kind(&self) -> String {
        if self.group.is_empty() {
            self.kind.clone()
        } else {
            format!("{}.{}", self.kind, self.group)
        }
    }

    /// The APIResource entries of discovery for this resource and its subresources.
    pub(crate) fn discovery_entries(&self) -> Vec<Value> {
        let mut verbs = vec![
            "create",
            "delete",
            "deletecollection",
            "get",
            "list",
            "patch",
            "update",
            "watch",
        ];
        if self.plural == "events" {
            verbs.retain(|v| *v != "deletecollection");
        }
        let mut entries = vec![json!({
            "name": self.plural,
            "singularName": self.singular,
            "namespaced": self.namespaced,
            "kind": self.kind,
            "verbs": verbs,
            "shortNames": self.short_names,
        })];
        for sub in &self.subresources {
            let (kind, verbs): (&str, Vec<&str>) = match sub.as_str() {
                "status" => (&self.kind, vec!["get", "patch", "update"]),
                "scale" => ("Scale", vec!["get", "patch", "update"]),
                "log" => ("Pod", vec!["get"]),
                "exec" | "attach" | "portforward" => ("PodExecOptions", vec!["create", "get"]),
                "token" => ("TokenRequest", vec!["create"]),
                _ => (&self.kind, vec!["get"]),
            };
            entries.push(json!({
                "name": format!("{}/{sub}", self.plural),
                "singularName": "",
                "namespaced": self.namespaced,
                "kind": kind,
                "verbs": verbs,
            }));
        }
        entries
    }
}

/// `(group, version, plural, kind, namespaced, short names, subresources)` of the built-ins.
/// `(group, version, plural, kind, namespaced, short names, subresources)`.
type BuiltIn = (
    &'static str,
    &'static str,
    &'static str,
    &'static str,
    bool,
    &'static [&'static str],
    &'static [&'static str],
);

const BUILT_IN: &[BuiltIn] = &[
    (
        "",
        "v1",
        "namespaces",
        "Namespace",
        false,
        &["ns"],
        &["status"],
    ),
    ("", "v1", "nodes", "Node", false, &["no"], &["status"]),
    (
        "",
        "v1",
        "pods",
        "Pod",
        true,
        &["po"],
        &["status", "log", "exec", "attach", "portforward"],
    ),
    ("", "v1", "services", "Service", true, &["svc"], &["status"]),
    ("", "v1", "endpoints", "Endpoints", true, &["ep"], &[]),
    ("", "v1", "configmaps", "ConfigMap", true, &["cm"], &[]),
    ("", "v1", "secrets", "Secret", true, &[], &[]),
    (
        "",
        "v1",
        "serviceaccounts",
        "ServiceAccount",
        true,
        &["sa"],
        &["token"],
    ),
    ("", "v1", "events", "Event", true, &["ev"], &[]),
    (
        "",
        "v1",
        "persistentvolumeclaims",
        "PersistentVolumeClaim",
        true,
        &["pvc"],
        &["status"],
    ),
    (
        "",
        "v1",
        "persistentvolumes",
        "PersistentVolume",
        false,
        &["pv"],
        &["status"],
    ),
    (
        "apps",
        "v1",
        "deployments",
        "Deployment",
        true,
        &["deploy"],
        &["status", "scale"],
    ),
    (
        "apps",
        "v1",
        "replicasets",
        "ReplicaSet",
        true,
        &["rs"],
        &["status", "scale"],
    ),
    (
        "apps",
        "v1",
        "daemonsets",
        "DaemonSet",
        true,
        &["ds"],
        &["status"],
    ),
    (
        "apps",
        "v1",
        "statefulsets",
        "StatefulSet",
        true,
        &["sts"],
        &["status", "scale"],
    ),
    ("batch", "v1", "jobs", "Job", true, &[], &["status"]),
    (
        "batch",
        "v1",
        "cronjobs",
        "CronJob",
        true,
        &["cj"],
        &["status"],
    ),
    (
        "rbac.authorization.k8s.io",
        "v1",
        "roles",
        "Role",
        true,
        &[],
        &[],
    ),
    (
        "rbac.authorization.k8s.io",
        "v1",
        "rolebindings",
        "RoleBinding",
        true,
        &[],
        &[],
    ),
    (
        "rbac.authorization.k8s.io",
        "v1",
        "clusterroles",
        "ClusterRole",
        false,
        &[],
        &[],
    ),
    (
        "rbac.authorization.k8s.io",
        "v1",
        "clusterrolebindings",
        "ClusterRoleBinding",
        false,
        &[],
        &[],
    ),
    (
        "apiextensions.k8s.io",
        "v1",
        "customresourcedefinitions",
        "CustomResourceDefinition",
        false,
        &["crd", "crds"],
        &["status"],
    ),
    (
        "policy",
        "v1",
        "poddisruptionbudgets",
        "PodDisruptionBudget",
        true,
        &["pdb"],
        &["status"],
    ),
    (
        "networking.k8s.io",
        "v1",
        "networkpolicies",
        "NetworkPolicy",
        true,
        &["netpol"],
        &[],
    ),
    (
        "networking.k8s.io",
        "v1",
        "ingresses",
        "Ingress",
        true,
        &["ing"],
        &["status"],
    ),
    (
        "networking.k8s.io",
        "v1",
        "ingressclasses",
        "IngressClass",
        false,
        &[],
        &[],
    ),
    (
        "autoscaling",
        "v2",
        "horizontalpodautoscalers",
        "HorizontalPodAutoscaler",
        true,
        &["hpa"],
        &["status"],
    ),
    (
        "discovery.k8s.io",
        "v1",
        "endpointslices",
        "EndpointSlice",
        true,
        &[],
        &[],
    ),
    (
        "",
        "v1",
        "resourcequotas",
        "ResourceQuota",
        true,
        &["quota"],
        &["status"],
    ),
    (
        "",
        "v1",
        "limitranges",
        "LimitRange",
        true,
        &["limits"],
        &[],
    ),
    (
        "scheduling.k8s.io",
        "v1",
        "priorityclasses",
        "PriorityClass",
        false,
        &["pc"],
        &[],
    ),
    (
        "storage.k8s.io",
        "v1",
        "storageclasses",
        "StorageClass",
        false,
        &["sc"],
        &[],
    ),
    (
        "coordination.k8s.io",
        "v1",
        "leases",
        "Lease",
        true,
        &[],
        &[],
    ),
    (
        "node.k8s.io",
        "v1",
        "runtimeclasses",
        "RuntimeClass",
        false,
        &[],
        &[],
    ),
    // Dynamic resource allocation (GA in 1.34): what a DRA driver publishes and what claims ask.
    (
        "resource.k8s.io",
        "v1",
        "resourceslices",
        "ResourceSlice",
        false,
        &[],
        &[],
    ),
    (
        "resource.k8s.io",
        "v1",
        "deviceclasses",
        "DeviceClass",
        false,
        &[],
        &[],
    ),
    (
        "resource.k8s.io",
        "v1",
        "resourceclaims",
        "ResourceClaim",
        true,
        &[],
        &["status"],
    ),
    (
        "resource.k8s.io",
        "v1",
        "resourceclaimtemplates",
        "ResourceClaimTemplate",
        true,
        &[],
        &[],
    ),
    (
        "admissionregistration.k8s.io",
        "v1",
        "mutatingwebhookconfigurations",
        "MutatingWebhookConfiguration",
        false,
        &[],
        &[],
    ),
    (
        "admissionregistration.k8s.io",
        "v1",
        "validatingwebhookconfigurations",
        "ValidatingWebhookConfiguration",
        false,
        &[],
        &[],
    ),
];

/// Whether a type is one of Kubernetes' own (strategic merge applies) rather than a CRD's.
pub(crate) fn is_built_in(resource: &ResourceType) -> bool {
    BUILT_IN
        .iter()
        .any(|(group, _, plural, ..)| *group == resource.group && *plural == resource.plural)
}

/// Every resource type the twin knows, in discovery order.
#[derive(Debug, Clone)]
pub(crate) struct Registry {
    types: Vec<ResourceType>,
}

impl Default for Registry {
    fn default() -> Self {
        let types = BUILT_IN
            .iter()
            .map(
                |(group, version, plural, kind, namespaced, short, subs)| ResourceType {
                    group: (*group).into(),
                    version: (*version).into(),
                    plural: (*plural).into(),
                    singular: kind.to_lowercase(),
                    kind: (*kind).into(),
                    namespaced: *namespaced,
                    short_names: short.iter().map(|s| (*s).into()).collect(),
                    subresources: subs.iter().map(|s| (*s).into()).collect(),
                },
            )
            .collect();
        Self { types }
    }
}

impl Registry {
    pub(crate) fn all(&self) -> &[ResourceType] {
        &self.types
    }

    pub(crate) fn by_plural(
        &self,
        group: &str,
        version: &str,
        plural: &str,
    ) -> Option<&ResourceType> {
        self.types
            .iter()
            .find(|t| t.group == group && t.version == version && t.plural == plural)
    }

    /// By `apiVersion` and `kind`, as objects name themselves.
    pub(crate) fn by_kind(&self, api_version: &str, kind: &str) -> Option<&ResourceType> {
        self.types
            .iter()
            .find(|t| t.api_version() == api_version && t.kind == kind)
    }

    /// The groups and their versions, in discovery order (core first).
    pub(crate) fn groups(&self) -> Vec<(String, Vec<String>)> {
        let mut groups: Vec<(String, Vec<String>)> = Vec::new();
        for t in &self.types {
            match groups.iter_mut().find(|(g, _)| *g == t.group) {
                Some((_, versions)) if !versions.contains(&t.version) => {
                    versions.push(t.version.clone())
                }
                Some(_) => {}
                None => groups.push((t.group.clone(), vec![t.version.clone()])),
            }
        }
        groups
    }

    /// Registers (or replaces) the kind a CustomResourceDefinition defines.
    pub(crate) fn register_crd(&mut self, crd: &Value) -> Result<ResourceType, String> {
        let spec = &crd["spec"];
        let text = |v: &Value, what: &str| {
            v.as_str()
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .ok_or_else(|| format!("spec.{what}: Required value"))
        };
        let group = text(&spec["group"], "group")?;
        let plural = text(&spec["names"]["plural"], "names.plural")?;
        let kind = text(&spec["names"]["kind"], "names.kind")?;
        let singular = spec["names"]["singular"]
            .as_str()
            .map_or_else(|| kind.to_lowercase(), str::to_string);
        let namespaced = match spec["scope"].as_str() {
            Some("Namespaced") => true,
            Some("Cluster") => false,
            _ => return Err("spec.scope: Unsupported value: must be Namespaced or Cluster".into()),
        };
        let versions = spec["versions"]
            .as_array()
            .filter(|v| !v.is_empty())
            .ok_or("spec.versions: Required value")?;
        let short_names: Vec<String> = spec["names"]["shortNames"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|s| s.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default();
        let mut first = None;
        for version in versions
            .iter()
            .filter(|v| v["served"].as_bool().unwrap_or(true))
        {
            let name = text(&version["name"], "versions[].name")?;
            let subresources = version["subresources"]
                .as_object()
                .map(|m| m.keys().cloned().collect())
                .unwrap_or_default();
            let t = ResourceType {
                group: group.clone(),
                version: name,
                plural: plural.clone(),
                singular: singular.clone(),
                kind: kind.clone(),
                namespaced,
                short_names: short_names.clone(),
                subresources,
            };
            self.types.retain(|x| {
                !(x.group == t.group && x.version == t.version && x.plural == t.plural)
            });
            first.get_or_insert_with(|| t.clone());
            self.types.push(t);
        }
        first.ok_or_else(|| "spec.versions: no served version".to_string())
    }

    pub(crate) fn unregister_crd(&mut self, group: &str, plural: &str) {
        self.types
            .retain(|t| !(t.group == group && t.plural == plural));
    }
}
