//! Accepting a GPU fleet at scale: collectives judged by their node count, and the search that
//! names the nodes and network blocks a failing collective comes from. Pure: a binding runs
//! the collectives, this decides which to run and what they show.

pub mod localise;
pub mod trials;
