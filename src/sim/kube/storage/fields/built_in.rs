//! The built-in kinds' schemas, from k8s-openapi's types (generated from Kubernetes 1.35's
//! OpenAPI document): compiled once per process into one graph the kinds share.

use std::collections::HashMap;
use std::sync::OnceLock;

use k8s_openapi::api::{
    admissionregistration, apps, autoscaling, batch, coordination, core, discovery, networking,
    node, policy, rbac, resource, scheduling, storage,
};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use k8s_openapi::schemars::{JsonSchema, SchemaGenerator};
use serde_json::{Map, Value};

use super::shapes::{Dialect, Shapes};

pub(crate) struct BuiltIn {
    pub(crate) shapes: Shapes,
    /// `(group, version, kind)` -> the kind's root node.
    pub(crate) kinds: HashMap<(&'static str, &'static str, &'static str), usize>,
    /// ObjectMeta, which every custom resource's `metadata` is read as.
    pub(crate) object_meta: usize,
    /// ObjectMeta's schema and the definitions it names, compiled into each CRD's shapes.
    pub(crate) object_meta_schema: (Value, Map<String, Value>),
}

fn schema_of<T: JsonSchema>(generator: &mut SchemaGenerator) -> Value {
    generator.subschema_for::<T>().to_value()
}

macro_rules! kinds {
    ($generator:ident; $(($group:literal, $version:literal, $kind:literal) => $ty:ty),* $(,)?) => {
        vec![$((($group, $version, $kind), schema_of::<$ty>(&mut $generator))),*]
    };
}

fn build() -> BuiltIn {
    let mut generator = SchemaGenerator::default();
    let roots = kinds![generator;
        ("", "v1", "Namespace") => core::v1::Namespace,
        ("", "v1", "Node") => core::v1::Node,
        ("", "v1", "Pod") => core::v1::Pod,
        ("", "v1", "Service") => core::v1::Service,
        ("", "v1", "Endpoints") => core::v1::Endpoints,
        ("", "v1", "ConfigMap") => core::v1::ConfigMap,
        ("", "v1", "Secret") => core::v1::Secret,
        ("", "v1", "ServiceAccount") => core::v1::ServiceAccount,
        ("", "v1", "Event") => core::v1::Event,
        ("", "v1", "PersistentVolumeClaim") => core::v1::PersistentVolumeClaim,
        ("", "v1", "PersistentVolume") => core::v1::PersistentVolume,
        ("apps", "v1", "Deployment") => apps::v1::Deployment,
        ("apps", "v1", "ReplicaSet") => apps::v1::ReplicaSet,
        ("apps", "v1", "DaemonSet") => apps::v1::DaemonSet,
        ("apps", "v1", "StatefulSet") => apps::v1::StatefulSet,
        ("batch", "v1", "Job") => batch::v1::Job,
        ("batch", "v1", "CronJob") => batch::v1::CronJob,
        ("rbac.authorization.k8s.io", "v1", "Role") => rbac::v1::Role,
        ("rbac.authorization.k8s.io", "v1", "RoleBinding") => rbac::v1::RoleBinding,
        ("rbac.authorization.k8s.io", "v1", "ClusterRole") => rbac::v1::ClusterRole,
        ("rbac.authorization.k8s.io", "v1", "ClusterRoleBinding") => rbac::v1::ClusterRoleBinding,
        ("apiextensions.k8s.io", "v1", "CustomResourceDefinition") => CustomResourceDefinition,
        ("policy", "v1", "PodDisruptionBudget") => policy::v1::PodDisruptionBudget,
        ("networking.k8s.io", "v1", "NetworkPolicy") => networking::v1::NetworkPolicy,
        ("networking.k8s.io", "v1", "Ingress") => networking::v1::Ingress,
        ("networking.k8s.io", "v1", "IngressClass") => networking::v1::IngressClass,
        ("autoscaling", "v2", "HorizontalPodAutoscaler") => autoscaling::v2::HorizontalPodAutoscaler,
        ("discovery.k8s.io", "v1", "EndpointSlice") => discovery::v1::EndpointSlice,
        ("", "v1", "ResourceQuota") => core::v1::ResourceQuota,
        ("", "v1", "LimitRange") => core::v1::LimitRange,
        ("scheduling.k8s.io", "v1", "PriorityClass") => scheduling::v1::PriorityClass,
        ("storage.k8s.io", "v1", "StorageClass") => storage::v1::StorageClass,
        ("coordination.k8s.io", "v1", "Lease") => coordination::v1::Lease,
        ("node.k8s.io", "v1", "RuntimeClass") => node::v1::RuntimeClass,
        ("resource.k8s.io", "v1", "ResourceSlice") => resource::v1::ResourceSlice,
        ("resource.k8s.io", "v1", "DeviceClass") => resource::v1::DeviceClass,
        ("resource.k8s.io", "v1", "ResourceClaim") => resource::v1::ResourceClaim,
        ("resource.k8s.io", "v1", "ResourceClaimTemplate") => resource::v1::ResourceClaimTemplate,
        ("admissionregistration.k8s.io", "v1", "MutatingWebhookConfiguration") => admissionregistration::v1::MutatingWebhookConfiguration,
        ("admissionregistration.k8s.io", "v1", "ValidatingWebhookConfiguration") => admissionregistration::v1::ValidatingWebhookConfiguration,
    ];
    let object_meta = schema_of::<ObjectMeta>(&mut generator);
    let definitions = generator.take_definitions(true);
    let mut shapes = Shapes::default();
    let kinds = roots
        .into_iter()
        .map(|(kind, schema)| {
            (
                kind,
                shapes.compile(&schema, &definitions, Dialect::BuiltIn),
            )
        })
        .collect();
    let object_meta = shapes.compile(&object_meta, &definitions, Dialect::BuiltIn);
    let mut own = SchemaGenerator::default();
    let meta_schema = schema_of::<ObjectMeta>(&mut own);
    BuiltIn {
        shapes,
        kinds,
        object_meta,
        object_meta_schema: (meta_schema, own.take_definitions(true)),
    }
}

/// The built-in schemas, compiled on first use.
pub(crate) fn built_in() -> &'static BuiltIn {
    static BUILT_IN: OnceLock<BuiltIn> = OnceLock::new();
    BUILT_IN.get_or_init(build)
}

#[cfg(test)]
mod tests {
    use super::super::shapes::Shape;
    use super::*;

    #[test]
    fn every_kind_the_twin_serves_has_a_schema() {
        let registry = crate::sim::kube::storage::resources::Registry::default();
        let schemas = built_in();
        for resource in registry.all() {
            let key = (
                resource.group.as_str(),
                resource.version.as_str(),
                resource.kind.as_str(),
            );
            assert!(
                schemas.kinds.keys().any(|k| (k.0, k.1, k.2) == key),
                "no schema for {key:?}"
            );
        }
    }

    #[test]
    fn a_deployment_knows_its_containers_fields() {
        let schemas = built_in();
        let shapes = &schemas.shapes;
        let field = |at: usize, name: &str| match &shapes.nodes[at] {
            Shape::Object { properties, .. } => properties[name],
            Shape::Array(item) => match &shapes.nodes[*item] {
                Shape::Object { properties, .. } => properties[name],
                other => panic!("{other:?}"),
            },
            other => panic!("{other:?}"),
        };
        let mut at = schemas.kinds[&("apps", "v1", "Deployment")];
        for name in ["spec", "template", "spec", "containers", "resources"] {
            at = field(at, name);
        }
        assert!(matches!(shapes.nodes[at], Shape::Object { .. }));
    }
}
