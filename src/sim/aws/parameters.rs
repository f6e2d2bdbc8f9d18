//! Parameter checks the services make before they act, answered with each service's own code
//! and words, where a real answer has been seen (each message below names where):
//! - EC2 rules: "CIDR block 10.0.0.0/33 is malformed" (aws/aws-cli#2846, hashicorp/terraform
//!   #14382); "TCP/UDP (from) port (-1) out of range" (aws/aws-cli#1066); "Invalid value 'all'
//!   for IP protocol. Unknown protocol." (hashicorp/terraform-provider-aws#1793: EC2 refuses
//!   the literal `all`, the CLI and SDKs send -1); "ICMP code (65535) out of range"
//!   (terraform-aws-modules/terraform-aws-security-group#7).
//! - EKS scaling: "desired capacity 2 can't be greater than max size 1" (EKS's
//!   InvalidParameterException as eksctl prints it); "Minimum capacity 3 can't be greater
//!   than desired size 2" (the same check, as aws-cdk's EKS module words it after EKS).
//! - EKS node groups: "Invalid taint effect: NoSchedule, must be one of these [NO_SCHEDULE,
//!   NO_EXECUTE, PREFER_NO_SCHEDULE]" (awsdocs/amazon-eks-user-guide#617); a label or taint
//!   key or value EKS does not take: "Invalid value: ...: field must consist of alphanumeric
//!   characters, '-', '_' or '.', ..." (aws-controllers-k8s/community#2208,
//!   hashicorp/terraform-provider-aws#25038; an empty value the CLI and SDKs refuse first,
//!   the API's minimum length being 1).
//! - EKS cluster names: "The clusterName parameter contains invalid characters. It should
//!   conform to the regular expression "^[0-9A-Za-z][A-Za-z0-9-_]*"In other words, ..."
//!   (surajincloud/kubectl-eks#72, DescribeCluster and ListNodegroups answering so in 2024).
//! - Instance types: EKS accepts a node group of any type and fails it afterwards, CREATE_FAILED
//!   with `Ec2LaunchTemplateInvalidConfiguration: The specified instance type m8i.large is
//!   not valid` (terraform-aws-modules/terraform-aws-eks#3648, eksctl-io/eksctl#4544).
//! - EKS node group names: "nodeGroupName can't be longer than 63 characters!"
//!   (terraform-aws-modules/terraform-aws-eks#1713).
//! - Counts and lengths the EKS API reference sets (cluster names up to 100; 50 taints; 1-50
//!   tags, keys 1-128, values up to 256): EKS's own text for these has not been seen; they are answered in AWS's
//!   request-validation shape ("1 validation error detected: Value ... at 'tags' failed to
//!   satisfy constraint: ...", SWO-GS/auto-tag#77).
//! - IAM names: "1 validation error detected: Value 'a role' at 'roleName' failed to satisfy
//!   constraint: Member must satisfy regular expression pattern: [\w+=,.@-]+" (IAM's
//!   ValidationError; pattern and length from the IAM API reference, CreateRole).

use std::net::Ipv4Addr;

use super::error::AwsError;

fn invalid_value(message: String) -> AwsError {
    AwsError::new(400, "InvalidParameterValue", message)
}

/// An IPv4 CIDR as EC2 reads `CidrIp`: four octets and a prefix of 0 to 32; answers its
/// network, the address with the host bits cleared, which is what EC2 keeps (10.8.10.0/16 is
/// stored as 10.8.0.0/16: hashicorp/terraform#9237, ansible/ansible#25403).
pub(crate) fn ipv4_cidr(cidr: &str) -> Result<String, AwsError> {
    let parsed = cidr.split_once('/').and_then(|(address, prefix)| {
        let address = address.parse::<Ipv4Addr>().ok()?;
        let prefix = prefix.parse::<u8>().ok().filter(|p| *p <= 32)?;
        (!cidr.contains('+')).then_some((address, prefix))
    });
    let Some((address, prefix)) = parsed else {
        return Err(invalid_value(format!("CIDR block {cidr} is malformed")));
    };
    let mask = u32::MAX.checked_shl(32 - u32::from(prefix)).unwrap_or(0);
    let network = Ipv4Addr::from(u32::from(address) & mask);
    Ok(format!("{network}/{prefix}"))
}

