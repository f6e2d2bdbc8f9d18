//! The Kubernetes side of the hybrid lab, built on the deployed lab's objects before the
//! controllers first run.

use super::{access, gpu, karpenter, networking, nodes, observability};
use crate::lab::hybrid;
use crate::sim::kube::storage::state::KubeState;

pub(crate) fn extend(state: &mut KubeState) {
    state.git_version = hybrid::SERVER_GIT_VERSION;
    nodes::label_cloud_nodes(state);
    nodes::join_hybrid_nodes(state);
    networking::cni(state);
    networking::coredns(state);
    networking::pod_identity_agent(state);
    networking::cloud_side_addons(state);
    gpu::gpu_operator(state);
    gpu::dra_driver(state);
    observability::exporters(state);
    observability::cloudwatch_agent(state);
    karpenter::install(state);
    access::service_accounts(state);
    access::rbac(state);
}
