//! Who a request comes from and what they may do: authentication (the admin token, EKS and
//! ServiceAccount tokens, `aws-auth`), impersonation, RBAC and the attributes it decides on,
//! the access reviews, and the TokenRequests that issue ServiceAccount tokens.

pub(super) mod access;
pub(crate) mod authentication;
pub(crate) mod authorization;
pub(crate) mod aws_auth;
pub(crate) mod impersonation;
pub(crate) mod rbac;
pub(crate) mod request_info;
pub(crate) mod reviews;
pub(crate) mod token_request;