/// A security group id as EC2 reads one before looking it up: `sg-` and 8 or 17 hex digits.
/// Its words as EC2 answered: `Invalid id: "DSESecurityGroup" (expecting "sg-...")`
/// (aws-ia/taskcat#14), `Invalid id: "sg-xxxxxxxx, sg-xxxxxxxxx"` (terraform-provider-aws
/// #2375), `The security-group ID '' is malformed` (systeminit/si#3042).
pub(crate) fn group_id(id: &str) -> Result<(), AwsError> {
    let malformed = |message: String| AwsError::new(400, "InvalidGroupId.Malformed", message);
    if id.is_empty() {
        return Err(malformed("The security-group ID '' is malformed".into()));
    }
    match id.strip_prefix("sg-") {
        None => Err(malformed(format!(
            "Invalid id: \"{id}\" (expecting \"sg-...\")"
        ))),
        Some(hex)
            if matches!(hex.len(), 8 | 17)
                && hex
                    .chars()
                    .all(|c| c.is_ascii_digit() || ('a'..='f').contains(&c)) =>
        {
            Ok(())
        }
        Some(_) => Err(malformed(format!("Invalid id: \"{id}\""))),
    }
}

/// Whether a rule of this protocol has ports: TCP, UDP and ICMP do (ICMP's are its type and
/// code); all protocols (`-1`) and those given by number allow every port.
pub(crate) fn has_ports(protocol: &str) -> bool {
    matches!(protocol, "tcp" | "udp" | "icmp" | "icmpv6")
}

/// A rule's protocol, normalized as EC2 keeps it (`tcp`, `udp`, `icmp`, `icmpv6`, `-1`, or a
/// number 0-255); names EC2 does not know, the literal `all` among them, are refused.
pub(crate) fn protocol(given: &str) -> Result<String, AwsError> {
    let lower = given.to_lowercase();
    match lower.as_str() {
        "tcp" | "udp" | "icmp" | "icmpv6" | "-1" => Ok(lower),
        "6" => Ok("tcp".into()),
        "17" => Ok("udp".into()),
        "1" => Ok("icmp".into()),
        "58" => Ok("icmpv6".into()),
        number if number.parse::<u8>().is_ok() => Ok(lower),
        _ => Err(invalid_value(format!(
            "Invalid value '{given}' for IP protocol. Unknown protocol."
        ))),
    }
}

