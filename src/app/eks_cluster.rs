//! `--cluster NAME`: an EKS cluster reached with no kubeconfig, as `aws eks update-kubeconfig`
//! and `aws eks get-token` together would: DescribeCluster for the endpoint and CA, then an
//! EKS token from the AWS credentials on every request, renewed before it expires.

use std::sync::Arc;

use crate::cli::TargetArgs;
use crate::clients::aws::{AwsClients, EksTokens};
use crate::clients::kube::KubeClient;
use crate::error::Error;

pub(super) async fn connect(
    aws: &Arc<AwsClients>,
    cluster: &str,
    args: &TargetArgs,
) -> Result<KubeClient, Error> {
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
    KubeClient::for_eks(
        server,
        ca,
        tokens,
        args.connect_timeout,
        args.request_timeout,
    )
    .map_err(|e| Error::Usage(format!("--cluster {cluster}: {e}")))
}
