//! EKS node auto repair in the twin, acting across the AWS and Kubernetes worlds by the rules
//! of `crate::repair::policy`.

mod controller;
