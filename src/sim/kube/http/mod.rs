//! The HTTP surface of the Kubernetes API: the server and its routes, the REST verbs, lists,
//! watches, logs, exec, discovery, OpenAPI, health, the twin's own `/twin/` endpoints,
//! server-side Tables, and request bodies (protobuf included).

pub(crate) mod admin;
pub(crate) mod discovery;
pub(crate) mod exec;
pub(crate) mod handlers;
pub(crate) mod health;
pub(super) mod incoming;
mod lists;
pub(crate) mod logs;
pub(crate) mod openapi;
pub(crate) mod protobuf;
pub(crate) mod routes;
pub(crate) mod server;
mod table_cells;
pub(crate) mod tables;
mod verbs;
pub(crate) mod watch;
