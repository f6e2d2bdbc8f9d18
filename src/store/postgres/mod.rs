//! The shared store on PostgreSQL: its address, TLS and password, the connection a command
//! holds, the schema and its migrations, the targets' advisory locks and the runs' journals.

mod journal;
mod locks;
mod passfile;
mod schema;
mod session;
mod store;
mod tls;
mod url;

pub use journal::StoreRun;
pub use locks::{LockTaken, StoreHolder};
pub use store::SharedStore;
pub use url::{StoreUrl, shared_store_url};
