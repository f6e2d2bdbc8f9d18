//! The twin's AWS side: EKS, EC2, IAM and STS state, who may call it, and the wire protocols the aws CLI and SDKs use.

pub mod access_entries;
pub mod actions;
pub mod addresses;
pub mod autoscaled;
pub mod ec2;
pub mod ec2_lifecycle;
pub mod eks;
pub mod eks_lifecycle;
pub mod error;
pub mod faults;
pub mod iam;
pub mod iam_inline_policies;
pub mod iam_roles;
pub mod identity;
pub mod instance_types;
pub mod kms;
pub mod launch_templates;
pub mod meter;
pub mod nodegroups;
pub mod pod_identity;
pub mod seed_ids;
pub mod server;
pub mod signature;
pub mod state;
pub mod sts;
pub mod wire;
