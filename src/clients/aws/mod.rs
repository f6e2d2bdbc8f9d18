//! AWS clients over the official SDKs (EKS, EC2 with its Elastic IPs, IAM with roles), pointed at the lab twin's endpoint or at
//! real AWS through the default credential chain. Results are plain JSON records with the
//! field names of the aws CLI's output, in snake_case.

mod access_entries;
mod addresses;
mod client;
mod cost;
mod ec2;
mod ec2_lifecycle;
mod eks;
mod eks_lifecycle;
mod eks_token;
mod error;
mod failure;
mod first_alone;
mod iam;
mod iam_roles;
mod identity;
mod instance_reboot;
mod instance_topology;
mod instance_types;
mod kms;
mod launch_templates;
mod node_repair;
mod nodegroup_scaling;
mod path_values;
mod pod_identity;
mod reachability;
mod retry;
mod trust;
mod unreachable;
mod waiter;

pub use client::{AwsClients, Timeouts};
pub use ec2::RuleSpec;
pub use ec2_lifecycle::SubnetSpec;
pub use eks::NodegroupSizing;
pub use eks_lifecycle::{ClusterSpec, EksResource, NodegroupSpec};
pub use eks_token::EksTokens;
pub use error::AwsError;
pub use identity::principal_of;
pub use launch_templates::LaunchTemplateSpec;
pub use node_repair::{NodeRepair, RepairOverride};
pub use retry::{Backoff, DEFAULT_MAX_ATTEMPTS, RetryPolicy, is_transient, until_deadline};
pub use trust::{CA_BUNDLE_VARIABLE, TrustedCa};
