//! The GPU lab's facts (../shared/design/LAB.md, from the seed documents): the single source
//! for the twin's scenarios and for the runbooks' expectations. Pure data, no I/O.

mod facts;
mod network;

pub use facts::*;
pub use network::*;
