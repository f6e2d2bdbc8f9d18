//! The twin's Kubernetes API server, in four groups: `http/` (the HTTP surface kubectl and
//! kube-rs talk to: server, routes, verbs, watch, logs, exec, discovery, tables), `auth/`
//! (authentication, impersonation, RBAC, reviews, tokens), `storage/` (the store and state,
//! kinds, defaults, validation, patches) and `controllers/`; `programs` is what containers
//! run, for the kubelet and exec.

pub(crate) mod auth;
pub(crate) mod controllers;
pub(crate) mod http;
pub(crate) mod programs;
pub(crate) mod storage;
