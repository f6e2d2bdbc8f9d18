//! The shared store a command holds open for as long as it runs: connected, its schema
//! brought up to date (or refused as newer), on one session.

use super::session::Session;
use super::url::StoreUrl;
use crate::store::StoreError;

pub struct SharedStore {
    pub(super) session: Session,
}

impl SharedStore {
    pub fn open(url: &StoreUrl) -> Result<Self, StoreError> {
        let session = Session::open(url, super::schema::migrate)?;
        Ok(Self { session })
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