/// A rule's ports for its protocol: TCP/UDP 0-65535, ICMP type and code -1-255.
pub(crate) fn ports(protocol: &str, from: i32, to: i32) -> Result<(), AwsError> {
    match protocol {
        "tcp" | "udp" => {
            for (end, port) in [("from", from), ("to", to)] {
                if !(0..=65535).contains(&port) {
                    return Err(invalid_value(format!(
                        "TCP/UDP ({end}) port ({port}) out of range"
                    )));
                }
            }
            if from > to {
                // No published answer for this one; the twin names both ends.
                return Err(invalid_value(format!("Invalid port range {from}-{to}")));
            }
            Ok(())
        }
        "icmp" | "icmpv6" => {
            if !(-1..=255).contains(&from) {
                return Err(invalid_value(format!("ICMP type ({from}) out of range")));
            }
            if !(-1..=255).contains(&to) {
                return Err(invalid_value(format!("ICMP code ({to}) out of range")));
            }
            if from == -1 && to != -1 {
                // botocore's IpPermission.ToPort: "If the start port is -1 (all ICMP types),
                // then the end port must be -1 (all ICMP codes)". EC2's words for breaking it
                // have not been seen: these are the twin's, in EC2's portRange form.
                return Err(invalid_value(format!(
                    "Invalid value for portRange. ICMP code ({to}) must be -1 when the ICMP type is -1 (all ICMP types)."
                )));
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

/// Which call sizes a node group: EKS words the same checks otherwise in each.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Sizing {
    CreateNodegroup,
    UpdateNodegroupConfig,
}

/// A node group's scaling: `0 <= min <= desired <= max`, `max >= 1`. CreateNodegroup says
/// "minSize can't be greater than desiredSize" (sassoftware/viya4-iac-aws#298) and
/// "desiredSize can't be greater than maxSize" (ministryofjustice/cloud-platform-infrastructure
/// #4595); UpdateNodegroupConfig "Minimum capacity 2 can't be greater than desired size 1"
/// (terraform-aws-modules/terraform-aws-eks#2508) and "desired capacity 2 can't be greater
/// than max size 1" (as eksctl's scale prints it). A size below the API reference's minimums
/// (max 1, min and desired 0) has no published answer; the twin words it.
pub(crate) fn scaling(min: i64, desired: i64, max: i64, call: Sizing) -> Result<(), AwsError> {
    if min < 0 || max < 1 || desired < 0 {
        return Err(AwsError::invalid_parameter(
            "Minimum capacity can't be negative and maximum capacity must be at least 1",
        ));
    }
    if desired > max {
        return Err(AwsError::invalid_parameter(match call {
            Sizing::CreateNodegroup => "desiredSize can't be greater than maxSize".to_string(),
            Sizing::UpdateNodegroupConfig => {
                format!("desired capacity {desired} can't be greater than max size {max}")
            }
        }));
    }
    if min > desired {
        return Err(AwsError::invalid_parameter(match call {
            Sizing::CreateNodegroup => "minSize can't be greater than desiredSize".to_string(),
            Sizing::UpdateNodegroupConfig => {
                format!("Minimum capacity {min} can't be greater than desired size {desired}")
            }
        }));
    }
    Ok(())
}

/// Whether an instance type runs on Arm (Graviton): families whose letters after the
/// generation hold a `g` (`t4g`, `m7gd`, `c6gn`, `g5g`, `is4gen`), and `a1`.
fn is_arm(instance_type: &str) -> bool {
    let family = instance_type.split('.').next().unwrap_or_default();
    let after_generation = family.trim_start_matches(|c: char| c.is_ascii_lowercase());
    let letters = after_generation.trim_start_matches(|c: char| c.is_ascii_digit());
    family == "a1" || letters.contains('g')
}

/// The instance types of a node group that its AMI type cannot boot (Arm on an x86 AMI, x86
/// on an Arm one), refused as EKS refuses them: "[t4g.small] is not a valid instance type for
/// requested amiType AL2_x86_64" (ManagedKube/kubernetes-ops#231, eksctl-io/eksctl#7754,
/// HHS/simpler-grants-gov#12404 for AL2023_x86_64_STANDARD). CUSTOM (a launch template's
/// AMI) is not checked.
pub(crate) fn instance_types_for_ami(
    ami_type: &str,
    instance_types: &[String],
) -> Result<(), AwsError> {
    if ami_type == "CUSTOM" {
        return Ok(());
    }
    let arm_ami = ami_type.contains("ARM");
    let misfits: Vec<&str> = instance_types
        .iter()
        .filter(|t| is_arm(t) != arm_ami)
        .map(String::as_str)
        .collect();
    if misfits.is_empty() {
        return Ok(());
    }
    Err(AwsError::invalid_parameter(format!(
        "[{}] is not a valid instance type for requested amiType {ami_type}",
        misfits.join(" ")
    )))
}

/// An EKS cluster name (the API reference's pattern `^[0-9A-Za-z][A-Za-z0-9\-_]*`), as the
/// request's `parameter` names it (`name` in CreateCluster and DescribeCluster, `clusterName`
/// in the calls under a cluster).
pub(crate) fn cluster_name(parameter: &str, name: &str) -> Result<(), AwsError> {
    let ok = name.starts_with(|c: char| c.is_ascii_alphanumeric())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if ok {
        return Ok(());
    }
    Err(AwsError::invalid_parameter(format!(
        "The {parameter} parameter contains invalid characters. It should conform to the regular expression \"^[0-9A-Za-z][A-Za-z0-9-_]*\"In other words, it should start with a number or letter, and can contain numbers, letters, dashes, and underscores."
    )))
}

/// Why an instance type does not exist, when the twin knows it does not: a name without
/// `family.size`, or a size the GPU catalog's family does not have (`p5.96xlarge`). Types of
/// families outside the catalog (`m5.large`) are taken as given.
pub(crate) fn unknown_instance_type(instance_type: &str) -> Option<String> {
    let invalid = Some(format!(
        "The specified instance type {instance_type} is not valid"
    ));
    let Some((family, size)) = instance_type.split_once('.') else {
        return invalid;
    };
    let shaped = |part: &str| {
        !part.is_empty()
            && part
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
    };
    if !shaped(family) || !shaped(size) {
        return invalid;
    }
    let catalog = crate::lab::gpu_catalog::INSTANCE_TYPES;
    let family_known = catalog.iter().any(|row| {
        row.instance_type
            .split_once('.')
            .is_some_and(|(f, _)| f == family)
    });
    if family_known && crate::lab::gpu_catalog::find(instance_type).is_none() {
        return invalid;
    }
    None
}

/// A new cluster's name: 1 to 100 characters (the EKS API reference, CreateCluster).
pub(crate) fn cluster_name_length(name: &str) -> Result<(), AwsError> {
    if name.chars().count() > 100 {
        return Err(constraint(
            name,
            "name",
            "Member must have length less than or equal to 100",
        ));
    }
    Ok(())
}

/// A node group's name: at most 63 characters (EKS's own words, terraform-aws-modules/
/// terraform-aws-eks#1713), of the cluster names' pattern (the EKS user guide: letters,
/// digits, hyphens and underscores, starting with a letter or digit; the twin answers in the
/// words EKS uses for that pattern on a cluster's name).
pub(crate) fn nodegroup_name(name: &str) -> Result<(), AwsError> {
    if name.chars().count() > 63 {
        return Err(AwsError::invalid_parameter(
            "nodeGroupName can't be longer than 63 characters!",
        ));
    }
    cluster_name("nodegroupName", name)
}

/// AWS's request-validation answer for a value outside its API model's constraint.
fn constraint(value: &str, field: &str, constraint: &str) -> AwsError {
    AwsError::invalid_parameter(format!(
        "1 validation error detected: Value '{value}' at '{field}' failed to satisfy constraint: {constraint}"
    ))
}

/// At most 50 taints per node group (the EKS API reference, CreateNodegroup and
/// UpdateNodegroupConfig: "Maximum number of 50 items").
pub(crate) fn taint_count(taints: &serde_json::Value) -> Result<(), AwsError> {
    let count = taints.as_array().map_or(0, Vec::len);
    if count > 50 {
        return Err(constraint(
            &format!("[{count} taints]"),
            "taints",
            "Member must have length less than or equal to 50",
        ));
    }
    Ok(())
}

/// A resource's tags as the EKS API reference bounds them: 1 to 50 entries, keys of 1 to 128
/// characters, values of at most 256 (worded as AWS's validation says of a map, as in
/// SWO-GS/auto-tag#77).
pub(crate) fn tags(tags: &serde_json::Value) -> Result<(), AwsError> {
    let Some(map) = tags.as_object() else {
        return Ok(());
    };
    let shown = || {
        let pairs: Vec<String> = map
            .iter()
            .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or_default()))
            .collect();
        format!("{{{}}}", pairs.join(", "))
    };
    if map.is_empty() || map.len() > 50 {
        return Err(constraint(
            &shown(),
            "tags",
            "Member must have length less than or equal to 50, Member must have length greater than or equal to 1",
        ));
    }
    if map.keys().any(|k| k.is_empty() || k.chars().count() > 128) {
        return Err(constraint(
            &shown(),
            "tags",
            "Map keys must satisfy constraint: [Member must have length less than or equal to 128, Member must have length greater than or equal to 1]",
        ));
    }
    if map
        .values()
        .any(|v| v.as_str().unwrap_or_default().chars().count() > 256)
    {
        return Err(constraint(
            &shown(),
            "tags",
            "Map value must satisfy constraint: [Member must have length less than or equal to 256, Member must have length greater than or equal to 0]",
        ));
    }
    Ok(())
}

/// A node group's taint effect EKS does not know.
pub(crate) fn taint_effect(effect: &str) -> AwsError {
    AwsError::invalid_parameter(format!(
        "Invalid taint effect: {effect}, must be one of these [NO_SCHEDULE, NO_EXECUTE, PREFER_NO_SCHEDULE]"
    ))
}

const NAME_PATTERN: &str = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";

/// Kubernetes' name part: 1-63 alphanumerics, `-`, `_`, `.`, alphanumeric at both ends.
fn name_part(text: &str) -> bool {
    let alnum = |c: char| c.is_ascii_alphanumeric();
    (1..=63).contains(&text.len())
        && text.starts_with(alnum)
        && text.ends_with(alnum)
        && text
            .chars()
            .all(|c| alnum(c) || matches!(c, '-' | '_' | '.'))
}

fn label_problem(value: &str) -> AwsError {
    AwsError::invalid_parameter(format!(
        "Invalid value: {value}: field must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '{NAME_PATTERN}')"
    ))
}

/// A node group's labels (keys: an optional `prefix/` then a name part; values: a name part)
/// and taints' keys, as EKS checks them before Kubernetes would.
pub(crate) fn node_labels(
    labels: &serde_json::Value,
    taints: &serde_json::Value,
) -> Result<(), AwsError> {
    let key_ok = |key: &str| {
        let name = key.rsplit_once('/').map_or(key, |(_, name)| name);
        name_part(name)
    };
    for (key, value) in labels.as_object().into_iter().flatten() {
        if !key_ok(key) {
            return Err(label_problem(key));
        }
        let value = value.as_str().unwrap_or_default();
        if !name_part(value) {
            return Err(label_problem(value));
        }
    }
    for taint in taints.as_array().into_iter().flatten() {
        let key = taint["key"].as_str().unwrap_or_default();
        if !key_ok(key) {
            return Err(label_problem(key));
        }
    }
    Ok(())
}

/// An IAM name (`roleName`): 1 to 64 of `[\w+=,.@-]`.
pub(crate) fn iam_name(field: &str, name: &str, limit: usize) -> Result<(), AwsError> {
    let validation = |constraint: String| {
        AwsError::new(
            400,
            "ValidationError",
            format!(
                "1 validation error detected: Value '{name}' at '{field}' failed to satisfy constraint: {constraint}"
            ),
        )
    };
    if name.is_empty() || name.chars().count() > limit {
        return Err(validation(format!(
            "Member must have length less than or equal to {limit}"
        )));
    }
    if !name
        .chars()
        .all(|c| c.is_alphanumeric() || c == '_' || "+=,.@-".contains(c))
    {
        return Err(validation(
            r"Member must satisfy regular expression pattern: [\w+=,.@-]+".into(),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(result: Result<impl std::fmt::Debug, AwsError>) -> String {
        result.expect_err("refused").message
    }

    #[test]
    fn ec2_refuses_as_ec2_does() {
        assert_eq!(
            message(ipv4_cidr("10.0.0.0/33")),
            "CIDR block 10.0.0.0/33 is malformed"
        );
        assert_eq!(ipv4_cidr("0.0.0.0/0").ok().as_deref(), Some("0.0.0.0/0"));
        assert_eq!(
            ipv4_cidr("10.8.10.0/16").ok().as_deref(),
            Some("10.8.0.0/16")
        );
        assert_eq!(
            ipv4_cidr("10.0.0.28/29").ok().as_deref(),
            Some("10.0.0.24/29")
        );
        assert_eq!(message(ipv4_cidr("abc")), "CIDR block abc is malformed");
        assert_eq!(
            message(group_id("DSESecurityGroup")),
            "Invalid id: \"DSESecurityGroup\" (expecting \"sg-...\")"
        );
        assert_eq!(message(group_id("sg-xyz")), "Invalid id: \"sg-xyz\"");
        assert_eq!(
            message(group_id("")),
            "The security-group ID '' is malformed"
        );
        assert!(group_id("sg-0abc3456").is_ok());
        assert!(group_id("sg-0f000000000000001").is_ok());
        assert_eq!(
            message(protocol("all")),
            "Invalid value 'all' for IP protocol. Unknown protocol."
        );
        assert_eq!(protocol("6").ok().as_deref(), Some("tcp"));
        assert_eq!(
            message(ports("tcp", -1, 80)),
            "TCP/UDP (from) port (-1) out of range"
        );
        assert_eq!(
            message(ports("icmp", 8, 65535)),
            "ICMP code (65535) out of range"
        );
        assert!(ports("-1", -1, -1).is_ok());
        assert!(ports("icmp", -1, -1).is_ok());
        assert!(ports("icmp", 8, -1).is_ok());
        assert_eq!(
            message(ports("icmp", -1, 0)),
            "Invalid value for portRange. ICMP code (0) must be -1 when the ICMP type is -1 (all ICMP types)."
        );
    }

    #[test]
    fn node_group_labels_and_taints() {
        use serde_json::json;
        assert!(
            node_labels(
                &json!({"nvidia.com/gpu.present": "true"}),
                &json!([{"key": "nvidia.com/gpu"}])
            )
            .is_ok()
        );
        assert!(
            message(node_labels(&json!({"role": ""}), &json!([])))
                .starts_with("Invalid value: : field must consist")
        );
        assert_eq!(
            taint_effect("NoSchedule").message,
            "Invalid taint effect: NoSchedule, must be one of these [NO_SCHEDULE, NO_EXECUTE, PREFER_NO_SCHEDULE]"
        );
    }

    #[test]
    fn instance_types_the_twin_knows_do_not_exist() {
        assert_eq!(
            unknown_instance_type("p5.96xlarge").as_deref(),
            Some("The specified instance type p5.96xlarge is not valid")
        );
        assert!(unknown_instance_type("p5.48xlarge").is_none());
        assert!(unknown_instance_type("m5.large").is_none());
        assert!(unknown_instance_type("t3.medium").is_none());
        assert!(unknown_instance_type("bogus").is_some());
    }

    #[test]
    fn scaling_and_names() {
        assert_eq!(
            message(scaling(0, 2, 1, Sizing::UpdateNodegroupConfig)),
            "desired capacity 2 can't be greater than max size 1"
        );
        assert_eq!(
            message(scaling(3, 2, 4, Sizing::UpdateNodegroupConfig)),
            "Minimum capacity 3 can't be greater than desired size 2"
        );
        assert_eq!(
            message(scaling(0, 2, 1, Sizing::CreateNodegroup)),
            "desiredSize can't be greater than maxSize"
        );
        assert_eq!(
            message(scaling(3, 2, 4, Sizing::CreateNodegroup)),
            "minSize can't be greater than desiredSize"
        );
        let types = |list: &[&str]| list.iter().map(|t| t.to_string()).collect::<Vec<_>>();
        assert_eq!(
            message(instance_types_for_ami("AL2_x86_64", &types(&["t4g.small"]))),
            "[t4g.small] is not a valid instance type for requested amiType AL2_x86_64"
        );
        assert_eq!(
            message(instance_types_for_ami(
                "AL2_x86_64_GPU",
                &types(&["g5g.xlarge", "g5.xlarge"])
            )),
            "[g5g.xlarge] is not a valid instance type for requested amiType AL2_x86_64_GPU"
        );
        assert!(
            instance_types_for_ami(
                "AL2023_ARM_64_STANDARD",
                &types(&["m7gd.large", "c6gn.large", "is4gen.large", "a1.large"])
            )
            .is_ok()
        );
        assert!(
            instance_types_for_ami(
                "AL2023_x86_64_NVIDIA",
                &types(&["p5.48xlarge", "g4dn.xlarge", "g6e.xlarge"])
            )
            .is_ok()
        );
        assert!(iam_name("roleName", "eks-node_role.1", 64).is_ok());
        assert!(message(iam_name("roleName", "a role", 64)).contains("regular expression pattern"));
        assert!(nodegroup_name("gpu_nodes-2").is_ok());
        assert!(cluster_name_length(&"c".repeat(100)).is_ok());
        assert!(message(cluster_name_length(&"c".repeat(101))).ends_with("at 'name' failed to satisfy constraint: Member must have length less than or equal to 100"));
        assert_eq!(
            message(nodegroup_name(&"g".repeat(64))),
            "nodeGroupName can't be longer than 63 characters!"
        );
        assert!(
            message(nodegroup_name("gpu.nodes"))
                .starts_with("The nodegroupName parameter contains invalid characters.")
        );
    }

    #[test]
    fn taint_and_tag_counts_and_lengths() {
        let taints = |n: usize| {
            serde_json::Value::Array(
                (0..n)
                    .map(|i| serde_json::json!({"key": format!("k{i}"), "effect": "NO_SCHEDULE"}))
                    .collect(),
            )
        };
        assert!(taint_count(&taints(50)).is_ok());
        assert!(message(taint_count(&taints(51))).ends_with("at 'taints' failed to satisfy constraint: Member must have length less than or equal to 50"));
        let tags = |pairs: Vec<(String, String)>| {
            serde_json::Value::Object(pairs.into_iter().map(|(k, v)| (k, v.into())).collect())
        };
        assert!(super::tags(&serde_json::Value::Null).is_ok());
        assert!(super::tags(&tags(vec![("team".into(), "gpu".into())])).is_ok());
        let many = (0..51).map(|i| (format!("k{i}"), String::new())).collect();
        assert!(
            message(super::tags(&tags(many)))
                .contains("Member must have length less than or equal to 50")
        );
        let long_key = vec![("k".repeat(129), "v".into())];
        assert!(message(super::tags(&tags(long_key))).contains("Map keys must satisfy constraint"));
        let long_value = vec![("k".into(), "v".repeat(257))];
        assert_eq!(
            message(super::tags(&tags(long_value))),
            format!(
                "1 validation error detected: Value '{{k={}}}' at 'tags' failed to satisfy constraint: Map value must satisfy constraint: [Member must have length less than or equal to 256, Member must have length greater than or equal to 0]",
                "v".repeat(257)
            )
        );
    }
}
