//! Accepting a GPU fleet at scale: each node alone (its EFA devices and their loopbacks, NCCL
//! inside it), collectives judged by their node count, and the search that names the nodes and
//! network blocks a failing collective comes from. Pure: a binding runs
//! the collectives, this decides which to run and what they show.

pub mod efa_check;
pub mod in_node;
pub mod localise;
pub mod trials;
