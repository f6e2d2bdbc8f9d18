//! The twin's AWS side: EKS, EC2 and IAM state and the wire protocols the aws CLI and SDKs use.

pub mod ec2;
pub mod eks;
pub mod error;
pub mod iam;
pub mod nodegroups;
pub mod server;
pub mod state;
pub mod wire;
