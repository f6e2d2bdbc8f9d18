//! `runbook doctor`: read-only probes of a target before a run, each passed or failed with the
//! same one-line message a run would end with: the Kubernetes API and its readyz, who the
//! credentials are on both sides, what they may read and change, the EKS cluster and whether
//! the kubeconfig points at it, helm.

use super::stdout::out;
use serde_json::{Value, json};

use super::{AppResult, doctor_access, runtime};
use crate::cli::DoctorArgs;
use crate::clients::aws::AwsClients;
use crate::clients::helm::find_helm;
use crate::clients::kube::KubeClient;
use crate::error::Exit;
use crate::target::Target;

/// One probe: what was asked, whether it passed, and what was found or went wrong. A warning
/// passes: it says what some runbooks will not be able to do.
pub(super) struct Probe {
    pub(super) name: String,
    pub(super) ok: bool,
    pub(super) warn: bool,
    pub(super) detail: String,
}

impl Probe {
    pub(super) fn new(name: impl Into<String>, outcome: Result<String, String>) -> Self {
        let (ok, detail) = match outcome {
            Ok(detail) => (true, detail),
            Err(detail) => (false, detail),
        };
        Self {
            name: name.into(),
            ok,
            warn: false,
            detail,
        }
    }

    pub(super) fn warning(name: impl Into<String>, detail: String) -> Self {
        Self {
            name: name.into(),
            ok: true,
            warn: true,
            detail,
        }
    }
}

pub(crate) fn execute(args: &DoctorArgs) -> AppResult {
    let runtime = runtime::build()?;
    let target = crate::target::connect(&runtime, &args.target, None)?;
    let probes = runtime.block_on(probe(&target, args));
    if args.json {
        let list: Vec<Value> = probes
            .iter()
            .map(|p| json!({"probe": p.name, "ok": p.ok, "warn": p.warn, "detail": p.detail}))
            .collect();
        out!(
            "{}",
            serde_json::to_string_pretty(&json!({"target": target.description, "probes": list}))
                .unwrap_or_default()
        );
    } else {
        out!("{}", target.description);
        let width = probes.iter().map(|p| p.name.len()).max().unwrap_or(0);
        for p in &probes {
            let mark = match (p.ok, p.warn) {
                (false, _) => "FAIL",
                (true, true) => "warn",
                (true, false) => "ok  ",
            };
            out!("{mark}  {:width$}  {}", p.name, p.detail);
        }
    }
    Ok(if probes.iter().all(|p| p.ok) {
        Exit::Passed
    } else {
        Exit::Failed
    })
}

async fn probe(target: &Target, args: &DoctorArgs) -> Vec<Probe> {
    let mut probes = kubernetes(&target.clients.kube).await;
    probes.push(aws_identity(&target.clients.aws).await);
    probes.extend(eks_cluster(target, args).await);
    probes.push(Probe::new(
        "helm",
        find_helm(args.target.helm.as_deref())
            .map(|path| path.display().to_string())
            .map_err(|e| e.to_string()),
    ));
    probes
}

/// The Kubernetes API, and once it answers, its readyz and what the credentials may do.
async fn kubernetes(kube: &KubeClient) -> Vec<Probe> {
    let mut probes = Vec::new();
    let version = kube.version().await;
    let api_up = version.is_ok();
    probes.push(Probe::new(
        "Kubernetes API",
        version
            .map(|v| {
                format!(
                    "{} at {}",
                    v["gitVersion"].as_str().unwrap_or("a version"),
                    kube.endpoint.trim_end_matches('/')
                )
            })
            .map_err(|e| e.to_string()),
    ));
    if api_up {
        probes.push(Probe::new(
            "readyz",
            match kube.health("readyz").await {
                Ok(h) if h.ok => Ok(format!("{} checks ok", h.checks.len())),
                Ok(h) => Err(format!("failing: {}", h.failed.join(", "))),
                Err(e) => Err(e.to_string()),
            },
        ));
        probes.extend(doctor_access::probe(kube).await);
    }
    probes
}

/// Who the AWS credentials are, and in which region.
async fn aws_identity(aws: &AwsClients) -> Probe {
    let region = aws.region().await;
    Probe::new(
        "AWS identity",
        aws.caller_identity()
            .await
            .map(|who| {
                format!(
                    "{} in {}",
                    who["arn"].as_str().unwrap_or("?"),
                    region.as_deref().unwrap_or("no region")
                )
            })
            .map_err(|e| e.to_string()),
    )
}

/// The EKS cluster `--cluster` names (the lab's by default), and whether the kubeconfig
/// points at it.
async fn eks_cluster(target: &Target, args: &DoctorArgs) -> Vec<Probe> {
    let (kube, aws) = (&target.clients.kube, &target.clients.aws);
    let name = args
        .target
        .cluster
        .as_deref()
        .unwrap_or(crate::lab::CLUSTER_NAME);
    let cluster = aws.cluster(name).await;
    let endpoint = cluster
        .as_ref()
        .ok()
        .and_then(|c| c["endpoint"].as_str().map(str::to_string));
    let mut probes = vec![Probe::new(
        format!("EKS cluster {name}"),
        cluster
            .map(|c| {
                format!(
                    "{}, Kubernetes {}, via {}",
                    c["status"].as_str().unwrap_or("?"),
                    c["version"].as_str().unwrap_or("?"),
                    aws.endpoint
                )
            })
            .map_err(|e| e.to_string()),
    )];
    // Against AWS itself the kubeconfig must point at that cluster's endpoint; the lab twin
    // and emulators serve the Kubernetes API on a port of their own.
    if let Some(endpoint) = endpoint
        && args.target.kubeconfig.is_some()
        && aws.endpoint_url().is_none()
    {
        probes.push(kubeconfig_points_at(kube, &endpoint, name));
    }
    probes
}

fn kubeconfig_points_at(kube: &KubeClient, endpoint: &str, name: &str) -> Probe {
    let ours = kube.endpoint.trim_end_matches('/');
    Probe::new(
        "kubeconfig points at it",
        if ours.eq_ignore_ascii_case(endpoint.trim_end_matches('/')) {
            Ok(ours.to_string())
        } else {
            Err(format!(
                "the kubeconfig's server is {ours}, the cluster's endpoint {endpoint}: pass --context for {name}, or run `aws eks update-kubeconfig --name {name}`"
            ))
        },
    )
}
