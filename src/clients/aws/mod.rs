//! AWS clients over the official SDKs (EKS, EC2, IAM), pointed at the lab twin's endpoint or at
//! real AWS through the default credential chain. Results are plain JSON records with the
//! field names of the aws CLI's output, in snake_case.

mod client;
mod ec2;
mod eks;
mod error;
mod iam;
mod reachability;

pub use client::AwsClients;
pub use ec2::RuleSpec;
pub use error::AwsError;
