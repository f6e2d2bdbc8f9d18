//! `runbook state capture`: a lab read into a lab-state file with read-only calls.

use super::{AppResult, lab_files, runtime};
use crate::capture::{CaptureTarget, capture};
use crate::cli::CaptureArgs;
use crate::clock::dates::rfc3339_utc;
use crate::error::{Error, Exit};
use crate::lab_state::LabState;

pub(crate) fn execute(args: &CaptureArgs) -> AppResult {
    let runtime = runtime::build()?;
    let target = crate::target::connect(&runtime, &args.target, None)?;
    let state = read(&runtime, &target, args.eks_cluster.as_deref())?;
    let text = serde_json::to_string_pretty(&state).unwrap_or_default() + "\n";
    if args.output.as_os_str() == "-" {
        super::stdout::write(&text);
    } else {
        lab_files::write_private(&args.output, &text, "the lab-state file")?;
        eprintln!(
            "captured {} ({}): {} AWS resources, {} Kubernetes objects, {} Secrets by name -> {}",
            state.source.cluster,
            target.description,
            aws_count(&state),
            state.kubernetes.objects.len(),
            state.kubernetes.secrets.len(),
            args.output.display()
        );
    }
    Ok(Exit::Passed)
}

/// Captures a target `connect` made (plan captures too).
pub(crate) fn read(
    runtime: &tokio::runtime::Runtime,
    target: &crate::target::Target,
    eks_cluster: Option<&str>,
) -> Result<LabState, Error> {
    let clients = &target.clients;
    runtime
        .block_on(capture(CaptureTarget {
            aws: &clients.aws,
            kube: &clients.kube,
            cluster: eks_cluster.or(target.cluster.as_deref()),
            captured_at: rfc3339_utc(target.clock.unix_seconds()),
        }))
        .map_err(Error::Capture)
}

fn aws_count(state: &LabState) -> usize {
    let aws = &state.aws;
    let rules: usize = aws.security_groups.iter().map(|g| g.rules.len()).sum();
    aws.vpcs.len()
        + aws.subnets.len()
        + aws.nat_gateways.len()
        + aws.addresses.len()
        + aws.security_groups.len()
        + rules
        + 1
        + aws.cluster.addons.len()
        + aws.cluster.access_entries.len()
        + aws.nodegroups.len()
        + aws.instances.len()
        + aws.oidc_providers.len()
        + aws.roles.len()
}
