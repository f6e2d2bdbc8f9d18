//! What goes wrong with the shared store, named by its address with the password left out.

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("--state {shown}: {why}")]
    Url { shown: String, why: String },
    #[error("cannot reach the shared store {shown}: {why}")]
    Connect { shown: String, why: String },
    #[error("the shared store {shown} did not answer within {seconds} s ({what})")]
    Timeout {
        shown: String,
        what: String,
        seconds: u64,
    },
    #[error("the shared store {shown} failed to {what}: {why}")]
    Query {
        shown: String,
        what: String,
        why: String,
    },
    #[error(
        "the shared store {shown} was made by a newer runbook (schema version {found}; this runbook knows up to {known}): \
         upgrade runbook on this machine, as the runners that share the store were"
    )]
    NewerSchema {
        shown: String,
        found: i32,
        known: i32,
    },
    #[error("TLS to the shared store: {0}")]
    Tls(String),
}
