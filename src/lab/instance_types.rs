//! What an EC2 instance type's name says about its accelerators.

/// Whether the type carries NVIDIA GPUs: the p (P2-P6) and g (G3-G6, G5g, Gr6) families.
/// Trainium and Inferentia (trn, inf) are accelerators, but not GPUs.
pub fn is_gpu_instance_type(instance_type: &str) -> bool {
    let family: String = instance_type
        .chars()
        .take_while(|c| c.is_ascii_alphabetic())
        .collect();
    matches!(family.as_str(), "p" | "g" | "gr")
}

/// Whether a node group runs GPU nodes: a GPU instance type, or an AMI made for them
/// (`AL2023_x86_64_NVIDIA`, `AL2_x86_64_GPU`).
pub fn is_gpu_node_group<'a>(
    ami_type: &str,
    mut instance_types: impl Iterator<Item = &'a str>,
) -> bool {
    ami_type.contains("NVIDIA")
        || ami_type.contains("GPU")
        || instance_types.any(is_gpu_instance_type)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn p_and_g_families_are_gpus() {
        for t in [
            "g5.xlarge",
            "p4d.24xlarge",
            "p5e.48xlarge",
            "g6e.2xlarge",
            "gr6.4xlarge",
            "g5g.xlarge",
        ] {
            assert!(is_gpu_instance_type(t), "{t}");
        }
        for t in [
            "m6i.large",
            "trn1.32xlarge",
            "inf2.xlarge",
            "c7g.large",
            "t3.medium",
            "",
        ] {
            assert!(!is_gpu_instance_type(t), "{t}");
        }
    }
}
