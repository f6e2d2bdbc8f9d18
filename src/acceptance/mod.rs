//! Accepting a GPU fleet at scale: each node alone (its EFA devices and their loopbacks, NCCL
//! inside it), collectives judged by their node count, the search that names the nodes and
//! network blocks a failing collective comes from, the depth a time budget buys, and each
//! machine's birth certificate. Pure: a binding runs the collectives and reads the machines,
//! this decides which to run and what they show.

pub mod at_scale;
pub mod certificate;
pub mod depth;
pub mod efa_check;
pub mod in_node;
pub mod localise;
pub mod trials;
