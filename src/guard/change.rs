//! One mutating call as the guards and the report see it.

use serde::{Deserialize, Serialize};

/// Kinds that belong to no namespace, among Kubernetes' own and the lab's charts'.
const CLUSTER_SCOPED: &[&str] = &[
    "namespace",
    "node",
    "persistentvolume",
    "customresourcedefinition",
    "clusterrole",
    "clusterrolebinding",
    "storageclass",
    "csidriver",
    "priorityclass",
    "runtimeclass",
    "ingressclass",
    "apiservice",
    "mutatingwebhookconfiguration",
    "validatingwebhookconfiguration",
    "clusterpolicy",
    "nodefeaturerule",
];

/// A mutating call about to be sent: the journal's words for it, the resource it changes
/// (`nodegroup/myeks5w/gpu`, `sg/sg-0abc3456`, `namespace/gpu-operator`,
/// `daemonset/kube-system/aws-node`) and, for a GPU node group, the size it asks for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Change {
    pub action: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu_nodes: Option<i64>,
    /// For a GPU node group, the GPUs its nodes hold together after the call (nodes times
    /// the instance type's GPUs, from the catalog). Not in reports: `gpu_nodes` says the size,
    /// and reports keep their shape.
    #[serde(skip)]
    pub gpus: Option<i64>,
    /// For a billed resource, how many run after the call (`--max-cost-usd` counts them).
    #[serde(skip)]
    pub runs: Option<super::Runs>,
    /// The call breaks its resource on purpose (a fault drill), in this world: `--disrupt`
    /// must name it unless that world is the embedded lab twin.
    #[serde(skip)]
    pub disrupts: Option<World>,
}

/// Where a disrupted resource lives: the cluster, or the AWS account.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum World {
    Kubernetes,
    Aws,
}

impl From<&str> for Change {
    fn from(action: &str) -> Self {
        Self::new(action)
    }
}

impl From<String> for Change {
    fn from(action: String) -> Self {
        Self::new(action)
    }
}

impl From<&String> for Change {
    fn from(action: &String) -> Self {
        Self::new(action.as_str())
    }
}

impl Change {
    pub fn new(action: impl Into<String>) -> Self {
        Self {
            action: action.into(),
            resource: None,
            gpu_nodes: None,
            gpus: None,
            runs: None,
            disrupts: None,
        }
    }

    /// The call breaks its resource, in `world`, on purpose.
    pub fn disrupting(mut self, world: World) -> Self {
        self.disrupts = Some(world);
        self
    }

    /// The resource the call changes, as `--allow` patterns name it.
    pub fn on(mut self, resource: impl Into<String>) -> Self {
        self.resource = Some(resource.into());
        self
    }

    /// The call sizes a GPU node group to `nodes`.
    pub fn sizing_gpus(mut self, nodes: i64) -> Self {
        self.gpu_nodes = Some(nodes);
        self
    }

    /// The GPU node group holds `gpus` GPUs after the call.
    pub fn holding_gpus(mut self, gpus: i64) -> Self {
        self.gpus = Some(gpus);
        self
    }

    /// After the call the resource runs `count` of the billed `kind`; `before` ran until now.
    pub fn running(mut self, kind: &str, count: i64, before: i64) -> Self {
        self.runs = Some(super::Runs {
            kind: kind.to_string(),
            count,
            before,
        });
        self
    }

    /// A Kubernetes object as a resource: `kind/namespace/name`, or `kind/name` for one that
    /// belongs to no namespace.
    pub fn kubernetes(kind: &str, namespace: Option<&str>, name: &str) -> String {
        // `apps/v1/Deployment` and `Deployment` alike are `deployment`.
        let kind = kind.rsplit('/').next().unwrap_or(kind).to_ascii_lowercase();
        // A chart's objects all get its namespace, cluster-wide kinds too; they have none.
        let namespace = namespace.filter(|_| !CLUSTER_SCOPED.contains(&kind.as_str()));
        match namespace.filter(|ns| !ns.is_empty()) {
            Some(ns) => format!("{kind}/{ns}/{name}"),
            None => format!("{kind}/{name}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kubernetes_objects_are_named_with_the_namespace_only_where_they_have_one() {
        for (kind, ns, name, resource) in [
            (
                "apps/v1/Deployment",
                Some("gpu-operator"),
                "gpu-operator",
                "deployment/gpu-operator/gpu-operator",
            ),
            (
                "rbac.authorization.k8s.io/v1/ClusterRole",
                Some("gpu-operator"),
                "r",
                "clusterrole/r",
            ),
            (
                "v1/Namespace",
                None,
                "gpu-operator",
                "namespace/gpu-operator",
            ),
            ("Node", Some(""), "ip-10-0-0-1", "node/ip-10-0-0-1"),
        ] {
            assert_eq!(Change::kubernetes(kind, ns, name), resource);
        }
    }
}
