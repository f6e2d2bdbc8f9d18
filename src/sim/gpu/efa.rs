//! Elastic Fabric Adapter in the twin: the resource its Kubernetes device plugin advertises,
//! which containers were given EFA devices, and which nodes have them to give.

use std::collections::BTreeMap;

use serde_json::Value;

/// The extended resource aws-efa-k8s-device-plugin advertises, one per EFA interface.
pub(crate) const EFA_RESOURCE: &str = "vpc.amazonaws.com/efa";

/// The image the EFA device plugin's DaemonSet runs (eks-charts' aws-efa-k8s-device-plugin).
pub(crate) const PLUGIN_IMAGE: &str = "aws-efa-k8s-device-plugin";

/// EFA devices a container asked for (its limits, else its requests).
pub(crate) fn requested(container: &Value) -> u32 {
    ["limits", "requests"]
        .iter()
        .find_map(|field| {
            let value = &container["resources"][*field][EFA_RESOURCE];
            value
                .as_str()
                .and_then(|v| v.parse().ok())
                .or_else(|| value.as_u64().and_then(|v| u32::try_from(v).ok()))
        })
        .unwrap_or(0)
}

/// EFA devices the device plugin finds on a node: what its instance was launched with where
/// the twin knows (`attached`, by node name), else its type's.
pub(crate) fn devices(attached: &BTreeMap<String, u32>, node: &Value) -> u32 {
    node["metadata"]["name"]
        .as_str()
        .and_then(|name| attached.get(name).copied())
        .unwrap_or_else(|| interfaces(node))
}

/// EFA interfaces of a node's instance type (0 where it has none).
pub(crate) fn interfaces(node: &Value) -> u32 {
    node["metadata"]["labels"]["node.kubernetes.io/instance-type"]
        .as_str()
        .and_then(crate::lab::gpu_catalog::find)
        .map_or(0, |row| row.efa_interfaces)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_container_asks_in_limits_or_requests() {
        let asks = json!({"resources": {"limits": {"vpc.amazonaws.com/efa": "32"}}});
        assert_eq!(requested(&asks), 32);
        let asks = json!({"resources": {"requests": {"vpc.amazonaws.com/efa": 4}}});
        assert_eq!(requested(&asks), 4);
        assert_eq!(requested(&json!({"name": "worker"})), 0);
        let p5 =
            json!({"metadata": {"labels": {"node.kubernetes.io/instance-type": "p5.48xlarge"}}});
        assert_eq!(interfaces(&p5), 32);
    }
}
