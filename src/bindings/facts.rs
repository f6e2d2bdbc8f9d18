//! `facts::hybrid()` and `facts::version_at_least(version, minimum)`: seed 004's numbers for
//! auditing a hybrid cluster (MIG profiles, hybrid add-on minimums, checked versions, the
//! Karpenter rows), from the same table the twin's hybrid scenario is built on.

use rhai::{Dynamic, Module};
use serde_json::json;

use crate::lab::hybrid;
use crate::script::{documented as doc, from_json};

pub(crate) fn module() -> Module {
    let mut m = Module::new();
    doc(
        "hybrid",
        &["Map"],
        "Seed 004's numbers: #{ kubernetes_version, remote_node_cidr, remote_pod_cidr, labels: #{ compute_type,\nlocation, dns_eligible }, versions: #{ gpu_operator, dra_driver, device_plugin }, dra: #{ min_kubernetes,\nmin_driver, operator_min_driver }, mig_a100_40gb: #{ profile: #{ memory_gb, max } }, addon_minimums:\n#{ name: version }, pod_identity_bottlerocket_min, karpenter_minimums: #{ \"1.36\": \"1.13.0\" } }.",
    )
    .set_into_module(&mut m, || -> Dynamic {
        let mig: serde_json::Map<String, serde_json::Value> = hybrid::MIG_PROFILES_A100_40GB
            .iter()
            .map(|(profile, memory, max)| {
                ((*profile).into(), json!({"memory_gb": memory, "max": max}))
            })
            .collect();
        let pairs = |rows: &[(&str, &str)]| -> serde_json::Value {
            rows.iter()
                .map(|(k, v)| ((*k).to_string(), json!(v)))
                .collect::<serde_json::Map<_, _>>()
                .into()
        };
        from_json(&json!({
            "kubernetes_version": hybrid::KUBERNETES_VERSION,
            "remote_node_cidr": hybrid::REMOTE_NODE_CIDR,
            "remote_pod_cidr": hybrid::REMOTE_POD_CIDR,
            "labels": {
                "compute_type": hybrid::COMPUTE_TYPE_LABEL,
                "location": hybrid::LOCATION_LABEL,
                "dns_eligible": hybrid::DNS_ELIGIBLE_LABEL,
            },
            "versions": {
                "gpu_operator": hybrid::GPU_OPERATOR_VERSION,
                "dra_driver": hybrid::DRA_DRIVER_VERSION,
                "device_plugin": hybrid::DEVICE_PLUGIN_VERSION,
            },
            "dra": {
                "min_kubernetes": hybrid::DRA_MIN_KUBERNETES,
                "min_driver": hybrid::DRA_MIN_DRIVER,
                "operator_min_driver": hybrid::OPERATOR_DRA_MIN_DRIVER,
            },
            "mig_a100_40gb": mig,
            "addon_minimums": pairs(&hybrid::HYBRID_ADDON_MINIMUMS),
            "pod_identity_bottlerocket_min": hybrid::POD_IDENTITY_BOTTLEROCKET_MIN,
            "karpenter_minimums": pairs(&hybrid::KARPENTER_MINIMUMS),
        }))
    });
    doc(
        "version_at_least",
        &["version: &str", "minimum: &str", "bool"],
        "Whether a version is at least a minimum, as EKS numbers add-ons: `v1.3.8-eksbuild.2` is at least\n`1.3.3-eksbuild.1` (a leading `v` and the build number count as written).",
    )
    .set_into_module(&mut m, |version: &str, minimum: &str| {
        hybrid::version_at_least(version, minimum)
    });
    m
}
