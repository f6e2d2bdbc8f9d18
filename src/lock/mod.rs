//! The lock on a target that every machine meets: a Lease (`coordination.k8s.io/v1`) in the
//! target cluster, taken, renewed and given back as client-go's leader election holds one, so
//! that two runners with state folders of their own (two CI jobs, a CronJob and a laptop) never
//! both change one cluster. The local file lock beside it is the journal's.

mod holder;
mod lease;
mod renewal;

pub use holder::{LeaseHolder, process_space, this_host};
pub use lease::{Acquired, Gone, LeaseError, LeaseSettings, acquire};
pub use renewal::{HeldLease, LostLease, Say};

#[cfg(test)]
mod lease_tests;
