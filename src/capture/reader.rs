//! `capture`: one lab read into a [`LabState`], through the clients a run would use.

use super::error::CaptureError;
use super::{read_aws, read_kube};
use crate::clients::aws::AwsClients;
use crate::clients::kube::KubeClient;
use crate::lab_state::{FORMAT, LabState, Source, VERSION};

/// What to read, and when it is.
pub struct CaptureTarget<'a> {
    pub aws: &'a AwsClients,
    pub kube: &'a KubeClient,
    /// The EKS cluster; found from the Kubernetes API's endpoint when not named.
    pub cluster: Option<&'a str>,
    /// RFC 3339 of the instant of the capture.
    pub captured_at: String,
}

/// Reads the lab with read-only calls (Describe, List, Get; Secrets as metadata only).
pub async fn capture(target: CaptureTarget<'_>) -> Result<LabState, CaptureError> {
    let cluster = match target.cluster {
        Some(name) => name.to_string(),
        None => read_aws::which_cluster(target.aws, &target.kube.endpoint).await?,
    };
    let (aws, kubernetes) = futures::try_join!(
        read_aws::read(target.aws, &cluster),
        read_kube::read(target.kube)
    )?;
    let account = target
        .aws
        .caller_identity()
        .await
        .ok()
        .and_then(|identity| identity["account"].as_str().map(str::to_string));
    Ok(LabState {
        format: FORMAT.into(),
        version: VERSION,
        captured_at: target.captured_at,
        source: Source {
            kubernetes: target.kube.endpoint.clone(),
            aws: target.aws.endpoint.clone(),
            cluster,
            region: target.aws.region().await.unwrap_or_default(),
            account,
        },
        aws,
        kubernetes,
    })
}
