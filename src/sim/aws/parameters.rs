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
//! - IAM names: "1 validation error detected: Value 'a role' at 'roleName' failed to satisfy
//!   constraint: Member must satisfy regular expression pattern: [\w+=,.@-]+" (IAM's
//!   ValidationError; pattern and length from the IAM API reference, CreateRole).

use std::net::{Ipv4Addr, Ipv6Addr};

use super::error::AwsError;

fn invalid_value(message: String) -> AwsError {
    AwsError::new(400, "InvalidParameterValue", message)
}

/// An IPv4 CIDR as EC2 reads `CidrIp`: four octets and a prefix of 0 to 32.
pub fn ipv4_cidr(cidr: &str) -> Result<(), AwsError> {
    let ok = cidr.split_once('/').is_some_and(|(address, prefix)| {
        address.parse::<Ipv4Addr>().is_ok()
            && prefix.parse::<u8>().is_ok_and(|p| p <= 32)
            && !prefix.starts_with('+')
    });
    if ok {
        Ok(())
    } else {
        Err(invalid_value(format!("CIDR block {cidr} is malformed")))
    }
}

/// An IPv6 CIDR (`CidrIpv6`): an address and a prefix of 0 to 128.
pub fn ipv6_cidr(cidr: &str) -> Result<(), AwsError> {
    let ok = cidr.split_once('/').is_some_and(|(address, prefix)| {
        address.parse::<Ipv6Addr>().is_ok() && prefix.parse::<u8>().is_ok_and(|p| p <= 128)
    });
    if ok {
        Ok(())
    } else {
        Err(invalid_value(format!("CIDR block {cidr} is malformed")))
    }
}

/// A rule's protocol, normalized as EC2 keeps it (`tcp`, `udp`, `icmp`, `icmpv6`, `-1`, or a
/// number 0-255); names EC2 does not know, the literal `all` among them, are refused.
pub fn protocol(given: &str) -> Result<String, AwsError> {
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
pub fn ports(protocol: &str, from: i32, to: i32) -> Result<(), AwsError> {
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
            Ok(())
        }
        _ => Ok(()),
    }
}

/// A node group's scaling: `0 <= min <= desired <= max`, `max >= 1`.
pub fn scaling(min: i64, desired: i64, max: i64) -> Result<(), AwsError> {
    if min < 0 || max < 1 || desired < 0 {
        return Err(AwsError::invalid_parameter(
            "Minimum capacity can't be negative and maximum capacity must be at least 1",
        ));
    }
    if desired > max {
        return Err(AwsError::invalid_parameter(format!(
            "desired capacity {desired} can't be greater than max size {max}"
        )));
    }
    if min > desired {
        return Err(AwsError::invalid_parameter(format!(
            "Minimum capacity {min} can't be greater than desired size {desired}"
        )));
    }
    Ok(())
}

/// An IAM name (`roleName`): 1 to 64 of `[\w+=,.@-]`.
pub fn iam_name(field: &str, name: &str, limit: usize) -> Result<(), AwsError> {
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
        assert!(ipv4_cidr("0.0.0.0/0").is_ok());
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
    }

    #[test]
    fn scaling_and_names() {
        assert_eq!(
            message(scaling(0, 2, 1)),
            "desired capacity 2 can't be greater than max size 1"
        );
        assert_eq!(
            message(scaling(3, 2, 4)),
            "Minimum capacity 3 can't be greater than desired size 2"
        );
        assert!(iam_name("roleName", "eks-node_role.1", 64).is_ok());
        assert!(message(iam_name("roleName", "a role", 64)).contains("regular expression pattern"));
    }
}
