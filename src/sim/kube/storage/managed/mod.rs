//! Server-side apply's field ownership: which manager owns which fields of an object
//! (`metadata.managedFields`), the conflicts an apply meets, and what a write takes over.

pub(crate) mod fieldset;
pub(crate) mod manager;
