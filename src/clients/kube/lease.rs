//! The Lease (`coordination.k8s.io/v1`) a run holds in its target cluster, and what names the
//! cluster: read, create, replace on a resourceVersion (a 409 is a lost race, said as such,
//! not an error), delete on a resourceVersion; the namespace a Lease lives in, made when missing;
//! a namespace's uid (`kube-system`'s names the cluster).

use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::Namespace;
use kube::api::{Api, DeleteParams, ObjectMeta, PostParams, Preconditions};

use super::client::{FIELD_MANAGER, KubeClient};
use super::error::KubeError;

/// What a write on a resourceVersion came to.
#[derive(Debug)]
pub enum LeaseWrite {
    /// Written: the Lease as the API server now holds it.
    Written(Box<Lease>),
    /// Another writer got there first (409 AlreadyExists or Conflict): read it again.
    Lost,
}

fn written(result: Result<Lease, kube::Error>) -> Result<LeaseWrite, KubeError> {
    match result {
        Ok(lease) => Ok(LeaseWrite::Written(Box::new(lease))),
        Err(kube::Error::Api(status)) if status.code == 409 => Ok(LeaseWrite::Lost),
        Err(error) => Err(error.into()),
    }
}

fn post_params() -> PostParams {
    PostParams {
        field_manager: Some(FIELD_MANAGER.into()),
        ..Default::default()
    }
}

impl KubeClient {
    fn leases(&self, namespace: &str) -> Api<Lease> {
        Api::namespaced(self.kube_client(), namespace)
    }

    /// The Lease, or None when there is none.
    pub async fn lease(&self, namespace: &str, name: &str) -> Result<Option<Lease>, KubeError> {
        Ok(self.leases(namespace).get_opt(name).await?)
    }

    /// Creates the Lease; `Lost` when one of that name exists already.
    pub async fn create_lease(&self, lease: &Lease) -> Result<LeaseWrite, KubeError> {
        let namespace = lease.metadata.namespace.as_deref().unwrap_or("default");
        written(self.leases(namespace).create(&post_params(), lease).await)
    }

    /// Replaces the Lease if its resourceVersion is still the one `lease` carries; `Lost`
    /// when another writer changed it since.
    pub async fn replace_lease(&self, lease: &Lease) -> Result<LeaseWrite, KubeError> {
        let namespace = lease.metadata.namespace.as_deref().unwrap_or("default");
        let name = lease.metadata.name.as_deref().unwrap_or_default();
        written(
            self.leases(namespace)
                .replace(name, &post_params(), lease)
                .await,
        )
    }

    /// Deletes the Lease if its resourceVersion is still `resource_version`; false when it is
    /// gone already or another writer changed it since (then it is theirs to keep).
    pub async fn delete_lease(
        &self,
        namespace: &str,
        name: &str,
        resource_version: &str,
    ) -> Result<bool, KubeError> {
        let params = DeleteParams {
            preconditions: Some(Preconditions {
                resource_version: Some(resource_version.to_string()),
                uid: None,
            }),
            ..Default::default()
        };
        match self.leases(namespace).delete(name, &params).await {
            Ok(_) => Ok(true),
            Err(kube::Error::Api(status)) if status.code == 404 || status.code == 409 => Ok(false),
            Err(error) => Err(error.into()),
        }
    }

    /// Makes the namespace when it is missing (one made by another runner meanwhile is fine).
    pub async fn ensure_namespace(&self, name: &str) -> Result<(), KubeError> {
        let namespaces: Api<Namespace> = Api::all(self.kube_client());
        if namespaces.get_opt(name).await?.is_some() {
            return Ok(());
        }
        let namespace = Namespace {
            metadata: ObjectMeta {
                name: Some(name.to_string()),
                labels: Some(
                    [(
                        "app.kubernetes.io/managed-by".to_string(),
                        "runbook".to_string(),
                    )]
                    .into(),
                ),
                ..Default::default()
            },
            ..Default::default()
        };
        match namespaces.create(&post_params(), &namespace).await {
            Ok(_) => Ok(()),
            Err(kube::Error::Api(status)) if status.code == 409 => Ok(()),
            Err(error) => Err(error.into()),
        }
    }

    /// A namespace's uid: `kube-system`'s is what tools commonly take for the cluster's id,
    /// the same however the API server's address is spelt.
    pub async fn namespace_uid(&self, name: &str) -> Result<String, KubeError> {
        let namespaces: Api<Namespace> = Api::all(self.kube_client());
        let namespace = namespaces.get(name).await?;
        namespace.metadata.uid.ok_or_else(|| {
            KubeError::Invalid(format!(
                "the namespace {name} on {} has no uid",
                self.endpoint
            ))
        })
    }
}
