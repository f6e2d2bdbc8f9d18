//! Why a capture stopped: which read failed, against what.

use crate::clients::aws::AwsError;
use crate::clients::kube::KubeError;

#[derive(Debug, thiserror::Error)]
pub enum CaptureError {
    #[error("cannot read {what} from AWS")]
    Aws {
        what: String,
        #[source]
        source: AwsError,
    },
    #[error("cannot read {what} from the Kubernetes API")]
    Kube {
        what: String,
        #[source]
        source: KubeError,
    },
    #[error(
        "no EKS cluster answers at {endpoint}; the account has {clusters}: name the one to capture with --eks-cluster NAME"
    )]
    WhichCluster { endpoint: String, clusters: String },
}

impl CaptureError {
    pub(super) fn aws(what: impl Into<String>) -> impl FnOnce(AwsError) -> Self {
        let what = what.into();
        move |source| Self::Aws { what, source }
    }

    pub(super) fn kube(what: impl Into<String>) -> impl FnOnce(KubeError) -> Self {
        let what = what.into();
        move |source| Self::Kube { what, source }
    }
}
