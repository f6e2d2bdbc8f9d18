//! Parsers for the EFA tools libfabric ships (`/opt/amazon/efa/bin`): `fi_info -p efa` (the
//! devices the provider sees) and `fi_pingpong` (its ping-pong table, or why it failed), and
//! the loopback command a per-node check runs with them.

pub mod error;
pub mod fi_info;
pub mod loopback;
pub mod pingpong;

#[cfg(test)]
mod tests;
