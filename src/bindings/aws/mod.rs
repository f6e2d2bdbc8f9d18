//! The AWS bindings, one file per service module, as `clients/aws/` and `sim/aws/` are laid out.

pub(crate) mod call;
mod cost;
mod ec2;
mod ec2_launch;
mod ec2_lifecycle;
mod ec2_rules;
mod ec2_topology;
mod eks;
mod eks_lifecycle;
mod eks_repair;
mod extension;
mod iam;
mod iam_roles;
mod kms;

pub use extension::AwsBindings;
