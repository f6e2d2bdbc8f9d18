//! What a target is, however its address was spelt: the cluster's identity (its `kube-system`
//! namespace's uid, which tools commonly take for a cluster's id; for an EKS cluster named by
//! `--cluster` also its ARN) and the AWS account and region the run's keys act in (STS
//! GetCallerIdentity). Locks, journals and `runbook recover` name a target by it, so
//! `https://127.0.0.1:PORT`, `https://127.0.0.1:PORT/` and `https://localhost:PORT` are one.

use super::connect::TargetClients;
use crate::clients::kube::KubeError;
use crate::error::Error;

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TargetIdentity {
    /// The `kube-system` namespace's uid; None while the cluster does not answer (not made yet).
    pub(crate) cluster_uid: Option<String>,
    pub(crate) eks_arn: Option<String>,
    /// The AWS account and region of the run's keys; None where they are refused or absent.
    pub(crate) account: Option<String>,
    pub(crate) region: Option<String>,
    /// The EKS cluster's name, from `--cluster`.
    pub(crate) eks_name: Option<String>,
}

impl TargetIdentity {
    /// The name locks and journals know the target by: the cluster's uid where the cluster
    /// answers, whatever AWS keys come with it; else the AWS account and region (a deploy from
    /// empty), with the EKS cluster's name when one is given.
    pub(crate) fn key(&self) -> String {
        match (&self.cluster_uid, &self.account) {
            (Some(uid), _) => format!("Kubernetes cluster {uid}"),
            (None, Some(account)) => format!(
                "AWS account {account} in {}{}",
                self.region.as_deref().unwrap_or("(no region)"),
                self.eks_name
                    .as_ref()
                    .map(|name| format!(", EKS cluster {name}"))
                    .unwrap_or_default()
            ),
            (None, None) => "a target that has not said what it is".into(),
        }
    }

    /// Everything known, in words, for `--verbose` and the lock's messages.
    pub(crate) fn describe(&self) -> String {
        let mut parts = Vec::new();
        if let Some(uid) = &self.cluster_uid {
            parts.push(format!("cluster {uid} (kube-system's uid)"));
        }
        if let Some(arn) = &self.eks_arn {
            parts.push(arn.clone());
        }
        if let Some(account) = &self.account {
            parts.push(format!(
                "AWS account {account} in {}",
                self.region.as_deref().unwrap_or("(no region)")
            ));
        }
        if parts.is_empty() {
            return self.key();
        }
        parts.join(", ")
    }
}

/// Asks the target what it is: the cluster's `kube-system` uid and the caller's account, at
/// once; the EKS cluster's ARN is the one connecting to it by `--cluster` read. A cluster that does not answer (not made yet) or AWS keys
/// that are refused leave their part out; a cluster that refuses to say is an error, as is a
/// target of which neither part can be read.
pub(crate) async fn identify(
    clients: &TargetClients,
    eks_name: Option<&str>,
    eks_arn: Option<&str>,
) -> Result<TargetIdentity, Error> {
    let (cluster, caller, region) = tokio::join!(
        clients.kube.namespace_uid("kube-system"),
        clients.aws.caller_identity(),
        clients.aws.region(),
    );
    let cluster_uid = match cluster {
        Ok(uid) => Some(uid),
        Err(KubeError::Connection { .. }) => None,
        Err(error) => {
            return Err(Error::Usage(format!(
                "cannot tell which cluster {} is: reading the kube-system namespace (whose uid names the cluster in locks and journals) failed: {error}; grant `get` on namespaces to this identity",
                clients.kube.endpoint
            )));
        }
    };
    let account = caller
        .ok()
        .and_then(|caller| caller["account"].as_str().map(str::to_string));
    let identity = TargetIdentity {
        cluster_uid,
        eks_arn: eks_arn.map(str::to_string),
        account,
        region,
        eks_name: eks_name.map(str::to_string),
    };
    if identity.cluster_uid.is_none() && identity.account.is_none() {
        return Err(Error::Usage(format!(
            "cannot tell which target this is: the Kubernetes API at {} does not answer and AWS STS GetCallerIdentity at {} refused the keys; a run that changes a target takes a lock named after it",
            clients.kube.endpoint, clients.aws.endpoint
        )));
    }
    Ok(identity)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn identity() -> TargetIdentity {
        TargetIdentity {
            cluster_uid: Some("5b1c-uid".into()),
            eks_arn: Some("arn:aws:eks:us-west-2:123456789012:cluster/gpu-lab".into()),
            account: Some("123456789012".into()),
            region: Some("us-west-2".into()),
            eks_name: Some("gpu-lab".into()),
        }
    }

    #[test]
    fn a_cluster_is_named_by_its_uid_whatever_keys_come_with_it() {
        let without_aws = TargetIdentity {
            account: None,
            region: None,
            ..identity()
        };
        assert_eq!(identity().key(), "Kubernetes cluster 5b1c-uid");
        assert_eq!(without_aws.key(), identity().key());
        assert_eq!(
            identity().describe(),
            "cluster 5b1c-uid (kube-system's uid), arn:aws:eks:us-west-2:123456789012:cluster/gpu-lab, AWS account 123456789012 in us-west-2"
        );
    }

    #[test]
    fn before_the_cluster_answers_the_account_region_and_name_do() {
        let empty = TargetIdentity {
            cluster_uid: None,
            eks_arn: None,
            ..identity()
        };
        assert_eq!(
            empty.key(),
            "AWS account 123456789012 in us-west-2, EKS cluster gpu-lab"
        );
    }
}
