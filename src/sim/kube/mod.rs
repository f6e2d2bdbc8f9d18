//! The twin's Kubernetes API server: store, controllers and the HTTP handlers kubectl and
//! kube-rs talk to.

pub mod admin;
pub mod api;
pub mod authentication;
pub mod authorization;
pub mod aws_auth;
pub mod controllers;
pub mod defaults;
pub mod discovery;
pub mod exec;
pub mod fields;
pub mod handlers;
pub mod health;
pub mod impersonation;
pub mod logs;
pub mod memory;
pub mod openapi;
pub mod ownership;
pub mod patch;
pub mod programs;
pub mod protobuf;
pub mod quantity;
pub mod rbac;
pub mod request_info;
pub mod resources;
pub mod reviews;
pub mod routes;
pub mod selectors;
pub mod server;
pub mod state;
pub mod status;
pub mod store;
pub mod tables;
pub mod token_request;
pub mod validation;
pub mod watch;
