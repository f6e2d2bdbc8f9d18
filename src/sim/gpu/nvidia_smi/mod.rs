//! `nvidia-smi` as the twin runs it on a GPU node: the CLI and each of its outputs.

pub(crate) mod cli;
pub(crate) mod query;
pub(crate) mod query_log;
pub(crate) mod table;
pub(crate) mod text;
pub(crate) mod xml;

pub(crate) use cli::run;
