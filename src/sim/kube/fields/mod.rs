//! Field validation as the API server does it (`fieldValidation=Strict|Warn|Ignore`): unknown
//! and duplicate fields of a request body, by the kind's schema.

pub mod built_in;
pub mod check;
pub mod directive;
pub mod document;
pub mod request;
pub mod shapes;
