//! The AMI release a node group of a Kubernetes version runs on the twin (one AMI build).

use crate::lab;

/// The AMI release the twin's node groups of the lab's version run.
pub(crate) const LAB_RELEASE: &str = "1.35.3-20260320";

/// The AMI release a node group of `version` gets when none is named: the lab's for the lab's
/// version, the same build date for another (the twin keeps one AMI build).
pub(crate) fn release_for(version: &str) -> String {
    if version == lab::KUBERNETES_VERSION {
        LAB_RELEASE.to_string()
    } else {
        format!(
            "{version}.0-{}",
            LAB_RELEASE.rsplit('-').next().unwrap_or_default()
        )
    }
}
