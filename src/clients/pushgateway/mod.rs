//! A Prometheus Pushgateway client: PUT of the text format to a group's URL.

mod client;

pub use client::{PushError, Pushgateway};
