//! Where runs meet when they do not share a machine: a PostgreSQL store (`--state
//! postgres://...`) that keeps the target locks and run journals of every runner of a fleet (CI
//! jobs, CronJobs, laptops). Without one, a run keeps them in its own state folder.

mod error;
mod postgres;

pub use error::StoreError;
pub use postgres::{LockTaken, SharedStore, StoreHolder, StoreRun, StoreUrl, shared_store_url};
