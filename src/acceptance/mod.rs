//! Accepting a GPU fleet at scale: collectives judged by their node count, the search that
//! names the nodes and network blocks a failing collective comes from, and each machine's
//! birth certificate. Pure: a binding runs the collectives and reads the machines, this decides
//! which to run and what they show.

pub mod certificate;
pub mod depth;
pub mod localise;
pub mod trials;
