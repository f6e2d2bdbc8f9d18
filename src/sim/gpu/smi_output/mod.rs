//! What `nvidia-smi` prints as the twin runs it on a GPU node: the CLI and each of its outputs,
//! rendered from the node's GPUs (src/gpu/nvidia_smi/ is the other side: the parsers of it).

pub(crate) mod cli;
pub(crate) mod query;
pub(crate) mod query_log;
pub(crate) mod table;
pub(crate) mod text;
pub(crate) mod xml;

pub(crate) use cli::run;
