//! The twin's Kubernetes API server: store, controllers and the HTTP handlers kubectl and
//! kube-rs talk to.

pub(crate) mod admin;
pub(crate) mod api;
pub(crate) mod authentication;
pub(crate) mod authorization;
pub(crate) mod aws_auth;
pub(crate) mod controllers;
pub(crate) mod defaults;
pub(crate) mod discovery;
pub(crate) mod exec;
pub(crate) mod fields;
pub(crate) mod handlers;
pub(crate) mod health;
pub(crate) mod impersonation;
pub(crate) mod logs;
pub(crate) mod memory;
pub(crate) mod openapi;
pub(crate) mod ownership;
pub(crate) mod patch;
pub(crate) mod programs;
pub(crate) mod protobuf;
pub(crate) mod quantity;
pub(crate) mod rbac;
pub(crate) mod request_info;
pub(crate) mod resources;
pub(crate) mod reviews;
pub(crate) mod routes;
pub(crate) mod selectors;
pub(crate) mod server;
pub(crate) mod state;
pub(crate) mod status;
pub(crate) mod store;
pub(crate) mod tables;
pub(crate) mod token_request;
pub(crate) mod validation;
pub(crate) mod watch;
