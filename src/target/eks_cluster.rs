//! `--cluster NAME`: an EKS cluster reached with no kubeconfig, as `aws eks update-kubeconfig`
//! and `aws eks get-token` together would: DescribeCluster for the endpoint and CA, then an
//! EKS token from the AWS credentials on every request, renewed before it expires.

use std::sync::Arc;

use crate::cli::TargetArgs;
use crate::clients::aws::{AwsClients, EksTokens, principal_of};
use crate::clients::kube::{KubeClient, KubeError};
use crate::error::Error;

/// The cluster's client, and its ARN as DescribeCluster gave it (the target's identity names it).
pub(super) async fn connect(
    aws: &Arc<AwsClients>,
    cluster: &str,
    args: &TargetArgs,
) -> Result<(KubeClient, Option<String>), Error> {
    let described = aws
        .cluster(cluster)
        .await
        .map_err(|e| Error::Usage(format!("--cluster {cluster}: {e}")))?;
    let status = described["status"].as_str().unwrap_or("UNKNOWN");
    if status != "ACTIVE" {
        return Err(Error::Usage(format!(
            "--cluster {cluster}: the cluster is {status}; its Kubernetes API answers once it is ACTIVE (aws eks wait cluster-active --name {cluster})"
        )));
    }
    let endpoint = described["endpoint"].as_str().unwrap_or_default();
    let server = args.kube_server.as_deref().unwrap_or(endpoint);
    if server.is_empty() {
        return Err(Error::Usage(format!(
            "--cluster {cluster}: DescribeCluster gave no endpoint"
        )));
    }
    let ca = described["certificate_authority"]["data"].as_str();
    let tokens = Arc::new(EksTokens::new(aws.clone(), cluster));
    let client = KubeClient::for_eks(
        server,
        ca,
        tokens,
        args.connect_timeout,
        args.request_timeout,
    )
    .map_err(|e| Error::Usage(format!("--cluster {cluster}: {e}")))?;
    match client.authenticated().await {
        Err(KubeError::Api { code: 401, .. }) => Err(Error::Usage(format!(
            "--cluster {cluster}: {}",
            refused(aws, cluster, server).await
        ))),
        // Anything else (unreachable, 403) is the run's to report, where it happens.
        _ => Ok((client, described["arn"].as_str().map(str::to_string))),
    }
}

/// Why EKS said 401 to our token, as far as AWS tells: who the keys are, and whether that
/// principal has an access entry (EKS itself only ever answers `Unauthorized`).
async fn refused(aws: &AwsClients, cluster: &str, server: &str) -> String {
    let caller = match aws.caller_identity().await {
        Ok(caller) => caller["arn"].as_str().unwrap_or_default().to_string(),
        Err(e) => {
            return format!(
                "the API server refused the EKS token (401 Unauthorized), and the AWS credentials that signed it do not work: {e}"
            );
        }
    };
    let principal = principal_of(&caller);
    match aws.access_entry(cluster, &principal).await {
        Ok(None) => format!(
            "the principal {principal} has no access entry in cluster {cluster}, so EKS does not know it (401 Unauthorized): add one with `aws eks create-access-entry --cluster-name {cluster} --principal-arn {principal}` and a policy with `aws eks associate-access-policy --cluster-name {cluster} --principal-arn {principal} --policy-arn arn:aws:eks::aws:cluster-access-policy/AmazonEKSViewPolicy --access-scope type=cluster` (or map it in the aws-auth ConfigMap when the cluster's authenticationMode is CONFIG_MAP)"
        ),
        Ok(Some(_)) => format!(
            "the API server at {server} refused the EKS token of {principal} (401 Unauthorized) though it has an access entry in {cluster}: is this machine's clock more than a few minutes off (a token lives 15 minutes from its signing), or is {server} not {cluster}'s API?"
        ),
        Err(e) => format!(
            "the API server refused the EKS token of {principal} (401 Unauthorized), and whether it has an access entry could not be read: {e}"
        ),
    }
}
