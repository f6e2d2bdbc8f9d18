//! Field validation as the API server does it (`fieldValidation=Strict|Warn|Ignore`): unknown
//! and duplicate fields of a request body, by the kind's schema.

pub(crate) mod built_in;
pub(crate) mod check;
pub(crate) mod directive;
pub(crate) mod document;
pub(crate) mod request;
pub(crate) mod shapes;
