//! The shared store a command holds open for as long as it runs: connected, its schema
//! brought up to date (or refused as newer), on one session.

use super::session::Session;
use super::url::StoreUrl;
use crate::store::StoreError;

pub struct SharedStore {
    pub(super) session: Session,
    url: StoreUrl,
}

impl SharedStore {
    pub fn open(url: &StoreUrl) -> Result<Self, StoreError> {
        let session = Session::open(url, super::schema::migrate)?;
        Ok(Self {
            session,
            url: url.clone(),
        })
    }

    /// The same store on a new session (this one's connection is gone).
    pub fn reopen(&self) -> Result<Self, StoreError> {
        Self::open(&self.url)
    }

    /// Runs `call` on the store's connection and waits for its answer (the history's queries
    /// are made so); `what` names it in errors ("record the run").
    pub fn call<T, C, F>(&self, what: &str, call: C) -> Result<T, StoreError>
    where
        T: Send + 'static,
        C: FnOnce(std::sync::Arc<tokio_postgres::Client>) -> F + Send + 'static,
        F: Future<Output = Result<T, tokio_postgres::Error>> + Send + 'static,
    {
        self.session.call(what, call)
    }

    /// Its address, without the password.
    pub fn shown(&self) -> &str {
        self.session.shown()
    }
}

impl std::fmt::Debug for SharedStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.shown())
    }
}
