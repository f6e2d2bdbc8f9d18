//! `nvidia-smi` as the twin runs it on a GPU node: the CLI and each of its outputs.

pub mod cli;
pub mod query;
pub mod table;
pub mod text;
pub mod xml;

pub use cli::{Output, run};
