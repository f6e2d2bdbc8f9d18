//! What every binding folder shares: decoding arguments and option maps, and the journaled
//! call around a mutation.

pub(crate) mod args;
pub(crate) mod journaled;
pub(crate) mod options;
